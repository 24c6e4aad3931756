"""Differential forward-mode run (issue 33): generated programs x 5 kinds x 2 modes.

    python -m benchmarks.differential.fwdrun --count 1000 --seed 0 [--jobs 2] [--samples]
        [--function-every 5]
    python -m benchmarks.differential.fwdrun --show 17 --seed 0   # one program, its findings

The programs are gradrun's (`gradgen.generate(random.Random(f"grad:{s}:{i}"))`: cond,
while with data-dependent stops, TensorArrays, Variable reads). Each program's `jvp`,
`jacfwd`, `jacrev`, `hessian` and `hvp` are checked against central differences and
each other (fwdcheck.py), called directly and inside an `ag.function`. Prints the counts
of cases (program x kind x mode) that are wrong, raise, or time out, and examples.
"""

import argparse
import collections
import json
import multiprocessing
import sys
import time
import warnings

from benchmarks.differential import fwdcheck, gradcheck
from benchmarks.differential.gradrun import program, samples_matrix


def _modes(i, function_every):
    return fwdcheck.MODES if function_every and i % function_every == 0 else ("direct",)


def _work(args):
    seed, indices, timeout, function_every = args
    warnings.simplefilter("ignore")
    out = []
    for i in indices:
        try:
            found, kinks = fwdcheck.check(program(seed, i), timeout=timeout,
                                          modes=_modes(i, function_every))
        except Exception as e:  # noqa: BLE001 - a crash of the harness itself is a finding
            found, kinks = [(k, "harness", "error", f"{type(e).__name__}: {e}"[:400])
                            for k in fwdcheck.KINDS], 0
        out.append((i, found, kinks))
    return out


def run(count, seed, jobs=1, chunk=10, timeout=60.0, progress=None, function_every=1,
        partial=None):
    """`function_every`: the "function" mode (inside ag.function) runs for every n-th
    program, "direct" for all (the mode roughly doubles a program's time)."""
    start = time.perf_counter()
    tasks = [(seed, list(range(lo, min(lo + chunk, count))), timeout, function_every)
             for lo in range(0, count, chunk)]
    cases, examples = collections.Counter(), collections.defaultdict(list)
    bad, kinks, checked = set(), 0, []

    def absorb(results):
        nonlocal kinks
        for i, found, k in results:
            checked.append(i)
            kinks += k
            for kind, mode, what, message in found:
                cases[what] += 1
                bad.add(i)
                if len(examples[what]) < 5:
                    examples[what].append((i, kind, mode, message[:300]))
        if partial:     # the counts so far, for a run stopped before its end
            with open(partial, "w") as fh:
                json.dump(summary(len(checked)), fh, indent=1)

    def summary(done):
        return {"programs": done, "seed": seed,
                "cases": sum(len(fwdcheck.KINDS) * len(_modes(i, function_every))
                             for i in checked),
                "function_mode_every": function_every,
                "wrong": cases["wrong"] + cases["modes differ"] + cases["jacrev != jacfwd"],
                "errors": cases["error"], "hangs": cases["timeout"],
                "programs_with_findings": len(bad),
                "programs_with_findings_ids": sorted(bad),
                "kink_cases_compared_across_modes_only": kinks,
                "examples": dict(examples), "seconds": round(time.perf_counter() - start, 1)}
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=5) as pool:
            for done, results in enumerate(pool.imap_unordered(_work, tasks), 1):
                absorb(results)
                if progress:
                    progress(min(done * chunk, count), count)
    else:
        for done, task in enumerate(tasks, 1):
            absorb(_work(task))
            if progress:
                progress(min(done * chunk, count), count)
    return summary(count)


def run_samples(timeout):
    """{sample name: findings} for every shared sample (tests/autodiff/samples.py)."""
    from tests.autodiff import samples
    out = {}
    for fn in samples.VECTOR + samples.MATRIX:
        w = None if fn in samples.VECTOR else samples_matrix()
        p, f = gradcheck.sample_program(fn, w)
        out[fn.__name__] = fwdcheck.check(p, timeout=timeout, f=f)[0]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", default="0")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per program and mode")
    ap.add_argument("--json", help="write the summary here")
    ap.add_argument("--show", type=int, help="print program N and its findings")
    ap.add_argument("--samples", action="store_true", help="also check the shared samples")
    ap.add_argument("--function-every", type=int, default=1,
                    help="run the ag.function mode for every n-th program (direct: all)")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.show is not None:
        p = program(args.seed, args.show)
        print(p.source, "\nx =", p.x, " v =", p.v)
        found, kinks = fwdcheck.check(p, timeout=args.timeout)
        for f in found:
            print(f)
        print(f"{len(found)} findings, {kinks} kinks")
        return 0

    def progress(done, total):
        print(f"\r{done}/{total} programs", end="", file=sys.stderr, flush=True)
    summary = run(args.count, args.seed, args.jobs, timeout=args.timeout, progress=progress,
                  function_every=args.function_every,
                  partial=args.json and args.json + ".partial")
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
