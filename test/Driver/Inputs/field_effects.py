"""Checks that every field of the language changes some output.

usage: field_effects.py RAPIDC BASE.rapid TABLE

TABLE lists, per field, a change to BASE.rapid (`--set` arguments) and
the view that must differ from the unchanged run. Every field `rapidc --print-field-tables` lists must have a
row, and every row must name a field: a field added without a test, or a
change that no longer changes anything, fails here.
"""
import os
import re
import shlex
import subprocess
import sys

VIEWS = {"run": ["--format=json", "-j1"], "ir": ["--emit=ir"], "sema": ["--emit=sema"]}
SKIP = {"topology kinds"}  # the registry's building blocks, not fields


def fields(rapidc):
    text = subprocess.run([rapidc, "--print-field-tables"], check=True, capture_output=True, text=True).stdout
    out = set()
    for table, body in re.findall(r"<!-- fields: (.*?) -->\n(.*?)<!-- end fields -->", text, re.S):
        if table not in SKIP:
            out |= {(table, f) for f in re.findall(r"^\| `([^`]+)` \|", body, re.M)}
    return out


def run(rapidc, base, args, view):
    # From the base file's folder: a file named on the command line (a
    # serving trace) is relative to the working directory.
    res = subprocess.run([rapidc, base] + args + VIEWS[view], capture_output=True, text=True,
                         cwd=os.path.dirname(os.path.abspath(base)))
    if res.returncode != 0:
        return None, res.stderr.strip()
    return res.stdout, ""


def main():
    rapidc, base, table = sys.argv[1:4]
    rows, failures = [], []
    for line in open(table):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        kind, field, before, change, view = [c.strip() for c in line.split("|")][:5]
        rows.append((kind, field, [] if before == "-" else shlex.split(before), change, view))
    listed = {(k, f) for k, f, *_ in rows}
    for missing in sorted(fields(rapidc) - listed):
        failures.append(f"{missing[0]} field '{missing[1]}' has no row in {os.path.basename(table)}")
    for extra in sorted(listed - fields(rapidc)):
        failures.append(f"row for {extra[0]} field '{extra[1]}', which the language does not have")
    for kind, field, before, change, view in rows:
        what = f"{kind} field '{field}'"
        reference, err = run(rapidc, base, before, view)
        if reference is None:
            failures.append(f"{what}: the unchanged run fails: {err}")
            continue
        changed, err = run(rapidc, base, before + shlex.split(change), view)
        if changed is None:
            failures.append(f"{what}: '{change}' fails: {err}")
        elif changed == reference:
            failures.append(f"{what}: '{change}' changes nothing in the {view} view")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(rows)} fields checked, {len(failures)} problems")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
