//===- Scheduler.cpp - Requests through the engine, event by event --------===//
//
// The clock moves from event to event: a client sends requests, the front
// end hands them to the router, a step ends. At a step's end the requests
// that finished their new tokens sample one (the first ends the time to
// first token); then every replica with room starts its next step, whose
// work the batching policy picks (Batcher.cpp) and whose time the caller's
// cost function gives. A prefill chunk brings a request's cached tokens
// closer to its context, a decode step computes the one token sampled last.
//===----------------------------------------------------------------------===//
#include "rapid/Serve/Serve.h"
#include "rapid/Support/Random.h"

#include "Batcher.h"
#include "Stats.h"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <limits>
#include <map>

namespace rapid::serve {
namespace {

/// A KV cache on its way from a prefill replica to a decode replica.
struct Transfer {
  double end = 0;
  int64_t request = 0;
  size_t from = 0, to = 0;
};

class Simulation {
public:
  Simulation(const std::vector<Request> &reqs, const Engine &e, const StepCost &cost)
      : reqs(reqs), e(e), cost(cost), live(reqs.size()), reps(size_t(e.replicas)), batcher(reqs, e, live) {
    out.requests.resize(reqs.size());
    for (size_t i = 0; i < reqs.size(); ++i) {
      RequestRecord &r = out.requests[i];
      r.id = reqs[i].id;
      r.prompt = reqs[i].prompt;
      r.output = reqs[i].output;
      live[i].context = reqs[i].prompt;
    }
    for (int64_t r = 0; r < e.prefillReplicas; ++r) reps[size_t(r)].prefillOnly = true;
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
      double tS = kNever, tP = kNever, tX = transfers.empty() ? kNever : transfers.front().end;
      size_t stepRep = 0, stepFlight = 0;
      for (size_t r = 0; r < reps.size(); ++r) {
        for (size_t f = 0; f < reps[r].flights.size(); ++f)
          if (reps[r].flights[f].end < tS) tS = reps[r].flights[f].end, stepRep = r, stepFlight = f;
        if (int64_t(reps[r].flights.size()) < e.pipeline && reps[r].stageFree > now && hasWork(reps[r]))
          tP = std::min(tP, reps[r].stageFree);
      }
      now = std::min({tA, tF, tS, tP, tX});
      if (now == kNever)
        return llvm::createStringError("serving stalled with %zu requests unfinished", reqs.size() - done);
      if (now == tA) { // the client sends every request due; the front end takes them in turn
        while (canSend() && reqs[next].arrival <= now) {
          RequestRecord &rec = out.requests[next];
          rec.sent = now;
          firstSent = std::min(firstSent, now);
          bool inTurn = e.frontend != Frontend::Separate;
          double ready = (inTurn ? std::max(now, frontFree) : now) + e.requestOverhead;
          if (inTurn) frontFree = ready;
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
        for (int64_t i : prefilled)
          if (llvm::Error err = handOff(stepRep, i, now)) return err;
        prefilled.clear();
      } else if (now == tX) { // a KV cache is on its decode replica
        land(transfers.front(), now);
        transfers.erase(transfers.begin());
      }
      // Steps start once everything due at this moment is in, and not while
      // a front end sharing the engine's process is busy.
      if ((canSend() && reqs[next].arrival <= now) || (!front.empty() && front.front().first <= now) ||
          (!transfers.empty() && transfers.front().end <= now))
        continue;
      if (e.frontend == Frontend::Shared && frontFree > now) continue;
      for (size_t r = 0; r < reps.size(); r += size_t(e.lockstep)) {
        if (e.lockstep > 1) {
          if (llvm::Error err = startGroup(r, now)) return err;
          continue;
        }
        while (int64_t(reps[r].flights.size()) < e.pipeline && reps[r].stageFree <= now) {
          size_t before = reps[r].flights.size();
          if (llvm::Error err = startStep(r, now)) return err;
          if (reps[r].flights.size() == before) break; // nothing to run
        }
      }
    }
    for (Replica &rep : reps) account(rep, now);
    summarize(firstSent, now);
    return std::move(out);
  }

private:
  llvm::Error checkFits() const {
    for (size_t i = 0; i < reqs.size(); ++i) {
      int64_t need = batcher.blocksFor(reqs[i].prompt + reqs[i].output);
      if (need > e.kvBlocks)
        return llvm::createStringError(fmt::format(
            "request {} needs {} KV-cache blocks ({} prompt and {} output tokens, {} a block) but a replica holds {}",
            reqs[i].id, need, reqs[i].prompt, reqs[i].output, e.blockSize, e.kvBlocks));
    }
    return llvm::Error::success();
  }

