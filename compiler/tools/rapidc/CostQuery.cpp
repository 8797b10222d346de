//===- CostQuery.cpp - Parse and answer `rapidc --cost` queries -----------===//
//
// A query is a kind word and whitespace-separated words: `key=value` sizes,
// flags (`causal`, `naive`, `bwd`) and a dtype. Every word is consumed once;
// anything left over is an error that names it and what was expected.
//===----------------------------------------------------------------------===//
#include "CostQuery.h"

#include "rapid/Cost/Power.h"
#include "rapid/Spec/Specs.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

using namespace rapid::cost;

namespace rapid::costquery {
namespace {

/// The words of one query, with helpers that consume them.
class Words {
public:
  Words(const std::string &text, DiagnosticEngine &diags) : diags(diags) {
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::SplitString(text, parts); // any run of whitespace separates words
    for (llvm::StringRef p : parts) words.push_back(p.str());
  }
  bool empty() const { return words.empty(); }
  const std::string &peek() const { return words.front(); }
  std::string take() {
    std::string w = words.front();
    words.erase(words.begin());
    return w;
  }
  bool takeFlag(std::string_view flag) {
    for (auto it = words.begin(); it != words.end(); ++it)
      if (*it == flag) {
        words.erase(it);
        return true;
      }
    return false;
  }
  /// Whether `second` of two exclusive flags is present; nothing (after
  /// reporting) when both are.
  std::optional<bool> takeEither(const std::string &first, const std::string &second) {
    bool a = takeFlag(first), b = takeFlag(second);
    if (a && b) return fail("'" + first + "' and '" + second + "' exclude each other");
    return b;
  }
  /// `key=N` with N a positive whole number; `dflt` when absent and allowed.
  std::optional<int64_t> takeInt(std::string_view key, std::optional<int64_t> dflt = std::nullopt) {
    std::string prefix = std::string(key) + "=";
    for (auto it = words.begin(); it != words.end(); ++it) {
      if (!llvm::StringRef(*it).starts_with(prefix)) continue;
      std::string value = it->substr(prefix.size());
      words.erase(it);
      int64_t v = 0;
      if (llvm::StringRef(value).getAsInteger(10, v) || v <= 0)
        return fail("expected a positive whole number for '" + std::string(key) + "' but found '" + value + "'");
      return v;
    }
    if (dflt) return dflt;
    return fail("missing '" + std::string(key) + "=N'");
  }
  std::optional<DType> takeDType() {
    for (auto it = words.begin(); it != words.end(); ++it)
      if (auto t = parseDType(*it)) {
        words.erase(it);
        return t;
      }
    return DType::BF16;
  }
  /// Reports the first unconsumed word; true when there was none.
  bool finish(std::string_view expected) {
    if (words.empty()) return true;
    fail("unexpected '" + words.front() + "'; expected " + std::string(expected));
    return false;
  }
  std::nullopt_t fail(const std::string &msg) {
    diags.report(DiagID::BadCostQuery, {}, msg);
    return std::nullopt;
  }
private:
  std::vector<std::string> words;
  DiagnosticEngine &diags;
};

/// Whether the product of `sizes` reaches 2^62: the model multiplies them
/// in 64-bit integers, so larger shapes are refused rather than wrapped.
bool tooLarge(std::initializer_list<int64_t> sizes) {
  __int128 p = 1;
  for (int64_t v : sizes)
    if ((p *= v) >= (__int128(1) << 62)) return true;
  return false;
}

std::optional<Query> parseGemm(Words &w) {
  if (w.empty()) return w.fail("expected 'MxKxN' after 'gemm'");
  std::string dims = w.take();
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(dims).split(parts, 'x');
  GemmQuery q;
  int64_t *out[] = {&q.shape.m, &q.shape.k, &q.shape.n};
  if (parts.size() != 3) return w.fail("expected 'MxKxN' (three sizes) but found '" + dims + "'");
  for (int i = 0; i < 3; ++i)
    if (parts[i].getAsInteger(10, *out[i]) || *out[i] <= 0)
      return w.fail("expected a positive whole number in 'MxKxN' but found '" + parts[i].str() + "'");
  auto batch = w.takeInt("batch", 1);
  auto dt = w.takeDType();
  if (!batch || !w.finish("'batch=B' or a dtype (fp32, tf32, bf16, fp16, fp8)")) return std::nullopt;
  if (tooLarge({q.shape.m, q.shape.n, q.shape.k, *batch}))
    return w.fail("'" + dims + "' with batch=" + std::to_string(*batch) + " is too large (M*N*K*batch must be below 2^62)");
  q.shape.batch = *batch;
  q.shape.dtype = *dt;
  return q;
}

std::optional<Query> parseAttention(Words &w) {
  AttentionQuery q;
  auto b = w.takeInt("b"), s = b ? w.takeInt("s") : std::nullopt;
  auto h = s ? w.takeInt("heads") : std::nullopt, d = h ? w.takeInt("head_dim") : std::nullopt;
  auto kv = d ? w.takeInt("kv_heads", *h) : std::nullopt;
  if (!kv) return std::nullopt;
  if (*h % *kv != 0)
    return w.fail("'heads' (" + std::to_string(*h) + ") must be a multiple of 'kv_heads' (" +
                  std::to_string(*kv) + ")");
  if (tooLarge({*b, *h, *s, *s, *d}))
    return w.fail("b*heads*s*s*head_dim is too large (must be below 2^62)");
  bool causal = w.takeFlag("causal"), dropout = w.takeFlag("dropout");
  q.shape = {*b, *s, *h, *kv, *d, causal, dropout, *w.takeDType()};
  auto naive = w.takeEither("flash", "naive");
  auto bwd = naive ? w.takeEither("fwd", "bwd") : std::nullopt;
  if (!bwd) return std::nullopt;
  q.flash = !*naive;
  q.pass = *bwd ? Pass::Backward : Pass::Forward;
  if (!w.finish("kv_heads=K, causal, dropout, flash, naive, fwd, bwd or a dtype")) return std::nullopt;
  return q;
}

std::optional<Query> parsePointwise(Words &w) {
  PointwiseQuery q;
  std::string first = w.empty() ? "" : w.peek();
  if (llvm::StringRef(first).starts_with("bytes=") || llvm::StringRef(first).starts_with("flops=")) {
    auto bytes = w.takeInt("bytes"), flops = bytes ? w.takeInt("flops") : std::nullopt;
    if (!flops || !w.finish("only 'bytes=N flops=N'")) return std::nullopt;
    q.work = {Bytes(double(*bytes)), Flops(double(*flops)), 1};
    return q;
  }
  if (first.empty())
    return w.fail("expected 'bytes=N flops=N' or an op (" + std::string(pointwiseOpList()) + ") after 'pointwise'");
  q.op = parsePointwiseOp(first);
  if (!q.op)
    return w.fail("expected 'bytes=N flops=N' or an op (" + std::string(pointwiseOpList()) + ") but found '" +
                  first + "'");
  w.take();
  auto elements = w.takeInt("elements");
  if (!elements) return std::nullopt;
  q.elements = *elements;
  q.dtype = *w.takeDType();
  auto bwd = w.takeEither("fwd", "bwd");
  if (!bwd) return std::nullopt;
  q.pass = *bwd ? Pass::Backward : Pass::Forward;
  if (!w.finish("fwd, bwd or a dtype")) return std::nullopt;
  q.work = pointwiseWork(*q.op, q.elements, q.dtype, q.pass);
  return q;
}

bool fileExists(const std::string &p) { return llvm::sys::fs::exists(p); }

/// Whether `import std.gpus` would find a file: -I DIR/std first, then the
/// standard library folder (docs/language.md, imports).
/// Whether the standard library has `std.NAME` (gpus, stacks).
bool haveStd(const SemaOptions &o, const std::string &name) {
  for (const std::string &dir : o.includeDirs)
    if (fileExists(dir + "/std/" + name + ".rapid")) return true;
  return fileExists(o.stdlibDir + "/" + name + ".rapid");
}

} // namespace

std::optional<Query> parseQuery(const std::string &text, DiagnosticEngine &diags) {
  Words w(text, diags);
  if (w.empty()) return w.fail("empty query; expected 'gemm', 'attention' or 'pointwise'");
  std::string kind = w.take();
  if (kind == "gemm") return parseGemm(w);
  if (kind == "attention") return parseAttention(w);
  if (kind == "pointwise") return parsePointwise(w);
  return w.fail("expected 'gemm', 'attention' or 'pointwise' but found '" + kind + "'");
}

std::optional<GpuSpec> resolveGpu(const CostOptions &o, DiagnosticEngine &diags) {
  if (o.hardware.empty()) {
    diags.report(DiagID::BadOption, {}, "--cost needs --hardware NAME (a gpu declaration)");
    return std::nullopt;
  }
  std::vector<std::string> imports;
  if (haveStd(o.sema, "gpus")) imports.push_back("std.gpus");
  imports.insert(imports.end(), o.files.begin(), o.files.end());
  // Kernel tables time each kernel back to back (20 in a graph): the
  // tensor cores busy all the time, the clock the power limit allows there.
  std::optional<GpuSpec> g = rapid::resolveGpu(o.hardware, imports, o.sema, diags);
  if (g) *g = cost::atDuty(*g, 1.0);
  return g;
}

std::optional<size_t> column(const llvm::SmallVectorImpl<llvm::StringRef> &header, llvm::StringRef name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i].trim() == name) return i;
  return std::nullopt;
}

