//===- Resolve.cpp - Experiments into fully resolved points ---------------===//
#include "SemaImpl.h"

#include "llvm/Support/Path.h"

#include "rapid/Network/TopologyKinds.h"

#include "llvm/ADT/StringExtras.h"


namespace rapid::sema {

FieldValues Sema::resolveFields(const Record &r, const FieldValues *overrides) {
  RecordScope scope(*this, *r.schema, r.fields, &r.sections, overrides, noun(r), r.decl->name.range);
  scope.setBase(r.decl->base ? record(r.decl->base->name) : nullptr);
  return scope.all();
}

FieldValues Sema::defaultFields(std::string_view kind, const FieldValues *overrides, std::string owner,
                                llvm::SMRange at) {
  Bindings none;
  RecordScope scope(*this, *schemaFor(kind), none, nullptr, overrides, std::move(owner), at);
  return scope.all();
}

const Record *Sema::resolveRef(const Value &v, std::string_view kind) {
  if (v.kind != Value::Kind::Symbol)
    return nullptr; // already reported by checkField
  const Record *r = record(v.s);
  if (!r) {
    std::vector<std::string> same;
    for (const auto &[n, x] : records)
      if (x.schema->kind == kind) same.push_back(n);
    const ast::Decl *d = findDecl(v.s);
    if (d && d->kind.name != kind) {
      diags.report(DiagID::WrongDeclKind, v.range, v.s, d->kind.name, kind);
      diags.report(DiagID::DeclaredHere, d->name.range, v.s);
    } else if (!d) {
      diags.report(DiagID::UnknownName, v.range, kind, v.s, didYouMean(v.s, same));
    }
    return nullptr;
  }
  if (r->schema->kind != kind) {
    diags.report(DiagID::WrongDeclKind, v.range, v.s, r->schema->kind, kind);
    diags.report(DiagID::DeclaredHere, r->decl->name.range, v.s);
    return nullptr;
  }
  return r;
}

namespace {

} // namespace

TopologySpec Sema::resolveTopology(const Record &r, const FieldValues *overrides) {
  TopologySpec t;
  t.name = r.name();
  for (const Record::Dim &d : r.dims) {
    const ast::CallExpr &shape = *d.stmt->shape;
    std::string name = d.stmt->name.name;
    const net::TopologyKind *kind = net::findTopologyKind(shape.callee.name);
    if (!kind) {
      std::vector<std::string> names;
      for (const net::TopologyKind &k : net::topologyKinds()) names.push_back(k.name);
      diags.report(DiagID::UnknownName, shape.callee.range, "network building block", shape.callee.name,
                   didYouMean(shape.callee.name, names));
      continue;
    }
    Evaluator ev(diags, [](const ast::NameExpr &) { return std::nullopt; });
    std::vector<int64_t> extents;
    bool bad = false;
    for (const ast::Arg &a : shape.args)
      for (const ast::ExprPtr &x : a.shape) {
        Value v = ev.eval(*x);
        if (v.isError()) { bad = true; continue; }
        if (!v.isInteger() || v.num() < 1 || v.num() > limit::kRanks) {
          diags.report(DiagID::ExpectedKind, x->getRange(), fmt::format("a whole number of ranks from 1 to {}", int64_t(limit::kRanks)), v.describe() + " " + v.str());
          bad = true;
          continue;
        }
        extents.push_back((int64_t)v.num());
      }
    if (bad) continue;
    if (extents.size() != kind->extents) {
      diags.report(DiagID::BadCall, shape.getRange(),
                   fmt::format("'{}' takes {} extent{} but {} given", kind->name, kind->extents,
                               kind->extents > 1 ? "s, as in '4 x 4'," : "", extents.size()));
      continue;
    }
    if (std::string problem = kind->checkExtents(extents); !problem.empty()) {
      diags.report(DiagID::BadCall, shape.getRange(), problem);
      continue;
    }
    int64_t size = 1;
    for (int64_t e : extents) size *= e; // at most 2^20 each, and few
    if (size > limit::kRanks || double(t.gpus) * double(size) > limit::kRanks) {
      diags.report(DiagID::BadCall, shape.getRange(),
                   fmt::format("a network has at most {} GPUs; with dimension '{}' ({} ranks) '{}' would have {}",
                               int64_t(limit::kRanks), name, size, t.name, formatNumber(double(t.gpus) * double(size))));
      continue;
    }
    FieldValues dimOverrides;
    if (overrides)
      for (const auto &[path, v] : *overrides)
        if (llvm::StringRef(path).starts_with(name + "."))
          dimOverrides[path.substr(name.size() + 1)] = v;
    RecordScope scope(*this, dimSchema(), d.fields, nullptr, &dimOverrides, fmt::format("dimension '{}'", name),
                      d.stmt->name.range);
    DimensionSpec dim = typedSpec<DimensionSpec>(scope.all());
    dim.name = std::move(name);
    dim.kind = kind->kind;
    dim.extents = std::move(extents);
    dim.size = size;
    checkFatTreeFields(dim, d);
    checkAlgorithm(dim, d);
    checkSameNode(dim, d, t);
    checkMulticast(dim, d, t);
    t.gpus *= size;
    t.dims.push_back(std::move(dim));
  }
  if (r.dims.empty())
    diags.report(DiagID::MissingField, r.decl->name.range, noun(r), "dim");
  return t;
}

FaultsSpec Sema::resolveFaults(const Record &r) {
  FaultsSpec f;
  f.name = r.name();
  Evaluator ev(diags, [](const ast::NameExpr &) { return std::nullopt; });
  for (const Record::LinkFault &fault : r.linkFaults) {
    const ast::LinkFaultStmt *s = fault.stmt;
    LinkFaultSpec lf;
    Bindings b;
    Seen own;
    for (const ast::StmtPtr &x : s->body.stmts)
      if (auto *a = llvm::dyn_cast<ast::AssignStmt>(x.get()); a && !s->hard)
        bind(b, linkFaultSchema(), "a link fault", *a, "", own);
    for (const auto &[path, binding] : fault.fromCommandLine) b[path] = binding;
    if (!s->hard)
      lf = typedSpec<LinkFaultSpec>(
          RecordScope(*this, linkFaultSchema(), b, nullptr, nullptr, "link fault", s->dim.range).all());
    lf.hard = s->hard;
    lf.dim = s->dim.name;
    for (auto [expr, out] : {std::pair{s->a.get(), &lf.a}, {s->b.get(), &lf.b}}) {
      Value v = ev.eval(*expr);
      if (!v.isError() && (!v.isInteger() || v.num() < 0))
        diags.report(DiagID::ExpectedKind, expr->getRange(), "a link endpoint index (0, 1, ...)", v.describe());
      *out = v.isNumber() ? (int64_t)v.num() : 0;
    }
    if (s->hard && !s->body.stmts.empty())
      diags.report(DiagID::BaseNotAllowed, s->body.range, "a hard fault removes the link; it takes no fields");
    f.links.push_back(std::move(lf));
  }
  for (const Record::Random &rnd : r.randoms) {
    RandomFaultSpec rf = typedSpec<RandomFaultSpec>(
        RecordScope(*this, randomFaultSchema(), rnd.fields, nullptr, nullptr, "random fault", rnd.stmt->kind.range)
            .all());
    rf.name = rnd.stmt->name ? rnd.stmt->name->name : "random";
    f.random.push_back(std::move(rf));
  }
  return f;
}

ExperimentPoint Sema::resolvePoint(const Record &exp, const FieldValues &overrides) {
  ExperimentPoint p;
  p.experiment = exp.name();
  p.resolved = true;
  // `gpu.hbm.bandwidth` in a sweep overrides a field of the referenced GPU.
  FieldValues own;
  std::map<std::string, FieldValues> sub;
  for (const auto &[path, v] : overrides) {
    size_t dot = path.find('.');
    std::string head = path.substr(0, dot);
    if (dot != std::string::npos && (head == "model" || head == "gpu" || head == "stack" || head == "network"))
      sub[head][path.substr(dot + 1)] = v;
    else
      own[path] = v;
  }
  FieldValues fields = resolveFields(exp, &own);
  p.refs = typedSpec<ExperimentRefs>(fields);
  p.parallel = typedSpec<ParallelSpec>(fields);
  if (exp.sections.count("training")) p.training = typedSpec<TrainingSpec>(fields);
  if (exp.sections.count("inference")) p.inference = typedSpec<InferenceSpec>(fields);
  // A file a field names is relative to the file that names it.
  auto relative = [&](const char *field, std::string &file) {
    auto it = fields.find(field);
    if (it == fields.end() || file.empty() || !llvm::sys::path::is_relative(file)) return;
    llvm::SourceMgr &sm = diags.sourceMgr();
    if (unsigned buf = sm.FindBufferContainingLoc(it->second.range.Start)) {
      llvm::SmallString<256> path(llvm::sys::path::parent_path(sm.getMemoryBuffer(buf)->getBufferIdentifier()));
      llvm::sys::path::append(path, file);
      file = std::string(path);
    }
  };
  // A declaration a section's field names as a string (empty: none).
  auto quotedRef = [&](const char *field, const char *kind) -> const Record * {
    Value named = fields[field];
    if (named.s.empty()) return nullptr;
    named.kind = Value::Kind::Symbol;
    return resolveRef(named, kind);
  };
  if (exp.sections.count("serving")) {
    p.serving = typedSpec<ServingSpec>(fields);
    relative("serving.trace", p.serving->trace);
    if (const Record *m = quotedRef("serving.draft", "model")) {
      p.draftModel = typedSpec<ModelSpec>(resolveFields(*m, nullptr));
      p.draftModel->name = m->name();
    }
  }
  if (exp.sections.count("replay")) {
    p.replay = typedSpec<ReplaySpec>(fields);
    relative("replay.trace", p.replay->trace);
    if (const Record *g = quotedRef("replay.profiled_gpu", "gpu")) {
      p.profiledGpu = typedSpec<GpuSpec>(resolveFields(*g, nullptr));
      p.profiledGpu->name = g->name();
    }
  }
  if (const Record *m = resolveRef(fields["model"], "model")) { // a replay has none
    p.model = typedSpec<ModelSpec>(resolveFields(*m, &sub["model"]));
    p.model.name = m->name();
  }
  if (const Record *g = resolveRef(fields["gpu"], "gpu")) {
    p.gpu = typedSpec<GpuSpec>(resolveFields(*g, &sub["gpu"]));
    p.gpu.name = g->name();
  }
  if (auto it = fields.find("stack"); it != fields.end()) {
    if (const Record *s = resolveRef(it->second, "stack")) {
      p.stack = typedSpec<StackSpec>(resolveFields(*s, &sub["stack"]));
      p.stack.name = s->name();
    }
  } else {
    p.stack = typedSpec<StackSpec>(defaultFields("stack", &sub["stack"], "the default stack", exp.decl->name.range));
  }
  if (const Record *n = resolveRef(fields["network"], "topology"))
    p.network = resolveTopology(*n, &sub["network"]);
  // `faults = none` (useful as a sweep value) runs without faults.
  if (auto it = fields.find("faults"); it != fields.end() && it->second.s != "none")
    if (const Record *f = resolveRef(it->second, "faults"))
      p.faults = resolveFaults(*f);
  for (const ast::MapStmt *m : exp.maps) {
    DegreeMapping dm;
    for (const ast::Ident &i : m->degrees) dm.degrees.push_back(i.name);
    for (const ast::Ident &i : m->dims) dm.dims.push_back(i.name);
    p.mapping.push_back(std::move(dm));
  }
  return p;
}

void Sema::checkAllDecls() {
  for (const auto &[name, r] : records) {
    std::string_view kind = r.schema->kind;
    if (kind == "gpu" || kind == "model" || kind == "stack")
      resolveFields(r, nullptr);
    else if (kind == "topology")
      resolveTopology(r, nullptr);
    else if (kind == "faults")
      resolveFaults(r);
  }
}

void Sema::runExperiment(const ast::Decl &d, std::vector<ExperimentPoint> &out) {
  const Record &exp = records.at(d.name.name);
  ExperimentPoint p = resolvePoint(exp, {});
  p.where = d.name.range;
  if (diags.hasErrors())
    return;
  for (const Problem &problem : check(p, exp))
    diags.report(DiagID::Infeasible, problem.range, problem.message);
  out.push_back(std::move(p));
}

} // namespace rapid::sema
