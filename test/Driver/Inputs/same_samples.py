"""same_samples.py A.json B.json [LINE]: the first fault study of two runs
of one point (the points on line LINE, from 1; default 1) gives every sample
the same time, to 10 ns."""
import json
import sys

line = int(sys.argv[3]) - 1 if len(sys.argv) > 3 else 0
a, b = (json.loads(open(p).read().splitlines()[line]) for p in sys.argv[1:3])
ta, tb = (r["fault_studies"][0]["times_s"] for r in (a, b))
differ = [str(i) for i, (x, y) in enumerate(zip(ta, tb)) if abs(x - y) > 1e-8]
kinds = len({round(t / a["step_time_s"], 3) for t in ta})
print(f"{len(ta)} samples, {kinds} distinct slowdowns, differ in: {' '.join(differ) or 'none'}")
sys.exit(1 if differ or len(ta) != len(tb) else 0)
