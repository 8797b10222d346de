#!/usr/bin/env python3
"""Times how a GPU's clock settles under sustained work: each call's time and the SM clock over seconds.

    python3 tools/calibrate/power.py -o DIR        # on a GPU machine with PyTorch

A GPU at its board power limit lowers its SM clock under dense work, and a
training loop holds that limit (docs/validation.md, "The GEMM rate depends on
the power state"). This script measures the way there: after `--idle` seconds
of idle it runs one kind of work back to back for `--seconds`, times every
call with CUDA events, and samples NVML's SM clock and board power every
2 ms. Each workload is timed the same way:

- `gemm8192`: 8192^3 BF16 products (torch.matmul), N(0, 1) operands;
- `gemm8192_small`: the same with operands scaled by 0.02 (fewer toggling
  bits: does the data move the power state?);
- `gemm4096`: 4096^3 products (0.17 ms each: short kernels, same density);
- `layer_b4`: a GPT-22B layer's forward + backward at micro-batch 4
  (steps.py's `gpt_layer`), the mix a training step runs;
- `gemv`: 1 x 8192 x 57344 products (940 MB of weights a call: HBM-bound, as
  decode is);
- `copy`: 1 GiB device-to-device copies (HBM only, no math);
- `mix_half`, `mix_light`: what a serving engine alternates, a prefill-sized
  product (4096 x 4096 x 14336, about 0.6 ms) then 20 or 100 decode-sized
  ones (1 x 4096 x 14336, HBM-bound): does a GEMM between memory-bound steps
  run at the boost clock or at the limit's? `mix_0`, `mix_2`, `mix_5`,
  `mix_10`: the same with 0 to 10, the tensor cores' duty from 100 % down.

Writes DIR/power.csv: workload, bin start (ms after the first call), calls
that started in the bin, their mean time (ms), and the bin's mean SM clock
(MHz) and power (W), in bins of `--bin` ms, with the GPU and versions in `#`
lines on top.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import steps  # noqa: E402 - its layer and its header
from steps import torch  # noqa: E402


def workloads():
    bf16, dev = steps.BF16, steps.DEV

    def gemm(n, scale):
        a = torch.randn(n, n, device=dev, dtype=bf16) * scale
        b = torch.randn(n, n, device=dev, dtype=bf16) * scale
        c = torch.empty(n, n, device=dev, dtype=bf16)
        return lambda: torch.matmul(a, b, out=c)

    def layer():
        fwd, params = steps.gpt_layer(6144, 64, 0.1)
        x = torch.randn(2048, 4, 6144, device=dev, dtype=bf16, requires_grad=True)
        grad = torch.randn_like(x)
        return lambda: torch.autograd.grad(fwd(x), [x] + params, grad)

    def gemv():
        x = torch.randn(1, 8192, device=dev, dtype=bf16)
        w = torch.randn(8192, 57344, device=dev, dtype=bf16)
        y = torch.empty(1, 57344, device=dev, dtype=bf16)
        return lambda: torch.matmul(x, w, out=y)

    def copy():
        src = torch.empty(1 << 30, device=dev, dtype=torch.uint8)
        dst = torch.empty_like(src)
        return lambda: dst.copy_(src)

    def mix(decodes):
        a = torch.randn(4096, 4096, device=dev, dtype=bf16)
        w = torch.randn(4096, 14336, device=dev, dtype=bf16)
        c = torch.empty(4096, 14336, device=dev, dtype=bf16)
        x, y = torch.randn(1, 4096, device=dev, dtype=bf16), torch.empty(1, 14336, device=dev, dtype=bf16)

        def step():
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            torch.matmul(a, w, out=c)
            e.record()
            step.inner.append((s, e))
            for _ in range(decodes):
                torch.matmul(x, w, out=y)
        step.inner = []  # the prefill product's own times, reported as NAME.prefill
        return step

    return (("gemm8192", lambda: gemm(8192, 1.0)), ("gemm8192_small", lambda: gemm(8192, 0.02)),
            ("gemm4096", lambda: gemm(4096, 1.0)), ("layer_b4", layer), ("gemv", gemv), ("copy", copy),
            ("mix_half", lambda: mix(20)), ("mix_light", lambda: mix(100)),
            ("mix_0", lambda: mix(0)), ("mix_2", lambda: mix(2)), ("mix_5", lambda: mix(5)),
            ("mix_10", lambda: mix(10)))


def binned(calls, clocks, width):
    """CSV rows `t_ms,calls,mean_ms,sm_mhz,power_w` of calls (start ms, duration ms) and clock
    samples (ms, MHz, W), in bins of `width` ms by start; a bin without samples leaves them empty."""
    bins, samples = {}, {}
    for start, ms in calls:
        bins.setdefault(int(start // width), []).append(ms)
    for t, mhz, watts in clocks:
        samples.setdefault(int(t // width), []).append((mhz, watts))
    rows = []
    for b in sorted(bins):
        sm = samples.get(b, [])
        mhz = f"{statistics.mean(x[0] for x in sm):.0f}" if sm else ""
        watts = f"{statistics.mean(x[1] for x in sm):.0f}" if sm else ""
        rows.append(f"{b * width:.1f},{len(bins[b])},{statistics.mean(bins[b]):.4f},{mhz},{watts}")
    return rows


def measure(name, fn, clock, args, out):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    time.sleep(args.idle)
    starts, ends = [], []
    with clock:
        first = torch.cuda.Event(enable_timing=True)
        first.record()
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < args.seconds:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            starts.append(s)
            ends.append(e)
            if len(ends) > 2:  # the host two calls ahead at most: the GPU never idles, and host time lines up with its
                ends[-3].synchronize()
        torch.cuda.synchronize()
    clocks = [((t - t0) * 1e3, mhz, watts) for mhz, watts, t in clock.samples]
    series = [(name, list(zip(starts, ends)))]
    if hasattr(fn, "inner"):
        series.append((name + ".prefill", fn.inner[3:]))  # the warm-up calls' first
    for label, pairs in series:
        calls = [(first.elapsed_time(s), s.elapsed_time(e)) for s, e in pairs]
        out.writelines(f"{label},{row}\n" for row in binned(calls, clocks, args.bin))
    out.flush()
    times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    n = max(1, len(times) // 10)
    print(f"{name:16s} {len(times):6d} calls: first tenth {statistics.mean(times[:n]):.4f} ms, "
          f"last tenth {statistics.mean(times[-n:]):.4f} ms", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--output", required=True, help="directory for power.csv")
    p.add_argument("--seconds", type=float, default=6.0, help="how long each workload runs")
    p.add_argument("--idle", type=float, default=2.0, help="idle seconds before each workload")
    p.add_argument("--bin", type=float, default=20.0, help="bin width in ms")
    p.add_argument("--only", default="", help="comma-separated workload names")
    args = p.parse_args()
    if torch is None or not torch.cuda.is_available():
        sys.exit("power.py: needs PyTorch with a CUDA GPU; none here")
    import sweeps  # its NVML sampler
    os.makedirs(args.output, exist_ok=True)
    clock = sweeps.Sampler()
    if not clock.ok:
        print("power.py: no NVML: clock and power columns stay empty", flush=True)
    with open(os.path.join(args.output, "power.csv"), "w") as out:
        out.write(steps.Out.header().replace("steps.py", "power.py") +
                  f"# each workload: {args.idle} s idle, then {args.seconds} s back to back; bins of {args.bin} ms\n"
                  "workload,t_ms,calls,mean_ms,sm_mhz,power_w\n")
        torch.manual_seed(0)
        steps.run_sections("power.py", ((name, lambda name=name, make=make: measure(name, make(), clock, args, out))
                                        for name, make in workloads()
                                        if not args.only or name in args.only.split(",")))
    clock.stop = True


if __name__ == "__main__":
    main()
