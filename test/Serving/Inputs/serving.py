"""Reads rapidc's JSON lines and checks what a Serving test states.

usage: serving.py CHECK FILE.jsonl
  agree       every 'srv*' point's mean TTFT and TPOT are within 0.5 % of the
              'inf*' point's TTFT and ITL (one request at a time is one
              static batch of one: the step cost model must agree with the
              inference program's)
  schedulers  for the points labelled scheduler=...: chunked prefill has a
              lower inter-token p99 than continuous batching, static batching
              the lowest (no prefill ever interrupts its decodes) and the
              highest TTFT median
  curve       along the points of a rate sweep: throughput rises, and the
              end-to-end median never falls
  idle        the 'idle' point's TTFT (mean, p50, p99) is the 'alone'
              point's, within 0.5 %
  little      the 'closed' point (concurrency C): requests/s x mean
              end-to-end latency is within 2 % of C
"""
import json
import sys


def main():
    check, path = sys.argv[1:3]
    points = [json.loads(l) for l in open(path)]
    problems = []
    if check == "agree":
        inf = {p["experiment"][3:]: p for p in points if p["experiment"].startswith("inf")}
        for p in points:
            if not p["experiment"].startswith("srv"):
                continue
            ref = inf[p["experiment"][3:]]
            s = p["serving"]
            for name, got, want in [("TTFT", s["ttft_s"]["mean"], ref["ttft_s"]),
                                    ("TPOT", s["tpot_s"]["mean"], ref["itl_s"])]:
                err = abs(got / want - 1)
                print(f"{p['experiment']} {name} {got:.6g} vs {want:.6g}: {100 * err:.3f} %")
                if err > 0.005:
                    problems.append(f"{p['experiment']} {name} off by {100 * err:.2f} %")
    elif check == "schedulers":
        by = {p["label"].split("=")[1]: p["serving"] for p in points}
        itl = {k: v["itl_s"]["p99"] for k, v in by.items()}
        ttft = {k: v["ttft_s"]["p50"] for k, v in by.items()}
        print("ITL p99", itl)
        print("TTFT p50", ttft)
        if not itl["static"] < itl["chunked"] < itl["continuous"]:
            problems.append("ITL p99 is not static < chunked < continuous")
        if max(ttft, key=ttft.get) != "static":
            problems.append("static batching does not have the highest TTFT median")
    elif check == "curve":
        pts = sorted(points, key=lambda p: p["point"]["serving.rate"])
        for a, b in zip(pts, pts[1:]):
            sa, sb = a["serving"], b["serving"]
            print(f"rate {a['point']['serving.rate']} -> {b['point']['serving.rate']}: "
                  f"{sa['requests_per_s']:.3g} -> {sb['requests_per_s']:.3g} req/s, "
                  f"e2e p50 {sa['e2e_s']['p50']:.3g} -> {sb['e2e_s']['p50']:.3g} s")
            if sb["requests_per_s"] <= sa["requests_per_s"]:
                problems.append(f"throughput falls from rate {a['point']['serving.rate']}")
            if sb["e2e_s"]["p50"] < sa["e2e_s"]["p50"]:
                problems.append(f"latency falls from rate {a['point']['serving.rate']}")
    elif check == "idle":
        by = {p["experiment"]: p for p in points}
        want = by["alone"]["ttft_s"]
        for k in ("mean", "p50", "p99"):
            got = by["idle"]["serving"]["ttft_s"][k]
            print(f"idle TTFT {k} {got:.6g} vs alone {want:.6g}")
            if abs(got / want - 1) > 0.005:
                problems.append(f"idle TTFT {k} is not the prefill alone")
    elif check == "little":
        s = next(p for p in points if p["experiment"] == "closed")["serving"]
        c = s["requests_per_s"] * s["e2e_s"]["mean"]
        print(f"requests/s x mean latency = {c:.3f}")
        if abs(c / 16 - 1) > 0.02:
            problems.append("Little's law does not hold for concurrency 16")
    for p in problems:
        print("FAIL:", p)
    print(f"{len(problems)} problems")


main()
