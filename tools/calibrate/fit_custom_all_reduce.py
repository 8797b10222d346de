"""Fits and checks a stack's custom all-reduce costs against measured kernel times.

  fit_custom_all_reduce.py fit CSV BIN RAPID_FILE
  fit_custom_all_reduce.py check CSV BIN RAPID_FILE MAX_MEDIAN MAX_WORST

CSV: rows of gpus, bytes, measured_us (test/data/validation/custom_allreduce_h100.csv).
BIN: the folder of rapidc, rapid-sim and rapid-et-gen. RAPID_FILE: a .rapid file whose
first experiment names the stack (rapidc --emit=sema gives its custom_all_reduce fields).

Every row is one all-reduce of `bytes` over `gpus` GPUs on a Switch(gpus) of 450 GB/s,
1 us links (std.clusters' dgx_h100: the kernels run inside one NVLink node).

`fit` scans custom_all_reduce.start, .start_per_peer and .bandwidth (the size limits stay
the stack's) for the least squared log error, with the closed form rapid-sim computes
(docs/runtime.md, "Custom all-reduce"): a one shot takes start + start_per_peer x peers,
one step of two 1 us links and peers x bytes at `bandwidth`; a two shot two such steps
of peers x bytes / gpus each. `check` runs every row through rapid-sim with the stack's
fields, prints measured against predicted, and fails where the median or worst relative
error is above its bound.
"""
import csv
import json
import math
import os
import subprocess
import sys
import tempfile

LINK_GBPS, LATENCY_US = 450.0, 1.0


def stack_fields(bin_dir, rapid_file):
    out = subprocess.run([os.path.join(bin_dir, "rapidc"), rapid_file, "--emit=sema"], check=True,
                         capture_output=True, text=True).stdout
    fields = {}
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("custom_all_reduce."):
            key, value = line.split(" = ")
            fields.setdefault(key[len("custom_all_reduce."):], float(value))
    if not fields.get("max"):
        sys.exit(f"error: {rapid_file}: the first experiment's stack has no custom_all_reduce.max")
    return fields


def rows(path):
    with open(path) as f:
        return [(int(r["gpus"]), float(r["bytes"]), float(r["measured_us"]))
                for r in csv.DictReader(line for line in f if not line.startswith("#"))]


def one_shot(f, gpus, size):
    if gpus == 2:
        return True
    return size < (f["one_shot_four_ranks"] if gpus <= 4 else f["one_shot"])


def closed_form_us(f, start_us, per_peer_us, gbps, gpus, size):
    peers, step = gpus - 1, 2 * LATENCY_US
    fixed = start_us + per_peer_us * peers
    if one_shot(f, gpus, size):
        return fixed + step + peers * size / gbps / 1e3
    return fixed + 2 * step + 2 * peers * size / gpus / gbps / 1e3


def simulate_us(bin_dir, f, gpus, size, tmp):
    trace, net, system = (os.path.join(tmp, f"{name}{gpus}_{int(size)}") for name in ("ar", "net", "sys"))
    with open(trace + ".txt", "w") as out:
        out.write(f"ranks {gpus}\nrank *\n1 COLL ALL_REDUCE size={int(size)}\n")
    subprocess.run([os.path.join(bin_dir, "rapid-et-gen"), trace + ".txt", "-o", trace], check=True)
    with open(net + ".json", "w") as out:
        json.dump({"dimensions": [{"kind": "Switch", "size": gpus, "bandwidth": f"{LINK_GBPS} GB/s",
                                   "latency": f"{LATENCY_US} us"}]}, out)
    keys = {"max": "custom-all-reduce-max", "max_two_ranks": "custom-all-reduce-max-two-ranks",
            "one_shot_four_ranks": "custom-all-reduce-one-shot-four-ranks", "one_shot": "custom-all-reduce-one-shot"}
    cfg = {k: f[name] for name, k in keys.items() if f.get(name)}
    cfg["custom-all-reduce-start"] = round(f.get("start", 0) * 1e9)
    cfg["custom-all-reduce-start-per-peer"] = round(f.get("start_per_peer", 0) * 1e9)
    if f.get("bandwidth"):
        cfg["custom-all-reduce-bandwidth"] = f["bandwidth"] / 1e9
    with open(system + ".json", "w") as out:
        json.dump(cfg, out)
    out = subprocess.run([os.path.join(bin_dir, "rapid-sim"), "--workload", trace, "--network", net + ".json",
                          "--system", system + ".json"], check=True, capture_output=True, text=True).stdout
    total = next(line for line in out.splitlines() if line.startswith("total_ns:"))
    return int(total.split()[1]) / 1e3


def summary(errors):
    a = sorted(abs(e) for e in errors)
    n = len(a)
    return (a[n // 2] + a[(n - 1) // 2]) / 2, max(errors, key=abs), sum(a) / n


def fit(table, f):
    best = None
    for start in (x / 20 for x in range(0, 81)):
        for per_peer in (x / 20 for x in range(0, 21)):
            for gbps in range(50, 451, 5):
                loss = sum(math.log(closed_form_us(f, start, per_peer, gbps, g, s) / m) ** 2 for g, s, m in table)
                if best is None or loss < best[0]:
                    best = (loss, start, per_peer, gbps)
    _, start, per_peer, gbps = best
    errors = [closed_form_us(f, start, per_peer, gbps, g, s) / m - 1 for g, s, m in table]
    median, worst, mean = summary(errors)
    print(f"start = {start:g} us; start_per_peer = {per_peer:g} us; bandwidth = {gbps:g} GB/s")
    print(f"{len(table)} rows: median error {median:.1%}, worst {worst:+.1%}, mean {mean:.1%}")


def check(table, f, bin_dir, max_median, max_worst):
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        for gpus, size, measured in table:
            predicted = simulate_us(bin_dir, f, gpus, size, tmp)
            errors.append(predicted / measured - 1)
            kind = "one shot" if one_shot(f, gpus, size) else "two shot"
            print(f"{gpus} GPUs, {int(size)} B ({kind}): measured {measured:.1f} us, predicted {predicted:.1f} us, "
                  f"error {errors[-1]:+.1%}")
    median, worst, mean = summary(errors)
    print(f"{len(table)} rows: median error {median:.1%}, worst {abs(worst):.1%}, mean {mean:.1%}")
    if median > max_median or abs(worst) > max_worst:
        sys.exit(f"error: above the bounds (median {max_median:.0%}, worst {max_worst:.0%})")


def main(argv):
    if len(argv) < 4 or argv[0] not in ("fit", "check") or (argv[0] == "check" and len(argv) != 6):
        sys.exit(__doc__)
    table, f = rows(argv[1]), stack_fields(argv[2], argv[3])
    if argv[0] == "fit":
        fit(table, f)
    else:
        check(table, f, argv[2], float(argv[4]), float(argv[5]))


if __name__ == "__main__":
    main(sys.argv[1:])
