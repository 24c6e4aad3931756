"""State and I/O: TensorArray, Variable, ag.print, ag.range, ag.constant; eager and in graphs."""

import gc

import numpy as np
import pytest

import autograph as ag
from autograph.errors import StagingError
from autograph.runtime.exec import codegen, interpreter, optimize
from autograph.runtime import variables
from autograph.runtime.variables import DeletedVariableError
from tests.runtime.tracing import MODES, assert_same, capture_stdout, run, trace


# -- TensorArray ---------------------------------------------------------------------------------

def squares(n):
    ta = ag.TensorArray(np.float64, size=0, dynamic_size=True)
    i, ta = ag.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, i * 1.5)),
                          (0, ta))
    return ta.stack(), ta.size(), ta.read(1)


def test_tensor_array_eager_is_a_list_of_arrays():
    stacked, size, second = squares(4)
    assert_same([stacked, size, second], [np.arange(4) * 1.5, np.int64(4), np.float64(1.5)])
    ta = ag.TensorArray(np.int32, size=2)
    assert ta.write(0, 7) is ta                  # eager writes update in place and chain
    with pytest.raises(IndexError, match="dynamic_size=True"):
        ta.write(2, 1)
    with pytest.raises(ValueError, match="never written"):
        ta.stack()


def test_tensor_array_as_loop_variable_in_every_mode():
    graph, (stacked, size, _) = trace(squares, np.int64(4))
    assert stacked.shape == (None,) and stacked.dtype == np.float64
    for mode in MODES:
        for n in (2, 5):
            got = run(graph, [np.int64(n)], mode)
            assert_same(got, [np.arange(n) * 1.5, np.int64(n), np.float64(1.5)])


def test_tensor_array_fixed_size_overflow_is_a_run_time_error():
    def f(n):
        ta = ag.TensorArray(np.float64, size=2)
        _, ta = ag.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, 1.0)),
                              (0, ta))
        return ta.stack()
    graph, out = trace(f, np.int64(2))
    assert out.shape == (2,)
    np.testing.assert_array_equal(run(graph, [np.int64(2)], "codegen")[0], [1.0, 1.0])
    with pytest.raises(IndexError, match="out of range"):
        run(graph, [np.int64(3)], "codegen")


def test_tensor_array_is_fresh_on_every_run():
    graph, _ = trace(squares, np.int64(3))
    fn = codegen.compile_graph(graph)
    a = fn(np.int64(3))[0]
    b = fn(np.int64(3))[0]
    np.testing.assert_array_equal(a, b)          # no elements left over from the first run


def test_tensor_array_across_cond_branches_and_unstack():
    def f(x, flag):
        ta = ag.TensorArray(np.float64, size=3).unstack(x)
        ta = ag.cond(flag > 0, lambda: ta.write(0, 100.0), lambda: ta)
        return ta.stack(), ta.read(2)
    x = np.array([1.0, 2.0, 3.0])
    for mode in MODES:
        graph, _ = trace(f, x, np.int64(1))
        assert_same(run(graph, [x, np.int64(1)], mode), [np.array([100.0, 2, 3]), np.float64(3)])
        assert_same(run(graph, [x, np.int64(0)], mode), [x, np.float64(3)])
    assert_same(list(f(x, 1)), [np.array([100.0, 2, 3]), np.float64(3)])   # eager


def test_tensor_array_gather_and_concat():
    def f(x, idx):
        ta = ag.TensorArray(np.float64, size=3)
        for i in range(3):                           # Python loop: unrolled while tracing
            ta = ta.write(i, x * (i + 1))
        return ta.gather(idx), ta.concat()
    x, idx = np.array([1.0, 2.0]), np.array([2, 0])
    want = [np.array([[3.0, 6.0], [1.0, 2.0]]), np.array([1.0, 2, 2, 4, 3, 6])]
    assert_same(list(f(x, idx)), want)               # eager
    graph, (gathered, joined) = trace(f, x, idx)
    assert gathered.shape == (2, 2) and joined.shape == (None,)
    for mode in MODES:
        assert_same(run(graph, [x, idx], mode), want)


def test_tensor_array_returned_from_a_graph_packs_into_an_eager_one():
    from autograph.runtime.ir import nest
    def f(n):
        ta = ag.TensorArray(np.float64, 0, dynamic_size=True)
        return ag.while_loop(lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, i * 1.5)),
                             (0, ta))[1]
    graph, out = trace(f, np.int64(3))
    flat = codegen.compile_graph(graph)(np.int64(3))
    ta = nest.pack_sequence_as(out, list(flat))
    assert isinstance(ta, ag.TensorArray) and ta.handle is None
    np.testing.assert_array_equal(ta.stack(), [0.0, 1.5, 3.0])


