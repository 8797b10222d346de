//===- ModelImport.cpp - `model m = hf("config.json");` -------------------===//
//
// A Hugging Face `config.json` becomes the assignments a hand-written model
// block would hold, placed ahead of the declaration's own block (whose
// fields win), so Sema checks them like any others and errors point at the
// `hf(...)` call. Local files only. Architectures are named, not guessed:
// each family's fixed traits (norm, position encoding, gated MLP, biases)
// come from its modeling code in Hugging Face Transformers, the sizes from
// the file; a key the model cannot describe is an error naming it, one it
// ignores a warning.
//===----------------------------------------------------------------------===//
#include "SemaImpl.h"

#include "rapid/Parse/Parser.h"
#include "rapid/Support/Source.h"
#include "rapid/Support/Units.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>
#include <set>

namespace rapid {
namespace {

/// What an architecture fixes, whatever its sizes.
struct Family {
  const char *architecture;
  const char *norm, *activation;
  bool bias;  ///< biases on every projection (GPT-NeoX)
  bool moe;   ///< Mixtral's sparse MLP: num_local_experts, num_experts_per_tok
};

constexpr Family kFamilies[] = {
    {"LlamaForCausalLM", "rmsnorm", "swiglu", false, false},
    {"MistralForCausalLM", "rmsnorm", "swiglu", false, false},
    {"MixtralForCausalLM", "rmsnorm", "swiglu", false, true},
    // Qwen2 adds a bias to Q, K and V only: three vectors per layer, left out.
    {"Qwen2ForCausalLM", "rmsnorm", "swiglu", false, false},
    {"GPTNeoXForCausalLM", "layernorm", "gelu", true, false},
};

/// The sizes a config gives: model field, config key, whether it must be
/// there (else the field's default), and whether only sparse models have it.
struct Size {
  const char *field, *key;
  bool required, moe;
};
constexpr Size kSizes[] = {
    {"layers", "num_hidden_layers", true, false},     {"hidden", "hidden_size", true, false},
    {"heads", "num_attention_heads", true, false},    {"ffn", "intermediate_size", true, false},
    {"vocab", "vocab_size", true, false},             {"max_seq", "max_position_embeddings", true, false},
    {"kv_heads", "num_key_value_heads", false, false}, {"head_dim", "head_dim", false, false},
    {"moe.experts", "num_local_experts", true, true}, {"moe.top_k", "num_experts_per_tok", true, true},
};

/// Keys of architectures rapid's model has no place for.
constexpr std::pair<const char *, const char *> kUndescribed[] = {
    {"kv_lora_rank", "multi-head latent attention (DeepSeek-V2/V3)"},
    {"n_shared_experts", "shared experts"},
    {"shared_expert_intermediate_size", "shared experts"},
};

class Importer {
public:
  Importer(ast::Decl &d, DiagnosticEngine &diags) : d(d), diags(diags), at(d.source->getRange()) {}

