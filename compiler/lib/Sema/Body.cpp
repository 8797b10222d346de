//===- Body.cpp - Statements of a declaration into bindings ---------------===//
#include "SemaImpl.h"

#include "llvm/ADT/StringExtras.h"

namespace rapid::sema {
namespace {

std::vector<std::string> fieldNames(const KindSchema &schema) {
  std::vector<std::string> out;
  for (const FieldSpec &f : schema.fields) out.emplace_back(f.path);
  return out;
}

std::vector<std::string> sectionNames(const KindSchema &schema, const std::string &prefix) {
  std::set<std::string> out;
  for (const FieldSpec &f : schema.fields) {
    std::string_view p = f.path;
    if (!p.starts_with(prefix)) continue;
    p.remove_prefix(prefix.size());
    if (size_t dot = p.find('.'); dot != std::string_view::npos) out.emplace(p.substr(0, dot));
  }
  return {out.begin(), out.end()};
}

} // namespace

std::string Sema::noun(const Record &r) const {
  return fmt::format("{} '{}'", r.schema->noun, r.name());
}

void Sema::bind(Bindings &fields, const KindSchema &schema, const std::string &owner, const ast::AssignStmt &s,
                const std::string &prefix, Seen &seen, std::set<std::string, std::less<>> *sections, size_t strip) {
  std::string path = prefix + s.path.dotted().substr(strip);
  const FieldSpec *spec = schema.find(path);
  if (!spec) {
    std::string hint = didYouMean(path, fieldNames(schema));
    // A field of another kind (`launch_overhead` moved from gpu to stack).
    if (schema.kind == "gpu" && schemaFor("stack")->find(path))
      hint = fmt::format("; '{}' is the software's cost: a field of `stack` (docs/language.md)", path);
    diags.report(DiagID::UnknownField, s.path.range, owner, path, hint);
    return;
  }
  if (s.values.size() != 1) {
    diags.report(DiagID::WrongValueCount, s.getRange(), path, "one value", s.values.size());
    return;
  }
  if (auto [it, fresh] = seen.emplace(path, s.path.range); !fresh) {
    diags.report(DiagID::DuplicateField, s.path.range, path);
    diags.report(DiagID::PreviousAssignment, it->second, path);
    return;
  }
  if (sections && !spec->group.empty())
    sections->insert(std::string(spec->group));
  fields[path] = {s.values[0].get(), s.path.range};
}

void Sema::addBody(Record &r, const ast::Block &b, const std::string &prefix, Seen &seen) {
  const std::string_view kind = r.schema->kind;
  for (const ast::StmtPtr &sp : b.stmts) {
    const ast::Stmt &s = *sp;
    if (auto *a = llvm::dyn_cast<ast::AssignStmt>(&s)) {
      bind(r.fields, *r.schema, noun(r), *a, prefix, seen, &r.sections);
    } else if (auto *sec = llvm::dyn_cast<ast::SectionStmt>(&s)) {
      if (kind == "faults" && prefix.empty() && sec->kind.name == "random") {
        Record::Random rnd{sec, {}};
        Seen own;
        for (const ast::StmtPtr &x : sec->body.stmts)
          if (auto *a = llvm::dyn_cast<ast::AssignStmt>(x.get()))
            bind(rnd.fields, randomFaultSchema(), "a random fault", *a, "", own);
          else
            diags.report(DiagID::UnknownSection, x->getRange(), "a random fault", "statement", "; write 'field = value;'");
        r.randoms.push_back(std::move(rnd));
        continue;
      }
      std::string path = prefix + sec->kind.name;
      if (!r.schema->hasSection(path)) {
        diags.report(DiagID::UnknownSection, sec->kind.range, noun(r), path,
                     didYouMean(sec->kind.name, sectionNames(*r.schema, prefix)));
        continue;
      }
      if (prefix.empty()) r.sections.insert(path);
      addBody(r, sec->body, path + ".", seen);
    } else if (auto *d = llvm::dyn_cast<ast::DimStmt>(&s); d && kind == "topology") {
      addDim(r, *d);
    } else if (auto *f = llvm::dyn_cast<ast::LinkFaultStmt>(&s); f && kind == "faults") {
      r.linkFaults.push_back({f, {}}); // its fields are bound when the fault set resolves
    } else if (auto *m = llvm::dyn_cast<ast::MapStmt>(&s); m && kind == "experiment") {
      if (r.mapsInherited) {
        r.maps.clear();
        r.mapsInherited = false;
      }
      r.maps.push_back(m);
    } else {
      const char *what = llvm::isa<ast::AxisStmt>(s) || llvm::isa<ast::WhereStmt>(s) ? "sweep axes and 'where' belong in a sweep"
                         : llvm::isa<ast::DimStmt>(s)       ? "'dim' belongs in a topology"
                         : llvm::isa<ast::LinkFaultStmt>(s) ? "link faults belong in a faults declaration"
                                                            : "'map' belongs in an experiment";
      diags.report(DiagID::BaseNotAllowed, s.getRange(), std::string(what));
    }
  }
}

void Sema::bindDimField(Record::Dim &dim, const ast::AssignStmt &a, const std::string &prefix, Seen &seen) {
  if (a.path.dotted() != prefix + "link") {
    bind(dim.fields, dimSchema(), fmt::format("dimension '{}'", dim.stmt->name.name), a, "", seen, nullptr,
         prefix.size());
    return;
  }
  // `link = 100 GB/s, 500 ns;` is bandwidth and latency at once.
  if (a.values.size() != 2) {
    diags.report(DiagID::WrongValueCount, a.getRange(), "link", "a bandwidth and a latency", a.values.size());
    return;
  }
  dim.fields["bandwidth"] = {a.values[0].get(), a.path.range};
  dim.fields["latency"] = {a.values[1].get(), a.path.range};
}

void Sema::addDim(Record &r, const ast::DimStmt &s) {
  Record::Dim dim{&s, {}};
  Seen own;
  for (const ast::StmtPtr &x : s.body.stmts) {
    if (auto *a = llvm::dyn_cast<ast::AssignStmt>(x.get()))
      bindDimField(dim, *a, "", own);
    else
      diags.report(DiagID::BaseNotAllowed, x->getRange(), "a dimension holds only 'field = value;' lines");
  }
  // A derived topology may redefine a dimension by name; otherwise it appends.
  for (Record::Dim &old : r.dims)
    if (old.stmt->name.name == s.name.name) {
      old = std::move(dim);
      return;
    }
  r.dims.push_back(std::move(dim));
}

} // namespace rapid::sema
