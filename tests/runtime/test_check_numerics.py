"""`ag.config.check_numerics(True)`: the first operation that makes a NaN or an infinity
stops the graph, naming the operation, the user's line and the iteration; with the switch
off (the default) the generated code holds no check at all (read in its source, not timed),
and switching never lets a call run the other mode's code."""

import inspect

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import codegen

CHECK_MARKS = ("ag_nonfinite", "ag_isfinite", "ag_all_finite")


@pytest.fixture(autouse=True)
def quiet():
    with np.errstate(all="ignore"):
        yield
    assert not ag.config.numerics_checked()    # every test leaves the switch off


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(k for k, line in enumerate(lines) if text in line)


def log_loop(x, n):
    s = 0.0
    for i in range(n):
        s += np.log(x[i])
    return s


def array_sqrt(x):
    y = x * 2.0
    return np.sum(np.sqrt(y - 3.0))


def exp_growth(x):
    while x < 1e300:
        x = np.exp(x) + 1.0
    return x


def test_off_by_default_and_then_the_generated_code_holds_no_check():
    assert not ag.config.numerics_checked()
    for fn, args in ((log_loop, (np.arange(1.0, 6.0), np.int64(5))),
                     (array_sqrt, (np.full(4, 2.0),)), (exp_growth, (np.float64(2e300),))):
        graph = ag.function(fn).get_concrete_function(*args).graph
        plain = codegen.source_of(graph)
        assert not any(mark in plain for mark in CHECK_MARKS), plain
        checked = codegen.source_of(graph, check_numerics=True)
        assert "ag_nonfinite" in checked, checked
        with ag.config.check_numerics(True):
            assert codegen.source_of(graph) == checked    # None: the switch decides
        assert codegen.source_of(graph) == plain
        # the checked code computes what the unchecked one does, on finite values
        np.testing.assert_array_equal(codegen.compile_graph(graph, check_numerics=True)(*args),
                                      codegen.compile_graph(graph)(*args))


def test_nan_in_a_loop_names_the_op_line_and_iteration():
    f = ag.function(log_loop)
    x = np.array([1.0, 2.0, 3.0, -1.0, 5.0])
    assert np.isnan(f(x, np.int64(5)))                # unchecked: NaN comes out
    with ag.config.check_numerics(True):
        with pytest.raises(ag.errors.NonFiniteError) as info:
            f(x, np.int64(5))
    message = str(info.value)
    assert isinstance(info.value, FloatingPointError)
    assert message.startswith("check_numerics: log made NaN, from finite inputs"), message
    assert f"{__file__}:{line_of(log_loop, 's += np.log(x[i])')}" in message, message
    assert "iteration 3, which began with s = " in message, message
    assert np.isnan(f(x, np.int64(5)))                # off again: unchecked again


def test_infinity_in_an_array_counts_the_values():
    f = ag.function(array_sqrt)
    with ag.config.check_numerics(True), pytest.raises(ag.errors.NonFiniteError) as info:
        f(np.array([1.0, 2.0, 0.5, 4.0]))
    message = str(info.value)
    assert "sqrt made NaN (2 of 4 values), from finite inputs" in message, message
    assert "np.sum(np.sqrt(y - 3.0))" in message


def test_overflow_in_a_while_loop():
    f = ag.function(exp_growth)
    with ag.config.check_numerics(True), pytest.raises(ag.errors.NonFiniteError) as info:
        f(np.float64(0.5))
    message = str(info.value)
    assert "exp made infinity" in message and "x = np.exp(x) + 1.0" in message, message
    # 0.5 -> 2.6 -> 15.0 -> 3.3e6 -> exp overflows in the 4th iteration (number 3)
    assert "iteration 3" in message, message


def test_a_nan_argument_is_reported_where_it_is_first_computed_with():
    f = ag.function(array_sqrt)
    with ag.config.check_numerics(True), pytest.raises(ag.errors.NonFiniteError) as info:
        f(np.array([1.0, np.nan]))
    message = str(info.value)
    assert "multiply made NaN (1 of 2 values), an input held NaN or infinity already" in \
        message, message
    assert "y = x * 2.0" in message


def test_switching_never_runs_the_other_modes_code():
    f = ag.function(log_loop)
    good, bad = np.arange(1.0, 6.0), np.array([1.0, 2.0, 3.0, -1.0, 5.0])
    n = np.int64(5)
    f(good, n), f(good, n)                  # the fast path remembers the unchecked runner
    conc = f.get_concrete_function(good, n)
    for _ in range(2):
        with ag.config.check_numerics(True):
            for call in (f, conc, f):       # twice: nothing checked is remembered either
                with pytest.raises(ag.errors.NonFiniteError):
                    call(bad, n)
        for call in (f, conc, f):
            assert np.isnan(call(bad, n))


