//===- Sweep.cpp - Many points: in parallel, resumable, sorted ------------===//
#include "rapid/Driver/Run.h"
#include "rapid/Support/Files.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"

#include <algorithm>
#include <atomic>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <thread>

namespace rapid {
namespace {

/// Identifies a point across runs: experiment, sweep and swept values.
std::string keyOf(const llvm::json::Object &o) {
  return o.getString("experiment").value_or("").str() + "\x1f" + o.getString("sweep").value_or("").str() + "\x1f" +
         o.getString("label").value_or("").str();
}

std::optional<llvm::json::Object> parse(const std::string &line) {
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(line);
  if (!v) {
    llvm::consumeError(v.takeError());
    return std::nullopt;
  }
  if (llvm::json::Object *o = v->getAsObject()) return std::move(*o);
  return std::nullopt;
}

/// Lines of a previous run's journal, by point key.
std::map<std::string, std::string> readJournal(const std::string &path) {
  std::map<std::string, std::string> done;
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) return done;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buf)->getBuffer().split(lines, '\n', -1, false);
  for (llvm::StringRef l : lines) // a line cut short by a kill does not parse and is redone
    if (auto o = parse(l.str())) done[keyOf(*o)] = l.str();
  return done;
}

/// Best first: feasible before pruned, then by step time (training) or
/// total latency (inference).
double sortKey(const std::string &line) {
  auto o = parse(line);
  if (!o || !o->getBoolean("feasible").value_or(false)) return INFINITY;
  if (auto t = o->getNumber("step_time_s")) return *t;
  if (auto t = o->getNumber("total_s")) return *t;
  return INFINITY;
}

std::string csvRow(const std::string &line) {
  auto o = parse(line);
  if (!o) return "";
  auto num = [&](const llvm::json::Object *x, const char *k) {
    auto n = x ? x->getNumber(k) : std::nullopt;
    return n ? fmt::format("{}", *n) : std::string();
  };
  auto text = [&](const char *k) {
    std::string s = o->getString(k).value_or("").str();
    std::replace(s.begin(), s.end(), '"', '\'');
    return "\"" + s + "\"";
  };
  const llvm::json::Object *mem = o->getObject("memory"), *bd = o->getObject("breakdown");
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", text("experiment"), text("sweep"),
                     text("label"), text("workload"), o->getBoolean("feasible").value_or(false), text("reason"),
                     num(&*o, "gpus"), num(mem, "peak_bytes"), num(mem, "capacity_bytes"), num(&*o, "step_time_s"),
                     num(&*o, "mfu"), num(&*o, "tokens_per_s"), num(bd, "compute_s"), num(bd, "exposed_communication_s"),
                     num(bd, "pipeline_bubble_s"), num(&*o, "ttft_s"), num(&*o, "itl_s"), num(&*o, "total_s"));
}

llvm::Error writeResults(const std::string &prefix, std::vector<std::string> lines) {
  std::stable_sort(lines.begin(), lines.end(),
                   [](const std::string &a, const std::string &b) { return sortKey(a) < sortKey(b); });
  std::string jsonl, csv = "experiment,sweep,point,workload,feasible,reason,gpus,peak_bytes,capacity_bytes,"
                           "step_time_s,mfu,tokens_per_s,compute_s,exposed_communication_s,pipeline_bubble_s,"
                           "ttft_s,itl_s,total_s\n";
  for (const std::string &l : lines) {
    jsonl += l + "\n";
    csv += csvRow(l) + "\n";
  }
  if (llvm::Error e = writeFileAtomically(prefix + ".jsonl", jsonl)) return e;
  return writeFileAtomically(prefix + ".csv", csv);
}

} // namespace

llvm::Expected<std::vector<std::string>> runSweep(const std::vector<ExperimentPoint> &points,
                                                  const SweepOptions &opts) {
  std::string journalPath = opts.output.empty() ? "" : opts.output + ".jsonl.partial";
  std::map<std::string, std::string> done;
  if (opts.resume && !journalPath.empty()) done = readJournal(journalPath);
  std::vector<std::string> lines(points.size());
  std::vector<size_t> todo;
  for (size_t i = 0; i < points.size(); ++i) {
    auto o = parse(resultJson(points[i], nullptr));
    auto it = o ? done.find(keyOf(*o)) : done.end();
    if (it != done.end()) lines[i] = it->second;
    else todo.push_back(i);
  }
  std::unique_ptr<llvm::raw_fd_ostream> journal;
  if (!journalPath.empty()) {
    std::error_code ec;
    journal = std::make_unique<llvm::raw_fd_ostream>(journalPath, ec, opts.resume ? llvm::sys::fs::OF_Append
                                                                                    : llvm::sys::fs::OF_None);
    if (ec) return llvm::createStringError(ec, "cannot write '%s': %s", journalPath.c_str(), ec.message().c_str());
  }
  std::mutex mu;
  std::atomic<size_t> next{0};
  size_t finished = 0;
  std::optional<llvm::Error> failure;
  auto worker = [&] {
    for (size_t t; (t = next++) < todo.size();) {
      size_t i = todo[t];
      const ExperimentPoint &p = points[i];
      std::optional<RunResult> r;
      if (p.feasible) {
        RunOptions ro;
        ro.mode = opts.mode;
        ro.jobs = todo.size() == 1 ? opts.jobs : 1; // one point: its fault samples in parallel
        if (i == opts.timelinePoint) ro.timeline = opts.timeline;
        llvm::Expected<RunResult> res = runPoint(p, ro);
        if (!res) {
          std::lock_guard<std::mutex> lock(mu);
          if (!failure) failure = llvm::createStringError(std::errc::invalid_argument, "%s: %s", p.experiment.c_str(),
                                                          llvm::toString(res.takeError()).c_str());
          else llvm::consumeError(res.takeError());
          continue;
        }
        r = std::move(*res);
      }
      std::string line = resultJson(p, r ? &*r : nullptr);
      std::lock_guard<std::mutex> lock(mu);
      lines[i] = line;
      if (journal) { *journal << line << "\n"; journal->flush(); }
      if (opts.progress) llvm::errs() << fmt::format("\r[{}/{}] points", ++finished, todo.size());
    }
  };
  std::vector<std::thread> pool;
  for (unsigned j = 1; j < std::max(1u, opts.jobs); ++j) pool.emplace_back(worker);
  worker();
  for (std::thread &t : pool) t.join();
  if (opts.progress && !todo.empty()) llvm::errs() << "\n";
  if (failure) return std::move(*failure);
  if (!opts.output.empty())
    if (llvm::Error e = writeResults(opts.output, lines)) return e;
  return lines;
}

} // namespace rapid
