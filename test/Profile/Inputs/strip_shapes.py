"""Copies a directory's Kineto traces without the shapes record_shapes=True
adds ("Input Dims", "Input type", "Concrete Inputs" on operators and
annotations), as a profile taken without it; with --hosts, copies its host
execution traces beside them.

strip_shapes.py SRC DST [--hosts]"""
import glob
import gzip
import json
import os
import sys

src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
for path in sorted(glob.glob(os.path.join(src, "*.json*"))):
    opener = gzip.open if path.endswith(".gz") else open
    doc = json.load(opener(path, "rt"))
    name = os.path.basename(path).removesuffix(".gz")
    if "traceEvents" in doc:
        for e in doc["traceEvents"]:
            if e.get("cat") in ("cpu_op", "user_annotation"):
                for key in ("Input Dims", "Input type", "Concrete Inputs"):
                    e.get("args", {}).pop(key, None)
    elif "--hosts" not in sys.argv:
        continue
    json.dump(doc, open(os.path.join(dst, name), "w"))
