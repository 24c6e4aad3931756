"""A Python `for` over a range whose `break`/`return` depends on a tensor is one graph loop
(not an unrolled chain of `cond`s); long unrolled Python loops warn; code generation and
graph passes do work linear in the graph's size (work is counted, never timed)."""

import cProfile
import pstats
import warnings

import numpy as np
import pytest

import autograph as ag
from autograph import errors
from autograph.operators import unroll
from autograph.runtime.devices import get_device
from autograph.runtime.exec import codegen, optimize


def find_shape(x, target):
    found = -1
    for t in range(x.shape[0]):
        if x[t] == target:
            found = t
            break
    return found


def find_len(x, target):
    for t in range(len(x)):
        if x[t] == target:
            return t
    return -1


def find_stepped(x, target):
    hits = 0
    for t in range(len(x) - 1, 0, -3):
        if x[t] > target:
            break
        hits = hits + t
    else:
        hits = -hits
    return hits


def skip_and_break(x, target):
    total = 0.0
    for t in range(x.shape[0]):
        if x[t] < 0:
            continue
        total = total + x[t]
        if total > target:
            break
    return total


def _count(fn, op):
    concrete = fn
    return sum(1 for nd in concrete.graph.as_graph_def().node if nd.op == op)


@pytest.mark.parametrize("fn", [find_shape, find_len, find_stepped, skip_and_break])
@pytest.mark.parametrize("n", [1, 2, 7, 40])
def test_tensor_break_in_range_matches_python(fn, n):
    x = np.linspace(-3.0, 5.0, n)
    f = ag.function(fn)
    for target in [x[0], x[n // 2], x[-1], 100.0, -100.0, 1.0]:
        got = f(x, np.float64(target))
        assert np.asarray(got).item() == fn(x, float(target))


@pytest.mark.parametrize("fn", [find_shape, find_len, skip_and_break])
def test_tensor_break_in_range_is_one_while_loop(fn):
    sizes = {}
    for n in (10, 5000):
        x = np.arange(n, dtype=np.float64)
        conc = ag.function(fn).get_concrete_function(x, np.float64(1))
        nodes = conc.graph.as_graph_def().node
        assert sum(nd.op == "while_loop" for nd in nodes) == 1
        assert sum(nd.op == "cond" for nd in nodes) <= 2   # the first iteration, a return
        sizes[n] = len(nodes)
    assert sizes[10] == sizes[5000]


def test_range_of_100000_with_tensor_break_traces_small():
    n = 100_000
    x = np.arange(n, dtype=np.float64)
    f = ag.function(find_shape)
    assert f(x, np.float64(n - 2)) == n - 2
    assert len(f.get_concrete_function(x, np.float64(0)).graph.as_graph_def().node) < 20


def index_python_list(x, target):
    weights = [1.0, 2.0, 3.0, 4.0, 5.0]
    total = 0.0
    for t in range(5):
        total = total + weights[t] * x[t]
        if total > target:
            break
    return total


def test_body_that_needs_a_python_index_still_unrolls():
    x = np.arange(5, dtype=np.float64)
    f = ag.function(index_python_list)
    for target in (-1.0, 0.5, 7.0, 100.0):
        assert f(x, np.float64(target)) == index_python_list(x, target)


def unrolled(x):
    for k in [1.0] * 1200:
        x = x + k
    return x


def small_unrolled(x):
    for k in [1.0] * 1000:
        x = x + k
    return x


def python_only(x):
    n = 0
    for k in range(5000):
        n = n + k
    return x + n


def test_long_unrolled_loop_warns_once_with_the_users_line():
    unroll._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = ag.function(unrolled)
        assert f(np.float64(0.0)) == 1200.0
        assert f(np.float32(0.0)) == 1200.0        # a second trace: no second warning
    found = [w for w in caught if issubclass(w.category, unroll.UnrollWarning)]
    assert len(found) == 1
    assert found[0].filename == __file__
    assert found[0].lineno == unrolled.__code__.co_firstlineno + 1
    assert "1,200 iterations" in str(found[0].message)
    assert "2,400 graph nodes" in str(found[0].message)   # a Const and an add per iteration


@pytest.mark.parametrize("fn", [small_unrolled, python_only])
def test_short_or_python_only_loops_do_not_warn(fn):
    unroll._warned.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", unroll.UnrollWarning)
        assert ag.function(fn)(np.float64(0.0)) == fn(0.0)


# -- linear work ------------------------------------------------------------------------------

def search_list(x, target, idx):
    found = -1
    for t in idx:            # a Python list: unrolled into a chain of conds
        if x[t] == target:
            found = t
            break
    return found


def _calls(fn, *args):
    prof = cProfile.Profile()
    prof.enable()
    out = fn(*args)
    prof.disable()
    return out, pstats.Stats(prof).total_calls


def _unrolled_graph(n):
    x = np.arange(n, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ag.function(search_list).get_concrete_function(x, np.float64(1), list(range(n))).graph


def test_codegen_name_probes_are_linear():
    probes = {}
    for n in (100, 400):
        graph = optimize.optimize(_unrolled_graph(n))
        fn = codegen._Compiler(graph, get_device("cpu")).build()
        probes[n] = fn.__name_probes__
        assert probes[n] <= fn.__source__.count("\n")   # at most one per line, not per pair
    assert probes[400] <= 4.4 * probes[100] + 10


def test_optimize_and_codegen_work_is_linear():
    work = {}
    for n in (100, 400):
        graph = _unrolled_graph(n)
        opt, w_opt = _calls(optimize.optimize, graph)
        _, w_gen = _calls(lambda g: codegen._Compiler(g, get_device("cpu")).build(), opt)
        work[n] = (w_opt, w_gen)
    for k in range(2):
        assert work[400][k] <= 4.4 * work[100][k], work


def closures_over_loop_state(x, n):
    fs = []
    a = x * 0
    for i in range(n):
        a = a + i
        fs.append(lambda: a + 4)        # a Python list the loop changes, a closure over `a`
        if a > x:
            return a + sum(f() for f in fs)
    return a + sum(f() for f in fs)


@pytest.mark.parametrize("index", [8540, 9515])
def test_short_ranges_still_unroll_exactly(index):
    """Generated programs (differential run, seed 0) with a short Python range, a tensor
    return in it and closures over its variables: they unroll as Python runs them. A
    staging attempt ran the body once and left body tensors in the closures' cells."""
    from benchmarks.differential import check as checking
    from benchmarks.differential.run import program
    bad = [f for f in checking.check(program(0, index), timeout=20.0) if f[0] != "refusal"]
    assert not bad, bad


def test_a_long_range_whose_body_cannot_be_staged_is_refused_at_its_line():
    """Staged, the body's closure would keep a tensor of one iteration: a clear error naming
    the loop's line, never a value."""
    f = ag.function(closures_over_loop_state)
    with pytest.raises((errors.StagingError, ValueError), match=r"for i in range\(n\)"):
        f(np.float64(1.0), 50)
