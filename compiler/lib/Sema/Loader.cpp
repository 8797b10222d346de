//===- Loader.cpp - Files, imports and the entry point --------------------===//
#include "SemaImpl.h"

#include "rapid/Parse/Parser.h"
#include "rapid/Support/Source.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace rapid {
std::optional<Program> analyze(const std::string &file, const SemaOptions &opts, DiagnosticEngine &diags) {
  return sema::Sema(opts, diags).run(file);
}

std::optional<GpuSpec> resolveGpu(const std::string &name, const std::vector<std::string> &imports,
                                  const SemaOptions &opts, DiagnosticEngine &diags) {
  std::optional<sema::FieldValues> f = sema::Sema(opts, diags).resolveNamed("gpu", name, imports);
  if (!f) return std::nullopt;
  GpuSpec g = sema::typedSpec<GpuSpec>(*f);
  g.name = name;
  return g;
}

std::optional<StackSpec> resolveStack(const std::string &name, const std::vector<std::string> &imports,
                                      const SemaOptions &opts, DiagnosticEngine &diags) {
  sema::Sema sema(opts, diags);
  std::optional<sema::FieldValues> f =
      name.empty() ? sema.defaultFields("stack", nullptr, "the default stack", {}) : sema.resolveNamed("stack", name, imports);
  if (!f || diags.hasErrors()) return std::nullopt;
  StackSpec s = sema::typedSpec<StackSpec>(*f);
  s.name = name;
  return s;
}
} // namespace rapid

namespace rapid::sema {
namespace {
/// Imports nest at most this deep (a file, what it imports, what that
/// imports, ...): real projects nest a few levels; the loader recurses.
constexpr size_t kMaxImportDepth = 64;
} // namespace

std::optional<Program> Sema::run(const std::string &file) {
  std::vector<std::string> stack;
  if (!load(file, {}, stack))
    return std::nullopt;
  declare();
  if (diags.hasErrors())
    return std::nullopt;
  applyOverrides();
  for (const auto &[name, d] : decls)
    buildRecord(*d);
  checkAllDecls();
  Program prog;
  std::set<std::string> swept;
  for (const auto &d : root->decls)
    if ((d->kind.name == "sweep" || d->kind.name == "search") && d->target)
      swept.insert(d->target->name);
  for (const auto &d : root->decls) {
    if (d->kind.name == "experiment" && !swept.count(d->name.name) && records.count(d->name.name))
      runExperiment(*d, prog.points);
    else if (d->kind.name == "sweep" || d->kind.name == "search")
      expandSweep(*d, prog.points);
  }
  if (diags.hasErrors())
    return std::nullopt;
  return prog;
}

bool Sema::load(const std::string &path, llvm::SMRange from, std::vector<std::string> &stack) {
  llvm::SmallString<256> real;
  if (std::error_code ec = llvm::sys::fs::real_path(path, real)) {
    diags.report(DiagID::CannotOpenFile, from, path, ec.message());
    return false;
  }
  std::string key(real);
  if (llvm::is_contained(stack, key)) {
    std::vector<std::string> names;
    for (auto it = llvm::find(stack, key); it != stack.end(); ++it)
      names.push_back(llvm::sys::path::filename(*it).str());
    names.push_back(llvm::sys::path::filename(key).str());
    diags.report(DiagID::ImportCycle, from, llvm::join(names, " -> "));
    return false;
  }
  if (loaded.count(key))
    return true;
  if (stack.size() >= kMaxImportDepth) {
    std::vector<std::string> names;
    for (const std::string &s : stack) names.push_back(llvm::sys::path::filename(s).str());
    names.erase(names.begin() + 2, names.end() - 2);
    names.insert(names.begin() + 2, "...");
    names.push_back(llvm::sys::path::filename(key).str());
    diags.report(DiagID::ImportTooDeep, from, kMaxImportDepth, llvm::join(names, " -> "));
    return false;
  }
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buf = readSourceFile(path);
  if (!buf) {
    diags.report(DiagID::CannotOpenFile, from, path, llvm::toString(buf.takeError()));
    return false;
  }
  return loadBuffer(std::move(*buf), path, key, from, stack);
}

bool Sema::loadBuffer(std::unique_ptr<llvm::MemoryBuffer> buf, const std::string &path, const std::string &key,
                      llvm::SMRange from, std::vector<std::string> &stack) {
  unsigned id = addSourceBuffer(diags.sourceMgr(), std::move(buf), from.Start);
  std::unique_ptr<ast::Module> module = parseModule(id, diags);
  if (!module)
    return false;
  module->path = path;
  module->bufferId = id;
  if (!importModelSources(*module, diags))
    return false;
  const ast::Module *m = module.get();
  loaded[key] = m;
  modules.push_back(std::move(module));
  if (!root)
    root = m;
  stack.push_back(key);
  bool ok = true;
  for (const ast::Import &imp : m->imports) {
    std::string found = findImport(imp, path);
    if (found.empty()) {
      ok = false;
      continue;
    }
    ok &= load(found, imp.range, stack);
  }
  stack.pop_back();
  return ok;
}

std::optional<FieldValues> Sema::resolveNamed(const std::string &kind, const std::string &name,
                                              const std::vector<std::string> &imports) {
  std::string text;
  for (const std::string &i : imports)
    text += i.find('/') != std::string::npos || llvm::StringRef(i).ends_with(".rapid")
                ? "import \"" + i + "\";\n"
                : "import " + i + ";\n";
  std::vector<std::string> stack;
  if (!loadBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "<query>"), "<query>", "<query>", {}, stack))
    return std::nullopt;
  declare();
  applyOverrides();
  const ast::Decl *d = findDecl(name);
  if (d) buildRecord(*d);
  const Record *r = record(name);
  if (!r || r->schema->kind != kind) {
    std::vector<std::string> same;
    for (const auto &[n, x] : decls)
      if (x->kind.name == kind) same.push_back(n);
    diags.report(DiagID::UnknownName, {}, kind, name, didYouMean(name, same));
    return std::nullopt;
  }
  FieldValues f = resolveFields(*r, nullptr);
  if (diags.hasErrors())
    return std::nullopt;
  return f;
}

