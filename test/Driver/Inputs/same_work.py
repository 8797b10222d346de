"""same_work.py A.json B.json: the first points of two runs of one experiment
claim the same memory peak and the same model FLOPs (mfu x step time)."""
import json
import sys

a, b = (json.loads(open(p).readline()) for p in sys.argv[1:3])
peak = a["memory"]["peak_bytes"] == b["memory"]["peak_bytes"]
fa, fb = (r["mfu"] * r["step_time_s"] for r in (a, b))
flops = abs(fa - fb) <= 1e-12 * max(fa, fb)
print(f"peak {'same' if peak else 'differs'}, model FLOPs {'same' if flops else 'differ'}")
sys.exit(0 if peak and flops else 1)
