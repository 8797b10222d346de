"""close.py A.json B.json KEY TOLERANCE: the KEY of the first JSON line of
each file agree within TOLERANCE (relative); prints both and the difference."""
import json
import sys

a, b = (json.loads(open(p).readline())[sys.argv[3]] for p in sys.argv[1:3])
diff = abs(a - b) / max(abs(a), abs(b))
print(f"{sys.argv[3]}: {a} vs {b}, {100 * diff:.2f}% apart")
sys.exit(0 if diff <= float(sys.argv[4]) else 1)
