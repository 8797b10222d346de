//===- Plan.cpp - Decompose collectives into phases and steps -------------===//

#include "rapid/Collectives/Plan.h"

#include <bit>

#include <fmt/format.h>

namespace rapid::coll {

using trace::CollKind;

bool parseAlgorithm(const std::string &name, Algorithm &out) {
  if (name == "ring")
    out = Algorithm::Ring;
  else if (name == "direct")
    out = Algorithm::Direct;
  else if (name == "halvingDoubling" || name == "halving-doubling")
    out = Algorithm::HalvingDoubling;
  else if (name == "doubleBinaryTree" || name == "double-binary-tree")
    out = Algorithm::DoubleBinaryTree;
  else if (name == "oneShot" || name == "one-shot")
    out = Algorithm::OneShot;
  else
    return false;
  return true;
}

const char *algorithmName(Algorithm a) {
  static const char *names[] = {"ring", "direct", "halvingDoubling", "doubleBinaryTree", "oneShot", "nvls"};
  return names[int(a)];
}

std::optional<Algorithm> customAllReduce(const CustomAllReduce &c, double bytes, int ranks) {
  double max = ranks <= 2 && c.maxTwoRanks > 0 ? c.maxTwoRanks : c.max;
  if (!c.any() || ranks < 2 || bytes > max) return std::nullopt;
  if (ranks == 2) return Algorithm::OneShot; // a two-shot would move the same bytes in two steps
  return bytes < (ranks <= 4 ? c.oneShotFourRanks : c.oneShot) ? Algorithm::OneShot : Algorithm::Direct;
}

static int kindSlot(CollKind k) {
  switch (k) {
  case CollKind::AllReduce: return 0;
  case CollKind::AllGather: return 1;
  case CollKind::ReduceScatter: return 2;
  default: return 3;
  }
}

Algorithm AlgorithmTable::pick(CollKind k, int dim) const {
  const auto &list = perKind[kindSlot(k)];
  if (list.empty()) // no system file says: rings, and direct all-to-all as NCCL sends it
    return kindSlot(k) == 3 ? Algorithm::Direct : Algorithm::Ring;
  return list[std::min<size_t>(size_t(std::max(dim, 0)), list.size() - 1)];
}

/// Appends one phase's steps; `bytes` is the phase's per-chunk input (the
/// shard for all-gather).
static void appendPhase(Plan &plan, Phase phase, double bytes) {
  int p = phase.size;
  // Halving-doubling pairs ranks by bit (trees make only all-reduces and
  // the readers reject them for the other kinds).
  if (phase.algo == Algorithm::HalvingDoubling && !std::has_single_bit(unsigned(p)) && plan.problem.empty())
    plan.problem = fmt::format("halvingDoubling pairs ranks by bit and needs a power-of-two number of them, but a "
                               "phase {} has {}",
                               phase.dim >= 0 ? fmt::format("in dimension {}", phase.dim) : std::string("of the group"), p);
  uint16_t index = uint16_t(plan.phases.size());
  plan.phases.push_back(phase);
  auto add = [&](Pattern pat, uint32_t mask, double b, uint32_t expected) {
    plan.steps.push_back(Step{index, pat, mask, b, expected});
  };
  bool rs = phase.op == PhaseOp::ReduceScatter;
  if (phase.op == PhaseOp::AllReduce && phase.algo == Algorithm::OneShot) {
    // Every rank sends its whole chunk to every peer and reduces what it
    // receives: the custom all-reduce kernels of TensorRT-LLM and vLLM for
    // small messages inside one NVLink node.
    add(Pattern::All, 0, bytes, uint32_t(p - 1));
  } else if (phase.op == PhaseOp::AllReduce && phase.algo == Algorithm::Nvls) {
    // The switch reduces and multicasts: a member's link carries its buffer
    // and its reduced share, B(1 + 1/p), each way (Plan.h), spread over its
    // peers' paths through the switch so that every link sees that much.
    add(Pattern::All, 0, bytes * (1 + 1.0 / p) / (p - 1), uint32_t(p - 1));
  } else if (phase.op == PhaseOp::AllReduce) {
    plan.steps.push_back(Step{index, Pattern::TreeGather, 0, bytes, 0, 0});
    plan.steps.push_back(Step{index, Pattern::TreeUp, 0, bytes, 0, -1});
    plan.steps.push_back(Step{index, Pattern::TreeDown, 0, bytes, 0, -1});
  } else if (phase.op == PhaseOp::AllToAll && phase.algo == Algorithm::Ring) {
    // Astra-Sim's ring all-to-all: the block for the rank k hops on travels
    // k hops, forwarded one hop per step: p(p-1)/2 steps of B/p.
    for (int k = 0; k < p * (p - 1) / 2; ++k)
      add(Pattern::Next, 0, bytes / p, 1);
  } else if (phase.op == PhaseOp::AllToAll || phase.algo == Algorithm::Direct) {
    add(Pattern::All, 0, rs || phase.op == PhaseOp::AllToAll ? bytes / p : bytes, uint32_t(p - 1));
  } else if (phase.algo == Algorithm::Ring) {
    for (int k = 0; k < p - 1; ++k)
      add(Pattern::Next, 0, rs ? bytes / p : bytes, 1);
  } else {
    int rounds = std::countr_zero(unsigned(p));
    for (int k = 0; k < rounds; ++k)
      if (rs)
        add(Pattern::Partner, uint32_t(p >> (k + 1)), bytes / double(2u << k), 1);
      else
        add(Pattern::Partner, uint32_t(1u << k), bytes * double(1u << k), 1);
  }
}

/// The phases' places in order: the group, or each involved axis of each
/// involved dimension.
static std::vector<Phase> phaseLine(CollKind kind, const std::vector<std::vector<int>> &dims,
                                    uint32_t involved, int groupSize,
                                    const AlgorithmTable &algos, const GroupGrid *grid) {
  std::vector<Phase> line;
  if (groupSize > 0 && grid) {
    for (int a = 0; a < int(grid->axes.size()); ++a) {
      const GroupGrid::Axis &ax = grid->axes[a];
      line.push_back(Phase{PhaseOp::AllToAll, algos.pick(kind, ax.dim), -1, ax.size, ax.stride, a, ax.dim});
    }
    return line;
  }
  if (groupSize > 0) {
    // One phase over the group's ranks, with the algorithm of the outermost
    // dimension the group spans (a group inside one dimension: that one's).
    int outer = involved ? 31 - std::countl_zero(involved) : 0;
    if (groupSize > 1)
      line.push_back(Phase{PhaseOp::AllToAll, algos.pick(kind, outer), -1, groupSize});
    return line;
  }
  for (int d = 0; d < int(dims.size()); ++d) {
    int stride = 1;
    for (int extent : dims[d]) {
      if ((involved >> d & 1) && extent > 1)
        line.push_back(Phase{PhaseOp::AllToAll, algos.pick(kind, d), d, extent, stride, -1, d});
      stride *= extent;
    }
  }
  return line;
}

Plan planCollective(CollKind kind, double chunkBytes, const std::vector<std::vector<int>> &dims,
                    uint32_t involved, int groupSize, const AlgorithmTable &algos,
                    const GroupGrid *grid) {
  std::vector<Phase> line = phaseLine(kind, dims, involved, groupSize, algos, grid);
  Plan plan;
  double bytes = chunkBytes;
  // Each phase's input is the previous phase's output: RS divides it by p,
  // AG multiplies it by p, A2A keeps it.
  auto run = [&](Phase ph, PhaseOp op) {
    ph.op = op;
    appendPhase(plan, ph, bytes);
    if (op == PhaseOp::ReduceScatter)
      bytes /= ph.size;
    else if (op == PhaseOp::AllGather)
      bytes *= ph.size;
  };
  bool reduce = kind == CollKind::AllReduce || kind == CollKind::ReduceScatter;
  PhaseOp up = reduce ? PhaseOp::ReduceScatter
               : kind == CollKind::AllGather ? PhaseOp::AllGather
                                             : PhaseOp::AllToAll;
  // A tree, one shot or NVLS on the last phase of an all-reduce reduces and
  // broadcasts in one phase; the phases before it still reduce-scatter and
  // all-gather.
  Algorithm last = line.empty() ? Algorithm::Ring : line.back().algo;
  bool tree = kind == CollKind::AllReduce && (last == Algorithm::DoubleBinaryTree || last == Algorithm::OneShot ||
                                              last == Algorithm::Nvls);
  for (size_t i = 0; i < line.size(); ++i)
    run(line[i], tree && i + 1 == line.size() ? PhaseOp::AllReduce : up);
  if (kind == CollKind::AllReduce)
    for (size_t i = line.size() - (tree ? 1 : 0); i-- > 0;)
      run(line[i], PhaseOp::AllGather);
  return plan;
}

bool opensPhase(const Plan &plan, uint32_t s) {
  if (s == 0)
    return true;
  const Step &st = plan.steps[s], &prev = plan.steps[s - 1];
  if (st.phase == prev.phase)
    return false;
  const Phase &a = plan.phases[prev.phase], &b = plan.phases[st.phase];
  bool turn = a.op == PhaseOp::ReduceScatter && b.op == PhaseOp::AllGather && a.dim == b.dim &&
              a.gridAxis == b.gridAxis && a.axisStride == b.axisStride;
  return !turn;
}

bool reducesInput(const Plan &plan, uint32_t s) {
  const Step &st = plan.steps[s];
  PhaseOp op = plan.phases[st.phase].op;
  return op == PhaseOp::ReduceScatter || st.pattern == Pattern::TreeGather ||
         (op == PhaseOp::AllReduce && st.pattern == Pattern::All);
}

TreeLinks treeLinks(int p, int tree, int pos) {
  // Tree 1 is tree 0 drawn over reversed positions.
  auto toPos = [&](int i) { return tree ? p - 1 - i : i; };
  int i = toPos(pos);
  TreeLinks t;
  if (i > 0)
    t.parent = toPos((i - 1) / 2);
  for (int k = 0; k < 2; ++k)
    if (2 * i + 1 + k < p)
      t.children[k] = toPos(2 * i + 1 + k);
  return t;
}

uint32_t expectedAt(const Step &st, int p, int pos, uint32_t chunk) {
  if (st.pattern == Pattern::TreeGather) {
    TreeLinks t = treeLinks(p, int(chunk % 2), pos);
    return uint32_t(t.children[0] >= 0) + uint32_t(t.children[1] >= 0);
  }
  if (st.pattern == Pattern::TreeUp)
    return treeLinks(p, int(chunk % 2), pos).parent >= 0 ? 1 : 0;
  return st.pattern == Pattern::TreeDown ? 0 : st.expected;
}

} // namespace rapid::coll
