"""close.py A.json B.json KEY TOLERANCE: the KEY of the first JSON line of
each file agree within TOLERANCE (relative); prints both and the difference.
KEY may name a nested value with dots: breakdown.exposed_by_group_s.tp."""
import json
import sys

def value(path):
    v = json.loads(open(path).readline())
    for key in sys.argv[3].split("."):
        v = v[key]
    return v


a, b = value(sys.argv[1]), value(sys.argv[2])
diff = abs(a - b) / max(abs(a), abs(b))
print(f"{sys.argv[3]}: {a} vs {b}, {100 * diff:.2f}% apart")
sys.exit(0 if diff <= float(sys.argv[4]) else 1)
