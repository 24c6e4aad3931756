"""The optimiser's output is pinned: for every program here, `optimize.optimize` makes exactly
the graph the slow reference optimiser (tests/runtime/reference_optimize.py, the code before
its speed work) makes: same nodes in the same order, names, ops, inputs, attrs, output
dtypes/shapes/weakness, graph inputs, outputs and captures, nested graphs included.

Programs: the shared samples, the benchmarks' converted collatz/fizzbuzz, small programs
that take each rewrite (folding and its refusals, CSE, cond on a constant with clashing
names, dropped cond outputs, dropped captures, dropped loop variables, merged and unmerged
Variable reads, effects, tensor maximum_iterations), and random nested programs.
"""

import contextlib
import io

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import autograph as ag
from autograph.runtime.exec import optimize
from autograph.runtime.ir.graph import Graph
from benchmarks import programs as bench
from tests.runtime import reference_optimize
from tests.runtime.samples import SAMPLES
from tests.runtime.test_random_programs import TOTAL, evaluate, programs
from tests.runtime.tracing import trace


def dump(graph):
    """Everything about a graph that an executor or a reader can see, as plain data."""
    def tname(t):
        return (t.node.name, t.index)

    def attr(v):
        if isinstance(v, Graph):
            return ("graph", dump(v))
        if isinstance(v, np.ndarray):
            return ("ndarray", v.dtype.str, v.shape, v.tobytes(), v.flags.writeable)
        if callable(v) and not isinstance(v, type):   # a weakref to a Variable
            return ("ref", id(v()))
        return (type(v).__name__, repr(v))

    return {
        "name": graph.name,
        "parent": None if graph.parent is None else graph.parent.name,
        "inputs": [tname(t) for t in graph.inputs],
        "outputs": [tname(t) for t in graph.outputs],
        "captures": [(tname(o), tname(i)) for o, i in graph.captures.values()],
        "variables": [id(r()) for r in graph.variables],
        "nodes": [(n.name, n.op, n.graph is graph, [tname(t) for t in n.inputs],
                   sorted((k, attr(v)) for k, v in n.attrs.items()),
                   [(t.dtype, t.shape, t.weak, t.index, t.node is n) for t in n.outputs])
                  for n in graph.nodes],
    }


def assert_identical(graph):
    want = dump(reference_optimize.optimize(graph))
    got = dump(optimize.optimize(graph))
    assert got == want
    assert dump(optimize.optimize(graph)) == want   # optimising twice: no state kept


@pytest.mark.parametrize("sample", SAMPLES, ids=repr)
def test_samples(sample):
    graph, _ = trace(sample.fn, *sample.args)
    assert_identical(graph)


@pytest.mark.parametrize("name,source,arg", [("collatz", bench.COLLATZ, 27),
                                             ("fizzbuzz", bench.FIZZBUZZ, 15)])
def test_converted_benchmark_programs(name, source, arg):
    fn = bench.fresh_function(source, name, {"np": np, "ag": ag})
    with contextlib.redirect_stdout(io.StringIO()):
        graph = ag.function(fn).get_concrete_function(np.int64(arg)).graph
    assert_identical(graph)


_V = ag.Variable(1.0, name="v_identity")


def _folding(x):
    k = np.float64(2.0) * 3.0 + np.arange(3.0)
    c = ag.constant(4.0)
    big = ag.constant(np.zeros(optimize.FOLD_LIMIT + 1)) + 1.0       # too large to fold
    small = ag.constant(np.ones(4, np.float32)) * 2
    bad = ag.constant(1.0) / ag.constant(0.0)                         # folds to inf
    return x + (c * c - 1.0) + k, np.sum(big), small, bad


def _cse(x, y):
    a = np.tanh(x * y) + 1.0
    b = np.tanh(x * y) + 1.0
    return a * b, np.tanh(x * y), np.sum(x, axis=0), np.sum(x, axis=0)


def _effects(x):
    unused = np.exp(x) * 5.0
    ag.print("first", x)
    _V.assign(x * 2.0)
    ag.print("second", _V)
    del unused
    return x + 1.0


def _const_cond(x):
    add = x * 2.0                                   # a name the inlined branch also uses
    a = ag.cond(ag.constant(3) > 2, lambda: x + 1, lambda: x - 1)
    b = ag.cond(ag.constant(3) < 2, lambda: (x + 1) * add, lambda: (x - 1) * add)
    return a, b