def test_tensor_array_rejects_a_real_dtype_mismatch_and_a_static_index_past_its_size():
    def f(x):
        return ag.TensorArray(np.int32, size=1).write(0, x).stack()
    with pytest.raises(StagingError, match="int32.*float64"):
        trace(f, np.float64(1.0))
    with pytest.raises(StagingError, match="int32.*float64"):
        f(np.float64(1.0))                               # eager: the same rule
    assert f(np.int64(3)).dtype == np.int32              # same kind: converted
    with pytest.raises(IndexError, match="out of range for its size 2"):
        trace(lambda x: ag.TensorArray(np.float64, size=2).write(2, x).stack(),
              np.float64(1.0))


def test_tensor_array_writes_store_in_place_so_cost_is_linear():
    """Each write stores one element into the run-time list and hands the same storage on:
    nothing is copied, so n writes cost O(n) (a functional copy per write would be O(n^2))."""
    from autograph.runtime import tensor_array
    copies = []

    class CountingList(list):
        def __init__(self, *args):
            copies.append(len(args[0]) if args else 0)
            super().__init__(*args)

    storage = tensor_array._new_kernel(np, np.int64(0), dynamic_size=True)
    storage._items = CountingList()
    copies.clear()
    h = storage
    for i in range(1000):
        h = tensor_array._write_kernel(np, h, np.int64(i), np.float64(i))
        assert h is storage
    assert copies == [] and len(storage.items) == 1000
    stacked = tensor_array._stack_kernel(np, h, dtype=np.float64, element_shape=())
    np.testing.assert_array_equal(stacked, np.arange(1000.0))



def test_fixed_size_tensor_array_fills_one_buffer_and_stack_shares_it_safely():
    """A fixed-size array writes into one preallocated array (stack returns it, no copy);
    values stay immutable: a read is a copy, a write after stack copies the buffer first,
    and elements of another shape fall back to a list."""
    from autograph.runtime import tensor_array as tam
    h = tam._new_kernel(np, np.int64(3), dynamic_size=False)
    rows = [np.full(2, float(k)) for k in range(3)]
    for k in (2, 0, 1):
        h = tam._write_kernel(np, h, np.int64(k), rows[k])
    assert h.buffer is not None
    first = tam._read_kernel(np, h, np.int64(0))
    stacked = tam._stack_kernel(np, h, dtype=np.float64, element_shape=(2,))
    assert stacked is h.buffer                        # no copy
    np.testing.assert_array_equal(stacked, np.stack(rows))
    h = tam._write_kernel(np, h, np.int64(0), np.full(2, 9.0))
    np.testing.assert_array_equal(stacked, np.stack(rows))     # the result did not change
    np.testing.assert_array_equal(first, rows[0])
    np.testing.assert_array_equal(tam._read_kernel(np, h, np.int64(0)), [9.0, 9.0])
    h = tam._write_kernel(np, h, np.int64(1), np.zeros(5))     # another shape: a list now
    assert h.buffer is None and h.items[1].shape == (5,)
    np.testing.assert_array_equal(h.items[0], [9.0, 9.0])
    np.testing.assert_array_equal(h.items[2], rows[2])
    empty = tam._new_kernel(np, np.int64(2), dynamic_size=False)
    empty = tam._write_kernel(np, empty, np.int64(1), rows[1])
    with pytest.raises(ValueError, match=r"element\(s\) \[0\] of 2 were never written"):
        tam._stack_kernel(np, empty, dtype=np.float64, element_shape=(2,))
    with pytest.raises(ValueError, match="element 0 was read before it was written"):
        tam._read_kernel(np, empty, np.int64(0))
    for bad in (2, -1):      # the fast path refuses these too, with the general message
        with pytest.raises(IndexError, match=f"index {bad} is out of range for its size 2"):
            tam._write_kernel(np, empty, np.int64(bad), rows[0])
    np.testing.assert_array_equal(empty.buffer[1], rows[1])


