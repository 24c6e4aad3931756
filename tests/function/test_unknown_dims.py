"""A dimension the signature leaves unknown is None in `x.shape` while tracing (the static
shape, as in TensorFlow). Handed on where a number belongs, that None must raise a clear
TypeError at the user's line, never be read as something else: NumPy reads
`np.arange(0, None, step)` as `np.arange(0, 0, step)` (a None stop is its one-argument
form), `np.eye(n, None)` as square, and a loop over `np.arange(0, x.shape[0], step)` used to
run zero times and return 0.0 instead of 20.0. Each refused form is checked against the fix
its message names (len(x)), which must then agree with eager NumPy, in both executors;
converted code run eagerly keeps NumPy's and Python's own behaviour."""

import traceback

import numpy as np
import pytest

import autograph as ag

VEC = [ag.TensorSpec([None], np.float64), ag.TensorSpec([], np.int64)]
X, STEP = np.arange(10.0), np.int64(2)


def _function(fn, jit, signature=VEC):
    if jit:
        pytest.importorskip("numba")
    return ag.function(fn, input_signature=signature, jit_compile=jit)


def _refused(fn, args, signature=VEC, match="None"):
    """fn traced on `args` raises a TypeError naming len(x), raised in fn's own frame."""
    with pytest.raises(TypeError, match=match) as info:
        ag.function(fn, input_signature=signature)(*args)
    text = str(info.value)
    assert "len(x)" in text, text
    frames = traceback.extract_tb(info.value.__traceback__)
    assert any(fr.filename == __file__ and fr.name == fn.__name__ for fr in frames), text
    return text


# -- np.arange: every mix of Python and tensor bounds ------------------------------------------

def _arange_stop_py_step(x, step):
    s = 0.0
    for i in np.arange(0, x.shape[0], 2):
        s += x[i]
    return s


def _arange_stop_tensor_step(x, step):          # the reported bug: 0.0 instead of 20.0
    s = 0.0
    for i in np.arange(0, x.shape[0], step):
        s += x[i]
    return s


def _arange_tensor_start(x, step):              # was np.arange(0, step): 1.0, not 44.0
    s = 0.0
    for i in np.arange(step, x.shape[0]):
        s += x[i]
    return s


def _arange_one_bound(x, step):
    s = 0.0
    for i in np.arange(x.shape[0]):
        s += x[i]
    return s


def _arange_none_step(x, step):                 # NumPy reads a None step as 1
    s = 0.0
    for i in np.arange(0, 10, x.shape[0]):
        s += x[i]
    return s


def _arange_keyword_stop(x, step):
    return np.arange(start=step, stop=x.shape[0]) + 0.0


def _array_api_arange(x, step):                 # the array API's arange is NumPy's
    return x.__array_namespace__().arange(0, x.shape[0], step) + 0.0


def _range_tensor_step(x, step):
    s = 0.0
    for i in range(0, x.shape[0], step):
        s += x[i]
    return s


def _ag_range_tensor_start(x, step):
    s = 0.0
    for i in ag.range(step, x.shape[0]):
        s += x[i]
    return s


# the length handed on as a helper's parameter: nothing at the call site shows that it is a
# dimension (the static_dims pass wraps only reads it can see), so np.arange itself refuses
# the None when it runs (runtime/numpy/none_operands.py)

def _sum_over(x, indices):
    s = 0.0
    for i in indices:
        s += x[i]
    return s


def _loop_to(x, n, step):
    return _sum_over(x, np.arange(0, n, step))


def _loop_from(x, n, step):
    return _sum_over(x, np.arange(step, n))


def _passed_stop_tensor_step(x, step):
    return _loop_to(x, x.shape[0], step)


def _passed_tensor_start(x, step):
    return _loop_from(x, x.shape[0], step)


def _python_bounds(n):                          # all Python: NumPy's own arange would run
    return np.arange(0, n, 2) + 0.0


def _passed_py_bounds(x, step):
    return _python_bounds(x.shape[0])


def _one_bound(n):
    return np.arange(n) + 0.0


def _passed_one_bound(x, step):
    return _one_bound(x.shape[0])


def _stepped(start, n):
    return np.arange(start, 10, n) + 0.0


def _passed_step(x, step):
    return _stepped(step, x.shape[0])


REFUSED_LOOPS = [_passed_stop_tensor_step, _passed_tensor_start, _passed_py_bounds,
                 _passed_one_bound, _passed_step, _arange_stop_py_step, _arange_stop_tensor_step, _arange_tensor_start,
                 _arange_one_bound, _arange_none_step, _arange_keyword_stop,
                 _array_api_arange, _range_tensor_step, _ag_range_tensor_start]


