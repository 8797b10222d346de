#!/usr/bin/env python3
"""pipeline.py IN_DIR OUT_DIR [--sp]: Inputs/train-dp (TP 2 x DP 2 on four
ranks) as the first of two pipeline stages (TP 2 x DP 2 x PP 2 on eight
ranks, Megatron-LM's order: rank 4 p + 2 d + j). Each rank of stage 0 sends
its stage's output, 32 MiB (4,096 tokens x 4,096 x 16 bits), to its place in
stage 1 after the forward pass and receives the gradient back before the
backward; stage 1 receives first and sends last. Every record names its
process group, as recent PyTorch records them, the sends' with the peer's
global rank ("Dst Rank" / "Src Rank") on PIPELINE_MODEL_PARALLEL_GROUP.
With --sp the job is sequence parallel (Megatron-LM's scatter of the
embeddings along the sequence, `_ScatterToSequenceParallelRegion`, on every
rank) and each send carries the rank's half of the tokens, 16 MiB."""
import json
import os
import re
import sys

src, out = sys.argv[1], sys.argv[2]
sp = "--sp" in sys.argv[3:]
os.makedirs(out, exist_ok=True)
nelems = 16777216 // (2 if sp else 1)


def ev(name, cat, tid, ts, dur, args=None):
    e = {"ph": "X", "cat": cat, "name": name, "pid": 100 if cat != "kernel" else 0, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return json.dumps(e)


def p2p(kind, peer, tid, ts, corr, kernel_ts, kernel_dur, pp_name, pp_ranks):
    args = {"Collective name": kind, "dtype": "Half", "In msg nelems": nelems, "Out msg nelems": nelems,
            "Group size": 2, "Process Group Name": pp_name,
            "Process Group Description": "PIPELINE_MODEL_PARALLEL_GROUP", "Process Group Ranks": pp_ranks,
            ("Dst Rank" if kind == "send" else "Src Rank"): peer}
    return [ev("record_param_comms", "cpu_op", tid, ts, 6, args),
            ev("cudaLaunchKernel", "cuda_runtime", tid, ts + 1, 4, {"correlation": corr}),
            ev("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", "kernel", 30, kernel_ts,
               kernel_dur, {"stream": 30, "correlation": corr})]


for r in range(8):
    stage, q = divmod(r, 4)
    text = open(os.path.join(src, f"t{q}.json")).read()
    text = text.replace(f'"rank": {q}, "world_size": 4', f'"rank": {r}, "world_size": 8')
    # Each stage's groups are its own: other ranks, other names.
    text = re.sub(r'"Process Group Name": "([0-9]+)"',
                  lambda m: f'"Process Group Name": "{int(m.group(1)) + 2 * stage}"', text)
    text = re.sub(r'"Process Group Ranks": "\[([0-9]+), ([0-9]+)\]"',
                  lambda m: f'"Process Group Ranks": "[{int(m.group(1)) + 4 * stage}, {int(m.group(2)) + 4 * stage}]"',
                  text)
    pp_name, pp_ranks = "5", f"[{q}, {q + 4}]"
    if stage == 0:  # the output to stage 1 after the forward pass, its gradient back before the backward
        extra = p2p("send", r + 4, 1, 1090, 60, 1990, 50, pp_name, pp_ranks) + \
                p2p("recv", r + 4, 2, 1092, 61, 2040, 20, pp_name, pp_ranks)
    else:  # the input from stage 0 first, its gradient back last
        extra = p2p("recv", r - 4, 1, 1002, 60, 1008, 20, pp_name, pp_ranks) + \
                p2p("send", r - 4, 2, 1222, 61, 3400, 50, pp_name, pp_ranks)
    if sp:
        extra.append(ev("_ScatterToSequenceParallelRegion", "cpu_op", 1, 1008, 1))
    text = text.replace('"traceEvents": [\n', '"traceEvents": [\n' + ",\n".join(extra) + ",\n", 1)
    open(os.path.join(out, f"t{r}.json"), "w").write(text)
