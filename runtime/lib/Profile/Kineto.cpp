//===- Kineto.cpp - PyTorch profiler (Kineto) trace reader ----------------===//
//
// llvm::json reads the whole document; the traces this is for are a few MB
// per rank (4 MB for a 600 ms Megatron step), so a DOM costs little and keeps
// the reader one pass over an array.
//===----------------------------------------------------------------------===//

#include "rapid/Profile/Kineto.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <zlib.h>

namespace rapid::profile {

using llvm::json::Object;
using llvm::json::Value;

static llvm::Error fileError(const std::string &file, const std::string &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), fmt::format("{}: {}", file, what));
}

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

/// pid/tid are numbers in Kineto, strings for its synthetic rows ("Spans").
std::string idText(const Object &o, llvm::StringRef key) {
  const Value *v = o.get(key);
  if (!v) return "";
  if (auto i = v->getAsInteger()) return std::to_string(*i);
  if (auto s = v->getAsString()) return s->str();
  return "";
}

bool isStep(llvm::StringRef name) { return name.starts_with("ProfilerStep#"); }

/// Bytes per element of the C++ type names the profiler records.
int64_t elementBytes(llvm::StringRef type) {
  static const std::pair<const char *, int64_t> table[] = {
      {"double", 8},         {"long int", 8},       {"c10::complex<float>", 8},
      {"float", 4},          {"int", 4},            {"unsigned int", 4},
      {"c10::Half", 2},      {"c10::BFloat16", 2},  {"short int", 2},
      {"signed char", 1},    {"unsigned char", 1},  {"bool", 1},
      {"c10::Float8_e4m3fn", 1}, {"c10::Float8_e5m2", 1}};
  for (auto [name, bytes] : table)
    if (type == name) return bytes;
  return -1;
}

/// Elements of a tensor's dims ([4, 2048]) or of a tensor list's
/// ([[4, 2048], [16]]); -1 when they are not numbers.
int64_t elements(const Value &dims) {
  const llvm::json::Array *a = dims.getAsArray();
  if (!a) return -1;
  bool list = !a->empty() && (*a)[0].getAsArray();
  int64_t total = list ? 0 : 1;
  for (const Value &v : *a) {
    int64_t n = list ? elements(v) : v.getAsInteger().value_or(-1);
    if (n < 0 || n > (int64_t(1) << 40)) return -1;
    total = list ? total + n : total * n;
    if (total > (int64_t(1) << 50)) return -1;
  }
  return total;
}

/// The dims of input `i` when it is a plain tensor ([4, 2048]).
std::optional<std::vector<int64_t>> tensorDims(const llvm::json::Array &dims, size_t i) {
  if (i >= dims.size()) return std::nullopt;
  const llvm::json::Array *a = dims[i].getAsArray();
  if (!a) return std::nullopt;
  std::vector<int64_t> out;
  for (const Value &v : *a) {
    auto n = v.getAsInteger();
    if (!n || *n <= 0 || *n > (int64_t(1) << 31)) return std::nullopt;
    out.push_back(*n);
  }
  return out;
}

/// aten::mm [[M,K],[K,N]], addmm [bias, [M,K], [K,N]], bmm [[B,M,K],[B,K,N]],
/// baddbmm [bias, [B,M,K], [B,K,N]]: the shapes the cost model needs.
std::optional<ShapedOp> matmul(llvm::StringRef name, const Object *args) {
  bool batched = name == "aten::bmm" || name == "aten::baddbmm";
  size_t first = name == "aten::addmm" || name == "aten::baddbmm" ? 1 : 0;
  if (!batched && name != "aten::mm" && name != "aten::addmm") return std::nullopt;
  const llvm::json::Array *dims = args ? args->getArray("Input Dims") : nullptr;
  const llvm::json::Array *types = args ? args->getArray("Input type") : nullptr;
  if (!dims || !types || types->size() <= first) return std::nullopt;
  auto a = tensorDims(*dims, first), b = tensorDims(*dims, first + 1);
  size_t rank = batched ? 3 : 2;
  if (!a || !b || a->size() != rank || b->size() != rank || (*a)[rank - 1] != (*b)[rank - 2]) return std::nullopt;
  ShapedOp op;
  if (batched) op.batch = (*a)[0];
  op.m = (*a)[rank - 2], op.k = (*a)[rank - 1], op.n = (*b)[rank - 1];
  op.type = (*types)[first].getAsString().value_or("").str();
  return op;
}

