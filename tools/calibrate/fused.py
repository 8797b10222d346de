#!/usr/bin/env python3
"""Times fused elementwise and norm kernels (torch.compile / Triton) on this GPU.

    python3 tools/calibrate/fused.py -o DIR        # on a GPU machine with PyTorch

Fused stacks (Megatron-LM, vLLM, TensorRT-LLM) run one kernel where eager
PyTorch runs several: RMSNorm, residual add + RMSNorm, SwiGLU, rotary, bias +
GeLU, bias + dropout + residual. rapid costs such a kernel by the elements it
reads and writes (docs/model.md §4); these rows say what fused kernels of
those ops really reach. Each op is compiled by torch.compile (Inductor emits
one Triton kernel for it), its kernel count checked with the profiler, and
timed 20 times back to back in a CUDA graph (median of 10 replays).

Writes DIR/fused.csv: op,rows,width,elements_moved,kernels,latency_ms,tb_per_s
where elements_moved is what the op must read and write (rapid's count).
"""
import argparse
import os
import statistics
import sys

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = F = None


def graph_ms(fn, calls=20, reps=10):
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
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        g.replay()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) / calls)
    return statistics.median(times)


def kernels(fn):
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sum(1 for ev in prof.events() if ev.device_type == torch.autograd.DeviceType.CUDA)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--output", required=True)
    args = p.parse_args()
    if torch is None or not torch.cuda.is_available():
        sys.exit("fused.py: needs PyTorch with a CUDA GPU; none here")
    os.makedirs(args.output, exist_ok=True)
    bf = torch.bfloat16
    ops = {
        # name: (function, elements moved per element of x)
        "rmsnorm": (lambda x, y, w: F.rms_norm(x, (x.shape[-1],), w, 1e-5), 2),
        "add_rmsnorm": (lambda x, y, w: F.rms_norm(x + y, (x.shape[-1],), w, 1e-5), 3),
        "layernorm": (lambda x, y, w: F.layer_norm(x, (x.shape[-1],), w, w), 2),
        "swiglu": (lambda x, y, w: F.silu(x) * y, 3),
        "bias_gelu": (lambda x, y, w: F.gelu(x + w, approximate="tanh"), 2),
        "bias_dropout_add": (lambda x, y, w: y + F.dropout(x + w, 0.1), 3),
        "rotary": (lambda x, y, w: x * y + torch.cat([-x[..., x.shape[-1] // 2:], x[..., :x.shape[-1] // 2]], -1) * y,
                   3),
        "softmax": (lambda x, y, w: torch.softmax(x, -1), 2),
    }
    out = open(os.path.join(args.output, "fused.csv"), "w")
    out.write(f"# rapid fused-kernel measurements (tools/calibrate/fused.py)\n# gpu: {torch.cuda.get_device_name(0)}\n"
              f"# torch: {torch.__version__}; cuda {torch.version.cuda}; triton "
              f"{__import__('triton').__version__}\n"
              "op,rows,width,elements_moved,kernels,latency_ms,tb_per_s\n")
    for name, (fn, moved) in ops.items():
        try:
            compiled = torch.compile(fn, dynamic=False)
        except Exception as e:  # noqa: BLE001
            print(f"{name}: compile failed: {e}", flush=True)
            continue
        for rows, width in ((8192, 4096), (16384, 8192), (4096, 2048), (64, 4096)):
            try:
                x = torch.randn(rows, width, device="cuda", dtype=bf)
                y = torch.randn(rows, width, device="cuda", dtype=bf)
                w = torch.randn(width, device="cuda", dtype=bf)
                f = lambda: compiled(x, y, w)  # noqa: E731
                n = kernels(f)
                ms = graph_ms(f)
            except Exception as e:  # noqa: BLE001
                print(f"{name} {rows}x{width}: {type(e).__name__}: {e}", flush=True)
                continue
            elems = rows * width * moved
            tbs = elems * 2 / (ms * 1e-3) / 1e12
            out.write(f"{name},{rows},{width},{elems},{n},{ms:.6f},{tbs:.3f}\n")
            out.flush()
            print(f"{name:18s} {rows:6d}x{width:<6d} kernels {n} {ms * 1e3:9.2f} us {tbs:5.2f} TB/s", flush=True)


if __name__ == "__main__":
    main()
