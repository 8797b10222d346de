//===- Enums.h - The closed choices of the language ------------*- C++ -*-===//
//
// Each enum a field can take, with the names the language spells it by (in
// enumerator order). `enumNames<E>()` is what Sema offers and checks,
// `nameOf(e)` what printers write, `parseEnum<E>(name)` the way back.
//===----------------------------------------------------------------------===//
#pragma once

#include "rapid/Support/DType.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace rapid {

/// The kinds of declaration a file can hold.
enum class DeclKind : uint8_t { Gpu, Model, Topology, Faults, Experiment, Sweep, Stack };

enum class Activation : uint8_t { Gelu, SwiGlu, Relu };
enum class Norm : uint8_t { LayerNorm, RmsNorm };
enum class Position : uint8_t { Learned, Rotary, None, Alibi };
enum class Recompute : uint8_t { None, Selective, Full };
enum class Schedule : uint8_t { GPipe, OneFOneB, Interleaved };
enum class Optimizer : uint8_t { Adam, Sgd };
/// How a collective runs inside one network dimension. Auto is the
/// runtime's choice (the ring today).
enum class CollectiveAlgorithm : uint8_t { Auto, Ring, Direct, HalvingDoubling, DoubleBinaryTree, OneShot };
/// Where the tensor cores read their operands: registers each warp loads
/// from shared memory (mma.sync: Volta to Ada, CDNA's MFMA), or shared
/// memory read once per warpgroup (wgmma on Hopper, tcgen05 on Blackwell).
enum class TensorCoreOperands : uint8_t { Registers, Shared };
/// The fused attention kernel a stack runs: FlashAttention-2 (mma.sync from
/// registers, a block's softmax between its matrix products) or
/// FlashAttention-3 / cuDNN's Hopper kernel (wgmma from shared memory, the
/// softmax of one warpgroup overlapping the matrix products of another).
enum class AttentionKernel : uint8_t { Flash2, Flash3 };
/// The protocol a stack's collective library moves data with (NCCL's LL,
/// LL128, Simple; auto as NCCL picks per collective); none: the network
/// alone, no library costs.
enum class CollectiveProtocol : uint8_t { None, LL, LL128, Simple, Auto };
/// Which kernels a stack replays from captured CUDA graphs.
enum class CudaGraphs : uint8_t { None, Decode, All };
/// How a serving engine batches requests (docs/serving.md).
enum class ServeScheduler : uint8_t { Static, Continuous, Chunked };
/// When a replayed profile's ranks enter the step (docs/trace-replay.md).
enum class ReplayStart : uint8_t { Profiled, Together };
/// A replayed profile's collectives: their profiled times, or simulated on
/// the experiment's network.
enum class ReplayCollectives : uint8_t { Measured, Network };
/// How a serving engine's front end (HTTP, tokenization) passes requests:
/// side by side in a process of its own, one at a time in the engine's
/// (vLLM before 0.6), or one at a time in its own (one event loop).
enum class Frontend : uint8_t { Separate, Shared, Serial };
/// What a preempted request's KV cache becomes.
enum class ServePreemption : uint8_t { Recompute, Swap };
/// When a request takes its KV-cache blocks: as its tokens are computed, or
/// all of its prompt and output at admission (never preempted).
enum class ServeAdmission : uint8_t { Grow, Reserve };
/// How requests are spread over data-parallel replicas.
enum class ServeRouter : uint8_t { RoundRobin, LeastLoaded };
/// Soft faults derate links; hard ones remove them.
enum class FaultMode : uint8_t { Derate, Remove };
/// After TP and CP, which of DP and PP varies faster over the rank numbers.
enum class RankOrder : uint8_t { DpFirst, PpFirst };

template <class E> struct EnumInfo;
template <> struct EnumInfo<DeclKind> {
  static constexpr std::string_view names[] = {"gpu", "model", "topology", "faults", "experiment", "sweep", "stack"};
};
template <> struct EnumInfo<DType> {
  static constexpr std::string_view names[] = {"fp32", "tf32", "bf16", "fp16", "fp8"};
};
template <> struct EnumInfo<Activation> {
  static constexpr std::string_view names[] = {"gelu", "swiglu", "relu"};
};
template <> struct EnumInfo<Norm> {
  static constexpr std::string_view names[] = {"layernorm", "rmsnorm"};
};
template <> struct EnumInfo<Position> {
  static constexpr std::string_view names[] = {"learned", "rotary", "none", "alibi"};
};
template <> struct EnumInfo<Recompute> {
  static constexpr std::string_view names[] = {"none", "selective", "full"};
};
template <> struct EnumInfo<Schedule> {
  static constexpr std::string_view names[] = {"gpipe", "1f1b", "interleaved"};
};
template <> struct EnumInfo<Optimizer> {
  static constexpr std::string_view names[] = {"adam", "sgd"};
};
template <> struct EnumInfo<CollectiveAlgorithm> {
  static constexpr std::string_view names[] = {"auto", "ring", "direct", "halving_doubling", "double_binary_tree", "one_shot"};
};
template <> struct EnumInfo<TensorCoreOperands> {
  static constexpr std::string_view names[] = {"registers", "shared"};
};
template <> struct EnumInfo<AttentionKernel> {
  static constexpr std::string_view names[] = {"flash2", "flash3"};
};
template <> struct EnumInfo<CollectiveProtocol> {
  static constexpr std::string_view names[] = {"none", "ll", "ll128", "simple", "auto"};
};
template <> struct EnumInfo<CudaGraphs> {
  static constexpr std::string_view names[] = {"none", "decode", "all"};
};
template <> struct EnumInfo<ServeScheduler> {
  static constexpr std::string_view names[] = {"static", "continuous", "chunked"};
};
template <> struct EnumInfo<Frontend> {
  static constexpr std::string_view names[] = {"separate", "shared", "serial"};
};
template <> struct EnumInfo<ServePreemption> {
  static constexpr std::string_view names[] = {"recompute", "swap"};
};
template <> struct EnumInfo<ServeAdmission> {
  static constexpr std::string_view names[] = {"grow", "reserve"};
};
template <> struct EnumInfo<ServeRouter> {
  static constexpr std::string_view names[] = {"round_robin", "least_loaded"};
};
template <> struct EnumInfo<ReplayStart> {
  static constexpr std::string_view names[] = {"profiled", "together"};
};
template <> struct EnumInfo<ReplayCollectives> {
  static constexpr std::string_view names[] = {"measured", "network"};
};
template <> struct EnumInfo<FaultMode> {
  static constexpr std::string_view names[] = {"derate", "remove"};
};
template <> struct EnumInfo<RankOrder> {
  static constexpr std::string_view names[] = {"dp_first", "pp_first"};
};

template <class E> constexpr std::span<const std::string_view> enumNames() { return EnumInfo<E>::names; }

template <class E>
  requires(!std::is_same_v<E, DType>) // DType has its own nameOf in DType.h
constexpr std::string_view nameOf(E e) {
  return EnumInfo<E>::names[size_t(e)];
}

template <class E> constexpr std::optional<E> parseEnum(std::string_view name) {
  std::span<const std::string_view> names = enumNames<E>();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return E(i);
  return std::nullopt;
}

} // namespace rapid
