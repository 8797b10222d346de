//===- Serve.h - Requests through a continuously batching engine -*- C++ -*-===//
//
// The serving simulator: requests arrive (Poisson, a closed loop of fixed
// concurrency, or a trace), a router spreads them over replicas, and each
// replica's scheduler picks, step by step, which requests run and how many
// of their tokens, within a KV cache of fixed blocks. What a step costs is
// not this library's business: the caller passes a function of the step's
// shape (Driver/Serving.cpp costs it with the compiler's lowering, kernel
// model and network). docs/serving.md describes the policies and sources.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Spec/Specs.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace rapid::serve {

struct Request {
  int64_t id = 0;
  double arrival = 0; ///< seconds from the start of the run
  int64_t prompt = 1, output = 1;
  int64_t prefix = 0; ///< which of the shared prefixes its prompt begins with
};

/// The requests of a `serving` section: drawn from its rate and length
/// distributions (deterministic in its seed), or read from its trace (Sema
/// made its path relative to the file that names it). Sorted by arrival.
llvm::Expected<std::vector<Request>> makeRequests(const ServingSpec &s);
/// A trace's requests: CSV with a header naming arrival_s, prompt and
/// output (in any order, other columns ignored), or JSONL objects with those
/// keys; at most `limit`, in file order. Errors name the file and line.
llvm::Expected<std::vector<Request>> readTrace(const std::string &path, int64_t limit);

/// A prefill chunk: `q` new tokens after `context` cached ones.
struct Chunk {
  int64_t q = 0, context = 0;
};

/// What one step runs, as its cost depends on it.
struct StepShape {
  int64_t tokens = 0;         ///< new tokens in all
  int64_t sampled = 0;        ///< sequences that sample a token at its end
  std::vector<Chunk> prefill; ///< requests with more than one new token, or none cached
  int64_t decodeSeqs = 0;     ///< requests with one new token after a cache
  int64_t decodeKv = 0;       ///< tokens those attend over, in all
  int64_t swapBlocks = 0;     ///< KV blocks copied to or from host memory before it runs
  int64_t admitted = 0;       ///< requests taken from the queue into it (their first chunk)
  /// Speculative decoding: decodes that verify drafts (counted in
  /// decodeSeqs, their n - 1 drafts and last token in tokens and sampled),
  /// and the most drafts any of them verifies: the draft's sequential passes.
  int64_t draftSeqs = 0, draftPasses = 0;
  /// With replicas in lock step: the most new tokens any replica of its
  /// expert-parallel group runs in this step, which every one of them waits
  /// for in each MoE layer (0 alone).
  int64_t groupTokens = 0;
  /// When the step starts and on which replica: a GPU's clock under its
  /// power limit depends on what it ran just before (Cost/Power.h).
  double start = 0;
  int64_t replica = 0;
};
using StepCost = std::function<llvm::Expected<double>(const StepShape &)>;

struct Engine {
  ServeScheduler scheduler = ServeScheduler::Chunked;
  ServeRouter router = ServeRouter::RoundRobin;
  int64_t replicas = 1;
  int64_t pipeline = 1;        ///< batches in flight at once: a replica's pipeline stages (vLLM runs pp)
  /// Replicas whose MoE layers form one expert-parallel group (ep): they
  /// start their steps together and end them with the slowest (1: independent).
  int64_t lockstep = 1;
  /// Disaggregated serving: the first this many replicas only prefill; a
  /// request's KV cache then moves to one of the others, which decode
  /// (0: every replica does both).
  int64_t prefillReplicas = 0;
  /// Speculative decoding: drafts a decode proposes each step (0: none),
  /// each accepted with probability `acceptance` up to the first rejected;
  /// the draws follow `seed`.
  int64_t speculative = 0;
  double acceptance = 0;
  uint64_t seed = 1;
  /// Moving a prompt's KV cache from replica `from` to replica `to`: a fixed
  /// part and one per token, in seconds (the per-token part holds the links
  /// at both ends). Asked once per pair that moves one.
  std::function<llvm::Expected<std::pair<double, double>>(int64_t from, int64_t to)> transfer;
  int64_t maxBatch = 256, tokenBudget = 2048, blockSize = 16;
  int64_t kvBlocks = 0;        ///< per replica
  ServeAdmission admission = ServeAdmission::Grow;
  ServePreemption preemption = ServePreemption::Recompute;
  int64_t swapBlocks = 0;      ///< host memory for swapped blocks, per replica
  int64_t concurrency = 0;     ///< 0: open loop
  int64_t sharedPrefix = 0;    ///< tokens every prompt begins with (one of `prefixes` distinct ones)
  int64_t prefixes = 1;
  bool prefixCaching = true;   ///< the shared prefix's full blocks are kept and reused
  double requestOverhead = 0;  ///< seconds a request spends in the front end before the scheduler sees it
  /// Separate: requests pass the front end side by side. Serial: one at a
  /// time (one event loop in a process of its own). Shared: one at a time in
  /// the engine's process (vLLM before 0.6), and no step starts while it works.
  Frontend frontend = Frontend::Separate;
  double sloTtft = 0, sloTpot = 0; ///< per-request targets in seconds; 0: none
};

/// Mean and percentiles (linear between order statistics, as numpy's default).
struct Summary {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
};

struct RequestRecord {
  int64_t id = 0, replica = 0, prompt = 0, output = 0, preemptions = 0;
  int64_t decodeReplica = -1; ///< disaggregated: where it decoded after its KV cache moved (-1: none)
  double transfer = 0;        ///< disaggregated: from its first token until its KV cache was on the decode replica
  double sent = 0;       ///< when the client sent it: its arrival, or later when the concurrency limit held it
  double firstToken = 0; ///< end of the step that sampled its first token
  double finish = 0;

  double ttft() const { return firstToken - sent; }
  double e2e() const { return finish - sent; }
  /// Time per output token after the first, as vLLM's benchmark counts it;
  /// none for a one-token answer.
  std::optional<double> tpot() const {
    if (output <= 1) return std::nullopt;
    return (finish - firstToken) / double(output - 1);
  }
};

/// KV blocks in use on one replica after a step was scheduled.
struct Occupancy {
  double time = 0;
  int64_t replica = 0, blocks = 0;
};

struct Result {
  std::vector<RequestRecord> requests; ///< in request order
  Summary ttft, tpot, itl, e2e;        ///< seconds
  Summary transfer;                    ///< disaggregated: KV-cache moves, queueing included (seconds)
  double duration = 0;                 ///< first send to last finish
  double requestsPerSecond = 0, outputTokensPerSecond = 0;
  int64_t steps = 0, preemptions = 0;
  /// Requests within both SLO targets: their share, and per second of the
  /// run (DistServe's goodput). 1 and the throughput when no target is set.
  double sloAttainment = 1, goodput = 0;
  double kvPeak = 0, kvMean = 0; ///< shares of a replica's blocks: the largest, and the time average over replicas
  /// Prompt tokens taken from the prefix cache over prompt tokens admitted
  /// (re-admissions after a recompute included), as vLLM reports its hit rate.
  double prefixHitRate = 0;
  std::vector<Occupancy> occupancy;
};

/// Runs every request to its last token. Errors: a request whose prompt and
/// output can never fit one replica's blocks, and errors of `cost`.
llvm::Expected<Result> simulate(const std::vector<Request> &requests, const Engine &engine, const StepCost &cost);

/// Summary of `values` (sorted in place).
Summary summarize(std::vector<double> &values);

} // namespace rapid::serve
