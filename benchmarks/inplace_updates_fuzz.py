"""Random programs of Variable reads, assigns, `assign_add`/`assign_sub` and views, run with
`jit_compile=True` and without (generated NumPy code) for three calls each, every result
kept until the end: a native kernel writing a Variable in place (runtime/exec/native/
inplace.py) must never change a value the program or the caller can still see.

    python -m benchmarks.inplace_updates_fuzz [--seed 0] [--programs 40]

Prints each mismatching program and the count of in-place kernel outputs exercised.
`tests/runtime/test_native_inplace_updates.py` runs a small sample.
"""

import argparse
import linecache
import random
import re

import numpy as np

import autograph as ag

EXPRS = ("{r} * 0.5", "np.tanh({r})", "{r}.T * 0.25", "{r} + x", "x * {r}",
         "np.exp({r} * 0.1)", "{r}[::-1] * 0.3",
         "np.reshape({r}, (16,))[::-1].reshape((4, 4))", "{r} - {r}.T")


def program(rng):
    """The source of `f(x)` over Variables `a` and `b` (4x4 float64)."""
    lines, names = [], ["x"]
    for k in range(rng.randint(2, 6)):
        kind, var = rng.random(), rng.choice("ab")
        src = rng.choice(names + ["a.read_value()", "b.read_value()"])
        expr = rng.choice(EXPRS).format(r=src)
        if kind < 0.3:
            lines.append(f"r{k} = {var}.read_value()")
            names.append(f"r{k}")
        elif kind < 0.75:
            lines.append(f"{var}.{rng.choice(('assign', 'assign_add', 'assign_sub'))}({expr})")
        else:
            lines.append(f"t{k} = {expr}")
            names.append(f"t{k}")
    ret = rng.sample(names, min(2, len(names))) + [rng.choice(("a", "b")) + ".read_value()"]
    return "def f(x):\n" + "".join(f"    {ln}\n" for ln in lines) + \
        f"    return ({', '.join(ret)},)\n"


def run(source, n, jit):
    """Every call's results and the Variables' final values (or the exception's type)."""
    init = np.random.default_rng(n).standard_normal((2, 4, 4)) * 0.5
    a, b = ag.Variable(init[0].copy(), name="a"), ag.Variable(init[1].copy(), name="b")
    name = f"<inplace-fuzz-{n}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    ns = {"np": np, "a": a, "b": b}
    exec(compile(source, name, "exec"), ns)
    fn = ag.function(ns["f"], jit_compile=jit)
    kept = []
    try:
        for c in range(3):
            kept.append(fn(np.random.default_rng(100 + c).standard_normal((4, 4))))
    except Exception as exc:    # the same error both ways is agreement
        return type(exc).__name__, fn
    kept.append((a.numpy(), b.numpy()))
    return kept, fn


def agree(got, want):
    if isinstance(got, str) or isinstance(want, str):
        return got == want
    return all(np.allclose(u, v, rtol=1e-10, atol=1e-12, equal_nan=True)
               for g, w in zip(got, want) for u, v in zip(g, w))


def in_place_outputs(fn, x):
    from autograph.runtime.exec import native
    source = native.source_of(fn.get_concrete_function(x)._graph_to_run())
    return len(re.findall(r"^    o\d+ = a\d+$", source, re.M))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--programs", type=int, default=40)
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    bad = exercised = 0
    for n in range(args.programs):
        source = program(rng)
        (got, fn), (want, _) = run(source, n, True), run(source, n, False)
        if not agree(got, want):
            bad += 1
            print(f"MISMATCH (program {n}):\n{source}")
        elif not isinstance(got, str):
            exercised += in_place_outputs(fn, np.zeros((4, 4)))
    print(f"{args.programs} programs, {bad} mismatches, {exercised} in-place kernel outputs")


if __name__ == "__main__":
    main()