def test_tensor_array_in_a_graph_read_after_overwrite_and_stack_twice():
    def f(x):
        ta = ag.TensorArray(np.float64, size=2)
        ta = ta.write(0, x).write(1, x * 2.0)
        before = ta.stack()
        old = ta.read(0)
        ta = ta.write(0, x * 10.0)
        return before, old, ta.stack(), ta.read(0)
    x = np.arange(3.0)
    want = f(x)
    graph, _ = trace(f, x)
    for mode in MODES:
        got = run(graph, [x], mode)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(want[0], [x, 2 * x])
    np.testing.assert_array_equal(want[2], [10 * x, 2 * x])

# -- Variable -------------------------------------------------------------------------------------

def test_variable_eager_read_assign_and_numpy_protocols():
    v = ag.Variable(3.0, name="v")
    assert v.dtype == np.float64 and v.shape == ()
    assert float(v + 1) == 4.0 and float(2 * v) == 6.0 and float(np.tanh(v)) == np.tanh(3.0)
    v.assign_add(2)
    assert float(v.numpy()) == 5.0 and float(v.value) == 5.0
    v.assign_sub(1.5)
    assert float(v.read_value()) == 3.5
    w = ag.Variable(np.arange(3), name="w")
    assert int(np.sum(w)) == 3 and int(w[2]) == 2
    with pytest.raises(StagingError, match="dtype float64 to Variable 'w'"):
        w.assign(np.ones(3))
    with pytest.raises(StagingError, match="shape"):
        w.assign(np.arange(4))


def test_variable_in_a_graph_is_read_at_run_time_and_assigned_in_order():
    v = ag.Variable(np.float64(1.0), name="counter")

    def f(x):
        before = v + 0.0                          # a read
        v.assign_add(x)                           # read + assign
        after = v.read_value()
        ag.print("v:", v)
        return before, after
    graph, _ = trace(f, np.float64(2.0))
    assert [r() for r in graph.variables] == [v]
    for mode in MODES:
        v.assign(1.0)
        g = graph if not mode.startswith("optimized") else optimize.optimize(graph)
        base = mode.replace("optimized_", "")
        fn = (lambda *a: interpreter.run(g, a)) if base == "interpreter" else \
            codegen.compile_graph(g)
        (before, after), printed = capture_stdout(fn, np.float64(2.0))
        assert (float(before), float(after), printed) == (1.0, 3.0, "v: 3.0\n")
        (before, after), printed = capture_stdout(fn, np.float64(2.0))
        assert (float(before), float(after), printed) == (3.0, 5.0, "v: 5.0\n")
        assert float(v.numpy()) == 5.0


def test_variable_assigned_in_a_loop():
    total = ag.Variable(0, name="total")

    def f(n):
        def body(i):
            total.assign_add(i)
            return i + 1
        ag.while_loop(lambda i: i < n, body, (0,))
        return total.read_value()
    graph, _ = trace(f, np.int64(4))
    for mode in MODES:
        total.assign(0)
        assert int(run(graph, [np.int64(4)], mode)[0]) == 6
    total.assign(0)
    assert int(f(4)) == 6                         # eager


def test_loop_with_no_loop_variables_driven_by_a_variable():
    v = ag.Variable(0, name="v")

    def f(x):
        ag.while_loop(lambda: v < x, lambda: (v.assign_add(1), ())[1], ())
        return v.read_value()
    graph, _ = trace(f, np.int64(5))
    [loop] = [n for n in graph.nodes if n.op == "while_loop"]
    assert not loop.outputs
    for mode in MODES:
        v.assign(0)
        assert int(run(graph, [np.int64(5)], mode)[0]) == 5
    v.assign(0)
    assert int(f(np.int64(3))) == 3                  # eager


def test_variable_assigned_in_one_branch_of_a_cond():
    v = ag.Variable(10, name="v")

    def f(x):
        ag.cond(x > 0, lambda: v.assign(x), lambda: v.assign_sub(1))
        return v * 2
    graph, _ = trace(f, np.int64(3))
    [node] = [n for n in graph.nodes if n.op == "cond"]
    assert not node.outputs and "assign_variable" in [
        n.op for n in node.attrs["true_graph"].nodes]
    for mode in MODES:
        v.assign(10)
        assert int(run(graph, [np.int64(3)], mode)[0]) == 6
        assert int(run(graph, [np.int64(-3)], mode)[0]) == 4      # 3 - 1, doubled
    v.assign(10)
    assert int(f(np.int64(-1))) == 18                              # eager


