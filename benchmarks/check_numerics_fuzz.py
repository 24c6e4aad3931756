"""Random programs under `ag.config.check_numerics`: watch mode must raise what full mode
raises, word for word (runtime/exec/numerics_plan.py), or return the same values.

    python -m benchmarks.check_numerics_fuzz [--programs 2000] [--seed 0]

A program is an expression tree over arrays x and y (and a loop's state `acc` and counter
`i`) of adds, subtracts, multiplies, divides, exp, log, sqrt, tanh, where, maximum, conds,
counted loops (`ag.while_loop` on `i < n`) and loops that run until their state passes a
bound; its constants and arguments include 0, negatives and values near the overflow
threshold, so many runs make a NaN or an infinity somewhere, and many hide it again.
tests/runtime/test_check_numerics_watch.py runs a small sample of the same generator.
"""

import argparse
import random
import time

import numpy as np

import autograph as ag
from autograph.runtime.exec import codegen

CONSTANTS = (0.0, 1.0, -1.0, 0.5, 2.0, 1e200, -1e200, 1e-200)
ARGUMENTS = (0.0, 1.0, -1.0, 3.0, 1e150, -1e150, 1e300, 1e-300)
UNARY = ("exp", "log", "sqrt", "tanh", "neg")
BINARY = ("add", "sub", "mul", "div", "where", "maximum")


def program(rng, depth=4):
    """A random expression tree (nested tuples)."""
    if depth == 0 or rng.random() < 0.25:
        return rng.choice(["x", "y", "acc", "i", ("const", rng.choice(CONSTANTS))])
    kind = rng.random()
    if kind < 0.3:
        return (rng.choice(UNARY), program(rng, depth - 1))
    if kind < 0.75:
        return (rng.choice(BINARY), program(rng, depth - 1), program(rng, depth - 1))
    if kind < 0.85:
        return ("cond", program(rng, depth - 1), program(rng, depth - 1),
                program(rng, depth - 1))
    if kind < 0.95:
        return ("loop", rng.randint(0, 3), program(rng, depth - 1))
    return ("until", program(rng, depth - 1))


def evaluate(prog, env):
    if isinstance(prog, str):
        return env.get(prog, env["x"])
    op = prog[0]
    if op == "const":
        return np.float64(prog[1])
    if op in UNARY:
        a = evaluate(prog[1], env)
        return -a if op == "neg" else getattr(np, op)(a)
    if op in BINARY:
        a, b = evaluate(prog[1], env), evaluate(prog[2], env)
        if op == "where":
            return np.where(a > 0, b, 0.0)
        return getattr(np, {"add": "add", "sub": "subtract", "mul": "multiply",
                            "div": "divide", "maximum": "maximum"}[op])(a, b)
    if op == "cond":
        pred = np.sum(evaluate(prog[1], env)) > 0
        return ag.cond(pred, lambda: evaluate(prog[2], env), lambda: evaluate(prog[3], env))
    if op == "loop":     # a counted loop: ends whatever its state holds
        trips, body = prog[1], prog[2]

        def step(i, acc):
            inner = dict(env, acc=acc, i=i.astype(np.float64) if hasattr(i, "astype")
                         else np.float64(i))
            return i + 1, evaluate(body, inner) + acc * 0.5
        _, acc = ag.while_loop(lambda i, acc: i < env["n"] + trips, step,
                               (0, env.get("acc", env["y"]) + env["x"] * 0.0))
        return acc
    # "until": runs while its state is below a bound. A finite state reaches it (halved and
    # raised by >= 1, it tends to >= 2; from -1.8e308 in ~1,030 steps); a NaN ends it; -inf
    # would make it spin: the check must stop that before the loop
    def grow(acc):
        inner = dict(env, acc=acc)
        return (acc * 0.5 + np.abs(np.tanh(evaluate(prog[1], inner))) + 1.0,)
    acc, = ag.while_loop(lambda acc: np.all(acc < 1.9), grow,
                         (env.get("acc", env["y"]) * 1.0 + env["x"] * 0.0,))
    return acc


def make(prog):
    def fn(x, y, n):
        return evaluate(prog, {"x": x, "y": y, "n": n})
    return fn


def outcome(compiled, args):
    try:
        return ("ok", compiled(*args))
    except Exception as error:
        return ("raised", type(error).__name__, str(error))


def check(prog, args):
    """Compare watch and full mode on `prog(*args)`; returns full mode's outcome."""
    graph = ag.function(make(prog)).get_concrete_function(*args).graph
    full = outcome(codegen.compile_graph(graph, None, "full"), args)
    watch = outcome(codegen.compile_graph(graph, None, True), args)
    assert watch[0] == full[0], (prog, args, watch, full)
    if full[0] == "raised":
        assert watch[1:] == full[1:], (prog, args, watch, full)
    else:
        for a, b in zip(watch[1], full[1]):
            np.testing.assert_array_equal(a, b)
    return full


def arguments(rng):
    x = np.array([rng.choice(ARGUMENTS) for _ in range(3)])
    y = np.array([rng.choice(ARGUMENTS) for _ in range(3)])
    return x, y, np.int64(rng.randint(0, 4))


def run(count, seed):
    rng = random.Random(seed)
    raised = 0
    with np.errstate(all="ignore"):
        for _ in range(count):
            prog = program(rng)
            for _ in range(3):
                result = check(prog, arguments(rng))
                raised += result[0] == "raised" and result[1] == "NonFiniteError"
    return raised


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args(argv)
    start = time.perf_counter()
    raised = run(options.programs, options.seed)
    print(f"{options.programs} programs x 3 argument sets: watch == full in every run; "
          f"{raised} runs raised NonFiniteError; {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
