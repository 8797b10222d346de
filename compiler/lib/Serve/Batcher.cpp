//===- Batcher.cpp - The batching policies --------------------------------===//
//
// static: a batch of waiting requests is prefilled at once and decoded to
// its end before the next is admitted. continuous (Orca, vLLM V0): a
// prefill step admits what the budget and the blocks allow, decode steps run
// the rest. chunked (Sarathi-Serve, vLLM V1): every running decode first,
// the budget's rest to prompt chunks. When a decode finds no free block,
// the latest-admitted request not in the step is preempted: its blocks go
// to host memory (swap, while there is room) or are dropped (recompute), and
// it returns to the head of the queue. With shared prefixes and prefix
// caching, the first request to compute a prefix leaves its full blocks to
// the replica for good, and requests with that prefix admitted afterwards
// start from them (vLLM's automatic prefix caching; docs/serving.md).
//===----------------------------------------------------------------------===//
#include "Batcher.h"

#include <algorithm>

namespace rapid::serve {

/// Grows request `i`'s blocks to hold `tokens`; false when they are not free.
bool Batcher::grow(Replica &rep, int64_t i, int64_t tokens) {
  Live &l = live[size_t(i)];
  int64_t need = std::max<int64_t>(0, blocksFor(tokens) - l.sharedBlocks - l.blocks);
  if (need > freeBlocks(rep)) return false;
  l.blocks += need;
  rep.usedBlocks += need;
  return true;
}

void Batcher::release(Replica &rep, int64_t i) {
  rep.usedBlocks -= live[size_t(i)].blocks;
  live[size_t(i)].blocks = 0;
}

int64_t Batcher::cacheable(int64_t i) const {
  if (!e.prefixCaching) return 0;
  return std::min(e.sharedPrefix, reqs[size_t(i)].prompt) / e.blockSize * e.blockSize;
}

int64_t Batcher::cachedPrefix(const Replica &rep, int64_t i) const {
  size_t p = size_t(reqs[size_t(i)].prefix);
  return p < rep.prefixTokens.size() ? rep.prefixTokens[p] : 0;
}

void Batcher::cachePrefix(Replica &rep, int64_t i) {
  Live &l = live[size_t(i)];
  int64_t tokens = cacheable(i);
  if (cachedPrefix(rep, i) > 0 || l.sharedBlocks > 0 || tokens == 0 || l.computed < tokens) return;
  l.sharedBlocks = tokens / e.blockSize; // its blocks, now the replica's: usedBlocks is unchanged
  l.blocks -= l.sharedBlocks;
  rep.prefixTokens.resize(size_t(std::max<int64_t>(e.prefixes, 1)), 0);
  rep.prefixTokens[size_t(reqs[size_t(i)].prefix)] = tokens;
}

/// A request starting from scratch takes what the replica's cache holds of
/// its prefix; at least its last prompt token is computed (the engine needs
/// its logits), as vLLM does on a whole-prompt hit.
void Batcher::admitFromCache(Replica &rep, int64_t i) {
  Live &l = live[size_t(i)];
  if (l.computed > 0) return; // swapped in: its cache came back
  admittedPrompt += reqs[size_t(i)].prompt;
  int64_t hit = std::min(cachedPrefix(rep, i), cacheable(i));
  hit = std::min(hit, (reqs[size_t(i)].prompt - 1) / e.blockSize * e.blockSize);
  if (hit <= 0) return;
  l.computed = hit;
  l.sharedBlocks = hit / e.blockSize;
  hitTokens += hit;
}

void Batcher::schedule(Replica &rep, int64_t i, int64_t n) {
  rep.step.push_back({i, n});
  live[size_t(i)].inStep = stepId;
}

/// Preempts the latest-admitted running request not in this step, or
/// `self` when none is left; true when it was someone else.
bool Batcher::preemptFor(Replica &rep, int64_t self) {
  for (size_t k = rep.running.size(); k-- > 0;) {
    int64_t v = rep.running[k];
    if (v == self || scheduled(v)) continue;
    preempt(rep, k);
    return true;
  }
  auto it = std::find(rep.running.begin(), rep.running.end(), self);
  preempt(rep, size_t(it - rep.running.begin()));
  return false;
}

void Batcher::preempt(Replica &rep, size_t k) {
  int64_t v = rep.running[k];
  Live &l = live[size_t(v)];
  // Swapped out when host memory has room: its cache comes back later;
  // otherwise recomputed from scratch.
  if (e.preemption == ServePreemption::Swap && rep.hostBlocks + l.blocks <= e.swapBlocks && l.computed > 0) {
    l.swapped = l.blocks;
    rep.hostBlocks += l.blocks;
    swapNow += l.blocks;
  } else {
    l.computed = 0;
    l.sharedBlocks = 0; // readmitted from the cache again
  }
  release(rep, v);
  live[size_t(v)].running = false;
  rep.running.erase(rep.running.begin() + ptrdiff_t(k));
  rep.waiting.push_front(v);
  ++l.preemptions;
  ++preempted;
  preemptedNow = true;
}

/// A decode token for each running request that has one to compute, as
/// long as blocks can be found for it (preempting the latest otherwise).
void Batcher::decodeRunning(Replica &rep, int64_t &budget) {
  std::vector<int64_t> order = rep.running; // preemption takes requests out of rep.running
  for (int64_t i : order) {
    if (budget <= 0 || int64_t(rep.step.size()) >= e.maxBatch) return;
    Live &l = live[size_t(i)];
    if (!l.running || l.inFlight || need(i) != 1 || l.computed == 0) continue;
    // Speculative decoding: its last token and the drafts after it, as many
    // as the answer still has room for.
    int64_t n = 1 + std::min({e.speculative, reqs[size_t(i)].output - l.generated - 1, budget - 1});
    bool placed = true;
    while (!l.reserved && !grow(rep, i, l.computed + n))
      if (!preemptFor(rep, i)) {
        placed = false;
        break;
      }
    if (!placed) continue;
    schedule(rep, i, n);
    budget -= n;
  }
}

/// Prefill chunks of running requests, then admissions from the queue.
void Batcher::prefill(Replica &rep, int64_t &budget, bool whole) {
  for (int64_t i : rep.running) {
    if (budget <= 0 || int64_t(rep.step.size()) >= e.maxBatch) return;
    Live &l = live[size_t(i)];
    if (scheduled(i) || (need(i) == 1 && l.computed > 0)) continue;
    // The chunk shrinks to the blocks that are free.
    int64_t n = std::min({need(i), budget, (l.blocks + freeBlocks(rep)) * e.blockSize - l.computed});
    if (n <= 0 || !grow(rep, i, l.computed + n)) return;
    schedule(rep, i, n);
    budget -= n;
  }
  // As vLLM V1: a step that had to preempt admits nobody, so the freed
  // blocks go to the requests that stayed.
  bool batch = e.scheduler == ServeScheduler::Static; // the whole batch at once, budget or not
  while (!preemptedNow && !rep.waiting.empty() && (batch || budget > 0) &&
         int64_t(rep.running.size()) < e.maxBatch) {
    int64_t i = rep.waiting.front();
    admitFromCache(rep, i);
    int64_t n = need(i);
    // A prompt longer than the budget runs alone (whole) or in chunks.
    if (whole && !batch && n > budget && !rep.step.empty()) return;
    if (!whole) n = std::min(n, budget);
    // Reserving takes the whole length at once; a prefill-only replica's
    // whole is the prompt, whose cache then leaves.
    bool reserve = batch || e.admission == ServeAdmission::Reserve;
    int64_t length = reqs[size_t(i)].prompt + (rep.prefillOnly ? 0 : reqs[size_t(i)].output);
    int64_t hold = reserve ? length : live[size_t(i)].computed + n;
    if (!grow(rep, i, hold)) return;
    if (int64_t back = live[size_t(i)].swapped) { // its cache returns from host memory
      swapNow += back;
      rep.hostBlocks -= back;
      live[size_t(i)].swapped = 0;
    }
    live[size_t(i)].reserved = reserve;
    live[size_t(i)].running = true;
    rep.waiting.pop_front();
    rep.running.push_back(i);
    schedule(rep, i, n);
    budget -= n;
    ++admittedNow;
  }
}

StepShape Batcher::build(Replica &rep, int64_t id) {
  stepId = id;
  rep.step.clear();
  preemptedNow = false;
  swapNow = 0;
  admittedNow = 0;
  int64_t budget = e.tokenBudget;
  switch (e.scheduler) {
  case ServeScheduler::Static: // a new batch only when the last one is done
    rep.running.empty() ? prefill(rep, budget, true) : decodeRunning(rep, budget);
    break;
  case ServeScheduler::Continuous: // prefills first, alone; decodes otherwise
    prefill(rep, budget, true);
    if (rep.step.empty()) decodeRunning(rep, budget);
    break;
  case ServeScheduler::Chunked: // decodes first, the budget's rest to prefill chunks
    decodeRunning(rep, budget);
    prefill(rep, budget, false);
    break;
  }
  StepShape shape;
  shape.swapBlocks = swapNow;
  shape.admitted = admittedNow;
  for (auto [i, n] : rep.step) {
    const Live &l = live[size_t(i)];
    shape.tokens += n;
    if (l.verifiesDrafts(n)) { // logits at every position
      ++shape.decodeSeqs;
      shape.decodeKv += l.computed + n;
      shape.sampled += n;
      ++shape.draftSeqs;
      shape.draftPasses = std::max(shape.draftPasses, n - 1);
      continue;
    }
    if (l.computed + n == l.context) ++shape.sampled;
    if (n == 1 && l.computed > 0) {
      ++shape.decodeSeqs;
      shape.decodeKv += l.computed + 1;
    } else {
      shape.prefill.push_back({n, l.computed});
    }
  }
  return shape;
}

} // namespace rapid::serve
