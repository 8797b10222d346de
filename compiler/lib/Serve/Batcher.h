//===- Batcher.h - What a replica runs next (private) ----------*- C++ -*-===//
//
// The engine's state per request and per replica, and the batching policy
// that picks a step's work from it: which requests, how many new tokens of
// each, within the token budget, the batch size and the KV blocks, with
// preemption when blocks run out (Batcher.cpp). The event loop around it is
// Scheduler.cpp.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Serve/Serve.h"

#include <deque>
#include <utility>
#include <vector>

namespace rapid::serve {

/// A request inside the engine. Its context is its prompt and the tokens it
/// generated; `computed` of them are in the KV cache.
struct Live {
  int64_t context = 0, computed = 0, generated = 0;
  int64_t blocks = 0;       ///< KV blocks of its own
  int64_t sharedBlocks = 0; ///< its first blocks, the replica's cached prefix (not its own)
  double lastToken = 0;
  bool reserved = false; ///< static batching holds its whole length from admission
  bool running = false;
  bool inFlight = false; ///< in a step that has not ended: not schedulable, not preemptable
  int64_t swapped = 0;   ///< its KV blocks held in host memory after a swap-out
  int64_t inStep = -1;   ///< the last step it was scheduled in
  int64_t preemptions = 0;

  /// Speculative decoding: a step of n new tokens is its last token and n - 1
  /// drafts to verify (a prompt chunk never runs past the context).
  bool verifiesDrafts(int64_t n) const { return computed + n > context; }
};

/// (request, new tokens) of one step.
using Work = std::vector<std::pair<int64_t, int64_t>>;

/// A step started and not yet ended: its work and when it ends.
struct Flight {
  double end = 0;
  Work work;
};

struct Replica {
  std::deque<int64_t> waiting;
  std::vector<int64_t> running; ///< admission order: the last is preempted first
  Work step;                    ///< the step being built
  /// Steps in flight: one, or up to pp with a pipeline (each stage works on
  /// another batch), the next starting when the first stage is free.
  std::vector<Flight> flights;
  double stageFree = 0;
  int64_t usedBlocks = 0, hostBlocks = 0;
  /// Per shared prefix, its tokens in the replica's cached blocks (kept in
  /// usedBlocks for good); empty until the first is cached.
  std::vector<int64_t> prefixTokens;
  double blockSeconds = 0, since = 0; ///< blocks in use x time until `since`, for the mean occupancy
  /// Disaggregated: KV-cache moves out of this replica hold its links until
  /// sendFree, moves into it until receiveFree; `incoming` are on their way.
  double sendFree = 0, receiveFree = 0;
  int64_t incoming = 0;
  bool prefillOnly = false; ///< disaggregated: a prompt's cache leaves once it is computed
};

class Batcher {
public:
  Batcher(const std::vector<Request> &reqs, const Engine &e, std::vector<Live> &live)
      : reqs(reqs), e(e), live(live) {}

  /// Fills `rep.step` for step number `id` by the engine's policy and
  /// returns its shape (empty when there is nothing to run).
  StepShape build(Replica &rep, int64_t id);
  /// Frees request `i`'s blocks (it finished).
  void release(Replica &rep, int64_t i);
  /// Once request `i` has computed its shared prefix and the replica caches
  /// none of that prefix yet, its full prefix blocks become the replica's
  /// cache of it.
  void cachePrefix(Replica &rep, int64_t i);
  double prefixHitRate() const { return admittedPrompt ? double(hitTokens) / double(admittedPrompt) : 0; }
  int64_t blocksFor(int64_t tokens) const { return (tokens + e.blockSize - 1) / e.blockSize; }
  int64_t preemptions() const { return preempted; }

private:
  int64_t freeBlocks(const Replica &rep) const { return e.kvBlocks - rep.usedBlocks; }
  bool grow(Replica &rep, int64_t i, int64_t tokens);
  /// In the step being built, or in one in flight.
  bool scheduled(int64_t i) const { return live[size_t(i)].inStep == stepId || live[size_t(i)].inFlight; }
  void schedule(Replica &rep, int64_t i, int64_t n);
  bool preemptFor(Replica &rep, int64_t self);
  void preempt(Replica &rep, size_t k);
  int64_t need(int64_t i) const { return live[size_t(i)].context - live[size_t(i)].computed; }
  /// Tokens of request i's prompt in full blocks of the shared prefix: what a cache can hold of it.
  int64_t cacheable(int64_t i) const;
  /// What replica `rep` holds cached of request i's prefix, in tokens.
  int64_t cachedPrefix(const Replica &rep, int64_t i) const;
  void admitFromCache(Replica &rep, int64_t i);
  void decodeRunning(Replica &rep, int64_t &budget);
  void prefill(Replica &rep, int64_t &budget, bool whole);

  const std::vector<Request> &reqs;
  const Engine &e;
  std::vector<Live> &live;
  int64_t stepId = -1, preempted = 0;
  bool preemptedNow = false;
  int64_t swapNow = 0; ///< blocks the step being built moves to or from host memory
  int64_t admittedNow = 0; ///< requests the step being built takes from the queue
  int64_t hitTokens = 0, admittedPrompt = 0; ///< for prefixHitRate
};

} // namespace rapid::serve