double Errors::median() const {
  std::vector<double> v = abs;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::optional<StackSpec> resolveStack(const CostOptions &o, DiagnosticEngine &diags) {
  std::vector<std::string> imports;
  if (haveStd(o.sema, "stacks")) imports.push_back("std.stacks");
  imports.insert(imports.end(), o.files.begin(), o.files.end());
  return rapid::resolveStack(o.stack, imports, o.sema, diags);
}

} // namespace rapid::costquery

namespace rapid {

int runCostQuery(const CostOptions &o, DiagnosticEngine &diags) {
  using namespace costquery;
  std::optional<Query> q = parseQuery(o.query, diags);
  if (!q) return 1;
  std::optional<GpuSpec> g = resolveGpu(o, diags);
  if (!g) return 1;
  std::optional<StackSpec> stack = resolveStack(o, diags);
  if (!stack) return 1;
  Seconds launch = cost::launchCost(*stack, /*decodeStep=*/false);
  llvm::raw_ostream &os = llvm::outs();
  if (auto *gq = std::get_if<GemmQuery>(&*q)) {
    GemmCost c = gemmCost(*g, gq->shape);
    static_cast<KernelCost &>(c) = launched(c, launch);
    if (c.ctasPerSm == 0) {
      diags.report(DiagID::NoKernelFits, {}, "GEMM", g->name, "no CTA tile fits its registers and shared memory");
      return 1;
    }
    printGemm(o.query, *g, c, o.json, os);
  } else if (auto *aq = std::get_if<AttentionQuery>(&*q)) {
    aq->shape.kernel = stack->attention; // `flash` is the stack's fused kernel
    AttentionCost c = aq->flash ? flashAttention(*g, aq->shape, aq->pass) : naiveAttention(*g, aq->shape, aq->pass);
    static_cast<KernelCost &>(c) = launched(c, launch);
    if (aq->flash && c.blockQ == 0) {
      if (aq->shape.kernel == AttentionKernel::Flash3 && !flash3Runs(*g))
        diags.report(DiagID::BadOption, {}, flashAttentionProblem(*g, aq->shape.headDim, aq->shape.dtype, aq->shape.kernel));
      else
        diags.report(DiagID::NoKernelFits, {}, "FlashAttention", g->name,
                     fmt::format("head_dim={} does not fit on chip; try 'naive'", aq->shape.headDim));
      return 1;
    }
    printAttention(o.query, *g, *aq, c, o.json, os);
  } else {
    const PointwiseQuery &pq = std::get<PointwiseQuery>(*q);
    RowReduction r = pq.op ? rowReduction(*stack, *pq.op) : RowReduction{};
    printPointwise(o.query, *g, launched(pointwiseCost(*g, pq.work, r), launch), o.json, os);
  }
  return 0;
}

} // namespace rapid