  bool run(const std::string &fromFile) {
    const ast::CallExpr &call = *d.source;
    if (d.kind.name != "model")
      return fail(fmt::format("only a model can take its fields from a file; a {} cannot", d.kind.name));
    if (call.callee.name != "hf")
      return fail(fmt::format("unknown source '{}'; expected hf(\"config.json\")", call.callee.name));
    const ast::StringExpr *file = call.args.size() == 1 && !call.args[0].key && call.args[0].shape.size() == 1
                                      ? llvm::dyn_cast<ast::StringExpr>(call.args[0].shape[0].get())
                                      : nullptr;
    if (!file) return fail("hf() takes one quoted path to a Hugging Face config.json");
    llvm::SmallString<256> path(file->value);
    if (llvm::sys::path::is_relative(path)) {
      path = llvm::sys::path::parent_path(fromFile);
      llvm::sys::path::append(path, file->value);
    }
    name = std::string(path);
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buf = readSourceFile(name);
    if (!buf) return fail(fmt::format("cannot open '{}': {}", name, llvm::toString(buf.takeError())));
    llvm::Expected<llvm::json::Value> doc = llvm::json::parse((*buf)->getBuffer());
    if (!doc) return fail(fmt::format("'{}' is not JSON: {}", name, llvm::toString(doc.takeError())));
    cfg = doc->getAsObject();
    if (!cfg) return fail(fmt::format("'{}' holds no JSON object", name));
    return translate();
  }

private:
  bool translate() {
    const llvm::json::Array *archs = cfg->getArray("architectures");
    std::optional<llvm::StringRef> arch = archs && !archs->empty() ? (*archs)[0].getAsString() : std::nullopt;
    if (!arch) return fail(fmt::format("'{}' has no 'architectures' list naming the model class", name));
    const Family *fam = nullptr;
    for (const Family &f : kFamilies)
      if (*arch == f.architecture) fam = &f;
    if (!fam) {
      std::string known;
      for (const Family &f : kFamilies) known += std::string(known.empty() ? "" : ", ") + f.architecture;
      return fail(fmt::format("'{}': architectures[0] is '{}', which rapid does not import (it knows {})", name,
                              arch->str(), known));
    }
    for (auto [key, what] : kUndescribed)
      if (cfg->get(key) && !cfg->get(key)->getAsNull())
        return fail(fmt::format("'{}': '{}' asks for {}, which rapid's model does not describe", name, key, what));
    bool ok = true; // every missing key is reported, not only the first
    for (const Size &k : kSizes)
      if (fam->moe || !k.moe) ok = whole(k.field, k.key, k.required) && ok;
    symbol("norm", fam->norm);
    symbol("activation", fam->activation);
    symbol("position", "rotary");
    symbol("bias", fam->bias ? "on" : "off");
    std::optional<bool> tied = cfg->getBoolean("tie_word_embeddings");
    symbol("tied_embeddings", tied.value_or(false) ? "on" : "off");
    if (std::optional<int64_t> w = cfg->getInteger("sliding_window"); w && cfg->getBoolean("use_sliding_window") != false)
      diags.report(DiagID::ModelSourceIgnored, at, name,
                   fmt::format("sliding_window = {} is ignored: attention is costed over the whole sequence", *w));
    if (!ok) return false;
    // The block's own fields win over the file's.
    std::set<std::string> own;
    for (const ast::StmtPtr &s : d.body.stmts)
      if (const auto *a = llvm::dyn_cast<ast::AssignStmt>(s.get())) own.insert(a->path.dotted());
    std::vector<ast::StmtPtr> stmts;
    for (auto &[field, value] : fields) {
      if (own.count(field)) continue;
      ast::Path p;
      llvm::SmallVector<llvm::StringRef, 2> parts;
      llvm::StringRef(field).split(parts, '.');
      for (llvm::StringRef part : parts) p.parts.push_back(part.str());
      p.range = at;
      std::vector<ast::ExprPtr> values;
      values.push_back(std::move(value));
      stmts.push_back(std::make_unique<ast::AssignStmt>(at, std::move(p), std::move(values)));
    }
    for (ast::StmtPtr &s : d.body.stmts) stmts.push_back(std::move(s));
    d.body.stmts = std::move(stmts);
    return true;
  }

  /// `field = <the file's key>;`, a whole number; absent: an error when
  /// `required`, else left to the field's default.
  bool whole(const char *field, const char *key, bool required = true) {
    const llvm::json::Value *v = cfg->get(key);
    if (!v || v->getAsNull()) {
      if (required) return fail(fmt::format("'{}' has no '{}' (the model's {})", name, key, field));
      return true;
    }
    std::optional<int64_t> n = v->getAsInteger();
    if (!n) return fail(fmt::format("'{}': '{}' must be a whole number", name, key));
    fields.push_back({field, std::make_unique<ast::NumberExpr>(at, double(*n), "", llvm::SMRange())});
    return true;
  }
  void symbol(const char *field, const char *value) {
    fields.push_back({field, std::make_unique<ast::NameExpr>(at, std::vector<std::string>{value})});
  }
  bool fail(const std::string &what) {
    diags.report(DiagID::ModelSourceError, at, what);
    return false;
  }

  ast::Decl &d;
  DiagnosticEngine &diags;
  llvm::SMRange at;
  std::string name;
  const llvm::json::Object *cfg = nullptr;
  std::vector<std::pair<std::string, ast::ExprPtr>> fields;
};

} // namespace

bool importModelSources(ast::Module &m, DiagnosticEngine &diags) {
  bool ok = true;
  for (std::unique_ptr<ast::Decl> &d : m.decls)
    if (d->source) ok &= Importer(*d, diags).run(m.path);
  return ok;
}

std::string modelDeclarationFrom(const std::string &configPath, const std::string &name, DiagnosticEngine &diags) {
  llvm::SmallString<256> abs(configPath);
  llvm::sys::fs::make_absolute(abs);
  std::string call = fmt::format("hf(\"{}\")", llvm::StringRef(abs).str());
  std::string text = fmt::format("model {} = {};\n", name, call);
  unsigned id = addSourceBuffer(diags.sourceMgr(), llvm::MemoryBuffer::getMemBufferCopy(text, "<--model-from>"), {});
  std::unique_ptr<ast::Module> m = parseModule(id, diags);
  if (!m || m->decls.size() != 1) return "";
  m->path = "<--model-from>";
  if (!importModelSources(*m, diags)) return "";
  std::string out = fmt::format("// {}, imported by rapidc --model-from\nmodel {} {{\n", configPath, name);
  for (const ast::StmtPtr &st : m->decls[0]->body.stmts) {
    const auto *a = llvm::cast<ast::AssignStmt>(st.get());
    const ast::Expr &v = *a->values[0];
    std::string value = llvm::isa<ast::NumberExpr>(v) ? formatNumber(llvm::cast<ast::NumberExpr>(v).value)
                                                      : llvm::cast<ast::NameExpr>(v).dotted();
    out += fmt::format("  {} = {};\n", a->path.dotted(), value);
  }
  return out + "}\n";
}

} // namespace rapid
