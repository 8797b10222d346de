//===- Faults.cpp - Read and apply link faults ----------------------------===//

#include "rapid/Network/Faults.h"
#include "rapid/Network/NetworkConfig.h"

#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <fmt/format.h>

namespace rapid::net {

static std::optional<uint32_t> nodeId(const llvm::json::Value &v) {
  if (auto i = v.getAsInteger(); i && *i >= 0)
    return uint32_t(*i);
  if (auto s = v.getAsString(); s && s->starts_with("sw")) {
    uint32_t id;
    if (!s->drop_front(2).getAsInteger(10, id))
      return id;
  }
  return std::nullopt;
}

static llvm::Expected<Fault> parseFault(const std::string &path, size_t i,
                                        const llvm::json::Object &o) {
  auto bad = [&](const std::string &what) {
    return fileError(path, fmt::format("fault {}: {}", i, what));
  };
  Fault f;
  if (auto err = checkKeys(path, fmt::format("fault {}", i), o, {"kind", "link", "directed", "derate", "extra_latency"}))
    return err;
  auto kind = o.getString("kind");
  if (!kind || (*kind != "soft" && *kind != "hard"))
    return bad("'kind' must be \"soft\" or \"hard\"");
  f.hard = *kind == "hard";
  const auto *link = o.getArray("link");
  std::optional<uint32_t> a, b;
  if (link && link->size() == 2) {
    a = nodeId((*link)[0]);
    b = nodeId((*link)[1]);
  }
  if (!a || !b)
    return bad("'link' must be [node, node] (rank numbers or \"swN\")");
  f.src = *a;
  f.dst = *b;
  // A value of the wrong type is an error, not the default.
  if (const auto *v = o.get("directed"); v && !v->getAsBoolean())
    return bad("'directed' must be true or false");
  if (const auto *v = o.get("derate"); v && !v->getAsNumber())
    return bad("'derate' must be a number");
  if (const auto *v = o.get("extra_latency"); v && !v->getAsString())
    return bad("'extra_latency' must be a string with a unit, e.g. \"50 ns\"");
  f.directed = o.getBoolean("directed").value_or(false);
  f.derate = o.getNumber("derate").value_or(1.0);
  // A millionth of a link still moves a byte per microsecond of a 1 GB/s
  // link; less is a removed link, which "hard" says.
  if (!(f.derate >= 1e-6 && f.derate <= 1))
    return bad("'derate' must be from 1e-6 to 1 (a link that carries nothing is \"kind\": \"hard\")");
  if (auto lat = o.getString("extra_latency")) {
    auto v = parseQuantity(*lat, Dim::time());
    if (!v)
      return bad(llvm::toString(v.takeError()));
    if (!(*v >= 0 && *v <= 3600))
      return bad("'extra_latency' must be from 0 to 1 hour");
    f.extraLatencyPs = std::llround(*v * 1e12);
  }
  return f;
}

static llvm::Expected<std::vector<Fault>> faultsFromJson(const std::string &path, const llvm::json::Value &doc);

llvm::Expected<std::vector<Fault>> loadFaults(const std::string &path) {
  auto doc = readJsonFile(path);
  if (!doc)
    return doc.takeError();
  return faultsFromJson(path, *doc);
}

llvm::Expected<std::vector<Fault>> parseFaults(const std::string &path, llvm::StringRef text) {
  auto doc = parseJsonText(path, text);
  if (!doc)
    return doc.takeError();
  return faultsFromJson(path, *doc);
}

std::string writeFaultsJson(const std::vector<Fault> &faults, const Topology &topo) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::json::OStream j(os, 2);
  auto node = [&](uint32_t n) {
    if (n < uint32_t(topo.numRanks())) j.value(int64_t(n));
    else j.value(topo.nodeName(n));
  };
  j.object([&] {
    j.attributeArray("faults", [&] {
      for (const Fault &f : faults)
        j.object([&] {
          j.attribute("kind", f.hard ? "hard" : "soft");
          j.attributeArray("link", [&] { node(f.src), node(f.dst); });
          if (f.directed) j.attribute("directed", true);
          if (f.hard) return;
          j.attributeBegin("derate"); // the shortest form, not json::Value's 17 digits
          j.rawValue(formatNumber(f.derate));
          j.attributeEnd();
          j.attribute("extra_latency", formatNumber(double(f.extraLatencyPs) / 1000) + " ns");
        });
    });
  });
  return out + "\n";
}

static llvm::Expected<std::vector<Fault>> faultsFromJson(const std::string &path, const llvm::json::Value &doc) {
  const auto *list = doc.getAsObject() ? doc.getAsObject()->getArray("faults") : nullptr;
  if (!list)
    return fileError(path, "expected {\"faults\": [ ... ]}");
  if (auto err = checkKeys(path, "the fault list", *doc.getAsObject(), {"faults"}))
    return err;
  std::vector<Fault> out;
  for (size_t i = 0; i < list->size(); ++i) {
    const auto *o = (*list)[i].getAsObject();
    if (!o)
      return fileError(path, fmt::format("fault {}: expected an object", i));
    auto f = parseFault(path, i, *o);
    if (!f)
      return f.takeError();
    out.push_back(*f);
  }
  return out;
}

llvm::Error applyFaults(const std::string &path, const std::vector<Fault> &faults, Topology &topo) {
  for (size_t i = 0; i < faults.size(); ++i) {
    const Fault &f = faults[i];
    for (int dir = 0; dir < (f.directed ? 1 : 2); ++dir) {
      uint32_t l = dir ? topo.linkBetween(f.dst, f.src) : topo.linkBetween(f.src, f.dst);
      if (l == kNoLink)
        return fileError(path, fmt::format("fault {}: there is no link {} -> {}", i,
                                           topo.nodeName(dir ? f.dst : f.src),
                                           topo.nodeName(dir ? f.src : f.dst)));
      Link &link = topo.links()[l];
      link.failed |= f.hard;
      link.bytesPerNs *= f.derate;
      link.latencyPs += f.extraLatencyPs;
    }
  }
  return llvm::Error::success();
}

} // namespace rapid::net
