"""Compares rapidc's predictions (JSON lines on stdin) with a published table.

compare.py KIND CSV MAX_MEDIAN MAX_WORST
  KIND korthikanti: rows of korthikanti_table5.csv against the experiments
       gpt_<size> of examples/validation/korthikanti_table5.rapid, matched on
       the recompute policy in the point's label; compares iteration_s with step_time_s.
  KIND llama2: rows of llama2_inference_a100.csv against llama2_<size>_tp<tp>
       of examples/validation/llama2_inference.rapid; compares total_s.
Prints one line per row and the median and worst absolute relative error;
fails when either is above its bound (fractions, e.g. 0.25) or a row has no
prediction."""
import csv
import json
import statistics
import sys

kind, table, max_median, max_worst = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
predicted = {}
for line in sys.stdin:
    o = json.loads(line)
    if kind == "korthikanti" and "step_time_s" in o:
        policy = o["point"].get("recompute", "")
        predicted[(o["experiment"], policy)] = o["step_time_s"]
    elif kind == "llama2" and "total_s" in o:
        predicted[(o["experiment"], "")] = o["total_s"]

errors = []
for row in csv.DictReader(open(table)):
    if kind == "korthikanti":
        key, measured = (row["model"], row["recompute"]), float(row["iteration_s"])
        name = f"{row['model']} {row['recompute']}{' + SP' if row['sequence_parallel'] == 'true' else ''}"
    else:
        key, measured = (f"{row['model']}_tp{row['tp']}", ""), float(row["total_s"])
        name = f"{row['model']} tp={row['tp']}"
    if key not in predicted:
        print(f"{name}: no prediction")
        sys.exit(1)
    err = (predicted[key] - measured) / measured
    errors.append(abs(err))
    print(f"{name}: measured {measured:.3f} s, predicted {predicted[key]:.3f} s, error {100 * err:+.1f}%")
median, worst = statistics.median(errors), max(errors)
print(f"{len(errors)} rows: median error {100 * median:.1f}%, worst {100 * worst:.1f}%")
sys.exit(0 if median <= max_median and worst <= max_worst else 1)
