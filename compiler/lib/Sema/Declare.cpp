//===- Declare.cpp - Names, derivation and field binding ------------------===//
//
// Every declaration becomes a Record: the fields of its base (recursively),
// then its own statements, then any `--set` for it. A derived declaration
// therefore overrides exactly what it writes: `gpu slow : h100 { ... }`.
//===----------------------------------------------------------------------===//
#include "SemaImpl.h"

#include "rapid/Parse/Parser.h"
#include "rapid/Support/Source.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"

namespace rapid::sema {

const ast::Decl *Sema::findDecl(const std::string &name) const {
  auto it = decls.find(name);
  return it == decls.end() ? nullptr : it->second;
}

const Record *Sema::record(const std::string &name) const {
  auto it = records.find(name);
  return it == records.end() ? nullptr : &it->second;
}

void Sema::declare() {
  for (const auto &m : modules)
    for (const auto &d : m->decls) {
      if (!schemaFor(d->kind.name)) {
        diags.report(DiagID::UnknownDeclKind, d->kind.range, d->kind.name, declKindList());
        continue;
      }
      auto [it, fresh] = decls.emplace(d->name.name, d.get());
      if (!fresh) {
        diags.report(DiagID::DuplicateDecl, d->name.range, d->kind.name, d->name.name);
        diags.report(DiagID::PreviousDefinition, it->second->name.range, d->name.name);
      }
    }
}

void Sema::applyOverrides() {
  llvm::SourceMgr &sm = diags.sourceMgr();
  for (const std::string &o : opts.overrides) {
    size_t eq = o.find('=');
    size_t dot = o.find('.');
    if (eq == std::string::npos || dot == std::string::npos || dot > eq) {
      diags.report(DiagID::BadOverride, {},
                   fmt::format("--set expects DECLARATION.FIELD=VALUE, as in 'h100.hbm.bandwidth=2 TB/s', but got '{}'", o));
      continue;
    }
    std::string declName = o.substr(0, dot);
    if (!findDecl(declName)) {
      std::vector<std::string> names;
      for (const auto &[n, d] : decls) names.push_back(n);
      diags.report(DiagID::BadOverride, {}, fmt::format("--set names no declaration '{}'{}", declName,
                                                        didYouMean(declName, names)));
      continue;
    }
    std::string field = o.substr(dot + 1, eq - dot - 1);
    // A link fault is named by its dimension and endpoints: `fast(0,1).derate`.
    static const llvm::Regex linkField("^([A-Za-z_][A-Za-z0-9_]*)\\( *([0-9]+) *, *([0-9]+) *\\)\\.(.+)$");
    llvm::SmallVector<llvm::StringRef, 5> match;
    std::vector<std::string> link(match.size());
    if (linkField.match(field, &match)) {
      link.assign(match.begin(), match.end());
      field = link[4];
    }
    std::string text = field + " = " + o.substr(eq + 1) + ";";
    unsigned id = addSourceBuffer(sm, llvm::MemoryBuffer::getMemBufferCopy(text, "<--set>"), {});
    ast::StmtPtr s = parseStatement(id, diags);
    if (s && !llvm::isa<ast::AssignStmt>(*s)) {
      diags.report(DiagID::BadOverride, s->getRange(), "--set takes one FIELD=VALUE");
      continue;
    }
    if (s && !link.empty()) {
      int64_t a = 0, b = 0;
      if (llvm::StringRef(link[2]).getAsInteger(10, a) || llvm::StringRef(link[3]).getAsInteger(10, b)) {
        diags.report(DiagID::BadOverride, s->getRange(), fmt::format("link endpoints out of range in '{}'", o));
        continue;
      }
      linkOverrides[declName].push_back({link[1], a, b, std::move(s)});
    } else if (s) {
      overrideStmts[declName].push_back(std::move(s));
    }
  }
}

void Sema::buildRecord(const ast::Decl &d) {
  if (records.count(d.name.name) || !schemaFor(d.kind.name))
    return;
  if (llvm::is_contained(building, &d)) {
    std::string chain;
    for (const ast::Decl *b : building) chain += "'" + b->name.name + "' -> ";
    diags.report(DiagID::DerivationCycle, d.name.range, d.name.name, chain + "'" + d.name.name + "'");
    return;
  }
  Record r;
  r.schema = schemaFor(d.kind.name);
  if (d.base) {
    const ast::Decl *base = findDecl(d.base->name);
    if (!base) {
      std::vector<std::string> same;
      for (const auto &[n, x] : decls)
        if (x->kind.name == d.kind.name) same.push_back(n);
      diags.report(DiagID::UnknownName, d.base->range, d.kind.name, d.base->name, didYouMean(d.base->name, same));
      return;
    }
    if (base->kind.name != d.kind.name) {
      diags.report(DiagID::WrongDeclKind, d.base->range, base->name.name, base->kind.name, d.kind.name);
      diags.report(DiagID::DeclaredHere, base->name.range, base->name.name);
      return;
    }
    // Each step down the chain is a stack frame, and real chains are a few
    // declarations long.
    constexpr size_t kMaxDerivationDepth = 256;
    if (building.size() >= kMaxDerivationDepth || tooDeep.count(base)) {
      if (tooDeep.empty())
        diags.report(DiagID::DerivationTooDeep, d.base->range, kMaxDerivationDepth, building.front()->name.name,
                     d.name.name, base->name.name);
      tooDeep.insert(&d);
      return;
    }
    building.push_back(&d);
    buildRecord(*base);
    building.pop_back();
    if (tooDeep.count(base))
      tooDeep.insert(&d);
    if (!records.count(base->name.name))
      return;
    r = records.at(base->name.name);
    r.mapsInherited = true;
  }
  bool expands = d.kind.name == "sweep" || d.kind.name == "search";
  if (d.target && !expands)
    diags.report(DiagID::BaseNotAllowed, d.target->range,
                 fmt::format("only a sweep or a search is declared 'over' an experiment"));
  r.decl = &d;
  if (expands) { // its body is read by expandSweep
    records.emplace(d.name.name, std::move(r));
    return;
  }
  Seen seen;
  addBody(r, d.body, "", seen);
  Seen fromCommandLine;
  for (const ast::StmtPtr &s : overrideStmts[d.name.name])
    bindOverride(r, llvm::cast<ast::AssignStmt>(*s), fromCommandLine);
  for (const LinkOverride &o : linkOverrides[d.name.name])
    bindLinkOverride(r, o);
  records.emplace(d.name.name, std::move(r));
}

void Sema::bindLinkOverride(Record &r, const LinkOverride &o) {
  const auto &a = llvm::cast<ast::AssignStmt>(*o.stmt);
  Evaluator ev(diags, [](const ast::NameExpr &) { return std::nullopt; });
  auto endpoint = [&](const ast::Expr &e) { Value v = ev.eval(e); return v.isNumber() ? int64_t(v.num()) : -1; };
  std::vector<std::string> names;
  for (Record::LinkFault &f : r.linkFaults) {
    int64_t x = endpoint(*f.stmt->a), y = endpoint(*f.stmt->b);
    names.push_back(fmt::format("{}({}, {})", f.stmt->dim.name, x, y));
    if (f.stmt->dim.name != o.dim || !((x == o.a && y == o.b) || (x == o.b && y == o.a))) continue;
    if (f.stmt->hard) {
      diags.report(DiagID::BadOverride, a.path.range, "a hard fault removes the link; it takes no fields");
      return;
    }
    Seen own;
    bind(f.fromCommandLine, linkFaultSchema(), "a link fault", a, "", own);
    return;
  }
  diags.report(DiagID::BadOverride, a.path.range,
               fmt::format("{} has no link fault {}({}, {}){}", noun(r), o.dim, o.a, o.b,
                           names.empty() ? std::string() : "; it has " + llvm::join(names, ", ")));
}

void Sema::bindOverride(Record &r, const ast::AssignStmt &a, Seen &seen) {
  const std::vector<std::string> &path = a.path.parts;
  if (path.size() > 1) {
    for (Record::Dim &dim : r.dims)
      if (dim.stmt->name.name == path[0]) {
        Seen own; // a command line value replaces the file's
        bindDimField(dim, a, path[0] + ".", own);
        return;
      }
    for (Record::Random &rnd : r.randoms)
      if (rnd.stmt->name && rnd.stmt->name->name == path[0]) {
        Seen own;
        bind(rnd.fields, randomFaultSchema(), "a random fault", a, "", own, nullptr, path[0].size() + 1);
        return;
      }
  }
  if (r.schema->kind == "topology" || r.schema->kind == "faults") {
    bool topology = r.schema->kind == "topology";
    std::vector<std::string> names;
    for (const Record::Dim &d : r.dims) names.push_back(d.stmt->name.name);
    for (const Record::Random &rnd : r.randoms)
      if (rnd.stmt->name) names.push_back(rnd.stmt->name->name);
    diags.report(DiagID::BadOverride, a.path.range,
                 fmt::format("{} has no {} '{}'{}", noun(r), topology ? "dimension" : "named random section", path[0],
                             path.size() > 1 ? didYouMean(path[0], names)
                                             : fmt::format("; set a field of one of its {} as '{}.NAME.FIELD=VALUE'",
                                                           topology ? "dimensions" : "random sections", r.name())));
    return;
  }
  bind(r.fields, *r.schema, noun(r), a, "", seen, &r.sections);
}

} // namespace rapid::sema