@pytest.mark.parametrize("fn", REFUSED_LOOPS, ids=lambda f: f.__name__)
def test_a_none_bound_is_refused_at_the_users_line(fn):
    text = _refused(fn, (X, STEP))
    assert f"{__file__}:" in text, text        # (the message says where, inline, as well)
    if "_passed" in fn.__name__:
        assert "numpy.arange" in text, text


def _fixed_stop_py_step(x, step):
    s = 0.0
    for i in np.arange(0, len(x), 2):
        s += x[i]
    return s


def _fixed_stop_tensor_step(x, step):
    s = 0.0
    for i in np.arange(0, len(x), step):
        s += x[i]
    return s


def _fixed_tensor_start(x, step):
    s = 0.0
    for i in np.arange(step, len(x)):
        s += x[i]
    return s


def _fixed_one_bound(x, step):
    s = 0.0
    for i in np.arange(len(x)):
        s += x[i]
    return s


def _fixed_range(x, step):
    s = 0.0
    for i in range(step, len(x), step):
        s += x[i]
    return s


def _fixed_ag_range(x, step):
    s = 0.0
    for i in ag.range(0, len(x), step):
        s += x[i]
    return s


FIXES = [_fixed_stop_py_step, _fixed_stop_tensor_step, _fixed_tensor_start, _fixed_one_bound,
         _fixed_range, _fixed_ag_range]


def _jit_too(cases, jitted):
    """Every case plain, the `jitted` ones natively too (each native compile costs ~0.5 s)."""
    return [pytest.param(c, False, id=f"{getattr(c, '__name__', c)}-plain") for c in cases] + \
        [pytest.param(c, True, id=f"{getattr(c, '__name__', c)}-jit") for c in jitted]


@pytest.mark.parametrize("fn, jit", _jit_too(FIXES, [_fixed_stop_tensor_step, _fixed_range]))
def test_the_named_fix_agrees_with_numpy(fn, jit):
    f = _function(fn, jit)
    for n in (10, 7, 1, 0):
        x = np.arange(float(n)) * 1.5
        for step in (1, 2, 3):
            assert f(x, np.int64(step)) == fn(x, np.int64(step)), (n, step)


# -- the other NumPy functions that take lengths -----------------------------------------------

MAT = [ag.TensorSpec([None, None], np.float64)]
M = np.arange(12.0).reshape(3, 4)

LENGTH_CALLS = {   # n, m: x.shape handed on as parameters (a read the converter sees is
    "eye_n": lambda x, n, m: np.eye(n),        # its own: tests/converters/test_static_dims.py)
    "eye_m": lambda x, n, m: np.eye(3, m),            # NumPy: square, 3 x 3
    "eye_tensor_n": lambda x, n, m: np.eye(len(x), m),
    "identity": lambda x, n, m: np.identity(n),
    "tri_m": lambda x, n, m: np.tri(3, m),              # NumPy: square
    "tril_indices_m": lambda x, n, m: np.tril_indices(3, 0, m)[1],
    "triu_indices_n": lambda x, n, m: np.triu_indices(m)[1],
    "linspace_num": lambda x, n, m: np.linspace(0.0, 1.0, n),
    "linspace_stop": lambda x, n, m: np.linspace(0.0, n, 5),
    "logspace_num": lambda x, n, m: np.logspace(0.0, 1.0, num=n),
    "hamming": lambda x, n, m: np.hamming(m),
    "fftfreq": lambda x, n, m: np.fft.fftfreq(m),
    "zeros_tuple": lambda x, n, m: np.zeros((n, 3)),
    "zeros_keyword": lambda x, n, m: np.zeros(shape=(3, m)),
    "ones_scalar": lambda x, n, m: np.ones(n),
    "full": lambda x, n, m: np.full((n,), 2.0),
    "empty": lambda x, n, m: np.empty((n, m)),
}


@pytest.mark.parametrize("name", sorted(LENGTH_CALLS))
def test_a_none_length_is_refused(name):
    fn = LENGTH_CALLS[name]

    def uses(x):
        return fn(x, *x.shape)

    with pytest.raises(TypeError, match="None") as info:
        ag.function(uses, input_signature=MAT)(M)
    text = str(info.value)
    assert "len(x)" in text and f"{__file__}:" in text, text
    assert "NoneType" not in text, text
    if "num" in name:   # linspace's count must be a Python int: the message says so
        assert "np.arange(n)" in text, text


def test_linspace_with_a_length_known_when_the_graph_runs():
    def points(x):        # what the refusal of np.linspace(0.0, 1.0, x.shape[0]) suggests
        n = len(x)
        return 0.0 + np.arange(n) * ((1.0 - 0.0) / (n - 1)) + x

    f = ag.function(points, input_signature=[ag.TensorSpec([None], np.float64)])
    for n in (2, 5, 9):
        np.testing.assert_allclose(f(np.zeros(n)), np.linspace(0.0, 1.0, n), rtol=1e-15)


