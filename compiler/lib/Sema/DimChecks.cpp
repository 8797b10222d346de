//===- DimChecks.cpp - A dimension's fields, checked together -------------===//
//
// The field tables bound each value alone; these rules relate a dimension's
// fields to each other, to its kind and to its size. An error points at the
// field that breaks the rule where the file writes it, else (a default, a
// value from --set) at the dimension's name.
//===----------------------------------------------------------------------===//
#include "SemaImpl.h"

#include "rapid/Network/TopologyKinds.h"

#include <bit>

namespace rapid::sema {
namespace {

llvm::SMRange fieldRange(const Record::Dim &written, const std::string &field) {
  auto it = written.fields.find(field);
  return it != written.fields.end() ? it->second.pathRange : written.stmt->name.range;
}

/// The fat-tree fields that differ from their defaults, in table order.
std::vector<std::string> fatTreeFieldsSet(const DimensionSpec &d) {
  std::vector<std::string> set;
  auto note = [&](bool changed, const char *field) {
    if (changed) set.push_back(field);
  };
  note(d.leafSize != 0, "leaf_size");
  note(d.oversubscription != 1, "oversubscription");
  note(d.trunk.value() != 0, "trunk");
  note(d.podSize != 0, "pod_size");
  note(d.podOversubscription != 1, "pod_oversubscription");
  note(d.podTrunk.value() != 0, "pod_trunk");
  return set;
}

} // namespace

void Sema::checkFatTreeFields(const DimensionSpec &d, const Record::Dim &written) {
  auto report = [&](const std::string &field, const std::string &message) {
    diags.report(DiagID::BadCall, fieldRange(written, field), message);
  };
  if (d.kind != net::DimKind::FatTree) {
    for (const std::string &field : fatTreeFieldsSet(d))
      report(field, fmt::format("'{}' shapes a FatTree; dimension '{}' is a {}", field, d.name,
                                net::dimKindName(d.kind)));
    return;
  }
  if (d.leafSize > d.size)
    report("leaf_size", fmt::format("leaf_size = {} exceeds the {} ranks of dimension '{}'", d.leafSize, d.size, d.name));
  // A pod is whole leaves (its spine's children); the last pod may be partial.
  if (d.podSize > d.size)
    report("pod_size", fmt::format("pod_size = {} exceeds the {} ranks of dimension '{}'", d.podSize, d.size, d.name));
  else if (d.podSize != 0 && d.leafSize == 0 && d.podSize != d.size)
    report("pod_size", fmt::format("pod_size = {} needs leaf_size: without it one leaf holds all {} ranks of "
                                   "dimension '{}'",
                                   d.podSize, d.size, d.name));
  else if (d.podSize != 0 && d.leafSize != 0 && d.podSize % d.leafSize != 0)
    report("pod_size", fmt::format("pod_size = {} is not a whole number of leaves of leaf_size = {} in dimension '{}'",
                                   d.podSize, d.leafSize, d.name));
  // A tier's trunk fields with one switch in the tier would change nothing.
  bool leaves = d.leafSize != 0 && d.leafSize < d.size, pods = d.podSize != 0 && d.podSize < d.size;
  for (auto [field, set, tier, tiers, many] :
       {std::tuple{"oversubscription", d.oversubscription != 1, "leaf", "leaves", leaves},
        {"trunk", d.trunk.value() != 0, "leaf", "leaves", leaves},
        {"pod_oversubscription", d.podOversubscription != 1, "pod", "pods", pods},
        {"pod_trunk", d.podTrunk.value() != 0, "pod", "pods", pods}})
    if (set && !many)
      report(field, fmt::format("'{}' shapes the trunks above the {}, but dimension '{}' is one {} of {} ranks; "
                                "set {}_size",
                                field, tiers, d.name, tier, d.size, tier));
  if (d.trunk.value() != 0 && d.oversubscription != 1)
    report("trunk", "a leaf's trunk is given by 'trunk' or by 'oversubscription', not both");
  if (d.podTrunk.value() != 0 && d.podOversubscription != 1)
    report("pod_trunk", "a pod's trunk is given by 'pod_trunk' or by 'pod_oversubscription', not both");
}

/// Halving-doubling pairs ranks by bit: every axis of the dimension (so
/// every group along it) must hold a power of two.
void Sema::checkAlgorithm(const DimensionSpec &d, const Record::Dim &written) {
  if (d.algorithm != CollectiveAlgorithm::HalvingDoubling) return;
  for (int64_t extent : d.extents)
    if (!std::has_single_bit(uint64_t(extent))) {
      diags.report(DiagID::BadCall, fieldRange(written, "algorithm"),
                   fmt::format("algorithm = halving_doubling pairs ranks by bit, but dimension '{}' has an axis of {} "
                               "ranks, not a power of two",
                               d.name, extent));
      return;
    }
}

/// A node is the dimensions joined to the first of them: the topology's
/// first dimension has nothing before it to join.
void Sema::checkSameNode(const DimensionSpec &d, const Record::Dim &written, const TopologySpec &t) {
  if (d.sameNode && t.dims.empty())
    diags.report(DiagID::BadCall, fieldRange(written, "same_node"),
                 fmt::format("same_node joins a dimension to the node of the ones before it, but '{}' is the "
                             "first dimension of '{}'",
                             d.name, t.name));
}

/// NVLink SHARP is a property of the node's switch: NCCL sets up NVLS
/// among a node's GPUs only, so the memory pass and rapid-sim read it on
/// the first dimension and nowhere else.
void Sema::checkMulticast(const DimensionSpec &d, const Record::Dim &written, const TopologySpec &t) {
  if (d.multicast.value() == 0) return;
  if (d.kind != net::DimKind::Switch)
    diags.report(DiagID::BadCall, fieldRange(written, "multicast"),
                 fmt::format("multicast is a switch's (NVLink SHARP), but dimension '{}' is a {}", d.name,
                             net::dimKindName(d.kind)));
  else if (!t.dims.empty())
    diags.report(DiagID::BadCall, fieldRange(written, "multicast"),
                 fmt::format("multicast joins the GPUs of one node, but '{}' is not the first dimension of '{}' "
                             "(that is '{}')",
                             d.name, t.name, t.dims.front().name));
}

} // namespace rapid::sema
