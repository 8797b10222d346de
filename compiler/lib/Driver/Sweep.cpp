//===- Sweep.cpp - Many points: in parallel, resumable, sorted ------------===//
#include "rapid/Driver/Sweep.h"

#include "rapid/Driver/Distributed.h"
#include "rapid/Sema/PointPrinter.h"
#include "rapid/Support/Files.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <tuple>

namespace rapid {
namespace {

/// A journal line: the result and the fingerprint of what it was computed from.
struct Finished {
  PointResult result;
  std::string fingerprint;
};

/// Results of a previous run's journal, by point key. A line cut short by a
/// kill does not read back and is redone.
std::map<std::string, Finished> readJournal(const std::string &path) {
  std::map<std::string, Finished> done;
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) return done;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n', -1, false);
  for (llvm::StringRef l : lines) {
    std::string fingerprint;
    llvm::Expected<PointResult> r = readResult(l, &fingerprint);
    if (!r) {
      llvm::consumeError(r.takeError());
      continue;
    }
    std::string key = r->key(); // before the result moves
    done[key] = {std::move(*r), std::move(fingerprint)};
  }
  return done;
}

/// Best first: feasible before pruned and failed, serving points that meet
/// their SLO before those that miss it, then by step time (training), total
/// latency (inference) or mean end-to-end latency (serving). A search's
/// layouts left out follow those simulated, by their bounds.
std::tuple<int, double, double> sortKey(const PointResult &r) {
  if (!r.feasible || !r.error.empty()) return {2, INFINITY, INFINITY};
  return {r.serving && !r.serving->sloMissed.empty() ? 1 : 0, r.headline().value_or(INFINITY),
          r.bound.value_or(INFINITY)};
}

void writeResults(const std::string &prefix, std::vector<PointResult> results, DiagnosticEngine &diags) {
  std::stable_sort(results.begin(), results.end(),
                   [](const PointResult &a, const PointResult &b) { return sortKey(a) < sortKey(b); });
  std::string jsonl, csv = csvHeader() + "\n";
  for (const PointResult &r : results) {
    jsonl += resultJson(r) + "\n";
    csv += csvRow(r) + "\n";
  }
  std::string requests = requestsCsv(results), requestLines = requestsJsonl(results), kv = kvCsv(results);
  for (auto [path, text] : {std::pair{prefix + ".jsonl", &jsonl}, {prefix + ".csv", &csv},
                            {prefix + ".requests.csv", &requests}, {prefix + ".requests.jsonl", &requestLines},
                            {prefix + ".kv.csv", &kv}})
    if (!text->empty())
      if (llvm::Error e = writeFileAtomically(path, *text))
        diags.report(DiagID::CannotWrite, {}, path, llvm::toString(std::move(e)));
}

/// The journal of a sweep: one line per finished point, flushed at once.
/// A write that fails (a full disk) is reported once and ends the journal;
/// the sweep goes on.
class Journal {
public:
  Journal(std::string path, DiagnosticEngine &diags) : path(std::move(path)), diags(diags) {}
  llvm::Error open(bool append) {
    std::error_code ec;
    out = std::make_unique<llvm::raw_fd_ostream>(path, ec, append ? llvm::sys::fs::OF_Append : llvm::sys::fs::OF_None);
    if (ec) return llvm::createStringError(ec, "cannot write '%s': %s", path.c_str(), ec.message().c_str());
    return llvm::Error::success();
  }
  void add(const std::string &line) {
    if (!out) return;
    *out << line << "\n";
    out->flush();
    if (!out->has_error()) return;
    diags.report(DiagID::CannotWrite, {}, path, out->error().message());
    out->clear_error();
    out.reset();
  }

private:
  std::string path;
  DiagnosticEngine &diags;
  std::unique_ptr<llvm::raw_fd_ostream> out;
};

/// A result read back from its JSON line, with the point it belongs to.
PointResult resumed(PointResult r, decltype(PointResult::point) point) {
  r.point = std::move(point);
  return r;
}

/// A search's training layout without faults: its step time has a lower
/// bound (Bound.h), so the search can leave it out where that bound
/// cannot reach the front.
bool boundable(const ExperimentPoint &p) { return p.search && p.feasible && p.isTraining() && !p.faults; }

/// A layout bounded but neither simulated nor left out yet.
bool pending(const PointResult &r) {
  return r.bound && r.feasible && r.error.empty() && !r.headline() && r.dominatedBy.empty();
}

/// Layouts a search decides together: each is left out only for layouts of
/// earlier waves, which makes what is simulated independent of -j, of MPI
/// ranks and of a resumed journal.
constexpr size_t kWave = 8;

/// Runs the pending layouts of every search in the order of their bounds,
/// a wave at a time (`run`): a layout is left out (`skipped`, its
/// `dominatedBy` set) when a layout of an earlier wave took less time than
/// its bound and no more memory, which makes it strictly slower and no
/// lighter: not on the Pareto front, and not the best. Ties in the bound
/// keep the point order.
llvm::Error runBounded(std::vector<PointResult> &results,
                       llvm::function_ref<llvm::Error(const std::vector<size_t> &)> run,
                       llvm::function_ref<void(size_t)> skipped) {
  std::vector<size_t> order;
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].search && results[i].bound && results[i].feasible && results[i].error.empty() && results[i].memory)
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return *results[a].bound < *results[b].bound; });
  std::vector<size_t> ran; // layouts simulated in earlier waves
  for (size_t w = 0; w < order.size(); w += kWave) {
    std::vector<size_t> wave(order.begin() + w, order.begin() + std::min(order.size(), w + kWave)), now;
    for (size_t i : wave) {
      PointResult &r = results[i];
      if (!pending(r)) continue;
      // Simulated times are whole nanoseconds: a margin keeps a bound that
      // rounding put a hair above its own step from leaving anything out.
      double beaten = *r.bound * (1 - 1e-9) - 2e-9;
      auto faster = std::find_if(ran.begin(), ran.end(), [&](size_t j) {
        const PointResult &e = results[j];
        return e.experiment == r.experiment && e.sweep == r.sweep && *e.headline() < beaten &&
               e.memory->peak <= r.memory->peak;
      });
      if (faster == ran.end()) {
        now.push_back(i);
        continue;
      }
      r.dominatedBy = results[*faster].label;
      skipped(i);
    }
    if (llvm::Error e = run(now)) return e;
    for (size_t i : wave)
      if (results[i].headline() && results[i].feasible && results[i].error.empty()) ran.push_back(i);
  }
  return llvm::Error::success();
}

} // namespace

