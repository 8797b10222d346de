#!/usr/bin/env python3
"""Measures whole steps on this machine's GPU, for the parts calibrate.py's single kernels miss.

    python3 tools/calibrate/steps.py -o DIR        # on a GPU machine with PyTorch

Writes DIR/steps.csv (one row per measured case) and DIR/kernels.csv (the
PyTorch profiler's kernel table of each case: name, calls, GPU time), with the
GPU and versions in `#` lines on top:

- `launch`: what a software stack adds per kernel. Eager PyTorch's cost of one
  small op (Python dispatch + CUDA launch; the GPU idles, so the wall clock is
  the launch rate), and the time one tiny kernel takes when replayed from a
  CUDA graph (no launch cost, but a kernel still takes its GPU-side start and
  drain).
- `decode` / `prefill`: steps of a Llama-3-8B-shaped model (random weights,
  `--layers` layers) written as plain PyTorch modules would run it: RMSNorm,
  fused QKV, rotary, scaled_dot_product_attention over a KV cache, output
  projection, fused gate+up, SiLU x up, down projection, residual adds, the
  final norm and the last token's logits. Each step is timed eagerly and as a
  replayed CUDA graph.
- `train_layer`: one transformer layer's training forward and backward (GPT
  22B's layer as Megatron-LM runs it, with biases, LayerNorm, GeLU and
  dropout; and a Llama-3-8B layer), eagerly, as a training loop runs it.

Every time is a median (CUDA events) after warm-up. The model is described in
docs/validation.md, which compares rapidc's predictions with these rows.
"""
import argparse
import datetime
import os
import statistics
import subprocess
import sys
import time

try:
    import torch
    import torch.nn.functional as F
    BF16 = torch.bfloat16
except ImportError:  # main reports it
    torch = F = BF16 = None

DEV = "cuda"


def median_ms(fn, reps=10, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def graph_ms(fn, reps=20):
    """Median time of one replay of fn captured in a CUDA graph."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    t = median_ms(g.replay, reps=reps)
    del g
    return t


def run_sections(script, sections):
    """Runs each (name, fn) of `sections` in turn: one that fails is reported
    as `script: name failed: ...` and the others still run (keep what they
    measure), the allocator's cache emptied after each."""
    for name, fn in sections:
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - keep what the other sections measure
            print(f"{script}: {name} failed: {type(e).__name__}: {e}", flush=True)
        torch.cuda.empty_cache()


def kernel_table(fn):
    """(name, calls, total_us) of the GPU kernels one call of fn runs, from the profiler."""
    try:
        return _kernel_table(fn)
    except Exception as e:  # noqa: BLE001 - the table is a breakdown; the timings stand without it
        print(f"steps.py: profiler failed: {type(e).__name__}: {e}", flush=True)
        return []


def _kernel_table(fn):
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    rows = {}
    for ev in prof.events():
        if ev.device_type != torch.autograd.DeviceType.CUDA:
            continue
        dur = ev.device_time if hasattr(ev, "device_time") else ev.cuda_time
        name = ev.name.replace(",", ";")[:160]
        calls, total = rows.get(name, (0, 0.0))
        rows[name] = (calls + 1, total + dur)
    return sorted(((n, c, t) for n, (c, t) in rows.items()), key=lambda r: -r[2])


class Out:
    def __init__(self, directory):
        os.makedirs(directory, exist_ok=True)
        self.steps = open(os.path.join(directory, "steps.csv"), "w")
        self.kernels = open(os.path.join(directory, "kernels.csv"), "w")
        header = self.header()
        for f, cols in ((self.steps, "kind,case,batch,tokens,context,mode,latency_ms,kernels"),
                        (self.kernels, "case,mode,kernel,calls,total_us")):
            f.write(header + cols + "\n")
            f.flush()

    @staticmethod
    def header():
        p = torch.cuda.get_device_properties(0)
        try:
            driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                    capture_output=True, text=True, check=True).stdout.strip().splitlines()[0]
        except Exception:  # noqa: BLE001 - provenance only
            driver = "unknown"
        return (f"# rapid step measurements (tools/calibrate/steps.py)\n# date: {datetime.date.today()}\n"
                f"# gpu: {p.name}\n# sm_count: {p.multi_processor_count}\n# driver: {driver}\n"
                f"# cuda: {torch.version.cuda}\n# torch: {torch.__version__}\n"
                f"# cudnn: {torch.backends.cudnn.version()}\n")

    def step(self, kind, case, batch, tokens, context, mode, ms, kernels=""):
        self.steps.write(f"{kind},{case},{batch},{tokens},{context},{mode},{ms:.6f},{kernels}\n")
        self.steps.flush()
        print(f"{kind:12s} {case:24s} b={batch} t={tokens} ctx={context} {mode:6s} {ms:.4f} ms {kernels}", flush=True)

    def table(self, case, mode, rows):
        for name, calls, us in rows:
            self.kernels.write(f"{case},{mode},{name},{calls},{us:.3f}\n")
        self.kernels.flush()
        return sum(c for _, c, _ in rows)


