#!/usr/bin/env python3
"""Shape sweeps for developing the kernel model, with the GPU's clock and power.

    python3 tools/calibrate/sweeps.py -o DIR       # on a GPU machine with PyTorch

calibrate.py measures each kernel in one way (20 back to back in a CUDA
graph); this script varies what the model has to explain and records the SM
clock and board power (NVML, sampled every 2 ms) over each timed window:

- `gemm_power`: the same GEMMs back to back in a graph (sustained, at the
  power limit), one at a time after 20 ms idle (a burst), and inside a
  sustained training-layer loop (10 calls profiled at the loop's end);
- `gemv`: matrix-vector products (1 x K x N) from 1 MB to 1 GB of weights, for
  the fixed start cost of a streaming kernel;
- `norm`: LayerNorm, RMSNorm and softmax forward over widths 1024-16384 and
  rows 1024-65536, for how row reductions use HBM;
- `gemm_grid`: 135 GEMMs, M 64-4096 x N 1024-28672 x K 1024-14336, 5 back to
  back in a graph (waves, split-K and stream-K on the library's side);
- `eager_ops`: the host cost of one eager PyTorch op of each common kind
  (the GPU idles: wall time per call over 2000 calls);
- `attention`: SDPA's flash (FlashAttention-2) and cuDNN backends, causal and
  not, head dims 64/128, sequences 1024-8192, forward and backward, with and
  without dropout; and decode attention (one query per sequence, GQA packed
  as flash-decoding does) over 512-16384 cached tokens.

Writes DIR/sweeps.csv: kind,case,params,mode,latency_ms,flops,bytes,sm_mhz,power_w.
"""
import argparse
import datetime
import os
import statistics
import sys
import threading
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = F = None


class Sampler:
    """SM clock (MHz), power (W) and the host's time.perf_counter() of each
    sample, by NVML every 2 ms while a window is open."""

    def __init__(self):
        self.ok = False
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nv, self.h, self.ok = pynvml, pynvml.nvmlDeviceGetHandleByIndex(0), True
        except Exception:  # noqa: BLE001 - clocks are context, not required
            pass
        self.samples, self.on, self.stop = [], False, False
        if self.ok:
            threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while not self.stop:
            if self.on:
                try:
                    self.samples.append((self.nv.nvmlDeviceGetClockInfo(self.h, self.nv.NVML_CLOCK_SM),
                                         self.nv.nvmlDeviceGetPowerUsage(self.h) / 1e3, time.perf_counter()))
                except Exception:  # noqa: BLE001
                    pass
            time.sleep(0.002)

    def __enter__(self):
        self.samples, self.on = [], True
        return self

    def __exit__(self, *exc):
        self.on = False

    def means(self):
        if not self.samples:
            return "", ""
        return (f"{statistics.mean(s[0] for s in self.samples):.0f}",
                f"{statistics.mean(s[1] for s in self.samples):.0f}")


def events_ms(fn, reps, sampler, gap_s=0.0):
    """Median ms of fn over reps; with gap_s the GPU idles between calls."""
    times = []
    with sampler:
        for _ in range(reps):
            if gap_s:
                torch.cuda.synchronize()
                time.sleep(gap_s)
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
    return statistics.median(times)


def graph_ms(fn, calls, reps, sampler):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    g.replay()
    ms = events_ms(g.replay, reps, sampler) / calls
    del g
    return ms


class Out:
    def __init__(self, path, sampler):
        self.f, self.sampler = open(path, "w"), sampler
        p = torch.cuda.get_device_properties(0)
        self.f.write(f"# rapid shape sweeps (tools/calibrate/sweeps.py)\n# date: {datetime.date.today()}\n"
                     f"# gpu: {p.name}\n# sm_count: {p.multi_processor_count}\n# cuda: {torch.version.cuda}\n"
                     f"# torch: {torch.__version__}\n# cudnn: {torch.backends.cudnn.version()}\n"
                     "kind,case,params,mode,latency_ms,flops,bytes,sm_mhz,power_w\n")

    def row(self, kind, case, params, mode, ms, flops=0.0, nbytes=0.0):
        mhz, w = self.sampler.means()
        self.f.write(f"{kind},{case},{params},{mode},{ms:.6f},{flops:.6g},{nbytes:.6g},{mhz},{w}\n")
        self.f.flush()
        print(f"{kind:10s} {case:28s} {params:34s} {mode:10s} {ms:9.4f} ms {mhz:>5s} MHz {w:>4s} W", flush=True)


BF16 = None


