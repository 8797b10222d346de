//===- HostTrace.cpp - PyTorch host execution traces, linked to Kineto ----===//

#include "rapid/Profile/HostTrace.h"

#include "KinetoArgs.h"
#include "rapid/Support/Files.h"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <tuple>
#include <unordered_map>

namespace rapid::profile {

using llvm::json::Array;
using llvm::json::Object;
using llvm::json::Value;

namespace {

using args::idText;

/// Kineto's "Input type" for an execution-trace type: the tensor's element
/// type ("Tensor(c10::Half)" -> "c10::Half"), else the kind of argument.
std::string kinetoType(llvm::StringRef type) {
  if (type.consume_front("Tensor(") && type.consume_back(")")) return type.str();
  if (type.starts_with("GenericList[Tensor")) return "TensorList";
  if (type == "Int" || type == "Double" || type == "Bool") return "Scalar";
  if (type.starts_with("GenericList[")) return "ScalarList";
  return "";
}

/// Kineto's "Concrete Inputs" entry: a scalar's value as text (Python's
/// spelling for booleans), nothing for tensors.
std::string concreteText(const Value &v, llvm::StringRef type) {
  if (type.starts_with("Tensor") || type.starts_with("GenericList[Tensor")) return "";
  if (auto b = v.getAsBoolean()) return *b ? "True" : "False";
  if (auto i = v.getAsInteger()) return std::to_string(*i);
  if (auto d = v.getAsNumber()) return fmt::format("{}", *d);
  if (auto s = v.getAsString()) return s->str();
  if (const Array *a = v.getAsArray()) {
    std::vector<std::string> items;
    for (const Value &x : *a) items.push_back(concreteText(x, ""));
    return fmt::format("[{}]", fmt::join(items, ", "));
  }
  return "";
}

/// The operators whose shapes the replay reads (Kineto.cpp): matrix
/// multiplies, fused attention, collectives. Only theirs are kept: building
/// every node's args would cost more than reading the trace.
bool shapesUsed(llvm::StringRef name) {
  return name == "aten::mm" || name == "aten::addmm" || name == "aten::bmm" || name == "aten::baddbmm" ||
         name.starts_with("aten::_scaled_dot_product") || name.starts_with("nccl:") || name == "record_param_comms";
}

/// A Kineto event of a RecordFunction, as the host trace's nodes are: an
/// operator, or a user's (or c10d's "nccl:*") annotation.
bool isOperator(const Object &o) {
  auto cat = o.getString("cat");
  return cat == llvm::StringRef("cpu_op") || cat == llvm::StringRef("user_annotation");
}

Object kinetoArgs(const Object &node) {
  Object args;
  const Array *shapes = node.getArray("input_shapes");
  const Array *types = node.getArray("input_types");
  const Array *inputs = node.getArray("inputs");
  if (!shapes || !types || shapes->empty()) return args;
  args["Input Dims"] = Value(Array(*shapes));
  Array kt, concrete;
  for (size_t i = 0; i < types->size(); ++i) {
    llvm::StringRef t = (*types)[i].getAsString().value_or("");
    kt.push_back(kinetoType(t));
    concrete.push_back(inputs && i < inputs->size() ? concreteText((*inputs)[i], t) : "");
  }
  args["Input type"] = std::move(kt);
  args["Concrete Inputs"] = std::move(concrete);
  return args;
}

/// One side of the alignment: a thread's operators, as name ids in order.
struct Thread {
  int64_t tid = 0;
  std::vector<uint32_t> names;
  std::vector<size_t> items; ///< Kineto: index into the events; host: into the nodes
};

/// How far the alignment looks ahead for the next pair after a mismatch.
constexpr size_t kLookahead = 32;

/// Pairs equal names of `a` and `b` in order, greedily: on a mismatch the
/// side whose next match is nearer skips to it (both skip one when neither
/// matches within the lookahead). Calls `pair(i, j)` for each pair.
template <typename F> uint64_t align(const Thread &a, const Thread &b, F pair) {
  uint64_t n = 0;
  size_t i = 0, j = 0;
  auto nextIn = [](const std::vector<uint32_t> &v, size_t from, uint32_t name) {
    for (size_t d = 1; d <= kLookahead && from + d < v.size(); ++d)
      if (v[from + d] == name) return d;
    return size_t(0);
  };
  while (i < a.names.size() && j < b.names.size()) {
    if (a.names[i] == b.names[j]) {
      pair(i++, j++);
      ++n;
      continue;
    }
    size_t skipA = nextIn(a.names, i, b.names[j]), skipB = nextIn(b.names, j, a.names[i]);
    if (!skipA && !skipB) ++i, ++j;
    else if (skipA && (!skipB || skipA <= skipB)) i += skipA;
    else j += skipB;
  }
  return n;
}

} // namespace

HostLink linkHostTrace(const HostTrace &host, Object &kineto, bool fill) {
  HostLink link;
  link.file = host.file;
  std::unordered_map<std::string, uint32_t> ids;
  auto intern = [&](llvm::StringRef s) { return ids.try_emplace(s.str(), uint32_t(ids.size())).first->second; };
  // The Kineto side: the process's operators and annotations per thread, parents (the
  // longer of two starting together) first.
  Array *events = kineto.getArray("traceEvents");
  std::map<int64_t, std::vector<std::tuple<double, double, size_t>>> starts;
  for (size_t i = 0; events && i < events->size(); ++i) {
    const Object *o = (*events)[i].getAsObject();
    if (!o || !isOperator(*o) || idText(o->get("pid")) != host.pid) continue;
    starts[o->getInteger("tid").value_or(0)].emplace_back(o->getNumber("ts").value_or(0),
                                                          -o->getNumber("dur").value_or(0), i);
  }
  std::vector<Thread> ks, hs;
  for (auto &[tid, v] : starts) {
    std::sort(v.begin(), v.end());
    Thread t{tid, {}, {}};
    for (auto &[ts, negDur, i] : v)
      t.names.push_back(intern((*events)[i].getAsObject()->getString("name").value_or(""))), t.items.push_back(i);
    link.operators += v.size();
    ks.push_back(std::move(t));
  }
  std::map<int64_t, std::vector<std::pair<int64_t, size_t>>> byThread;
  for (size_t i = 0; i < host.nodes.size(); ++i)
    if (host.nodes[i].rfId >= 0) byThread[host.nodes[i].tid].emplace_back(host.nodes[i].rfId, i), ++link.nodes;
  for (auto &[tid, v] : byThread) {
    std::sort(v.begin(), v.end());
    Thread t{tid, {}, {}};
    for (auto &[rf, i] : v) t.names.push_back(intern(host.nodes[i].name)), t.items.push_back(i);
    hs.push_back(std::move(t));
  }
  // Threads pair by how many operators they share, most first.
  std::vector<std::tuple<uint64_t, size_t, size_t>> scores;
  for (size_t a = 0; a < ks.size(); ++a)
    for (size_t b = 0; b < hs.size(); ++b)
      if (uint64_t n = align(ks[a], hs[b], [](size_t, size_t) {})) scores.emplace_back(n, a, b);
  std::sort(scores.begin(), scores.end(), [](auto &x, auto &y) {
    return std::get<0>(x) != std::get<0>(y) ? std::get<0>(x) > std::get<0>(y) : x < y;
  });
  std::vector<bool> usedK(ks.size()), usedH(hs.size());
  for (auto &[n, a, b] : scores) {
    if (usedK[a] || usedH[b]) continue;
    usedK[a] = usedH[b] = true;
    link.linked += n, ++link.threads;
    if (!fill) continue;
    align(ks[a], hs[b], [&](size_t i, size_t j) {
      Object *o = (*events)[ks[a].items[i]].getAsObject();
      const HostNode &node = host.nodes[hs[b].items[j]];
      Object *args = o->getObject("args");
      if (!args) (*o)["args"] = Object{}, args = o->getObject("args");
      if (args->get("Input Dims") || node.args.empty()) return;
      for (const auto &[k, val] : node.args) args->try_emplace(k, val);
      ++link.filled;
    });
  }
  return link;
}

uint64_t unshapedOperators(const Object &kineto) {
  uint64_t n = 0;
  if (const Array *events = kineto.getArray("traceEvents"))
    for (const Value &v : *events)
      if (const Object *o = v.getAsObject())
        if (isOperator(*o) && shapesUsed(o->getString("name").value_or("")))
          if (const Object *args = o->getObject("args"); !args || !args->get("Input Dims")) ++n;
  return n;
}

bool isHostTrace(const Object &top) { return top.getArray("nodes") && top.get("schema"); }

llvm::Expected<HostTrace> readHostTrace(const std::string &file, const Object &top) {
  HostTrace h;
  h.file = file;
  h.schema = idText(top.get("schema"));
  h.pid = idText(top.get("pid"));
  const Array *nodes = top.getArray("nodes");
  if (!nodes) return fileError(file, "no 'nodes' array: not a PyTorch execution trace");
  if (h.pid.empty()) return fileError(file, "no 'pid': the execution trace cannot be matched to a Kineto trace");
  h.nodes.reserve(nodes->size());
  for (size_t i = 0; i < nodes->size(); ++i) {
    const Object *o = (*nodes)[i].getAsObject();
    auto name = o ? o->getString("name") : std::nullopt;
    auto id = o ? o->getInteger("id") : std::nullopt;
    if (!name || !id)
      return fileError(file, fmt::format("node {}: an execution-trace node needs a 'name' and an integer 'id'", i));
    HostNode n;
    n.id = *id;
    n.name = name->str();
    n.parent = o->getInteger("parent").value_or(-1);
    n.rfId = o->getInteger("rf_id").value_or(-1);
    n.tid = o->getInteger("tid").value_or(0);
    if (shapesUsed(n.name)) n.args = kinetoArgs(*o);
    h.nodes.push_back(std::move(n));
  }
  return h;
}

} // namespace rapid::profile
