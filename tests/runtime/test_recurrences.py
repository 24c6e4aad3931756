"""Recurrences run in place (issue 30, goal 1): a loop body that reads its array before it
writes it (`out[i] = out[i - 1] + x[i]`, `a[i, :] = g(a[i - 1, :])`, running sums, scans)
updates the array in place in generated code and in native code, where it used to copy
the whole array every iteration (quadratic). The tests count copies, never time: the
copying kernels and the loop-entry copy are wrapped with counters. Every program is
compared with plain Python, the interpreter (the reference, which always copies) and the
generated code; the bodies that read the old value after writing it keep copying."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import codegen, interpreter, loop_inplace
from autograph.runtime.ir import primitives

N = 40


# -- safe: every read of the old value is over before the write ------------------------------

def prefix_sum(x):
    out = np.zeros_like(x)
    out[0] = x[0]
    for i in ag.range(1, x.shape[0]):
        out[i] = out[i - 1] + x[i]
    return out


def logistic_map(x):                  # a[i] = f(a[i - 1])
    a = np.zeros_like(x)
    a[0] = x[0]
    for i in ag.range(1, x.shape[0]):
        a[i] = 3.7 * a[i - 1] * (1.0 - a[i - 1])
    return a


def row_recurrence(x, w):             # a[i, :] = g(a[i - 1, :]): the read is a view (a row)
    a = np.zeros((x.shape[0], w.shape[0]))
    a[0, :] = x[0]
    for i in ag.range(1, x.shape[0]):
        a[i, :] = np.tanh(a[i - 1, :] @ w + x[i])
    return a


def running_sum_at(x):                # running sums with np.add.at, read before the add
    acc = np.zeros(4)
    total = np.float64(0.0)
    for i in ag.range(x.shape[0]):
        total = total + acc.sum()
        np.add.at(acc, i % 4, x[i])
    return acc, total


def scan_in_place(x):                 # an in-place scan of a caller's array (copied once)
    for i in ag.range(1, x.shape[0]):
        x[i] = x[i] + x[i - 1]
    return x


def two_writes(x):                    # two updates per iteration, the second reads the first
    a = np.zeros(x.shape[0] + 1)
    for i in ag.range(x.shape[0]):
        a[i] = a[i] + x[i]
        a[i + 1] = 0.5 * a[i]
    return a


def shift_rows(x):                    # a[1:] = a[:-1]: overlapping memory, NumPy copes
    a = np.copy(x)
    for i in ag.range(3):
        a[1:] = a[:-1]
    return a


def reads_old_scalar_first(a, n):     # the old value, as a scalar, read before the write
    s = np.float64(0.0)
    for i in ag.range(n):
        s = s + a[0]
        a[i] = 3.0
    return a, s


def clipped_sum(x):                   # the update inside an `if` (a cond node)
    out = np.zeros_like(x)
    for i in ag.range(1, x.shape[0]):
        if x[i] > 1.0:
            out[i] = out[i - 1] + x[i]
        else:
            out[i] = out[i - 1]
    return out


def sometimes_written(x):             # one branch writes, the other passes it through
    a = np.zeros_like(x)
    for i in ag.range(x.shape[0]):
        if x[i] > 1.0:
            a[i] = a[i - 1] * 0.5 + x[i]
    return a


def branch_reads_it(x):               # an `if` that only reads it, then the update
    a = np.ones_like(x)
    for i in ag.range(1, x.shape[0]):
        v = a[i - 1] * 2.0 if x[i] > 1.0 else a[i - 1] - 1.0
        a[i] = v
    return a


SAFE = [(prefix_sum, "x"), (logistic_map, "p"), (row_recurrence, "xw"),
        (running_sum_at, "x"), (scan_in_place, "x"), (two_writes, "x"), (shift_rows, "x"),
        (reads_old_scalar_first, "an"), (clipped_sum, "x"), (sometimes_written, "x"),
        (branch_reads_it, "x")]


# -- unsafe: the old value is read after the write, or outlives the iteration ----------------

def scalar_read_after_write(x):
    a = np.zeros_like(x)
    s = np.float64(0.0)
    for i in ag.range(x.shape[0]):
        v = a[i - 1]
        a[i] = x[i] + 1.0
        s = s + v
    return a, s


def row_read_after_write(x):          # `r` is a view of the old row in generated code
    a = np.ones((x.shape[0], 3))
    s = np.float64(0.0)
    for i in ag.range(1, x.shape[0]):
        r = a[i - 1, :] * 1.0 if x[i] > 2.0 else a[i - 1, :].copy()
        a[i - 1, :] = x[i]
        s = s + r.sum()
    return a, s


def old_copy_kept(x):                 # the old array is a loop variable of its own
    a = np.zeros_like(x)
    b = np.zeros_like(x)
    for i in ag.range(x.shape[0]):
        b = a.copy()
        a[i] = x[i]
    return a, b


def old_copy_read_after(x):
    a = np.arange(x.shape[0]) * 1.0
    t = np.float64(0.0)
    for i in ag.range(1, x.shape[0]):
        prev = a.copy()
        a[i] = prev[i - 1] * 0.5
        t = t + prev.sum()
    return a, t


def branch_keeps_old(x):              # a branch returns the old array beside the new one
    a = np.zeros_like(x)
    b = np.zeros_like(x)
    for i in ag.range(x.shape[0]):
        if x[i] > 1.0:
            b = a.copy()
            a[i] = x[i]
        else:
            a[i] = -x[i]
    return a, b


UNSAFE = [scalar_read_after_write, row_read_after_write, old_copy_kept, old_copy_read_after,
          branch_keeps_old]


# -- helpers ---------------------------------------------------------------------------------

def _args(kind):
    rng = np.random.default_rng(1)
    if kind == "x":
        return (rng.uniform(0.5, 1.5, N),)
    if kind == "p":
        return (rng.uniform(0.2, 0.8, N),)
    if kind == "xw":
        return (rng.normal(size=(N, 3)), 0.3 * rng.normal(size=(3, 3)))
    return (np.ones(N), np.int64(N // 2))


class Copies:
    """Counts the copies generated code makes: calls of the copying update kernels
    (`setitem`, `ufunc_at`: one whole-array copy each) and loop-entry copies."""

    def __init__(self, monkeypatch):
        self.count = 0
        for op in ("setitem", "ufunc_at"):
            prim = primitives.lookup(op)
            monkeypatch.setitem(primitives.PRIMITIVES, op,
                                primitives.replace(prim, kernel=self._counted(prim.kernel)))
        monkeypatch.setattr(loop_inplace, "_copy", self._counted(loop_inplace._copy))

    def _counted(self, kernel):
        def counted(*args, **kwargs):
            self.count += 1
            return kernel(*args, **kwargs)
        return counted


def _plain(f, args):
    out = f(*[np.copy(a) for a in args])
    return out if isinstance(out, tuple) else (out,)


def _run(f, args, monkeypatch):
    """(generated code's results, copies they made, the interpreter's results)."""
    graph = ag.function(f).get_concrete_function(*args)._graph_to_run()
    copies = Copies(monkeypatch)
    before = [np.copy(a) for a in args]
    got = codegen.compile_graph(graph)(*args)
    count = copies.count
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)        # the caller's arrays are untouched
    ref = interpreter.run(graph, list(args))
    return got, count, ref


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("f,kind", SAFE, ids=lambda v: getattr(v, "__name__", ""))
def test_safe_recurrences_copy_at_most_once(f, kind, monkeypatch):
    args = _args(kind)
    got, copies, ref = _run(f, args, monkeypatch)
    _same(got, ref)
    _same(got, _plain(f, args))
    assert copies <= 1, f"{f.__name__}: {copies} copies"   # (a caller's array: once)


@pytest.mark.parametrize("f", UNSAFE, ids=lambda f: f.__name__)
def test_reads_after_the_write_keep_copying(f, monkeypatch):
    args = _args("x")
    got, copies, ref = _run(f, args, monkeypatch)
    _same(got, ref)
    _same(got, _plain(f, args))
    assert copies >= N - 1, f"{f.__name__}: only {copies} copies"


def test_prefix_sum_copies_do_not_grow_with_n(monkeypatch):
    counts = []
    for n in (10, 1000):
        x = np.arange(n, dtype=np.float64)
        got, copies, _ = _run(prefix_sum, (x,), monkeypatch)
        np.testing.assert_array_equal(got[0], np.cumsum(x))
        counts.append(copies)
    assert counts == [0, 0]        # zeros_like is the loop's own: not even one copy


def test_the_generated_loop_reads_like_numpy():
    graph = ag.function(prefix_sum).get_concrete_function(np.ones(50))._graph_to_run()
    src = codegen.source_of(graph)
    assert "copy" not in src and "k_setitem" not in src
    assert "out[_loop_counter_] = add" in src
    # the counter and its neighbour `i - 1` index as Python ints, as a hand-written loop
    assert "in range(" in src and "_loop_counter_ - 1\n" in src


def reads_ahead(x):
    out = np.zeros_like(x)
    for i in ag.range(x.shape[0]):
        out[i] = x[i + 1] - x[-1 + i]
    return out


def test_neighbour_indices_keep_numpys_meaning():
    x = np.arange(5.0)
    fn = ag.function(reads_ahead)
    with pytest.raises(IndexError):
        fn(x)                       # x[i + 1] at the last i, as in Python
    with pytest.raises(IndexError):
        reads_ahead(x)
    y = np.arange(5.0)

    def wraps(x):
        out = np.zeros_like(x)
        for i in ag.range(x.shape[0]):
            out[i] = x[i - 1]       # i - 1 = -1 at the start: the last element
        return out
    np.testing.assert_array_equal(ag.function(wraps)(y), wraps(y))


def test_a_loop_that_runs_zero_times_returns_the_initial_value():
    for x in (np.ones(1), np.array([2.0, 3.0])):
        np.testing.assert_array_equal(ag.function(prefix_sum)(x), np.cumsum(x))


def test_print_of_the_old_value_before_the_write_is_in_place(monkeypatch, capsys):
    def printed(x):
        a = np.zeros(3)
        for i in ag.range(3):
            ag.print(a)
            a[i] = x[i]
        return a
    x = np.array([1.0, 2.0, 3.0])
    got, copies, ref = _run(printed, (x,), monkeypatch)
    _same(got, ref)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == lines[3:] and copies <= 1      # (np.zeros(3) may fold: a Const)
    assert lines[2].replace(" ", "") == "[1.2.0.]"


# -- native code (jit_compile=True): the same proof, no copy in the loop ----------------------

def _native_loop_lines(src):
    """The lines of the native source inside its `while` loops."""
    lines, inside = [], None
    for line in src.splitlines():
        indent = len(line) - len(line.lstrip())
        if inside is not None and line.strip() and indent <= inside:
            inside = None
        if line.strip().startswith("while "):
            inside = indent
        elif inside is not None:
            lines.append(line.strip())
    return lines


def _native_source(f, args):
    """The Numba source of `f`'s graph, lowered without compiling it."""
    from autograph.runtime.exec.native.lower import Lowering
    graph = ag.function(f).get_concrete_function(*args)._graph_to_run()
    return Lowering(graph, "native_" + f.__name__).build()


@pytest.mark.parametrize("f,kind,in_place", [
    (prefix_sum, "x", True), (logistic_map, "p", True), (row_recurrence, "xw", True),
    (two_writes, "x", True), (clipped_sum, "x", True), (branch_keeps_old, "x", False),
    (scalar_read_after_write, "x", False),
    (old_copy_read_after, "x", False), (shift_rows, "x", False)],
    ids=lambda v: getattr(v, "__name__", ""))
def test_native_code_writes_in_place_where_proved(f, kind, in_place):
    pytest.importorskip("numba")
    src = _native_source(f, _args(kind))
    copies = [line for line in _native_loop_lines(src) if "np.copy(" in line]
    assert (copies == []) == in_place, src


def test_native_prefix_sum_runs_in_place(tmp_path, monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(tmp_path))
    for f, kind in ((prefix_sum, "x"), (old_copy_read_after, "x")):
        args = _args(kind)
        got = ag.function(f, jit_compile=True)(*args)
        _same(got if isinstance(got, tuple) else (got,), _plain(f, args))
    assert "np.copy(" not in _native_source(prefix_sum, _args("x"))
