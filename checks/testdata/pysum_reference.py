#!/usr/bin/env python3.12
"""Reference mean denoise steps for checks.StepMean, computed by CPython 3.12 itself.

SGLang's diffusion CI runs Python 3.12, whose built-in sum() of floats is compensated
(Neumaier). This script writes pysum_reference.json: step lists and sum(steps)/len(steps) and
statistics.median(steps) as CPython 3.12 computes them. Needs Python >= 3.12 (the sum changed
in 3.12). Regenerate with:

    python3.12 checks/testdata/pysum_reference.py > checks/testdata/pysum_reference.json
"""
import json
import random
import statistics
import sys

assert sys.version_info >= (3, 12), "needs CPython 3.12's compensated sum"

rng = random.Random(20261201)
cases = []
# Timings as SGLang's records hold them: milliseconds with two decimals, or raw.
for n in (1, 2, 3, 4, 5, 8, 10, 20, 28, 40, 50, 100):
    for _ in range(20):
        base = rng.choice([0.5, 12.0, 240.0, 1800.0, 25000.0])
        spread = rng.choice([0.001, 0.05, 0.3])
        steps = [base * (1 + rng.uniform(-spread, spread)) for _ in range(n)]
        if rng.random() < 0.5:
            steps = [round(s, 2) for s in steps]
        cases.append(steps)
# Lists where a naive sum is known to differ.
cases += [[0.1] * 10, [1e100, 1.0, -1e100, 1.0], [0.1, 0.2, 0.3],
          [248.22, 243.2, 241.07, 245.14, 249.19, 242.93, 248.94, 241.42]]
# One case per line, so that a diff of the file reads case by case.
rows = [json.dumps({"steps": s, "mean": sum(s) / len(s), "median": statistics.median(s)}) for s in cases]
sys.stdout.write('{"python": %s, "cases": [\n%s\n]}\n' % (json.dumps(sys.version.split()[0]), ",\n".join(rows)))
