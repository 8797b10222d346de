//===- EventQueue.h - Deterministic discrete-event queue -------*- C++ -*-===//
//
// A heap keyed on (time, sequence number). The sequence number breaks
// ties in insertion order, so equal-time events always run in the same order
// and a simulation is reproducible to the byte. Events are small PODs (a kind
// and two payload words) dispatched by a switch: no per-event allocation and
// no std::function in the hot loop.
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace rapid::engine {

struct Event {
  int64_t time = 0; ///< ns
  uint64_t seq = 0;
  uint32_t kind = 0;
  uint32_t a = 0, b = 0;
};

/// A 4-ary min-heap: half the depth of a binary heap, and the four children
/// of a node share a cache line or two, which makes pop (the hot operation)
/// cheaper at the sizes simulations reach (thousands of pending events).
class EventQueue {
public:
  void push(int64_t time, uint32_t kind, uint32_t a, uint32_t b) {
    heap_.push_back(Event{time, nextSeq_++, kind, a, b});
    siftUp(heap_.size() - 1);
  }
  Event pop() {
    Event top = heap_.front();
    Event last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty())
      siftDown(last);
    return top;
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  uint64_t pushed() const { return nextSeq_; }

private:
  static bool before(const Event &x, const Event &y) {
    return x.time != y.time ? x.time < y.time : x.seq < y.seq;
  }
  void siftUp(size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      size_t parent = (i - 1) / 4;
      if (!before(e, heap_[parent]))
        break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  /// Places `e` (the old last element) starting from the root.
  void siftDown(const Event &e) {
    size_t i = 0, n = heap_.size();
    for (;;) {
      size_t first = 4 * i + 1;
      if (first >= n)
        break;
      size_t best = first;
      for (size_t c = first + 1; c < std::min(first + 4, n); ++c)
        if (before(heap_[c], heap_[best]))
          best = c;
      if (!before(heap_[best], e))
        break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
  uint64_t nextSeq_ = 0;
};

} // namespace rapid::engine
