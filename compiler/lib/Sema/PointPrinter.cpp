//===- PointPrinter.cpp ---------------------------------------------------===//
#include "rapid/Sema/PointPrinter.h"

#include "rapid/Spec/Schema.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>

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
std::string text(const Distribution &d) {
  if (d.kind == Distribution::Kind::Constant) return fmt::format("constant({})", formatNumber(d.a));
  return fmt::format("{}({}, {})", nameOf(d.kind), formatNumber(d.a), formatNumber(d.b));
}

// The same as JSON.
std::string json(int64_t v) { return text(v); }
std::string json(double v) { return text(v); }
template <class Tag> std::string json(Unit<Tag> v) { return text(v); }
std::string json(bool v) { return v ? "true" : "false"; }
template <class E>
  requires std::is_enum_v<E>
std::string json(E e) {
  return jsonQuote(text(e));
}
template <DeclKind K> std::string json(const Ref<K> &r) { return jsonQuote(r.name); }
std::string json(const DimName &n) { return jsonQuote(n.name); }
std::string json(const Distribution &d) {
  std::string args = d.kind == Distribution::Kind::Constant ? formatNumber(d.a)
                                                            : formatNumber(d.a) + "," + formatNumber(d.b);
  return fmt::format("{{\"dist\":{},\"args\":[{}]}}", jsonQuote(std::string(nameOf(d.kind))), args);
}

/// A spec's fields as (path, text) and (path, JSON) pairs; optional
/// references that are unset are left out.
struct Fields {
  std::vector<std::pair<std::string_view, std::string>> text, json;
  template <class S> Fields &add(const S &spec) {
    visitFields(spec, [&](const FieldSpec &row, const auto &member) {
      if constexpr (FieldTraits<std::decay_t<decltype(member)>>::type == FieldType::Ref)
        if (member.empty()) return;
      text.emplace_back(row.path, rapid::text(member));
      json.emplace_back(row.path, rapid::json(member));
    });
    return *this;
  }
  /// Sorted by path, the order `--emit=sema` has always printed.
  Fields &sorted() {
    std::sort(text.begin(), text.end());
    std::sort(json.begin(), json.end());
    return *this;
  }
};

Fields experimentFields(const ExperimentPoint &p) {
  Fields f;
  if (!p.resolved) return f;
  f.add(p.refs).add(p.parallel);
  if (p.training) f.add(*p.training);
  if (p.inference) f.add(*p.inference);
  return std::move(f.sorted());
}

void fieldsText(const Fields &f, int indent, llvm::raw_ostream &os) {
  for (const auto &[path, v] : f.text)
    os << std::string(indent, ' ') << path << " = " << v << "\n";
}

/// `{head, "path": value, ...}`; `head` holds members that come first.
std::string fieldsJson(const Fields &f, std::string head = "") {
  std::vector<std::string> members;
  if (!head.empty()) members.push_back(std::move(head));
  for (const auto &[path, v] : f.json) members.push_back(jsonQuote(std::string(path)) + ":" + v);
  return "{" + llvm::join(members, ",") + "}";
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

std::string jsonQuote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') { out += "\\n"; continue; }
    out += c;
  }
  return out + "\"";
}

std::string pointLabel(const ExperimentPoint &p) {
  std::vector<std::string> parts;
  for (const auto &[name, v] : p.point) parts.push_back(name + "=" + v.str());
  return llvm::join(parts, " ");
}

void printPointText(const ExperimentPoint &p, llvm::raw_ostream &os) {
  os << "experiment " << p.experiment;
  if (!p.sweep.empty()) os << " (sweep " << p.sweep << ": " << pointLabel(p) << ")";
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

void printPointJson(const ExperimentPoint &p, llvm::raw_ostream &os) {
  std::string point = "{";
  for (const auto &[name, v] : p.point)
    point += (point.size() > 1 ? "," : "") + jsonQuote(name) + ":" + v.json();
  point += "}";
  std::vector<std::string> dims, maps, links, randoms;
  for (const DimensionSpec &d : p.network.dims)
    dims.push_back(fieldsJson(fieldsOf(d), fmt::format("\"name\":{},\"kind\":{},\"size\":{}", jsonQuote(d.name),
                                                       jsonQuote(net::dimKindName(d.kind)), d.size)));
  for (const DegreeMapping &m : p.mapping) {
    std::vector<std::string> a, b;
    for (const auto &x : m.degrees) a.push_back(jsonQuote(x));
    for (const auto &x : m.dims) b.push_back(jsonQuote(x));
    maps.push_back("{\"degrees\":[" + llvm::join(a, ",") + "],\"dims\":[" + llvm::join(b, ",") + "]}");
  }
  os << "{\"experiment\":" << jsonQuote(p.experiment) << ",\"sweep\":" << jsonQuote(p.sweep)
     << ",\"point\":" << point << ",\"feasible\":" << (p.feasible ? "true" : "false")
     << ",\"reason\":" << jsonQuote(p.reason) << ",\"workload\":" << jsonQuote(std::string(nameOf(p.workload())))
     << ",\"fields\":" << fieldsJson(experimentFields(p)) << ",\"mapping\":[" << llvm::join(maps, ",") << "]"
     << ",\"model\":" << fieldsJson(fieldsOf(p.model, p.resolved), "\"name\":" + jsonQuote(p.model.name))
     << ",\"gpu\":" << fieldsJson(fieldsOf(p.gpu, p.resolved), "\"name\":" + jsonQuote(p.gpu.name))
     << ",\"network\":{\"name\":" << jsonQuote(p.network.name) << ",\"gpus\":" << p.network.gpus
     << ",\"dims\":[" << llvm::join(dims, ",") << "]}";
  if (p.faults) {
    for (const LinkFaultSpec &l : p.faults->links)
      links.push_back(fieldsJson(l.hard ? Fields() : fieldsOf(l),
                                 fmt::format("\"hard\":{},\"dim\":{},\"a\":{},\"b\":{}", l.hard, jsonQuote(l.dim),
                                             l.a, l.b)));
    for (const RandomFaultSpec &r : p.faults->random)
      randoms.push_back(fieldsJson(fieldsOf(r), "\"name\":" + jsonQuote(r.name)));
    os << ",\"faults\":{\"name\":" << jsonQuote(p.faults->name) << ",\"links\":[" << llvm::join(links, ",")
       << "],\"random\":[" << llvm::join(randoms, ",") << "]}";
  }
  os << "}\n";
}

} // namespace rapid
