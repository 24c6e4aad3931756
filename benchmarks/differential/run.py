"""Differential run: many generated programs, plain Python vs converted vs traced.

    python -m benchmarks.differential.run --count 10000 --seed 0 [--jobs 2] [--json out.json]
    python -m benchmarks.differential.run --show 1234 --seed 0     # one program and its findings

Prints a summary: programs passed, programs with wrong results, internal errors, timeouts,
refusals by message kind, misleading refusals (issue 11, class 14), and for every class the
shortest program that shows it, shrunk by `reduce` (`--no-reduce` to skip).
Program i of seed s is `generate(random.Random(f"{s}:{i}"))`, the same text in every process
(whatever PYTHONHASHSEED is), so any finding can be replayed.
"""

import argparse
import collections
import json
import multiprocessing
import random
import sys
import time

from benchmarks.differential import check as checking
from benchmarks.differential.generator import generate

CATEGORIES = ("wrong", "error", "timeout", "misleading", "refusal")


def program(seed, index):
    return generate(random.Random(f"{seed}:{index}"))


def _work(args):
    seed, indices = args
    out = []
    for i in indices:
        p = program(seed, i)
        try:
            found = checking.check(p)
        except checking.Timeout:
            found = [("timeout", "load", "timeout", {"input": 0, "message": ""})]
        except Exception as e:  # noqa: BLE001 - a crash of the harness itself is reported too
            found = [("error", "harness", f"{type(e).__name__}: {checking.normalize(e)}",
                      {"input": 0, "message": str(e)[:400]})]
        out.append((i, len(p.source), found))
    return out


def run(count, seed, jobs=1, chunk=25, progress=None):
    """{"programs", "passed", "refused", "classes": {(cat, mode, key): {...}}, "seconds"}."""
    start = time.perf_counter()
    tasks = [(seed, list(range(lo, min(lo + chunk, count)))) for lo in range(0, count, chunk)]
    classes = {}
    passed = refused = 0
    failed = collections.Counter()

    def absorb(results):
        nonlocal passed, refused
        for i, size, found in results:
            cats = {c for c, *_ in found}
            if not found:
                passed += 1
            elif cats <= {"refusal", "misleading"}:
                refused += 1
            for c in cats & {"wrong", "error", "timeout"}:
                failed[c] += 1
            for cat, mode, key, detail in found:
                entry = classes.setdefault((cat, mode, key),
                                           {"programs": 0, "shortest": None, "examples": []})
                entry["programs"] += 1
                if len(entry["examples"]) < 8:
                    entry["examples"].append(i)
                if entry["shortest"] is None or size < entry["shortest"][1]:
                    entry["shortest"] = (i, size, detail)

    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=20) as pool:
            for done, results in enumerate(pool.imap_unordered(_work, tasks), 1):
                absorb(results)
                if progress:
                    progress(done * chunk, count)
    else:
        for done, task in enumerate(tasks, 1):
            absorb(_work(task))
            if progress:
                progress(done * chunk, count)
    return {"programs": count, "passed": passed, "refused_only": refused,
            "failed": dict(failed), "classes": classes,
            "seconds": time.perf_counter() - start}


def _reduce_one(args):
    from benchmarks.differential.reduce import reduce
    seed, index, finding = args
    try:
        small = reduce(program(seed, index), finding)
        return small.source, small.inputs[0], small.tensor_args
    except BaseException as e:  # noqa: BLE001 - keep the unreduced program
        p = program(seed, index)
        return p.source + f"# (not reduced: {type(e).__name__})\n", \
            p.inputs[finding[3]["input"]], p.tensor_args


def report(result, seed, reduce=True, jobs=1, out=sys.stdout):
    classes = result["classes"]
    w = out.write
    w(f"programs {result['programs']}  passed {result['passed']}  "
      f"refused (only) {result['refused_only']}  "
      f"with wrong results {result['failed'].get('wrong', 0)}  "
      f"with internal errors {result['failed'].get('error', 0)}  "
      f"timeouts {result['failed'].get('timeout', 0)}  "
      f"({result['seconds']:.0f} s)\n")
    order = sorted(classes, key=lambda k: (CATEGORIES.index(k[0]), -classes[k]["programs"]))
    todo = [(seed, classes[k]["shortest"][0], (*k, classes[k]["shortest"][2])) for k in order
            if k[0] != "refusal"]
    reduced = {}
    if reduce and todo:
        if jobs > 1:
            with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=4) as pool:
                results = pool.map(_reduce_one, todo, chunksize=1)
        else:
            results = [_reduce_one(t) for t in todo]
        reduced = {t[2][:3]: r for t, r in zip(todo, results)}
    current = None
    for k in order:
        cat, mode, key = k
        if cat != current:
            current = cat
            total = sum(classes[c]["programs"] for c in classes if c[0] == cat)
            w(f"\n== {cat} ({len([c for c in classes if c[0] == cat])} classes, "
              f"{total} program-findings)\n")
        entry = classes[k]
        i, size, detail = entry["shortest"]
        w(f"\n[{cat} / {mode}] {entry['programs']} programs: {key}\n")
        if cat == "refusal":
            w(f"   e.g. program {i} ({size} chars); also {entry['examples']}\n")
            continue
        w(f"   message: {detail['message'][:300]}\n")
        w(f"   programs {entry['examples']}\n")
        if k in reduced:
            source, inputs, targs = reduced[k]
            w(f"   program {i}, input (x, n, xs)={inputs}, traced as arrays: {targs}\n")
            w("   " + source.replace("\n", "\n   ").rstrip() + "\n")
    return reduced


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--no-reduce", action="store_true")
    parser.add_argument("--json", help="write the classes (and reduced programs) here")
    parser.add_argument("--show", type=int, help="print program SHOW and its findings")
    args = parser.parse_args(argv)
    if args.show is not None:
        p = program(args.seed, args.show)
        print(p.source)
        print("inputs", p.inputs, "traced as arrays", p.tensor_args)
        for f in checking.check(p):
            print(f)
        return 0

    def progress(done, total):
        print(f"\r{min(done, total)}/{total}", end="", file=sys.stderr, flush=True)

    result = run(args.count, args.seed, args.jobs, progress=progress)
    print(file=sys.stderr)
    reduced = report(result, args.seed, reduce=not args.no_reduce, jobs=args.jobs)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"summary": {k: v for k, v in result.items() if k != "classes"},
                       "classes": [{"category": c, "mode": m, "key": k, **v,
                                    "reduced": reduced.get((c, m, k))}
                                   for (c, m, k), v in result["classes"].items()]},
                      fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
