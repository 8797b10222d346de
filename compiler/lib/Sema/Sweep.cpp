//===- Sweep.cpp - Cartesian products of experiment variants --------------===//
//
// `sweep s over exp { a in [..]; b in [..]; c = expr; where cond; }` gives one
// point per combination of the axes (the first axis varies slowest), with the
// assignments computed and the constraints applied per point. Points that
// cannot run (degrees that do not divide, mappings that do not fit) are kept,
// marked infeasible with the reason, so results can show what was pruned.
//===----------------------------------------------------------------------===//
#include "SemaImpl.h"

#include "llvm/ADT/StringRef.h"

namespace rapid::sema {
namespace {
constexpr size_t kMaxPoints = 1'000'000;

struct Axis {
  std::string label; ///< as written: "tp"
  std::string path;  ///< resolved: "parallel.tp"
  std::vector<Value> values;
};
/// A computed sweep value that cannot be the field's value (`dp = 8 / 16`)
/// makes the point infeasible rather than the file wrong.
std::string overrideProblem(const KindSchema &schema, const FieldValues &overrides) {
  for (const auto &[path, v] : overrides) {
    const FieldSpec *spec = schema.find(path);
    if (!spec || spec->type != FieldType::Integer || !v.isNumber() || !v.q.dim.isNumber()) continue;
    std::string name = path.substr(path.rfind('.') + 1);
    if (!v.isInteger()) return fmt::format("{} = {} is not a whole number", name, v.str());
    if (spec->bound == Bound::Positive && v.num() <= 0) return fmt::format("{} = {} is not positive", name, v.str());
  }
  return "";
}

} // namespace

/// Resolves a name written in a sweep to an experiment field path, allowing
/// unique suffixes (`tp`) and fields of referenced declarations (`gpu.l2.capacity`).
static std::string resolveAxisPath(const Record &exp, const ast::Path &p, DiagnosticEngine &diags) {
  std::string name = p.dotted();
  const KindSchema &schema = *exp.schema;
  if (schema.find(name)) return name;
  auto matches = schema.bySuffix(name);
  if (matches.size() == 1) return std::string(matches[0]->path);
  for (auto [head, kind] : {std::pair{"model", "model"}, {"gpu", "gpu"}, {"network", "topology"}}) {
    std::string prefix = std::string(head) + ".";
    if (name.rfind(prefix, 0) != 0) continue;
    std::string rest = name.substr(prefix.size());
    if (std::string_view(kind) == "topology" || schemaFor(kind)->find(rest))
      return name; // dimension fields are checked when the topology resolves
  }
  std::vector<std::string> names;
  for (const FieldSpec &f : schema.fields) {
    names.emplace_back(f.path);
    names.emplace_back(f.path.substr(f.path.rfind('.') + 1));
  }
  diags.report(DiagID::SweepAxisUnknown, p.range, name, exp.name(), didYouMean(name, names));
  return "";
}

void Sema::expandSweep(const ast::Decl &sweep, std::vector<ExperimentPoint> &out) {
  if (!sweep.target) {
    diags.report(DiagID::BaseNotAllowed, sweep.name.range, "a sweep names its experiment: 'sweep s over exp { ... }'");
    return;
  }
  const Record *exp = record(sweep.target->name);
  if (!exp || exp->schema->kind != "experiment") {
    resolveRef(Value::symbol(sweep.target->name, sweep.target->range), "experiment");
    return;
  }
  Evaluator constants(diags, [](const ast::NameExpr &) { return std::nullopt; });
  std::vector<Axis> axes;
  std::vector<std::pair<std::string, const ast::AssignStmt *>> assigns;
  std::vector<const ast::WhereStmt *> wheres;
  size_t total = 1;
  for (const ast::StmtPtr &s : sweep.body.stmts) {
    if (auto *a = llvm::dyn_cast<ast::AxisStmt>(s.get())) {
      std::string path = resolveAxisPath(*exp, a->path, diags);
      Value v = constants.eval(*a->values);
      if (path.empty() || v.isError()) continue;
      Axis axis{a->path.dotted(), path, {}};
      axis.values = v.kind == Value::Kind::List ? v.items : std::vector<Value>{v};
      total *= std::max<size_t>(axis.values.size(), 1);
      axes.push_back(std::move(axis));
    } else if (auto *a = llvm::dyn_cast<ast::AssignStmt>(s.get())) {
      std::string path = resolveAxisPath(*exp, a->path, diags);
      if (!path.empty()) assigns.emplace_back(path, a);
    } else if (auto *w = llvm::dyn_cast<ast::WhereStmt>(s.get())) {
      wheres.push_back(w);
    } else {
      diags.report(DiagID::BaseNotAllowed, s->getRange(), "a sweep holds axes ('x in [...]'), assignments and 'where' constraints");
    }
  }
  if (diags.hasErrors()) return;
  if (total > kMaxPoints) {
    diags.report(DiagID::BadCall, sweep.name.range, fmt::format("sweep '{}' has {} points; at most {} are allowed", sweep.name.name, total, kMaxPoints));
    return;
  }
  size_t kept = 0;
  std::vector<size_t> idx(axes.size(), 0);
  for (size_t n = 0; n < total; ++n) {
    // Odometer over the axes, the last one fastest.
    size_t rest = n;
    for (size_t i = axes.size(); i-- > 0;) {
      idx[i] = rest % axes[i].values.size();
      rest /= axes[i].values.size();
    }
    FieldValues overrides;
    std::vector<std::pair<std::string, Value>> point;
    for (size_t i = 0; i < axes.size(); ++i) {
      overrides[axes[i].path] = axes[i].values[idx[i]];
      point.emplace_back(axes[i].label, axes[i].values[idx[i]]);
    }
    // Assignments see the axes and each other; the scope is rebuilt after
    // each one because it caches what it has evaluated.
    std::optional<RecordScope> scope;
    auto rescope = [&] {
      scope.emplace(*this, *exp->schema, exp->fields, &exp->sections, &overrides, noun(*exp), exp->decl->name.range);
    };
    rescope();
    // Assignments and constraints see this point's values as computed, before
    // any type check, so `where dp >= 1` can drop a point where dp = 0.5.
    auto lookup = [&](const ast::NameExpr &e) -> std::optional<Value> {
      std::string n = e.dotted();
      for (const auto &[path, v] : overrides)
        if (path == n || llvm::StringRef(path).ends_with("." + n)) {
          Value x = v;
          x.range = e.getRange();
          return x;
        }
      return scope->lookup(e);
    };
    bool ok = true;
    for (const auto &[path, a] : assigns) {
      Value v = Evaluator(diags, lookup).eval(*a->values[0]);
      ok &= !v.isError();
      overrides[path] = v;
      point.emplace_back(a->path.dotted(), v);
      rescope();
    }
    for (const ast::WhereStmt *w : wheres) {
      Value c = Evaluator(diags, lookup).eval(*w->cond);
      if (c.isError()) { ok = false; break; }
      if (c.kind != Value::Kind::Bool) {
        diags.report(DiagID::ExpectedKind, w->cond->getRange(), "a condition", c.describe());
        return;
      }
      ok &= c.b;
    }
    if (!ok) continue;
    std::string bad = overrideProblem(*exp->schema, overrides);
    ExperimentPoint p;
    if (bad.empty()) p = resolvePoint(*exp, overrides);
    p.experiment = exp->name();
    p.sweep = sweep.name.name;
    p.point = std::move(point);
    std::vector<Problem> problems = bad.empty() ? check(p, *exp) : std::vector<Problem>{{bad, {}}};
    if (!problems.empty()) {
      p.feasible = false;
      p.reason = problems.front().message;
    }
    out.push_back(std::move(p));
    ++kept;
  }
  if (kept == 0)
    diags.report(DiagID::SweepEmpty, sweep.name.range, sweep.name.name);
}

} // namespace rapid::sema
