#!/usr/bin/env python3
"""Measures test-impact selection on a stream of real pull requests: for each pull request's
changed files, `diffusion-check plan --changed-files` plans a suite, and this counts how many
pull requests select none, some or all of its cases, and the GPU minutes that implies (each
case's plan estimate, one server start included, times its num_gpus).

usage: bench/selection.py STREAM.jsonl SUITE.yaml [SUITE.yaml...]

STREAM.jsonl holds one pull request a line: {"pr": N, "files": [changed paths, ...]} (other
keys are ignored). Each suite's folder is copied to AT (default
python/sglang/multimodal_gen/test/server, where SGLang keeps its diffusion CI data) inside a
scratch repository root, so that a pull request's changes to the data files there count as
changes to the suite's own files.

  DIFFUSION_CHECK=path  the binary (default: go build ./cmd/diffusion-check into a temp dir)
  AT=path               where the suite folder sits in the repository
  PREFIX=path           also report the pull requests touching this prefix
                        (default python/sglang/multimodal_gen/)
Only the Python 3 standard library is used.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    stream, suites = sys.argv[1], sys.argv[2:]
    at = os.environ.get("AT", "python/sglang/multimodal_gen/test/server")
    prefix = os.environ.get("PREFIX", "python/sglang/multimodal_gen/")
    prs = [json.loads(line) for line in open(stream) if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        binary = os.environ.get("DIFFUSION_CHECK") or build(tmp)
        root = os.path.join(tmp, "repo")
        for s in suites:
            dst = os.path.join(root, at)
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(os.path.dirname(os.path.abspath(s)), dst)
            suite = os.path.join(dst, os.path.basename(s))
            rows = [plan(binary, root, suite, pr, tmp) for pr in prs]
            full = cost(plan(binary, root, suite, {"pr": 0, "files": [at + "/" + os.path.basename(s)]}, tmp))
            report(os.path.basename(s), "all", rows, full)
            report(os.path.basename(s), prefix, [r for r in rows if any(f.startswith(prefix) for f in r["files"])], full)


def build(tmp):
    out = os.path.join(tmp, "diffusion-check")
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run(["go", "build", "-o", out, "./cmd/diffusion-check"], cwd=os.path.dirname(here), check=True)
    return out


def plan(binary, root, suite, pr, tmp):
    changed = os.path.join(tmp, "changed.txt")
    with open(changed, "w") as f:
        f.write("".join(p + "\n" for p in pr["files"]))
    p = subprocess.run([binary, "plan", "--suite", suite, "--partitions", "1", "--changed-files", changed,
                        "--repo-root", root], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("pull request %s: %s" % (pr["pr"], p.stderr))
    out = json.loads(p.stdout)
    out["files"] = pr["files"]
    return out


def cost(plan):
    """GPU minutes of a plan: every case's estimate, its server start included, times its GPUs."""
    return sum((it["run_s"] + it["start_s"]) * it["gpus"] for it in plan["estimates"]) / 60


def report(name, scope, rows, full):
    n = len(rows)
    none = sum(1 for r in rows if r["selection"]["selected"] == 0)
    every = sum(1 for r in rows if r["selection"]["selected"] == r["selection"]["of"])
    spent = sum(cost(r) for r in rows)
    print("%s, pull requests %s: %d; select none %d, some %d, all %d; GPU-min every PR %.0f, with selection %.0f, saved %.1f%%"
          % (name, scope, n, none, n - none - every, every, full * n, spent, 100 * (1 - spent / (full * n)) if n else 0))


if __name__ == "__main__":
    main()