def gemm_power(out, s):
    shapes = [(8192, 8192, 8192), (4096, 4096, 4096), (8192, 6144, 2304), (2048, 6144, 18432),
              (2048, 24576, 6144), (4096, 4096, 14336), (16384, 4096, 11008)]
    for m, k, n in shapes:
        a, b = torch.randn(m, k, device="cuda", dtype=BF16), torch.randn(k, n, device="cuda", dtype=BF16)
        c = torch.empty(m, n, device="cuda", dtype=BF16)
        fn = lambda: torch.matmul(a, b, out=c)  # noqa: E731
        fl = 2.0 * m * n * k
        out.row("gemm_power", f"{m}x{k}x{n}", "random", "graph20", graph_ms(fn, 20, 10, s), fl)
        out.row("gemm_power", f"{m}x{k}x{n}", "random", "burst", events_ms(fn, 10, s, gap_s=0.02), fl)
        a.mul_(0.02)
        b.mul_(0.02)
        out.row("gemm_power", f"{m}x{k}x{n}", "randn*0.02", "graph20", graph_ms(fn, 20, 10, s), fl)
        del a, b, c
    # The GEMMs of a GPT-22B layer (micro-batch 4, sequence 2048) inside a
    # training loop held for 3 s: their time in 10 more calls profiled back
    # to back, still at the loop's clock. (Until 2026-11-27 this profiled one
    # call after the loop had drained, a burst: docs/validation.md.)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gaps
    import steps
    fwd, params = steps.gpt_layer(6144, 64, 0.1)
    x = torch.randn(2048, 4, 6144, device="cuda", dtype=BF16, requires_grad=True)
    grad = torch.randn_like(x)
    fb = lambda: torch.autograd.grad(fwd(x), [x] + params, grad)  # noqa: E731
    t_end = time.time() + 3
    with s:
        while time.time() < t_end:
            fb()
        kernels = gaps.per_kernel(gaps.gpu_events(fb, gaps.LOOP), gaps.LOOP)
    gemm_us = sum(us for name, (_, us) in kernels.items() if "nvjet" in name or "gemm" in name.lower())
    total_us = sum(us for _, us in kernels.values())
    flops = 3 * 2.0 * 8192 * 6144 * (3 * 6144 + 6144 + 2 * 4 * 6144)  # fwd + dgrad + wgrad of the 4 projections
    out.row("gemm_power", "gpt22b_layer_b4_s2048", f"gemm share {gemm_us / max(total_us, 1):.3f}", "loop3s",
            gemm_us / 1e3, flops)
    del fwd, params, x, grad


def gemv(out, s):
    for k, n in ((1024, 1024), (2048, 2048), (4096, 1024), (4096, 4096), (4096, 8192), (8192, 8192),
                 (4096, 28672), (16384, 16384), (8192, 57344), (16384, 32768)):
        x = torch.randn(1, k, device="cuda", dtype=BF16)
        w = torch.randn(k, n, device="cuda", dtype=BF16)
        y = torch.empty(1, n, device="cuda", dtype=BF16)
        ms = graph_ms(lambda: torch.matmul(x, w, out=y), 20, 10, s)
        out.row("gemv", f"1x{k}x{n}", "matmul", "graph20", ms, 2.0 * k * n, 2.0 * k * n)
        wt = w.t().contiguous().t()  # the weight as nn.Linear stores it (N x K, transposed view)
        ms = graph_ms(lambda: torch.matmul(x, wt, out=y), 20, 10, s)
        out.row("gemv", f"1x{k}x{n}", "linear_layout", "graph20", ms, 2.0 * k * n, 2.0 * k * n)
        del x, w, y, wt


def norms(out, s):
    for rows, width in ((1024, 4096), (4096, 4096), (16384, 4096), (65536, 4096), (8192, 1024),
                        (8192, 2048), (8192, 8192), (8192, 16384), (32768, 1024)):
        x = torch.randn(rows, width, device="cuda", dtype=BF16)
        w = torch.ones(width, device="cuda", dtype=BF16)
        bias = torch.zeros(width, device="cuda", dtype=BF16)
        nbytes = 2.0 * rows * width * 2
        for name, fn in (("layernorm", lambda: F.layer_norm(x, (width,), w, bias)),
                         ("rmsnorm", lambda: F.rms_norm(x, (width,), w, 1e-5)),
                         ("softmax", lambda: torch.softmax(x, -1)),
                         ("add", lambda: x + x)):
            out.row("norm", name, f"{rows}x{width}", "graph20", graph_ms(fn, 20, 10, s), 0, nbytes)
        del x, w, bias


def gemm_grid(out, s):
    for k in (1024, 4096, 14336):
        for n in (1024, 4096, 6144, 14336, 28672):
            b = torch.randn(k, n, device="cuda", dtype=BF16)
            for m in (64, 128, 256, 384, 512, 768, 1024, 2048, 4096):
                a = torch.randn(m, k, device="cuda", dtype=BF16)
                c = torch.empty(m, n, device="cuda", dtype=BF16)
                ms = graph_ms(lambda: torch.matmul(a, b, out=c), 5, 10, s)
                out.row("gemm_grid", f"{m}x{k}x{n}", "random", "graph5", ms, 2.0 * m * n * k)
                del a, c
            del b


