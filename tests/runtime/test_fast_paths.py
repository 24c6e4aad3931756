"""The tracing fast paths agree with the general logic they shortcut: node naming (first-use
names), nest's leaf/structure answers by exact type, and the default-graph scope."""

import dataclasses
from collections import namedtuple

import numpy as np
from hypothesis import given, settings, strategies as st

from autograph.runtime.ir import nest
from autograph.runtime.ir.graph import Graph, get_default_graph


def _reference_names(bases):
    """Graph.unique_name's rule written plainly: `base`, else `base_1`, `base_2`, ... where
    the counter of a base starts after the last suffix it handed out."""
    used, counts, out = set(), {}, []
    for base in bases:
        base = base or "node"
        count = counts.get(base, 0)
        name = base if count == 0 else f"{base}_{count}"
        while name in used:
            count += 1
            name = f"{base}_{count}"
        counts[base] = count + 1
        used.add(name)
        out.append(name)
    return out


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["add", "add_1", "add_2", "Const", "Const_1", "", "x", "x_1"]),
                max_size=12))
def test_node_names_follow_the_reference_rule(bases):
    g = Graph("g")
    via_add_node = [g.add_node("Const", (), {"value": np.zeros(()), "weak": False},
                               [(np.dtype("float64"), (), False)], name=b or None).name
                    if b else g.add_node("", (), {}, []).name for b in bases]
    g2 = Graph("g2")
    via_unique_name = [g2.unique_name(b) for b in bases]
    want = _reference_names(bases)
    assert via_add_node == want
    assert via_unique_name == want


@dataclasses.dataclass
class Pair:
    a: object
    b: object


class Holder:
    def __init__(self, items):
        self.items = list(items)

    def __ag_flatten__(self):
        return self.items

    def __ag_unflatten__(self, leaves):
        return Holder(leaves)


class MyInt(int):
    pass


def _general_is_nested(x):
    return isinstance(x, (list, tuple, dict)) or nest._is_dataclass_instance(x) or \
        nest._is_custom(x)


def test_is_nested_fast_answers_agree_with_the_general_rule():
    from autograph.runtime.ir.tensor import Tensor
    g = Graph("g")
    t = g.placeholder("t", np.float64, ())
    values = [1, 1.5, True, 2j, "s", b"b", None, np.float64(1.0), np.int32(3), np.ones(2),
              np.bool_(True), t, MyInt(3), [1], (1,), {"a": 1}, Pair(1, 2), Holder([1]),
              namedtuple("P", "x y")(1, 2), Pair, Holder, object()]
    for v in values:
        assert nest.is_nested(v) == _general_is_nested(v), v
    assert Tensor in nest._LEAF_TYPES
    assert nest.flatten([(t, 1), {"b": Pair(2, [3])}]) == [t, 1, 2, 3]
    packed = nest.pack_sequence_as([(0, 0), [0]], ["a", "b", "c"])
    assert packed == [("a", "b"), ["c"]] and type(packed[0]) is tuple


def test_add_leaf_type_refuses_structures():
    before = nest._LEAF_TYPES
    for cls in (Pair, Holder, list, type("T", (tuple,), {})):
        nest.add_leaf_type(cls)
    assert nest._LEAF_TYPES == before
    assert nest.is_nested(Pair(1, 2)) and nest.is_nested(Holder([]))


def test_default_graph_scopes_nest_and_unwind_on_errors():
    a, b = Graph("a"), Graph("b")
    assert get_default_graph() is None
    with a.as_default() as entered:
        assert entered is a and get_default_graph() is a
        try:
            with b.as_default():
                assert get_default_graph() is b
                raise KeyError("boom")
        except KeyError:
            pass
        assert get_default_graph() is a
    assert get_default_graph() is None
