#!/usr/bin/env python3
"""Runs one libFuzzer target of the sanitized tree for a bounded time and
says in one line how it went; exit status 1 on any finding (docs/testing.md).

Usage: run-fuzzer.py BINARY NAME SECONDS WORK_DIR SEED_DIR [REGRESSION_DIR]
                     [--max-len N] [--log FILE] [-- EXTRA_LIBFUZZER_ARGS...]

The corpus grows in WORK_DIR/corpus/NAME (kept between runs); a crash, leak,
timeout (> 10 s) or out-of-memory input (> 2 GiB) is written to
WORK_DIR/artifacts/NAME-*, and the full libFuzzer log to WORK_DIR/NAME.log.
Committed inputs in REGRESSION_DIR (test/fuzz/regressions/NAME) and the seeds
are run first, every time."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from sanitizers import sanitizer_environment  # noqa: E402


def main():
    args = sys.argv[1:]
    extra = []
    if "--" in args:
        extra = args[args.index("--") + 1:]
        args = args[:args.index("--")]
    max_len, log = "4096", None
    if "--max-len" in args:
        i = args.index("--max-len")
        max_len = args[i + 1]
        del args[i:i + 2]
    if "--log" in args:
        i = args.index("--log")
        log = args[i + 1]
        del args[i:i + 2]
    binary, name, seconds, work, seeds = args[:5]
    regressions = args[5] if len(args) > 5 else None
    if int(seconds) <= 0:
        print(f"{name}: skipped (RAPID_FUZZ_SECONDS=0)")
        return 0
    corpus = os.path.join(work, "corpus", name)
    artifacts = os.path.join(work, "artifacts")
    os.makedirs(corpus, exist_ok=True)
    os.makedirs(artifacts, exist_ok=True)
    log = log or os.path.join(work, name + ".log")
    dirs = [corpus, seeds] + ([regressions] if regressions and os.path.isdir(regressions) else [])
    cmd = [binary, f"-max_total_time={seconds}", "-timeout=10", "-rss_limit_mb=2048",
           f"-max_len={max_len}", "-print_final_stats=1", "-print_pcs=0",
           f"-artifact_prefix={os.path.join(artifacts, name)}-"] + extra + dirs
    env = dict(os.environ)
    env.update(sanitizer_environment(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
    with open(log, "w") as f:
        f.write(" ".join(cmd) + "\n")
        f.flush()
        rc = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
    text = open(log, errors="replace").read()
    stats = dict(re.findall(r"^stat::(\w+):\s+(\d+)", text, re.M))
    # "#123  NEW cov: ..." lines, or "#123: cov: ..." in -fork mode.
    last = [l for l in text.splitlines() if re.match(r"#\d+:?\s+(\w+\s+)?cov:", l)]
    cov = re.search(r"cov: (\d+) ft: (\d+) corp: (\d+)", last[-1]) if last else None
    runs = stats.get("number_of_executed_units") or (re.match(r"#(\d+)", last[-1]).group(1) if last else "?")
    summary = (f"{name}: {runs} runs in {seconds} s, "
               + (f"cov {cov.group(1)}, ft {cov.group(2)}, corpus {cov.group(3)}" if cov else "no coverage line")
               + f", peak RSS {stats.get('peak_rss_mb', '?')} MB")
    if rc != 0:
        tail = "\n".join(text.splitlines()[-60:])
        print(f"{tail}\n{summary}\nFUZZ FAILURE: {name} exited with {rc}; input under {artifacts}, log {log}")
        return 1
    print(summary + ", no findings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
