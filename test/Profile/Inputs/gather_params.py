#!/usr/bin/env python3
"""gather_params.py IN_DIR OUT_DIR: Inputs/train-dp with its data-parallel
all-reduce (128 MiB a rank) turned into a gather of the parameters sharded
over data parallelism, as FSDP or a distributed optimizer runs one
(`_allgather_base`: each member's 128 MiB share in, the whole out)."""
import os
import sys

os.makedirs(sys.argv[2], exist_ok=True)
for name in sorted(os.listdir(sys.argv[1])):
    out = []
    for line in open(os.path.join(sys.argv[1], name)):
        if '"correlation": 50}' in line and '"cat": "kernel"' in line:
            line = line.replace("AllReduce_Sum_f16_RING_LL", "AllGather_RING_LL")
        if '"ts": 1280' in line:
            line = line.replace("nccl:all_reduce", "nccl:_all_gather_base").replace('"allreduce"', '"_allgather_base"')
        out.append(line)
    open(os.path.join(sys.argv[2], name), "w").write("".join(out))
