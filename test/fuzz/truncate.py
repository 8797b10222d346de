"""Feeds rapidc every example cut short at many points, and byte-flipped
copies, and checks that it never crashes or hangs: exit status 0 or 1 only.
Usage: truncate.py RAPIDC EXAMPLES_DIR STDLIB_DIR WORK_DIR"""
import os
import random
import subprocess
import sys

rapidc, examples, stdlib, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
rng = random.Random(7)  # same inputs every run
inputs = []
for name in sorted(os.listdir(examples)):
    if not name.endswith(".rapid"):
        continue
    text = open(os.path.join(examples, name), "rb").read()
    for cut in range(0, len(text), max(1, len(text) // 12)):
        inputs.append(text[:cut])
    for _ in range(6):
        b = bytearray(text)
        for _ in range(3):
            b[rng.randrange(len(b))] = rng.choice(b"{};=()[],.x%@\"0az\n")
        inputs.append(bytes(b))

bad = 0
for i, data in enumerate(inputs):
    path = os.path.join(work, f"input{i}.rapid")
    with open(path, "wb") as f:
        f.write(data)
    try:
        rc = subprocess.run([rapidc, path, "--emit=sema", "--stdlib", stdlib], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, timeout=20).returncode
    except subprocess.TimeoutExpired:
        rc = "timeout"
    if rc not in (0, 1):
        bad += 1
        print(f"{path}: exit {rc}")
print(f"{len(inputs)} inputs, {bad} crashes")
sys.exit(1 if bad else 0)
