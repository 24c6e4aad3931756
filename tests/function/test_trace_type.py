"""Trace keys, TensorSpec ordering, dispatch to the most specific trace, dropping traces of
dead objects, the __tracing_type__ protocol, and retracing diagnostics."""

import collections
import dataclasses
import gc
import warnings

import numpy as np
import pytest

import autograph as ag
from autograph.function import trace_type as tt
from autograph.function import RetracingWarning

key = tt.make_key
Point = collections.namedtuple("Point", "x y")


@dataclasses.dataclass
class Pair:
    a: object
    b: object


# -- keys --------------------------------------------------------------------------------------

def test_arrays_are_keyed_by_dtype_and_shape():
    assert key(np.zeros(3)) == key(np.ones(3))
    assert key(np.zeros(3)) != key(np.zeros(4))
    assert key(np.zeros(3)) != key(np.zeros(3, np.float32))
    assert key(np.int32(5)) == key(np.array(7, np.int32))     # NumPy scalar == 0-d array
    assert key(np.zeros(3)) == ag.TensorSpec((3,), np.float64)


def test_python_values_are_keyed_by_type_and_value():
    assert key(1) == key(1) and key(1) != key(2)
    assert key(1) != key(1.0) and key(1) != key(True)     # 1 == 1.0 == True in Python
    assert key("relu") == key("relu") and key(None) == key(None)
    assert key(np.float64(1.0)) != key(1.0)                # NumPy scalars are arrays


def test_structures_are_keyed_by_structure_and_leaves():
    assert key([1, np.zeros(2)]) == key([1, np.ones(2)])
    assert key([1, 2]) != key([2, 1])
    assert key([1, 2]) != key((1, 2))
    assert key([1, 2]) != key([1, 2, 3])
    assert key({"a": 1, "b": np.zeros(2)}) == key({"b": np.ones(2), "a": 1})   # order ignored
    assert key({"a": 1}) != key({"b": 1})
    assert key(Point(1, np.zeros(2))) == key(Point(1, np.ones(2)))
    assert key(Point(1, 2)) != key((1, 2))
    assert key(Pair(1, np.zeros(2))) == key(Pair(1, np.ones(2)))
    assert key(Pair(1, 2)) != key(Pair(2, 2))


def test_variables_are_keyed_by_identity():
    v, w = ag.Variable(1.0), ag.Variable(1.0)
    assert key(v) == key(v)
    assert key(v) != key(w)


class Plain:
    pass


@dataclasses.dataclass(frozen=True, eq=True)
class Config:     # a frozen dataclass is a structure; use a plain value class for equality
    n: int


class Settings:
    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return isinstance(other, Settings) and other.n == self.n

    def __hash__(self):
        return hash(self.n)


def test_other_objects_by_identity_then_equality():
    a, b = Plain(), Plain()
    assert key(a) == key(a) and key(a) != key(b)
    assert key(Settings(1)) == key(Settings(1))     # equal objects share a key
    assert key(Settings(1)) != key(Settings(2))


def test_tensorspec_ordering():
    s2 = ag.TensorSpec([2], np.int32)
    sn = ag.TensorSpec([None], np.int32)
    su = ag.TensorSpec(None, np.int32)
    assert s2.is_subtype_of(sn) and sn.is_subtype_of(su) and s2.is_subtype_of(su)
    assert not sn.is_subtype_of(s2)
    assert not s2.is_subtype_of(ag.TensorSpec([2], np.int64))
    assert sn.is_compatible_with(np.zeros(5, np.int32))
    assert not sn.is_compatible_with(np.zeros((5, 1), np.int32))
    assert not sn.is_compatible_with(np.zeros(5, np.float32))
    assert s2.most_specific_common_supertype([ag.TensorSpec([3], np.int32)]) == sn
    assert ag.TensorSpec([2, 3]).most_specific_common_supertype(
        [ag.TensorSpec([2, 4])]) == ag.TensorSpec([2, None])
    assert s2.most_specific_common_supertype([ag.TensorSpec([2, 2], np.int32)]) == su
    assert s2.most_specific_common_supertype([ag.TensorSpec([2], np.float32)]) is None
    assert repr(sn) == "TensorSpec(shape=(None,), dtype=int32, name=None)"
    assert repr(ag.TensorSpec(None)) == "TensorSpec(shape=<unknown>, dtype=float32, name=None)"
    assert tt.supertype(key([1, np.zeros(2)]), key([1, np.zeros(3)])) == \
        key([1, ag.TensorSpec([None], np.float64)])
    assert tt.supertype(key(1), key(2)) is None


# -- dispatch ----------------------------------------------------------------------------------

def test_most_specific_trace_wins():
    @ag.function
    def f(x):
        return x + 1, x.shape     # the static shape seen while tracing passes through

    general = f.get_concrete_function(ag.TensorSpec([None], np.float64))
    specific = f.get_concrete_function(ag.TensorSpec([2], np.float64))
    assert general is not specific
    out, shape = f(np.zeros(2))
    assert shape == (2,)
    np.testing.assert_array_equal(out, [1.0, 1.0])
    out, shape = f(np.zeros(5))
    assert shape == (None,)
    np.testing.assert_array_equal(out, np.ones(5))
    assert f.experimental_get_tracing_count() == 2
    # a dtype no trace covers traces anew
    _, shape = f(np.zeros(5, np.float32))
    assert shape == (5,) and f.experimental_get_tracing_count() == 3