std::string Sema::findImport(const ast::Import &imp, const std::string &fromFile) {
  llvm::StringRef dir = llvm::sys::path::parent_path(fromFile);
  std::string rel = imp.spelling;
  std::vector<std::string> dirs;
  if (imp.quoted && llvm::sys::path::is_absolute(rel)) {
    dirs.push_back(""); // an absolute path is looked up as written
  } else if (imp.quoted) {
    dirs.push_back(dir.empty() ? "." : dir.str());
  } else {
    llvm::StringRef s(imp.spelling);
    bool isStd = s.consume_front("std.");
    rel = s.str();
    std::replace(rel.begin(), rel.end(), '.', '/');
    rel += ".rapid";
    if (isStd) {
      for (const std::string &inc : opts.includeDirs)
        dirs.push_back(inc + "/std");
      dirs.push_back(opts.stdlibDir);
    } else {
      dirs.push_back(dir.empty() ? "." : dir.str());
    }
  }
  if (!imp.quoted || !dirs.empty())
    for (const std::string &inc : opts.includeDirs)
      if (!llvm::is_contained(dirs, inc)) dirs.push_back(inc);
  for (const std::string &d : dirs) {
    llvm::SmallString<256> p(d);
    llvm::sys::path::append(p, rel);
    if (llvm::sys::fs::exists(p)) // load() says if it is not a file it can read
      return std::string(p);
  }
  diags.report(DiagID::ImportNotFound, imp.range, imp.spelling, llvm::join(dirs, ", "));
  return "";
}

} // namespace rapid::sema
