#!/usr/bin/env python3
"""check_tp_gemm.py BEFORE.timeline AFTER.timeline FROM_COST.json TO_COST.json [KERNEL]

Rank 0's first kernel named KERNEL (default: the first GEMM-named one) in
the replay's Perfetto timeline before and after a tensor-parallel what-if:
its time must change by rapid's compute model's ratio for its new shape over
its old (to 0.01 %, the timeline's microsecond digits)."""
import json
import sys


def first_gemm(path):
    events = json.load(open(path))["traceEvents"]
    named = (lambda n: n == sys.argv[5]) if len(sys.argv) > 5 else (lambda n: "gemm" in n or "cutlass" in n)
    kernels = [e for e in events if e.get("ph") == "X" and e["pid"] == 0 and e["cat"] == "kernel" and named(e["name"])]
    return min(kernels, key=lambda e: e["ts"])


before, after = first_gemm(sys.argv[1]), first_gemm(sys.argv[2])
src, dst = (json.load(open(p))["time_s"] for p in sys.argv[3:5])
want = before["dur"] * dst / src
if before["name"] != after["name"] or abs(after["dur"] - want) > 1e-4 * want:
    sys.exit(f"{after['name'][:40]}: {after['dur']} us, the model's ratio gives {want} us")
print(f"ok: {before['name'][:30]} {before['dur']:.3f} us -> {after['dur']:.3f} us (x{dst / src:.4f})")
