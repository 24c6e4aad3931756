"""ConcreteFunction's call fast path (arrays seen before skip binding and checks) agrees with
its checked path: same results, same errors, and every case it must not take falls back."""

import numpy as np
import pytest

import autograph as ag


def _blend(x, y):
    return x * 2.0 + y


def _checked(concrete, *args, **kwargs):
    """The result of the checked path, whatever the fast path holds."""
    return concrete._call(args, kwargs)


def _error(fn, *args, **kwargs):
    with pytest.raises(TypeError) as info:
        fn(*args, **kwargs)
    return str(info.value)


def test_repeated_array_calls_take_the_fast_path_and_agree():
    conc = ag.function(_blend).get_concrete_function(np.ones(3), np.float64(1.0))
    x, y = np.arange(3.0), np.float64(0.5)
    first = conc(x, y)                                  # checked, then remembered
    assert len(conc._fast) == 1
    for xs in (x, np.array([4.0, 5.0, 6.0]), np.zeros(3)):
        got = conc(xs, y)
        np.testing.assert_array_equal(got, xs * 2.0 + y)
        np.testing.assert_array_equal(got, _checked(conc, xs, y))
    np.testing.assert_array_equal(first, x * 2.0 + y)
    assert len(conc._fast) == 1


def test_bad_arguments_raise_the_same_errors_after_the_fast_path_is_warm():
    conc = ag.function(_blend).get_concrete_function(np.ones(3), np.float64(1.0))
    before = [_error(conc, np.ones(4), np.float64(1.0)),         # wrong shape
              _error(conc, np.ones(3, np.float32), np.float64(1.0)),   # wrong dtype
              _error(conc, np.ones(3)),                            # missing argument
              _error(conc, np.ones(3), np.float64(1.0), 5)]        # too many
    conc(np.ones(3), np.float64(1.0))
    assert conc._fast
    after = [_error(conc, np.ones(4), np.float64(1.0)),
             _error(conc, np.ones(3, np.float32), np.float64(1.0)),
             _error(conc, np.ones(3)),
             _error(conc, np.ones(3), np.float64(1.0), 5)]
    assert after == before
    assert "traced as" in before[0] and "_blend" in before[2]


def test_converted_python_values_keywords_and_scopes_use_the_checked_path():
    conc = ag.function(_blend).get_concrete_function(np.ones(2), np.float64(1.0))
    # a Python list is converted to the spec's dtype: never remembered
    np.testing.assert_array_equal(conc([1.0, 2.0], np.float64(1.0)), [3.0, 5.0])
    assert not conc._fast
    np.testing.assert_array_equal(conc(x=np.ones(2), y=np.float64(1.0)), [3.0, 3.0])
    assert not conc._fast                               # keywords: not remembered
    with ag.device("cpu"):
        np.testing.assert_array_equal(conc(np.ones(2), np.float64(2.0)), [4.0, 4.0])
    assert not conc._fast                               # under a device scope: not remembered
    conc(np.ones(2), np.float64(2.0))
    assert conc._fast
    with ag.device("cpu"):                              # warm, but the scope sends it down
        np.testing.assert_array_equal(conc(np.ones(2), np.float64(3.0)), [5.0, 5.0])


def test_python_parameters_keep_the_checked_path():
    def scaled(x, k):
        return x * k
    conc = ag.function(scaled).get_concrete_function(np.ones(2), 3)
    np.testing.assert_array_equal(conc(np.ones(2), 3), [3.0, 3.0])
    np.testing.assert_array_equal(conc(np.ones(2)), [3.0, 3.0])      # k left out: as traced
    assert not conc._fast
    assert "traced with int value 3" in _error(conc, np.ones(2), 4)


def test_inside_a_trace_a_warm_concrete_function_is_inlined():
    blend = ag.function(_blend)          # kept alive: inlining runs its Python function
    conc = blend.get_concrete_function(np.ones(2), np.float64(1.0))
    conc(np.ones(2), np.float64(1.0))
    assert conc._fast

    @ag.function
    def outer(x):
        return conc(x, np.float64(1.0)) + 1.0
    np.testing.assert_array_equal(outer(np.ones(2)), [4.0, 4.0])
    assert any(n.op == "multiply" for n in outer.get_concrete_function(np.ones(2)).graph.nodes)