def test_the_switch_restores_and_plain_calls_set_it():
    with ag.config.check_numerics(True):
        assert ag.config.numerics_checked()
        with ag.config.check_numerics(False):
            assert not ag.config.numerics_checked()
        assert ag.config.numerics_checked()
    assert not ag.config.numerics_checked()
    ag.config.check_numerics(True)
    try:
        assert ag.config.numerics_checked()
    finally:
        ag.config.check_numerics(False)


def test_gradients_are_checked_at_the_forward_line():
    def f(x):
        return np.sum(np.sqrt(x))
    with ag.config.check_numerics(True):
        for g in (ag.grad(f), ag.function(ag.grad(f))):
            with pytest.raises(ag.errors.NonFiniteError) as info:
                g(np.array([1.0, 0.0]))
            message = str(info.value)
            assert "divide made infinity (1 of 2 values)" in message, message
            assert "return np.sum(np.sqrt(x))" in message, message
    np.testing.assert_array_equal(ag.grad(f)(np.array([1.0, 0.0])), [0.5, np.inf])


def test_masked_nan_is_reported_like_tensorflow_and_jax():
    def masked(x):
        return np.where(x > 0, np.log(x), 0.0)
    f = ag.function(masked)
    np.testing.assert_array_equal(f(np.array([1.0, -1.0])), [0.0, 0.0])
    with ag.config.check_numerics(True), pytest.raises(ag.errors.NonFiniteError, match="log"):
        f(np.array([1.0, -1.0]))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64,
                                   np.complex128])
def test_the_array_test_agrees_with_isfinite(dtype):
    from autograph.runtime.exec import numerics
    test = numerics._all_finite_numpy if np.dtype(dtype).kind == "f" \
        else numerics._all_finite_numpy_complex
    big = np.finfo(dtype).max
    samples = [np.zeros(0), np.ones(3), np.array(2.0), np.full((2, 3), big),   # sums overflow
               np.array([1.0, np.nan]), np.array([np.inf, -np.inf]), np.array([-np.inf]),
               np.ones((4, 5))[:, ::2], np.array([[1.0, 2.0], [np.nan, 3.0]]).T]
    if np.dtype(dtype).kind == "c":
        samples += [np.array([1 + 1j, complex(0, np.inf)]), np.array([complex(np.inf, np.inf)]),
                    np.array([complex(np.nan, 0)]), np.array([complex(big, big)])]
    for a in samples:
        a = np.asarray(a).astype(dtype)
        assert test(a) == bool(np.isfinite(a).all()), a


def test_a_loaded_model_is_checked_too(tmp_path):
    module = ag.Module()
    module.f = ag.function(array_sqrt, input_signature=[ag.TensorSpec([None], np.float64)])
    ag.saved_model.save(module, str(tmp_path / "m"))
    loaded = ag.saved_model.load(str(tmp_path / "m"))
    bad = np.array([1.0, 0.5])
    assert np.isnan(loaded.f(bad))
    with ag.config.check_numerics(True), pytest.raises(ag.errors.NonFiniteError, match="sqrt"):
        loaded.f(bad)
    assert np.isnan(loaded.f(bad))


def test_checked_calls_have_a_fast_path_of_their_own(monkeypatch):
    """After one checked call, the next with the same argument types skips binding and the
    trace lookup (counted), runs the checked code, and an unchecked call still runs the
    unchecked code (and the reverse)."""
    f = ag.function(log_loop)
    good, bad, n = np.arange(1.0, 6.0), np.array([1.0, 2.0, 3.0, -1.0, 5.0]), np.int64(5)
    binds = []
    real = type(f)._bind
    monkeypatch.setattr(type(f), "_bind", lambda self, *a: binds.append(1) or real(self, *a))
    with ag.config.check_numerics(True):
        f(good, n)
        first = len(binds)
        for _ in range(3):
            f(good, n)
        assert len(binds) == first, binds          # the checked fast path
        with pytest.raises(ag.errors.NonFiniteError, match="log made NaN"):
            f(bad, n)
        assert len(binds) == first, binds
    assert np.isnan(f(bad, n))                     # unchecked: the plain code
    with ag.config.check_numerics(True), pytest.raises(ag.errors.NonFiniteError):
        f(bad, n)