/// PyTorch's scaled-dot-product attention backends (native_functions.yaml):
/// where the query is among the inputs and where is_causal is among the
/// "Concrete Inputs". The key follows the query.
struct AttentionSignature {
  const char *name, *backend;
  bool backward;
  size_t query, causal;
};
constexpr AttentionSignature kAttentionOps[] = {
    {"aten::_scaled_dot_product_cudnn_attention", "cudnn", false, 0, 6},
    {"aten::_scaled_dot_product_cudnn_attention_backward", "cudnn", true, 1, 14},
    {"aten::_scaled_dot_product_flash_attention", "flash", false, 0, 4},
    {"aten::_scaled_dot_product_flash_attention_backward", "flash", true, 1, 11},
    {"aten::_scaled_dot_product_efficient_attention", "efficient", false, 0, 6},
    {"aten::_scaled_dot_product_efficient_attention_backward", "efficient", true, 1, 11},
};

/// A fused attention with its shapes and causality, when the op records
/// them (record_shapes=True) and the query and key agree on all but heads.
std::optional<ShapedOp> attention(llvm::StringRef name, const Object *args) {
  const AttentionSignature *sig = nullptr;
  for (const AttentionSignature &a : kAttentionOps)
    if (name == a.name) sig = &a;
  if (!sig || !args) return std::nullopt;
  const llvm::json::Array *dims = args->getArray("Input Dims");
  const llvm::json::Array *types = args->getArray("Input type");
  const llvm::json::Array *concrete = args->getArray("Concrete Inputs");
  if (!dims || !types || !concrete || types->size() <= sig->query || concrete->size() <= sig->causal)
    return std::nullopt;
  auto q = tensorDims(*dims, sig->query), k = tensorDims(*dims, sig->query + 1);
  auto causal = (*concrete)[sig->causal].getAsString();
  if (!q || !k || q->size() != 4 || k->size() != 4 || !causal || (*causal != "True" && *causal != "False"))
    return std::nullopt;
  if ((*q)[0] != (*k)[0] || (*q)[2] != (*k)[2] || (*q)[3] != (*k)[3] || (*q)[1] % (*k)[1] != 0)
    return std::nullopt; // cross-attention or a layout not [batch, heads, seq, head_dim]
  ShapedOp op;
  op.kind = ShapedOp::Kind::Attention;
  op.batch = (*q)[0], op.heads = (*q)[1], op.kvHeads = (*k)[1], op.seq = (*q)[2], op.headDim = (*q)[3];
  op.causal = *causal == "True";
  op.backward = sig->backward;
  op.backend = sig->backend;
  op.type = (*types)[sig->query].getAsString().value_or("").str();
  return op;
}

/// What a collective annotation says it moves: its first input.
int64_t collectiveBytes(const Object *args) {
  const llvm::json::Array *dims = args ? args->getArray("Input Dims") : nullptr;
  const llvm::json::Array *types = args ? args->getArray("Input type") : nullptr;
  if (!dims || !types || dims->empty() || types->empty()) return -1;
  auto type = (*types)[0].getAsString();
  int64_t n = elements((*dims)[0]), b = type ? elementBytes(*type) : -1;
  return n >= 0 && b > 0 ? n * b : -1;
}

/// Bytes per element of the ScalarType names record_param_comms writes as
/// "dtype" (c10::toString).
int64_t scalarTypeBytes(llvm::StringRef type) {
  static const std::pair<const char *, int64_t> table[] = {
      {"Double", 8}, {"Long", 8},  {"ComplexFloat", 8}, {"Float", 4},         {"Int", 4},
      {"Half", 2},   {"BFloat16", 2}, {"Short", 2},     {"Char", 1},          {"Byte", 1},
      {"Bool", 1},   {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}, {"Float8_e4m3fnuz", 1}, {"Float8_e5m2fnuz", 1}};
  for (auto [name, bytes] : table)
    if (type == name) return bytes;
  return -1;
}

/// An integer written as a number or as a string of one ("Group size").
std::optional<int64_t> integerArg(const Object &args, llvm::StringRef key) {
  const Value *v = args.get(key);
  if (!v) return std::nullopt;
  if (auto i = v->getAsInteger()) return *i;
  int64_t out = 0;
  if (auto s = v->getAsString(); s && !s->trim().getAsInteger(10, out)) return out;
  return std::nullopt;
}

constexpr int64_t kMaxRank = 1 << 20;

