"""ag.Variable(value, trainable=True, name=None): the attributes, name scopes, and both kept
for Variables made while a function traces."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.variables import name_scope


def test_defaults_and_explicit_attributes():
    v = ag.Variable(1.0)
    assert (v.name, v.trainable) == ("Variable", True)
    w = ag.Variable(np.zeros(2), name="w", trainable=False)
    assert (w.name, w.trainable) == ("w", False)
    assert "trainable=False" in repr(w) and "trainable" not in repr(v)
    with pytest.raises(AttributeError):
        w.trainable = True            # fixed at creation, as in TensorFlow
    with pytest.raises(TypeError, match="trainable must be True or False"):
        ag.Variable(1.0, trainable="yes")


def test_name_scopes_nest_and_end():
    with name_scope("outer") as prefix:
        assert prefix == "outer/"
        with name_scope("inner"):
            assert ag.Variable(1.0, name="k").name == "outer/inner/k"
        assert ag.Variable(1.0).name == "outer/Variable"
    assert ag.Variable(1.0, name="k").name == "k"


def test_attributes_survive_tracing():
    made = {}

    @ag.function
    def f(x):
        if "v" not in made:
            with name_scope("layer"):
                made["v"] = ag.Variable(np.ones(2), name="scale", trainable=False)
        return x * made["v"]

    conc = f.get_concrete_function(ag.TensorSpec([2], np.float64))
    v = made["v"]
    assert (v.name, v.trainable) == ("layer/scale", False)
    reads = [n for n in conc.graph.nodes if n.op == "read_variable"]
    assert [n.attrs["name"] for n in reads] == ["layer/scale"]
    np.testing.assert_array_equal(f(np.array([2.0, 3.0])), [2.0, 3.0])
    assert v.trainable is False and v.name == "layer/scale"
