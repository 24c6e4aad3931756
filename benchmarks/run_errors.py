"""What naming the failing iteration costs a while loop that is not a counted `for` (issue 34).

    python -m benchmarks.run_errors

codegen keeps one Python int per such loop, `while_loop_iteration += 1` at the end of each
iteration, so that a run-time error can say which iteration failed (see
autograph/errors.py, "where in its loops"). This runs the generated function of two float
recurrences run until they pass a limit (a 2-operation and a 6-operation body) as codegen
writes them and with the counter's lines taken out of the source, and prints the time per
iteration of each (best of 21 interleaved rounds). Counted `for` loops keep no counter,
nor do while loops with an integer stepped by a constant (collatz's `steps += 1`): nothing
to measure there.
"""

import time

import numpy as np

import autograph as ag
from autograph.runtime.exec import codegen


def logistic(x, limit):
    # a 6-operation body: the counter's share of a typical scalar loop
    while x < limit:
        x = x + 0.01 * x * (1.0 - x / 1e6) + 0.001
    return x


def growth(x, limit):
    while x < limit:
        x = x * 1.001 + 0.001
    return x


def _iterations(fn, *args):
    """How many iterations `fn`'s loop runs (the same recurrence in Python floats)."""
    source = fn.__code__
    count = 0
    x, limit = (float(a) for a in args)
    while x < limit:
        x = (x * 1.001 + 0.001) if source is growth.__code__ else \
            (x + 0.01 * x * (1.0 - x / 1e6) + 0.001)
        count += 1
    return count


def _without_counter(compiled):
    """The same generated function with the iteration counter's lines removed."""
    lines = [line for line in compiled.__source__.splitlines()
             if "_iteration" not in line or " >= " in line]
    namespace = dict(compiled.__globals__)
    exec(compile("\n".join(lines) + "\n", "<no counter>", "exec"), namespace)
    return namespace[compiled.__name__]


def _best(fns, args, rounds=21, repeat=200):
    """Best time per call of each of `fns`, rounds interleaved (a busy machine slows both)."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            t = time.perf_counter()
            for _ in range(repeat):
                fn(*args)
            best[k] = min(best[k], (time.perf_counter() - t) / repeat)
    return best


def main():
    print(f"{'loop':<12} {'iterations':>10} {'with counter':>14} {'without':>10} {'cost':>8}"
          "   (ns per iteration)")
    growth_args = (np.float64(0.3), np.float64(10.0))
    logistic_args = (np.float64(1.0), np.float64(1e4))
    for fn, args in ((growth, growth_args), (logistic, logistic_args)):
        iterations = _iterations(fn, *args)
        graph = ag.function(fn).get_concrete_function(*args).graph
        compiled = codegen.compile_graph(graph)
        bare = _without_counter(compiled)
        assert compiled.__source__.count("_iteration += 1") == 1
        assert bare(*args) == compiled(*args)
        repeat = max(1, 20_000 // iterations)
        with_c, without = (t / iterations for t in _best([compiled, bare], args, repeat=repeat))
        print(f"{fn.__name__:<12} {iterations:>10} {1e9 * with_c:>14.1f} {1e9 * without:>10.1f} "
              f"{100 * (with_c / without - 1):>7.1f}%")


if __name__ == "__main__":
    main()
