#!/usr/bin/env python3
"""Builds the fuzz targets' seed corpora from the repository's own inputs.
Usage: seeds.py SOURCE_ROOT OUT_DIR

  OUT_DIR/rapid/   every .rapid file of examples/, stdlib/ and test/
  OUT_DIR/chakra/  every trace set of test/data/traces and test/Runtime/Inputs
                   with at most 8 ranks (and the first 8 ranks of larger
                   ones), packed as FuzzChakra.cpp reads them: an options
                   byte, then the rank files joined by the separator
  OUT_DIR/config/  the network, system, faults and comm-group files of test/
  OUT_DIR/kineto/  test/Profile's Kineto trace sets (Inputs/ folders of .json
                   files), packed as FuzzKineto.cpp reads them: an options
                   byte, then the rank files joined by the separator (a host
                   execution trace last, with options bit 5)

Runs in the build tree at build time; nothing is written to the sources."""
import collections
import hashlib
import os
import re
import shutil
import sys

SEPARATOR = b"\n--RANK--\n"
MAX_BYTES = 64 * 1024  # larger files make slow seeds and are cut by -max_len anyway


def put(out, data):
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)


def files(root, exts):
    for d, _, names in os.walk(root):
        for n in sorted(names):
            if n.endswith(exts):
                p = os.path.join(d, n)
                if os.path.getsize(p) <= MAX_BYTES:
                    yield p


def main():
    src, out = sys.argv[1:3]
    for t in ("rapid", "chakra", "config", "kineto"):
        shutil.rmtree(os.path.join(out, t), ignore_errors=True)
        os.makedirs(os.path.join(out, t))
    for sub in ("examples", "stdlib", "test"):
        for p in files(os.path.join(src, sub), (".rapid",)):
            # Benchmarks are sized to take seconds unsanitized: the 1,024-GPU
            # search's thousands of layouts take 20 s under ASan, past
            # libFuzzer's 10 s an input. Their syntax is the examples'.
            if "/examples/bench/" in p:
                continue
            put(os.path.join(out, "rapid"), open(p, "rb").read())

    sets = collections.defaultdict(dict)
    for p in files(os.path.join(src, "test"), (".et",)):
        m = re.match(r"(.*)\.(\d+)\.et$", p)
        if m:
            sets[m.group(1)][int(m.group(2))] = p
    for n, (prefix, ranks) in enumerate(sorted(sets.items())):
        count = 0
        while count in ranks and count < 8:
            count += 1
        if count == 0:
            continue
        body = SEPARATOR.join(open(ranks[r], "rb").read() for r in range(count))
        put(os.path.join(out, "chakra"), bytes([n % 256]) + body)

    for p in files(os.path.join(src, "test"), (".json", ".yml", ".yaml")):
        if "/Inputs/" in p or "/data/" in p:
            put(os.path.join(out, "config"), open(p, "rb").read())
    kineto = os.path.join(src, "test", "Profile", "Inputs")
    sets = [d for d in sorted(os.listdir(kineto)) if os.path.isdir(os.path.join(kineto, d))]  # trace folders
    for n, d in enumerate(sets):
        texts = [open(os.path.join(kineto, d, r), "rb").read() for r in sorted(os.listdir(os.path.join(kineto, d)))]
        # A host execution trace goes last, and options bit 5 says it is there.
        hosts = [t for t in texts if b'"nodes"' in t and b'"schema"' in t]
        body = SEPARATOR.join([t for t in texts if t not in hosts] + hosts[:1])
        # Sets with Megatron-LM's linears also re-sharded (bit 6).
        for flags in list(range(16)) + ([64, 64 | 4] if b"LinearWithGradAccumulation" in body else []):
            put(os.path.join(out, "kineto"), bytes([flags | (32 if hosts else 0)]) + body)
    for t in ("rapid", "chakra", "config", "kineto"):
        print(f"{t}: {len(os.listdir(os.path.join(out, t)))} seeds")


if __name__ == "__main__":
    main()
