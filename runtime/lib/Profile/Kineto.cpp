//===- Kineto.cpp - PyTorch profiler (Kineto) trace reader ----------------===//
//
// llvm::json reads the whole document; the traces this is for are a few MB
// per rank (4 MB for a 600 ms Megatron step), so a DOM costs little and keeps
// the reader one pass over an array.
//===----------------------------------------------------------------------===//

#include "rapid/Profile/Kineto.h"

#include "KinetoArgs.h"
#include "rapid/Profile/ExecGraph.h"
#include "rapid/Support/Files.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <zlib.h>

namespace rapid::profile {

using llvm::json::Object;
using llvm::json::Value;


llvm::Expected<std::string> readMaybeGzip(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf)
    return fileError(path, "cannot read: " + buf.getError().message());
  llvm::StringRef in = (*buf)->getBuffer();
  if (!(in.size() >= 2 && uint8_t(in[0]) == 0x1f && uint8_t(in[1]) == 0x8b))
    return in.str();
  z_stream zs{};
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK) // 16: expect a gzip header
    return fileError(path, "cannot start gzip decompression");
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in.data()));
  zs.avail_in = uInt(in.size());
  std::string out;
  char chunk[1 << 16];
  int rc = Z_OK;
  while (rc == Z_OK) {
    zs.next_out = reinterpret_cast<Bytef *>(chunk);
    zs.avail_out = sizeof chunk;
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - zs.avail_out);
    if (rc == Z_BUF_ERROR && zs.avail_in == 0)
      break; // input ended before the stream did
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END)
    return fileError(path, fmt::format("truncated or corrupt gzip data ({} bytes inflated)", out.size()));
  return out;
}

namespace {
using namespace args;

/// A number that may be written as an integer or with a fraction (us).
struct Micros {
  int64_t whole = 0; ///< used when exact
  double value = 0;
  bool exact = false;
};

/// Timestamps are epoch microseconds (1.7e15 in 2024): up to 2^53, where a
/// double still holds every integer.
constexpr double kMaxMicros = 9007199254740992.0;
/// Durations and distances from the step: up to 10^12 us (11.6 days), so
/// that nanoseconds and their sums stay far inside int64.
constexpr double kMaxSpanMicros = 1e12;

std::optional<Micros> micros(const Object &o, llvm::StringRef key) {
  const Value *v = o.get(key);
  if (!v) return std::nullopt;
  if (auto i = v->getAsInteger(); i && std::abs(double(*i)) <= kMaxMicros) return Micros{*i, double(*i), true};
  if (auto d = v->getAsNumber(); d && std::isfinite(*d) && std::abs(*d) <= kMaxMicros)
    return Micros{0, *d, false};
  return std::nullopt;
}

/// Nanoseconds from `from` to `t`; integer microseconds stay exact.
int64_t nsBetween(const Micros &from, const Micros &t) {
  if (from.exact && t.exact) return (t.whole - from.whole) * 1000;
  return std::llround((t.value - from.value) * 1000.0);
}

int64_t intOr(const Object *o, llvm::StringRef key, int64_t dflt) {
  if (!o) return dflt;
  if (const Value *v = o->get(key))
    if (auto i = v->getAsInteger()) return *i;
  return dflt;
}

bool isStep(llvm::StringRef name) { return name.starts_with("ProfilerStep#"); }

/// Megatron-LM's tensor-parallel autograd functions by their cpu_op names
/// (megatron/core/tensor_parallel/{layers,mappings,cross_entropy}.py).
std::optional<TpMarker::Kind> tpMarkerKind(llvm::StringRef name) {
  using K = TpMarker::Kind;
  if (name == "LinearWithGradAccumulationAndAsyncCommunication") return K::Linear;
  if (name == "_ReduceFromModelParallelRegion") return K::Reduce;
  if (name == "_ReduceScatterToSequenceParallelRegion") return K::ReduceScatter;
  if (name == "_ScatterToSequenceParallelRegion") return K::SequenceScatter;
  if (name == "_GatherFromSequenceParallelRegion") return K::SequenceGather;
  if (name == "_VocabParallelCrossEntropy") return K::VocabCrossEntropy;
  if (name.ends_with("SequenceParallelRegion")) return K::SequenceParallel;
  if (name.starts_with("Optimizer.step#")) return K::Optimizer;
  return std::nullopt;
}

/// Spans on host threads and what each stands for: for a call, the
/// innermost span holding it, the one starting last among those that do.
class Spans {
public:
  void add(int64_t lane, int64_t startNs, int64_t endNs, int32_t id) { spans.push_back({lane, startNs, endNs, id}); }
  void sort() {
    std::sort(spans.begin(), spans.end(),
              [](const Span &a, const Span &b) { return std::tie(a.lane, a.startNs) < std::tie(b.lane, b.startNs); });
  }
  /// The id of the innermost span around `at` on `lane`; -1: none.
  int32_t around(int64_t lane, int64_t at) const {
    auto it = std::upper_bound(spans.begin(), spans.end(), std::pair{lane, at},
                               [](const std::pair<int64_t, int64_t> &k, const Span &s) {
                                 return k < std::pair{s.lane, s.startNs};
                               });
    while (it != spans.begin()) {
      --it;
      if (it->lane != lane) break;
      if (it->endNs >= at) return it->id;
    }
    return -1;
  }

private:
  struct Span {
    int64_t lane, startNs, endNs;
    int32_t id;
  };
  std::vector<Span> spans;
};

class Reader {
public:
  Reader(KinetoTrace &t, const ReadOptions &opts) : t(t), opts(opts) {}

