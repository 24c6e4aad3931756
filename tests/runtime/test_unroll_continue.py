"""A `continue` that depends on a tensor, in a Python `for` over a range, stages the rest
of the range as one while_loop, as a tensor `break` or `return` does (issue 16): with any
mix of continue/break/return, nested loops, `for ... else`, Python-only state in the body.
Results are compared with the original Python function; graph size is counted in nodes
(nested branch and body graphs included), never timed."""

import warnings

import numpy as np
import pytest

import autograph as ag
from autograph.operators import control_flow as cf_ops
from autograph.operators import unroll
from autograph.runtime.ir.graph import Graph


def skip_negative(x):
    s = 0.0
    for t in range(x.shape[0]):
        if x[t] < 0:
            continue
        s += x[t]
    return s


def skip_with_else(x):
    s = 0.0
    for t in range(len(x)):
        if x[t] < 0:
            s -= 1.0
            continue
        else:
            s += x[t]
    return s


def stepped(x):
    s = 0.0
    for t in range(1, len(x), 3):
        if x[t] > 0.5:
            continue
        s = s * 0.5 + x[t]
    return s


def backwards(x):
    s = 0.0
    for t in range(len(x) - 1, -1, -2):
        if x[t] < -0.5:
            continue
        s = s + t * x[t]
    return s


def continue_break_return(x):
    s = 0.0
    for t in range(x.shape[0]):
        if x[t] < 0:
            continue
        if x[t] > 2.5:
            return s * 100.0
        s += x[t]
        if s > 40.0:
            break
    else:
        s = -s
    return s


def python_state(x):
    s = 0.0
    seen = 0            # Python int before the loop, a tensor once the rest is staged
    scale = {"k": 2.0}  # Python dict, only read
    for t in range(len(x)):
        seen += 1
        if x[t] < 0:
            continue
        s += scale["k"] * x[t]
    return s + seen


def continue_in_nested_if(x):
    s = 0.0
    n = 0
    for t in range(len(x)):
        if x[t] > -1.0:
            if x[t] < 0.0:
                continue
            n += 1
        s += x[t]
    return s, n


def nested(x):
    total = 0.0
    for i in range(x.shape[0]):
        row = 0.0
        for j in range(x.shape[1]):
            if x[i, j] < 0:
                continue
            row += x[i, j]
        if row > 3.0:
            continue
        total += row
    return total


def inner_break_outer_continue(x):
    total = 0.0
    for i in range(x.shape[0]):
        hit = 0.0
        for j in range(x.shape[1]):
            if x[i, j] > 1.0:
                hit = 1.0
                break
        if hit > 0:
            continue
        total += np.sum(x[i])
    return total


def while_inside(x):
    total = 0.0
    for t in range(len(x)):
        k = 0
        while k < 2:
            k += 1
            if x[t] < 0:
                continue
            total += x[t]
    return total


def python_continue_only(x):
    s = 0.0
    for t in range(len(x)):
        if t % 3 == 0:       # a Python condition: the loop unrolls, as Python runs it
            continue
        s += x[t]
    return s


ONE_D = [skip_negative, skip_with_else, stepped, backwards, continue_break_return,
         python_state, continue_in_nested_if, while_inside, python_continue_only]
TWO_D = [nested, inner_break_outer_continue]


def _inputs_1d(n):
    rng = np.random.default_rng(n)
    yield rng.standard_normal(n)
    yield -np.abs(rng.standard_normal(n)) - 0.1          # all negative: every step continues
    yield np.abs(rng.standard_normal(n))                 # none does
    yield rng.choice([-1.0, 0.0, 0.7, 3.0], size=n)


def _same(got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn", ONE_D)
@pytest.mark.parametrize("n", [0, 1, 5, 9, 10, 23, 200])
def test_matches_python_1d(fn, n):
    f = ag.function(fn)
    for x in _inputs_1d(n):
        _same(f(x), fn(x))


@pytest.mark.parametrize("fn", TWO_D)
@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (1, 1), (4, 12), (15, 3), (20, 20)])
def test_matches_python_2d(fn, shape):
    f = ag.function(fn)
    rng = np.random.default_rng(sum(shape))
    for x in (rng.standard_normal(shape), rng.standard_normal(shape) * 3, -np.ones(shape)):
        _same(f(x), fn(x))


