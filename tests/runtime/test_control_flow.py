"""ag.cond and ag.while_loop: eager behaviour, node structure, dtype/shape rules, errors."""

import numpy as np
import pytest

import autograph as ag
from autograph.errors import StagingError
from autograph.runtime.exec import codegen, interpreter
from autograph.runtime.ir.graph import Graph
from tests.runtime.tracing import MODES, assert_same, run, trace


def run_all(fn, *args):
    """Results of fn traced and run in every mode; asserts the modes agree."""
    graph, _ = trace(fn, *args)
    results = [run(graph, args, mode) for mode in MODES]
    for r in results[1:]:
        assert_same(r, results[0])
    return results[0]


# -- eager -------------------------------------------------------------------------------------

def test_eager_cond_calls_only_the_chosen_branch():
    calls = []
    out = ag.cond(np.int64(3) > 2, lambda: calls.append("t") or "yes",
                  lambda: calls.append("f") or "no")
    assert out == "yes" and calls == ["t"]
    assert ag.cond(False, lambda: 1, lambda: 2) == 2


def test_eager_while_loop_is_a_python_loop():
    seen = []

    def body(i, acc):
        seen.append(i)
        return i + 1, acc + [i]
    i, acc = ag.while_loop(lambda i, acc: i < 4, body, (0, []))
    assert (i, acc, seen) == (4, [0, 1, 2, 3], [0, 1, 2, 3])
    assert ag.while_loop(lambda i: i < 10, lambda i: i + 3, [0]) == [12]
    assert ag.while_loop(lambda i: True, lambda i: i + 1, (0,), maximum_iterations=7) == (7,)


def test_while_loop_switches_to_staged_when_a_variable_becomes_a_tensor():
    """Loop variables that start as Python values and become tensors part-way (the
    compiler's case): the first iterations run in Python, the rest is one while_loop node."""
    calls = []

    def f(x):
        def body(i, y):
            calls.append(type(y).__name__)
            return i + 1, y * x
        return ag.while_loop(lambda i, y: y < 100.0, body, (0, 1.0))

    graph, (i, y) = trace(f, np.float64(3.0))
    assert calls[0] == "float" and calls[1:] == ["Tensor"] * (len(calls) - 1)
    assert sum(n.op == "while_loop" for n in graph.nodes) == 1
    for mode in MODES:
        i, y = run(graph, [np.float64(3.0)], mode)
        assert (int(i), float(y)) == (5, 243.0)
        i, y = run(graph, [np.float64(200.0)], mode)
        assert (int(i), float(y)) == (1, 200.0)      # one eager iteration happened in tracing


# -- cond --------------------------------------------------------------------------------------

def test_cond_is_one_node_with_both_branch_graphs_and_captures_as_inputs():
    def f(x, y):
        z = x * 2.0
        return ag.cond(x > 0, lambda: z + y, lambda: y - 1.0)
    graph, _ = trace(f, np.float64(1.0), np.float64(5.0))
    [node] = [n for n in graph.nodes if n.op == "cond"]
    tg, fg = node.attrs["true_graph"], node.attrs["false_graph"]
    assert isinstance(tg, Graph) and isinstance(fg, Graph)
    captured = node.inputs[1:]
    assert len(captured) == 2 and len(tg.inputs) == len(fg.inputs) == 2
    # both branches take placeholders for every capture, in the node's input order
    assert [t.dtype for t in tg.inputs] == [t.dtype for t in captured]
    for mode in MODES:
        assert run(graph, [np.float64(1.0), np.float64(5.0)], mode)[0] == 7.0
        assert run(graph, [np.float64(-1.0), np.float64(5.0)], mode)[0] == 4.0


def test_cond_weak_python_scalar_adopts_the_other_branch_dtype():
    def f(x):
        return ag.cond(x > 0, lambda: x * 2, lambda: 0)
    graph, out = trace(f, np.float32(3))
    assert out.dtype == np.float32 and not out.weak
    (r,) = run_all(f, np.float32(3))
    assert r.dtype == np.float32 and r == 6
    (r,) = run(graph, [np.float32(-3)], "codegen")
    assert r.dtype == np.float32 and r == 0


def test_cond_both_weak_promotes_like_python():
    def f(x):
        return ag.cond(x > 0, lambda: 1, lambda: 2.5)
    graph, out = trace(f, np.int64(3))
    assert out.dtype == np.float64 and out.weak
    assert run(graph, [np.int64(3)], "codegen")[0] == 1.0
    assert run(graph, [np.int64(-3)], "interpreter")[0] == 2.5


