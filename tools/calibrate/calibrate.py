#!/usr/bin/env python3
"""Measures the kernels rapid's compute model costs, on the GPU of this machine.

    python3 tools/calibrate/calibrate.py -o h100.csv          # on a GPU machine with PyTorch
    rapidc --calibrate h100.csv --hardware h100_sxm_80gb      # fit and compare (docs/model.md)

Writes one CSV row per kernel: GEMMs of training and decode shapes (torch.matmul,
cuBLAS), memory-bound copies of several sizes (the HBM rate), the fused attention
kernel forward and backward (scaled_dot_product_attention on its flash backend),
and the pointwise kernels rapid's lowering emits (LayerNorm, GELU, softmax forward
and backward, the fused Adam step), with the GPU, driver, CUDA, PyTorch versions and
the date in `#` lines on top. Pointwise rows name the op and its element count;
rapidc derives their bytes and FLOPs from its own lowering (docs/lowering.md), so a
wrong byte count shows as an error. A backward is timed as forward + backward
(torch.autograd.grad) minus the forward. Each kernel is timed as
`--reps` back-to-back calls captured in one CUDA graph, so no launch cost is in the
figure (rapidc adds a stack's launch cost separately), after `--warmup` replays;
the median of `--trials` graph replays is kept. Each row also records when its
measuring started and ended (`start_s`, `end_s`, seconds from the first row's start,
the GPU synchronised at both ends): the power state a row ran in depends on how busy
the GPU was over the ~100 ms before it, host time between rows included
(docs/validation.md, "Tried and not kept", 2026-11-29).

`--dry-run` needs neither a GPU nor PyTorch: it runs the same shape lists and writes
the same file, with times from a synthetic GPU (`--dry-peak-tflops` math at
`--dry-compute` of it, `--dry-hbm-gbps` bandwidth at `--dry-hbm` of it) so the whole
path from this script to `rapidc --calibrate` can be tested without hardware.
"""
import argparse
import datetime
import statistics
import sys
import time

# (m, k, n): GEMMs of transformer training (tokens x hidden x projection) and
# decode (a few rows), square best-shape references, and short-K shapes.
GEMMS = [
    (4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 2048),
    (8192, 6144, 2304), (8192, 6144, 3072), (8192, 3072, 6144), (8192, 768, 6144),
    (16384, 4096, 4096), (16384, 4096, 11008), (16384, 11008, 4096), (4096, 8192, 28672),
    (1024, 4096, 4096), (1024, 1024, 128), (1024, 128, 1024),
    (1, 4096, 4096), (1, 4096, 11008), (1, 11008, 4096), (8, 4096, 4096), (32, 8192, 8192), (128, 8192, 8192),
    # Llama-3 8B and 70B projections (qkv, out, gate+up, down) of 8192-token
    # microbatches at TP 1 and 8, their weight-gradient (k = tokens) forms,
    # and the decode rows of the same weights at batch 1 to 256.
    (8192, 4096, 6144), (8192, 4096, 28672), (8192, 14336, 4096), (8192, 8192, 10240),
    (8192, 8192, 3584), (8192, 3584, 8192), (8192, 1024, 8192), (8192, 8192, 1280),
    (6144, 8192, 4096), (4096, 8192, 14336), (28672, 8192, 4096),
    (1, 4096, 6144), (1, 4096, 28672), (1, 14336, 4096), (1, 8192, 10240), (1, 28672, 8192), (1, 4096, 128256),
    (16, 4096, 6144), (16, 14336, 4096), (64, 4096, 28672), (64, 14336, 4096), (256, 4096, 28672),
    (256, 14336, 4096), (512, 4096, 6144), (2048, 4096, 28672),
    # Awkward shapes: wave quantisation (n just over a tile multiple), short K,
    # odd sizes.
    (8192, 4096, 4224), (4000, 4000, 4000), (3000, 5120, 1000), (8192, 256, 8192), (65536, 128, 128),
]
# Bytes moved by a copy kernel (read + write): from L2-sized to HBM-sized.
COPIES = [2**24, 2**26, 2**28, 2**30, 2**32]
# (batch, heads, seq, head_dim), causal: FlashAttention of training shapes.
ATTENTION = [(4, 16, 2048, 128), (1, 32, 4096, 128), (2, 32, 2048, 64), (1, 16, 8192, 128)]
# (op, rows, width): the pointwise kernels of a layer at 8192 tokens (h = 4096
# and 8192, ffn = 16384) and the naive-attention softmax of 4 x 16 heads x
# 2048^2; then Adam steps over 2^24 and 2^26 parameters.
POINTWISE = [("layernorm", 8192, 4096), ("layernorm", 8192, 8192), ("gelu", 8192, 16384),
             ("softmax", 4 * 16 * 2048, 2048), ("rmsnorm", 8192, 4096), ("rmsnorm", 8192, 8192),
             ("residual", 8192, 4096), ("residual", 8192, 8192)]
