"""Compares rapidc's predictions (JSON lines on stdin) with a published table.

compare.py KIND CSV MAX_MEDIAN MAX_WORST
  KIND korthikanti: rows of korthikanti_table5.csv against the experiments
       gpt_<size> of examples/validation/korthikanti_table5.rapid, matched on
       the recompute policy in the point's label; compares iteration_s with step_time_s.
  KIND korthikanti4: rows of korthikanti_table4.csv against the sweep table4 of
       examples/validation/korthikanti_table4.rapid, matched on recompute and
       sp in the point's label; compares fwd_ms and bwd_ms (two rows each) with
       breakdown.layer_forward_s and .layer_backward_s.
  KIND hopper_layer: the gpt22b_layer `train_layer` rows of steps_h200.csv
       against the sweep hopper_layer of examples/validation/hopper_layer.rapid,
       matched on micro_batch; compares fwd and bwd with breakdown.layer_forward_s
       and .layer_backward_s.
  KIND llama_layer: the llama8b_layer `train_layer` rows of steps_h100.csv or
       steps_h200.csv (the CSV's `# gpu:` line says which) against
       llama_8b_layer_<gpu>_b<batch> of the same file; fwd and bwd as
       hopper_layer compares them.
  KIND hopper_loop: the gpt22b_layer `loop` rows of a gaps_*.csv
       (tools/calibrate/gaps.py: calls back to back, a training loop's
       steady state) against the sweep hopper_layer (H200) or
       hopper_layer_h100 (the CSV's `# gpu:` line names an H100) of the same
       file, matched on micro_batch; compares fwd with layer_forward_s and
       fwd+bwd with their sum.
  KIND llama2: rows of llama2_inference_a100.csv against llama2_<size>_tp<tp>
       of examples/validation/llama2_inference.rapid; compares total_s.
  KIND vllm: rows of vllm_lambda/measured.csv against the experiments of
       examples/validation/vllm_serving.rapid named after each case
       (h100_llama3_8b_tp1_n10 -> h100_8b_n10); compares the run's duration
       and its median TTFT, TPOT and end-to-end latency (four rows a case).
  KIND nim: rows of nim_genai_perf/measured.csv against the sweeps of
       examples/validation/nim_serving.rapid (experiment <gpu>_<8b|70b>_tp<gpus>_
       <precision>, point prompt x output x concurrency); compares mean TTFT,
       mean ITL (genai-perf's, a request's time per output token after the
       first) and requests per second (three rows a run). MAX_MEDIAN may be
       three bounds, ttft,itl,throughput, each on its own figure's median.
  KIND megatron1: rows of megatron_table1.csv against gpt_<params>b of
       examples/validation/megatron_table1.rapid (gpt_1_7b ... gpt_1t);
       compares achieved teraFLOP/s per GPU, the paper's Eq. 3 FLOPs,
       96 B s l h^2 (1 + s/6h + V/16lh) with s 2048 and V 51,200, over the
       predicted step_time_s and the row's GPUs.
  KIND uci: the SUCCESS rows of uci_4xa100_llama2_7b_training.csv against
       <variant>_tp<t>_pp<p>_cp<c>_dp<d> of
       examples/validation/uci_llama2_training.rapid (ddp_tp1_pp1_cp1_dp4 ...);
       compares step_s with step_time_s.
  KIND gpt_fast: rows of gpt_fast_a100/measured.csv against <model>_tp<gpus>
       of examples/validation/gpt_fast_decode.rapid; compares tokens_per_s
       (new tokens over the whole generation, prefill included).
  KIND trtllm: rows of trtllm_090/measured.csv against the sweeps of
       examples/validation/trtllm_static.rapid (experiment <gpu>_<model>_tp<tp>_
       <precision>, point batch x prefill x decode); compares the first-token
       latency with ttft_s, the token-to-token latency with itl_s and the peak
       GPU memory (GB) with memory.peak_bytes (three rows a run). MAX_MEDIAN
       may be three bounds, one a figure. A row whose point rapid finds
       infeasible (its memory) is listed and counted apart, not compared.
  KIND hopper_steps: the `graph` decode and prefill rows of steps_h100.csv or
       steps_h200.csv (the CSV's `# gpu:` line says which) against
       decode_<gpu>_b<batch>_c<context> (its itl_s) and
       prefill_<gpu>_b<batch>_t<tokens> (its ttft_s) of
       examples/validation/hopper_steps.rapid.
Prints one line per row and the median and worst absolute relative error;
fails when either is above its bound (fractions, e.g. 0.25) or a row has no
prediction."""
import csv
import json
import statistics
import sys

