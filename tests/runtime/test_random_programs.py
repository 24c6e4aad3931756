"""Random nested cond/while_loop programs: eager NumPy == interpreter == codegen == optimised.

A program is a small expression tree over the arguments x and y; `evaluate` runs it with
ag.cond / ag.while_loop, so the same code is the eager reference (Python control flow on
NumPy values) and, on placeholders, builds the graph.
"""

import numpy as np
from hypothesis import given, settings, strategies as st

import autograph as ag
from tests.runtime.tracing import MODES, capture_stdout, run, trace

leaves = st.sampled_from(["x", "y", "acc", "i"]) | st.floats(-2, 2, allow_nan=False).map(
    lambda c: ("const", round(c, 2)))


def _extend(children):
    return st.one_of(
        st.tuples(st.sampled_from(["add", "mul", "sub"]), children, children),
        st.tuples(st.just("tanh"), children),
        st.tuples(st.just("cond"), children, children, children),
        st.tuples(st.just("loop"), st.integers(0, 4), children),
        st.tuples(st.just("print"), children),
        st.tuples(st.just("collect"), st.integers(0, 3), children),
        st.tuples(st.just("accumulate"), children),
    )


programs = st.recursive(leaves, _extend, max_leaves=12)


def evaluate(prog, env):
    if isinstance(prog, str):
        return env.get(prog, env["x"])
    op = prog[0]
    if op == "const":
        return np.float64(prog[1])
    if op in ("add", "mul", "sub"):
        a, b = evaluate(prog[1], env), evaluate(prog[2], env)
        return {"add": np.add, "mul": np.multiply, "sub": np.subtract}[op](a, b)
    if op == "tanh":
        return np.tanh(evaluate(prog[1], env))
    if op == "cond":
        pred = evaluate(prog[1], env) > 0
        return ag.cond(pred, lambda: evaluate(prog[2], env), lambda: evaluate(prog[3], env))
    if op == "loop":
        trips, body = prog[1], prog[2]

        def step(i, acc, unused):        # `unused` is dropped by the optimiser
            inner = dict(env, acc=acc, i=i.astype(np.float64) if hasattr(i, "astype")
                         else np.float64(i))
            return i + 1, np.tanh(evaluate(body, inner)), np.sqrt(np.abs(unused)) + acc
        _, acc, _ = ag.while_loop(lambda i, acc, unused: i < env["n"] + trips, step,
                                  (0, env.get("acc", env["y"]), env["x"]))
        return acc
    if op == "print":
        value = evaluate(prog[1], env)
        ag.print("value", value)
        return value
    if op == "collect":      # a TensorArray filled by a loop, then summed
        trips, body = prog[1], prog[2]

        def fill(i, ta):
            inner = dict(env, i=i.astype(np.float64) if hasattr(i, "astype") else np.float64(i))
            return i + 1, ta.write(i, np.tanh(evaluate(body, inner)))
        ta = ag.TensorArray(np.float64, size=0, dynamic_size=True, element_shape=())
        _, ta = ag.while_loop(lambda i, ta: i < env["n"] + trips, fill, (0, ta))
        return np.sum(ta.stack()) + ta.size().astype(np.float64)
    if op == "accumulate":   # a Variable updated, then read back
        TOTAL.assign_add(np.tanh(evaluate(prog[1], env)))
        return TOTAL.read_value() * 1.0
    raise AssertionError(op)


TOTAL = ag.Variable(0.0, name="total")


@settings(max_examples=30, deadline=None)
@given(programs, st.floats(-2, 2), st.floats(-2, 2), st.integers(0, 3))
def test_random_programs_agree_in_every_mode(prog, x, y, n):
    def f(x, y, n):
        return evaluate(prog, {"x": x, "y": y, "n": n})

    args = (np.float64(x), np.float64(y), np.int64(n))
    TOTAL.assign(0.0)
    want, want_printed = capture_stdout(f, *args)
    graph, _ = trace(f, *args)
    if not graph.outputs:        # the program is a constant: nothing to run
        return
    for mode in MODES:
        TOTAL.assign(0.0)
        (got,), printed = capture_stdout(run, graph, args, mode)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        assert printed == want_printed