def test_variables_as_branch_results_and_loop_values_are_read():
    a, b = ag.Variable(1.0, name="a"), ag.Variable(2.0, name="b")

    def f(x):
        chosen = ag.cond(x > 0, lambda: a, lambda: b)
        _, last = ag.while_loop(lambda i, v: i < 2, lambda i, v: (i + 1, b), (0, x))
        return chosen, last
    graph, _ = trace(f, np.float64(1.0))
    for mode in MODES:
        b.assign(2.0)
        assert [float(v) for v in run(graph, [np.float64(1.0)], mode)] == [1.0, 2.0]
        b.assign(5.0)                                # read when the graph runs
        assert [float(v) for v in run(graph, [np.float64(-1.0)], mode)] == [5.0, 5.0]


def test_graph_holds_variables_weakly_and_reports_a_deleted_one():
    v = ag.Variable(2.0, name="scale")
    graph, _ = trace(lambda x: x * v, np.float64(3.0))
    fn = codegen.compile_graph(graph)
    assert float(fn(np.float64(3.0))[0]) == 6.0
    del v
    gc.collect()
    for call in (fn, lambda x: interpreter.run(graph, [x])):
        with pytest.raises(DeletedVariableError, match="'scale'.*'<lambda>'.*Keep a reference"):
            call(np.float64(3.0))


def test_record_creations_and_symbolic_initial_value():
    with variables.record_creations() as made:
        a = ag.Variable(1)
        with variables.record_creations() as inner:
            b = ag.Variable(2)
    assert made == [a, b] and inner == [b]
    with pytest.raises(StagingError, match="concrete value"):
        trace(lambda x: ag.Variable(x), np.float64(1.0))


# -- print, range, constant -------------------------------------------------------------------------

def test_print_formats_like_tf_print_eager_and_staged():
    def f(x, n):
        ag.print("Executed with", x, n, 2.5)
        return x
    want = "Executed with [1 2 3] 5 2.5\n"
    _, printed = capture_stdout(f, np.array([1, 2, 3]), np.int64(5))
    assert printed == want
    (graph, _), printed = capture_stdout(trace, f, np.array([1, 2, 3]), np.int64(5))
    assert printed == ""
    for mode in MODES:
        _, printed = capture_stdout(run, graph, [np.array([1, 2, 3]), np.int64(5)], mode)
        assert printed == want


def test_print_of_structures_holding_tensors():
    def f(x, y):
        ag.print("pair:", [x, y], {"a": x, "b": "s"}, (y,))
        return x
    args = (np.int64(1), np.arange(2))
    want = "pair: [1, [0 1]] {'a': 1, 'b': 's'} ([0 1],)\n"
    assert capture_stdout(f, *args)[1] == want
    graph, _ = trace(f, *args)
    for mode in MODES:
        assert capture_stdout(run, graph, args, mode)[1] == want


def test_print_is_never_optimized_away_and_keeps_sep_end():
    def f(x):
        ag.print(x, x, sep="|", end="!\n")
        ag.print("second")
        return x + 0
    graph, _ = trace(f, np.int64(1))
    g = optimize.optimize(graph)
    assert [n.op for n in g.nodes].count("print") == 2
    _, printed = capture_stdout(codegen.compile_graph(g), np.int64(7))
    assert printed == "7|7!\nsecond\n"


def test_range_eager_and_symbolic():
    assert ag.range(5) == range(5) and ag.range(2, 8, 3) == range(2, 8, 3)
    np.testing.assert_array_equal(ag.range(0.0, 1.0, 0.25), np.arange(0.0, 1.0, 0.25))

    assert_same(ag.range(3, dtype=np.float32), np.arange(3, dtype=np.float32))

    def f(n):
        return ag.range(n), ag.range(1, 4), ag.range(0.0, n, 0.5), ag.range(n, dtype=np.int32)
    graph, (a, b, c, d) = trace(f, np.int64(3))
    assert a.node.op == "range" and len(a.node.inputs) == 3
    assert (a.dtype, a.shape) == (np.int64, (None,))
    assert b.shape == (3,) and c.dtype == np.float64 and d.dtype == np.int32
    for mode in MODES:
        got = run(graph, [np.int64(3)], mode)
        assert_same(got, [np.arange(3), np.arange(1, 4), np.arange(0.0, 3, 0.5),
                          np.arange(3, dtype=np.int32)])


def test_constant_eager_and_symbolic():
    c = ag.constant([1, 2], dtype=np.float32)
    assert isinstance(c, np.ndarray) and c.dtype == np.float32
    graph, out = trace(lambda x: x + ag.constant(3), np.int32(1))
    assert out.dtype == np.int64                       # a constant has a definite dtype
    assert run(graph, [np.int32(1)], "codegen")[0] == 4
