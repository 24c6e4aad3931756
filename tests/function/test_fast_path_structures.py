"""Calls with lists, tuples, dicts, namedtuples and dataclasses of arrays take the fast path
(autograph.function.fast_args): the second call with the same structure never reaches the general
path, and every call computes what the Python function computes."""

import collections
import dataclasses

import numpy as np
import pytest

import autograph as ag
from autograph.function import fast_args

Pair = collections.namedtuple("Pair", "p q")


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: np.ndarray
    scale: float = 1.0


def with_dict(x, cfg):
    return x * cfg["w"] + cfg["b"]


def with_list(xs):
    return xs[0] + 2 * xs[1] - xs[2]


def with_nested(x, tree):
    return x + tree[0]["a"][1] * tree[1].p - tree[1].q + tree[2]


def with_dataclass(x, params):
    return (x @ params.w + params.b) * params.scale


def with_mode(x, opts):
    return x * 2 if opts["double"] else x + opts["k"]


def _arrays(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=s) for s in shapes]


def _calls(seed):
    x, w, b, c, d = _arrays(seed, (3,), (3,), (3,), (3, 3), (3,))
    return [
        (with_dict, (x, {"w": w, "b": b})),
        (with_dict, (x, {"b": b, "w": w})),                     # another key order
        (with_list, ([x, w, b],)),
        (with_list, ((x, w, b),)),
        (with_nested, (x, ({"a": [w, b]}, Pair(b, w), np.float64(seed)))),
        (with_dataclass, (x, Params(c, d, 0.5))),
        (with_dataclass, (x, Params(c, d, 2.0))),                # a Python field changes
        (with_mode, (x, {"double": True, "k": 1})),
        (with_mode, (x, {"double": False, "k": 3})),
    ]


@pytest.fixture
def counting(monkeypatch):
    """How many calls reach the general path (Function._call)."""
    count = [0]
    original = ag.Function._call

    def _call(self, args, kwargs):
        count[0] += 1
        return original(self, args, kwargs)
    monkeypatch.setattr(ag.Function, "_call", _call)
    return count


def test_structured_calls_match_python_and_take_the_fast_path(counting):
    functions = {}
    for seed in range(5):
        if seed == 2:   # (a new trace forgets the fast entries: two rounds learn them all)
            counting[0] = 0
        for fn, args in _calls(seed):
            f = functions.setdefault(fn, ag.function(fn))
            np.testing.assert_allclose(f(*args), fn(*args))
    assert counting[0] == 0


def test_a_structure_with_other_objects_takes_the_general_path(counting):
    f = ag.function(lambda x, cfg: x * cfg["w"])
    x = np.ones(2)
    for _ in range(3):
        np.testing.assert_allclose(f(x, {"w": np.float64(2.0), "tag": object()}), 2 * x)
    assert counting[0] == 3


def test_changed_dtype_or_shape_in_a_structure_retraces():
    f = ag.function(with_dict)
    x = np.ones(3)
    f(x, {"w": np.ones(3), "b": np.ones(3)})
    out = f(x, {"w": np.ones(3, np.float32), "b": np.ones(3)})
    assert out.dtype == np.float64 and f.experimental_get_tracing_count() == 2
    out = f(np.ones((2, 3)), {"w": np.ones(3), "b": np.ones(3)})
    assert out.shape == (2, 3) and f.experimental_get_tracing_count() == 3


def test_key_walks_leaves_in_the_graphs_order():
    from autograph.runtime.ir import nest
    x, w, b = _arrays(0, (2,), (2,), (2,))
    tree = ({"z": w, "a": [x, 3], "m": Pair(b, None)}, Params(w, b))
    key, arrays = fast_args.key((tree,), {})
    assert [id(a) for a in arrays] == [id(a) for a in nest.flatten(tree) if isinstance(a, np.ndarray)]
    assert fast_args.key(({"a": x, "b": object()},), {}) is None
    assert fast_args.key((collections.OrderedDict(a=x),), {}) is None
    hash(key)
