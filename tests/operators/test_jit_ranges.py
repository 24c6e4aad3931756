"""Tracing for `jit_compile=True` stages a Python range longer than
STAGE_RANGES_LONGER_THAN as one while_loop (issue 30, goal 6: Numba compiled every copy
of an unrolled body); a body that cannot take a tensor item unrolls as before, and
codegen (`jit_compile` off) keeps unrolling. Graphs are compared with plain Python and
the interpreter; only one test compiles native code."""

import numpy as np
import pytest

import autograph as ag
from autograph.operators.control_flow import STAGE_RANGES_LONGER_THAN
from autograph.runtime.exec import interpreter


def mandelbrot(c):
    z = np.zeros_like(c)
    count = np.zeros(c.shape, np.int64)
    for i in range(30):
        z = np.where(np.abs(z) <= 2.0, z * z + c, z)
        count = count + (np.abs(z) <= 2.0)
    return count


def uses_item(x):
    s = x * 0.0
    for i in range(20):
        s = s + x[i % 3] * i
    return s


def short(x):
    for i in range(STAGE_RANGES_LONGER_THAN):
        x = x * 0.5 + i
    return x


WEIGHTS = [0.5 * k for k in range(12)]


def python_list_item(x):       # the item indexes a Python list: cannot be a tensor
    for i in range(12):
        x = x + WEIGHTS[i]
    return x


C = np.linspace(-2, 1, 6)[None, :] + 1j * np.linspace(-1.5, 1.5, 5)[:, None]
X = np.array([1.0, 2.0, 3.0])


def _graph(f, x, jit):
    return ag.function(f, jit_compile=jit).get_concrete_function(x)._graph_to_run()


def _loops(graph):
    return sum(nd.op == "while_loop" for nd in graph.walk())


@pytest.mark.parametrize("f,x", [(mandelbrot, C), (uses_item, X)],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_long_ranges_are_one_loop_for_native_code(f, x):
    staged, unrolled = _graph(f, x, True), _graph(f, x, False)
    assert _loops(staged) == 1 and _loops(unrolled) == 0
    assert len(staged.nodes) < 20 < len(unrolled.nodes)
    for graph in (staged, unrolled):
        np.testing.assert_allclose(interpreter.run(graph, [x])[0], f(x), rtol=1e-12)


@pytest.mark.parametrize("f", [short, python_list_item], ids=lambda f: f.__name__)
def test_short_ranges_and_python_items_unroll(f):
    graph = _graph(f, X, True)
    assert _loops(graph) == 0
    np.testing.assert_allclose(interpreter.run(graph, [X])[0], f(X), rtol=1e-12)


def test_native_code_of_a_staged_range_matches_python(tmp_path, monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(tmp_path))
    np.testing.assert_allclose(ag.function(uses_item, jit_compile=True)(X), uses_item(X),
                               rtol=1e-12)
