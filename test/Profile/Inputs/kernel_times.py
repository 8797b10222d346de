#!/usr/bin/env python3
"""kernel_times.py TIMELINE NAME...: rank 0's first kernel of each NAME in a
replay's Perfetto timeline, as `NAME DURATION_US`."""
import json
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
for name in sys.argv[2:]:
    kernels = [e for e in events if e.get("ph") == "X" and e["pid"] == 0 and e["cat"] == "kernel" and e["name"] == name]
    print(f"{name} {min(kernels, key=lambda e: e['ts'])['dur']:.3f}" if kernels else f"{name} missing")
