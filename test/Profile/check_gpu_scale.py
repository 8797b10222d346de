#!/usr/bin/env python3
"""check_gpu_scale.py REPLAY.json FROM_COST.json TO_COST.json MEASURED_S

The hand-worked pair's only kernel is named like a GEMM without host shapes,
so --gpu moves it by the model's ratio for a 4096^3 BF16 GEMM: rank 0's
replayed compute must be MEASURED_S times TO's time over FROM's (to 1 ns or
the 6 significant digits the replay's JSON prints, whichever is looser)."""
import json
import sys

replay, src, dst = (json.load(open(p)) for p in sys.argv[1:4])
want = float(sys.argv[4]) * dst["time_s"] / src["time_s"]
got = replay["per_rank"][0]["replayed_breakdown"]["compute_s"]
if abs(got - want) > max(1e-9, 5e-6 * want):
    sys.exit(f"rank 0 computes {got} s, the model's ratio gives {want} s")
print(f"ok: {got:.9f} s = {sys.argv[4]} s x {dst['time_s'] / src['time_s']:.4f}")
