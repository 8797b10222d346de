#!/usr/bin/env python3
"""Splits a training layer's eager step into kernel time, GPU idle time and clock state.

    python3 tools/calibrate/gaps.py -o DIR        # on a GPU machine with PyTorch

steps.py times a layer's forward and forward+backward one call at a time
(CUDA events around each call) and profiles one call for its kernel table;
the timed step came out 8-20 % longer than the profiled kernels add up to
(docs/validation.md, "One layer on Hopper"). This script times the same
layers (steps.py's `gpt_layer` and `llama_layer`) every way that tells the
causes apart:

- `events`: steps.py's way: one call between CUDA events, median of 10;
- `loop`: 10 calls back to back between two events, per call (a training
  loop's steady state: no synchronisation between calls);
- `graph`: one call replayed from a CUDA graph (no host work at all);
- `kernels_one`: the profiler's kernel time of one call after a warm call
  (steps.py's kernel table);
- `kernels_loop`, `span_loop`, `idle_loop`: the same 10 back-to-back calls
  under the profiler, per call: the sum of kernel (and memcpy/memset) times,
  the span from the first one's start to the last one's end, and the time in
  that span when no kernel ran;
- `sm_mhz`, `power_w`: NVML's SM clock and board power over the `loop` window.

Writes DIR/gaps.csv (case,batch,tokens,mode,measure,value), DIR/idle.csv
(the 8 longest idle gaps of each profiled loop, with the kernels around them)
and DIR/kernels.csv (each kernel's calls and time per call of the layer, in the
profiled single call and in the profiled loop: the parts, burst against
sustained).
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import steps  # noqa: E402 - the layers and the header are steps.py's, so the runs compare
from steps import torch  # noqa: E402

LOOP = 10


def loop_ms(fn, reps=5):
    """Per-call time of LOOP calls back to back, median over reps."""
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(LOOP):
            fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / LOOP)
    return statistics.median(times)


def gpu_events(fn, calls):
    """(start_us, end_us, name) of every GPU activity while fn runs `calls` times back to back."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    prof.export_chrome_trace(path)
    with open(path) as f:
        trace = json.load(f)
    os.unlink(path)
    out = [(e["ts"], e["ts"] + e.get("dur", 0), e.get("name", "")[:80].replace(",", ";"))
           for e in trace.get("traceEvents", [])
           if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    return sorted(out)


def busy_and_gaps(events):
    """Kernel time, span and the idle gaps (length, kernel before, kernel after) of a timeline."""
    busy, gaps = sum(e - s for s, e, _ in events), []
    end, last = events[0][1], events[0][2]
    for s, e, name in events[1:]:
        if s > end:
            gaps.append((s - end, last, name))
        if e > end:
            end, last = e, name
    return busy, events[-1][1] - events[0][0], gaps


def per_kernel(events, calls):
    """{name: (launches, us)} per call of the layer."""
    rows = {}
    for s, e, name in events:
        n, us = rows.get(name, (0, 0.0))
        rows[name] = (n + 1, us + e - s)
    return {name: (n / calls, us / calls) for name, (n, us) in rows.items()}


def measure(case, batch, tokens, make, layout, out, idle, kernels, sampler):
    fwd, params = make()
    hidden = params[0].shape[0]
    shape = (tokens, batch, hidden) if layout == "sbh" else (batch, tokens, hidden)
    x = torch.randn(*shape, device=steps.DEV, dtype=steps.BF16, requires_grad=True)
    grad = torch.randn(*shape, device=steps.DEV, dtype=steps.BF16)

    def f():
        with torch.no_grad():
            return fwd(x)

    def fb():
        torch.autograd.grad(fwd(x), [x] + params, grad)

    def row(mode, measure_, value):
        out.write(f"{case},{batch},{tokens},{mode},{measure_},{value:.4f}\n")
        out.flush()
        print(f"{case:14s} b={batch} s={tokens} {mode:8s} {measure_:13s} {value:10.4f}", flush=True)

    for mode, fn in (("fwd", f), ("fwd+bwd", fb)):
        row(mode, "events", steps.median_ms(fn))
        with sampler:
            row(mode, "loop", loop_ms(fn))
        clock, power = sampler.means()
        if clock:
            row(mode, "sm_mhz", float(clock))
            row(mode, "power_w", float(power))
        try:
            row(mode, "graph", steps.graph_ms(fn))
        except Exception as e:  # noqa: BLE001 - capture can fail; the other rows stand
            print(f"gaps.py: {case} {mode}: graph capture failed: {type(e).__name__}: {e}", flush=True)
        try:
            one = gpu_events(fn, 1)
            row(mode, "kernels_one", busy_and_gaps(one)[0] / 1e3)
            with sampler:
                loop = gpu_events(fn, LOOP)
            clock, _ = sampler.means()
            if clock:
                row(mode, "sm_mhz_prof", float(clock))
            busy, span, gaps = busy_and_gaps(loop)
            for window, evs, calls in (("one", one, 1), ("loop", loop, LOOP)):
                for name, (n, us) in sorted(per_kernel(evs, calls).items(), key=lambda r: -r[1][1]):
                    kernels.write(f"{case}_b{batch}_s{tokens},{mode},{window},{name},{n:g},{us:.2f}\n")
            kernels.flush()
            row(mode, "kernels_loop", busy / 1e3 / LOOP)
            row(mode, "span_loop", span / 1e3 / LOOP)
            row(mode, "idle_loop", sum(g for g, _, _ in gaps) / 1e3 / LOOP)
            for g, before, after in sorted(gaps, reverse=True)[:8]:
                idle.write(f"{case}_b{batch}_s{tokens},{mode},{g:.1f},{before},{after}\n")
            idle.flush()
        except Exception as e:  # noqa: BLE001
            print(f"gaps.py: {case} {mode}: profiler failed: {type(e).__name__}: {e}", flush=True)
        torch.cuda.synchronize()
    del fwd, params, x, grad
    torch.cuda.empty_cache()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--output", required=True, help="directory for gaps.csv and idle.csv")
    args = p.parse_args()
    if torch is None or not torch.cuda.is_available():
        sys.exit("gaps.py: needs PyTorch with a CUDA GPU; none here")
    import sweeps  # its NVML sampler; clocks are context, so a machine without NVML still runs
    os.makedirs(args.output, exist_ok=True)
    header = steps.Out.header().replace("steps.py", "gaps.py")
    with open(os.path.join(args.output, "gaps.csv"), "w") as out, \
            open(os.path.join(args.output, "idle.csv"), "w") as idle, \
            open(os.path.join(args.output, "kernels.csv"), "w") as kernels:
        out.write(header + "case,batch,tokens,mode,measure,value\n")
        idle.write(header + "case,mode,gap_us,before,after\n")
        kernels.write(header + "case,mode,window,kernel,calls,us\n")
        torch.manual_seed(0)
        sampler = sweeps.Sampler()
        cases = (("gpt22b_layer", 1, 2048, lambda: steps.gpt_layer(6144, 64, 0.1), "sbh"),
                 ("gpt22b_layer", 4, 2048, lambda: steps.gpt_layer(6144, 64, 0.1), "sbh"),
                 ("llama8b_layer", 1, 4096, steps.llama_layer, "bsh"))
        steps.run_sections("gaps.py", ((f"{c[0]} b={c[1]}", lambda c=c: measure(*c, out, idle, kernels, sampler))
                                       for c in cases))
        sampler.stop = True


if __name__ == "__main__":
    main()