  llvm::Error read(const Object &top) {
    if (const Object *d = top.getObject("distributedInfo")) {
      t.rank = int(intOr(d, "rank", -1));
      t.worldSize = int(intOr(d, "world_size", 0));
      if (auto b = d->getString("backend")) t.backend = b->str();
    }
    if (const llvm::json::Array *props = top.getArray("deviceProperties"))
      if (!props->empty())
        if (const Object *p = props->front().getAsObject())
          if (auto n = p->getString("name")) t.gpu = n->str();
    const llvm::json::Array *events = top.getArray("traceEvents");
    if (!events)
      return fileError(t.file, "no 'traceEvents' array: not a Chrome/Kineto trace");
    if (auto err = findStep(*events)) return err;
    for (size_t i = 0; i < events->size(); ++i)
      if (auto err = classify((*events)[i], uint32_t(i))) return err;
    keepLaunched();
    auto byLane = [](const Event &a, const Event &b) {
      return std::tie(a.lane, a.startNs, a.index) < std::tie(b.lane, b.startNs, b.index);
    };
    std::sort(t.host.begin(), t.host.end(), byLane);
    std::sort(t.device.begin(), t.device.end(), byLane);
    batchPeers();
    return llvm::Error::success();
  }

private:
  llvm::Error eventError(uint32_t i, llvm::StringRef name, const std::string &what) {
    return fileError(t.file, fmt::format("event {} ('{}'): {}", i, name.take_front(60), what));
  }

  /// The step: the annotation named by the options, else the earliest.
  llvm::Error findStep(const llvm::json::Array &events) {
    std::vector<std::string> seen;
    bool found = false;
    for (size_t i = 0; i < events.size(); ++i) {
      const Object *o = events[i].getAsObject();
      auto name = o ? o->getString("name") : std::nullopt;
      if (!name || !isStep(*name) || o->getString("ph") != llvm::StringRef("X")) continue;
      seen.push_back(name->str());
      bool wanted = opts.step.empty() ? true
                                      : *name == opts.step || name->drop_front(13) == opts.step;
      auto ts = micros(*o, "ts"), dur = micros(*o, "dur");
      if (!ts || !dur || dur->value < 0 || dur->value > kMaxSpanMicros)
        return eventError(uint32_t(i), *name, "a step annotation needs a 'ts' and a 'dur' from 0 to 1e12 us");
      if (!wanted || (found && ts->value >= stepTs.value)) continue;
      found = true;
      t.step = name->str();
      stepTs = *ts;
      t.stepStartUs = ts->exact ? ts->whole : int64_t(std::floor(ts->value));
      t.stepNs = nsBetween(Micros{0, 0, true}, *dur);
      stepPid = idText(o->get("pid"));
      t.mainThread = intOr(o, "tid", 0);
    }
    if (found) return llvm::Error::success();
    if (seen.empty())
      return fileError(t.file, "no 'ProfilerStep#N' annotation: profile with torch.profiler and call "
                               "prof.step() once per iteration");
    std::sort(seen.begin(), seen.end());
    return fileError(t.file, fmt::format("no step '{}'; the trace has {}", opts.step, fmt::join(seen, ", ")));
  }

