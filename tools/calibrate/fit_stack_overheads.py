#!/usr/bin/env python3
"""Fits a serving stack's host overheads to measured serving runs.

usage: fit_stack_overheads.py RAPIDC EXPERIMENTS.rapid MEASURED.csv STACK PREFIX [PARTS] [--only NAMES] [--descend [--from NAME=US,...]] [--pooled]

A serving engine's steps cost their kernels plus host work the GPU waits
for: `step_overhead` per step, `sequence_overhead` per sequence in it and
(NIM's engines) `admission_overhead` per request it takes from the queue,
and each request `request_overhead` in the front end (docs/serving.md). This
runs EXPERIMENTS.rapid (whose experiments use stack STACK) over a grid of
those, compares each run with MEASURED.csv the way test/Validation/compare.py
does, and prints the values with the lowest error over the cases whose
experiment names start with PREFIX (the fitted ones) and the figures in
PARTS (default all), then every row's error at those values. The error is
each figure's median absolute error, averaged over the figures (until
2026-11-28 the median over all figures pooled, which the figures with the
most rows near it decided; `--pooled` keeps it, as `vllm_0_5_4` was fitted).
Cases outside PREFIX and figures outside PARTS are reported, never fitted.
`--only NAMES` (rapidc's) runs just those experiments or sweeps during the
search, so that it need not simulate the held-out ones hundreds of times.
`--descend` searches by coordinate descent instead of the whole grid: from
every overhead at 0 (or as `--from NAME=US,...` says), each in turn over its
grid with the others held, until a round changes nothing (NIM's four
overheads: about 200 runs, 4 minutes; the whole grid would take hours).
One fit per stack, stated in docs/validation.md with the data it saw.

Two tables are understood, told apart by their columns:
- vLLM (test/data/validation/vllm_lambda/measured.csv, a `case` column): one
  run per experiment; duration and median TTFT, TPOT and end-to-end latency.
  About 380 runs of examples/validation/vllm_serving.rapid: a few minutes.
- NIM (test/data/validation/nim_genai_perf/measured.csv, a `concurrency`
  column): one run per sweep point of examples/validation/nim_serving.rapid;
  mean TTFT, mean ITL and requests per second, repeated runs averaged. With
  `--only h100_8b_tp1_fp16_load`, about 900 runs of 60 points: 15 minutes.
"""
import collections
import csv
import itertools
import json
import statistics
import subprocess
import sys

GRIDS = {
    "vllm": {"step_overhead": range(0, 4001, 500), "sequence_overhead": range(0, 101, 20),
             "request_overhead": range(0, 3001, 500)},
    "nim": {"step_overhead": range(0, 2001, 250), "sequence_overhead": range(0, 101, 10),
            "request_overhead": range(0, 8001, 500), "admission_overhead": range(0, 4001, 500)},
}
PARTS = {"vllm": ("duration", "ttft", "tpot", "e2e"), "nim": ("ttft", "itl", "throughput")}


def nim_name(row):
    gpu = "h100" if row["gpu"].startswith("H100") else "a100"
    return f"{gpu}_{'70b' if '70b' in row['model'] else '8b'}_tp{row['gpus']}_{row['precision']}"


def measured(path):
    """(kind, {case: {part: value}}); a case is an experiment (vLLM) or a point (NIM)."""
    table = list(csv.DictReader(open(path)))
    if "case" in table[0]:
        rows = {}
        for r in table:
            name = r["case"].replace("_llama3_", "_").replace("_tp1", "")
            rows[name] = {"duration": float(r["duration_s"]), "ttft": float(r["median_ttft_ms"]) / 1e3,
                          "tpot": float(r["median_tpot_ms"]) / 1e3, "e2e": float(r["median_latency_ms"]) / 1e3}
        return "vllm", rows
    runs = collections.defaultdict(list)
    for r in table:
        case = (nim_name(r), int(r["input_tokens"]), int(r["output_tokens"]), int(r["concurrency"]))
        runs[case].append((float(r["ttft_avg_ms"]) / 1e3, float(r["itl_avg_ms"]) / 1e3,
                           float(r["request_throughput_per_s"])))
    return "nim", {case: dict(zip(PARTS["nim"], (statistics.mean(v) for v in zip(*rs)))) for case, rs in runs.items()}