# --- launch costs -------------------------------------------------------------

def measure_launch(out):
    x = torch.zeros(1024, device=DEV)
    y = torch.empty_like(x)
    n = 5000

    def eager_adds():
        for _ in range(n):
            torch.add(x, 1.0, out=y)

    eager_adds()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    eager_adds()
    torch.cuda.synchronize()
    out.step("launch", "eager_add", 1, 1024, 0, "eager", (time.perf_counter() - t0) * 1e3 / n, 1)
    w = torch.randn(64, 64, device=DEV, dtype=BF16)
    a = torch.randn(8, 64, device=DEV, dtype=BF16)
    t0 = time.perf_counter()
    for _ in range(n):
        F.linear(a, w)
    torch.cuda.synchronize()
    out.step("launch", "eager_linear", 8, 64, 0, "eager", (time.perf_counter() - t0) * 1e3 / n, 1)
    g_n = 1000
    ms = graph_ms(lambda: [torch.add(x, 1.0, out=y) for _ in range(g_n)])
    out.step("launch", "graph_add", 1, 1024, 0, "graph", ms / g_n, 1)
    ms = graph_ms(lambda: [F.linear(a, w) for _ in range(g_n)])
    out.step("launch", "graph_linear", 8, 64, 0, "graph", ms / g_n, 1)


# --- a Llama-3-8B-shaped model ---------------------------------------------------

H, HEADS, KV, HD, FFN, VOCAB = 4096, 32, 8, 128, 14336, 128256


def rand(*shape):
    return torch.empty(*shape, device=DEV, dtype=BF16).normal_(0, 0.02)