kind, table, max_worst = sys.argv[1], sys.argv[2], float(sys.argv[4])
max_median = [float(x) for x in sys.argv[3].split(",")]
NIM_PARTS = ("ttft", "itl", "throughput")
predicted, infeasible = {}, {}
for line in sys.stdin:
    o = json.loads(line)
    if kind == "korthikanti" and "step_time_s" in o:
        policy = o["point"].get("recompute", "")
        predicted[(o["experiment"], policy)] = o["step_time_s"]
    elif kind == "korthikanti4" and "breakdown" in o:
        b, pt = o["breakdown"], o["point"]
        key = (pt.get("recompute", ""), "on" if pt.get("sp") else "off")
        predicted[key + ("fwd",)] = b["layer_forward_s"] * 1e3
        predicted[key + ("bwd",)] = b["layer_backward_s"] * 1e3
    elif kind == "hopper_layer" and "breakdown" in o and o.get("sweep") == "hopper_layer":
        b, mb = o["breakdown"], str(o["point"]["micro_batch"])
        predicted[(mb, "fwd")] = b["layer_forward_s"] * 1e3
        predicted[(mb, "bwd")] = b["layer_backward_s"] * 1e3
    elif kind == "llama_layer" and "breakdown" in o and o["experiment"].startswith("llama_8b_layer_"):
        b = o["breakdown"]
        predicted[(o["experiment"], "fwd")] = b["layer_forward_s"] * 1e3
        predicted[(o["experiment"], "bwd")] = b["layer_backward_s"] * 1e3
    elif kind == "hopper_loop" and "breakdown" in o and o.get("sweep", "").startswith("hopper_layer"):
        b, mb = o["breakdown"], str(o["point"]["micro_batch"])
        predicted[(o.get("sweep"), mb, "fwd")] = b["layer_forward_s"] * 1e3
        predicted[(o.get("sweep"), mb, "fwd+bwd")] = (b["layer_forward_s"] + b["layer_backward_s"]) * 1e3
    elif kind == "megatron1" and "step_time_s" in o:
        predicted[(o["experiment"], "")] = (o["step_time_s"], o["gpus"])
    elif kind == "uci" and "step_time_s" in o:
        predicted[(o["experiment"], "")] = o["step_time_s"]
    elif kind == "hopper_steps" and "itl_s" in o:
        part = "itl_s" if o["experiment"].startswith("decode_") else "ttft_s"
        predicted[(o["experiment"], "")] = o[part] * 1e3
    elif kind == "gpt_fast" and "tokens_per_s" in o:
        predicted[(o["experiment"], "")] = o["tokens_per_s"]
    elif kind == "llama2" and "total_s" in o:
        predicted[(o["experiment"], "")] = o["total_s"]
    elif kind == "vllm" and "serving" in o:
        s = o["serving"]
        for part, v in (("duration", s["duration_s"]), ("ttft", s["ttft_s"]["p50"]), ("tpot", s["tpot_s"]["p50"]),
                        ("e2e", s["e2e_s"]["p50"])):
            predicted[(o["experiment"], part)] = v
    elif kind == "trtllm" and "inference.batch" in o.get("point", {}):
        pt = o["point"]
        point = (o["experiment"], pt["inference.batch"], pt["inference.prefill"], pt["inference.decode"])
        if not o["feasible"]:
            infeasible[point] = o["reason"]
        else:
            predicted[point + ("ttft",)] = o["ttft_s"] * 1e3
            predicted[point + ("itl",)] = o["itl_s"] * 1e3
            predicted[point + ("memory",)] = o["memory"]["peak_bytes"] / 1e9
    elif kind == "nim" and "serving" in o and "serving.concurrency" in o.get("point", {}):
        s, pt = o["serving"], o["point"]
        point = (o["experiment"], pt["serving.prompt"], pt["serving.output"], pt["serving.concurrency"])
        for part, v in zip(NIM_PARTS, (s["ttft_s"]["mean"] * 1e3, s["tpot_s"]["mean"] * 1e3, s["requests_per_s"])):
            predicted[point + (part,)] = v


