#!/usr/bin/env python3
"""Measures the kernels rapid's compute model costs, on the GPU of this machine.

    python3 tools/calibrate/calibrate.py -o h100.csv          # on a GPU machine with PyTorch
    rapidc --calibrate h100.csv --hardware h100_sxm_80gb      # fit and compare (docs/model.md)

Writes one CSV row per kernel: GEMMs of training and decode shapes (torch.matmul,
cuBLAS) and memory-bound copies of several sizes (the HBM rate), with the GPU, driver,
CUDA, PyTorch versions and the date in `#` lines on top. Each kernel is timed as
`--reps` back-to-back calls captured in one CUDA graph, so no launch cost is in the
figure (rapidc adds a stack's launch cost separately), after `--warmup` replays;
the median of `--trials` graph replays is kept.

`--dry-run` needs neither a GPU nor PyTorch: it runs the same shape lists and writes
the same file, with times from a synthetic GPU (`--dry-peak-tflops` math at
`--dry-compute` of it, `--dry-hbm-gbps` bandwidth at `--dry-hbm` of it) so the whole
path from this script to `rapidc --calibrate` can be tested without hardware.
"""
import argparse
import datetime
import statistics
import sys

# (m, k, n): GEMMs of transformer training (tokens x hidden x projection) and
# decode (a few rows), square best-shape references, and short-K shapes.
GEMMS = [
    (4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 2048),
    (8192, 6144, 2304), (8192, 6144, 3072), (8192, 3072, 6144), (8192, 768, 6144),
    (16384, 4096, 4096), (16384, 4096, 11008), (16384, 11008, 4096), (4096, 8192, 28672),
    (1024, 4096, 4096), (1024, 1024, 128), (1024, 128, 1024),
    (1, 4096, 4096), (1, 4096, 11008), (1, 11008, 4096), (8, 4096, 4096), (32, 8192, 8192), (128, 8192, 8192),
]
# Bytes moved by a copy kernel (read + write): from L2-sized to HBM-sized.
COPIES = [2**24, 2**26, 2**28, 2**30, 2**32]
DTYPES = {"bf16": 2, "fp16": 2, "fp32": 4}


class DryRun:
    """A synthetic GPU: roofline times with fixed efficiencies, no hardware."""

    def __init__(self, args):
        self.math = args.dry_peak_tflops * 1e12 * args.dry_compute
        self.hbm = args.dry_hbm_gbps * 1e9 * args.dry_hbm
        self.ramp = 2e-6  # a fixed kernel ramp, as real kernels have

    def describe(self):
        return {"gpu": "dry run (synthetic)", "driver": "-", "cuda": "-", "torch": "-"}

    def gemm_seconds(self, m, k, n, dtype):
        b = DTYPES[dtype]
        return max(2.0 * m * n * k / self.math, (m * k + k * n + m * n) * b / self.hbm) + self.ramp

    def copy_seconds(self, nbytes):
        return nbytes / self.hbm + self.ramp


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

    def _time(self, fn):
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


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--output", required=True, help="CSV file to write")
    p.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    p.add_argument("--reps", type=int, default=20, help="calls per CUDA graph")
    p.add_argument("--warmup", type=int, default=3, help="graph replays before timing")
    p.add_argument("--trials", type=int, default=10, help="timed graph replays (the median is kept)")
    p.add_argument("--dry-run", action="store_true", help="no GPU: synthetic times (tests the script)")
    p.add_argument("--dry-peak-tflops", type=float, default=312.0)
    p.add_argument("--dry-compute", type=float, default=0.8)
    p.add_argument("--dry-hbm-gbps", type=float, default=2039.0)
    p.add_argument("--dry-hbm", type=float, default=0.85)
    args = p.parse_args()
    backend = DryRun(args) if args.dry_run else Torch(args)
    facts = backend.describe()
    rows = []
    for m, k, n in GEMMS:
        rows.append(f"gemm,{m},{k},{n},1,{args.dtype},,,{backend.gemm_seconds(m, k, n, args.dtype) * 1e3:.6f}")
    for nbytes in COPIES:
        rows.append(f"pointwise,,,,,{args.dtype},{nbytes},0,{backend.copy_seconds(nbytes) * 1e3:.6f}")
    with open(args.output, "w") as f:
        f.write("# rapid calibration measurements (tools/calibrate/calibrate.py)\n")
        f.write(f"# date: {datetime.date.today().isoformat()}\n")
        for key, value in facts.items():
            f.write(f"# {key}: {value}\n")
        f.write(f"# timing: {args.reps} calls per CUDA graph, median of {args.trials} replays after {args.warmup}\n")
        f.write("kind,m,k,n,batch,dtype,bytes,flops,latency_ms\n")
        f.write("\n".join(rows) + "\n")
    print(f"calibrate.py: {len(rows)} kernels on {facts['gpu']} -> {args.output}")


if __name__ == "__main__":
    main()