  /// A new request's replica: a prefill one when serving is disaggregated.
  int64_t route() {
    size_t n = e.prefillReplicas > 0 ? size_t(e.prefillReplicas) : reps.size();
    return int64_t(pick(0, n, sent));
  }
  /// Of replicas [first, first + n): the next in turn, or the one with the
  /// fewest requests in flight or on their way (the lowest on a tie).
  size_t pick(size_t first, size_t n, size_t &turn) {
    if (e.router == ServeRouter::RoundRobin) return first + turn++ % n;
    size_t best = first;
    auto load = [&](size_t r) { return reps[r].waiting.size() + reps[r].running.size() + size_t(reps[r].incoming); };
    for (size_t r = first + 1; r < first + n; ++r)
      if (load(r) < load(best)) best = r;
    return best;
  }

  /// How many of request i's k drafts the target accepts: each with
  /// probability `acceptance`, up to the first it rejects (Leviathan et al.,
  /// ICML 2023). Drawn from the seed, the request and its position, so no
  /// scheduling order changes the draw.
  int64_t acceptedDrafts(int64_t i, int64_t k) const {
    Random rng(e.seed * 0x9E3779B97F4A7C15ull ^ uint64_t(reqs[size_t(i)].id) << 24 ^
               uint64_t(live[size_t(i)].generated));
    for (int64_t a = 0; a < k; ++a)
      if (rng.uniform() >= e.acceptance) return a;
    return k;
  }

  /// Disaggregated: request i has its first token from prefill replica r.
  /// Its KV cache moves to a decode replica, behind the moves already
  /// holding the sender's or the receiver's links, and keeps its blocks on r
  /// until it is there.
  llvm::Error handOff(size_t r, int64_t i, double now) {
    Replica &rep = reps[r];
    live[size_t(i)].running = false;
    rep.running.erase(std::find(rep.running.begin(), rep.running.end(), i));
    size_t prefill = size_t(e.prefillReplicas), to = pick(prefill, reps.size() - prefill, decodeTurn);
    out.requests[size_t(i)].decodeReplica = int64_t(to);
    auto [cost, fresh] = transferCosts.try_emplace({r, to});
    if (fresh) {
      llvm::Expected<std::pair<double, double>> c = e.transfer(int64_t(r), int64_t(to));
      if (!c) return c.takeError();
      cost->second = *c;
    }
    auto [base, perToken] = cost->second;
    double busy = perToken * double(live[size_t(i)].computed);
    double start = std::max({now, rep.sendFree, reps[to].receiveFree});
    rep.sendFree = reps[to].receiveFree = start + busy;
    ++reps[to].incoming;
    Transfer t{start + base + busy, i, r, to};
    auto later = [](const Transfer &a, const Transfer &b) { return a.end < b.end; };
    transfers.insert(std::upper_bound(transfers.begin(), transfers.end(), t, later), t);
    return llvm::Error::success();
  }

  /// The move ended: the prefill replica frees the request's blocks and
  /// the decode replica queues it with its cache computed (its first
  /// decode admits it, as a request swapped back in).
  void land(const Transfer &t, double now) {
    account(reps[t.from], now);
    batcher.release(reps[t.from], t.request);
    live[size_t(t.request)].sharedBlocks = 0; // the prefix cache stays on the prefill replica
    --reps[t.to].incoming;
    reps[t.to].waiting.push_back(t.request);
    RequestRecord &rec = out.requests[size_t(t.request)];
    rec.transfer = now - rec.firstToken;
  }

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
  llvm::Error startStep(size_t r, double now) {
    Replica &rep = reps[r];
    account(rep, now);
    StepShape shape = batcher.build(rep, builds++);
    if (rep.step.empty()) return llvm::Error::success();
    shape.start = now;
    shape.replica = int64_t(r);
    llvm::Expected<double> t = cost(shape);
    if (!t) return t.takeError();
    launch(r, now, *t);
    return llvm::Error::success();
  }