def predictions(kind, rapidc, experiments, stack, values, only):
    args = [rapidc, experiments, "--format=json", "-j2"] + (["--only", only] if only else [])
    for name, us in values.items():
        args += ["--set", f"{stack}.{name}={us} us"]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    got = {}
    for line in out.splitlines():
        o = json.loads(line)
        s, pt = o.get("serving"), o.get("point") or {}
        if not s:
            continue
        if kind == "vllm":
            got[o["experiment"]] = {"duration": s["duration_s"], "ttft": s["ttft_s"]["p50"],
                                    "tpot": s["tpot_s"]["p50"], "e2e": s["e2e_s"]["p50"]}
        elif "serving.concurrency" in pt:
            case = (o["experiment"], pt["serving.prompt"], pt["serving.output"], pt["serving.concurrency"])
            got[case] = {"ttft": s["ttft_s"]["mean"], "itl": s["tpot_s"]["mean"], "throughput": s["requests_per_s"]}
    return got


def errors(got, want, cases, parts):
    return [(c, part, got[c][part] / want[c][part] - 1) for c in cases if c in got for part in want[c] if part in parts]


def main():
    args = [a for a in sys.argv[1:] if a not in ("--descend", "--pooled")]
    pooled = "--pooled" in sys.argv
    start = []
    if "--from" in args:
        i = args.index("--from")
        start = args[i + 1].split(",")
        del args[i:i + 2]
    only = None
    if "--only" in args:
        i = args.index("--only")
        only = args[i + 1]
        del args[i:i + 2]
    rapidc, experiments, table, stack, prefix = args[:5]
    kind, want = measured(table)
    parts = args[5].split(",") if len(args) > 5 else PARTS[kind]
    name = (lambda c: c) if kind == "vllm" else (lambda c: c[0])
    fitted = [c for c in want if name(c).startswith(prefix)]
    grid = GRIDS[kind]
    memo = {}

    def cost(values):
        key = tuple(values.values())
        if key not in memo:
            got = predictions(kind, rapidc, experiments, stack, values, only)
            # Each figure's median |error|, averaged over the figures: a
            # median pooled over them all would follow the figures with the
            # most rows near it and ignore the one that fits worst.
            by_part = collections.defaultdict(list)
            for _, part, e in errors(got, want, fitted, parts):
                by_part["all" if pooled else part].append(abs(e))
            memo[key] = statistics.mean(statistics.median(v) for v in by_part.values())
        return memo[key]

    if "--descend" in sys.argv:
        # Coordinate descent from the grids' first values or --from's: each
        # overhead in turn over its whole grid, the others held, until a
        # round changes nothing (a four-overhead grid is too large to run).
        values = {k: g[0] for k, g in grid.items()}
        values.update({k: int(v) for k, v in (kv.split("=") for kv in start)})
        changed = True
        while changed:
            changed = False
            for k, g in grid.items():
                best_v = min(g, key=lambda v: (cost({**values, k: v}), v))
                changed |= best_v != values[k]
                values[k] = best_v
        med = cost(values)
    else:
        best = None
        for values in itertools.product(*grid.values()):
            values = dict(zip(grid, values))
            med = cost(values)
            if best is None or med < best[0]:
                best = (med, values)
        med, values = best
    print(f"fitted on {len(fitted)} cases ({prefix}*), {'/'.join(parts)}: " +
          ", ".join(f"{k} = {v} us" for k, v in values.items()) + f", mean of the figures' median errors {100 * med:.2f}%")
    got = predictions(kind, rapidc, experiments, stack, values, None)
    for c, part, e in errors(got, want, list(want), PARTS[kind]):
        print(f"{'fitted ' if c in fitted and part in parts else 'held out'} {c} {part}: {100 * e:+.1f}%")


main()
