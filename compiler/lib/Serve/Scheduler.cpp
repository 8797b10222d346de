//===- Scheduler.cpp - Which requests a replica runs, step by step --------===//
//
// One engine step at a time per replica, as vLLM's scheduler loop runs:
// the policy picks requests and their new tokens, the step's cost is asked
// for, and at the step's end the requests that finished their new tokens
// sample one (the first one ends the time to first token). A request's
// context is its prompt and the tokens it generated; `computed` of them are
// in the KV cache. A prefill chunk brings `computed` closer to the context,
// a decode step computes the one token sampled last. Preemption (recompute,
// vLLM's default) frees a request's blocks and sends it back to the head of
// the queue, to prefill its whole context again.
//===----------------------------------------------------------------------===//
#include "rapid/Serve/Serve.h"

#include "Stats.h"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <limits>

namespace rapid::serve {
namespace {

struct Live {
  int64_t context = 0, computed = 0, generated = 0, blocks = 0;
  double lastToken = 0;
  bool reserved = false; ///< static batching holds its whole length from admission
  bool running = false;
  bool inFlight = false; ///< in a step that has not ended: not schedulable, not preemptable
  int64_t swapped = 0;   ///< its KV blocks held in host memory after a swap-out
  int64_t inStep = -1;   ///< the last step it was scheduled in
};

/// A step started and not yet ended: its work and when it ends.
struct Flight {
  double end = 0;
  std::vector<std::pair<int64_t, int64_t>> work; ///< (request, new tokens)
};

struct Replica {
  std::deque<int64_t> waiting;
  std::vector<int64_t> running; ///< admission order: the last is preempted first
  std::vector<std::pair<int64_t, int64_t>> step; ///< (request, new tokens) of the step being built
  /// Steps in flight: one, or up to pp with a pipeline (each stage works on
  /// another batch), the next starting when the first stage is free.
  std::vector<Flight> flights;
  double stageFree = 0;
  int64_t usedBlocks = 0, hostBlocks = 0;
  double blockSeconds = 0, since = 0; ///< blocks in use x time until `since`, for the mean occupancy
};

class Simulation {
public:
  Simulation(const std::vector<Request> &reqs, const Engine &e, const StepCost &cost)
      : reqs(reqs), e(e), cost(cost), live(reqs.size()), reps(size_t(e.replicas)) {
    out.requests.resize(reqs.size());
    for (size_t i = 0; i < reqs.size(); ++i) {
      RequestRecord &r = out.requests[i];
      r.id = reqs[i].id;
      r.prompt = reqs[i].prompt;
      r.output = reqs[i].output;
      live[i].context = reqs[i].prompt;
    }
  }

  llvm::Expected<Result> run() {
    if (llvm::Error err = checkFits()) return err;
    size_t next = 0, done = 0, inSystem = 0;
    double now = 0, firstSent = std::numeric_limits<double>::infinity();
    constexpr double kNever = std::numeric_limits<double>::infinity();
    std::deque<std::pair<double, int64_t>> front; // (ready, request), in the front end's order
    double frontFree = 0;                         // a shared front end is busy until then
    auto canSend = [&] { return next < reqs.size() && (e.concurrency == 0 || inSystem < size_t(e.concurrency)); };
    while (done < reqs.size()) {
      double tA = canSend() ? std::max(reqs[next].arrival, now) : kNever;
      double tF = front.empty() ? kNever : front.front().first;
      // The earliest step to end, and the earliest first stage to free up
      // for another batch (pipelines only).
      double tS = kNever, tP = kNever;
      size_t stepRep = 0, stepFlight = 0;
      for (size_t r = 0; r < reps.size(); ++r) {
        for (size_t f = 0; f < reps[r].flights.size(); ++f)
          if (reps[r].flights[f].end < tS) tS = reps[r].flights[f].end, stepRep = r, stepFlight = f;
        if (int64_t(reps[r].flights.size()) < e.pipeline && reps[r].stageFree > now && hasWork(reps[r]))
          tP = std::min(tP, reps[r].stageFree);
      }
      now = std::min({tA, tF, tS, tP});
      if (now == kNever)
        return llvm::createStringError("serving stalled with %zu requests unfinished", reqs.size() - done);
      if (now == tA) { // the client sends every request due; the front end takes them in turn
        while (canSend() && reqs[next].arrival <= now) {
          RequestRecord &rec = out.requests[next];
          rec.sent = now;
          firstSent = std::min(firstSent, now);
          double ready = (e.sharedFrontend ? std::max(now, frontFree) : now) + e.requestOverhead;
          if (e.sharedFrontend) frontFree = ready;
          front.push_back({ready, int64_t(next)});
          ++inSystem;
          ++next;
        }
      } else if (now == tF) { // past the front end: the router places it
        while (!front.empty() && front.front().first <= now) {
          int64_t i = front.front().second;
          front.pop_front();
          out.requests[size_t(i)].replica = route();
          reps[size_t(out.requests[size_t(i)].replica)].waiting.push_back(i);
        }
      } else if (now == tS) {
        size_t finished = finishStep(stepRep, stepFlight, now);
        done += finished;
        inSystem -= finished;
      }
      // Steps start once everything due at this moment is in, and not while
      // a front end sharing the engine's process is busy.
      if ((canSend() && reqs[next].arrival <= now) || (!front.empty() && front.front().first <= now)) continue;
      if (e.sharedFrontend && frontFree > now) continue;
      for (size_t r = 0; r < reps.size(); ++r)
        while (int64_t(reps[r].flights.size()) < e.pipeline && reps[r].stageFree <= now) {
          size_t before = reps[r].flights.size();
          if (llvm::Error err = startStep(r, now)) return err;
          if (reps[r].flights.size() == before) break; // nothing to run
        }
    }
    for (Replica &rep : reps) account(rep, now);
    summarize(firstSent, now);
    return std::move(out);
  }

private:
  llvm::Error checkFits() const {
    for (size_t i = 0; i < reqs.size(); ++i) {
      int64_t need = blocksFor(reqs[i].prompt + reqs[i].output);
      if (need > e.kvBlocks)
        return llvm::createStringError(fmt::format(
            "request {} needs {} KV-cache blocks ({} prompt and {} output tokens, {} a block) but a replica holds {}",
            reqs[i].id, need, reqs[i].prompt, reqs[i].output, e.blockSize, e.kvBlocks));
    }
    return llvm::Error::success();
  }

