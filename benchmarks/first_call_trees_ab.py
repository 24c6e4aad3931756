"""First calls of two source trees of autograph, before/after: each sample is a fresh
process that imports one tree, makes one warm-up first call (a 50-statement function: the
imports) and then times, in CPU time, the first call of a never-seen function of n
statements (straight-line, case 13c's, or with a staged `if` and loop per block), collector
on. The trees alternate sample by sample (the order flips each round); medians and growth
exponents (100 -> 1,000 statements) go to stdout and, with --json, to a file.

    git archive <base commit> autograph benchmarks | tar -x -C /tmp/base
    python -m benchmarks.first_call_trees_ab --base /tmp/base [--rounds 7]
        [--lines 100,300,1000] [--kinds straight,branches] [--json PATH]

(The benchmark files come from each tree, so both build the same programs as long as the
base has case 13c.)
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r'''
import os, sys, time
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
sys.path.insert(0, sys.argv[1])
import numpy as np
from benchmarks import programs
from benchmarks.cases.no_cliffs import straight_source
from benchmarks.cases.scaling import generated_source
import autograph as ag
assert ag.__file__.startswith(sys.argv[1]), ag.__file__
ag.config.set_disk_cache(False)
make = straight_source if sys.argv[2] == "straight" else generated_source

def first(source):
    fn = programs.fresh_function(source, "generated", {})
    t = time.process_time()
    ag.function(fn)(np.float64(0.3))
    return time.process_time() - t

first(make(50))
print(first(make(int(sys.argv[3]))))
'''


def _sample(tree, kind, lines):
    out = subprocess.run([sys.executable, "-c", CHILD, tree, kind, str(lines)],
                         capture_output=True, text=True, cwd="/",
                         env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return float(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True, help="the other tree (holding autograph/ and "
                                                 "benchmarks/)")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--lines", default="100,300,1000")
    p.add_argument("--kinds", default="straight,branches")
    p.add_argument("--json", default=None)
    args = p.parse_args()
    trees = {"base": os.path.abspath(args.base) + os.sep, "this": ROOT + os.sep}
    sizes = [int(n) for n in args.lines.split(",")]
    kinds = args.kinds.split(",")
    samples = {k: {t: {n: [] for n in sizes} for t in trees} for k in kinds}
    load = [os.getloadavg()]
    for r in range(args.rounds):
        for kind in kinds:
            for n in sizes:
                for t in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
                    samples[kind][t][n].append(_sample(trees[t], kind, n))
    load.append(os.getloadavg())
    out = {"rounds": args.rounds, "trees": trees, "load": load, "results": {}}
    for kind in kinds:
        for t in trees:
            med = {n: statistics.median(samples[kind][t][n]) for n in sizes}
            row = out["results"].setdefault(kind, {})[t] = {"cpu_median_s": med,
                                                             "samples": samples[kind][t]}
            text = f"{kind:9} {t:5} " + "  ".join(f"{n}: {med[n] * 1e3:7.1f} ms" for n in sizes)
            if sizes[0] < sizes[-1]:
                row["exponent"] = math.log(med[sizes[-1]] / med[sizes[0]]) / math.log(
                    sizes[-1] / sizes[0])
                text += f"  exponent {sizes[0]}-{sizes[-1]} {row['exponent']:.3f}"
            print(text, flush=True)
    print("load average before/after:", load)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
