//===- Scope.cpp - Lazy, defaulted field evaluation -----------------------===//
//
// Fields are evaluated on first use, so a default or an expression may refer
// to any other field (`head_dim = hidden / heads`) in any order; a field that
// depends on itself is reported instead of looping.
//===----------------------------------------------------------------------===//
#include "SemaImpl.h"

#include "rapid/Parse/Parser.h"

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"

namespace rapid::sema {

RecordScope::RecordScope(Sema &sema, const KindSchema &schema, const Bindings &fields,
                         const std::set<std::string, std::less<>> *sections, const FieldValues *overrides,
                         std::string owner, llvm::SMRange ownerRange)
    : sema(sema), schema(schema), fields(fields), sections(sections), overrides(overrides),
      owner(std::move(owner)), ownerRange(ownerRange) {}

bool RecordScope::active(const FieldSpec &spec) const {
  return spec.group.empty() || !sections || sections->count(spec.group);
}

const ast::Expr *Sema::defaultExpr(const FieldSpec &spec) {
  auto it = defaults.find(&spec);
  if (it == defaults.end()) {
    std::string text = fmt::format("default = {};", spec.deflt);
    unsigned id = diags.sourceMgr().AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, fmt::format("<default of {}>", spec.path)), {});
    ast::StmtPtr s = parseStatement(id, diags);
    if (!s) // a bug in the schema table, already reported
      llvm::report_fatal_error(llvm::Twine("bad default for ") + std::string(spec.path));
    it = defaults.emplace(&spec, std::move(s)).first;
  }
  return llvm::cast<ast::AssignStmt>(*it->second).values[0].get();
}

/// A bare name given to a field that takes names means that name, even when a
/// field is called the same (`mode = derate` beside a `derate` field).
static Value evalFor(const FieldSpec &spec, Evaluator &ev, const ast::Expr &e) {
  auto *n = llvm::dyn_cast<ast::NameExpr>(&e);
  bool takesNames = spec.type == FieldType::Ref || spec.type == FieldType::Name;
  if (n && spec.type == FieldType::Choice)
    takesNames = spec.isChoice(n->dotted());
  if (n && takesNames)
    return Value::symbol(n->dotted(), n->getRange());
  return ev.eval(e);
}

Value RecordScope::get(const FieldSpec &spec) {
  if (auto it = cache.find(spec.path); it != cache.end())
    return it->second;
  std::string path(spec.path);
  if (overrides)
    if (auto it = overrides->find(path); it != overrides->end())
      return cache[path] = checkField(spec, it->second, nullptr, it->second.range, sema.diags);
  auto bound = fields.find(path);
  if (!inProgress.insert(path).second) {
    sema.diags.report(DiagID::FieldCycle, bound != fields.end() ? bound->second.pathRange : ownerRange, path,
                      base ? fmt::format("; write 'base.{}' for the inherited value", path) : "");
    return Value::error();
  }
  Evaluator ev(sema.diags, [this](const ast::NameExpr &e) { return lookup(e); });
  ev.knownNames = [this] {
    std::vector<std::string_view> names;
    for (const FieldSpec &f : schema.fields)
      if (active(f)) names.push_back(f.path);
    return names;
  };
  Value v;
  if (bound != fields.end()) {
    v = checkField(spec, evalFor(spec, ev, *bound->second.expr), bound->second.expr, ownerRange, sema.diags);
  } else if (!spec.deflt.empty()) {
    v = checkField(spec, evalFor(spec, ev, *sema.defaultExpr(spec)), nullptr, ownerRange, sema.diags);
  } else if (required(spec)) {
    sema.diags.report(DiagID::MissingField, ownerRange, owner, path);
  }
  inProgress.erase(path);
  return cache[path] = v;
}

bool RecordScope::isSet(const FieldSpec &spec) const {
  return fields.count(spec.path) || !spec.deflt.empty() || (overrides && overrides->count(spec.path));
}

/// A replayed profile is its own workload: a replay names no model.
bool RecordScope::required(const FieldSpec &spec) const {
  return !spec.optional && !(spec.path == "model" && sections && sections->count("replay"));
}

FieldValues RecordScope::all() {
  FieldValues out;
  for (const FieldSpec &f : schema.fields)
    if (active(f) && (isSet(f) || required(f)))
      out.emplace(std::string(f.path), get(f));
  return out;
}

std::optional<Value> RecordScope::lookup(const ast::NameExpr &e) {
  std::string name = e.dotted();
  if (base && e.path.size() > 1 && e.path[0] == "base") {
    if (!baseScope)
      baseScope = std::make_unique<RecordScope>(sema, *base->schema, base->fields, &base->sections, nullptr,
                                                sema.noun(*base), base->decl->name.range);
    baseScope->setBase(base->decl->base ? sema.record(base->decl->base->name) : nullptr);
    if (const FieldSpec *spec = base->schema->find(name.substr(5))) {
      Value v = baseScope->get(*spec);
      v.range = e.getRange();
      return v;
    }
    return std::nullopt;
  }
  const FieldSpec *spec = schema.find(name);
  if (!spec || !active(*spec)) {
    spec = nullptr;
    for (const FieldSpec *f : schema.bySuffix(name)) {
      if (!active(*f)) continue;
      if (spec) return std::nullopt; // ambiguous: leave it a name
      spec = f;
    }
  }
  if (!spec)
    return std::nullopt;
  Value v = get(*spec);
  v.range = e.getRange();
  return v;
}

} // namespace rapid::sema