class Llama:
    def __init__(self, layers):
        self.layers = [dict(n1=torch.ones(H, device=DEV, dtype=BF16), qkv=rand((HEADS + 2 * KV) * HD, H),
                            o=rand(H, H), n2=torch.ones(H, device=DEV, dtype=BF16), gu=rand(2 * FFN, H),
                            down=rand(H, FFN)) for _ in range(layers)]
        self.embed = rand(VOCAB, H)
        self.norm = torch.ones(H, device=DEV, dtype=BF16)
        self.head = rand(VOCAB, H)
        inv = 1.0 / (500000.0 ** (torch.arange(0, HD, 2, device=DEV).float() / HD))
        self.freqs = inv

    def rotary(self, pos0, t):
        """cos and sin of positions pos0..pos0+t, once a step (as Hugging Face's model does)."""
        ang = torch.outer(torch.arange(pos0, pos0 + t, device=DEV).float(), self.freqs)
        return torch.cat([ang.cos(), ang.cos()], -1).to(BF16), torch.cat([ang.sin(), ang.sin()], -1).to(BF16)

    @staticmethod
    def rope(x, cos, sin):
        # x: [B, heads, T, HD]; the rotate-half form of Hugging Face's Llama
        x1, x2 = x[..., :HD // 2], x[..., HD // 2:]
        return x * cos + torch.cat([-x2, x1], -1) * sin

    def layer(self, h, w, cache, pos0, cos, sin):
        b, t, _ = h.shape
        x = F.rms_norm(h, (H,), w["n1"], 1e-5)
        q, k, v = F.linear(x, w["qkv"]).split([HEADS * HD, KV * HD, KV * HD], -1)
        q = self.rope(q.view(b, t, HEADS, HD).transpose(1, 2), cos, sin)
        k = self.rope(k.view(b, t, KV, HD).transpose(1, 2), cos, sin)
        v = v.view(b, t, KV, HD).transpose(1, 2)
        if cache is None:  # prefill: attend over the prompt, K and V repeated per query head (repeat_kv)
            k = k[:, :, None].expand(b, KV, HEADS // KV, t, HD).reshape(b, HEADS, t, HD)
            v = v[:, :, None].expand(b, KV, HEADS // KV, t, HD).reshape(b, HEADS, t, HD)
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # decode: write this token's K, V and attend over the cache
            kc, vc = cache
            kc[:, :, pos0:pos0 + t].copy_(k)
            vc[:, :, pos0:pos0 + t].copy_(v)
            # the query heads of one KV head as rows of one attention (as flash-decoding packs GQA)
            qg = q.reshape(b, KV, (HEADS // KV) * t, HD)
            o = F.scaled_dot_product_attention(qg, kc[:, :, :pos0 + t], vc[:, :, :pos0 + t])
            o = o.reshape(b, HEADS, t, HD)
        h = h + F.linear(o.transpose(1, 2).reshape(b, t, H), w["o"])
        x = F.rms_norm(h, (H,), w["n2"], 1e-5)
        g, u = F.linear(x, w["gu"]).chunk(2, -1)
        return h + F.linear(F.silu(g) * u, w["down"])

    def step(self, ids, caches, pos0):
        h = F.embedding(ids, self.embed)
        cos, sin = self.rotary(pos0, ids.shape[1])
        for i, w in enumerate(self.layers):
            h = self.layer(h, w, None if caches is None else caches[i], pos0, cos, sin)
        h = F.rms_norm(h[:, -1:], (H,), self.norm, 1e-5)
        return F.linear(h, self.head).argmax(-1)


def measure_inference(out, model, args, deadline):
    layers = len(model.layers)
    for b, ctx in ((1, 512), (1, 4096), (8, 2048), (32, 1024), (32, 4096), (64, 2048), (128, 1024)):
        if time.time() > deadline:
            print("deadline: skipping the rest of decode", flush=True)
            break
        caches = [(rand(b, KV, ctx, HD), rand(b, KV, ctx, HD)) for _ in range(layers)]
        ids = torch.randint(0, VOCAB, (b, 1), device=DEV)
        fn = lambda: model.step(ids, caches, ctx - 1)  # noqa: E731 - the last cache slot is this token's
        case = f"llama8b_{layers}l"
        n = out.table(f"decode_{case}_b{b}_c{ctx}", "eager", kernel_table(fn))
        out.step("decode", case, b, 1, ctx, "eager", median_ms(fn), n)
        out.step("decode", case, b, 1, ctx, "graph", graph_ms(fn), n)
        del caches
        torch.cuda.empty_cache()
    for b, t in ((1, 128), (1, 512), (1, 2048), (1, 8192), (8, 512)):
        if time.time() > deadline:
            print("deadline: skipping the rest of prefill", flush=True)
            break
        ids = torch.randint(0, VOCAB, (b, t), device=DEV)
        fn = lambda: model.step(ids, None, 0)  # noqa: E731
        case = f"llama8b_{layers}l"
        n = out.table(f"prefill_{case}_b{b}_t{t}", "eager", kernel_table(fn))
        out.step("prefill", case, b, t, 0, "eager", median_ms(fn), n)
        out.step("prefill", case, b, t, 0, "graph", graph_ms(fn), n)
        torch.cuda.empty_cache()


# --- training layers ---------------------------------------------------------------

def gpt_layer(hidden, heads, dropout):
    def w(*shape):
        return torch.randn(*shape, device=DEV) * 0.02

    def z(n, value=0.0):
        return torch.full((n,), value, device=DEV)

    p = dict(ln1w=z(hidden, 1.0), ln1b=z(hidden), qkvw=w(3 * hidden, hidden), qkvb=z(3 * hidden),
             ow=w(hidden, hidden), ob=z(hidden), ln2w=z(hidden, 1.0), ln2b=z(hidden),
             f1w=w(4 * hidden, hidden), f1b=z(4 * hidden), f2w=w(hidden, 4 * hidden), f2b=z(hidden))
    p = {k: v.to(DEV, BF16).requires_grad_() for k, v in p.items()}
    hd = hidden // heads

    def fwd(x):  # x: [s, b, h] as Megatron-LM lays it out
        s, b, _ = x.shape
        y = F.layer_norm(x, (hidden,), p["ln1w"], p["ln1b"])
        q, k, v = F.linear(y, p["qkvw"], p["qkvb"]).view(s, b, heads, 3 * hd).split(hd, -1)
        q, k, v = (z.permute(1, 2, 0, 3) for z in (q, k, v))
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=dropout)
        o = o.permute(2, 0, 1, 3).reshape(s, b, hidden)
        x = x + F.dropout(F.linear(o, p["ow"], p["ob"]), dropout)
        y = F.layer_norm(x, (hidden,), p["ln2w"], p["ln2b"])
        y = F.linear(F.gelu(F.linear(y, p["f1w"], p["f1b"]), approximate="tanh"), p["f2w"], p["f2b"])
        return x + F.dropout(y, dropout)

    return fwd, list(p.values())


def llama_layer():
    model = Llama.__new__(Llama)
    model.freqs = 1.0 / (500000.0 ** (torch.arange(0, HD, 2, device=DEV).float() / HD))
    w = dict(n1=torch.ones(H, device=DEV), qkv=torch.randn((HEADS + 2 * KV) * HD, H, device=DEV) * 0.02,
             o=torch.randn(H, H, device=DEV) * 0.02, n2=torch.ones(H, device=DEV),
             gu=torch.randn(2 * FFN, H, device=DEV) * 0.02, down=torch.randn(H, FFN, device=DEV) * 0.02)
    w = {k: v.to(DEV, BF16).requires_grad_() for k, v in w.items()}

    def fwd(x):
        cos, sin = model.rotary(0, x.shape[1])
        return model.layer(x, w, None, 0, cos, sin)

    return fwd, list(w.values())


def measure_training(out, deadline):
    cases = [("gpt22b_layer", 1, 2048, lambda: gpt_layer(6144, 64, 0.1), "sbh"),
             ("gpt22b_layer", 4, 2048, lambda: gpt_layer(6144, 64, 0.1), "sbh"),
             ("llama8b_layer", 1, 4096, llama_layer, "bsh"),
             ("llama8b_layer", 2, 8192, llama_layer, "bsh")]
    for case, b, s, make, layout in cases:
        if time.time() > deadline:
            print("deadline: skipping the rest of training", flush=True)
            break
        fwd, params = make()
        hidden = params[0].shape[0]
        shape = (s, b, hidden) if layout == "sbh" else (b, s, hidden)
        x = torch.randn(*shape, device=DEV, dtype=BF16, requires_grad=True)
        grad = torch.randn(*shape, device=DEV, dtype=BF16)

        def f():
            with torch.no_grad():
                return fwd(x)

        def fb():  # gradients returned, not accumulated: the same kernels every call
            torch.autograd.grad(fwd(x), [x] + params, grad)

        nf = out.table(f"train_{case}_b{b}_s{s}", "fwd", kernel_table(f))
        nfb = out.table(f"train_{case}_b{b}_s{s}", "fwd+bwd", kernel_table(fb))
        tf, tfb = median_ms(f), median_ms(fb)
        out.step("train_layer", case, b, s, s, "fwd", tf, nf)
        out.step("train_layer", case, b, s, s, "bwd", tfb - tf, nfb - nf)
        del fwd, params, x, grad
        torch.cuda.empty_cache()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--output", required=True, help="directory for steps.csv and kernels.csv")
    p.add_argument("--layers", type=int, default=32, help="decoder layers of the inference model")
    p.add_argument("--budget", type=float, default=240, help="seconds after which remaining cases are skipped")
    args = p.parse_args()
    if torch is None or not torch.cuda.is_available():
        sys.exit("steps.py: needs PyTorch with a CUDA GPU; none here (calibrate.py --dry-run tests without one)")
    deadline = time.time() + args.budget
    out = Out(args.output)
    torch.manual_seed(0)
    run_sections("steps.py", (("launch", lambda: measure_launch(out)),
                              ("training", lambda: measure_training(out, deadline)),
                              ("inference", lambda: measure_inference(out, Llama(args.layers), args, deadline))))


if __name__ == "__main__":
    main()