def _unused_cond_outputs(x):
    a, b = ag.cond(x > 0, lambda: (x + 1.0, np.exp(x)), lambda: (x - 1.0, np.log(-x)))
    return a * 2.0


def _dead_captures(x, y):
    heavy = np.exp(y) * 3.0

    def yes():
        np.log(heavy)
        return x + 1.0
    return ag.cond(x > 0, yes, lambda: x - 1.0)


def _loop_vars(n, x):
    def body(i, total, waste, shown):
        ag.print(shown)
        return i + 1, total + x, np.exp(waste) + total, shown * 2
    i, total, waste, shown = ag.while_loop(lambda i, *_: i < n, body, (0, x, x, 1))
    ag.while_loop(lambda i: i < n, lambda i: i + 1, (0,))          # dead loop
    return total


def _variable_reads(x):
    a = _V.read_value() + _V * 2.0
    ag.print(_V)
    _V.assign(x)
    b = _V.read_value()
    ag.cond(x > 10, lambda: [_V.assign(x * 2.0), None][1], lambda: None)
    c = _V.read_value()
    return a, b, c


def _tensor_max_iterations(n, x):
    return ag.while_loop(lambda i, s: i < 100, lambda i, s: (i + 1, s * 2.0 + x), (0, x),
                         maximum_iterations=n)[1]


def _nested_const_folding_in_bodies(n):
    def body(i, s):
        k = ag.constant(2.0) * 3.0                  # folded inside the body
        return i + 1, ag.cond(i > 2, lambda: s + k, lambda: s - k)
    return ag.while_loop(lambda i, s: i < n, body, (0, 0.0))[1]


PROGRAMS = [
    (_folding, (np.ones(3),)),
    (_cse, (np.ones((2, 3)), np.float64(2.0))),
    (_effects, (np.float64(1.0),)),
    (_const_cond, (np.float64(1.0),)),
    (_unused_cond_outputs, (np.float64(1.0),)),
    (_dead_captures, (np.float64(1.0), np.float64(2.0))),
    (_loop_vars, (np.int64(3), np.float64(0.5))),
    (_variable_reads, (np.float64(5.0),)),
    (_tensor_max_iterations, (np.int64(3), np.float64(0.5))),
    (_nested_const_folding_in_bodies, (np.int64(4),)),
]


@pytest.mark.parametrize("fn,args", PROGRAMS, ids=lambda p: getattr(p, "__name__", ""))
def test_programs_taking_each_rewrite(fn, args):
    with np.errstate(all="ignore"):
        graph, _ = trace(fn, *args)
        assert_identical(graph)


@settings(max_examples=40, deadline=None)
@given(programs, st.integers(0, 3))
def test_random_programs(prog, n):
    def f(x, y, n):
        return evaluate(prog, {"x": x, "y": y, "n": n})

    TOTAL.assign(0.0)
    graph, _ = trace(f, np.float64(0.5), np.float64(-1.5), np.int64(n))
    assert_identical(graph)


def _while_nodes(graph):
    for node in graph.walk():
        if node.op == "while_loop":
            yield node


@pytest.mark.parametrize("fn,args", [(s.fn, s.args) for s in SAMPLES if "cond" not in s.name] +
                         [(_loop_vars, (np.int64(3), np.float64(0.5))),
                          (_tensor_max_iterations, (np.int64(3), np.float64(0.5)))])
def test_loop_variable_masks_agree_with_the_search_fallback(fn, args, monkeypatch):
    """The one-pass dependency masks give the loop variables the per-tensor search gives."""
    graph, _ = trace(fn, *args)
    for node in _while_nodes(graph):
        used = {id(t) for t in node.outputs[:1]}
        fast = optimize._needed_loop_vars(node, used)
        with monkeypatch.context() as m:
            m.setattr(optimize, "_loop_var_masks", lambda g, n: None)
            slow = optimize._needed_loop_vars(node, used)
        assert fast == slow
        body = node.attrs["body_graph"]
        reordered = Graph("reordered")
        reordered.inputs, reordered.nodes = body.inputs, list(reversed(body.nodes))
        if any(nd.inputs for nd in body.nodes):
            assert optimize._loop_var_masks(reordered, len(node.outputs)) is None