/// "Process Group Ranks": "[0, 1, 2, 3]" (a string, as Kineto writes it) or
/// an array. Past 30 ranks PyTorch writes the first ones, "...", and the
/// last: read where the first ones step evenly to the last in `size` ranks.
/// nullopt: not a list of ranks.
std::optional<std::vector<int>> groupRanks(const Value &v, int64_t size) {
  llvm::SmallVector<llvm::StringRef, 32> items;
  std::string text;
  if (auto s = v.getAsString()) {
    text = s->trim().str();
  } else if (const llvm::json::Array *a = v.getAsArray()) {
    for (const Value &x : *a) {
      auto i = x.getAsInteger();
      if (!i) return std::nullopt;
      text += (text.empty() ? "" : ",") + std::to_string(*i);
    }
    text = "[" + text + "]";
  } else {
    return std::nullopt;
  }
  llvm::StringRef body(text);
  if (!body.consume_front("[") || !body.consume_back("]")) return std::nullopt;
  body.split(items, ',', -1, /*KeepEmpty=*/false);
  std::vector<int64_t> head, tail;
  bool cut = false;
  for (llvm::StringRef item : items) {
    item = item.trim();
    if (item == "...") {
      if (cut) return std::nullopt;
      cut = true;
      continue;
    }
    int64_t r = 0;
    if (item.getAsInteger(10, r) || r < 0 || r >= kMaxRank) return std::nullopt;
    (cut ? tail : head).push_back(r);
  }
  std::vector<int> ranks;
  if (!cut) {
    ranks.assign(head.begin(), head.end());
  } else {
    // A cut list is read only where it can be nothing else.
    if (head.size() < 2 || tail.size() != 1 || size <= int64_t(head.size())) return std::vector<int>{};
    int64_t stride = head[1] - head[0];
    for (size_t i = 1; i < head.size(); ++i)
      if (stride <= 0 || head[i] - head[i - 1] != stride) return std::vector<int>{};
    if (head[0] + stride * (size - 1) != tail[0]) return std::vector<int>{};
    for (int64_t i = 0; i < size; ++i) ranks.push_back(int(head[0] + stride * i));
  }
  std::sort(ranks.begin(), ranks.end());
  if (std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end()) return std::nullopt;
  return ranks;
}

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
      stepPid = idText(*o, "pid");
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
    auto pgName = idText(*args, "Process Group Name");
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
    bool inStep = idText(*o, "pid") == stepPid && e.startNs >= 0 && e.startNs <= t.stepNs;
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
    if (!inStep || !(runtime || annotation)) {
      skip(inStep || isStep(name) ? cat : "host event outside the step");
      return llvm::Error::success();
    }
    e.kind = runtime ? EventKind::Runtime : EventKind::Annotation;
    if (annotation) e.bytes = collectiveBytes(args);
    e.lane = intOr(o, "tid", 0);
    e.name = intern(name);
    if (runtime) launched.insert(e.correlation);
    t.host.push_back(e);
    return llvm::Error::success();
  }

  /// Device work belongs to the step when a call inside it launched it; it
  /// was a shaped op's when that op's span holds the call.
  void keepLaunched() {
    std::sort(t.ops.begin(), t.ops.end(),
              [](const ShapedOp &a, const ShapedOp &b) { return std::tie(a.lane, a.startNs) < std::tie(b.lane, b.startNs); });
    std::unordered_map<int64_t, int32_t> opOfCall;
    for (const Event &c : t.host) {
      if (c.kind != EventKind::Runtime) continue;
      // The innermost op holding the call starts last among those that do.
      auto it = std::upper_bound(t.ops.begin(), t.ops.end(), std::pair{c.lane, c.startNs},
                                 [](const std::pair<int64_t, int64_t> &k, const ShapedOp &o) {
                                   return k < std::pair{o.lane, o.startNs};
                                 });
      while (it != t.ops.begin()) {
        --it;
        if (it->lane != c.lane) break;
        if (it->endNs >= c.startNs) {
          opOfCall[c.correlation] = int32_t(it - t.ops.begin());
          break;
        }
      }
    }
    for (Event e : pendingDevice) {
      if (!launched.count(e.correlation)) {
        skip("device work launched outside the step");
        continue;
      }
      if (auto op = opOfCall.find(e.correlation); op != opOfCall.end()) e.op = op->second;
      t.device.push_back(e);
    }
  }

  KinetoTrace &t;
  const ReadOptions &opts;
  Micros stepTs;
  std::string stepPid;
  std::unordered_map<std::string, uint32_t> nameIds;
  std::map<std::tuple<std::string, std::string, std::vector<int>>, int32_t> groupIds;
  std::unordered_set<int64_t> launched;
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
  KinetoTrace t;
  t.file = path;
  Reader r(t, opts);
  if (auto err = r.read(*top)) return err;
  return t;
}

} // namespace rapid::profile
