#!/usr/bin/env python3
"""Fits eager PyTorch's kernel figures to a steps.py kernel table.

usage: fit_eager_kernels.py FIT_KERNELS.csv [CHECK_KERNELS.csv ...]
           [--hbm FIT_TB/S,CHECK_TB/S,...]

steps.py's kernel tables (test/data/validation/steps_h*_kernels.csv) time
every kernel of whole Llama-3-8B decode steps, batches of 1 to 128 over
caches of 512 to 4,096 tokens, and of prefills of 128 to 8,192 tokens a
sequence. Three kinds of kernel do not follow their bytes, and the stack
states them (docs/model.md §3.3 and §4):

- cuDNN's fused attention forward (`sdpa ... flash_fprop`), run on the four
  query rows of a key/value head (the module packs GQA so): one thread block
  per sequence and key/value head, each a pass over its cache. Fitted:
  `decode_attention.start` (s) and `decode_attention.cycles` (c) in
      time = s + max(bytes / HBM rate + start of a stream,
                     tokens * c * max(1, blocks / SMs) / clock)
  (rapidc's formula; a stream's start is the kernel's floor less the graph's
  gap, 1.15 - 0.4 us, plus one HBM latency, 0.5 us: docs/model.md §4), least
  mean relative error over the fit table's rows.
- ATen's norm kernel (`vectorized_layer_norm_kernel`, RMSNorm here) over 1
  to 128 rows: flat at about 6 us. `reduction.norm_latency` is the median.

- ATen's elementwise kernels over strided views (`elementwise_kernel<128, 4>`
  and the unvectorised cat: rotate-half rotary, repeat_kv's copies, SiLU and
  its multiply on halves of one GEMM's output) run at the same elements per
  second on an H100 and an H200 whatever their HBM: bound by the offsets
  they compute. `strided_instructions` is the instructions per element at
  rapidc's issue rate (132 SMs x 128 a clock x 1.98 GHz x calibration.compute,
  87.2953 %) after each kernel's start (the stream start above: the body's
  issue waits for its first operands), from the prefills of 2,048 tokens and
  more, elements as the module's shapes give them. At a
  decode step's one token they take 1.9-2.3 us where a vectorised one takes
  1.3: `strided_latency` is their mean time over the batch-1 decode steps.

Only the first table is fitted; the others are reported with its figures.
The HBM rates are rapidc's (hbm.bandwidth x calibration.hbm of std.gpus'
h100_sxm_80gb and h200: 3.015 and 4.32 TB/s by default). Both GPUs run
132 SMs at 1.98 GHz.
"""
import csv
import statistics
import sys

SMS, CLOCK = 132, 1.98e9
ISSUE = SMS * 128 * CLOCK * 0.872953  # std.gpus' h100_sxm_80gb (the H200 inherits it)
KV_HEADS, HEAD_DIM, HEADS, HIDDEN, FFN, LAYERS = 8, 128, 32, 4096, 14336, 32  # Llama-3-8B
STREAM_START = 1.15e-6 - 0.4e-6 + 0.5e-6  # std.gpus' Hopper kernel_floor - kernel_gap + hbm.latency


def strided_class(kernel):
    """Which of the module's strided pieces an unvectorised ATen kernel is."""
    if kernel.startswith('void at::native::(anonymous namespace)::CatArrayBatchedCopy<'):
        return 'cat'
    if not kernel.startswith('void at::native::elementwise_kernel<128; 4;'):
        return None
    for key, name in (('neg_kernel', 'neg'), ('BinaryFunctor<c10::BFloat16', 'mul'), ('CUDAFunctor_add', 'add'),
                      ('direct_copy', 'copy'), ('silu_kernel', 'silu')):
        if key in kernel:
            return name
    return None


def strided_elements(name, tokens):
    """Elements a layer's kernels of that piece index over `tokens` tokens."""
    q, k, f = tokens * HEADS * HEAD_DIM, tokens * KV_HEADS * HEAD_DIM, tokens * FFN
    return {'neg': (q + k) / 2, 'cat': q + k, 'mul': 2 * (q + k) + f, 'add': q + k, 'copy': 2 * q, 'silu': f}[name]


def kernels(path, kind):
    """((batch, size), kernel, calls, total us) of each `kind` case's kernels
    (decode_..._b8_c2048: size the cache; prefill_..._b1_t512: the tokens)."""
    with open(path) as f:
        for r in csv.reader(line for line in f if not line.startswith('#')):
            if r[0].startswith(kind + '_'):
                yield tuple(int(p[1:]) for p in r[0].split('_')[-2:]), ','.join(r[2:-2]), int(r[-2]), float(r[-1])


