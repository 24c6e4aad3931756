"""python -m benchmarks [--quick] [--only ID...] [--json PATH] [--update-readme] [--baseline JSON]

Runs every case with every contender available in this interpreter, prints a Markdown table
and writes a JSON record (timings, goals, machine info). Timing goals are reported, never
enforced: the exit status is 0 unless the harness itself breaks."""

import argparse
import datetime
import json
import os
import sys
import time
from pathlib import Path

from benchmarks import threads

if __name__ == "__main__":     # before NumPy, JAX, TF, torch read their thread settings
    threads.pin(threads.threads_from_argv(sys.argv[1:]))

from benchmarks import report  # noqa: E402
from benchmarks.cases import all_cases  # noqa: E402
from benchmarks.harness import run_case  # noqa: E402

HERE = Path(__file__).resolve().parent


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[2])
    p.add_argument("--quick", action="store_true",
                   help="smoke run: small sizes, few repeats, short samples (seconds, not minutes)")
    p.add_argument("--only", nargs="*", default=None, metavar="ID",
                   help="run only cases whose id starts with one of these (e.g. 1_ 3_collatz 7a)")
    p.add_argument("--repeats", type=int, default=None, help="rounds per case (default 15; quick 3)")
    p.add_argument("--json", default=None, metavar="PATH",
                   help="where to write the JSON (default benchmarks/results/<date>-<mode>.json)")
    p.add_argument("--update-readme", action="store_true",
                   help="replace the table in benchmarks/README.md and the project README with this run's")
    p.add_argument("--baseline", default=None, metavar="JSON",
                   help="an earlier results file: show each row's earlier 'vs floor' ratio")
    p.add_argument("--no-tf", action="store_true", help="leave TensorFlow out")
    p.add_argument("--no-jax", action="store_true", help="leave JAX out")
    p.add_argument("--threads", type=int, default=1, metavar="N",
                   help="threads every contender may use (default 1: BLAS, XLA, TF, torch, "
                        "Numba, onnxruntime pinned; 0 leaves the environment alone)")
    p.add_argument("--list", action="store_true", help="list the case ids and exit")
    p.add_argument("--render", nargs="+", default=None, metavar="JSON",
                   help="run nothing: print (and with --update-readme, install) the table of "
                        "an earlier results file; several files make one table (a case "
                        "measured in several takes the last file's), one 'Measured' line each")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if "AUTOGRAPH_CACHE_DIR" not in os.environ:
        # first-call cases convert never-seen functions: their cache entries go to a
        # folder of this run, not to the user's cache
        import shutil
        import tempfile
        os.environ["AUTOGRAPH_CACHE_DIR"] = tempfile.mkdtemp(prefix="autograph-bench-cache-")
        import atexit
        atexit.register(shutil.rmtree, os.environ["AUTOGRAPH_CACHE_DIR"], True)
    if args.no_tf:
        os.environ["AUTOGRAPH_BENCH_NO_TF"] = "1"
    if args.no_jax:
        os.environ["AUTOGRAPH_BENCH_NO_JAX"] = "1"
    baseline = json.loads(Path(args.baseline).read_text()) if args.baseline else None
    if args.render:
        records = [json.loads(Path(p).read_text()) for p in args.render]
        record = records[0] if len(records) == 1 else report.merge(records)
        if len(records) > 1:      # the suite's order, whatever the order of the files
            rank = {c.id: k for k, c in enumerate(all_cases())}
            record["cases"].sort(key=lambda c: rank.get(c["id"], len(rank)))
        text = report.table(record, baseline)
        print(text)
        if args.update_readme:
            _update_readmes(text)
        return 0
    cases = all_cases(args.quick)
    if args.list:
        for c in cases:
            print(f"{c.id:28} {c.title}")
        return 0
    if args.only:
        cases = [c for c in cases if any(c.id.startswith(p) for p in args.only)]
    repeats = args.repeats or (3 if args.quick else 15)
    target_ns = 2e6 if args.quick else 50e6
    budget_ns = 1e9 if args.quick else 10e9    # per contender and case, see harness
    results = []
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M")
    path = args.json or HERE / "results" / f"{stamp}-{'quick' if args.quick else 'full'}.json"
    started = time.perf_counter()
    load_start = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    for case in cases:
        print(f"# {case.id}: {case.title}", file=sys.stderr, flush=True)
        t0, c0 = time.perf_counter(), time.process_time()
        results.append(run_case(case, args.quick, repeats, target_ns,
                                warmup=1 if args.quick else 2, budget_ns=budget_ns))
        results[-1]["duration_s"] = round(time.perf_counter() - t0, 1)   # setup included
        results[-1]["cpu_s"] = round(time.process_time() - c0, 1)        # (not the children's)
        if not args.quick:   # a long run stopped half-way still leaves what it measured
            report.write_json(_record(args, repeats, target_ns, budget_ns, results, started,
                                      load_start, complete=False), path)
    record = _record(args, repeats, target_ns, budget_ns, results, started, load_start)
    text = report.table(record, baseline)
    print(text)
    print(f"JSON written to {report.write_json(record, path)}", file=sys.stderr)
    if args.update_readme:
        _update_readmes(text)
    return 0


def _record(args, repeats, target_ns, budget_ns, results, started, load_start, complete=True):
    record = {"mode": "quick" if args.quick else "full", "repeats": repeats,
              "target_sample_ns": target_ns, "budget_ns": budget_ns,
              "machine": report.machine_info(), "threads": threads.pinned(),
              "duration_s": round(time.perf_counter() - started, 1), "cases": results}
    if not complete:
        record["complete"] = False
    record["machine"]["loadavg_at_start"] = load_start
    record["exponents"] = report.exponents(results)
    return record


def _update_readmes(text):
    """The table lives in benchmarks/README.md and, between the same markers, in the
    project's README."""
    for path in (HERE / "README.md", HERE.parent / "README.md"):
        report.update_readme(path, text)
        print(f"{path.relative_to(HERE.parent)} updated", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
