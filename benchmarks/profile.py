"""python -m benchmarks.profile CASE_ID [--contender autograph] [--calls N] [--top K]

Where a contender's time goes in steady state: builds the case (full sizes unless --quick),
warms the contender up, then runs it N times under cProfile and prints the functions with
the most own time and the most cumulative time. Also prints the wall time per call with and
without the profiler, since cProfile inflates Python-heavy code more than NumPy kernels.
With --dump PATH the raw stats are saved for snakeviz/pstats."""

import argparse
import cProfile
import pstats
import sys
import time

from benchmarks.cases import all_cases
from benchmarks.harness import Unavailable


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.profile")
    p.add_argument("case", help="case id or its prefix, e.g. 1_ or 3_collatz")
    p.add_argument("--contender", default="autograph")
    p.add_argument("--calls", type=int, default=None, help="calls to profile (default: ~1 s)")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--dump", default=None, metavar="PATH")
    args = p.parse_args(argv)

    case = next((c for c in all_cases(args.quick) if c.id.startswith(args.case)), None)
    if case is None:
        raise SystemExit(f"no case starts with {args.case!r}; see python -m benchmarks --list")
    _, contenders = case.build(args.quick)
    c = next((c for c in contenders if c.name == args.contender), None)
    if c is None or isinstance(c, Unavailable):
        raise SystemExit(f"{case.id} has no runnable contender {args.contender!r}")

    make = (lambda: c.make()()) if c.fresh else None
    fn = make if c.fresh else c.make()
    fn()
    fn()
    t0 = time.perf_counter_ns()
    fn()
    one = max(time.perf_counter_ns() - t0, 1)
    calls = args.calls or max(1, int(1e9 // one))
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    plain = (time.perf_counter_ns() - t0) / calls
    prof = cProfile.Profile()
    t0 = time.perf_counter_ns()
    prof.enable()
    for _ in range(calls):
        fn()
    prof.disable()
    profiled = (time.perf_counter_ns() - t0) / calls
    print(f"{case.id} / {c.name}: {calls} calls, {plain / 1e3:.2f} us per call "
          f"({profiled / 1e3:.2f} us under cProfile)\n")
    stats = pstats.Stats(prof, stream=sys.stdout).strip_dirs()
    stats.sort_stats("tottime").print_stats(args.top)
    stats.sort_stats("cumulative").print_stats(args.top)
    if args.dump:
        stats.dump_stats(args.dump)
    return 0


if __name__ == "__main__":
    sys.exit(main())