def test_structures_and_kwargs_in_calls():
    @ag.function
    def f(xs, scale=1.0, *, offset):
        return {"total": (xs[0] + xs[1]["b"]) * scale + offset, "n": len(xs)}

    x = np.arange(3.0)
    out = f([x, {"b": x}], offset=np.float64(1.0))
    np.testing.assert_array_equal(out["total"], 2 * x + 1)
    assert out["n"] == 2
    out = f([x + 1, {"b": x}], 2.0, offset=np.float64(0.0))
    np.testing.assert_array_equal(out["total"], (2 * x + 1) * 2)
    assert f.experimental_get_tracing_count() == 2
    f([x * 3, {"b": x}], 2.0, offset=np.float64(5.0))
    assert f.experimental_get_tracing_count() == 2


# -- dead objects --------------------------------------------------------------------------

def test_trace_of_a_dead_object_is_dropped():
    @ag.function
    def f(obj, x):
        return x * obj.k

    a = Plain()
    a.k = 2.0
    assert f(a, np.float64(1.0)) == 2.0
    assert len(f._traces) == 1
    del a
    gc.collect()
    assert len(f._traces) == 0
    b = Plain()
    b.k = 3.0
    assert f(b, np.float64(1.0)) == 3.0
    assert f.experimental_get_tracing_count() == 2


class Fruit:
    flavor = np.array([0, 0])


class Apple(Fruit):
    flavor = np.array([1, 2])


class Mango(Fruit):
    flavor = np.array([3, 4])


class FruitWithTraceType:
    def __tracing_type__(self):
        return type(self)     # instances of one class share a trace


class AppleWithTraceType(FruitWithTraceType):
    flavor = np.array([1, 2])


class MangoWithTraceType(FruitWithTraceType):
    flavor = np.array([3, 4])


def test_tracing_type_protocol():
    @ag.function
    def get_mixed_flavor(fruit_a, fruit_b):
        return fruit_a.flavor + fruit_b.flavor

    # plain objects: keyed by identity, and they die right after the call
    get_mixed_flavor(Apple(), Mango())
    get_mixed_flavor(Apple(), Mango())
    assert get_mixed_flavor.experimental_get_tracing_count() == 2
    # with the protocol, instances of the same classes reuse one trace
    np.testing.assert_array_equal(
        get_mixed_flavor(AppleWithTraceType(), MangoWithTraceType()), [4, 6])
    np.testing.assert_array_equal(
        get_mixed_flavor(AppleWithTraceType(), MangoWithTraceType()), [4, 6])
    assert get_mixed_flavor.experimental_get_tracing_count() == 3


# -- diagnostics ------------------------------------------------------------------------------

def test_retracing_warning_names_the_changed_python_argument():
    @ag.function
    def f(x, n):
        return x * n

    x = np.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(5):
            f(x, n)
        assert not caught
        f(x, 10)
        f(x, 20)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    assert all(w.category is RetracingWarning for w in caught)
    assert "traced 6 times" in messages[0]
    assert "argument `n`: Python int 4 -> 10; pass an array to avoid retracing" in messages[0]
    assert "argument `n`: Python int 10 -> 20" in messages[1]
    assert caught[0].filename == __file__     # it points at the user's call


def test_retracing_warning_names_shape_and_dtype_changes():
    @ag.function
    def f(x):
        return x

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 7):
            f(np.zeros(n))
        f(np.zeros(6, np.float32))
    messages = [str(w.message) for w in caught]
    assert "argument `x`: shape (5,) -> (6,); pass reduce_retracing=True" in messages[0]
    assert "argument `x`: dtype float64 -> float32" in messages[1]


def test_explain_change_paths_into_structures():
    old = key({"a": [1, np.zeros(2)]})
    new = key({"a": [1, np.zeros(3)]})
    assert tt.explain_change(old, new, "cfg") == [
        "argument `cfg['a'][1]`: shape (2,) -> (3,); pass reduce_retracing=True or an "
        "input_signature with None dims to reuse one trace"]


def test_input_signature_must_hold_specs():
    with pytest.raises(TypeError, match="input_signature of f must hold ag.TensorSpec"):
        @ag.function(input_signature=[np.zeros(2)])
        def f(x):
            return x


# -- properties of the ordering ------------------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

dims = st.one_of(st.none(), st.integers(0, 4))
shapes = st.one_of(st.none(), st.lists(dims, max_size=3).map(tuple))
specs = st.builds(ag.TensorSpec, shapes, st.sampled_from([np.int32, np.float64]))
concrete_shapes = st.lists(st.integers(0, 4), max_size=3).map(tuple)


@settings(max_examples=200, deadline=None)
@given(specs, specs, concrete_shapes)
def test_supertype_covers_both_and_subtype_agrees_with_arrays(a, b, shape):
    common = a.most_specific_common_supertype([b])
    if a.dtype != b.dtype:
        assert common is None
        return
    assert a.is_subtype_of(common) and b.is_subtype_of(common)
    assert tt.is_subtype(a, common) and tt.supertype(a, b) == common
    # an array fits a spec exactly when its exact spec is a subtype of it
    array = np.zeros(shape, a.dtype)
    assert a.is_compatible_with(array) == ag.TensorSpec(shape, a.dtype).is_subtype_of(a)
    if a.is_compatible_with(array):
        assert common.is_compatible_with(array)
    # the most specific of two comparable specs scores at least as high
    if a.is_subtype_of(b):
        assert tt.specificity(a) >= tt.specificity(b)
