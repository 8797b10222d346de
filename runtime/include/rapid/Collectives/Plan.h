//===- Plan.h - Collectives as phases of steps -----------------*- C++ -*-===//
//
// A collective is planned once per instance as a flat list of steps that
// every participant walks through, chunk by chunk (chunks pipeline: each runs
// its own walk). A step is "send to these peers, then wait for this many
// messages"; the next step starts when they have arrived.
//
// Hierarchical decomposition over network dimensions (whole-machine
// collectives), one phase per involved dimension of size > 1; a dimension
// with several axes (Torus2D, Mesh2D, KingMesh, Torus3D) gets one phase per
// axis, x first, so a 2-D torus all-reduce runs rings along rows, then
// columns, instead of one long ring that zig-zags across the grid:
//   ALL_REDUCE     RS on d0, RS on d1, ..., then AG back from the last to d0
//   REDUCE_SCATTER RS on d0, d1, ...        ALL_GATHER AG on d0, d1, ...
//   ALL_TO_ALL     A2A on each dimension with the whole buffer
// A communicator group that is a grid over two or more network axes
// (GroupGrid.h) runs the same way, one phase per axis of the grid; any other
// group is one phase (or RS+AG) over its rank list, with the algorithm of
// the outermost dimension the group spans.
//
// Per-step bytes, for a phase of p ranks whose input is B bytes per chunk:
//   ring RS: p-1 steps of B/p     ring AG: p-1 steps of B (B = shard)
//   direct RS: 1 step, B/p to each peer; direct AG: 1 step, B to each peer
//   halving-doubling RS: log2 p steps of B/2, B/4 ...; AG: B, 2B, 4B ...
//   A2A direct: 1 step, B/p to each peer; A2A ring (Astra-Sim's): p(p-1)/2
//   steps of B/p to the next rank, each block forwarded k hops to the rank
//   k positions on
//   double binary tree (all-reduce only, on the last phase; earlier phases
//   fall back to the ring): chunk c uses tree c % 2; each chunk is reduced
//   up its tree and broadcast down, 3 steps, whole chunk per message:
//     gather (wait for children) / up (send to parent, wait for the result)
//     / down (send to children).
//   Tree 0 is the heap layout over positions (parent (i-1)/2), tree 1 the
//   same over reversed positions, so for even p every position is internal
//   in one tree and a leaf in the other, the property that lets two trees
//   share the links evenly.
//   NVLS (all-reduce only, one phase inside a switch that reduces and
//   multicasts): each member's link to the switch carries B(1 + 1/p) each
//   way (its whole buffer up to be reduced, its reduced share up to be
//   multicast, and the same down), one step, B(1 + 1/p)/(p-1) to each peer.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Collectives/GroupGrid.h"
#include "rapid/Trace/Graph.h"

#include "llvm/Support/Error.h"

#include <array>
#include <optional>
#include <vector>

