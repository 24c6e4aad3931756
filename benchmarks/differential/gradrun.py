"""Differential gradient run (issue 26): generated programs x 4 derivative kinds x 3 modes.

    python -m benchmarks.differential.gradrun --count 2000 --seed 0 [--jobs 2] [--json out.json]
    python -m benchmarks.differential.gradrun --show 17 --seed 0   # one program and its findings

Program i of seed s is `gradgen.generate(random.Random(f"grad:{s}:{i}"))`. Each program's
first gradient, second gradient of a persistent tape, jacobian and Hessian are computed on
the eager tape, on a tape inside `ag.function`, and with `ag.grad`/`ag.vjp`, and compared
with each other and with central differences (gradcheck.py). Every (program, mode) runs
under its own time limit: a hang is counted, not waited for. Prints the counts of cases
(program x kind x mode) that are wrong, raise, or time out, and the first examples.
"""

import argparse
import collections
import json
import multiprocessing
import random
import sys
import time
import warnings

import numpy as np

from benchmarks.differential import gradcheck, gradgen


def program(seed, index):
    return gradgen.generate(random.Random(f"grad:{seed}:{index}"))


def _work(args):
    seed, indices, timeout = args
    warnings.simplefilter("ignore")
    out = []
    for i in indices:
        p = program(seed, i)
        try:
            found, kinks = gradcheck.check(p, timeout=timeout)
        except Exception as e:  # noqa: BLE001 - a crash of the harness itself is a finding
            found, kinks = [(k, "harness", "error", f"{type(e).__name__}: {e}"[:400])
                            for k in gradcheck.KINDS], 0
        out.append((i, found, kinks))
    return out


def run(count, seed, jobs=1, chunk=20, timeout=30.0, progress=None):
    start = time.perf_counter()
    tasks = [(seed, list(range(lo, min(lo + chunk, count))), timeout)
             for lo in range(0, count, chunk)]
    cases = collections.Counter()      # "wrong" / "error" / "timeout" / "modes differ"
    examples = collections.defaultdict(list)
    bad_programs, kinks = set(), 0

    def absorb(results):
        nonlocal kinks
        for i, found, k in results:
            kinks += k
            seen = set()
            for kind, mode, what, message in found:
                if (kind, mode) in seen:
                    continue
                seen.add((kind, mode))
                cases[what] += 1
                bad_programs.add(i)
                if len(examples[what]) < 5:
                    examples[what].append((i, kind, mode, message[:300]))

    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=10) as pool:
            for done, results in enumerate(pool.imap_unordered(_work, tasks), 1):
                absorb(results)
                if progress:
                    progress(min(done * chunk, count), count)
    else:
        for done, task in enumerate(tasks, 1):
            absorb(_work(task))
            if progress:
                progress(min(done * chunk, count), count)
    total = count * len(gradcheck.KINDS) * len(gradcheck.MODES)
    return {"programs": count, "seed": seed, "cases": total,
            "wrong": cases["wrong"] + cases["modes differ"], "errors": cases["error"],
            "hangs": cases["timeout"], "programs_with_findings": len(bad_programs),
            "kink_cases_compared_across_modes_only": kinks,
            "examples": {k: v for k, v in examples.items()},
            "seconds": round(time.perf_counter() - start, 1)}


def run_samples(timeout):
    """{sample name: findings} for every shared sample (empty lists when all agree)."""
    from tests.autodiff import samples
    out = {}
    for fn in samples.VECTOR + samples.MATRIX:
        w = None if fn in samples.VECTOR else samples_matrix()
        p, f = gradcheck.sample_program(fn, w)
        out[fn.__name__] = gradcheck.check(p, timeout=timeout, f=f)[0]
    return out


def samples_matrix():
    return np.array([[0.5, -0.3, 0.2], [0.1, 0.4, -0.2], [-0.3, 0.2, 0.6]])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", default="0")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per program and mode")
    ap.add_argument("--json", help="write the summary here")
    ap.add_argument("--show", type=int, help="print program N and its findings")
    ap.add_argument("--samples", action="store_true",
                    help="also check the shared samples (tests/autodiff/samples.py)")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.show is not None:
        p = program(args.seed, args.show)
        print(p.source, "\nx =", p.x, " v =", p.v)
        found, kinks = gradcheck.check(p, timeout=args.timeout)
        for f in found:
            print(f)
        print(f"{len(found)} findings, {kinks} kinks")
        return 0

    def progress(done, total):
        print(f"\r{done}/{total} programs", end="", file=sys.stderr, flush=True)
    summary = run(args.count, args.seed, args.jobs, timeout=args.timeout, progress=progress)
    print(file=sys.stderr)
    if args.samples:
        summary["samples"] = run_samples(args.timeout)
    print(json.dumps(summary, indent=1))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(summary, fh, indent=1)
    return 1 if summary["wrong"] or summary["errors"] or summary["hangs"] else 0


if __name__ == "__main__":
    sys.exit(main())