def eager_ops(out, s):
    x = torch.randn(8, 1024, device="cuda", dtype=BF16)
    w = torch.randn(1024, 1024, device="cuda", dtype=BF16)
    g = torch.ones(1024, device="cuda", dtype=BF16)
    q = torch.randn(1, 8, 16, 64, device="cuda", dtype=BF16)
    ids = torch.randint(0, 1024, (8,), device="cuda")
    ops = (("add", lambda: x + x), ("mul_scalar", lambda: x * 2.0), ("linear", lambda: F.linear(x, w)),
           ("linear_bias", lambda: F.linear(x, w, g)), ("layer_norm", lambda: F.layer_norm(x, (1024,), g, g)),
           ("rms_norm", lambda: F.rms_norm(x, (1024,), g, 1e-5)), ("softmax", lambda: torch.softmax(x, -1)),
           ("silu", lambda: F.silu(x)), ("embedding", lambda: F.embedding(ids, w)),
           ("cat", lambda: torch.cat([x, x], -1)), ("transpose_contiguous", lambda: x.t().contiguous()),
           ("sdpa", lambda: F.scaled_dot_product_attention(q, q, q, is_causal=True)))
    n = 2000
    for name, fn in ops:
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        with s:
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            torch.cuda.synchronize()
            ms = (time.perf_counter() - t0) * 1e3 / n
        out.row("eager_op", name, "8x1024 bf16", "eager", ms)


def attention(out, s):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
    for b, h, sq, d in ((8, 16, 1024, 128), (4, 16, 2048, 128), (2, 16, 4096, 128), (1, 16, 8192, 128),
                        (4, 32, 2048, 64), (1, 32, 8192, 64), (4, 64, 2048, 96)):
        q, k, v = (torch.randn(b, h, sq, d, device="cuda", dtype=BF16, requires_grad=True) for _ in range(3))
        g = torch.randn(b, h, sq, d, device="cuda", dtype=BF16)
        for be, causal, drop in (("flash", True, 0.0), ("flash", False, 0.0), ("cudnn", True, 0.0),
                                 ("cudnn", False, 0.0), ("cudnn", True, 0.1)):
            try:
                with sdpa_kernel(backends[be]):
                    f = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, dropout_p=drop)  # noqa: E731
                    fwd = events_ms(lambda: [f() for _ in range(10)], 10, s) / 10

                    def fb():
                        for _ in range(5):
                            torch.autograd.grad(f(), (q, k, v), g)
                    both = events_ms(fb, 6, s) / 5
            except Exception as e:  # noqa: BLE001 - a backend may refuse a shape
                print(f"attention {be} {b}x{h}x{sq}x{d}: {type(e).__name__}: {e}", flush=True)
                continue
            fl = 4.0 * b * h * sq * sq * d * (0.5 if causal else 1.0)
            p = f"b{b} h{h} s{sq} d{d} {'causal' if causal else 'full'} p{drop}"
            out.row("attention", be, p, "fwd", fwd, fl)
            out.row("attention", be, p, "bwd", both - fwd, 2.5 * fl)
        del q, k, v, g
    # decode: one query per sequence; the 4 query heads of a KV head packed as rows (GQA 32/8)
    for b, ctx in ((1, 512), (1, 4096), (1, 16384), (8, 4096), (32, 1024), (32, 4096), (64, 8192)):
        qg = torch.randn(b, 8, 4, 128, device="cuda", dtype=BF16)
        kc, vc = (torch.randn(b, 8, ctx, 128, device="cuda", dtype=BF16) for _ in range(2))
        for be in ("flash", "cudnn"):
            try:
                with sdpa_kernel(backends[be]):
                    ms = graph_ms(lambda: F.scaled_dot_product_attention(qg, kc, vc), 20, 10, s)
            except Exception as e:  # noqa: BLE001
                print(f"decode attention {be} b{b} ctx{ctx}: {type(e).__name__}: {e}", flush=True)
                continue
            out.row("decode_attention", be, f"b{b} kv8 g4 ctx{ctx} d128", "graph20", ms, 4.0 * b * 32 * ctx * 128,
                    2.0 * b * 8 * ctx * 128 * 2)
        del qg, kc, vc


def main():
    global BF16
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--output", required=True, help="directory for sweeps.csv")
    p.add_argument("--only", default="gemm_power,gemv,norm,attention,gemm_grid,eager_ops")
    args = p.parse_args()
    if torch is None or not torch.cuda.is_available():
        sys.exit("sweeps.py: needs PyTorch with a CUDA GPU; none here")
    BF16 = torch.bfloat16
    os.makedirs(args.output, exist_ok=True)
    s = Sampler()
    out = Out(os.path.join(args.output, "sweeps.csv"), s)
    torch.manual_seed(0)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import steps
    steps.run_sections("sweeps.py", ((name, lambda fn=fn: fn(out, s)) for name, fn in (
        ("gemm_power", gemm_power), ("gemv", gemv), ("norm", norms), ("attention", attention),
        ("gemm_grid", gemm_grid), ("eager_ops", eager_ops)) if name in args.only.split(",")))
    s.stop = True


if __name__ == "__main__":
    main()
