"""Megatron-LM's fused softmax and LayerNorm kernels on A100s, from the Kineto
traces of test/data/traces/kineto/megatron_tp8_a100 (a real TP8 run), as a
calibration CSV: per kernel, the median duration over every call on every
rank, and its element count from the operator's input shape.

megatron_kernels.py DIR > kernels.csv"""
import glob
import gzip
import json
import math
import statistics
import sys

# (op of the calibration CSV, operator name, kernel name prefix)
KERNELS = [("softmax", "ScaledUpperTriangMaskedSoftmax", "void (anonymous namespace)::scaled_upper_triang_masked_softmax_warp_forward"),
           ("layernorm", "FusedLayerNormAffineFunction", "void cuApplyLayerNorm")]

durations = {op: [] for op, _, _ in KERNELS}
elements = {}
for path in sorted(glob.glob(sys.argv[1] + "/*.json.gz")):
    for e in json.load(gzip.open(path))["traceEvents"]:
        name, cat = e.get("name", ""), e.get("cat", "").lower()
        for op, operator, kernel in KERNELS:
            if cat == "kernel" and name.startswith(kernel):
                durations[op].append(e["dur"])
            elif cat == "cpu_op" and name == operator:
                elements[op] = math.prod(e["args"]["Input Dims"][0])
print("# Megatron-LM TP8 on A100-SXM4-80GB, Kineto traces (test/data/traces/kineto/README.md);")
print("# median kernel time over every call on every rank (test/Validation/Inputs/megatron_kernels.py)")
print("kind,dtype,latency_ms,op,elements,pass")
for op, _, _ in KERNELS:
    d = durations[op]
    print(f"pointwise,fp16,{statistics.median(d) / 1000:.4f},{op},{elements[op]},fwd")
    print(f"# {op}: {len(d)} calls, {min(d)}-{max(d)} us", file=sys.stderr)
