"""The operators: their Python meaning equals Python's; their staged meaning, traced into a
graph and run, equals NumPy's."""

import numpy as np
import pytest

import autograph.operators as ag__
from autograph import errors
from autograph.runtime.exec import interpreter
from autograph.runtime.ir import nest, primitives
from autograph.runtime.ir.graph import Graph


def run_traced(fn, *args):
    """Trace fn on placeholders for `args` (NumPy values) and run the graph on them."""
    g = Graph("f")
    with g.as_default():
        phs = [g.placeholder(f"a{i}", np.asarray(a).dtype, np.shape(a)) for i, a in enumerate(args)]
        out = fn(*phs)
        flat = [primitives.convert(t) for t in nest.flatten(out)]
        g.set_outputs(flat)
    values = interpreter.run(g, [np.asarray(a) for a in args])
    return nest.pack_sequence_as(out, values), g


def ops_of(g):
    out = []
    for node in g.nodes:
        out.append(node.op)
        for value in node.attrs.values():
            if isinstance(value, Graph):
                out.extend(ops_of(value))
    return out


# -- Python meaning --------------------------------------------------------------------------

def test_if_stmt_python():
    assert ag__.if_stmt(True, lambda x: x + 1, lambda x: x - 1, (5,), ("x",)) == 6
    assert ag__.if_stmt(0, lambda x: x + 1, lambda x: x - 1, (5,), ("x",)) == 4
    assert ag__.if_stmt(1, lambda a, b: (b, a), lambda a, b: (a, b), (1, 2), ("a", "b")) == (2, 1)
    called = []
    assert ag__.if_stmt(False, lambda: called.append("t"), lambda: called.append("f")) is None
    assert called == ["f"]


