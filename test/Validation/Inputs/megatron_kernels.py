"""Kernels of a real Megatron-LM TP8 run on A100s, from the Kineto traces of
test/data/traces/kineto/megatron_tp8_a100, as a calibration CSV.

megatron_kernels.py DIR            the fused causal softmax and apex LayerNorm:
                                   median over every call on every rank, the
                                   element count from the operator's input
megatron_kernels.py DIR --gemms    the layer's GEMMs (aten::mm, bmm, baddbmm):
                                   median per shape over rank 0's calls, the
                                   shape from the operator that launched it
megatron_kernels.py DIR --hbm      ATen's vectorised streaming kernels (a
                                   16-bit add and an FP32 exp, one call a rank
                                   each): median over the ranks, bytes from the
                                   operator's input (the A100's HBM rate)"""
import bisect
import glob
import gzip
import json
import math
import statistics
import sys

# (op of the calibration CSV, operator name, kernel name prefix)
REDUCTIONS = [("softmax", "ScaledUpperTriangMaskedSoftmax",
               "void (anonymous namespace)::scaled_upper_triang_masked_softmax_warp_forward"),
              ("layernorm", "FusedLayerNormAffineFunction", "void cuApplyLayerNorm")]


def events(path):
    return [e for e in json.load(gzip.open(path))["traceEvents"] if e.get("ph") == "X"]


def kernels_and_sizes(paths, table):
    """Each entry's kernel durations (by name prefix) over every rank, and the
    element count of its operator's first input, of the entry's input type
    where it names one (the largest, where the operator runs at several)."""
    durations = {entry[0]: [] for entry in table}
    elements = {}
    for path in paths:
        for e in events(path):
            name, cat = e.get("name", ""), e.get("cat", "").lower()
            for op, operator, kernel, *dtype in table:
                if cat == "kernel" and name.startswith(kernel):
                    durations[op].append(e["dur"])
                elif cat == "cpu_op" and name == operator and "Input Dims" in e["args"]:
                    if not dtype or e["args"].get("Input type", [""])[0] == dtype[0]:
                        elements[op] = max(elements.get(op, 0), math.prod(e["args"]["Input Dims"][0]))
    return durations, elements


def reductions(paths):
    durations, elements = kernels_and_sizes(paths, REDUCTIONS)
    print("kind,dtype,latency_ms,op,elements,pass")
    for op, _, _ in REDUCTIONS:
        print(f"pointwise,fp16,{statistics.median(durations[op]) / 1000:.4f},{op},{elements[op]},fwd")


def gemm_shape(op):
    """(batch, m, k, n) of a matrix-multiply operator, or None."""
    dims = op["args"].get("Input Dims", [])
    if op["name"] == "aten::mm":
        (m, k), (_, n) = dims[0], dims[1]
        return 1, m, k, n
    if op["name"] == "aten::bmm":
        (b, m, k), (_, _, n) = dims[0], dims[1]
        return b, m, k, n
    if op["name"] == "aten::baddbmm":
        (b, m, k), (_, _, n) = dims[1], dims[2]
        return b, m, k, n
    return None


def gemms(path):
    evs = events(path)
    ops = {}
    for e in evs:
        if e.get("cat", "").lower() == "cpu_op":
            ops.setdefault(e["tid"], []).append(e)
    for tid in ops:
        ops[tid].sort(key=lambda e: e["ts"])
    starts = {tid: [e["ts"] for e in v] for tid, v in ops.items()}
    launch = {e["args"]["correlation"]: e for e in evs
              if e.get("cat", "").lower() == "cuda_runtime" and "correlation" in e.get("args", {})}
    times = {}
    for k in evs:
        if k.get("cat", "").lower() != "kernel" or k["args"].get("correlation") not in launch:
            continue
        r = launch[k["args"]["correlation"]]
        v = ops.get(r["tid"], [])
        # The innermost operator around the launch: the latest to start that is still open.
        for i in range(bisect.bisect_right(starts.get(r["tid"], []), r["ts"]) - 1, -1, -1):
            if v[i]["ts"] + v[i]["dur"] >= r["ts"] + r["dur"]:
                if (shape := gemm_shape(v[i])) is not None:
                    times.setdefault(shape, []).append(k["dur"])
                break
    print("kind,m,k,n,batch,dtype,latency_ms")
    for (b, m, k, n), d in sorted(times.items()):
        print(f"gemm,{m},{k},{n},{b},fp16,{statistics.median(d) / 1000:.4f}")


# (name, operator, kernel name prefix, input type, bytes an element moves: read + written)
STREAMS = [("add", "aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>",
            "c10::Half", 6),
           ("exp", "aten::exp", "void at::native::vectorized_elementwise_kernel<4, at::native::exp_kernel_cuda",
            "float", 8)]


def streams(paths):
    """Kernels that read and write every element once, 16 B vectors: the HBM rate."""
    durations, elements = kernels_and_sizes(paths, [entry[:4] for entry in STREAMS])
    print("kind,dtype,bytes,flops,latency_ms")
    for op, _, _, _, per in STREAMS:
        print(f"pointwise,fp16,{elements[op] * per},0,{statistics.median(durations[op]) / 1000:.4f}")


paths = sorted(glob.glob(sys.argv[1] + "/*kineto*.json.gz"))  # not the host execution traces beside them
print("# Megatron-LM TP8 on A100-SXM4-80GB, Kineto traces (test/data/traces/kineto/README.md)")
if "--gemms" in sys.argv:
    gemms(paths[0])
elif "--hbm" in sys.argv:
    streams(paths)
else:
    reductions(paths)