std::string pointFingerprint(const ExperimentPoint &point, SimMode mode) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printPointJson(point, os);
  os << "mode=" << int(mode) << " rapidc=" << RAPID_BUILD_ID;
  return llvm::utohexstr(llvm::xxh3_64bits(text), /*LowerCase=*/true, /*Width=*/16);
}

void reportOutcomes(const std::vector<ExperimentPoint> &points, const std::vector<PointResult> &results,
                    DiagnosticEngine &diags) {
  for (size_t i = 0; i < results.size(); ++i)
    if (!results[i].error.empty()) diags.report(DiagID::PointFailed, points[i].where, pointName(points[i]), results[i].error);
  struct Pruned {
    size_t points = 0, pruned = 0, first = 0;
  };
  std::vector<std::pair<std::string, Pruned>> sweeps; // in the order they run
  for (size_t i = 0; i < results.size(); ++i) {
    const ExperimentPoint &p = points[i];
    const PointResult &r = results[i];
    if (p.sweep.empty()) {
      if (!r.feasible) diags.report(DiagID::PointDoesNotFit, p.where, p.experiment, r.reason);
      continue;
    }
    if (sweeps.empty() || sweeps.back().first != p.sweep) sweeps.push_back({p.sweep, Pruned{0, 0, i}});
    Pruned &s = sweeps.back().second;
    ++s.points;
    s.pruned += !r.feasible;
  }
  for (const auto &[name, s] : sweeps)
    if (s.points == s.pruned)
      diags.report(DiagID::SweepAllPruned, points[s.first].where, name, s.points, results[s.first].reason);
}

