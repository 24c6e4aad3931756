"""`jit_compile=True` on backward graphs: every shared gradient sample (and the RNN
benchmark's loss) gives the interpreter's gradient in native code, first and second order;
a backward loop's row updates write into its accumulator (no copy per step); what is still
refused raises NativeLoweringError naming the operation."""

import re

import numpy as np
import pytest

numba = pytest.importorskip("numba")

import autograph as ag  # noqa: E402
from autograph.runtime.exec import native  # noqa: E402
from autograph.runtime.exec.native import NativeLoweringError  # noqa: E402
from tests.autodiff import samples  # noqa: E402

ALL = samples.VECTOR + samples.MATRIX
RNG = np.random.default_rng(0)
X = RNG.uniform(0.1, 0.5, 3)
W = 0.3 * RNG.standard_normal((3, 3))
D = RNG.normal(size=3)
# second order through nested loops needs gradient lists of gradient lists (refused)
SECOND_REFUSED = {"three_nested_loops": "ad_gl_new", "nested_loops_with_cond": "ad_gl_new"}
# second order compiles large graphs (seconds each): the samples whose backward graphs hold
# the handles this lowering adds (a loop in a branch, gradient lists, TensorArrays), the
# others were compared once by hand (docs/native.md)
SECOND = [samples.loop_in_cond, samples.data_dependent_while, samples.tensor_array_rnn,
          samples.dynamic_rnn, samples.three_nested_loops, samples.nested_loops_with_cond]


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("AUTOGRAPH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "agcache"))


def _args(f):
    return (X, W) if f in samples.MATRIX else (X,)


def _close(got, want):
    """Equal shapes and dtypes, values within 1e-12 (Numba's libm may round transcendental
    functions 1 ulp apart from NumPy's), through nested tuples."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
        return
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("f", ALL, ids=lambda f: f.__name__)
def test_first_order_matches_the_interpreter(f):
    args = _args(f)
    argnums = tuple(range(len(args)))
    grad = ag.value_and_grad(f, argnums=argnums)
    _close(ag.function(grad, jit_compile=True)(*args), ag.function(grad)(*args))


@pytest.mark.parametrize("f", SECOND, ids=lambda f: f.__name__)
def test_second_order_matches_the_interpreter_or_names_the_operation(f):
    g = ag.grad(f)

    def directional(x, *rest):
        return np.sum(g(x, *rest) * D)
    hvp = ag.grad(directional)
    jitted = ag.function(hvp, jit_compile=True)
    if f.__name__ in SECOND_REFUSED:
        with pytest.raises(NativeLoweringError) as info:
            jitted(*_args(f))
        assert f"`{SECOND_REFUSED[f.__name__]}`" in str(info.value)
        assert "nested loops" in str(info.value)
        return
    _close(jitted(*_args(f)), ag.function(hvp)(*_args(f)))


def _rnn_loss(W, xs, h0):   # the shape of benchmarks/cases/rnn_grad.py
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h)


def _backward_loops(source):
    """The bodies of the native function's while loops, as lists of lines."""
    lines, loops = source.splitlines(), []
    for i, line in enumerate(lines):
        if line.strip() == "while True:":
            indent = len(line) - len(line.lstrip())
            body = []
            for nxt in lines[i + 1:]:
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                body.append(nxt)
            loops.append(body)
    return loops


def test_rnn_gradient_every_argument_and_the_accumulator_is_updated_in_place():
    rng = np.random.default_rng(1)
    n, hidden, batch = 12, 5, 3
    args = (rng.standard_normal((hidden, hidden)) / 3, 0.5 * rng.standard_normal(
        (n, batch, hidden)), np.zeros((batch, hidden)))
    vg = ag.value_and_grad(_rnn_loss, argnums=(0, 1, 2))
    jitted = ag.function(vg, jit_compile=True)
    got, want = jitted(*args), ag.function(vg)(*args)
    _close(got, want)
    # the gradient of xs: rows added into an accumulator copied once before the backward
    # loop, never a copy of the (n, batch, hidden) array inside it
    concrete = jitted.get_concrete_function(*args)
    source = native.source_of(concrete._optimized)
    loops = _backward_loops(source)
    # (`put_add_2_2(acc[int(i)], row)`: copies.py's loop adding a row in place)
    row_updates = [m.group(1) for body in loops for ln in body
                   for m in [re.search(r"put_add_\d+_\d+\((\w+)\[int\(", ln)] if m]
    assert row_updates, source
    assert not any("np.copy(" in ln for body in loops for ln in body), source
    accumulator = row_updates[0]
    assert f"{accumulator} = np.copy({accumulator})" in source


def _indexed_reads(xs):
    s = 0.0
    for t in ag.range(xs.shape[0]):
        s += np.sum(np.tanh(xs[t]) ** 2)
    return s


def test_indexed_reads_in_a_loop_lower_with_in_place_rows():
    xs = np.random.default_rng(2).standard_normal((7, 4))
    g = ag.grad(_indexed_reads)
    jitted = ag.function(g, jit_compile=True)
    _close(jitted(xs), ag.function(g)(xs))
    source = native.source_of(jitted.get_concrete_function(xs)._optimized)
    assert not any("np.copy(" in ln for body in _backward_loops(source) for ln in body)


def _nested_whiles(x):
    # nested loops whose trip counts are known only at run time: the inner loop's stacks
    # are regions of one growing buffer, their offsets kept per outer iteration
    y = x
    k = 0
    while np.sum(y) < 6.0:
        z = y
        while np.sum(z) < np.sum(y) + 1.0 + k:
            z = z * 1.2 + 0.05
        y = z + np.sin(y)
        k += 1
    return np.sum(y * y)


def test_nested_loops_of_run_time_lengths():
    g = ag.value_and_grad(_nested_whiles)
    for x in (X, 2 * X, np.array([1.0, 2.0, 4.0])):
        _close(ag.function(g, jit_compile=True)(x), ag.function(g)(x))


def _updates(x, idx):
    y = np.zeros((4, 2))
    for i in ag.range(3):
        y[i] = x[i] * 2.0          # setitem chain in a loop: in place
        y[i, 1] += 1.0
    z = np.zeros(5)
    np.add.at(z, idx, x)           # repeated indices accumulate
    np.maximum.at(z, idx, -x)
    w = x.copy()
    w[1:3] = 7.0
    return y, z, w


def test_setitem_and_ufunc_at_forward():
    x, idx = np.arange(5.0) - 1.5, np.array([0, 1, 1, 4, 0])
    got = ag.function(_updates, jit_compile=True)(x, idx)
    want = ag.function(_updates)(x, idx)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def _dynamic_ta(x):
    ta = ag.TensorArray(np.float64, size=0, dynamic_size=True)
    for i in ag.range(x.shape[0]):
        ta = ta.write(i, x[i] * 2)
    s = 0.0
    for i in ag.range(ta.size()):
        s += ta.read(i)
    return ta.stack(), s


def _read_unwritten(x):
    ta = ag.TensorArray(np.float64, size=3)
    ta = ta.write(0, x)
    return ta.read(1)


def test_tensor_arrays_of_any_size_and_their_errors():
    x = np.arange(4.0)
    got = ag.function(_dynamic_ta, jit_compile=True)(x)
    want = ag.function(_dynamic_ta)(x)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]
    with pytest.raises(ValueError):
        ag.function(_read_unwritten)(np.float64(1.0))
    with pytest.raises(ValueError):
        ag.function(_read_unwritten, jit_compile=True)(np.float64(1.0))


def _mixed_shapes(x):
    ta = ag.TensorArray(np.float64, size=2)
    ta = ta.write(0, x)
    ta = ta.write(1, x[:2])
    return ta.read(1)


def test_elements_of_different_shapes_are_refused_with_the_operation():
    with pytest.raises(NativeLoweringError) as info:
        ag.function(_mixed_shapes, jit_compile=True)(np.arange(3.0))
    assert "`ta_write`" in str(info.value) and "different types" in str(info.value)
