"""Each call of a Function returns fresh Python containers, as the Python function does.

The reference is the original Python function: called twice, it returns two results that
share no list, dict, tuple or set; mutating the first never changes the second. The same
must hold for the Function (its trace is run again, but the Python part of its result was
made once, while tracing), for its ConcreteFunctions, and for constant arrays it returns.
"""

import collections
import copy
import dataclasses

import numpy as np
import pytest

import autograph as ag

Pair = collections.namedtuple("Pair", "a b")


@dataclasses.dataclass
class Box:
    items: list
    value: object


def _containers(x, out=None):
    """Every mutable container (and array) inside `x`, by identity."""
    out = [] if out is None else out
    if isinstance(x, (list, dict, set, bytearray, np.ndarray)) or dataclasses.is_dataclass(x):
        out.append(x)
    if isinstance(x, dict):
        for v in x.values():
            _containers(v, out)
    elif isinstance(x, (list, tuple, set)):
        for v in x:
            _containers(v, out)
    elif dataclasses.is_dataclass(x):
        for f in dataclasses.fields(x):
            _containers(getattr(x, f.name), out)
    return out


def _mutate(x):
    """Change every container inside `x` in place (what a caller might do)."""
    for c in _containers(x):
        if isinstance(c, list):
            c.append("mutated")
        elif isinstance(c, dict):
            c["mutated"] = True
        elif isinstance(c, set):
            c.add("mutated")
        elif isinstance(c, bytearray):
            c.extend(b"!")
        elif isinstance(c, np.ndarray) and c.size and c.flags.writeable:
            c.flat[0] = -12345


def _equal(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray) or isinstance(a, np.generic):
        return np.array_equal(np.asarray(a), np.asarray(b))
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if dataclasses.is_dataclass(a):
        return all(_equal(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b


def py_list(x):
    return [1, 2, 3]


def py_dict(x):
    return {"b": [1], "a": {"c": (2, [3])}}


def nested_mixed(x):
    return {"z": [x * 2, {"k": [x + 1, 5]}], "a": (x, [7, "s"])}


def tuple_of_lists(x):
    return ([x], [x + 1, []])


def with_set(x):
    return [{1, 2}, bytearray(b"ab"), x]


def named(x):
    return Pair([x], {"q": [1]})


def boxed(x):
    return Box([x, 1], {"v": [2]})


def empty_containers(x):
    return ([], {}, (), [[]])


def constant_array(x):
    return np.zeros(3), np.arange(4) * 2, x


def list_of_arrays(x):
    return [x, x * 2]


def dict_of_arrays(x):
    return {"b": x, "a": x - 1}


CASES = [py_list, py_dict, nested_mixed, tuple_of_lists, with_set, named, boxed,
         empty_containers, constant_array, list_of_arrays, dict_of_arrays]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_each_call_returns_fresh_containers_like_python(fn):
    f = ag.function(fn)
    first = f(np.arange(3.0))   # a new argument each call: the test mutates what it gets
    assert _equal(first, fn(np.arange(3.0)))
    before = copy.deepcopy(first)
    _mutate(first)
    second = f(np.arange(3.0))
    # the next call is unaffected, as the next Python call is
    assert _equal(second, before)
    assert _equal(second, fn(np.arange(3.0)))
    ids_first = {id(c) for c in _containers(first)}
    assert not any(id(c) in ids_first for c in _containers(second))


@pytest.mark.parametrize("fn", [py_list, nested_mixed, constant_array, named],
                         ids=lambda f: f.__name__)
def test_concrete_function_calls_return_fresh_containers(fn):
    conc = ag.function(fn).get_concrete_function(ag.TensorSpec([3], np.float64))
    first = conc(np.arange(3.0))
    before = copy.deepcopy(first)
    _mutate(first)
    second = conc(np.arange(3.0))
    assert _equal(second, before) and _equal(second, fn(np.arange(3.0)))
    ids_first = {id(c) for c in _containers(first)}
    assert not any(id(c) in ids_first for c in _containers(second))


def test_fresh_results_on_the_fast_path_and_the_general_path():
    """Python-value arguments (fast path with a literal) and structured arguments (general
    path) both rebuild the result."""
    f = ag.function(lambda x, n: [x] * n)
    a = f(np.float64(1.0), 2)
    a.append(None)
    assert len(f(np.float64(1.0), 2)) == 2
    g = ag.function(lambda d: {"s": [d["x"]]})
    r = g({"x": np.ones(2)})
    r["s"].clear()
    assert len(g({"x": np.ones(2)})["s"]) == 1


def test_returned_objects_are_shared_like_the_traced_value():
    """Objects that are not containers (the trace returned them) are returned as they are:
    the trace cannot make new ones; identity is kept like tf.function does."""
    marker = object()
    f = ag.function(lambda x: (x, marker))
    assert f(np.ones(1))[1] is marker and f(np.ones(1))[1] is marker


def test_constant_outputs_are_writable_copies():
    f = ag.function(constant_array)
    a, b, _ = f(np.ones(2))
    a[0] = 5.0
    b[0] = 7
    a2, b2, _ = f(np.ones(2))
    assert a2[0] == 0.0 and b2[0] == 0


def test_dict_results_keep_python_key_order():
    f = ag.function(dict_of_arrays)
    assert list(f(np.ones(2))) == list(dict_of_arrays(np.ones(2))) == ["b", "a"]
    g = ag.function(py_dict)
    assert list(g(np.ones(2))) == ["b", "a"]


def with_defaultdict(x):
    d = collections.defaultdict(list)
    d["a"].append(1)
    d["b"].append(x)
    return d


def with_counter(x):
    return collections.Counter("abca"), x


def with_ordered_dict(x):
    return collections.OrderedDict([("b", [x]), ("a", 1)])


@pytest.mark.parametrize("fn", [with_defaultdict, with_counter, with_ordered_dict],
                         ids=lambda f: f.__name__)
def test_dict_subclasses_come_back_as_themselves(fn):
    f = ag.function(fn)
    first = f(np.arange(3.0))
    want = fn(np.arange(3.0))
    assert _equal(first, want)
    for got, ref in zip(nest_dicts(first), nest_dicts(want)):
        assert type(got) is type(ref) and list(got) == list(ref)
        assert getattr(got, "default_factory", None) is getattr(ref, "default_factory", None)
    _mutate(first)
    second = f(np.arange(3.0))
    assert _equal(second, want)


def nest_dicts(x):
    return [x] if isinstance(x, dict) else [d for d in x if isinstance(d, dict)]


def test_nest_rebuilds_dict_subclasses():
    from autograph.runtime.ir import nest
    d = collections.defaultdict(int, {"k": 1, "a": 2})
    packed = nest.pack_sequence_as(d, [10, 20])   # leaves in sorted key order: a, k
    assert type(packed) is collections.defaultdict and packed.default_factory is int
    assert dict(packed) == {"k": 20, "a": 10} and list(packed) == ["k", "a"]
    c = nest.pack_sequence_as(collections.Counter("aab"), [5, 6])
    assert type(c) is collections.Counter and dict(c) == {"a": 5, "b": 6}
