"""Drives python/rapid the way a study script would; prints what api.test checks."""
import os
import sys

import rapid

here = os.path.dirname(os.path.abspath(__file__))
engine = os.path.join(here, "..", "..", "Serving", "Inputs", "engine.rapid")

print("version", rapid.version())

# A file, as rapidc runs it: one dict per point, the JSON rapidc prints.
[chat] = rapid.run(engine, set={"chat.serving.requests": 50})
print("file", chat["experiment"], chat["workload"], chat["serving"]["requests"])

# Overrides as a list, the same as --set; results equal the dict form.
[again] = rapid.run(engine, set=["chat.serving.requests=50"])
print("same", again == chat)

# Source text: imports resolve from the folder of the name it is given.
src = 'import "engine.rapid";\nsweep rates over chat { serving.rate in [2 req/s, 4 req/s]; serving.requests = 40; }\n'
points = rapid.run(os.path.join(os.path.dirname(engine), "study.rapid"), source=src)
print("sweep", [(p["label"], p["serving"]["requests"]) for p in points])

# Errors come back as rapidc's diagnostics, named after the source's name.
try:
    rapid.run("typo.rapid", source="experiment e { model = m; gpu = g; network = n; trainin { seq = 1; } }\n")
except rapid.RapidError as e:
    print("error", e.diagnostics.splitlines()[0])

# A point that does not fit is an error unless check=False, which returns it.
try:
    rapid.run(engine, set={"chat.serving.kv_memory": "5 %"})
except rapid.RapidError as e:
    print("unfit", len(e.results), e.results[0]["feasible"])
print("unchecked", rapid.run(engine, set={"chat.serving.kv_memory": "5 %"}, check=False)[0]["feasible"])

# As rapidc: a sweep none of whose points fits has not answered, and says so.
try:
    rapid.run(os.path.join(os.path.dirname(engine), "tight.rapid"),
              source='import "engine.rapid";\nsweep tight over chat { serving.kv_memory in [4 %, 5 %]; }\n')
except rapid.RapidError as e:
    print("pruned", len(e.results), e.diagnostics.splitlines()[0].split(": error: ")[1][:50])