def nim_name(row):
    """The experiment of a NIM run: h100_8b_tp1_fp16 ..."""
    gpu = "h100" if row["gpu"].startswith("H100") else "a100"
    size = "70b" if "70b" in row["model"] else "8b"
    return f"{gpu}_{size}_tp{row['gpus']}_{row['precision']}"


def rows():
    """(name, key, measured, unit) for every comparison the table makes."""
    gpu = next((line for line in open(table) if line.startswith("# gpu:")), "")
    sweep = "hopper_layer_h100" if "H100" in gpu else "hopper_layer"
    for row in csv.DictReader(line for line in open(table) if not line.startswith("#")):
        if kind == "hopper_loop":
            if row["case"] == "gpt22b_layer" and row["measure"] == "loop":
                yield (f"{sweep} micro-batch {row['batch']} {row['mode']}", (sweep, row["batch"], row["mode"]),
                       float(row["value"]), "ms")
        elif kind == "hopper_steps":
            if row["mode"] == "graph" and row["kind"] in ("decode", "prefill"):
                size = f"c{row['context']}" if row["kind"] == "decode" else f"t{row['tokens']}"
                name = f"{row['kind']}_{'h100' if 'H100' in gpu else 'h200'}_b{row['batch']}_{size}"
                yield name, (name, ""), float(row["latency_ms"]), "ms"
        elif kind == "hopper_layer":
            if row["kind"] == "train_layer" and row["case"] == "gpt22b_layer":
                yield (f"micro-batch {row['batch']} {row['mode']}", (row["batch"], row["mode"]),
                       float(row["latency_ms"]), "ms")
        elif kind == "llama_layer":
            if row["kind"] == "train_layer" and row["case"] == "llama8b_layer":
                name = f"llama_8b_layer_{'h100' if 'H100' in gpu else 'h200'}_b{row['batch']}"
                yield (f"{name} ({row['tokens']} tokens) {row['mode']}", (name, row["mode"]),
                       float(row["latency_ms"]), "ms")
        elif kind == "korthikanti4":
            policy = f"{row['recompute']} recompute{' + SP' if row['sequence_parallel'] == 'on' else ''}"
            for part in ("fwd", "bwd"):
                key = (row["recompute"], row["sequence_parallel"], part)
                yield f"{policy} {part}", key, float(row[f"{part}_ms"]), "ms"
        elif kind == "vllm":
            name = row["case"].replace("_llama3_", "_").replace("_tp1", "")
            for part, column, scale in (("duration", "duration_s", 1), ("ttft", "median_ttft_ms", 1e-3),
                                        ("tpot", "median_tpot_ms", 1e-3), ("e2e", "median_latency_ms", 1e-3)):
                yield f"{name} {part}", (name, part), float(row[column]) * scale, "s"
        elif kind == "nim":
            point = (nim_name(row), int(row["input_tokens"]), int(row["output_tokens"]), int(row["concurrency"]))
            label = f"{point[0]} {point[1]}/{point[2]} c={point[3]}"
            for part, column, unit in zip(NIM_PARTS, ("ttft_avg_ms", "itl_avg_ms", "request_throughput_per_s"),
                                          ("ms", "ms", "req/s")):
                yield f"{label} {part}", point + (part,), float(row[column]), unit
        elif kind == "trtllm":
            point = (f"{row['gpu']}_{row['model']}_tp{row['tp']}_{row['precision']}", int(row["batch"]),
                     int(row["input"]), int(row["output"]))
            label = f"{point[0]} b={point[1]} {point[2]}/{point[3]}"
            for part, column, unit in (("ttft", "ttft_ms", "ms"), ("itl", "itl_ms", "ms"),
                                       ("memory", "peak_memory_gb", "GB")):
                yield f"{label} {part}", point + (part,), float(row[column]), unit
        elif kind == "gpt_fast":
            name = f"{row['model']}_tp{row['gpus']}"
            yield name, (name, ""), float(row["tokens_per_s"]), "tokens/s"
        elif kind == "megatron1":
            yield megatron_name(row), (megatron_name(row), ""), float(row["tflops_per_gpu"]), "TFLOP/s"
        elif kind == "uci":
            if row["status"] == "SUCCESS":
                name = f"{row['variant'].lower()}_tp{row['tp']}_pp{row['pp']}_cp{row['cp']}_dp{row['dp']}"
                yield name, (name, ""), float(row["step_s"]), "s"
        elif kind == "korthikanti":
            key, measured = (row["model"], row["recompute"]), float(row["iteration_s"])
            yield f"{row['model']} {row['recompute']}{' + SP' if row['sequence_parallel'] == 'true' else ''}", key, measured, "s"
        else:
            yield f"{row['model']} tp={row['tp']}", (f"{row['model']}_tp{row['tp']}", ""), float(row["total_s"]), "s"