ADAM_PARAMS = [2**24, 2**26]
DTYPES = {"bf16": 2, "fp16": 2, "fp32": 4}


class DryRun:
    """A synthetic GPU: roofline times with fixed efficiencies, no hardware."""

    def __init__(self, args):
        self.math = args.dry_peak_tflops * 1e12 * args.dry_compute
        self.hbm = args.dry_hbm_gbps * 1e9 * args.dry_hbm
        self.ramp = 2e-6  # a fixed kernel ramp, as real kernels have
        self.calls = args.reps * (args.warmup + args.trials)
        self.clock = 0.0  # the synthetic GPU's busy time: its rows back to back

    def describe(self):
        return {"gpu": "dry run (synthetic)", "driver": "-", "cuda": "-", "torch": "-"}

    def now(self):
        return self.clock

    def _ran(self, *seconds):
        self.clock += self.calls * sum(s for s in seconds if s is not None)
        return seconds if len(seconds) > 1 else seconds[0]

    def gemm_seconds(self, m, k, n, dtype):
        b = DTYPES[dtype]
        return self._ran(max(2.0 * m * n * k / self.math, (m * k + k * n + m * n) * b / self.hbm) + self.ramp)

    def copy_seconds(self, nbytes):
        return self._ran(nbytes / self.hbm + self.ramp)

    def attention_seconds(self, b, heads, seq, hd, dtype):
        fwd = 4.0 * b * heads * seq * seq * hd * 0.5  # causal: half the score matrix
        return self._ran(fwd / self.math + self.ramp, 2.5 * fwd / self.math + self.ramp)

    def pointwise_seconds(self, op, rows, width, dtype):
        b, elements = DTYPES[dtype], rows * width
        moved = {"layernorm": (2, 4), "rmsnorm": (2, 4), "gelu": (2, 3), "softmax": (2, 3),
                 "residual": (3, 3)}[op]  # elements read + written
        fwd, bwd = (elements * k * b / self.hbm + self.ramp for k in moved)
        return self._ran(fwd, None if op == "residual" else bwd)

    def adam_seconds(self, params):
        return self._ran(params * 28 / self.hbm + self.ramp)  # FP32 p, g, m, v read; p, m, v written