def test_cond_dtype_mismatch_names_the_output_and_both_dtypes():
    def f(x):
        return ag.cond(x > 0, lambda: x.astype(np.int32), lambda: x * 2.0, names=["result"])
    with pytest.raises(StagingError) as e:
        trace(f, np.float64(1.0))
    msg = str(e.value)
    assert "'result'" in msg and "int32" in msg and "float64" in msg


def test_cond_structure_mismatch_is_an_error_describing_both():
    def f(x):
        return ag.cond(x > 0, lambda: (x, x), lambda: x)
    with pytest.raises(StagingError, match=r"\(value, value\).*value"):
        trace(f, np.float64(1.0))


def test_cond_structure_mismatch_names_the_variable_that_differs():
    def f(x):
        return ag.cond(x > 0, lambda: (x, (x, x)), lambda: (x, x), names=["a", "b", "c"])
    with pytest.raises(StagingError, match=r"for 'b'.*\(value, value\).*gives value\."):
        trace(f, np.float64(1.0))


def test_cond_none_in_one_branch_names_the_variable():
    def f(x):
        return ag.cond(x > 0, lambda: x, lambda: None, names=["y"])
    with pytest.raises(StagingError, match="'y' is None in the false branch"):
        trace(f, np.float64(1.0))


def test_cond_equal_python_values_pass_through_and_differing_ones_become_constants():
    def f(x):
        return ag.cond(x > 0, lambda: ("tag", x, 1), lambda: ("tag", -x, 2))
    graph, (tag, y, k) = trace(f, np.float64(3.0))
    assert tag == "tag" and isinstance(y, ag.Tensor) and isinstance(k, ag.Tensor)
    assert [float(v) for v in run(graph, [np.float64(3.0)], "codegen")] == [3.0, 1.0]
    assert [float(v) for v in run(graph, [np.float64(-3.0)], "interpreter")] == [3.0, 2.0]


def test_cond_shapes_join_to_none_dims():
    def f(x):
        return ag.cond(np.sum(x) > 0, lambda: x, lambda: np.concatenate([x, x]))
    graph, out = trace(f, np.ones(3))
    assert out.shape == (None,)
    assert run(graph, [np.ones(3)], "codegen")[0].shape == (3,)
    assert run(graph, [-np.ones(3)], "codegen")[0].shape == (6,)


def test_cond_on_non_scalar_condition_is_a_clear_error():
    with pytest.raises(StagingError, match="np.all"):
        trace(lambda x: ag.cond(x > 0, lambda: x, lambda: -x), np.ones(3))


def test_nested_cond_captures_through_every_level():
    def f(a, b, c):
        return ag.cond(a > 0,
                       lambda: ag.cond(b > 0, lambda: a + b + c, lambda: c * 10.0),
                       lambda: c)
    graph, _ = trace(f, 1.0, 1.0, 1.0)
    for a, b, want in [(1.0, 1.0, 5.0), (1.0, -1.0, 30.0), (-1.0, 1.0, 3.0)]:
        args = [np.float64(a), np.float64(b), np.float64(3.0)]
        for mode in MODES:
            assert run(graph, args, mode)[0] == want


# -- while_loop ---------------------------------------------------------------------------------

def test_while_loop_python_scalar_var_becomes_weak_and_adopts_body_dtype():
    def f(x):
        return ag.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s + x), (0, 0))
    graph, (i, s) = trace(f, np.float32(1.5))
    assert i.dtype == np.int64 and i.weak
    assert s.dtype == np.float32 and not s.weak     # 0 adopted x's float32
    i, s = run_all(f, np.float32(1.5))
    assert int(i) == 3 and s.dtype == np.float32 and s == 4.5


def test_while_loop_real_dtype_change_is_an_error_naming_the_variable():
    def f(x):
        return ag.while_loop(lambda v: v < 10, lambda v: v * 1.5, (x,), names=["total"])
    with pytest.raises(StagingError) as e:
        trace(f, np.int64(1))
    msg = str(e.value)
    assert "'total'" in msg and "int64" in msg and "float64" in msg


def test_while_loop_relaxes_a_changing_shape_instead_of_failing():
    def f(x):
        return ag.while_loop(lambda v: np.sum(v) < 100, lambda v: np.concatenate([v, v]), (x,))
    graph, (v,) = trace(f, np.ones((2,)))
    assert v.shape == (None,)
    for mode in MODES:
        assert run(graph, [np.ones((2,))], mode)[0].shape == (128,)