  /// The process group and sizes the profiler recorded on a collective's
  /// record_param_comms or NCCL kernel, where it did (recent releases).
  llvm::Error readComm(const Object *args, uint32_t i, llvm::StringRef name, Event &e) {
    if (!args) return llvm::Error::success();
    const Value *ranksArg = args->get("Process Group Ranks");
    auto pgName = idText(args->get("Process Group Name"));
    auto collective = args->getString("Collective name");
    if (!ranksArg && pgName.empty() && !collective) return llvm::Error::success();
    CommInfo c;
    if (collective) c.collective = collective->str();
    auto size = integerArg(*args, "Group size");
    if (ranksArg || !pgName.empty()) {
      ProcessGroup g;
      g.name = pgName;
      g.desc = args->getString("Process Group Description").value_or("").str();
      if (ranksArg) {
        auto ranks = groupRanks(*ranksArg, size.value_or(0));
        if (!ranks)
          return eventError(i, name, "'Process Group Ranks' is not a list of ranks such as \"[0, 1, 2, 3]\"");
        if (size && !ranks->empty() && *size != int64_t(ranks->size()))
          return eventError(i, name, fmt::format("'Group size' is {} but 'Process Group Ranks' lists {} ranks", *size,
                                                 ranks->size()));
        g.ranks = std::move(*ranks);
      }
      auto key = std::tuple{g.name, g.desc, g.ranks};
      auto [it, fresh] = groupIds.try_emplace(key, int32_t(t.groups.size()));
      if (fresh) t.groups.push_back(std::move(g));
      c.group = it->second;
    }
    auto nelems = integerArg(*args, "In msg nelems");
    int64_t width = scalarTypeBytes(args->getString("dtype").value_or(""));
    if (nelems && *nelems >= 0 && *nelems <= (int64_t(1) << 50) && width > 0) c.bytes = *nelems * width;
    llvm::StringRef peerKey = c.collective == "send" ? "Dst Rank" : c.collective == "recv" ? "Src Rank" : "";
    if (!peerKey.empty())
      if (auto peer = integerArg(*args, peerKey); peer && *peer >= 0 && *peer < kMaxRank) c.peer = int(*peer);
    e.comm = int32_t(t.comms.size());
    t.comms.push_back(std::move(c));
    return llvm::Error::success();
  }

  uint32_t intern(llvm::StringRef s) {
    auto [it, fresh] = nameIds.try_emplace(s.str(), uint32_t(t.names.size()));
    if (fresh) t.names.push_back(s.str());
    return it->second;
  }

  void skip(llvm::StringRef what) { ++t.skipped[what.str()]; }

