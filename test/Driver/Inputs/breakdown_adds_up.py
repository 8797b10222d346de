"""breakdown_adds_up.py RESULT.json: rank 0's breakdown of the first JSON line
adds up: compute + exposed communication + pipeline bubble + idle is the step
time (rank 0 finishes last here), and the exposed communication by group
kind sums to the exposed communication. Prints the parts."""
import json
import sys

r = json.loads(open(sys.argv[1]).readline())
b = r["breakdown"]
parts = b["compute_s"] + b["exposed_communication_s"] + b["pipeline_bubble_s"] + b["idle_s"]
groups = sum(b["exposed_by_group_s"].values())
print(f"parts {parts:.9f} step {r['step_time_s']:.9f}; groups {groups:.9f} exposed {b['exposed_communication_s']:.9f}")
ok = abs(parts - r["step_time_s"]) <= 1e-9 * 4 and abs(groups - b["exposed_communication_s"]) <= 1e-9 * 5
print("adds up" if ok else "does not add up")
sys.exit(0 if ok else 1)
