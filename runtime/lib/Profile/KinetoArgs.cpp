//===- KinetoArgs.cpp - What a Kineto event's args say --------------------===//

#include "KinetoArgs.h"

#include <algorithm>
#include <fmt/format.h>

namespace rapid::profile::args {

using llvm::json::Object;
using llvm::json::Value;

namespace {

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

} // namespace

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

std::string idText(const Value *v) {
  if (!v) return "";
  if (auto i = v->getAsInteger()) return std::to_string(*i);
  if (auto s = v->getAsString()) return s->str();
  return "";
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
    if (head.size() < 2 || tail.size() != 1 || size <= int64_t(head.size()) || size > kMaxRank)
      return std::vector<int>{};
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

} // namespace rapid::profile::args
