//===- GroupGrid.h - Communicator groups that are grids of the network -*- C++ -*-===//
//
// A group whose members take every combination of the coordinates they
// take on some network axes (a TP x DP block, or every rank of a 2-D
// network) is a grid: its collectives run one phase per axis, as a
// whole-machine collective runs one per dimension, instead of one ring
// over the list that crosses the slow dimension at every other hop. Not
// inside a node: NCCL builds its rings over a node's GPUs whatever links
// join them, so a group whose dimensions all lie in one node (`same_node`)
// is one ring over its list.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Network/Topology.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace rapid::coll {

struct GroupGrid {
  struct Axis {
    int dim;    ///< network dimension the axis belongs to
    int size;   ///< positions along it
    int stride; ///< in the linear index
  };
  std::vector<Axis> axes;        ///< the axes with more than one position, network order (x first)
  std::vector<uint32_t> linear;  ///< member -> linear index
  std::vector<uint32_t> member;  ///< linear index -> member

  int pos(uint32_t m, int axis) const { return int(linear[m]) / axes[axis].stride % axes[axis].size; }
};

/// Whether the dimensions `dims` (two or more distinct ones) all lie in one
/// node: each after the first joins the node of the ones before it
/// (DimSpec::sameNode).
bool withinOneNode(const net::NetworkSpec &spec, const std::vector<int> &dims);

/// The grid `members` form on `topo`, or nothing when they are not one or
/// span fewer than two axes (one list is then the right plan).
std::optional<GroupGrid> groupGrid(const std::vector<int> &members, const net::Topology &topo);

} // namespace rapid::coll
