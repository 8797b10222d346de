//===- PointPrinter.cpp ---------------------------------------------------===//
#include "rapid/Sema/PointPrinter.h"

#include "rapid/Spec/Schema.h"
#include "rapid/Support/Json.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

namespace rapid {
namespace {

// A typed member as `--emit=sema` writes it: base units, the language's names.
std::string text(int64_t v) { return formatNumber(double(v)); }
std::string text(double v) { return formatNumber(v); }
std::string text(bool v) { return v ? "on" : "off"; }
template <class Tag> std::string text(Unit<Tag> v) { return formatNumber(v.value()); }
template <class E>
  requires std::is_enum_v<E>
std::string text(E e) {
  return std::string(nameOf(e));
}
template <DeclKind K> std::string text(const Ref<K> &r) { return r.name; }
std::string text(const DimName &n) { return n.name; }
std::string text(const std::string &s) { return "\"" + s + "\""; }
std::string text(const Distribution &d) {
  if (d.kind == Distribution::Kind::Constant) return fmt::format("constant({})", formatNumber(d.a));
  return fmt::format("{}({}, {})", nameOf(d.kind), formatNumber(d.a), formatNumber(d.b));
}

// The same as the next JSON value of `j`.
void json(llvm::json::OStream &j, int64_t v) { writeNumber(j, double(v), JsonNumber::Stable); }
void json(llvm::json::OStream &j, double v) { writeNumber(j, v, JsonNumber::Stable); }
template <class Tag> void json(llvm::json::OStream &j, Unit<Tag> v) { writeNumber(j, v.value(), JsonNumber::Stable); }
void json(llvm::json::OStream &j, bool v) { j.value(v); }
template <class E>
  requires std::is_enum_v<E>
void json(llvm::json::OStream &j, E e) {
  j.value(llvm::StringRef(nameOf(e)));
}
template <DeclKind K> void json(llvm::json::OStream &j, const Ref<K> &r) { j.value(r.name); }
void json(llvm::json::OStream &j, const DimName &n) { j.value(n.name); }
void json(llvm::json::OStream &j, const std::string &s) { j.value(s); }
void json(llvm::json::OStream &j, const Distribution &d) {
  j.object([&] {
    j.attribute("dist", llvm::StringRef(nameOf(d.kind)));
    j.attributeArray("args", [&] {
      writeNumber(j, d.a, JsonNumber::Stable);
      if (d.kind != Distribution::Kind::Constant) writeNumber(j, d.b, JsonNumber::Stable);
    });
  });
}

/// A spec's fields as (path, text) pairs and (path, JSON writer) pairs;
/// optional references that are unset are left out. The writers point into
/// the spec, which outlives the printing.
struct Fields {
  using Writer = std::function<void(llvm::json::OStream &)>;
  std::vector<std::pair<std::string_view, std::string>> text;
  std::vector<std::pair<std::string_view, Writer>> json;
  template <class S> Fields &add(const S &spec) {
    visitFields(spec, [&](const FieldSpec &row, const auto &member) {
      if constexpr (FieldTraits<std::decay_t<decltype(member)>>::type == FieldType::Ref)
        if (member.empty()) return;
      text.emplace_back(row.path, rapid::text(member));
      json.emplace_back(row.path, [&member](llvm::json::OStream &j) { rapid::json(j, member); });
    });
    return *this;
  }
  /// Sorted by path, the order `--emit=sema` has always printed.
  Fields &sorted() {
    std::sort(text.begin(), text.end());
    std::stable_sort(json.begin(), json.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    return *this;
  }
};

Fields experimentFields(const ExperimentPoint &p) {
  Fields f;
  if (!p.resolved) return f;
  f.add(p.refs).add(p.parallel);
  if (p.training) f.add(*p.training);
  if (p.inference) f.add(*p.inference);
  if (p.serving) f.add(*p.serving);
  if (p.replay) f.add(*p.replay);
  return std::move(f.sorted());
}

void fieldsText(const Fields &f, int indent, llvm::raw_ostream &os) {
  for (const auto &[path, v] : f.text)
    os << std::string(indent, ' ') << path << " = " << v << "\n";
}

/// `{head, "path": value, ...}`; `head` writes the members that come first.
void fieldsJson(llvm::json::OStream &j, const Fields &f, llvm::function_ref<void()> head = [] {}) {
  j.object([&] {
    head();
    for (const auto &[path, write] : f.json) {
      j.attributeBegin(path);
      write(j);
      j.attributeEnd();
    }
  });
}

/// What a point prints of a spec: nothing when it was never resolved.
template <class S> Fields fieldsOf(const S &spec, bool resolved = true) {
  if (!resolved) return {};
  return std::move(Fields().add(spec).sorted());
}

std::string shapeText(const DimensionSpec &d) {
  std::vector<std::string> e;
  for (int64_t x : d.extents) e.push_back(std::to_string(x));
  return std::string(net::dimKindName(d.kind)) + "(" + llvm::join(e, " x ") + ")";
}

} // namespace

std::string pointLabel(const ExperimentPoint &p) {
  std::vector<std::string> parts;
  for (const auto &[name, v] : p.point) parts.push_back(name + "=" + v.str());
  return llvm::join(parts, " ");
}

std::string pointName(const ExperimentPoint &p) {
  if (p.sweep.empty()) return fmt::format("experiment '{}'", p.experiment);
  return fmt::format("point {} of sweep '{}'", pointLabel(p), p.sweep);
}

void printPointText(const ExperimentPoint &p, llvm::raw_ostream &os) {
  os << "experiment " << p.experiment;
  if (!p.sweep.empty()) os << (p.search ? " (search " : " (sweep ") << p.sweep << ": " << pointLabel(p) << ")";
  os << "\n";
  if (!p.feasible) os << "  infeasible: " << p.reason << "\n";
  os << "  workload " << nameOf(p.workload()) << "\n";
  fieldsText(experimentFields(p), 2, os);
  for (const DegreeMapping &m : p.mapping)
    os << "  map " << llvm::join(m.degrees, ", ") << " -> " << llvm::join(m.dims, ", ") << "\n";
  os << "  model " << p.model.name << "\n";
  fieldsText(fieldsOf(p.model, p.resolved), 4, os);
  os << "  gpu " << p.gpu.name << "\n";
  fieldsText(fieldsOf(p.gpu, p.resolved), 4, os);
  os << "  stack " << (p.stack.name.empty() ? "(the defaults)" : p.stack.name) << "\n";
  fieldsText(fieldsOf(p.stack, p.resolved), 4, os);
  os << "  network " << p.network.name << " (" << p.network.gpus << " GPUs)\n";
  for (const DimensionSpec &d : p.network.dims) {
    os << "    dim " << d.name << " : " << shapeText(d) << ", " << d.size << " ranks\n";
    fieldsText(fieldsOf(d), 6, os);
  }
  if (!p.faults) return;
  os << "  faults " << p.faults->name << "\n";
  for (const LinkFaultSpec &l : p.faults->links) {
    os << "    " << (l.hard ? "hard " : "soft ") << l.dim << "(" << l.a << ", " << l.b << ")\n";
    if (!l.hard) fieldsText(fieldsOf(l), 6, os);
  }
  for (const RandomFaultSpec &r : p.faults->random) {
    os << "    random " << r.name << "\n";
    fieldsText(fieldsOf(r), 6, os);
  }
}

void writeSweptValues(llvm::json::OStream &j, const std::vector<std::pair<std::string, Value>> &point) {
  j.attributeObject("point", [&] {
    for (const auto &[name, v] : point) {
      j.attributeBegin(name);
      v.writeJson(j);
      j.attributeEnd();
    }
  });
}

void printPointJson(const ExperimentPoint &p, llvm::raw_ostream &os) {
  {
    llvm::json::OStream j(os);
    j.object([&] {
      j.attribute("experiment", p.experiment);
      j.attribute("sweep", p.sweep);
      writeSweptValues(j, p.point);
      j.attribute("feasible", p.feasible);
      j.attribute("reason", p.reason);
      j.attribute("workload", llvm::StringRef(nameOf(p.workload())));
      j.attributeBegin("fields");
      fieldsJson(j, experimentFields(p));
      j.attributeEnd();
      j.attributeArray("mapping", [&] {
        for (const DegreeMapping &m : p.mapping)
          j.object([&] {
            j.attributeArray("degrees", [&] { for (const auto &x : m.degrees) j.value(x); });
            j.attributeArray("dims", [&] { for (const auto &x : m.dims) j.value(x); });
          });
      });
      j.attributeBegin("model");
      fieldsJson(j, fieldsOf(p.model, p.resolved), [&] { j.attribute("name", p.model.name); });
      j.attributeEnd();
      j.attributeBegin("gpu");
      fieldsJson(j, fieldsOf(p.gpu, p.resolved), [&] { j.attribute("name", p.gpu.name); });
      j.attributeEnd();
      j.attributeBegin("stack");
      fieldsJson(j, fieldsOf(p.stack, p.resolved), [&] { j.attribute("name", p.stack.name); });
      j.attributeEnd();
      j.attributeObject("network", [&] {
        j.attribute("name", p.network.name);
        j.attribute("gpus", p.network.gpus);
        j.attributeArray("dims", [&] {
          for (const DimensionSpec &d : p.network.dims)
            fieldsJson(j, fieldsOf(d), [&] {
              j.attribute("name", d.name);
              j.attribute("kind", llvm::StringRef(net::dimKindName(d.kind)));
              j.attribute("size", d.size);
            });
        });
      });
      if (!p.faults) return;
      j.attributeObject("faults", [&] {
        j.attribute("name", p.faults->name);
        j.attributeArray("links", [&] {
          for (const LinkFaultSpec &l : p.faults->links)
            fieldsJson(j, l.hard ? Fields() : fieldsOf(l), [&] {
              j.attribute("hard", l.hard);
              j.attribute("dim", l.dim);
              j.attribute("a", l.a);
              j.attribute("b", l.b);
            });
        });
        j.attributeArray("random", [&] {
          for (const RandomFaultSpec &r : p.faults->random)
            fieldsJson(j, fieldsOf(r), [&] { j.attribute("name", r.name); });
        });
      });
    });
  }
  os << "\n";
}

} // namespace rapid
