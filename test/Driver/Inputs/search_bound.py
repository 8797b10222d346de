"""Checks a bounded search against the same search run with --every-layout
(search-bound.test): every bound is below its layout's simulated step, every
layout left out names a layout that ran faster than its bound and is no
heavier, and both runs have the same Pareto front and best layout."""
import json
import sys

bounded = {p["label"]: p for p in map(json.loads, open(sys.argv[1]))}
every = {p["label"]: p for p in map(json.loads, open(sys.argv[2]))}
problems = []
for label, p in every.items():
    if "step_time_s" not in p:
        continue
    if "bound_s" not in p:
        problems.append(f"{label}: no bound")
    elif p["bound_s"] > p["step_time_s"] * (1 + 1e-9) + 2e-9:
        problems.append(f"{label}: bound {p['bound_s']} above its step {p['step_time_s']}")
skipped = [p for p in bounded.values() if "dominated_by" in p]
for p in skipped:
    d = bounded.get(p["dominated_by"], {})
    if "step_time_s" not in d:
        problems.append(f"{p['label']}: left out for {p['dominated_by']}, which did not run")
    elif not (d["step_time_s"] < p["bound_s"] and d["memory"]["peak_bytes"] <= p["memory"]["peak_bytes"]):
        problems.append(f"{p['label']}: {p['dominated_by']} does not beat its bound")
    if "step_time_s" in p or p["pareto"]:
        problems.append(f"{p['label']}: left out, but has a step time or is on the front")
for label, p in bounded.items():
    if "step_time_s" in p and p["step_time_s"] != every[label]["step_time_s"]:
        problems.append(f"{label}: {p['step_time_s']} s bounded, {every[label]['step_time_s']} s every layout")
front = lambda run: sorted(l for l, p in run.items() if p.get("pareto"))
same = front(bounded) == front(every)
ran = sum("step_time_s" in p for p in bounded.values())
for p in problems:
    print("FAIL:", p)
print(f"{len(bounded)} layouts: {ran} simulated, {len(skipped)} bounded out, "
      f"{'same' if same else 'another'} front, {len(problems)} problems")