def prefills(path):
    """(batch, tokens, seconds, elements, kernels) of each prefill's strided kernels."""
    out = {}
    for (b, t), kernel, calls, total in kernels(path, 'prefill'):
        name = strided_class(kernel)
        if name:
            e = out.setdefault((b, t), [0.0, 0.0, 0])
            e[0] += total * 1e-6
            e[1] += strided_elements(name, b * t) * LAYERS
            e[2] += calls
    return [(b, t, s, e, n) for (b, t), (s, e, n) in sorted(out.items())]


def tiny_strided(path):
    """(context, mean us, kernels) of each batch-1 decode step's unvectorised kernels."""
    out = {}
    for (b, c), kernel, calls, total in kernels(path, 'decode'):
        if b == 1 and strided_class(kernel):
            e = out.setdefault(c, [0.0, 0])
            e[0] += total
            e[1] += calls
    return [(c, t / n, n) for c, (t, n) in sorted(out.items())]


def rows(path):
    """(batch, context, attention us, norm us) of each decode case."""
    out = {}
    for key, kernel, calls, total in kernels(path, 'decode'):
        entry = out.setdefault(key, {})
        if 'sdpa' in kernel and 'fprop' in kernel:
            entry['attention'] = total / calls
        elif 'vectorized_layer_norm_kernel' in kernel:
            entry['norm'] = total / calls
    return [(b, c, e['attention'], e['norm']) for (b, c), e in sorted(out.items())]


def attention_us(b, c, rate, start_us, cycles):
    cache = 2 * b * c * KV_HEADS * HEAD_DIM * 2  # K and V in BF16
    other = b * (2 * HIDDEN + 2 * KV_HEADS * HEAD_DIM) * 2  # Q, O, the new K and V
    memory = (cache + other) / rate + STREAM_START
    serial = c * cycles * max(1.0, b * KV_HEADS / SMS) / CLOCK
    return (start_us * 1e-6 + max(memory, serial)) * 1e6


def errors(table, rate, start_us, cycles):
    return [attention_us(b, c, rate, start_us, cycles) / t - 1 for b, c, t, _ in table]


def summary(errs):
    a = sorted(abs(e) for e in errs)
    return 'median %.1f %%, worst %.1f %%' % (100 * statistics.median(a), 100 * a[-1])


def main(argv):
    rates = [3.015e12, 4.32e12]
    if '--hbm' in argv:
        i = argv.index('--hbm')
        rates = [float(x) * 1e12 for x in argv[i + 1].split(',')]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) < 2:
        sys.exit(__doc__)
    tables = [rows(p) for p in argv[1:]]
    fit = tables[0]
    grid = ((s / 20, c / 4) for s in range(0, 201) for c in range(4, 201))
    start, cycles = min(grid, key=lambda p: sum(abs(e) for e in errors(fit, rates[0], *p)))
    norm = statistics.median(n for _, _, _, n in fit)
    long = [(s - n * STREAM_START, e) for b, t, s, e, n in prefills(argv[1]) if b * t >= 2048]
    instructions = ISSUE * sum(s for s, _ in long) / sum(e for _, e in long)
    tiny = tiny_strided(argv[1])
    latency = sum(t * n for _, t, n in tiny) / sum(n for *_, n in tiny)
    print('decode_attention.start = %.2f us; decode_attention.cycles = %.2f; reduction.norm_latency = %.2f us; '
          'strided_instructions = %.1f; strided_latency = %.2f us' % (start, cycles, norm, instructions, latency))
    for path, table, rate in zip(argv[1:], tables, rates):
        print('%s (%s):' % (path, 'fitted' if table is fit else 'held out'))
        for (b, c, t, n), e in zip(table, errors(table, rate, start, cycles)):
            print('  batch %3d, cache %4d: attention %7.2f us measured, %7.2f predicted (%+.1f %%); norm %.2f us'
                  % (b, c, t, attention_us(b, c, rate, start, cycles), 100 * e, n))
        print('  attention: %s; norm: %s' % (summary(errors(table, rate, start, cycles)),
                                             summary([norm / n - 1 for *_, n in table])))
        strided = [(b, t, s, n * STREAM_START + e * instructions / ISSUE) for b, t, s, e, n in prefills(path)]
        for b, t, s, p in strided:
            print('  prefill batch %d x %4d: strided kernels %8.1f us measured, %8.1f predicted (%+.1f %%)'
                  % (b, t, s * 1e6, p * 1e6, 100 * (p / s - 1)))
        print('  strided, 2,048 tokens and more: %s' % summary([p / s - 1 for b, t, s, p in strided if b * t >= 2048]))
        for c, t, n in tiny_strided(path):
            print('  decode batch 1, cache %4d: %d unvectorised kernels, %.2f us each (%+.1f %%)'
                  % (c, n, t, 100 * (latency / t - 1)))


if __name__ == '__main__':
    main(sys.argv)
