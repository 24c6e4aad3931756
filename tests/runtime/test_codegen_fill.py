"""Codegen's TensorArray fill (a counter loop writing element i of a fixed-size array, then
one `stack`, becomes `buffer[i] = value` into a preallocated array) and its index-only
counters (Python ints from `range`) compute what the reference interpreter and eager NumPy
compute; every loop that does not fit the pattern keeps the TensorArray kernels and gives
the same results and the same errors as before."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import codegen, interpreter, optimize
from autograph.runtime.ir.graph import Graph
from autograph.runtime.ir import nest
from autograph.runtime.ir.tensor import Tensor

N = 40      # long enough to be a counter loop (codegen keeps loops under 32 steps as while)


def trace(fn, *args, shapes=None):
    """A graph of `fn` on placeholders like `args` (`shapes` overrides their static shapes)."""
    g = Graph(getattr(fn, "__name__", "f"))
    with g.as_default():
        phs = [g.placeholder(f"arg{i}", np.asarray(a).dtype,
                             np.shape(a) if shapes is None else shapes[i])
               for i, a in enumerate(args)]
        g.set_outputs([t for t in nest.flatten(fn(*phs)) if isinstance(t, Tensor)])
    return g


def outcome(run):
    """('ok', flat results) or (exception type, message) of `run()`."""
    try:
        return "ok", [np.asarray(v) for v in run()]
    except Exception as e:      # noqa: BLE001 - the error itself is what is compared
        return type(e), str(e)


def same_outcome(a, b, message=True):
    assert a[0] == b[0], (a, b)
    if a[0] != "ok":
        assert a[1] == b[1] or not message
        return
    assert len(a[1]) == len(b[1])
    for x, y in zip(a[1], b[1]):
        assert x.dtype == y.dtype, (x.dtype, y.dtype)
        np.testing.assert_array_equal(x, y)


def check(fn, *args, eager=None, shapes=None, device=None):
    """Codegen (plain and optimised graph) against the interpreter and, when given, eager
    NumPy; returns the codegen sources."""
    graph = trace(fn, *args, shapes=shapes)
    dev_args = args
    if device is not None:
        from autograph.runtime.devices import get_device
        dev = get_device(device)
        dev_args = [dev.to_device(np.asarray(a)) for a in args]
    want = outcome(lambda: [np.asarray(v) for v in _host(
        interpreter.run(graph, dev_args, device, check=True), device)])
    if eager is not None:
        same_outcome(outcome(lambda: eager(*args)), want, message=False)
    sources = []
    for g in (graph, optimize.optimize(graph)):
        compiled = codegen.compile_graph(g, device)
        sources.append(compiled.__source__)
        same_outcome(outcome(lambda: _host(compiled(*dev_args), device)), want)
    return sources


def _host(values, device):
    if device is None:
        return list(values)
    from autograph.runtime.devices import get_device
    return [get_device(device).to_host(v) for v in values]


def fill(n=N, size=None, index=lambda i: i, extra=None, dynamic=False, value=None,
         start=0, read=False, stacks=1, dtype=np.float64):
    """`ta = TensorArray(size)`; `for i in range(start, n): ta = ta.write(index(i), v)`;
    stacked `stacks` times. `extra(state)` adds an early-exit test."""
    def f(x):
        ta = ag.TensorArray(dtype, size=n if size is None else size, dynamic_size=dynamic)

        def body(i, s, ta):
            s = s * 0.5 + x[i] if value is None else value(i, s, x)
            ta = ta.write(index(i), s)
            if read:
                s = s + ta.read(index(i))
            return i + 1, s, ta

        def test(i, s, ta):
            return (i < n) if extra is None else np.logical_and(i < n, extra(s))
        _, s, ta = ag.while_loop(test, body, (start, np.zeros_like(x[0]), ta))
        return tuple(ta.stack() for _ in range(stacks)) + (s,)
    return f


def fill_eager(x, n=N, start=0, index=lambda i: i, size=None, read=False):
    out = [None] * (n if size is None else size)
    s = np.zeros_like(x[0])
    for i in range(start, n):
        s = s * 0.5 + x[i]
        out[index(i)] = s
        if read:
            s = s + s
    if any(v is None for v in out):
        raise ValueError("not every element written")
    return np.stack(out), s


X = np.arange(3.0 * (N + 5)).reshape(N + 5, 3) / N


# -- the lowered fill -------------------------------------------------------------------------

@pytest.mark.parametrize("x", [X, X.astype(np.float32), np.arange(N + 5.0)])
def test_a_full_fill_is_a_buffer_written_in_place(x):
    sources = check(fill(dtype=x.dtype), x, eager=lambda x: fill_eager(x))
    for src in sources:
        assert "xp.empty(" in src and "] = " in src
        assert "k_ta_write" not in src and "k_ta_stack" not in src and "k_ta_new" not in src
        assert "range(" in src and "counter_values(" not in src   # i is only an index


def test_the_guides_rnn_is_lowered_and_matches_eager():
    from tests.runtime.samples import dynamic_rnn, dynamic_rnn_ref
    data = np.random.default_rng(0).uniform(size=(3, N, 4)).astype(np.float32)
    h0 = np.zeros((3, 4), np.float32)
    sources = check(dynamic_rnn, data, h0, eager=lambda d, h: dynamic_rnn_ref(d, h)[:1])
    assert all("xp.empty((40, 3, 4)" in s and "k_ta_" not in s for s in sources)


def test_a_cast_value_and_an_int_array_are_lowered():
    sources = check(fill(dtype=np.float32), X)      # float64 values, cast to float32
    assert all("k_ta_write" not in s for s in sources)
    sources = check(fill(dtype=np.int64, value=lambda i, s, x: s + i), np.arange(N + 5))
    assert all("k_ta_write" not in s for s in sources)


def test_each_run_gets_its_own_buffer():
    graph = trace(fill(), X)
    compiled = codegen.compile_graph(graph)
    first = compiled(X)[0]
    kept = first.copy()
    second = compiled(X + 1.0)[0]
    assert first is not second
    np.testing.assert_array_equal(first, kept)
    np.testing.assert_array_equal(second, fill_eager(X + 1.0)[0])


# -- everything else keeps the kernels, with the same results and errors -----------------------

FALLBACKS = {
    "dynamic size": dict(dynamic=True, size=0),
    "size larger than the loop (partial fill)": dict(size=N + 3),
    "loop longer than the size": dict(n=N + 2, size=N),
    "loop starting at 1": dict(start=1),
    "write index not the counter": dict(index=lambda i: N - 1 - i),
    "a read inside the loop": dict(read=True),
    "a second stack": dict(stacks=2),
    "an early exit that stops": dict(extra=lambda s: np.all(s < 20.0)),
    "an early exit that never stops": dict(extra=lambda s: np.all(s < 1e9)),
    "a short loop": dict(n=5),
}


@pytest.mark.parametrize("case", sorted(FALLBACKS))
def test_fallbacks_keep_the_kernels_and_agree(case):
    sources = check(fill(**FALLBACKS[case]), X)
    if case == "a second stack":    # the optimiser merges the two stacks: then it is lowered
        sources = sources[:1]
    assert all("k_ta_write" in s and "xp.empty(" not in s for s in sources), sources[0]


def test_fallback_results_match_eager():
    check(fill(index=lambda i: N - 1 - i), X,
          eager=lambda x: fill_eager(x, index=lambda i: N - 1 - i))
    check(fill(size=N + 3), X, eager=lambda x: fill_eager(x, size=N + 3))   # both raise
    check(fill(start=1), X, eager=lambda x: fill_eager(x, start=1))         # both raise


def test_a_size_known_only_at_run_time_keeps_the_kernels():
    def f(x, n):
        ta = ag.TensorArray(np.float64, size=n)
        _, ta = ag.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, x[i])),
                              (0, ta))
        return ta.stack()
    sources = check(f, np.arange(50.0), np.int64(N), eager=lambda x, n: (x[:n],))
    assert all("k_ta_write" in s for s in sources)


def test_unknown_value_shapes_keep_the_kernels():
    for shapes in ([None], [(N + 5, None)]):
        sources = check(fill(), X, shapes=shapes)
        assert all("k_ta_write" in s and "xp.empty(" not in s for s in sources)


def test_the_handle_as_a_graph_output_keeps_the_kernels():
    def f(x):
        ta = ag.TensorArray(np.float64, size=N)
        _, ta = ag.while_loop(lambda i, ta: i < N,
                              lambda i, ta: (i + 1, ta.write(i, x[i])), (0, ta))
        return ta.stack(), ta.size()
    sources = check(f, X)
    assert all("k_ta_write" in s for s in sources)


def test_the_strict_device_keeps_the_kernels():
    pytest.importorskip("array_api_strict")
    sources = check(fill(), X, device="strict")
    assert all("k_ta_write" in s and "counter_values(" in s for s in sources)


def test_the_torch_device_keeps_the_kernels():
    pytest.importorskip("torch")
    sources = check(fill(), X, device="torch")
    assert all("k_ta_write" in s for s in sources)


# -- counters used only as indices iterate Python ints -----------------------------------------

def indexed(start, limit, step, op):
    """sum of x[i] over a counter loop `i op limit`, the counter read only as an index."""
    def f(x):
        tests = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
                 ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
        _, s = ag.while_loop(lambda i, s: tests[op](i, limit),
                             lambda i, s: (i + step, s + x[i]), (start, x[0] * 0))
        return (s,)
    return f


def indexed_eager(x, start, limit, step, op):
    stop = limit + {"<": 0, "<=": 1, ">": 0, ">=": -1}[op]
    s = x[0] * 0
    for i in range(start, stop, step):
        s = s + x[i]
    return (s,)


@pytest.mark.parametrize("start, limit, step, op", [
    (0, 40, 1, "<"), (0, 39, 1, "<="), (39, -1, -1, ">"), (39, 0, -1, ">="),
    (-40, 0, 1, "<"), (0, 120, 3, "<"), (-1, -81, -2, ">=")])
def test_index_only_counters_are_python_ranges(start, limit, step, op):
    x = np.arange(240.0).reshape(120, 2)
    sources = check(indexed(start, limit, step, op), x,
                    eager=lambda x: indexed_eager(x, start, limit, step, op))
    assert all("in range(" in s and "counter_values(" not in s for s in sources)


def test_an_index_out_of_range_raises_the_same_error():
    sources = check(indexed(0, 41, 1, "<"), np.arange(80.0).reshape(40, 2))
    assert all("in range(" in s for s in sources)


def test_a_counter_read_as_a_value_keeps_numpy_integers():
    def f(x):
        _, s = ag.while_loop(lambda i, s: i < N, lambda i, s: (i + 1, s + x[i] * i), (0, x[0]))
        return (s,)
    sources = check(f, np.arange(float(N)), eager=lambda x: (
        x[0] + sum(x[i] * i for i in range(N)),))
    assert all("counter_values(" in s for s in sources)


def test_a_counter_used_after_the_loop_keeps_its_dtype():
    def f(x):
        i, s = ag.while_loop(lambda i, s: i < np.int32(N), lambda i, s: (i + np.int32(1),
                             s + x[i]), (np.int32(0), x[0] * 0))
        return i, s
    sources = check(f, np.arange(float(N)), eager=lambda x: (np.int32(N), x.sum()))
    assert all("in range(" in s and "counter_end" in s for s in sources)


def test_a_counter_read_by_a_ta_read_index_is_a_python_range():
    def f(x):
        ta = ag.TensorArray(np.float64, size=N).unstack(x)
        _, s = ag.while_loop(lambda i, s: i < N, lambda i, s: (i + 1, s + ta.read(i)),
                             (0, x[0] * 0))
        return (s,)
    sources = check(f, np.arange(float(N)), eager=lambda x: (x.sum(),))
    assert all("in range(" in s and "k_ta_read" in s for s in sources)


def test_a_fill_inside_a_loop_body_gets_a_fresh_buffer_each_iteration():
    def f(x):
        def outer(j, total):
            ta = ag.TensorArray(np.float64, size=N)
            _, ta = ag.while_loop(lambda i, ta: i < N,
                                  lambda i, ta: (i + 1, ta.write(i, x[i] * j)), (0, ta))
            return j + 1, total + ta.stack()
        return ag.while_loop(lambda j, t: j < 3, outer, (0, np.zeros_like(x[:N])))[1]
    sources = check(f, X, eager=lambda x: (x[:N] * 3,))
    assert all("xp.empty(" in s and "k_ta_" not in s for s in sources)


def test_a_fill_inside_a_branch():
    def f(x, flag):
        def filled():
            ta = ag.TensorArray(np.float64, size=N)
            _, ta = ag.while_loop(lambda i, ta: i < N,
                                  lambda i, ta: (i + 1, ta.write(i, x[i] + 1.0)), (0, ta))
            return ta.stack()
        return ag.cond(flag, filled, lambda: x[:N])
    for flag in (True, False):
        sources = check(f, X, np.bool_(flag),
                        eager=lambda x, flag: (x[:N] + 1.0 if flag else x[:N],))
        assert all("xp.empty(" in s for s in sources)


def test_a_node_named_range_does_not_hide_the_builtin():
    def f(x):
        r = ag.range(N)                 # a graph node whose name is "range"
        _, s = ag.while_loop(lambda i, s: i < N,
                             lambda i, s: (i + 1, s + x[i] + r[i]), (0, x[0] * 0))
        return (s,)
    x = np.arange(float(N))
    sources = check(f, x, eager=lambda x: (x.sum() + np.arange(N).sum(),))
    assert all("in range(" in s and "range = " not in s for s in sources)
