"""python -m benchmarks.profile CASE_ID [--contender autograph] [--calls N] [--top K]

Where a contender's time goes in steady state: builds the case (full sizes unless --quick),
warms the contender up, then runs it N times under cProfile and prints the functions with
the most own time and the most cumulative time. Also prints the wall time per call with and
without the profiler, since cProfile inflates Python-heavy code more than NumPy kernels.
With --dump PATH the raw stats are saved for snakeviz/pstats.

--layers (autograph steady-state cases) times the same call at each layer instead:
Function.__call__ (trace-key lookup + argument handling + compiled graph), the
ConcreteFunction, the codegen-compiled graph alone, and the reference interpreter, and prints
the generated code of the graph: the difference between two rows is what that layer costs."""

import argparse
import cProfile
import functools
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
    p.add_argument("--layers", action="store_true",
                   help="time Function / ConcreteFunction / compiled graph / interpreter")
    args = p.parse_args(argv)

    case = next((c for c in all_cases(args.quick) if c.id.startswith(args.case)), None)
    if case is None:
        raise SystemExit(f"no case starts with {args.case!r}; see python -m benchmarks --list")
    _, contenders = case.build(args.quick)
    c = next((c for c in contenders if c.name == args.contender), None)
    if c is None or isinstance(c, Unavailable):
        raise SystemExit(f"{case.id} has no runnable contender {args.contender!r}")

    if args.layers:
        return layers(case, c.make())
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


def _per_call_ns(fn, budget_ns=3e8, rounds=7):
    """Best per-call time of `fn` over `rounds` samples lasting ~budget_ns/rounds each (the
    minimum: on a shared machine, what the code costs when nothing else runs)."""
    fn()
    t0 = time.perf_counter_ns()
    fn()
    number = max(1, int(budget_ns / rounds // max(time.perf_counter_ns() - t0, 1)))
    samples = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter_ns() - t0) / number)
    return min(samples)


def layers(case, call):
    """Per-call time at each layer of autograph's steady-state call path."""
    import numpy as np
    from autograph.runtime.exec import codegen, interpreter
    from autograph.runtime import devices
    from autograph.runtime.ir import nest

    if not isinstance(call, functools.partial):
        raise SystemExit(f"{case.id}: --layers needs a contender made as partial(Function, *args)")
    func, args = call.func, call.args
    conc = func.get_concrete_function(*args)
    # the optimized graph the ConcreteFunction runs (a private hook: fall back to the traced one)
    graph = conc._graph_to_run() if hasattr(conc, "_graph_to_run") else conc.graph
    dev = devices.get_device()
    flat = [x for x in nest.flatten(list(args)) if isinstance(x, (np.ndarray, np.generic))]
    compiled = codegen.compile_graph(graph, dev)
    import operator
    raw = ([("NumPy a + b alone", functools.partial(operator.add, *flat))]
           if case.id.startswith("1_") else [])
    rows = raw + [("Function.__call__", call),
            ("ConcreteFunction.__call__", lambda: conc(*args)),
            ("codegen compiled graph", lambda: compiled(*flat)),
            ("interpreter.run", lambda: interpreter.run(graph, flat, dev))]
    print(f"{case.id}: {sum(1 for _ in graph.walk())} nodes after optimize "
          f"({sum(1 for _ in conc.graph.walk())} traced)\n")
    for label, fn in rows:
        print(f"  {label:28} {_per_call_ns(fn) / 1e3:10.2f} us")
    print("\ngenerated code:\n")
    print(codegen.source_of(graph, dev))
    return 0


if __name__ == "__main__":
    sys.exit(main())