  int64_t blocksFor(int64_t tokens) const { return (tokens + e.blockSize - 1) / e.blockSize; }

  int64_t route() {
    if (e.router == ServeRouter::RoundRobin) return int64_t(sent++ % reps.size());
    size_t best = 0; // fewest requests in flight, the lowest index on a tie
    auto load = [&](size_t r) { return reps[r].waiting.size() + reps[r].running.size(); };
    for (size_t r = 1; r < reps.size(); ++r)
      if (load(r) < load(best)) best = r;
    return int64_t(best);
  }

  int64_t freeBlocks(const Replica &rep) const { return e.kvBlocks - rep.usedBlocks; }

  /// Grows request `i`'s blocks to hold `tokens`; false when they are not free.
  bool grow(Replica &rep, int64_t i, int64_t tokens) {
    Live &l = live[size_t(i)];
    int64_t need = std::max<int64_t>(0, blocksFor(tokens) - l.blocks);
    if (need > freeBlocks(rep)) return false;
    l.blocks += need;
    rep.usedBlocks += need;
    return true;
  }

  void release(Replica &rep, int64_t i) {
    rep.usedBlocks -= live[size_t(i)].blocks;
    live[size_t(i)].blocks = 0;
  }

  /// In the step being built, or in one in flight.
  bool scheduled(int64_t i) const { return live[size_t(i)].inStep == out.steps || live[size_t(i)].inFlight; }
  /// Requests that a step could take: waiting, or running and not in flight.
  bool hasWork(const Replica &rep) const {
    return !rep.waiting.empty() ||
           std::any_of(rep.running.begin(), rep.running.end(), [&](int64_t i) { return !live[size_t(i)].inFlight; });
  }
  /// Adds the blocks held since the last change to the occupancy integral.
  void account(Replica &rep, double now) {
    rep.blockSeconds += double(rep.usedBlocks) * (now - rep.since);
    rep.since = now;
  }
  void schedule(Replica &rep, int64_t i, int64_t n) {
    rep.step.push_back({i, n});
    live[size_t(i)].inStep = out.steps;
  }

  /// Preempts the latest-admitted running request not in this step, or
  /// `self` when none is left; true when it was someone else.
  bool preemptFor(Replica &rep, int64_t self) {
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

  void preempt(Replica &rep, size_t k) {
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
    }
    release(rep, v);
    live[size_t(v)].running = false;
    rep.running.erase(rep.running.begin() + ptrdiff_t(k));
    rep.waiting.push_front(v);
    ++out.requests[size_t(v)].preemptions;
    ++out.preemptions;
    preemptedNow = true;
  }

  int64_t need(int64_t i) const { return live[size_t(i)].context - live[size_t(i)].computed; }

  /// A decode token for each running request that has one to compute, as
  /// long as blocks can be found for it (preempting the latest otherwise).
  void decodeRunning(Replica &rep, int64_t &budget) {
    std::vector<int64_t> order = rep.running; // preemption takes requests out of rep.running
    for (int64_t i : order) {
      if (budget <= 0 || int64_t(rep.step.size()) >= e.maxBatch) return;
      Live &l = live[size_t(i)];
      if (!l.running || l.inFlight || need(i) != 1 || l.computed == 0) continue;
      bool placed = true;
      while (!l.reserved && !grow(rep, i, l.computed + 1))
        if (!preemptFor(rep, i)) {
          placed = false;
          break;
        }
      if (!placed) continue;
      schedule(rep, i, 1);
      --budget;
    }
  }