def test_while_loop_shape_invariants_give_the_relaxed_shape_up_front():
    traces = []

    def f(x):
        def body(v, i):
            traces.append(v.shape)
            return np.concatenate([v, v]), i + 1
        return ag.while_loop(lambda v, i: i < 3, body, (x, 0),
                             shape_invariants=[(None, 2), None])
    graph, (v, _) = trace(f, np.ones((1, 2)))
    assert v.shape == (None, 2) and traces == [(None, 2)]      # no retrace needed
    assert run(graph, [np.ones((1, 2))], "codegen")[0].shape == (8, 2)
    with pytest.raises(StagingError, match=r"shape invariant \(None, 3\)"):
        trace(lambda x: ag.while_loop(lambda v: np.sum(v) < 9, lambda v: v * 2, (x,),
                                      shape_invariants=[(None, 3)]), np.ones((1, 2)))


def test_while_loop_body_returning_wrong_arity_is_an_error():
    with pytest.raises(StagingError, match="2 loop variables"):
        trace(lambda x: ag.while_loop(lambda a, b: a < 3, lambda a, b: (a + 1, b, b), (x, x)),
              np.int64(0))


def test_while_loop_non_numeric_var_changing_is_an_error():
    def f(x):
        return ag.while_loop(lambda i, tag: i < 3, lambda i, tag: (i + 1, tag + "!"),
                             (x, "a"), names=["i", "tag"])
    with pytest.raises(StagingError, match="'tag' is 'a'"):
        trace(f, np.int64(0))


def test_while_loop_maximum_iterations_python_and_tensor():
    def f(x, n):
        a = ag.while_loop(lambda i: i >= 0, lambda i: i + 1, (x,), maximum_iterations=4)
        b = ag.while_loop(lambda i: i >= 0, lambda i: i + 1, (x,), maximum_iterations=n)
        return a[0], b[0]
    graph, _ = trace(f, np.int64(10), np.int64(6))
    for mode in MODES:
        a, b = run(graph, [np.int64(10), np.int64(6)], mode)
        assert (int(a), int(b)) == (14, 16)
        a, b = run(graph, [np.int64(-5), np.int64(0)], mode)
        assert (int(a), int(b)) == (-5, -5)        # the condition fails at once


def test_while_loop_with_nested_structures_and_captures():
    def f(x, scale):
        state = {"i": 0, "acc": (x, np.zeros(2))}

        def body(s):
            a, b = s["acc"]
            return {"i": s["i"] + 1, "acc": (a * scale, b + a)}
        (out,) = ag.while_loop(lambda s: s["i"] < 3, body, [state])
        return out
    graph, out = trace(f, np.ones(2), np.float64(2.0))
    assert set(out) == {"i", "acc"}
    flat = run(graph, [np.ones(2), np.float64(2.0)], "codegen")
    want = f(np.ones(2), np.float64(2.0))      # eager
    assert_same(flat, [want["acc"][0], want["acc"][1], want["i"]])


def test_loop_graph_size_does_not_depend_on_trip_count():
    def f(n):
        return ag.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), (0, 0))[1]
    graph, _ = trace(f, np.int64(3))
    size = len(graph.nodes)
    fn = codegen.compile_graph(graph)
    for n in (0, 3, 1000):
        assert int(fn(np.int64(n))[0]) == sum(range(n))
        assert int(interpreter.run(graph, [np.int64(n)])[0]) == sum(range(n))
    assert len(graph.nodes) == size


def test_while_loop_codegen_source_has_one_while():
    def f(x):
        return ag.while_loop(lambda x: x < 1000.0, lambda x: x * 2.0, (x,))[0]
    graph, _ = trace(f, np.float64(3.0))
    src = codegen.compile_graph(graph).__source__
    # a condition of one node is the while test itself; no break, no kernel calls
    assert src.count("while ") == 1 and "break" not in src and "k_" not in src
    assert codegen.compile_graph(graph)(np.float64(3.0))[0] == 1536.0


def test_counter_loop_codegen_source_is_a_for_loop():
    def f(n):
        return ag.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + i), (0, 0))[1]
    graph, _ = trace(f, np.int64(3))
    src = codegen.compile_graph(graph).__source__
    assert "while" not in src and src.count("for ") == 1 and "counter_values(" in src
    assert int(codegen.compile_graph(graph)(np.int64(10))[0]) == 45
