#!/usr/bin/env python3
"""check_tp_gemm.py BEFORE.timeline AFTER.timeline FROM_COST.json TO_COST.json

Rank 0's first GEMM-named kernel in the replay's Perfetto timeline before
and after a tensor-parallel what-if: its time must change by rapid's
compute model's ratio for its new shape over its old (to 0.01 %, the
timeline's microsecond digits)."""
import json
import sys


def first_gemm(path):
    events = json.load(open(path))["traceEvents"]
    kernels = [e for e in events if e.get("ph") == "X" and e["pid"] == 0 and e["cat"] == "kernel"
               and ("gemm" in e["name"] or "cutlass" in e["name"])]
    return min(kernels, key=lambda e: e["ts"])


before, after = first_gemm(sys.argv[1]), first_gemm(sys.argv[2])
src, dst = (json.load(open(p))["time_s"] for p in sys.argv[3:5])
want = before["dur"] * dst / src
if before["name"] != after["name"] or abs(after["dur"] - want) > 1e-4 * want:
    sys.exit(f"{after['name'][:40]}: {after['dur']} us, the model's ratio gives {want} us")
print(f"ok: {before['name'][:30]} {before['dur']:.3f} us -> {after['dur']:.3f} us (x{dst / src:.4f})")