FIXED_LENGTHS = {
    "eye": lambda x: np.eye(len(x)) @ x,
    "eye_nm": lambda x: np.eye(len(x), np.size(x, 1)) * x,
    "tri": lambda x: np.tri(len(x), np.size(x, 1)) * x,
    "zeros": lambda x: np.zeros((len(x), 3)) + x[:, :1],
    "full": lambda x: np.full(len(x), 2.0) * x[:, 0],
    "arange": lambda x: np.arange(len(x)) * x[:, -1],
}


@pytest.mark.parametrize("name, jit", _jit_too(sorted(FIXED_LENGTHS), ["zeros"]))
def test_lengths_as_tensors_agree_with_numpy(name, jit):
    fn = FIXED_LENGTHS[name]

    def uses(x):
        return fn(x)

    f = _function(uses, jit, MAT)
    for shape in ((3, 4), (5, 2), (1, 1)):
        x = np.arange(float(np.prod(shape))).reshape(shape) - 2.0
        np.testing.assert_array_equal(f(x), fn(x))


def test_reshape_and_broadcast_with_none_are_refused():
    def reshape(x):
        return x.reshape((x.shape[0], 1))

    def reshape_to_none(x):           # (NumPy's a.reshape(None) keeps a's shape)
        return x.reshape(x.shape[0])

    def broadcast(x):
        return np.broadcast_to(x[0], x.shape)

    for fn in (reshape, reshape_to_none, broadcast):
        with pytest.raises(ValueError, match="entry None.*len\\(x\\)") as info:
            ag.function(fn, input_signature=MAT)(M)
        assert f"{__file__}:" in str(info.value)


# -- Python operators and comparisons ----------------------------------------------------------

def _times(x, step):
    return x * x.shape[0]


def _plus_reflected(x, step):
    return x.shape[0] + step


def _minus(x, step):
    return x[: x.shape[0] - step]


def _power(x, step):
    return step ** x.shape[0]


def _while_tensor_counter(x, step):
    i, s = step, 0.0
    while i < x.shape[0]:
        s += x[i]
        i += 1
    return s


@pytest.mark.parametrize("fn", [_times, _plus_reflected, _minus, _power, _while_tensor_counter],
                         ids=lambda f: f.__name__)
def test_an_operator_refuses_a_none_operand(fn):
    text = _refused(fn, (X, STEP))
    assert "unsupported operand" not in text and f"{__file__}:" in text, text


def _python_arithmetic(x, step):
    return x[: x.shape[0] * 2]


def _python_counter(x, step):
    i, s = 0, 0.0
    while i < x.shape[0]:
        s += x[i]
        i += 1
    return s


@pytest.mark.parametrize("fn", [_python_arithmetic, _python_counter], ids=lambda f: f.__name__)
def test_python_operators_on_none_keep_pythons_error(fn):
    # no tensor involved: Python's own TypeError about NoneType, at the user's line
    with pytest.raises(TypeError, match="NoneType") as info:
        ag.function(fn, input_signature=VEC)(X, STEP)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert any(fr.filename == __file__ and fr.name == fn.__name__ for fr in frames)


def test_equality_with_none_keeps_pythons_answer():
    def f(x, step):           # `t == None` is False, `t != None` True, as in Python
        n = x.shape[0] if x.shape[0] is not None else len(x)
        flags = (x == None, x != None)     # noqa: E711
        return x[:n].sum() + (0.0 if flags[0] else 1.0) + (1.0 if flags[1] else 0.0)

    assert _function(f, False)(X, STEP) == X.sum() + 2.0


# -- converted code run eagerly keeps NumPy's behaviour ---------------------------------------

class _Shaped:
    """A value whose first dimension reads as None, outside any trace."""
    shape = (None,)

    def __getitem__(self, i):
        return float(i)


def test_converted_code_run_eagerly_keeps_numpys_reading():
    # NumPy: arange(0, None, 2) is arange(0, 0, 2), empty; arange(2, None) is arange(2)
    for fn in (_arange_stop_py_step, _arange_tensor_start):
        assert ag.to_graph(fn)(_Shaped(), 2) == fn(_Shaped(), 2)
    assert ag.to_graph(lambda x: np.eye(3, x.shape[0]))(_Shaped()).shape == (3, 3)
    y = np.arange(5.0)   # and Python's: a None slice bound is no bound, a None index an axis
    assert ag.to_graph(lambda x: y[:x.shape[0]])(_Shaped()).shape == (5,)
    assert ag.to_graph(lambda x: y[x.shape[0]])(_Shaped()).shape == (1, 5)