class Torch:
    """Times kernels on the local CUDA GPU with PyTorch, in CUDA graphs."""

    def __init__(self, args):
        import torch  # only on a GPU machine
        if not torch.cuda.is_available():
            sys.exit("calibrate.py: no CUDA GPU visible to PyTorch (use --dry-run to test the script)")
        self.torch, self.args = torch, args

    def describe(self):
        t = self.torch
        props = t.cuda.get_device_properties(0)
        try:
            import subprocess
            driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                    capture_output=True, text=True, check=True).stdout.strip().splitlines()[0]
        except Exception:  # noqa: BLE001 - the driver version is provenance, not required
            driver = "unknown"
        return {"gpu": props.name, "driver": driver, "cuda": t.version.cuda, "torch": t.__version__,
                "cudnn": str(t.backends.cudnn.version()), "sm_count": str(props.multi_processor_count)}

    def now(self):
        self.torch.cuda.synchronize()
        return time.perf_counter()

    def _time(self, fn):
        try:
            return self._time_graph(fn)
        except Exception as e:  # noqa: BLE001 - a capture can fail where eager timing works
            print(f"calibrate.py: CUDA graph capture failed ({type(e).__name__}), timed eagerly", file=sys.stderr)
            return self._time_eager(fn)

    def _time_eager(self, fn):
        """reps back-to-back eager calls; the launch cost hides behind kernels longer than it."""
        t, a = self.torch, self.args
        t.cuda.synchronize()
        for _ in range(3):
            fn()
        times = []
        for _ in range(a.trials):
            start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(a.reps):
                fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3 / a.reps)
        return statistics.median(times)

    def _time_graph(self, fn):
        t, a = self.torch, self.args
        stream = t.cuda.Stream()
        stream.wait_stream(t.cuda.current_stream())
        with t.cuda.stream(stream):
            for _ in range(3):  # cuBLAS picks and caches its kernel outside the capture
                fn()
        t.cuda.current_stream().wait_stream(stream)
        graph = t.cuda.CUDAGraph()
        with t.cuda.graph(graph):
            for _ in range(a.reps):
                fn()
        for _ in range(a.warmup):
            graph.replay()
        times = []
        for _ in range(a.trials):
            start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1e3 / a.reps)
        return statistics.median(times)

    def gemm_seconds(self, m, k, n, dtype):
        t = self.torch
        dt = {"bf16": t.bfloat16, "fp16": t.float16, "fp32": t.float32}[dtype]
        a, b = t.randn(m, k, device="cuda", dtype=dt), t.randn(k, n, device="cuda", dtype=dt)
        out = t.empty(m, n, device="cuda", dtype=dt)
        return self._time(lambda: t.matmul(a, b, out=out))

    def copy_seconds(self, nbytes):
        t = self.torch
        src = t.empty(nbytes // 2, device="cuda", dtype=t.uint8)
        dst = t.empty_like(src)
        return self._time(lambda: dst.copy_(src))

    def _dtype(self, dtype):
        t = self.torch
        return {"bf16": t.bfloat16, "fp16": t.float16, "fp32": t.float32}[dtype]

    def _forward_backward(self, f, inputs):
        """(forward, backward) seconds of f(*inputs); the backward as the
        autograd pass of forward + backward minus the forward."""
        t = self.torch
        grad = t.randn_like(f(*inputs))  # the eager output is dropped: an autograd graph kept
        # alive from the default stream breaks the backward's capture
        fwd = self._time(lambda: f(*inputs))
        both = self._time(lambda: t.autograd.grad(f(*inputs), inputs, grad))
        return fwd, max(both - fwd, 0.0)

    def attention_seconds(self, b, heads, seq, hd, dtype):
        t = self.torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        q, k, v = (t.randn(b, heads, seq, hd, device="cuda", dtype=self._dtype(dtype), requires_grad=True)
                   for _ in range(3))
        backend = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}[self.args.attention]
        with sdpa_kernel(backend):
            return self._forward_backward(
                lambda q, k, v: t.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True), (q, k, v))

    def pointwise_seconds(self, op, rows, width, dtype):
        t, F = self.torch, self.torch.nn.functional
        x = t.randn(rows, width, device="cuda", dtype=self._dtype(dtype), requires_grad=True)
        if op == "layernorm":
            w = t.ones(width, device="cuda", dtype=x.dtype, requires_grad=True)
            bias = t.zeros(width, device="cuda", dtype=x.dtype, requires_grad=True)
            return self._forward_backward(lambda x, w, bias: F.layer_norm(x, (width,), w, bias), (x, w, bias))
        if op == "rmsnorm":
            w = t.ones(width, device="cuda", dtype=x.dtype, requires_grad=True)
            return self._forward_backward(lambda x, w: F.rms_norm(x, (width,), w, 1e-5), (x, w))
        if op == "residual":  # a residual add's backward passes gradients through: no kernel
            y = t.randn_like(x)
            out = t.empty_like(x)
            return self._time(lambda: t.add(x.detach(), y, out=out)), None
        if op == "gelu":
            return self._forward_backward(lambda x: F.gelu(x, approximate="tanh"), (x,))
        return self._forward_backward(lambda x: t.softmax(x, dim=-1), (x,))

    def adam_seconds(self, params):
        t = self.torch
        p = t.zeros(params, device="cuda", dtype=t.float32, requires_grad=True)
        p.grad = t.randn_like(p)
        opt = t.optim.Adam([p], lr=1e-4, fused=True, capturable=True)
        opt.step()  # creates the moments outside the capture
        return self._time(opt.step)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--output", required=True, help="CSV file to write")
    p.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    p.add_argument("--reps", type=int, default=20, help="calls per CUDA graph")
    p.add_argument("--warmup", type=int, default=3, help="graph replays before timing")
    p.add_argument("--trials", type=int, default=10, help="timed graph replays (the median is kept)")
    p.add_argument("--attention", default="flash", choices=["flash", "cudnn"],
                   help="scaled_dot_product_attention backend: flash (FlashAttention-2) or cudnn")
    p.add_argument("--only", default="gemm,copy,attention,pointwise,adam",
                   help="comma-separated kernel groups to measure (default: all)")
    p.add_argument("--dry-run", action="store_true", help="no GPU: synthetic times (tests the script)")
    p.add_argument("--dry-peak-tflops", type=float, default=312.0)
    p.add_argument("--dry-compute", type=float, default=0.8)
    p.add_argument("--dry-hbm-gbps", type=float, default=2039.0)
    p.add_argument("--dry-hbm", type=float, default=0.85)
    args = p.parse_args()
    backend = DryRun(args) if args.dry_run else Torch(args)
    facts = backend.describe()
    only = set(args.only.split(","))
    rows = []
    origin = backend.now()

    def timed(measure, *shape):
        """measure(*shape) and the span it took, as the row's last two fields."""
        start = backend.now() - origin
        value = measure(*shape)
        return value, f"{start:.6f},{backend.now() - origin:.6f}"

    for m, k, n in GEMMS if "gemm" in only else []:
        sec, span = timed(backend.gemm_seconds, m, k, n, args.dtype)
        rows.append(f"gemm,{m},{k},{n},1,{args.dtype},,,{sec * 1e3:.6f},,,,,,,,{span}")
    for nbytes in COPIES if "copy" in only else []:
        sec, span = timed(backend.copy_seconds, nbytes)
        rows.append(f"pointwise,,,,,{args.dtype},{nbytes},0,{sec * 1e3:.6f},,,,,,,,{span}")
    for b, heads, seq, hd in ATTENTION if "attention" in only else []:
        (fwd, bwd), span = timed(backend.attention_seconds, b, heads, seq, hd, args.dtype)
        for name, sec in (("fwd", fwd), ("bwd", bwd)):
            rows.append(f"attention,,,,{b},{args.dtype},,,{sec * 1e3:.6f},,,{name},{heads},{seq},{hd},1,{span}")
    for op, n, width in POINTWISE if "pointwise" in only else []:
        (fwd, bwd), span = timed(backend.pointwise_seconds, op, n, width, args.dtype)
        for name, sec in (("fwd", fwd), ("bwd", bwd)):
            if sec is not None:
                rows.append(f"pointwise,,,,,{args.dtype},,,{sec * 1e3:.6f},{op},{n * width},{name},,,,,{span}")
    for params in ADAM_PARAMS if "adam" in only else []:
        sec, span = timed(backend.adam_seconds, params)
        rows.append(f"pointwise,,,,,fp32,,,{sec * 1e3:.6f},adam,{params},fwd,,,,,{span}")
    with open(args.output, "w") as f:
        f.write("# rapid calibration measurements (tools/calibrate/calibrate.py)\n")
        f.write(f"# date: {datetime.date.today().isoformat()}\n")
        for key, value in facts.items():
            f.write(f"# {key}: {value}\n")
        f.write(f"# attention: scaled_dot_product_attention, {args.attention} backend\n")
        f.write(f"# timing: {args.reps} calls per CUDA graph, median of {args.trials} replays after {args.warmup}\n")
        f.write("kind,m,k,n,batch,dtype,bytes,flops,latency_ms,op,elements,pass,heads,seq,head_dim,causal,start_s,end_s\n")
        f.write("\n".join(rows) + "\n")
    print(f"calibrate.py: {len(rows)} kernels on {facts['gpu']} -> {args.output}")


if __name__ == "__main__":
    main()
