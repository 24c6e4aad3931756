"""A value NumPy can only hold as an object array (None, a dict, a function) cannot be a
constant of a graph: tracing used to make an object-dtype Const of it and failed later
with an unrelated KeyError ('O') inside dtype promotion. The usual way in is a static
dimension that the signature leaves unknown: `xs.shape[0]` is None while tracing (as in
TensorFlow), so `ag.range(xs.shape[0])` or `range(xs.shape[0])` got None. Each case must
raise a TypeError at the user's line that says what the value is and, for None, names
`len(x)` as the fix; and the fix it names must then work."""

import traceback

import numpy as np
import pytest

import autograph as ag

SPEC = [ag.TensorSpec([None, 3], np.float64)]


def _ag_range(xs):
    s = 0.0
    for t in ag.range(xs.shape[0]):
        s += xs[t, 0]
    return s


def _py_range(xs):
    s = 0.0
    for t in range(xs.shape[0]):
        s += xs[t, 0]
    return s


def _asarray(xs):
    return xs * np.asarray(xs.shape[0])


def _range_step(xs):
    s = 0.0
    for t in ag.range(0, xs.shape[0], 1):
        s += xs[t, 0]
    return s


def _fixed(xs):
    s = 0.0
    for t in range(len(xs)):
        s += xs[t, 0]
    return s


@pytest.mark.parametrize("fn", [_ag_range, _py_range, _asarray, _range_step])
def test_none_is_refused_at_the_users_line(fn):
    f = ag.function(fn, input_signature=SPEC)
    with pytest.raises(TypeError, match="None cannot be a value in a graph") as info:
        f(np.ones((4, 3)))
    assert "len(x)" in str(info.value)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert any(fr.filename == __file__ and fr.name == fn.__name__ for fr in frames)
    assert "KeyError" not in "".join(traceback.format_exception(info.value))


def test_other_objects_name_their_type():
    def f(x):
        return x + ag.constant({"a": 1})

    with pytest.raises(TypeError, match="dict value .* cannot be a value in a graph"):
        ag.function(f)(np.ones(2))


def test_the_named_fix_works():
    xs = np.arange(12.0).reshape(4, 3)
    assert ag.function(_fixed, input_signature=SPEC)(xs) == _fixed(xs)


def test_converted_code_run_eagerly_keeps_pythons_error():
    class Shaped:             # not tracing: range(None) is Python's own TypeError
        shape = (None, 3)

    with pytest.raises(TypeError, match="NoneType"):
        ag.to_graph(_py_range)(Shaped())


def test_ag_range_with_an_explicit_none_bound_is_refused_eagerly():
    with pytest.raises(TypeError, match="got \\(0, None, 1\\)"):
        ag.range(0, None)              # NumPy's arange(0, None) would quietly be empty
    assert list(ag.range(3)) == [0, 1, 2] and list(ag.range(1, 7, 2)) == [1, 3, 5]
