"""Programs whose arrays change shape in tensor loops (shape_corpus.py) give Python's answer
converted on NumPy values (eager) and traced by ag.function, their loops are really staged,
and their gradients match central differences in every mode (issue 31, items 2, 3, 5)."""

import numpy as np
import pytest

import autograph as ag
from tests.autodiff.modes import MODES, fd, grad
from tests.converters import shape_corpus as corpus

# programs without a tensor loop of their own (the count goes to np.repeat)
NOT_LOOPS = {corpus.repeat_loop_count}


def _run(f, *args):
    try:
        return f(*args)
    except Exception as exc:   # the reference's error, compared by type
        return exc


def _assert_same(out, ref, where):
    if isinstance(ref, BaseException):
        assert isinstance(out, type(ref)), (where, out, ref)
        return
    assert not isinstance(out, BaseException), (where, out)
    if isinstance(ref, tuple):
        assert isinstance(out, tuple) and len(out) == len(ref), (where, out, ref)
        for o, r in zip(out, ref):
            _assert_same(o, r, where)
        return
    o, r = np.asarray(out), np.asarray(ref)
    assert o.shape == r.shape, (where, o.shape, r.shape)
    assert o.dtype == r.dtype, (where, o.dtype, r.dtype)
    np.testing.assert_allclose(o, r, rtol=1e-12, atol=1e-12, err_msg=str(where))


@pytest.mark.parametrize("program", corpus.PROGRAMS, ids=lambda f: f.__name__)
def test_python_eager_and_traced_agree(program):
    converted = ag.to_graph(program)
    traced = corpus.traced(program)
    for n in corpus.NS:
        ref = _run(program, corpus.X.copy(), n)
        _assert_same(_run(converted, corpus.X.copy(), np.int64(n)), ref, ("eager", n))
        _assert_same(_run(traced, corpus.X.copy(), np.int64(n)), ref, ("traced", n))
    # one graph serves every count: the loops are staged, not unrolled per value of n
    assert traced.experimental_get_tracing_count() == 1
    if program not in NOT_LOOPS:
        conc = traced.get_concrete_function(corpus.X, np.int64(1))
        assert "while_loop" in {node.op for node in conc.graph.walk()}


def test_corpus_is_large_and_distinct():
    names = [f.__name__ for f in corpus.PROGRAMS + corpus.GRADIENTS]
    assert len(names) == len(set(names)) and len(corpus.PROGRAMS) >= 60


# programs that write into an array (y[mask] = v): converted code makes that a new value;
# an eager GradientTape runs the code unconverted, where a tensor cannot be written into
IN_PLACE = {corpus.g_mask_assign, corpus.g_mask_assign_scalar}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("program", corpus.GRADIENTS, ids=lambda f: f.__name__)
def test_gradients_match_central_differences(program, mode):
    n = np.int64(3)
    if mode == "eager" and program in IN_PLACE:
        with pytest.raises(TypeError, match="eager GradientTape runs your code unconverted"):
            grad(mode, program, corpus.X, n)
        return
    expected = fd(program, corpus.X, n)
    assert np.any(expected != 0)     # the program depends on x (the check could fail)
    np.testing.assert_allclose(grad(mode, program, corpus.X, n), expected, rtol=1e-6,
                               atol=1e-7)


def _second_on_tapes(program, x, n, watch):
    with ag.GradientTape(persistent=True) as outer:
        x = watch(outer, x)
        with ag.GradientTape(persistent=True) as inner:
            inner.watch(x)
            y = program(x, n)
        dy = inner.gradient(y, x)
        again = inner.gradient(y, x)      # persistent: asked twice, the same answer
    return dy, again, outer.gradient(dy, x)


def _eager_watch(tape, x):
    return tape.watch(x)


def _traced_watch(tape, x):
    tape.watch(x)
    return x


@pytest.mark.parametrize("program", corpus.GRADIENTS, ids=lambda f: f.__name__)
def test_second_gradient_of_a_persistent_tape(program):
    """Eagerly (in-place programs inside ag.function, whose converted code they need)."""
    n = np.int64(2)
    if program in IN_PLACE:
        dy, again, d2 = ag.function(lambda x, n: _second_on_tapes(program, x, n,
                                                                  _traced_watch))(corpus.X, n)
    else:
        dy, again, d2 = _second_on_tapes(program, corpus.X.copy(), n, _eager_watch)
    np.testing.assert_allclose(np.asarray(again), np.asarray(dy))
    np.testing.assert_allclose(np.asarray(dy), fd(program, corpus.X, n), rtol=1e-6, atol=1e-7)
    expected = fd(lambda z: np.sum(fd(program, z, n, h=1e-4)), corpus.X, h=1e-4)
    np.testing.assert_allclose(d2, expected, rtol=1e-3, atol=1e-3)


def shrink_by_static_shape(x, n):
    v = x
    while v.shape[0] > n:      # x.shape holds None for the length the loop changes
        v = v[1:]
    return v


def test_a_length_from_shape_that_the_loop_changes_is_a_clear_error():
    with pytest.raises(TypeError, match=r"len\(x\) or np.size\(x, axis\).*test_shape_corpus"):
        ag.function(shrink_by_static_shape)(corpus.X, np.int64(2))


def changes_dtype(x, n):
    v = x
    i = 0
    while i < n:
        v = v.astype(np.int32)
        i += 1
    return v


def test_a_dtype_change_names_the_variable_and_line():
    from autograph.errors import StagingError
    with pytest.raises(StagingError,
                       match=r"(?s)'v' changes dtype inside the loop.*test_shape_corpus.py:\d+"):
        ag.function(changes_dtype)(corpus.X, np.int64(2))


def test_negative_repeat_counts_raise_as_numpy_does():
    traced = ag.function(lambda x, c: np.repeat(x, c))
    with pytest.raises(ValueError):
        np.repeat(corpus.X[:3], np.array([1, -1, 2]))
    with pytest.raises(ValueError, match="negative"):
        traced(corpus.X[:3], np.array([1, -1, 2]))
    np.testing.assert_array_equal(traced(corpus.X[:3], np.array([1, 0, 2])),
                                  np.repeat(corpus.X[:3], [1, 0, 2]))
