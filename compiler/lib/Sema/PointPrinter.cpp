//===- PointPrinter.cpp ---------------------------------------------------===//
#include "rapid/Sema/PointPrinter.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

namespace rapid {
namespace {

void fieldsText(const FieldValues &f, int indent, llvm::raw_ostream &os) {
  for (const auto &[path, v] : f)
    os << std::string(indent, ' ') << path << " = " << v.str() << "\n";
}

/// `{head, "path": value, ...}`; `head` holds members that come first.
std::string fieldsJson(const FieldValues &f, std::string head = "") {
  std::vector<std::string> members;
  if (!head.empty()) members.push_back(std::move(head));
  for (const auto &[path, v] : f) members.push_back(jsonQuote(path) + ":" + v.json());
  return "{" + llvm::join(members, ",") + "}";
}

std::string shapeText(const ResolvedDim &d) {
  std::vector<std::string> e;
  for (int64_t x : d.shape) e.push_back(std::to_string(x));
  return d.kind + "(" + llvm::join(e, " x ") + ")";
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
  os << "  workload " << p.workload << "\n";
  fieldsText(p.fields, 2, os);
  for (const DegreeMapping &m : p.mapping)
    os << "  map " << llvm::join(m.degrees, ", ") << " -> " << llvm::join(m.dims, ", ") << "\n";
  os << "  model " << p.modelName << "\n";
  fieldsText(p.model, 4, os);
  os << "  gpu " << p.gpuName << "\n";
  fieldsText(p.gpu, 4, os);
  os << "  network " << p.network.name << " (" << p.network.gpus << " GPUs)\n";
  for (const ResolvedDim &d : p.network.dims) {
    os << "    dim " << d.name << " : " << shapeText(d) << ", " << d.size << " ranks\n";
    fieldsText(d.fields, 6, os);
  }
  if (!p.faults) return;
  os << "  faults " << p.faults->name << "\n";
  for (const ResolvedLinkFault &l : p.faults->links) {
    os << "    " << (l.hard ? "hard " : "soft ") << l.dim << "(" << l.a << ", " << l.b << ")\n";
    fieldsText(l.fields, 6, os);
  }
  for (const ResolvedRandomFault &r : p.faults->random) {
    os << "    random " << r.name << "\n";
    fieldsText(r.fields, 6, os);
  }
}

void printPointJson(const ExperimentPoint &p, llvm::raw_ostream &os) {
  std::string point = "{";
  for (const auto &[name, v] : p.point)
    point += (point.size() > 1 ? "," : "") + jsonQuote(name) + ":" + v.json();
  point += "}";
  std::vector<std::string> dims, maps, links, randoms;
  for (const ResolvedDim &d : p.network.dims)
    dims.push_back(fieldsJson(d.fields, fmt::format("\"name\":{},\"kind\":{},\"size\":{}", jsonQuote(d.name),
                                                    jsonQuote(d.kind), d.size)));
  for (const DegreeMapping &m : p.mapping) {
    std::vector<std::string> a, b;
    for (const auto &x : m.degrees) a.push_back(jsonQuote(x));
    for (const auto &x : m.dims) b.push_back(jsonQuote(x));
    maps.push_back("{\"degrees\":[" + llvm::join(a, ",") + "],\"dims\":[" + llvm::join(b, ",") + "]}");
  }
  os << "{\"experiment\":" << jsonQuote(p.experiment) << ",\"sweep\":" << jsonQuote(p.sweep)
     << ",\"point\":" << point << ",\"feasible\":" << (p.feasible ? "true" : "false")
     << ",\"reason\":" << jsonQuote(p.reason) << ",\"workload\":" << jsonQuote(p.workload)
     << ",\"fields\":" << fieldsJson(p.fields) << ",\"mapping\":[" << llvm::join(maps, ",") << "]"
     << ",\"model\":" << fieldsJson(p.model, "\"name\":" + jsonQuote(p.modelName))
     << ",\"gpu\":" << fieldsJson(p.gpu, "\"name\":" + jsonQuote(p.gpuName))
     << ",\"network\":{\"name\":" << jsonQuote(p.network.name) << ",\"gpus\":" << p.network.gpus
     << ",\"dims\":[" << llvm::join(dims, ",") << "]}";
  if (p.faults) {
    for (const ResolvedLinkFault &l : p.faults->links)
      links.push_back(fieldsJson(l.fields, fmt::format("\"hard\":{},\"dim\":{},\"a\":{},\"b\":{}", l.hard,
                                                       jsonQuote(l.dim), l.a, l.b)));
    for (const ResolvedRandomFault &r : p.faults->random)
      randoms.push_back(fieldsJson(r.fields, "\"name\":" + jsonQuote(r.name)));
    os << ",\"faults\":{\"name\":" << jsonQuote(p.faults->name) << ",\"links\":[" << llvm::join(links, ",")
       << "],\"random\":[" << llvm::join(randoms, ",") << "]}";
  }
  os << "}\n";
}

} // namespace rapid
