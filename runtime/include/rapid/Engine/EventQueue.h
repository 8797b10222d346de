//===- EventQueue.h - Deterministic discrete-event queue -------*- C++ -*-===//
//
// A binary heap keyed on (time, sequence number). The sequence number breaks
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

class EventQueue {
public:
  void push(int64_t time, uint32_t kind, uint32_t a, uint32_t b) {
    heap_.push_back(Event{time, nextSeq_++, kind, a, b});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
  Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    Event e = heap_.back();
    heap_.pop_back();
    return e;
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  uint64_t pushed() const { return nextSeq_; }

private:
  static bool later(const Event &x, const Event &y) {
    return x.time != y.time ? x.time > y.time : x.seq > y.seq;
  }
  std::vector<Event> heap_;
  uint64_t nextSeq_ = 0;
};

} // namespace rapid::engine
