"""The static_dims pass: `x.shape[k]` written straight into an index, a slice bound or a
NumPy argument becomes `ag__.known_dim(x.shape[k])`, which refuses a None (an unknown
dimension) while tracing. There None would silently mean something else: `y[:x.shape[0]]`
took all of y, `y[x.shape[0]]` added an axis, `np.clip(v, 0, x.shape[0])` clipped nothing.
Known dimensions, eager runs and reads into a name are unchanged."""

import traceback

import numpy as np
import pytest

import autograph as ag

MAT = [ag.TensorSpec([None, None], np.float64)]
KNOWN = [ag.TensorSpec([3, 4], np.float64)]
M = np.arange(12.0).reshape(3, 4)
Y = np.arange(10.0) * 0.5


def _upper_of_another(x):
    return Y[:x.shape[0]]                 # took all of Y: 10 values, not 3


def _lower_of_its_own(x):
    return x[x.shape[0]:]                 # took all of x, not none of it


def _negative_step(x):
    return x[:, :x.shape[1]:-1]           # x[:, :4:-1] is empty; x[:, ::-1] is not


def _index(x):
    return Y[x.shape[0]]                  # Y[None]: a new axis, not one value


def _tuple_index(x):
    return np.ones((5, 5))[1, x.shape[1]]


def _clip(x):
    return np.clip(x, 0.0, x.shape[0])    # None: no upper bound


def _random_size(x):
    return np.random.normal(size=x.shape[0]).shape   # size=None: one draw


RNG = np.random.default_rng(0)


def _generator_size(x):
    return RNG.normal(size=x.shape[0]).shape


def _shape_in_a_tuple(x):
    return np.random.uniform(size=(x.shape[0], 2))


def _eye_m(x):
    return np.eye(3, x.shape[1])          # M=None: square


def _item_update(x):
    z = np.zeros(10)
    z[:x.shape[0]] = 1.0                  # would set all ten
    return z


def _names_into_another(x):
    n, m = x.shape                        # names bound only to static dimensions
    return Y[:n]


def _name_into_numpy(x):
    n = x.shape[0]
    return np.clip(x, 0.0, n)


REFUSED = [_names_into_another, _name_into_numpy, _upper_of_another, _lower_of_its_own, _negative_step, _index, _tuple_index, _clip,
           _random_size, _generator_size, _shape_in_a_tuple, _eye_m, _item_update]


@pytest.mark.parametrize("fn", REFUSED, ids=lambda f: f.__name__)
def test_an_unknown_dimension_is_refused_where_none_means_something_else(fn):
    with pytest.raises(TypeError, match="read from x.shape is None") as info:
        ag.function(fn, input_signature=MAT)(M)
    text = str(info.value)
    assert f"{__file__}:" in text and "len(x)" in text, text
    frames = traceback.extract_tb(info.value.__traceback__)
    assert any(fr.filename == __file__ and fr.name == fn.__name__ for fr in frames)


@pytest.mark.parametrize("fn", [f for f in REFUSED if f not in (
    _random_size, _generator_size, _shape_in_a_tuple)], ids=lambda f: f.__name__)
def test_known_dimensions_pass_through(fn):
    np.testing.assert_array_equal(ag.function(fn, input_signature=KNOWN)(M), fn(M))


def test_known_dimensions_pass_through_natively():
    pytest.importorskip("numba")
    f = ag.function(_upper_of_another, input_signature=KNOWN, jit_compile=True)
    np.testing.assert_array_equal(f(M), _upper_of_another(M))


def _own_lengths(x):
    n, m = x.shape
    return x[:x.shape[0]] * 2.0 + x[:, :x.shape[1]] + x[:x.shape[0], :x.shape[1]:2].sum() + \
        x[:n, :m]


def test_a_slice_to_its_own_length_is_left_alone():
    assert "known_dim" not in ag.to_code(_own_lengths)   # None there means the same
    for shape in ((3, 4), (1, 2)):
        x = np.arange(float(np.prod(shape))).reshape(shape)
        np.testing.assert_array_equal(ag.function(_own_lengths, input_signature=MAT)(x),
                                      _own_lengths(x))


def _named(x):
    n = x.shape[0]
    if n is None:                          # TensorFlow's idiom: static, else dynamic
        n = len(x)
    return np.ravel(x)[:n]


def _helper(x, n):
    return np.ravel(x)[:len(x) if n is None else n]


def _passes_to_a_helper(x):
    return _helper(x, x.shape[0])          # a user function may take None on purpose


def _named_or(x):
    n = x.shape[0] or len(x)
    return np.ravel(x)[:n]


def _tested_for_truth(x):
    n = x.shape[0]
    return np.ravel(x)[:n if n else len(x)]


@pytest.mark.parametrize("fn", [_named, _passes_to_a_helper, _named_or, _tested_for_truth],
                         ids=lambda f: f.__name__)
def test_reads_that_may_be_none_on_purpose_are_unchanged(fn):
    code = ag.to_code(fn)
    assert "known_dim" not in code, code
    for spec in (MAT, KNOWN):
        np.testing.assert_array_equal(ag.function(fn, input_signature=spec)(M), fn(M))


def _rest_of_shape(x):
    return np.zeros(x.shape[1:]) + x[0]


def test_a_slice_of_the_shape_is_a_tuple_left_alone():
    assert "known_dim" not in ag.to_code(_rest_of_shape)
    np.testing.assert_array_equal(ag.function(_rest_of_shape, input_signature=KNOWN)(M),
                                  _rest_of_shape(M))


def test_generated_code_shows_the_check():
    code = ag.to_code(_upper_of_another)
    assert "Y[:ag__.known_dim(x.shape[0])]" in code, code
    assert "Y[:ag__.known_dim(n)]" in ag.to_code(_names_into_another)
    assert "np.clip(x, 0.0, ag__.known_dim(x.shape[0]))" in ag.to_code(_clip)


class _Shaped:
    shape = (None, None)


def test_converted_code_run_eagerly_keeps_pythons_meaning():
    for fn in (_upper_of_another, _index, _tuple_index):
        np.testing.assert_array_equal(ag.to_graph(fn)(_Shaped()), fn(_Shaped()))
    for fn in REFUSED[:7] + [_clip, _eye_m, _item_update]:
        np.testing.assert_array_equal(ag.to_graph(fn)(M), fn(M))