namespace rapid::coll {

enum class Algorithm : uint8_t { Ring, Direct, HalvingDoubling, DoubleBinaryTree, OneShot, Nvls };
enum class PhaseOp : uint8_t { ReduceScatter, AllGather, AllToAll, AllReduce };
/// How a step picks peers among the p positions of its phase.
enum class Pattern : uint8_t { Next, All, Partner, TreeGather, TreeUp, TreeDown };

/// The names a system file's *-implementation lists take (not NVLS, which
/// only nvls-bandwidth turns on: it needs the switch's rate).
bool parseAlgorithm(const std::string &name, Algorithm &out);
const char *algorithmName(Algorithm a);

struct Phase {
  PhaseOp op;
  Algorithm algo;
  int dim = -1;       ///< network dimension, or -1 for the instance's group list
  int size = 1;       ///< participants p
  int axisStride = 1; ///< within the dimension (or the group's grid): stride of this axis
  int gridAxis = -1;  ///< >= 0: a phase along this axis of the group's grid
  /// The network dimension whose chunk queue the phase occupies
  /// (active-chunks-per-dimension): its own, a grid axis's, and 0 for a
  /// group's rank list, which Astra-Sim runs as one ring in dimension 0.
  int queue = 0;
};

struct Step {
  uint16_t phase = 0;
  Pattern pattern = Pattern::Next;
  uint32_t mask = 0;     ///< Partner: peer = position ^ mask
  double bytes = 0;      ///< per message
  uint32_t expected = 0; ///< messages to wait for (tree patterns: per position)
  int8_t recvOffset = 0; ///< the receiver counts the message at step + this
};

/// One position's neighbours in tree `tree` (0 or 1) of a double binary
/// tree over p positions; -1 where there is none.
struct TreeLinks {
  int parent = -1;
  int children[2] = {-1, -1};
};
TreeLinks treeLinks(int p, int tree, int pos);

/// How many messages position `pos` waits for in step st (the chunk picks
/// the tree for tree patterns).
uint32_t expectedAt(const Step &st, int p, int pos, uint32_t chunk);

/// Calls send(peerPos) for every peer position `pos` sends to in step st.
template <class F> void forEachPeer(const Step &st, int p, int pos, uint32_t chunk, F send) {
  switch (st.pattern) {
  case Pattern::Next: send(pos + 1 == p ? 0 : pos + 1); return; // (pos + 1) % p: one per message, no division
  case Pattern::Partner: send(pos ^ int(st.mask)); return;
  case Pattern::All:
    for (int k = 1; k < p; ++k)
      send((pos + k) % p);
    return;
  case Pattern::TreeGather: return;
  case Pattern::TreeUp:
    if (int parent = treeLinks(p, int(chunk % 2), pos).parent; parent >= 0)
      send(parent);
    return;
  case Pattern::TreeDown:
    for (int child : treeLinks(p, int(chunk % 2), pos).children)
      if (child >= 0)
        send(child);
    return;
  }
}

/// Algorithm per collective kind (AR, AG, RS, A2A) and dimension.
struct AlgorithmTable {
  std::array<std::vector<Algorithm>, 4> perKind;
  Algorithm pick(trace::CollKind k, int dim) const;
};

/// An inference engine's own all-reduce kernels for small messages inside
/// one NVLink node (TensorRT-LLM's and vLLM's custom all-reduce), by size:
/// one shot (every rank reads every peer's whole buffer) or two shot (a
/// direct reduce-scatter, then a direct all-gather), NCCL above `max`.
/// Bytes are the whole buffer's; 0 limits mean none.
struct CustomAllReduce {
  double max = 0;              ///< the largest buffer the kernels take; 0: the engine has none
  double maxTwoRanks = 0;      ///< the same for two ranks; 0: max
  double oneShotFourRanks = 0; ///< three or four ranks: one shot below this, two shot from it
  double oneShot = 0;          ///< five or more ranks: the same
  double startNs = 0;          ///< each call's fixed cost before data moves (kernel start, flag barrier)
  double startPerPeerNs = 0;   ///< added to startNs for each peer (the barrier's flags, one a peer)
  double bytesPerNs = 0;       ///< the rate the kernels move each GPU's data at; 0: the link's
  bool any() const { return max > 0; }
};

/// The algorithm the engine runs an all-reduce of `bytes` over `ranks` with,
/// or nothing where it hands it to NCCL. Two ranks always take one shot: a
/// two-shot moves the same bytes in two steps.
std::optional<Algorithm> customAllReduce(const CustomAllReduce &c, double bytes, int ranks);

struct Plan {
  std::vector<Phase> phases;
  std::vector<Step> steps;
  std::string problem; ///< why the plan cannot run, or empty
};

/// Whether step `s` opens a phase: the member's endpoint then prepares the
/// phase's first send (Astra-Sim's endpoint-delay). An all-reduce's turn
/// from reduce-scatter to all-gather on the same axis does not: Astra-Sim
/// runs the two as one all-reduce phase.
bool opensPhase(const Plan &plan, uint32_t s);

/// Whether the data step `s` receives is reduced into the member's own
/// before it goes on: reduce-scatter steps and a tree's gather from children.
bool reducesInput(const Plan &plan, uint32_t s);

/// dims: the axes of each network dimension ({8} for a ring, {4, 4} for a
/// 2-D torus); involved: bitmask; groupSize > 0 plans over a communicator
/// group instead, one phase per axis of `grid` when the group is one.
/// chunkBytes: what one chunk carries of comm_size (with comm_size's
/// per-collective meaning).
Plan planCollective(trace::CollKind kind, double chunkBytes,
                    const std::vector<std::vector<int>> &dims,
                    uint32_t involved, int groupSize, const AlgorithmTable &algos,
                    const GroupGrid *grid = nullptr);

} // namespace rapid::coll
