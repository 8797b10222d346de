#!/usr/bin/env python3
"""Random traces and corrupted files against rapid-sim and rapid-et-dump.

Not part of `check` (it is slow and random by design). Usage:
    test/fuzz/rapid-sim-fuzz.py BUILD_BIN_DIR [ITERATIONS]
Every run must end with exit status 0, or 1 and a `rapid-sim: error:` line,
within 20 s: no crash, no hang, no silent failure.
"""
import os
import random
import subprocess
import sys
import tempfile

NETWORKS = [
    '{"dimensions": [{"kind": "Ring", "size": 4, "bandwidth": "1 GB/s", "latency": "100 ns"}]}',
    '{"dimensions": [{"kind": "Switch", "size": 2, "bandwidth": "1 GB/s", "latency": "100 ns"},'
    ' {"kind": "Torus2D", "shape": [2, 2], "bandwidth": "2 GB/s", "latency": "10 ns"}]}',
    '{"dimensions": [{"kind": "FatTree", "size": 4, "leaf_size": 2, "oversubscription": 2,'
    ' "bandwidth": "1 GB/s", "latency": "100 ns"}]}',
    # Trunks faster than the rank links, and whole-packet forwarding.
    '{"dimensions": [{"kind": "FatTree", "size": 4, "leaf_size": 2, "bandwidth": "1 GB/s",'
    ' "latency": "100 ns", "packet": "256 B"}]}',
    # Three tiers: a leaf per rank, two pods, a thin core.
    '{"dimensions": [{"kind": "FatTree", "size": 4, "leaf_size": 1, "pod_size": 2, "pod_oversubscription": 3,'
    ' "bandwidth": "1 GB/s", "latency": "100 ns"}]}',
]
COLLECTIVES = ["ALL_REDUCE", "ALL_GATHER", "REDUCE_SCATTER", "ALL_TO_ALL", "BROADCAST"]
MODES = [[], ["--astra-compat"], ["--mode", "analytical"], ["--comm-streams", "2", "--splits", "3"]]


def random_rank(rnd, rank, collectives, ranks, sends):
    """One rank's description: compute, the shared collectives, maybe a send."""
    lines, ids = [f"rank {rank}"], []
    for nid in range(1, rnd.randint(1, 7)):
        deps = ",".join(map(str, rnd.sample(ids, min(len(ids), rnd.randint(0, 2)))))
        lines.append(f"{nid} COMP dur={rnd.randint(0, 5)}" + (f" deps={deps}" if deps else ""))
        ids.append(nid)
    for k, (kind, size) in enumerate(collectives):
        nid = 100 + k
        deps = ",".join(map(str, rnd.sample(ids, min(len(ids), rnd.randint(0, 2)))))
        lines.append(f"{nid} COLL {kind} size={size} dur=1" + (f" deps={deps}" if deps else ""))
        ids.append(nid)
    if rnd.random() < 0.5:
        dst, tag = rnd.randrange(ranks), rnd.randint(0, 3)
        lines.append(f"200 SEND dst={dst} tag={tag} size=64")
        sends.append((rank, dst, tag))
    return lines


def random_trace(rnd, ranks):
    collectives = [(rnd.choice(COLLECTIVES), rnd.choice([0, 100, 4096, 1 << 20]))
                   for _ in range(rnd.randint(0, 4))]
    sends, per_rank = [], []
    for r in range(ranks):
        per_rank.append(random_rank(rnd, r, collectives, ranks, sends))
    for i, (src, dst, tag) in enumerate(sends):
        if rnd.random() < 0.9:  # sometimes leave a send unmatched
            per_rank[dst].append(f"{300 + i} RECV src={src} tag={tag} size=64")
    if rnd.random() < 0.1:
        per_rank[0].append("400 COMP dur=1 deps=555")        # dangling
    if rnd.random() < 0.1:
        per_rank[0] += ["401 COMP dur=1 deps=402", "402 COMP dur=1 deps=401"]  # cycle
    return "\n".join(line for lines in per_rank for line in lines) + "\n"


OUTCOMES = {0: 0, 1: 0}


def check(cmd, tool, failures):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except subprocess.TimeoutExpired:
        failures.append(("hang", cmd))
        return
    OUTCOMES[p.returncode] = OUTCOMES.get(p.returncode, 0) + 1
    if p.returncode not in (0, 1) or (p.returncode == 1 and f"{tool}: error:" not in p.stderr):
        failures.append((p.returncode, cmd, p.stderr[:300]))


def fuzz_traces(bin_dir, work, iterations, failures):
    for it in range(iterations):
        rnd = random.Random(it)
        net = rnd.choice(NETWORKS)
        ranks = 8 if "Switch" in net else 4
        with open(os.path.join(work, "net.json"), "w") as f:
            f.write(net)
        with open(os.path.join(work, "t.txt"), "w") as f:
            f.write(random_trace(rnd, ranks))
        prefix = os.path.join(work, f"t{it}")
        subprocess.run([f"{bin_dir}/rapid-et-gen", os.path.join(work, "t.txt"), "-o", prefix],
                       check=True)
        for mode in MODES:
            check([f"{bin_dir}/rapid-sim", "--workload", prefix, "--network",
                   os.path.join(work, "net.json")] + mode, "rapid-sim", failures)


def fuzz_bytes(bin_dir, work, iterations, failures):
    seed = os.path.join(work, "seed")
    subprocess.run([f"{bin_dir}/rapid-et-gen", os.path.join(work, "t.txt"), "-o", seed], check=True)
    data = open(seed + ".0.et", "rb").read()
    for it in range(iterations):
        rnd, b = random.Random(it), bytearray(data)
        for _ in range(rnd.randint(1, 10)):
            i = rnd.randrange(max(1, len(b)))
            b[i:i + rnd.randint(0, 8)] = bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 8)))
        path = os.path.join(work, "x.0.et")
        open(path, "wb").write(b)
        for fmt in ("text", "json"):
            check([f"{bin_dir}/rapid-et-dump", f"--format={fmt}", path], "rapid-et-dump", failures)


def main():
    bin_dir = sys.argv[1]
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    failures = []
    with tempfile.TemporaryDirectory() as work:
        fuzz_traces(bin_dir, work, iterations, failures)
        fuzz_bytes(bin_dir, work, iterations, failures)
    for f in failures:
        print("FAIL", f)
    print(f"{iterations} traces, {iterations} corrupted files: {OUTCOMES[0]} runs ok, "
          f"{OUTCOMES[1]} clean errors, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
