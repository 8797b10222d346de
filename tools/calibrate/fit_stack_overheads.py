#!/usr/bin/env python3
"""Fits a serving stack's host overheads to measured serving runs.

usage: fit_stack_overheads.py RAPIDC EXPERIMENTS.rapid MEASURED.csv STACK PREFIX [PARTS]
(about 380 runs of EXPERIMENTS.rapid: a few minutes for the vLLM table)

A serving engine's steps cost their kernels plus host work the GPU waits
for: `step_overhead` per step and `sequence_overhead` per sequence in it,
and each request `request_overhead` in the front end (docs/serving.md). This
runs EXPERIMENTS.rapid (whose experiments use stack STACK) over a grid of the
three (GRID), compares each run with MEASURED.csv the way
test/Validation/compare.py `vllm` does (duration, median TTFT, TPOT and
end-to-end latency per case), and prints the pair with the lowest median
absolute error over the cases whose experiment names start with PREFIX
(the fitted ones) and the figures in PARTS (default all four),
then every row's error at that pair. Cases outside PREFIX and figures
outside PARTS are reported, never fitted. One fit per stack, stated in
docs/validation.md with the data it saw.
"""
import csv
import itertools
import json
import statistics
import subprocess
import sys


GRID = {"step_overhead": range(0, 4001, 500), "sequence_overhead": range(0, 101, 20),
        "request_overhead": range(0, 3001, 500)}


def predictions(rapidc, experiments, stack, values):
    args = [rapidc, experiments, "--format=json", "-j2"]
    for name, us in values.items():
        args += ["--set", f"{stack}.{name}={us} us"]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    got = {}
    for line in out.splitlines():
        o = json.loads(line)
        s = o["serving"]
        got[o["experiment"]] = {"duration": s["duration_s"], "ttft": s["ttft_s"]["p50"],
                                "tpot": s["tpot_s"]["p50"], "e2e": s["e2e_s"]["p50"]}
    return got


def measured(path):
    rows = {}
    for r in csv.DictReader(open(path)):
        name = r["case"].replace("_llama3_", "_").replace("_tp1", "")
        rows[name] = {"duration": float(r["duration_s"]), "ttft": float(r["median_ttft_ms"]) / 1e3,
                      "tpot": float(r["median_tpot_ms"]) / 1e3, "e2e": float(r["median_latency_ms"]) / 1e3}
    return rows


def errors(got, want, names, parts=("duration", "ttft", "tpot", "e2e")):
    return [(n, part, got[n][part] / want[n][part] - 1) for n in names for part in want[n] if part in parts]


def main():
    rapidc, experiments, table, stack, prefix = sys.argv[1:6]
    parts = sys.argv[6].split(",") if len(sys.argv) > 6 else ["duration", "ttft", "tpot", "e2e"]
    want = measured(table)
    fitted = [n for n in want if n.startswith(prefix)]
    best = None
    for values in itertools.product(*GRID.values()):
        values = dict(zip(GRID, values))
        got = predictions(rapidc, experiments, stack, values)
        med = statistics.median(abs(e) for *_, e in errors(got, want, fitted, parts))
        if best is None or med < best[0]:
            best = (med, values)
    med, values = best
    print(f"fitted on {len(fitted)} cases ({prefix}*), {'/'.join(parts)}: " +
          ", ".join(f"{k} = {v} us" for k, v in values.items()) + f", median error {100 * med:.1f}%")
    got = predictions(rapidc, experiments, stack, values)
    for n, part, e in errors(got, want, list(want)):
        print(f"{'fitted ' if n in fitted and part in parts else 'held out'} {n} {part}: {100 * e:+.1f}%")


main()