  /// Prefill chunks of running requests, then admissions from the queue.
  void prefill(Replica &rep, int64_t &budget, bool whole) {
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
      int64_t i = rep.waiting.front(), n = need(i);
      // A prompt longer than the budget runs alone (whole) or in chunks.
      if (whole && !batch && n > budget && !rep.step.empty()) return;
      if (!whole) n = std::min(n, budget);
      int64_t hold = e.scheduler == ServeScheduler::Static ? reqs[size_t(i)].prompt + reqs[size_t(i)].output
                                                           : live[size_t(i)].computed + n;
      if (!grow(rep, i, hold)) return;
      if (int64_t back = live[size_t(i)].swapped) { // its cache returns from host memory
        swapNow += back;
        rep.hostBlocks -= back;
        live[size_t(i)].swapped = 0;
      }
      live[size_t(i)].reserved = e.scheduler == ServeScheduler::Static;
      live[size_t(i)].running = true;
      rep.waiting.pop_front();
      rep.running.push_back(i);
      schedule(rep, i, n);
      budget -= n;
    }
  }

  llvm::Error startStep(size_t r, double now) {
    Replica &rep = reps[r];
    account(rep, now);
    rep.step.clear();
    preemptedNow = false;
    swapNow = 0;
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
    if (rep.step.empty()) return llvm::Error::success();
    StepShape shape;
    shape.swapBlocks = swapNow;
    for (auto [i, n] : rep.step) {
      const Live &l = live[size_t(i)];
      shape.tokens += n;
      if (l.computed + n == l.context) ++shape.sampled;
      if (n == 1 && l.computed > 0) {
        ++shape.decodeSeqs;
        shape.decodeKv += l.computed + 1;
      } else {
        shape.prefill.push_back({n, l.computed});
      }
    }
    llvm::Expected<double> t = cost(shape);
    if (!t) return t.takeError();
    for (auto [i, n] : rep.step) live[size_t(i)].inFlight = true;
    rep.flights.push_back({now + *t, std::move(rep.step)});
    rep.step.clear();
    // A pipeline's first stage takes its share of the step (even stages).
    rep.stageFree = now + *t / double(e.pipeline);
    out.kvPeak = std::max(out.kvPeak, double(rep.usedBlocks) / double(e.kvBlocks));
    out.occupancy.push_back({now, int64_t(r), rep.usedBlocks});
    ++out.steps;
    return llvm::Error::success();
  }

  /// Applies the step that ended at `now`; returns the requests it finished.
  size_t finishStep(size_t r, size_t f, double now) {
    Replica &rep = reps[r];
    account(rep, now);
    Flight flight = std::move(rep.flights[f]);
    rep.flights.erase(rep.flights.begin() + ptrdiff_t(f));
    size_t finished = 0;
    for (auto [i, n] : flight.work) {
      Live &l = live[size_t(i)];
      RequestRecord &rec = out.requests[size_t(i)];
      l.inFlight = false;
      l.computed += n;
      if (l.computed < l.context) continue;
      ++l.generated;
      ++l.context;
      if (l.generated == 1) rec.firstToken = now;
      else itl.add(now - l.lastToken); // after a preemption, the wait for its recompute too
      l.lastToken = now;
      if (l.generated < rec.output) continue;
      rec.finish = now;
      l.running = false;
      release(rep, i);
      rep.running.erase(std::find(rep.running.begin(), rep.running.end(), i));
      ++finished;
    }
    return finished;
  }

  void summarize(double firstSent, double end) {
    std::vector<double> ttft, tpot, e2e;
    int64_t outputTokens = 0, withinSlo = 0;
    for (const RequestRecord &r : out.requests) {
      ttft.push_back(r.firstToken - r.sent);
      e2e.push_back(r.finish - r.sent);
      double perToken = r.output > 1 ? (r.finish - r.firstToken) / double(r.output - 1) : 0;
      if (r.output > 1) tpot.push_back(perToken);
      outputTokens += r.output;
      withinSlo += (e.sloTtft == 0 || ttft.back() <= e.sloTtft) && (e.sloTpot == 0 || perToken <= e.sloTpot);
    }
    out.sloAttainment = double(withinSlo) / double(reqs.size());
    out.ttft = serve::summarize(ttft);
    out.tpot = serve::summarize(tpot);
    out.e2e = serve::summarize(e2e);
    out.itl = itl.summary();
    out.duration = end - firstSent;
    if (out.duration > 0) {
      out.requestsPerSecond = double(reqs.size()) / out.duration;
      out.outputTokensPerSecond = double(outputTokens) / out.duration;
      out.goodput = double(withinSlo) / out.duration;
      double blockSeconds = 0;
      for (const Replica &rep : reps) blockSeconds += rep.blockSeconds;
      out.kvMean = blockSeconds / (double(e.kvBlocks) * double(reps.size()) * out.duration);
    }
  }

  const std::vector<Request> &reqs;
  const Engine &e;
  const StepCost &cost;
  std::vector<Live> live;
  std::vector<Replica> reps;
  LogHistogram itl;
  size_t sent = 0;
  bool preemptedNow = false;
  int64_t swapNow = 0; ///< blocks the step being built moves to or from host memory
  Result out;
};

} // namespace

llvm::Expected<Result> simulate(const std::vector<Request> &requests, const Engine &engine, const StepCost &cost) {
  return Simulation(requests, engine, cost).run();
}

} // namespace rapid::serve