def megatron_name(row):
    """The experiment of a Table 1 row: gpt_1_7b ... gpt_1t."""
    return "gpt_1t" if row["params_b"] == "1008.0" else "gpt_" + row["params_b"].replace(".", "_") + "b"


def eq3_tflops_per_gpu(row, step_s, gpus):
    """Narayanan et al. Eq. 3 over the predicted step, per GPU."""
    b, l, h = (float(row[k]) for k in ("global_batch", "layers", "hidden"))
    s, v = 2048.0, 51200.0
    return 96 * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h)) / step_s / gpus / 1e12


if kind == "megatron1":
    by_key = {(megatron_name(r), ""): r for r in csv.DictReader(open(table))}
    predicted = {k: eq3_tflops_per_gpu(by_key[k], *v) for k, v in predicted.items() if k in by_key}

errors, by_part, skipped = [], {}, 0
for name, key, measured, unit in rows():
    if key[:-1] in infeasible:
        print(f"{name}: measured {measured:.3f} {unit}, predicted infeasible ({infeasible[key[:-1]]})")
        skipped += 1
        continue
    if key not in predicted:
        print(f"{name}: no prediction")
        sys.exit(1)
    err = (predicted[key] - measured) / measured
    errors.append(abs(err))
    by_part.setdefault(key[-1], []).append(abs(err))
    print(f"{name}: measured {measured:.3f} {unit}, predicted {predicted[key]:.3f} {unit}, error {100 * err:+.1f}%")
median, worst = statistics.median(errors), max(errors)
print(f"{len(errors)} rows: median error {100 * median:.1f}%, worst {100 * worst:.1f}%")
if skipped:
    print(f"{skipped} rows predicted infeasible")
if kind in ("nim", "trtllm"):
    parts = NIM_PARTS if kind == "nim" else ("ttft", "itl", "memory")
    medians = [statistics.median(by_part[p]) for p in parts]
    for p, m in zip(parts, medians):
        v = by_part[p]
        print(f"{p}: {len(v)} rows, median error {100 * m:.1f}%, mean {100 * sum(v) / len(v):.1f}%, worst {100 * max(v):.1f}%")
    ok = all(m <= b for m, b in zip(medians, max_median * len(parts) if len(max_median) == 1 else max_median))
else:
    ok = median <= max_median[0]
sys.exit(0 if ok and worst <= max_worst else 1)