  /// Replicas `first`..+lockstep share their MoE layers' expert-parallel
  /// group, whose all-to-alls need every one of them in every layer: a step
  /// starts when all are free, a replica with nothing to run joins it with
  /// no tokens (the engines' dummy batch), and all end with the slowest.
  llvm::Error startGroup(size_t first, double now) {
    size_t n = size_t(e.lockstep);
    for (size_t r = first; r < first + n; ++r)
      if (!reps[r].flights.empty() || reps[r].stageFree > now) return llvm::Error::success();
    std::vector<StepShape> shapes;
    int64_t most = 0;
    bool any = false;
    for (size_t r = first; r < first + n; ++r) {
      account(reps[r], now);
      shapes.push_back(batcher.build(reps[r], builds++));
      shapes.back().start = now;
      shapes.back().replica = int64_t(r);
      most = std::max(most, shapes.back().tokens);
      any |= !reps[r].step.empty();
    }
    if (!any) return llvm::Error::success();
    double t = 0;
    for (StepShape &shape : shapes) {
      shape.groupTokens = most;
      llvm::Expected<double> c = cost(shape);
      if (!c) return c.takeError();
      t = std::max(t, *c);
    }
    for (size_t r = first; r < first + n; ++r)
      if (!reps[r].step.empty()) launch(r, now, t);
      else reps[r].stageFree = now + t; // its dummy batch holds it until the group's step ends
    return llvm::Error::success();
  }

  /// Replica r's built step runs from now for t seconds.
  void launch(size_t r, double now, double t) {
    Replica &rep = reps[r];
    for (auto [i, n] : rep.step) live[size_t(i)].inFlight = true;
    rep.flights.push_back({now + t, std::move(rep.step)});
    rep.step.clear();
    // A pipeline's first stage takes its share of the step (even stages).
    rep.stageFree = now + t / double(e.pipeline);
    out.kvPeak = std::max(out.kvPeak, double(rep.usedBlocks) / double(e.kvBlocks));
    out.occupancy.push_back({now, int64_t(r), rep.usedBlocks});
    ++out.steps;
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
      if (l.verifiesDrafts(n)) { // the target checked n - 1 drafts
        int64_t accepted = acceptedDrafts(i, n - 1);
        l.computed = l.context + accepted; // its last token and the accepted drafts are cached
        l.generated += accepted;           // below: the target's own next token
        l.context += accepted;
      } else {
        l.computed += n;
        batcher.cachePrefix(rep, i);
        if (l.computed < l.context) continue;
      }
      ++l.generated;
      ++l.context;
      if (l.generated == 1) rec.firstToken = now;
      else itl.add(now - l.lastToken); // after a preemption, the wait for its recompute too
      l.lastToken = now;
      if (l.generated < rec.output) {
        if (int64_t(r) < e.prefillReplicas) prefilled.push_back(i); // its cache moves (handOff)
        continue;
      }
      rec.finish = now;
      l.running = false;
      batcher.release(rep, i);
      rep.running.erase(std::find(rep.running.begin(), rep.running.end(), i));
      ++finished;
    }
    return finished;
  }

  void summarize(double firstSent, double end) {
    std::vector<double> ttft, tpot, e2e;
    int64_t outputTokens = 0, withinSlo = 0;
    out.preemptions = batcher.preemptions();
    out.prefixHitRate = batcher.prefixHitRate();
    for (size_t i = 0; i < out.requests.size(); ++i) out.requests[i].preemptions = live[i].preemptions;
    for (const RequestRecord &r : out.requests) {
      ttft.push_back(r.ttft());
      e2e.push_back(r.e2e());
      std::optional<double> perToken = r.tpot();
      if (perToken) tpot.push_back(*perToken);
      outputTokens += r.output;
      withinSlo += (e.sloTtft == 0 || r.ttft() <= e.sloTtft) && (e.sloTpot == 0 || perToken.value_or(0) <= e.sloTpot);
    }
    out.sloAttainment = double(withinSlo) / double(reqs.size());
    out.ttft = serve::summarize(ttft);
    out.tpot = serve::summarize(tpot);
    out.e2e = serve::summarize(e2e);
    out.itl = itl.summary();
    std::vector<double> moves;
    for (const RequestRecord &r : out.requests)
      if (r.decodeReplica >= 0) moves.push_back(r.transfer);
    out.transfer = serve::summarize(moves);
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
  std::vector<Transfer> transfers; ///< by end, first handed off first among equal ends
  std::vector<int64_t> prefilled;  ///< requests the step that just ended prefilled on a prefill replica
  std::map<std::pair<size_t, size_t>, std::pair<double, double>> transferCosts; ///< per (from, to)
  size_t sent = 0, decodeTurn = 0;
  int64_t builds = 0; ///< steps built, each its own number (an empty one too)
  Result out;
  Batcher batcher; // after `live`, which it holds
};

} // namespace

llvm::Expected<Result> simulate(const std::vector<Request> &requests, const Engine &engine, const StepCost &cost) {
  return Simulation(requests, engine, cost).run();
}

} // namespace rapid::serve
