//===- Sweep.cpp - Many points: in parallel, resumable, sorted ------------===//
#include "rapid/Driver/Sweep.h"

#include "rapid/Driver/Parallel.h"
#include "rapid/Support/Files.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <mutex>

namespace rapid {
namespace {

/// Results of a previous run's journal, by point key. A line cut short by a
/// kill does not read back and is redone.
std::map<std::string, PointResult> readJournal(const std::string &path) {
  std::map<std::string, PointResult> done;
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) return done;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n', -1, false);
  for (llvm::StringRef l : lines) {
    llvm::Expected<PointResult> r = readResult(l);
    if (r) done[r->key()] = std::move(*r);
    else llvm::consumeError(r.takeError());
  }
  return done;
}

/// Best first: feasible before pruned, then by step time (training) or
/// total latency (inference).
double sortKey(const PointResult &r) { return r.feasible ? r.headline().value_or(INFINITY) : INFINITY; }

llvm::Error writeResults(const std::string &prefix, std::vector<PointResult> results) {
  std::stable_sort(results.begin(), results.end(),
                   [](const PointResult &a, const PointResult &b) { return sortKey(a) < sortKey(b); });
  std::string jsonl, csv = csvHeader() + "\n";
  for (const PointResult &r : results) {
    jsonl += resultJson(r) + "\n";
    csv += csvRow(r) + "\n";
  }
  if (llvm::Error e = writeFileAtomically(prefix + ".jsonl", jsonl)) return e;
  return writeFileAtomically(prefix + ".csv", csv);
}

} // namespace

llvm::Expected<std::vector<PointResult>> runSweep(const std::vector<ExperimentPoint> &points,
                                                  const SweepOptions &opts) {
  std::string journalPath = opts.output.empty() ? "" : opts.output + ".jsonl.partial";
  std::map<std::string, PointResult> done;
  if (opts.resume && !journalPath.empty()) done = readJournal(journalPath);
  std::vector<PointResult> results(points.size());
  std::vector<size_t> todo;
  for (size_t i = 0; i < points.size(); ++i) {
    results[i] = makeResult(points[i], nullptr);
    auto it = done.find(results[i].key());
    if (it == done.end()) {
      todo.push_back(i);
      continue;
    }
    // The same key means the same swept values; the point has them in the
    // sweep's order, which a JSON object does not keep.
    PointResult resumed = it->second;
    resumed.point = std::move(results[i].point);
    results[i] = std::move(resumed);
  }
  std::unique_ptr<llvm::raw_fd_ostream> journal;
  if (!journalPath.empty()) {
    std::error_code ec;
    journal = std::make_unique<llvm::raw_fd_ostream>(journalPath, ec, opts.resume ? llvm::sys::fs::OF_Append
                                                                                    : llvm::sys::fs::OF_None);
    if (ec) return llvm::createStringError(ec, "cannot write '%s': %s", journalPath.c_str(), ec.message().c_str());
  }
  std::mutex mu; // the journal and the progress line
  size_t finished = 0;
  llvm::Error failure = parallelFor(todo.size(), opts.jobs, [&](size_t t) -> llvm::Error {
    size_t i = todo[t];
    const ExperimentPoint &p = points[i];
    std::optional<RunResult> r;
    if (p.feasible) {
      RunOptions ro;
      ro.mode = opts.mode;
      ro.jobs = todo.size() == 1 ? opts.jobs : 1; // one point: its fault samples in parallel
      if (i == opts.timelinePoint) ro.timeline = opts.timeline;
      llvm::Expected<RunResult> res = runPoint(p, ro);
      if (!res)
        return llvm::createStringError(std::errc::invalid_argument, "%s: %s", p.experiment.c_str(),
                                       llvm::toString(res.takeError()).c_str());
      r = std::move(*res);
    }
    results[i] = makeResult(p, r ? &*r : nullptr);
    std::lock_guard<std::mutex> lock(mu);
    if (journal) {
      *journal << resultJson(results[i]) << "\n";
      journal->flush();
    }
    if (opts.progress) llvm::errs() << fmt::format("\r[{}/{}] points", ++finished, todo.size());
    return llvm::Error::success();
  });
  if (opts.progress && !todo.empty()) llvm::errs() << "\n";
  if (failure) return failure;
  if (!opts.output.empty())
    if (llvm::Error e = writeResults(opts.output, results)) return e;
  return results;
}

} // namespace rapid
