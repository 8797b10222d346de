//===- EventQueue.h - Deterministic discrete-event queue -------*- C++ -*-===//
//
// Events run in (time, insertion) order, so equal-time events always run in
// the same order and a simulation is reproducible to the byte. Events are
// small PODs (a kind and two payload words) dispatched by a switch: no
// per-event allocation and no std::function in the hot loop.
//
// Symmetric ranks make events cluster on few distinct times (a ring step's
// 1,024 messages arrive together), so the queue keeps one FIFO bucket per
// distinct time and a heap of the times alone: an event costs an append and
// a read, and only a new time pays a heap operation and a hash insert.
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace rapid::engine {

struct Event {
  int64_t time = 0; ///< ps
  uint32_t kind = 0;
  uint32_t a = 0, b = 0;
};

class EventQueue {
public:
  void push(int64_t time, uint32_t kind, uint32_t a, uint32_t b) {
    ++pushed_;
    ++size_;
    // Inline only the common case, the time pushed to last; the rest is a
    // call, so that push stays small enough to inline into the hot loop.
    Bucket &bk = time == lastTime_ ? buckets_[lastBucket_] : bucketAt(time);
    bk.events.push_back(Payload{kind, a, b});
  }
  /// The earliest event, the first pushed among equal times. Not empty().
  Event pop() {
    int64_t t = times_.front();
    // The bucket being drained is remembered apart from the last pushed to:
    // each event popped pushes the next at a later time.
    if (t != popTime_) {
      popTime_ = t;
      popBucket_ = t == lastTime_ ? lastBucket_ : index_.find(t)->second;
    }
    uint32_t idx = popBucket_;
    Bucket &bk = buckets_[idx];
    Payload p = bk.events[bk.head++];
    --size_;
    if (bk.head == bk.events.size()) { // drained: recycle it
      bk.events.clear();
      bk.head = 0;
      free_.push_back(idx);
      index_.erase(t);
      std::pop_heap(times_.begin(), times_.end(), std::greater<>());
      times_.pop_back();
      if (t == lastTime_) lastTime_ = kNoTime;
      popTime_ = kNoTime;
    }
    return Event{t, p.kind, p.a, p.b};
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  uint64_t pushed() const { return pushed_; }

private:
  struct Payload {
    uint32_t kind, a, b;
  };
  struct Bucket {
    std::vector<Payload> events;
    size_t head = 0; ///< events before it have been popped
  };
  /// Times lie in [0, 2^62] (SimTime.h): clear of this and of DenseMap's two reserved keys (the largest).
  static constexpr int64_t kNoTime = INT64_MIN;

  [[gnu::noinline]] Bucket &bucketAt(int64_t time) {
    auto [it, added] = index_.try_emplace(time, 0);
    if (added) {
      if (free_.empty()) {
        it->second = uint32_t(buckets_.size());
        buckets_.emplace_back();
      } else {
        it->second = free_.back();
        free_.pop_back();
      }
      times_.push_back(time);
      std::push_heap(times_.begin(), times_.end(), std::greater<>());
    }
    lastTime_ = time;
    lastBucket_ = it->second;
    return buckets_[it->second];
  }

  std::vector<int64_t> times_;               ///< min-heap of the distinct pending times
  llvm::DenseMap<int64_t, uint32_t> index_;  ///< time -> its bucket
  std::vector<Bucket> buckets_;
  std::vector<uint32_t> free_;               ///< drained buckets, their capacity kept
  int64_t lastTime_ = kNoTime;               ///< the last bucket pushed to or popped from
  uint32_t lastBucket_ = 0;
  int64_t popTime_ = kNoTime;                ///< the bucket pop() drains
  uint32_t popBucket_ = 0;
  size_t size_ = 0;
  uint64_t pushed_ = 0;
};

} // namespace rapid::engine
