#!/usr/bin/env python3
"""dp_only.py IN_DIR OUT_DIR: ranks 0 and 1 of Inputs/train-dp as a
data-parallel job of two ranks: its tensor-parallel groups' records dropped,
its data-parallel all-reduce over both ranks (the world)."""
import os
import re
import sys

os.makedirs(sys.argv[2], exist_ok=True)
for r in (0, 1):
    text = open(os.path.join(sys.argv[1], f"t{r}.json")).read().replace('"world_size": 4', '"world_size": 2')
    text = re.sub(r".*TENSOR_MODEL_PARALLEL_GROUP.*\n", "", text)
    text = re.sub(r'"Process Group Ranks": "\[[0-9], [0-9]\]"', '"Process Group Ranks": "[0, 1]"', text)
    open(os.path.join(sys.argv[2], f"t{r}.json"), "w").write(text)
