#!/usr/bin/env python3
"""Profiles training steps of a small GPT on this machine's GPU into a Kineto trace.

    python3 tools/traces/profile_step.py -o DIR      # on a GPU machine with PyTorch

A 4-layer GPT (hidden 2048, 16 heads, sequence 2048, micro-batch 4, BF16
autocast, FP32 AdamW), written with plain torch.nn modules, trains for a few
steps; the PyTorch profiler records the fourth (`ProfilerStep#3`: CPU ops with
their input shapes, CUDA runtime calls, kernels and their correlation) and writes
DIR/rank0.json.gz, the input `rapid-trace replay` reads (docs/trace-replay.md).
DIR/steps.txt has each step's wall time, timed with CUDA events.
"""
import argparse
import gzip
import os
import shutil
import sys

try:
    import torch
    import torch.nn as nn
except ImportError:
    torch = nn = None


def gpt(layers, hidden, heads, vocab):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
            self.qkv, self.proj = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)
            self.fc1, self.fc2 = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, heads, hidden // heads).unbind(2)
            o = nn.functional.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                           is_causal=True)
            x = x + self.proj(o.transpose(1, 2).reshape(b, s, hidden))
            return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, hidden)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln = nn.LayerNorm(hidden)
            self.head = nn.Linear(hidden, vocab, bias=False)

        def forward(self, ids):
            x = self.emb(ids)
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    return Model()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--output", required=True)
    args = p.parse_args()
    if torch is None or not torch.cuda.is_available():
        sys.exit("profile_step.py: needs PyTorch with a CUDA GPU; none here")
    os.makedirs(args.output, exist_ok=True)
    torch.manual_seed(0)
    layers, hidden, heads, vocab, seq, batch = 4, 2048, 16, 32000, 2048, 4
    model = gpt(layers, hidden, heads, vocab).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    ids = torch.randint(0, vocab, (batch, seq), device="cuda")
    labels = torch.randint(0, vocab, (batch, seq), device="cuda")

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(model(ids).flatten(0, 1), labels.flatten())
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    from torch.profiler import ProfilerActivity, profile, schedule
    raw = os.path.join(args.output, "rank0.json")
    times = []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                 schedule=schedule(wait=1, warmup=2, active=1),
                 on_trace_ready=lambda prof: prof.export_chrome_trace(raw)) as prof:
        for _ in range(5):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            step()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e))
            prof.step()
    with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(raw)
    os.replace(raw + ".gz", os.path.join(args.output, "rank0.json.gz"))
    with open(os.path.join(args.output, "steps.txt"), "w") as f:
        f.write(f"# gpu: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; cuda {torch.version.cuda}\n")
        f.write("# step wall times (ms, CUDA events; the profiler records step 3, ProfilerStep#3)\n")
        for i, t in enumerate(times):
            f.write(f"{i} {t:.3f}\n")
    print(" ".join(f"{t:.2f}" for t in times), "ms")


if __name__ == "__main__":
    main()
