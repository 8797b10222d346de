#!/usr/bin/env python3
"""Fits a stack's decode-step kernel figures to a steps.py kernel table.

usage: fit_decode_kernels.py FIT_KERNELS.csv [CHECK_KERNELS.csv ...]
           [--hbm FIT_TB/S,CHECK_TB/S,...]

steps.py's kernel tables (test/data/validation/steps_h*_kernels.csv) time
every kernel of whole Llama-3-8B decode steps, batches of 1 to 128 over
caches of 512 to 4,096 tokens. Two of their kernels do not follow their
bytes at a decode step's sizes, and the stack states them (docs/model.md
§3.3 and §4):

- cuDNN's fused attention forward (`sdpa ... flash_fprop`), run on the four
  query rows of a key/value head (the module packs GQA so): one thread block
  per sequence and key/value head, each a pass over its cache. Fitted:
  `decode_attention.start` (s) and `decode_attention.cycles` (c) in
      time = s + max(bytes / HBM rate, tokens * c * max(1, blocks / SMs) / clock)
  (rapidc's formula), least mean relative error over the fit table's rows.
- ATen's norm kernel (`vectorized_layer_norm_kernel`, RMSNorm here) over 1
  to 128 rows: flat at about 6 us. `reduction.norm_latency` is the median.

Only the first table is fitted; the others are reported with its figures.
The HBM rates are rapidc's (hbm.bandwidth x calibration.hbm of std.gpus'
h100_sxm_80gb and h200: 3.015 and 4.32 TB/s by default). Both GPUs run
132 SMs at 1.98 GHz.
"""
import csv
import statistics
import sys

SMS, CLOCK = 132, 1.98e9
KV_HEADS, HEAD_DIM, HEADS, HIDDEN = 8, 128, 32, 4096  # Llama-3-8B


def rows(path):
    """(batch, context, attention us, norm us) of each decode case."""
    out = {}
    with open(path) as f:
        for r in csv.reader(line for line in f if not line.startswith('#')):
            if not r[0].startswith('decode_'):
                continue
            b, c = (int(p[1:]) for p in r[0].split('_')[-2:])
            kernel, calls, total = ','.join(r[2:-2]), int(r[-2]), float(r[-1])
            entry = out.setdefault((b, c), {})
            if 'sdpa' in kernel and 'fprop' in kernel:
                entry['attention'] = total / calls
            elif 'vectorized_layer_norm_kernel' in kernel:
                entry['norm'] = total / calls
    return [(b, c, e['attention'], e['norm']) for (b, c), e in sorted(out.items())]


def attention_us(b, c, rate, start_us, cycles):
    cache = 2 * b * c * KV_HEADS * HEAD_DIM * 2  # K and V in BF16
    other = b * (2 * HIDDEN + 2 * KV_HEADS * HEAD_DIM) * 2  # Q, O, the new K and V
    memory = max((cache + other) / rate, 1.15e-6)  # the H100's kernel_floor
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
    print('decode_attention.start = %.2f us; decode_attention.cycles = %.2f; reduction.norm_latency = %.2f us'
          % (start, cycles, norm))
    for path, table, rate in zip(argv[1:], tables, rates):
        print('%s (%s):' % (path, 'fitted' if table is fit else 'held out'))
        for (b, c, t, n), e in zip(table, errors(table, rate, start, cycles)):
            print('  batch %3d, cache %4d: attention %7.2f us measured, %7.2f predicted (%+.1f %%); norm %.2f us'
                  % (b, c, t, attention_us(b, c, rate, start, cycles), 100 * e, n))
        print('  attention: %s; norm: %s' % (summary(errors(table, rate, start, cycles)),
                                             summary([norm / n - 1 for *_, n in table])))


if __name__ == '__main__':
    main(sys.argv)
