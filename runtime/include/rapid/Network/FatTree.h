//===- FatTree.h - Fat trees of two or three tiers -------------*- C++ -*-===//
//
// One line of a FatTree dimension is a tree of switches. Ranks hang off leaf
// switches of leaf_size ranks. Without pods the leaves hang off one spine;
// with pods, the leaves of each pod_size ranks hang off a pod spine and the
// pod spines off one core switch. Every switch below the top has ONE trunk
// to its parent that stands for all its ECMP uplinks (a flow may use all of
// it). Its bandwidth is given (trunk, pod_trunk) or derived from what the
// switch has below it divided by its tier's oversubscription. Routes climb
// to the lowest switch above both ends and come back down.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Network/TopologyKinds.h"

#include "llvm/ADT/SmallVector.h"

#include <string>

namespace rapid::net {

/// A tier of switches below the top one: each has `groupSize` ranks below
/// it (the last switch of the tier may have fewer) and one trunk of `uplink`
/// to its parent.
struct FatTreeTier {
  int groupSize;
  BytesPerSecond uplink;
};

/// Whether the tree has a pod tier: pod_size set and below the line's size.
bool hasPods(const DimSpec &ds);
/// The tiers below the top switch, leaves first: one, or two with pods.
llvm::SmallVector<FatTreeTier, 2> fatTreeTiers(const DimSpec &ds);
/// What is wrong with a FatTree's leaf and pod fields, in the network
/// JSON's key names ("pod_size must be a multiple of leaf_size ..."), or ""
/// if they describe a tree. Leaf and pod sizes are the readers' (the line's
/// size when not written).
std::string fatTreeProblem(const DimSpec &ds);

/// The TopologyKind entry's behaviour (TopologyKinds.h).
int fatTreeSwitches(const DimSpec &ds);
void buildFatTree(const DimLine &line, LinkAdder add);
void routeFatTree(const DimLine &line, int from, int to, std::vector<uint32_t> &nodes);

} // namespace rapid::net
