"""The fast paths of codegen (Python operators, NumPy-scalar constants, counter loops as
`for`, subscripts) compute exactly what the reference interpreter and eager NumPy compute:
same values, same dtypes, for every integer and float width, on NumPy and on the strict
array API device."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import codegen, interpreter, optimize
from tests.runtime.tracing import trace


def run_all(fn, *args, device=None):
    """fn's flat results from the interpreter, codegen, and codegen of the optimised graph;
    asserts they agree exactly (values and dtypes) and returns the codegen source too."""
    graph, _ = trace(fn, *args)
    want = interpreter.run(graph, args, device, check=True)
    results = []
    sources = []
    for g in (graph, optimize.optimize(graph)):
        compiled = codegen.compile_graph(g, device)
        got = compiled(*args)
        sources.append(compiled.__source__)
        assert len(got) == len(want)
        for x, y in zip(got, want):
            x, y = np.asarray(x), np.asarray(y)
            assert x.dtype == y.dtype, (x.dtype, y.dtype)
            np.testing.assert_array_equal(x, y)
        results.append(got)
    return [np.asarray(v) for v in results[0]], sources


def same(got, want):
    want = np.asarray(want)
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)


# -- operators and scalar constants keep NumPy's dtypes -----------------------------------------

def collatz(n):
    def body(n, steps):
        n = ag.cond(n % 2 == 0, lambda: n // 2, lambda: 3 * n + 1)
        return n, steps + 1
    return ag.while_loop(lambda n, steps: n != 1, body, (n, 0))


def collatz_eager(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return n, steps


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64, np.uint16, np.uint32,
                                   np.uint64])
def test_collatz_in_every_integer_width(dtype):
    (n, steps), sources = run_all(collatz, dtype(27))
    want_n, want_steps = collatz_eager(dtype(27))
    same(n, want_n)
    assert n.dtype == dtype and int(steps) == want_steps == 111
    assert "k_" not in sources[1]       # all operators, no kernel calls


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_loop_in_every_width(dtype):
    def grow(x):
        return ag.while_loop(lambda x: x < 1000.0, lambda x: (x * 1.5 + 0.25) / 1.125, (x,))[0]
    x = dtype(3.0)
    (got,), _ = run_all(grow, x)
    want = x
    while want < 1000.0:
        want = (want * 1.5 + 0.25) / 1.125
    same(got, want)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.float32])
def test_every_operator_matches_eager_numpy(dtype):
    def ops(a, b):
        out = [a + b, a - b, a * b, a // b, a % b, a / b, a == b, a != b, a < b, a <= b,
               a > b, a >= b, -a, +a, a ** 2]
        if np.dtype(dtype).kind in "iu":
            out += [a & b, a | b, a ^ b, ~a, a << 1, a >> 1]
        return tuple(out)
    a, b = dtype(7), dtype(3)
    with np.errstate(over="ignore"):      # -uint8(7) wraps (NumPy scalars warn as well)
        got, _ = run_all(ops, a, b)
        want = ops(a, b)
    for g, w in zip(got, want):
        same(g, w)


def test_bool_logic_and_matmul():
    def f(p, q, m, v):
        return (np.logical_and(p, q), np.logical_or(p, q), np.logical_xor(p, q),
                np.logical_not(p), m @ v, v @ v)
    args = (np.bool_(True), np.bool_(False), np.arange(6, dtype=np.float32).reshape(2, 3),
            np.arange(3, dtype=np.float32))
    got, sources = run_all(f, *args)
    for g, w in zip(got, f(*args)):
        same(g, w)
    assert " @ " in sources[0] and " & " in sources[0]


def test_arrays_still_broadcast_through_operators():
    def f(x, y):
        return x * y + 1.0, x % y, x > y
    x, y = np.arange(6.0).reshape(2, 3), np.array([1.5, 2.0, 4.0])
    got, _ = run_all(f, x, y)
    for g, w in zip(got, f(x, y)):
        same(g, w)


def test_scalar_constants_are_never_shared_mutable_state():
    def f(x):
        return ag.cond(x > 0, lambda: np.int64(5), lambda: np.int64(6))
    graph, _ = trace(f, np.int64(1))
    fn = codegen.compile_graph(optimize.optimize(graph))
    first = fn(np.int64(1))[0]
    assert np.asarray(first).dtype == np.int64 and first == 5
    assert fn(np.int64(1))[0] == 5 and fn(np.int64(-1))[0] == 6


# -- counter loops become for loops -------------------------------------------------------------

_TESTS = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}


def counting(start, limit, step, test="<"):
    """A counter loop in while_loop form, the counter of n's dtype from `start` by `step`
    while `i test n`: returns (the counter after the loop, the sum of the counter values)."""
    def f(n):
        i0 = np.asarray(start).astype(n.dtype)
        return ag.while_loop(lambda i, s: _TESTS[test](i, n), lambda i, s: (i + step, s + i),
                             (i0, i0 - i0))
    return f


def counting_eager(start, limit, step, test="<"):
    i = np.asarray(start).astype(limit.dtype)[()]
    s = i - i
    while _TESTS[test](i, limit):
        i, s = i + step, s + i
    return i, s


_LOOPS = [(0, 9, 1, "<"), (2, 9, 3, "<"), (9, 9, 1, "<"), (12, 9, 1, "<"), (0, 9, 2, "<="),
          (1, 10, 3, "<="), (9, 0, -1, ">"), (9, 2, -3, ">"), (9, 1, -2, ">="),
          (3, 3, -1, ">="), (3, 5, -1, ">")]
_DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64]


# (a negative Python step cannot meet an unsigned counter: NumPy refuses -1 as a uint8)
@pytest.mark.parametrize("dtype,start,limit,step,test", [
    (d, *loop) for d in _DTYPES for loop in _LOOPS if loop[2] > 0 or np.dtype(d).kind == "i"])
def test_counter_loop_matches_the_while_loop_and_eager(dtype, start, limit, step, test):
    f = counting(start, limit, step, test)
    (i, s), sources = run_all(f, dtype(limit))
    want_i, want_s = counting_eager(start, dtype(limit), step, test)
    assert i.dtype == dtype
    same(i, want_i)
    same(s, want_s)
    assert "counter_values(" in sources[1] and "while" not in sources[1]


def test_counter_loop_longer_than_a_chunk(monkeypatch):
    monkeypatch.setattr(codegen, "_CHUNK", 7)
    for start, limit, step, test in [(0, 100, 1, "<"), (3, 100, 3, "<="), (100, -5, -4, ">"),
                                     (0, 7, 1, "<"), (0, 14, 1, "<"), (0, 15, 1, "<")]:
        f = counting(start, limit, step, test)
        (i, s), _ = run_all(f, np.int64(limit))
        want_i, want_s = counting_eager(start, np.int64(limit), step, test)
        same(i, want_i)
        same(s, want_s)


def test_range_for_through_ag_function_keeps_dtypes():
    def f(n):
        s = 0
        for i in range(n):
            s += i * i
        return s
    g = ag.function(f)
    for dtype, n in [(np.int8, 6), (np.uint8, 8), (np.int16, 30), (np.int32, 1000),
                     (np.int64, 100_000)]:
        got = g(dtype(n))
        want = f(dtype(n))
        same(got, want)
        assert isinstance(got, (np.generic, np.ndarray))
    graph = g.get_concrete_function(np.int64(3)).graph
    src = codegen.source_of(optimize.optimize(graph))
    assert "counter_values(" in src and "while" not in src


@pytest.mark.parametrize("case", ["limit_changes", "step_changes", "counter_doubles",
                                  "float_counter", "capped", "extra_test"])
def test_loops_that_only_look_like_counters_stay_while_loops(case):
    if case == "limit_changes":
        def f(n):
            return ag.while_loop(lambda i, n: i < n, lambda i, n: (i + 1, n - 1), (0, n))
    elif case == "step_changes":
        def f(n):
            return ag.while_loop(lambda i, d: i < n, lambda i, d: (i + d, d + 1), (0, 1))
    elif case == "counter_doubles":
        def f(n):
            return ag.while_loop(lambda i: i < n, lambda i: (i * 2 + 1,), (0,))
    elif case == "float_counter":
        def f(n):
            return ag.while_loop(lambda i: i < n, lambda i: (i + 1.0,), (0.0,))
    elif case == "capped":
        def f(n):
            return ag.while_loop(lambda i: i < n, lambda i: (i + 1,), (0,),
                                 maximum_iterations=5)
    else:
        def f(n):
            return ag.while_loop(lambda i, s: np.logical_and(i < n, s < 20),
                                 lambda i, s: (i + 1, s + i), (0, 0))
    n = np.float64(11.0) if case == "float_counter" else np.int64(11)
    got, sources = run_all(f, n)
    want = f(n)
    for g, w in zip(got, want if isinstance(want, tuple) else (want,)):
        same(g, w)
    assert "while" in sources[0] and "counter_values" not in sources[0]


def test_the_test_graph_is_hoisted_out_of_a_counter_loop():
    def f(n, k):
        return ag.while_loop(lambda i, s: i < n * k, lambda i, s: (i + 1, s + i), (0, 0))[1]
    (got,), sources = run_all(f, np.int64(6), np.int64(3))
    assert int(got) == sum(range(18))
    body = sources[1].split("for ", 1)[1]
    assert "*" not in body            # n * k is computed once, before the loop


# -- subscripts ---------------------------------------------------------------------------------

def test_dynamic_subscripts_match_the_getitem_kernel():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)

    def f(x, i, j):
        return x[i], x[-1], x[i, None], x[..., j], x[i, 2], x[-1 - i], x[i][i]
    for i, j in [(0, 3), (1, 0), (-1, 2), (np.int64(-2), np.int64(-4))]:
        args = (x, np.int64(i), np.int64(j))
        got, sources = run_all(f, *args)
        for g, w in zip(got, f(*args)):
            same(g, w)
    assert "k_getitem" not in sources[0]


def test_out_of_range_subscript_raises_index_error_in_both_executors():
    def f(x, i):
        return x[i]
    graph, _ = trace(f, np.arange(3.0), np.int64(0))
    with pytest.raises(IndexError):
        interpreter.run(graph, [np.arange(3.0), np.int64(3)])
    with pytest.raises(IndexError):
        codegen.compile_graph(graph)(np.arange(3.0), np.int64(3))


# -- the strict array API device takes the same paths ------------------------------------------

def test_fast_paths_on_the_array_api_strict_device():
    pytest.importorskip("array_api_strict")
    from autograph.runtime.devices import get_device
    dev = get_device("strict")
    for fn, args, want in [
            (collatz, (np.int32(27),), collatz_eager(np.int32(27))),
            (counting(1, 10, 3, "<="), (np.int16(10),),
             counting_eager(1, np.int16(10), 3, "<=")),
            (counting(9, 1, -2, ">="), (np.int64(1),),
             counting_eager(9, np.int64(1), -2, ">=")),
            (lambda x, i: (x[i] * 2.0,), (np.arange(6.0).reshape(3, 2), np.int64(2)),
             (np.array([8.0, 10.0]),))]:
        graph, _ = trace(fn, *args)
        for g in (graph, optimize.optimize(graph)):
            got = codegen.compile_graph(g, dev)(*[dev.to_device(a) for a in args])
            assert all(type(v).__module__.startswith("array_api_strict") for v in got)
            for v, w in zip(got, want):
                same(dev.to_host(v), w)


# -- random counter loops ------------------------------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(dtype=st.sampled_from(["int8", "int16", "int32", "int64", "uint8", "uint16", "uint64"]),
       start=st.integers(0, 60), limit=st.integers(0, 60), step=st.integers(1, 7),
       down=st.booleans(), test=st.sampled_from(["strict", "closed"]),
       chunk=st.sampled_from([3, 1 << 16]))
def test_random_counter_loops(dtype, start, limit, step, down, test, chunk):
    """Any start, limit, step, direction, dtype and chunk size: the for loop codegen emits
    counts exactly like the while loop the interpreter runs and like eager NumPy."""
    dtype = np.dtype(dtype)
    if down and dtype.kind == "u":
        down = False
    if down:
        step, start, limit = -step, limit, start
    op = ("<" if test == "strict" else "<=") if step > 0 else (">" if test == "strict" else ">=")
    if op == ">=" and dtype.kind == "u" and limit < -step:
        return      # i >= limit would wrap below zero: an endless while loop
    old, codegen._CHUNK = codegen._CHUNK, chunk
    try:
        with np.errstate(over="ignore"):    # the sum may wrap (the same way everywhere)
            f = counting(start, limit, step, op)
            (i, s), sources = run_all(f, dtype.type(limit))
            want_i, want_s = counting_eager(start, dtype.type(limit), step, op)
    finally:
        codegen._CHUNK = old
    same(i, want_i)
    same(s, want_s)
    assert "counter_values(" in sources[1]


# -- next values assigned in place ------------------------------------------------------------------

@pytest.mark.parametrize("case", ["fibonacci", "swap", "old_read_later", "same_value_twice",
                                  "in_place"])
def test_loop_variables_assigned_in_place_only_when_safe(case):
    """A body node may write a loop variable directly, unless the old value is still needed
    (another variable takes it, or a later node reads it)."""
    bodies = {
        "fibonacci": lambda a, b, i: (b, a + b, i + 1),
        "swap": lambda a, b, i: (b * 1.0, a * 1.0, i + 1),
        "old_read_later": lambda a, b, i: (a + b, a * 2.0 + b, i + 1),
        "same_value_twice": lambda a, b, i: (a + b, a + b, i + 1),
        "in_place": lambda a, b, i: (a * 0.5, b + 1.0, i + 1),
    }

    def f(a, b, n):
        return ag.while_loop(lambda a, b, i: i < n, bodies[case], (a, b, 0))
    args = (np.float64(1.0), np.float64(2.0), np.int64(9))
    got, sources = run_all(f, *args)
    a, b = args[0], args[1]
    for _ in range(9):
        a, b, _i = bodies[case](a, b, 0)
    same(got[0], a)
    same(got[1], b)
    if case == "in_place":
        assert "loop_var_0 = loop_var_0 * " in sources[1]


# -- counter loops that may stop early ---------------------------------------------------------------

def test_range_loop_with_break_is_a_for_loop_with_the_same_results():
    def f(n, x):
        s = 0.0
        for i in range(n):
            if s > x:
                break
            s += i * 0.5
        return s

    def g(n, k):
        found = -1
        for i in range(3, n, 2):
            if i % k == 0:
                found = i
                break
        return found
    for fn, cases in [(f, [(100, 20.0), (100, -1.0), (0, 5.0), (10, 1000.0)]),
                      (g, [(50, 7), (50, 97), (3, 5), (100, 9)])]:
        h = ag.function(fn)
        for n, v in cases:
            args = (np.int64(n), np.float64(v) if fn is f else np.int64(v))
            same(h(*args), fn(*args))
            graph = h.get_concrete_function(*args).graph
            interp = interpreter.run(graph, list(args))[0]
            same(interp, fn(*args))
        src = codegen.source_of(optimize.optimize(graph))
        assert "counter_values(" in src and "break" in src and "while" not in src


def test_early_stop_with_the_counter_used_after_stays_a_while_loop():
    def f(n):
        def cond(i, s):
            return np.logical_and(i < n, s < 20)
        return ag.while_loop(cond, lambda i, s: (i + 1, s + i), (0, 0))
    for n in (3, 100):
        got, sources = run_all(f, np.int64(n))
        want = f(np.int64(n))
        same(got[0], want[0])
        same(got[1], want[1])
    assert "while" in sources[1]


def test_early_stop_test_reading_the_counter_stays_a_while_loop():
    def f(n, x):
        def cond(i, s):
            return np.logical_and(i < n, x[np.minimum(i, 4)] > 0)
        return ag.while_loop(cond, lambda i, s: (i + 1, s + i), (0, 0))[1]
    x = np.array([1.0, 2.0, -1.0, 3.0, 4.0])
    (got,), sources = run_all(f, np.int64(10), x)
    same(got, f(np.int64(10), x))
    assert "while" in sources[1]


@pytest.mark.parametrize("count,lowered", [(3, False), (31, False), (32, True), (500, True)])
def test_short_constant_counter_loops_stay_while_loops(count, lowered):
    """Making the counter's values costs about as much as 20-30 steps of the while loop's
    own test, so a loop known to be that short keeps it (same results either way)."""
    def f(x):
        return ag.while_loop(lambda i, s: i < count, lambda i, s: (i + 1, s + x * i), (0, x))[1]
    (got,), sources = run_all(f, np.float64(0.5))
    same(got, np.float64(0.5) + sum(0.5 * i for i in range(count)))
    assert ("counter_values(" in sources[1]) == lowered