def count_nodes(graph):
    """Nodes of `graph` and of every branch and body graph inside it."""
    total = 0
    for node in graph.nodes:
        total += 1
        for value in node.attrs.values():
            for g in (value if isinstance(value, (list, tuple)) else [value]):
                if isinstance(g, Graph):
                    total += count_nodes(g)
                elif hasattr(g, "graph") and isinstance(getattr(g, "graph"), Graph):
                    total += count_nodes(g.graph)
    return total


def _nodes(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("error", unroll.UnrollWarning)
        return count_nodes(ag.function(fn).get_concrete_function(x).graph)


@pytest.mark.parametrize("fn", [skip_negative, skip_with_else, stepped, backwards,
                                continue_break_return, python_state, continue_in_nested_if])
def test_graph_size_does_not_grow_with_the_range(fn):
    small = _nodes(fn, np.zeros(40))
    large = _nodes(fn, np.zeros(4000))
    assert small == large
    assert large < 200


def test_nested_graph_size_does_not_grow():
    assert _nodes(nested, np.zeros((20, 20))) == _nodes(nested, np.zeros((200, 300)))
    assert (_nodes(inner_break_outer_continue, np.zeros((20, 20)))
            == _nodes(inner_break_outer_continue, np.zeros((200, 300))))


def test_the_issue_reproducer_is_one_while_loop():
    x = np.random.default_rng(0).standard_normal(2000)
    conc = ag.function(skip_negative).get_concrete_function(x)
    ops = [nd.op for nd in conc.graph.as_graph_def().node]
    assert ops.count("while_loop") == 1
    assert count_nodes(conc.graph) < 60      # unrolled: 22,002
    _same(ag.function(skip_negative)(x), skip_negative(x))


def test_first_call_of_100000_steps_stays_small():
    x = np.random.default_rng(1).standard_normal(100_000)
    f = ag.function(skip_negative)
    with warnings.catch_warnings():
        warnings.simplefilter("error", unroll.UnrollWarning)
        _same(f(x), skip_negative(x))
    assert count_nodes(f.get_concrete_function(x).graph) < 60


def test_short_ranges_still_unroll():
    """At most STAGE_RANGES_LONGER_THAN iterations left after a tensor continue: unrolled,
    exactly as Python runs them (no while_loop)."""
    n = cf_ops.STAGE_RANGES_LONGER_THAN + 1
    conc = ag.function(skip_negative).get_concrete_function(np.zeros(n))
    assert "while_loop" not in [nd.op for nd in conc.graph.as_graph_def().node]
    conc = ag.function(skip_negative).get_concrete_function(np.zeros(n + 1))
    assert "while_loop" in [nd.op for nd in conc.graph.as_graph_def().node]


def collect(x):
    out = []
    s = 0.0
    for t in range(len(x)):
        out.append(t)
        if x[t] < 0:
            continue
        s += x[t]
    return s + len(out)


def index_python_list(x):
    w = [float(k) for k in range(12)]
    s = 0.0
    for t in range(12):
        if x[t] < 0:
            continue
        s += w[t] * x[t]
    return s


def collect_after(x):
    out = []
    for t in range(len(x)):
        if x[t] < 0:
            continue
        out.append(t)        # runs only where the tensor condition says: refused
    return len(out)


def test_refusals_are_the_same_as_for_break():
    """A body the graph loop refuses (it changes a Python list) or one that needs a Python
    item (it indexes a Python list) is unrolled as before the staging attempt; an append to
    a Python list under the tensor `continue` is staged, as under a tensor `break`."""
    x = np.random.default_rng(2).standard_normal(30)
    _same(ag.function(collect)(x), collect(x))
    _same(ag.function(collect)(x[:5]), collect(x[:5]))
    for x in _inputs_1d(12):
        _same(ag.function(index_python_list)(x), index_python_list(x))
    # appending under the tensor `continue` is no longer refused: the list is a list of
    # tensors the loop carries (autograph.operators.lists), and gives Python's answer
    for x in (np.ones(30), -np.ones(30), np.random.default_rng(0).standard_normal(30)):
        _same(ag.function(collect_after)(x), collect_after(x))


def test_the_generated_if_is_marked_as_a_jump():
    from autograph.api import to_code
    code = to_code(skip_negative)
    assert "jump=True" in code
    code = to_code(python_continue_only)
    assert code.count("jump=True") == 1     # the guard: Python at run time, never staged