llvm::Expected<std::vector<PointResult>> runSweep(const std::vector<ExperimentPoint> &points,
                                                  const SweepOptions &opts) {
  DiagnosticEngine &diags = *opts.diags;
  bool root = mpi::isRoot(); // under mpirun, rank 0 alone reads and writes files
  std::string journalPath = opts.output.empty() || !root ? "" : opts.output + ".jsonl.partial";
  std::map<std::string, Finished> done;
  if (opts.resume && !journalPath.empty()) done = readJournal(journalPath);
  // A search's layouts that may be left out (runBounded); the point a
  // timeline shows always runs.
  auto bounds = [&](size_t i) {
    return opts.boundSearches && boundable(points[i]) && !(i == opts.timelinePoint && !opts.timeline.empty());
  };
  std::vector<PointResult> results(points.size());
  std::vector<std::string> fingerprints(points.size());
  std::vector<size_t> todo;
  size_t stale = 0;
  uint64_t everyPoint = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    results[i] = makeResult(points[i], nullptr);
    fingerprints[i] = pointFingerprint(points[i], opts.mode);
    if (bounds(i)) fingerprints[i] += "b"; // its result may be a bound alone
    everyPoint = llvm::xxh3_64bits(fingerprints[i] + llvm::utohexstr(everyPoint));
    auto it = done.find(results[i].key());
    bool same = it != done.end() && it->second.fingerprint == fingerprints[i];
    stale += it != done.end() && !same;
    if (!same) {
      todo.push_back(i);
      continue;
    }
    // The same key means the same swept values; the point has them in the
    // sweep's order, which a JSON object does not keep.
    results[i] = resumed(it->second.result, std::move(results[i].point));
  }
  if (llvm::Error e = mpi::agree(everyPoint, "points of the sweep")) {
    mpi::settle(); // every rank knows
    return e;
  }
  mpi::broadcast(todo); // rank 0 read the journal
  if (stale) diags.report(DiagID::StaleJournal, {}, stale, stale + points.size() - todo.size(), journalPath);
  std::optional<Journal> journal;
  if (!journalPath.empty())
    if (llvm::Error e = journal.emplace(journalPath, diags).open(opts.resume)) return e;
  std::mutex mu; // the journal and the progress line
  size_t finished = 0;
  auto record = [&](const std::string &line) {
    std::lock_guard<std::mutex> lock(mu);
    if (journal) journal->add(line);
    if (opts.progress) llvm::errs() << fmt::format("\r[{}/{}] points", ++finished, todo.size());
  };
  // Evaluates point i: in full, or (boundOnly) as far as its lower bound.
  // A bound alone is not a result yet: it goes to no journal.
  auto evaluate = [&](size_t i, bool boundOnly) -> llvm::Expected<std::string> {
    const ExperimentPoint &p = points[i];
    if (p.feasible) {
      RunOptions ro;
      ro.mode = opts.mode;
      ro.jobs = todo.size() == 1 ? opts.jobs : 1; // one point: its fault samples in parallel
      ro.boundOnly = boundOnly;
      if (i == opts.timelinePoint && (todo.size() > 1 || root)) {
        ro.timeline = opts.timeline;
        ro.timelineRanks = opts.timelineRanks;
      }
      std::optional<double> bound = results[i].bound; // the one the search ordered it by
      llvm::Expected<RunResult> res = runPoint(p, ro);
      results[i] = res ? makeResult(p, &*res) : failedResult(p, llvm::toString(res.takeError()));
      if (bound) results[i].bound = bound;
    }
    std::string line = resultJson(results[i], fingerprints[i]);
    if (!pending(results[i])) record(line);
    return line;
  };
  // A point computed on another MPI rank arrives as its journal line.
  auto adopt = [&](size_t i, std::string line) {
    llvm::Expected<PointResult> r = readResult(line);
    results[i] = r ? resumed(std::move(*r), std::move(results[i].point))
                   : failedResult(points[i], llvm::toString(r.takeError()));
    if (!pending(results[i])) record(line);
  };
  auto evaluateAll = [&](const std::vector<size_t> &which, bool boundOnly) {
    return mpi::distributedFor(
        which.size(), opts.jobs, [&](size_t t) { return evaluate(which[t], boundOnly); },
        [&](size_t t, std::string line) { adopt(which[t], std::move(line)); });
  };
  // A search's layouts are bounded first, then run best bound first
  // (runBounded); the rest run as they come.
  auto phases = [&]() -> llvm::Error {
    std::vector<size_t> direct, bounded;
    for (size_t i : todo) (bounds(i) ? bounded : direct).push_back(i);
    if (llvm::Error e = evaluateAll(direct, false)) return e;
    if (llvm::Error e = evaluateAll(bounded, true)) return e;
    return runBounded(
        results, [&](const std::vector<size_t> &wave) { return evaluateAll(wave, false); },
        [&](size_t i) { record(resultJson(results[i], fingerprints[i])); });
  };
  // One point runs on every rank, its fault samples spread over them.
  llvm::Error failure = todo.size() == 1 ? evaluate(todo[0], false).takeError() : phases();
  mpi::settle();
  if (opts.progress && !todo.empty()) llvm::errs() << "\n";
  if (failure) return failure;
  markPareto(results);
  if (!opts.output.empty() && root) writeResults(opts.output, results, diags);
  return results;
}

} // namespace rapid
