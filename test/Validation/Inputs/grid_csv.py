"""The gemm_grid rows of a sweeps.py CSV as a `rapidc --calibrate` CSV (stdout)."""
import csv
import sys

rows = csv.reader(line for line in open(sys.argv[1]) if not line.startswith("#"))
next(rows)
print("kind,m,k,n,batch,dtype,latency_ms")
for kind, case, _params, _mode, ms, *_ in rows:
    if kind == "gemm_grid":
        m, k, n = case.split("x")
        print(f"gemm,{m},{k},{n},1,bf16,{ms}")
