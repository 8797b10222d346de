"""same_steps.py A.jsonl B.jsonl: every point of two runs has the same step
time, to 10 ns (a replayed collective's time is whole nanoseconds)."""
import json
import sys

a, b = ([json.loads(line) for line in open(p)] for p in sys.argv[1:3])
differ = [x["experiment"] for x, y in zip(a, b) if abs(x["step_time_s"] - y["step_time_s"]) > 1e-8]
print(f"{len(a)} points, step times differ in: {' '.join(differ) or 'none'}")
sys.exit(1 if differ or len(a) != len(b) else 0)
