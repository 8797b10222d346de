//===- Schema.cpp - The field tables --------------------------------------===//
//
// Defaults are chosen to be what a Megatron-LM user gets when they say
// nothing (bf16, 1F1B, no recompute, FlashAttention on); hardware has no
// defaults where a wrong guess would silently change results. Sources of the
// hardware-side defaults are in docs/language.md.
//===----------------------------------------------------------------------===//
#include "rapid/Sema/Schema.h"

#include <array>

namespace rapid {
namespace {

using F = FieldType;
using B = Bound;
constexpr Dim kSize = Dim::size(), kTime = Dim::time(), kFreq = Dim::frequency(),
              kBw = Dim::bandwidth(), kRate = Dim::compute(), kNum = Dim::number();

constexpr FieldSpec kGpu[] = {
    {"sm_count", F::Integer, kNum, "", "", B::Positive, "streaming multiprocessors"},
    {"clock", F::Quantity, kFreq, "", "", B::Positive, "sustained SM clock"},
    {"peak.fp32", F::Quantity, kRate, "", "", B::Positive, "dense FP32 peak (non-tensor)"},
    {"peak.bf16", F::Quantity, kRate, "", "", B::Positive, "dense BF16 tensor-core peak"},
    {"peak.fp16", F::Quantity, kRate, "peak.bf16", "", B::Positive, "dense FP16 tensor-core peak"},
    {"peak.tf32", F::Quantity, kRate, "peak.bf16 / 2", "", B::Positive, "dense TF32 tensor-core peak"},
    {"peak.fp8", F::Quantity, kRate, "peak.bf16", "", B::Positive,
     "dense FP8 peak; without FP8 units, FP8 runs at the 16-bit rate"},
    {"registers.per_sm", F::Quantity, kSize, "256 KiB", "", B::Positive, "register file per SM"},
    {"smem.per_sm", F::Quantity, kSize, "", "", B::Positive, "shared memory / L1 per SM"},
    {"smem.bandwidth", F::Quantity, kBw, "sm_count * clock * 128 B", "", B::Positive,
     "aggregate shared-memory bandwidth (128 B per SM per clock)"},
    {"l2.capacity", F::Quantity, kSize, "", "", B::Positive, "L2 cache size"},
    {"l2.bandwidth", F::Quantity, kBw, "", "", B::Positive, "L2 bandwidth"},
    {"hbm.capacity", F::Quantity, kSize, "", "", B::Positive, "device memory size"},
    {"hbm.bandwidth", F::Quantity, kBw, "", "", B::Positive, "device memory bandwidth"},
    {"hbm.latency", F::Quantity, kTime, "500 ns", "", B::NonNegative, "device memory access latency"},
    {"launch_overhead", F::Quantity, kTime, "5 us", "", B::NonNegative, "per-kernel launch cost"},
    {"memory_reserve", F::Quantity, kSize, "2 GiB", "", B::NonNegative,
     "memory the framework, CUDA context and workspaces keep"},
    {"calibration.compute", F::Quantity, kNum, "100 %", "", B::Positive, "achieved/peak tensor FLOP/s"},
    {"calibration.hbm", F::Quantity, kNum, "100 %", "", B::Positive, "achieved/peak HBM bandwidth"},
    {"calibration.l2", F::Quantity, kNum, "100 %", "", B::Positive, "achieved/peak L2 bandwidth"},
    {"calibration.network", F::Quantity, kNum, "100 %", "", B::Positive, "achieved/peak link bandwidth"},
};

constexpr FieldSpec kModel[] = {
    {"layers", F::Integer, kNum, "", "", B::Positive, "transformer layers"},
    {"hidden", F::Integer, kNum, "", "", B::Positive, "hidden size h"},
    {"heads", F::Integer, kNum, "", "", B::Positive, "attention (query) heads"},
    {"kv_heads", F::Integer, kNum, "heads", "", B::Positive, "key/value heads (GQA, MQA = 1)"},
    {"head_dim", F::Integer, kNum, "hidden / heads", "", B::Positive, "size of one head"},
    {"ffn", F::Integer, kNum, "4 * hidden", "", B::Positive, "MLP intermediate size"},
    {"activation", F::Choice, kNum, "gelu", "gelu|swiglu|relu", B::Any, "MLP activation (swiglu: 3 matrices)"},
    {"vocab", F::Integer, kNum, "", "", B::Positive, "vocabulary size"},
    {"max_seq", F::Integer, kNum, "2048", "", B::Positive, "longest sequence (learned position table)"},
    {"norm", F::Choice, kNum, "layernorm", "layernorm|rmsnorm", B::Any, "normalisation layers"},
    {"position", F::Choice, kNum, "learned", "learned|rotary|none", B::Any, "position encoding"},
    {"tied_embeddings", F::Bool, kNum, "off", "", B::Any, "LM head shares the embedding matrix"},
    {"dropout", F::Bool, kNum, "off", "", B::Any, "attention and hidden dropout (their masks are kept for backward)"},
    {"moe.experts", F::Integer, kNum, "1", "", B::Positive, "experts per MoE layer (1 = dense)"},
    {"moe.top_k", F::Integer, kNum, "1", "", B::Positive, "experts each token is routed to"},
    {"moe.ffn", F::Integer, kNum, "ffn", "", B::Positive, "intermediate size of one expert"},
    {"moe.capacity_factor", F::Quantity, kNum, "1", "", B::Positive, "expert capacity / even share"},
    {"moe.every", F::Integer, kNum, "1", "", B::Positive, "an MoE MLP every n layers"},
};

constexpr FieldSpec kExperiment[] = {
    {"model", F::Ref, kNum, "", "model", B::Any, "the model to run"},
    {"gpu", F::Ref, kNum, "", "gpu", B::Any, "the accelerator of every rank"},
    {"network", F::Ref, kNum, "", "topology", B::Any, "the network the ranks sit on"},
    {"faults", F::Ref, kNum, "", "faults", B::Any, "link faults to apply", {}, true},
    {"training.seq", F::Integer, kNum, "", "", B::Positive, "sequence length", "training"},
    {"training.global_batch", F::Integer, kNum, "", "", B::Positive, "sequences per step", "training"},
    {"training.micro_batch", F::Integer, kNum, "1", "", B::Positive, "sequences per microbatch", "training"},
    {"training.precision", F::Choice, kNum, "bf16", "fp32|tf32|bf16|fp16|fp8", B::Any, "math precision", "training"},
    {"training.zero", F::Integer, kNum, "0", "", B::NonNegative, "ZeRO stage 0-3", "training"},
    {"training.fsdp", F::Bool, kNum, "off", "", B::Any, "FSDP full sharding (as ZeRO-3)", "training"},
    {"training.recompute", F::Choice, kNum, "none", "none|selective|full", B::Any, "activation recompute", "training"},
    {"training.schedule", F::Choice, kNum, "1f1b", "gpipe|1f1b|interleaved", B::Any, "pipeline schedule", "training"},
    {"training.virtual_stages", F::Integer, kNum, "1", "", B::Positive, "model chunks per stage (interleaved)", "training"},
    {"training.flash_attention", F::Bool, kNum, "on", "", B::Any, "fused attention kernel", "training"},
    {"training.optimizer", F::Choice, kNum, "adam", "adam|sgd", B::Any, "optimizer", "training"},
    {"training.grad_bucket", F::Quantity, kSize, "25 MiB", "", B::Positive, "DP gradient bucket size", "training"},
    {"inference.batch", F::Integer, kNum, "", "", B::Positive, "concurrent sequences", "inference"},
    {"inference.prefill", F::Integer, kNum, "", "", B::Positive, "prompt tokens per sequence", "inference"},
    {"inference.decode", F::Integer, kNum, "", "", B::Positive, "generated tokens per sequence", "inference"},
    {"inference.precision", F::Choice, kNum, "bf16", "fp32|tf32|bf16|fp16|fp8", B::Any, "math precision", "inference"},
    {"inference.kv_precision", F::Choice, kNum, "inference.precision", "fp32|bf16|fp16|fp8", B::Any,
     "KV-cache element type", "inference"},
    {"inference.flash_attention", F::Bool, kNum, "on", "", B::Any, "fused prefill attention", "inference"},
    {"inference.decode_samples", F::Integer, kNum, "16", "", B::Positive,
     "decode steps lowered and simulated; the others are interpolated", "inference"},
    {"parallel.tp", F::Integer, kNum, "1", "", B::Positive, "tensor parallel degree"},
    {"parallel.sp", F::Bool, kNum, "off", "", B::Any, "sequence parallelism with TP"},
    {"parallel.cp", F::Integer, kNum, "1", "", B::Positive, "context parallel degree"},
    {"parallel.pp", F::Integer, kNum, "1", "", B::Positive, "pipeline stages"},
    {"parallel.dp", F::Integer, kNum, "1", "", B::Positive, "data parallel degree"},
    {"parallel.ep", F::Integer, kNum, "1", "", B::Positive, "expert parallel degree (within dp)"},
    {"parallel.first_stage_layers", F::Integer, kNum, "0", "", B::NonNegative,
     "layers on the first pipeline stage (0: an even share)"},
    {"parallel.last_stage_layers", F::Integer, kNum, "0", "", B::NonNegative,
     "layers on the last pipeline stage (0: an even share)"},
};

constexpr FieldSpec kDim[] = {
    {"bandwidth", F::Quantity, kBw, "", "", B::Positive, "bandwidth of one link, one direction"},
    {"latency", F::Quantity, kTime, "", "", B::NonNegative, "latency of one hop"},
    {"oversubscription", F::Quantity, kNum, "1", "", B::AtLeastOne, "FatTree: leaf down/up bandwidth ratio"},
    {"algorithm", F::Choice, kNum, "auto", "auto|ring|direct|halving_doubling|double_binary_tree", B::Any,
     "collective algorithm in this dimension"},
};

constexpr FieldSpec kLinkFault[] = {
    {"derate", F::Quantity, kNum, "100 %", "", B::Fraction, "remaining fraction of the link's bandwidth"},
    {"extra_latency", F::Quantity, kTime, "0 s", "", B::NonNegative, "added latency (retries)"},
};

constexpr FieldSpec kRandomFault[] = {
    {"samples", F::Integer, kNum, "100", "", B::Positive, "Monte Carlo samples"},
    {"seed", F::Integer, kNum, "1", "", B::NonNegative, "random seed"},
    {"links", F::Name, kNum, "all", "", B::Any, "a dimension of the network, or all"},
    {"count", F::Integer, kNum, "1", "", B::Positive, "faulty links per sample"},
    {"mode", F::Choice, kNum, "derate", "derate|remove", B::Any, "soft faults derate links; hard ones remove them"},
    {"derate", F::Distribution, kNum, "constant(0.5)", "", B::Any, "remaining bandwidth fraction"},
    {"extra_latency", F::Quantity, kTime, "0 s", "", B::NonNegative, "added latency per faulty link"},
};

constexpr std::array<KindSchema, 6> kKinds{{
    {"gpu", "GPU", kGpu},
    {"model", "model", kModel},
    {"topology", "topology", {}},
    {"faults", "fault set", {}},
    {"experiment", "experiment", kExperiment},
    {"sweep", "sweep", {}},
}};

constexpr KindSchema kDimSchema{"dim", "dimension", kDim};
constexpr KindSchema kLinkFaultSchema{"link fault", "link fault", kLinkFault};
constexpr KindSchema kRandomFaultSchema{"random", "random fault", kRandomFault};

constexpr std::string_view kTopologyKinds[] = {"Ring",     "FullyConnected", "Switch",     "Mesh",
                                               "Mesh2D",   "Torus2D",        "Torus3D",    "HyperCube",
                                               "KingMesh", "KingMesh2D",     "FatTree"};

} // namespace

const FieldSpec *KindSchema::find(std::string_view path) const {
  for (const FieldSpec &f : fields)
    if (f.path == path)
      return &f;
  return nullptr;
}

std::vector<const FieldSpec *> KindSchema::bySuffix(std::string_view name) const {
  std::vector<const FieldSpec *> out;
  for (const FieldSpec &f : fields) {
    std::string_view p = f.path;
    if (p == name || (p.size() > name.size() && p.ends_with(name) && p[p.size() - name.size() - 1] == '.'))
      out.push_back(&f);
  }
  return out;
}

bool KindSchema::hasSection(std::string_view prefix) const {
  for (const FieldSpec &f : fields)
    if (f.path.size() > prefix.size() && f.path.starts_with(prefix) && f.path[prefix.size()] == '.')
      return true;
  return false;
}

const KindSchema *schemaFor(std::string_view kind) {
  for (const KindSchema &k : kKinds)
    if (k.kind == kind)
      return &k;
  return nullptr;
}

const KindSchema &dimSchema() { return kDimSchema; }
const KindSchema &linkFaultSchema() { return kLinkFaultSchema; }
const KindSchema &randomFaultSchema() { return kRandomFaultSchema; }
std::string_view declKindList() { return "gpu, model, topology, faults, experiment, sweep"; }
std::span<const std::string_view> topologyKinds() { return kTopologyKinds; }

} // namespace rapid
