"""Checks a search's Pareto marks in rapidc's JSON lines (search.test)."""
import json
import sys

points = [json.loads(l) for l in open(sys.argv[1])]
ran = [p for p in points if p["feasible"] and "step_time_s" in p]
problems = [f"{p['label']}: no pareto key" for p in points if "pareto" not in p]


def beats(a, b):
    ta, tb, ma, mb = a["step_time_s"], b["step_time_s"], a["memory"]["peak_bytes"], b["memory"]["peak_bytes"]
    return ta <= tb and ma <= mb and (ta < tb or ma < mb)


for p in ran:
    beaten = any(beats(q, p) for q in ran if q is not p)
    if p["pareto"] and beaten:
        problems.append(f"{p['label']} is on the front but beaten")
    if not p["pareto"] and not beaten:
        problems.append(f"{p['label']} is off the front but unbeaten")
for p in problems:
    print("FAIL:", p)
print(f"{len(points)} layouts, {sum(p['pareto'] for p in points)} on the front, {len(problems)} problems")