def test_while_stmt_python():
    out = ag__.while_stmt(lambda i, s: i < 5, lambda i, s: (i + 1, s + i), (0, 0), ("i", "s"))
    assert out == (5, 10)
    assert ag__.while_stmt(lambda n: n > 1, lambda n: n // 2, (64,), ("n",)) == 1


def test_for_stmt_python_and_extra_test():
    assert ag__.for_stmt([1, 2, 3], lambda x, s: s + x, (0,), ("s",)) == 6
    assert ag__.for_stmt({"a": 1, "b": 2}, lambda k, s: s + k, ("",), ("s",)) == "ab"
    # stop when s > 3 (a converted `break`)
    out = ag__.for_stmt(range(10), lambda i, s: s + i, (0,), ("s",), extra_test=lambda s: s <= 3)
    assert out == 6


def test_if_exp_and_logical_python():
    assert ag__.if_exp(True, lambda: 1, lambda: 1 / 0) == 1
    assert ag__.and_(0, lambda: 1 / 0) == 0
    assert ag__.and_(2, lambda: 3, lambda: "x") == "x"
    assert ag__.or_("", lambda: 0, lambda: [1]) == [1]
    assert ag__.or_(5, lambda: 1 / 0) == 5
    assert ag__.not_([]) is True and ag__.not_(3) is False


def test_builtins_python():
    assert ag__.range(1, 4) == range(1, 4)
    assert ag__.len([1, 2]) == 2
    assert list(ag__.enumerate("ab", 1)) == [(1, "a"), (2, "b")]
    assert list(ag__.zip([1], [2])) == [(1, 2)]
    assert ag__.abs(-3) == 3 and ag__.int("7") == 7 and ag__.float(2) == 2.0
    assert ag__.bool(0) is False and ag__.min(3, 1, 2) == 1 and ag__.max([4, 9]) == 9


def test_undefined_and_ld():
    u = ag__.Undefined("y")
    assert ag__.ld(5) == 5
    with pytest.raises(UnboundLocalError, match="'y'"):
        ag__.ld(u)
    assert ag__.retval(ag__.UndefinedReturnValue()) is None and ag__.retval(3) == 3


def test_assert_python():
    ag__.assert_stmt(True, lambda: 1 / 0)
    with pytest.raises(AssertionError, match="boom"):
        ag__.assert_stmt(False, lambda: "boom")


# -- staged meaning --------------------------------------------------------------------------

@pytest.mark.parametrize("x", [-3, 0, 4])
def test_if_stmt_staged(x):
    def f(v):
        return ag__.if_stmt(v > 0, lambda v: v * v, lambda v: v * 0, (v,), ("v",))
    got, g = run_traced(f, np.int64(x))
    assert got == (x * x if x > 0 else 0) and "cond" in ops_of(g)


def test_if_stmt_undefined_in_one_branch_is_checked_where_read():
    # the value is bound only where the branch that assigns it ran: `ld` stages the check
    def f(v):
        y = ag__.if_stmt(v > 0, lambda y: v, lambda y: y, (ag__.Undefined("y"),), ("y",))
        return ag__.ld(y)
    got, g = run_traced(f, np.int64(1))
    assert got == 1 and "check_bound" in ops_of(g)
    with pytest.raises(UnboundLocalError, match="'y' is assigned in only one branch"):
        run_traced(f, np.int64(-1))


def test_if_stmt_undefined_in_one_branch_refuses_a_structure():
    # only a single tensor carries the flag `ld` checks
    def f(v):
        return ag__.if_stmt(v > 0, lambda y: (v, v), lambda y: y, (ag__.Undefined("y"),),
                            ("y",))
    with pytest.raises(errors.StagingError, match="'y' has a value after one branch"):
        run_traced(f, np.int64(1))


@pytest.mark.parametrize("n", [1, 6, 27])
def test_while_stmt_staged_collatz(n):
    def f(n):
        def body(n, steps):
            return ag__.if_exp(n % 2 == 0, lambda: n // 2, lambda: 3 * n + 1), steps + 1
        return ag__.while_stmt(lambda n, steps: n != 1, body, (n, 0), ("n", "steps"))
    (final, steps), g = run_traced(f, np.int64(n))
    expected = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        expected += 1
    assert final == 1 and steps == expected
    assert steps.dtype == np.int64  # the Python 0 became a weak int adopting int64


def test_python_scalars_in_tensor_loop_adopt_dtype():
    def f(x, n):
        return ag__.while_stmt(lambda i, s: i < n, lambda i, s: (i + 1, s + x), (0, 0), ("i", "s"))
    (i, s), _ = run_traced(f, np.float32(0.5), np.int64(4))
    assert i == 4 and s == 2.0 and s.dtype == np.float32


def test_while_condition_becomes_tensor_midway():
    def f(x):
        # first test: 0 < 3 (Python); after one iteration i is a tensor
        return ag__.while_stmt(lambda i: i < 3, lambda i: i + x, (0,), ("i",))
    got, g = run_traced(f, np.int64(2))
    assert got == 4 and "while_loop" in ops_of(g)


@pytest.mark.parametrize("n", [0, 1, 5])
def test_for_stmt_over_graph_range(n):
    def f(n):
        return ag__.for_stmt(ag__.range(1, n + 1), lambda i, s: s + i * i, (0,), ("s",))
    got, g = run_traced(f, np.int64(n))
    assert got == sum(i * i for i in range(1, n + 1))
    assert "while_loop" in ops_of(g)


def test_for_stmt_over_range_with_negative_step():
    def f(n):
        return ag__.for_stmt(ag__.range(n, 0, -2), lambda i, s: s + i, (0,), ("s",))
    got, _ = run_traced(f, np.int64(9))
    assert got == sum(range(9, 0, -2))


def test_for_stmt_over_tensor_iterates_first_axis():
    x = np.arange(12.0).reshape(4, 3)

    def f(x):
        return ag__.for_stmt(x, lambda row, s: s + row * row, (np.zeros(3),), ("s",))
    got, g = run_traced(f, x)
    np.testing.assert_allclose(got, (x * x).sum(axis=0))
    assert "while_loop" in ops_of(g)


def test_for_stmt_staged_with_extra_test():
    def f(n):
        def body(i, s, stop):
            return s + i, s + i > 10
        return ag__.for_stmt(ag__.range(n), body, (0, False), ("s", "stop"),
                             extra_test=lambda s, stop: ag__.not_(stop))
    (s, stop), _ = run_traced(f, np.int64(100))
    assert s == 15 and stop


def test_enumerate_and_zip_over_tensors():
    x = np.array([3.0, 4.0, 5.0])

    def f(x):
        s = ag__.for_stmt(ag__.enumerate(x), lambda it, s: s + it[0] * it[1], (0.0,), ("s",))
        t = ag__.for_stmt(ag__.zip(x, x), lambda it, t: t + it[0] * it[1], (0.0,), ("t",))
        return s, t
    (s, t), _ = run_traced(f, x)
    assert s == 0 * 3 + 1 * 4 + 2 * 5 and t == 9 + 16 + 25


def test_python_loop_with_tensor_break_flag_is_gated():
    def f(x):
        def body(i, s, stop):
            return ag__.if_stmt(s + i > x, lambda s, stop: (s, True), lambda s, stop: (s + i, stop),
                                (s, stop), ("s", "stop"))
        return ag__.for_stmt([1, 2, 3, 4], body, (0, False), ("s", "stop"),
                             extra_test=lambda s, stop: ag__.not_(stop))
    for x in (0, 2, 5, 100):
        (s, _), _ = run_traced(f, np.int64(x))
        expected = 0
        for i in [1, 2, 3, 4]:
            if expected + i > x:
                break
            expected += i
        assert s == expected


def test_lazy_and_on_tensors_skips_out_of_range_read():
    x = np.array([5, 6, 7])

    def f(i, x):
        # x[i] would be out of range for i == 3: `and` must not evaluate it at run time
        return ag__.and_(i < 3, lambda: x[np.minimum(i, 2)] > 5)
    for i in range(4):
        got, g = run_traced(f, np.int64(i), x)
        assert bool(got) == (i < 3 and x[min(i, 2)] > 5)
    assert "cond" in ops_of(g)


def test_or_not_staged():
    def f(x):
        return ag__.or_(x > 5, lambda: x < -5), ag__.not_(x > 0)
    for v in (-7, 0, 3, 9):
        (a, b), _ = run_traced(f, np.int64(v))
        assert bool(a) == (v > 5 or v < -5) and bool(b) == (not v > 0)


def test_assert_staged_raises_at_run_time_with_message():
    def f(x):
        ag__.assert_stmt(x > 0, lambda: "x must be positive")
        return x + 1
    got, _ = run_traced(f, np.int64(2))
    assert got == 3
    with pytest.raises(AssertionError, match="x must be positive"):
        run_traced(f, np.int64(-2))


def test_builtins_staged():
    lengths = []

    def f(x, v):
        lengths.append(ag__.len(x))  # a static length is a Python int
        return (0, ag__.abs(v), ag__.int(v * 1.5), ag__.float(v), ag__.bool(v),
                ag__.min(v, 2), ag__.max(x))
    got, _ = run_traced(f, np.array([1.0, 7.0, 3.0]), np.int64(-3))
    assert lengths == [3] and type(lengths[0]) is int
    assert got[1] == 3 and got[2] == -4 and got[3] == -3.0
    assert bool(got[4]) is True and got[5] == -3 and got[6] == 7.0


@pytest.mark.parametrize("a,b", [(0, 5), (3, 5), (3, 0), (-2, 7)])
def test_and_or_on_int_tensors_give_python_values(a, b):
    def f(a, b):
        return ag__.and_(a, lambda: b), ag__.or_(a, lambda: b)
    (x, y), _ = run_traced(f, np.int64(a), np.int64(b))
    assert x == (a and b) and y == (a or b)
    assert x.dtype == np.int64 and y.dtype == np.int64


def test_zip_of_tensor_and_python_list():
    x = np.array([3.0, 4.0, 5.0])

    def f(x):
        return ag__.for_stmt(ag__.zip(x, [1.0, 10.0, 100.0, 1000.0]),
                             lambda it, t: t + it[0] * it[1], (0.0,), ("t",))
    got, g = run_traced(f, x)
    assert got == 3.0 + 40.0 + 500.0 and "while_loop" in ops_of(g)


def test_enumerate_of_zip_over_tensors():
    x = np.array([3.0, 4.0, 5.0])

    def f(x):
        def body(it, t):
            i, (a, b) = it
            return t + i * a * b
        return ag__.for_stmt(ag__.enumerate(ag__.zip(x, x)), body, (0.0,), ("t",))
    got, _ = run_traced(f, x)
    assert got == 0 * 9 + 1 * 16 + 2 * 25