  llvm::Error classify(const Value &v, uint32_t i) {
    const Object *o = v.getAsObject();
    if (!o) return fileError(t.file, fmt::format("event {}: not an object", i));
    llvm::StringRef ph = o->getString("ph").value_or("");
    llvm::StringRef cat = o->getString("cat").value_or("");
    llvm::StringRef name = o->getString("name").value_or("");
    if (ph != "X") {
      skip(cat.empty() ? ("ph=" + ph).str() : cat.str());
      return llvm::Error::success();
    }
    auto ts = micros(*o, "ts"), dur = micros(*o, "dur");
    if (!ts) return eventError(i, name, "no numeric 'ts' (epoch microseconds)");
    if (!dur || dur->value < 0) return eventError(i, name, "no non-negative numeric 'dur'");
    if (dur->value > kMaxSpanMicros || std::abs(ts->value - stepTs.value) > kMaxSpanMicros)
      return eventError(i, name, "more than 1e12 us long or away from the step");
    const Object *args = o->getObject("args");
    Event e;
    e.index = i;
    e.startNs = nsBetween(stepTs, *ts);
    e.durNs = nsBetween(Micros{0, 0, true}, *dur);
    e.correlation = intOr(args, "correlation", -1);
    bool device = cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset";
    if (device) {
      if (e.correlation < 0) return eventError(i, name, "device work without 'args.correlation'");
      if (auto err = readComm(args, i, name, e)) return err;
      e.kind = cat == "kernel" ? EventKind::Kernel : cat == "gpu_memcpy" ? EventKind::Memcpy : EventKind::Memset;
      e.lane = intOr(args, "stream", intOr(o, "tid", 0));
      e.name = intern(name);
      pendingDevice.push_back(e);
      return llvm::Error::success();
    }
    if (e.startNs == 0 && name == t.step) return llvm::Error::success(); // the step itself
    bool inStep = idText(o->get("pid")) == stepPid && e.startNs >= 0 && e.startNs <= t.stepNs;
    bool runtime = cat == "cuda_runtime" || cat == "cuda_driver";
    bool annotation = (cat == "user_annotation" || cat == "cpu_op") && name.starts_with("nccl:");
    if (inStep && cat == "cpu_op" && name == "record_param_comms") {
      if (auto err = readComm(args, i, name, e)) return err;
      annotation = e.comm >= 0;
    }
    if (inStep && cat == "cpu_op")
      if (auto op = name.starts_with("aten::_scaled_dot") ? attention(name, args) : matmul(name, args)) {
        op->lane = intOr(o, "tid", 0), op->startNs = e.startNs, op->endNs = e.endNs();
        t.ops.push_back(std::move(*op));
        return llvm::Error::success();
      }
    // Read by a tensor-parallel what-if only: still counted as not used.
    if (inStep && (cat == "cpu_op" || cat == "user_annotation"))
      if (auto kind = tpMarkerKind(name)) t.tpMarkers.push_back({*kind, intOr(o, "tid", 0), e.startNs, e.endNs()});
    if (inStep && cat == "cpu_op")
      if (int64_t seq = intOr(args, "Sequence number", -1); seq >= 0)
        t.autograd.push_back({intOr(o, "tid", 0), e.startNs, e.endNs(), seq, intOr(args, "Fwd thread id", 0),
                              name.starts_with("autograd::engine::evaluate_function")});
    if (!inStep || !(runtime || annotation)) {
      skip(inStep || isStep(name) ? cat : "host event outside the step");
      return llvm::Error::success();
    }
    e.kind = runtime ? EventKind::Runtime : EventKind::Annotation;
    if (annotation) e.bytes = collectiveBytes(args);
    e.lane = intOr(o, "tid", 0);
    e.name = intern(name);
    t.host.push_back(e);
    return llvm::Error::success();
  }

