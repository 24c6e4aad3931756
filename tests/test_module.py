"""ag.Module: names, the object-tree walk (variables, trainable_variables, submodules, paths),
Variables' name scopes, and ag.function methods tracing per instance."""

import collections
import gc
import weakref

import numpy as np
import pytest

import autograph as ag
from autograph.module import follow, walk


class Dense(ag.Module):
    def __init__(self, n_in, n_out, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.w = ag.Variable(np.ones((n_in, n_out)), name="w")
            self.b = ag.Variable(np.zeros(n_out), name="b")

    def __call__(self, x):
        return x @ self.w + self.b


class MLP(ag.Module):
    def __init__(self):
        super().__init__()
        self.layers = [Dense(3, 4, name="hidden"), Dense(4, 2, name="out")]
        self.scale = ag.Variable(2.0, name="scale", trainable=False)
        self.config = {"b_key": 1, "a_key": "relu"}


# -- names --------------------------------------------------------------------------------------

def test_default_name_is_snake_case_class_name():
    assert MLP().name == "mlp"

    class SimpleModel(ag.Module):
        pass

    class HTTPLayer2(ag.Module):
        pass

    assert SimpleModel().name == "simple_model"
    assert HTTPLayer2().name == "http_layer2"
    assert Dense(1, 1, name="enc").name == "enc"


@pytest.mark.parametrize("bad", ["1abc", "has space", "a/b", "", "a-b", 3])
def test_invalid_names_raise(bad):
    with pytest.raises(ValueError, match="valid module name"):
        ag.Module(name=bad)


def test_init_not_called_still_has_a_name_and_variables():
    class Count(ag.Module):   # the seed's Count never calls super().__init__()
        def __init__(self):
            self.count = ag.Variable(0)

    c = Count()
    assert c.name == "count"
    assert c.variables == (c.count,)


def test_name_scope_prefixes_variable_names():
    d = Dense(2, 3, name="encoder")
    assert (d.w.name, d.b.name) == ("encoder/w", "encoder/b")
    with d.name_scope:
        with ag.Module(name="inner").name_scope:
            v = ag.Variable(1.0, name="k")
    assert v.name == "encoder/inner/k"
    assert ag.Variable(1.0).name == "Variable"   # scopes end with their block


def test_with_name_scope_decorator():
    class Lazy(ag.Module):
        @ag.Module.with_name_scope
        def make(self):
            return ag.Variable(0.0, name="x")

    assert Lazy(name="lazy").make().name == "lazy/x"


# -- the walk -----------------------------------------------------------------------------------

def test_variables_trainable_and_submodules_in_deterministic_order():
    m = MLP()
    hidden, out = m.layers
    # own leaves first (attributes sorted: layers, scale), then submodules in the order found
    assert [v.name for v in m.variables] == ["scale", "hidden/b", "hidden/w", "out/b", "out/w"]
    assert m.trainable_variables == (hidden.b, hidden.w, out.b, out.w)
    assert m.non_trainable_variables == (m.scale,)
    assert m.submodules == (hidden, out)
    assert all(isinstance(v, ag.Variable) for v in m.variables)
    # the same on every call and for an equal model built again
    assert [v.name for v in MLP().variables] == [v.name for v in m.variables]


def test_containers_tuples_namedtuples_and_dicts_sorted_by_key():
    Pair = collections.namedtuple("Pair", "left right")
    m = ag.Module(name="root")
    a, b, c, d, e = (ag.Variable(float(i), name=n) for i, n in enumerate("abcde"))
    m.table = {"z": a, "y": [b, (c,)], 3: None}            # keys that do not sort: insertion
    m.pair = Pair(left=d, right={"q": e, "p": Dense(1, 1, name="deep")})
    paths = {v.name: p for p, v in walk(m) if isinstance(v, ag.Variable)}
    assert paths["a"] == ("table", "z")
    assert paths["b"] == ("table", "y", 0)
    assert paths["c"] == ("table", "y", 1, 0)
    assert paths["d"] == ("pair", "left")
    assert paths["e"] == ("pair", "right", "q")
    assert paths["deep/w"] == ("pair", "right", "p", "w")
    for path, value in walk(m):
        assert follow(m, path) is value
    sorted_keys = ag.Module(name="s")
    sorted_keys.d = {"b": b, "a": a, "c": c}
    assert [v.name for v in sorted_keys.variables] == ["a", "b", "c"]


def test_deduplication_shared_variables_modules_and_cycles():
    shared = Dense(1, 1, name="shared")
    m = ag.Module(name="top")
    m.first = shared
    m.second = [shared, shared.w]
    m.me = m                                  # a cycle through an attribute
    loop = []
    loop.append(loop)                         # and through a list
    m.loop = loop
    assert m.submodules == (shared,)
    # top's own values come first: shared.w is reached at ("second", 1) before shared is entered
    assert m.variables == (shared.w, shared.b)
    assert [p for p, v in walk(m) if v is shared.w] == [("second", 1)]
    assert [p for p, v in walk(m) if v is shared] == [("first",)]


def test_walk_contract_lists_every_value_and_root_first():
    m = MLP()
    items = walk(m)
    assert items[0] == ((), m)
    by_path = dict(items)
    assert by_path[("config", "a_key")] == "relu" and by_path[("config", "b_key")] == 1
    assert by_path[("layers", 0)] is m.layers[0]
    assert by_path[("layers", 0, "w")] is m.layers[0].w
    shallow = dict(walk(m, recursive=False))
    assert ("layers", 0) in shallow and ("layers", 0, "w") not in shallow
    assert walk(5) == [((), 5)]


def test_variables_created_in_a_traced_method_are_found():
    class Count(ag.Module):
        def __init__(self):
            self.count = None

        @ag.function
        def __call__(self):
            if self.count is None:
                self.count = ag.Variable(0)
            return self.count.assign_add(1)

    c = Count()
    assert c.variables == ()
    assert int(c()) == 1 and int(c()) == 2   # the seed's output
    assert c.variables == (c.count,) and int(c.count.numpy()) == 2


# -- ag.function methods trace per instance -----------------------------------------------------

class Scaler(ag.Module):
    def __init__(self, k):
        super().__init__()
        self.k = ag.Variable(float(k))
        self.traces = 0

    @ag.function
    def __call__(self, x):
        self.traces += 1
        return x * self.k


def test_function_methods_trace_per_instance():
    a, b = Scaler(2), Scaler(3)
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(a(x), [2.0, 4.0])
    np.testing.assert_array_equal(b(x), [3.0, 6.0])
    a(x), b(x), a(x + 1)
    assert (a.traces, b.traces) == (1, 1)    # each instance traced once for this signature
    assert a.__call__ is not b.__call__
    assert a.__call__.experimental_get_tracing_count() == 1
    a.k.assign(10.0)                          # Variables are read when the graph runs
    np.testing.assert_array_equal(a(x), [10.0, 20.0])


def test_a_module_instance_is_not_kept_alive_by_its_traced_method():
    s = Scaler(1)
    s(np.ones(2))
    ref = weakref.ref(s)
    del s
    gc.collect()
    assert ref() is None


def test_seed_simple_model_is_keyed_by_identity():
    class SimpleModel(ag.Module):
        def __init__(self):
            self.bias = 0.
            self.weight = 2.

    @ag.function
    def evaluate(model, x):
        return model.weight * x + model.bias

    model = SimpleModel()
    assert float(evaluate(model, np.float32(10.0))) == 20.0
    model.bias += 5.0
    assert float(evaluate(model, np.float32(10.0))) == 20.0   # the seed's "Didn't change :("
    assert float(evaluate(SimpleModel(), np.float32(10.0))) == 20.0
    assert evaluate.experimental_get_tracing_count() == 2
