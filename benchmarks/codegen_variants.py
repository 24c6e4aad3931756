"""python -m benchmarks.codegen_variants: what other generated code would cost (cases 3, 4).

The first profiles of cases 3 and 4 (README) showed nearly all of autograph's time inside
the generated loop, one NumPy ufunc call per node per iteration. This script times
hand-edited variants of the code codegen emitted then (before commit 0ee5815, which adopted
the last two variants), so a codegen change can be measured before it is made:

- as generated: `k_add(x, y)` ufunc calls, constants bound as 0-d arrays;
- operators: `x + y` on the same values (NumPy's scalar fast path when both are scalars);
- operators + NumPy-scalar constants (`const[()]`): every value in the loop stays a NumPy
  scalar, so each node is one scalar-math call instead of a full ufunc dispatch;
- for a `range` loop, additionally a Python `for` over `xp.arange(start, limit)` in place of
  the counter/compare/increment nodes.
Every variant's result is checked against the plain Python function before it is timed.
"""

import sys
import timeit

import numpy as np

# the code autograph's codegen emitted for collatz (benchmarks/programs.py) before 0ee5815
COLLATZ_GENERATED = """
def collatz(n):
    n_1, steps, = n, Const_1,
    while True:
        not_equal = k_not_equal(n_1, Const)
        if not not_equal:
            break
        remainder = k_remainder(n_1, Const_2)
        equal = k_equal(remainder, Const_1_1)
        if equal:
            floor_divide = k_floor_divide(n_1, Const_3)
            cond, = floor_divide,
        else:
            multiply = k_multiply(Const_4, n_1)
            add = k_add(multiply, Const_1_2)
            cond, = add,
        add_1 = k_add(steps, Const_2_1)
        n_1, steps, = cond, add_1,
    return (steps,)
"""
COLLATZ_CONSTS = dict(Const_1=0, Const=1, Const_2=2, Const_1_1=0, Const_3=2, Const_4=3,
                      Const_1_2=1, Const_2_1=1)

RANGE_GENERATED = """
def range_loop(n):
    _loop_counter_, s, = Const, Const_2,
    while True:
        less = k_less(_loop_counter_, n)
        if not less:
            break
        multiply = k_multiply(_loop_counter_, _loop_counter_)
        add = k_add(s, multiply)
        add_1 = k_add(_loop_counter_, Const_1)
        _loop_counter_, s, = add_1, add,
    return (s,)
"""
RANGE_FOR = """
def range_loop(n):
    s, = Const_2,
    for _loop_counter_ in xp.arange(Const, n):
        multiply = _loop_counter_ * _loop_counter_
        add = s + multiply
        s, = add,
    return (s,)
"""
RANGE_CONSTS = dict(Const=0, Const_1=1, Const_2=0)

_OPERATORS = {"k_add": "+", "k_multiply": "*", "k_remainder": "%", "k_floor_divide": "//",
              "k_equal": "==", "k_not_equal": "!=", "k_less": "<"}


def with_operators(source):
    """`k_add(x, y)` -> `x + y` for the binary kernels above."""
    import re
    pattern = re.compile(r"(k_\w+)\((\w+), (\w+)\)")
    return pattern.sub(lambda m: f"{m.group(2)} {_OPERATORS[m.group(1)]} {m.group(3)}", source)


def build(source, name, consts, scalar_consts):
    ns = {"xp": np}
    ns.update({k: getattr(np, k[2:]) for k in _OPERATORS})
    ns.update({k: (np.asarray(v)[()] if scalar_consts else np.asarray(v))
               for k, v in consts.items()})
    exec(compile(source, f"<{name} variant>", "exec"), ns)
    return ns[name]


def per_call_us(fn, arg, budget_s):
    fn(arg)
    t0 = timeit.default_timer()
    fn(arg)
    one = max(timeit.default_timer() - t0, 1e-7)
    number = max(1, int(budget_s / 5 / one))
    return min(timeit.repeat(lambda: fn(arg), number=number, repeat=5)) / number * 1e6


def main(argv=None):
    quick = "--quick" in (sys.argv[1:] if argv is None else argv)
    budget = 0.05 if quick else 1.0
    steps = 2_000 if quick else 100_000
    rows = []
    collatz_ref = 111
    for label, src, scalar in [("as generated (ufunc calls, 0-d consts)", COLLATZ_GENERATED, False),
                               ("operators, 0-d consts", with_operators(COLLATZ_GENERATED), False),
                               ("operators, NumPy-scalar consts", with_operators(COLLATZ_GENERATED), True)]:
        fn = build(src, "collatz", COLLATZ_CONSTS, scalar)
        assert int(fn(np.int64(27))[0]) == collatz_ref, label
        rows.append(("3 collatz(27)", label, per_call_us(fn, np.int64(27), budget)))
    range_ref = sum(i * i for i in range(steps))
    for label, src, scalar in [("as generated (ufunc calls, 0-d consts)", RANGE_GENERATED, False),
                               ("operators, NumPy-scalar consts", with_operators(RANGE_GENERATED), True),
                               ("for over xp.arange, operators, scalar consts", RANGE_FOR, True)]:
        fn = build(src, "range_loop", RANGE_CONSTS, scalar)
        assert int(fn(np.int64(steps))[0]) == range_ref, label
        rows.append((f"4 range loop n={steps}", label, per_call_us(fn, np.int64(steps), budget)))

    def hand(n):
        s = np.int64(0)
        for i in np.arange(n):
            s += i * i
        return s
    rows.append((f"4 range loop n={steps}", "numpy_hand (Python loop over NumPy scalars)",
                 per_call_us(hand, np.int64(steps), budget)))
    print("| case | generated code variant | us per call |\n|---|---|---:|")
    for case, label, us in rows:
        print(f"| {case} | {label} | {us:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