  /// Device work belongs to the step when a call inside it launched it; it
  /// was a shaped op's when that op's span holds the call, and a named
  /// collective's when a record_param_comms naming it does (unless the
  /// kernel's own args named it).
  void keepLaunched() {
    std::sort(t.tpMarkers.begin(), t.tpMarkers.end(),
              [](const TpMarker &a, const TpMarker &b) { return std::tie(a.lane, a.startNs) < std::tie(b.lane, b.startNs); });
    std::sort(t.autograd.begin(), t.autograd.end(),
              [](const AutogradOp &a, const AutogradOp &b) { return std::tie(a.lane, a.startNs) < std::tie(b.lane, b.startNs); });
    std::sort(t.ops.begin(), t.ops.end(),
              [](const ShapedOp &a, const ShapedOp &b) { return std::tie(a.lane, a.startNs) < std::tie(b.lane, b.startNs); });
    Spans ops, comms;
    for (size_t i = 0; i < t.ops.size(); ++i) ops.add(t.ops[i].lane, t.ops[i].startNs, t.ops[i].endNs, int32_t(i));
    for (const Event &e : t.host)
      if (e.kind == EventKind::Annotation && e.comm >= 0) comms.add(e.lane, e.startNs, e.endNs(), e.comm);
    ops.sort(), comms.sort();
    std::unordered_map<int64_t, std::pair<int32_t, int32_t>> ofCall; // correlation -> (op, comm)
    for (const Event &c : t.host)
      if (c.kind == EventKind::Runtime)
        ofCall[c.correlation] = {ops.around(c.lane, c.startNs), comms.around(c.lane, c.startNs)};
    for (Event e : pendingDevice) {
      auto call = ofCall.find(e.correlation);
      if (call == ofCall.end()) {
        skip("device work launched outside the step");
        continue;
      }
      auto [op, comm] = call->second;
      e.op = op;
      if (e.comm < 0) e.comm = comm;
      t.device.push_back(e);
    }
  }

  /// torch.distributed.batch_isend_irecv records each send and receive
  /// (with its peer) and launches nothing until the batch ends, when one
  /// SendRecv kernel carries them all: a SendRecv kernel that names no peer
  /// of its own carries those recorded on its thread since the thread's
  /// previous NCCL launch.
  void batchPeers() {
    std::unordered_map<int64_t, size_t> byCorrelation;
    for (size_t i = 0; i < t.device.size(); ++i) byCorrelation[t.device[i].correlation] = i;
    std::unordered_map<int64_t, std::vector<int32_t>> pending; // per thread
    for (const Event &e : t.host) { // by (thread, start): a record before the launch inside it
      if (e.kind == EventKind::Annotation && e.comm >= 0 && t.comms[size_t(e.comm)].peer >= 0) {
        pending[e.lane].push_back(e.comm);
        continue;
      }
      auto d = e.kind == EventKind::Runtime ? byCorrelation.find(e.correlation) : byCorrelation.end();
      if (d == byCorrelation.end()) continue;
      Event &k = t.device[d->second];
      llvm::StringRef name = t.name(k);
      if (k.kind != EventKind::Kernel || !isNcclKernel(name)) continue;
      std::vector<int32_t> &ops = pending[e.lane];
      bool own = k.comm >= 0 && t.comms[size_t(k.comm)].peer >= 0;
      if (!own && !ops.empty() && name.contains("SendRecv")) {
        k.batch = int32_t(t.peerBatches.size());
        t.peerBatches.push_back(ops);
      }
      ops.clear();
    }
  }

  KinetoTrace &t;
  const ReadOptions &opts;
  Micros stepTs;
  std::string stepPid;
  std::unordered_map<std::string, uint32_t> nameIds;
  std::map<std::tuple<std::string, std::string, std::vector<int>>, int32_t> groupIds;
  std::vector<Event> pendingDevice;
};

} // namespace

llvm::Expected<KinetoTrace> readKineto(const std::string &path, const ReadOptions &opts) {
  auto text = readMaybeGzip(path);
  if (!text) return text.takeError();
  return parseKineto(path, *text, opts);
}

llvm::Expected<KinetoTrace> parseKineto(const std::string &path, llvm::StringRef text, const ReadOptions &opts) {
  auto doc = llvm::json::parse(text);
  if (!doc)
    return fileError(path, "invalid JSON: " + llvm::toString(doc.takeError()));
  const Object *top = doc->getAsObject();
  if (!top)
    return fileError(path, "the top level is not a JSON object: not a Chrome/Kineto trace");
  return readKinetoDocument(path, *top, opts);
}

llvm::Expected<KinetoTrace> readKinetoDocument(const std::string &path, const Object &top, const ReadOptions &opts) {
  KinetoTrace t;
  t.file = path;
  Reader r(t, opts);
  if (auto err = r.read(top)) return err;
  return t;
}

} // namespace rapid::profile
