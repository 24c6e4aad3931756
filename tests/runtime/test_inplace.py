"""In-place updates (`x[i] = v`, `x[mask] = 0`, `x[i, j] += v`, `np.add.at(x, idx, v)`):
traced, they compute what eager NumPy computes, on the interpreter and on codegen (plain
and optimised graphs); on Python values converted code behaves exactly like the original,
aliasing included."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.exec import codegen, interpreter, optimize
from autograph.runtime.ir import nest
from autograph.runtime.ir.graph import Graph
from autograph.runtime.ir.tensor import Tensor


def executors(fn, *args):
    """fn traced (converted) on placeholders like `args`, run by the interpreter and by
    codegen on the plain and the optimised graph: the three flat results."""
    conv = ag.to_graph(fn)
    g = Graph("f")
    with g.as_default():
        phs = [g.placeholder(f"a{i}", np.asarray(a).dtype, np.shape(a)) for i, a in enumerate(args)]
        g.set_outputs([t for t in nest.flatten(conv(*phs)) if isinstance(t, Tensor)])
    args = [np.asarray(a) for a in args]
    runs = [list(interpreter.run(g, args, None, check=True))]
    for graph in (g, optimize.optimize(g)):
        runs.append(list(codegen.compile_graph(graph, None)(*args)))
    return runs


def same_as_numpy(fn, *args):
    want = fn(*[np.array(a, copy=True) for a in args])
    got_fn = ag.function(fn)(*args)
    for got in [got_fn] + [r[0] for r in executors(fn, *args)]:
        got = np.asarray(got)
        assert got.dtype == np.asarray(want).dtype, (got.dtype, np.asarray(want).dtype)
        np.testing.assert_array_equal(got, want)
    return want


# -- the three programs the issue names ---------------------------------------------------------

def kmeans_step(points, centroids, k):
    d = np.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=-1)
    labels = np.argmin(d, axis=1)
    new = np.zeros_like(centroids)
    for j in range(k):
        members = labels == j
        count = np.sum(members)
        if count > 0:
            new[j] = np.sum(points * members[:, None], axis=0) / count
        else:
            new[j] = centroids[j]
    return new


@pytest.mark.parametrize("k_tensor", [False, True])
def test_kmeans_step(k_tensor):
    rng = np.random.default_rng(0)
    points = rng.normal(size=(40, 2))
    centroids = points[:3].copy()
    centroids[2] = 100.0   # an empty cluster: the else branch
    k = np.int64(3) if k_tensor else 3
    want = kmeans_step(points, centroids, 3)
    f = ag.function(kmeans_step)
    got = f(points, centroids, k)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    for run in executors(kmeans_step, points, centroids, np.int64(3)):
        np.testing.assert_allclose(run[0], want, rtol=1e-12)
    # a few steps as a tensor loop: centroids is loop state
    assert "setitem" in ag.to_code(kmeans_step)


def relu_in_place(x):
    y = x.copy()
    y[y < 0] = 0
    return y


def test_masked_update():
    x = np.array([[-1.0, 2.0], [3.0, -4.0]])
    same_as_numpy(relu_in_place, x)
    assert np.all(x[[0, 1], [0, 1]] < 0)   # the argument is not changed


BINS = 8


def histogram(values, bins=BINS):
    counts = np.zeros(bins, dtype=np.int64)
    idx = np.clip((values * bins).astype(np.int64), 0, bins - 1)
    np.add.at(counts, idx, 1)
    return counts


def test_histogram_add_at():
    values = np.random.default_rng(1).random(200)
    want = same_as_numpy(histogram, values)
    assert want.sum() == 200


# -- index kinds against eager NumPy ----------------------------------------------------------

X = np.arange(24.0).reshape(4, 6)
UPDATES = {
    "int": lambda x: _set(x, 1, -1.0),
    "negative int": lambda x: _set(x, -1, 7.0),
    "int pair": lambda x: _set(x, (2, -3), 5.5),
    "slice": lambda x: _set(x, slice(1, 3), 0.0),
    "step slice": lambda x: _set(x, (slice(None), slice(None, None, 2)), 9.0),
    "backward slice": lambda x: _set(x, (slice(None, None, -2), 0), 1.0),
    "ellipsis": lambda x: _set(x, (Ellipsis, 1), np.arange(4.0)),
    "none": lambda x: _set(x, (None, 0), np.arange(6.0)),
    "broadcast row": lambda x: _set(x, slice(None), np.arange(6.0)),
    "mask": lambda x: _set(x, x > 10, 0.0),
    "mask values": lambda x: _set(x, x[:, 0] > 5, np.ones(6)),
    "int array": lambda x: _set(x, np.array([0, 2]), -2.0),
    "int array with repeats": lambda x: _set(x, np.array([3, 3, 1]), np.arange(6.0)),
    "fancy pair": lambda x: _set(x, (np.array([0, 1]), np.array([5, -1])), 3.0),
    "int dtype cast": lambda x: _set(x.astype(np.int64), 0, 2.7),
    "float32 target": lambda x: _set(x.astype(np.float32), 1, np.float64(1.0) / 3),
}


def _set(x, key, v):
    x = x.copy()
    x[key] = v
    return x


@pytest.mark.parametrize("name", sorted(UPDATES))
def test_setitem_index_kinds(name):
    same_as_numpy(UPDATES[name], X)


def aug_updates(x, i, j):
    x = x.copy()
    x[i, j] += 10.0
    x[1:3] *= 2
    x[x > 40] -= 1.0
    x[-1] /= 4
    x[i] **= 2
    return x


def test_augmented_updates_with_tensor_indices():
    same_as_numpy(aug_updates, X, np.int64(2), np.int64(-1))


def test_augmented_slice_cast_error_as_numpy():
    def f(x):
        x[1:3] += 1.5
        return x
    with pytest.raises(Exception):
        f(np.arange(4))
    with pytest.raises(TypeError):
        ag.function(f)(np.arange(4))


def ufunc_ats(x, idx, v):
    x = x.copy()
    np.add.at(x, idx, v)
    np.subtract.at(x, idx, 1.0)
    np.maximum.at(x, idx, 3.0)
    np.multiply.at(x, (idx, 0), 2.0)
    return x


def test_ufunc_at_accumulates_repeated_indices():
    same_as_numpy(ufunc_ats, X, np.array([0, 0, 3, -1, 0]), np.float64(0.5))


def dynamic_bounds(x, a, b):
    x = x.copy()
    x[a:b] = -x[a:b]
    x[:, a] = 0.0
    return x


@pytest.mark.parametrize("a,b", [(1, 3), (-3, -1), (0, 10), (3, 1)])
def test_slice_bounds_from_tensors(a, b):
    same_as_numpy(dynamic_bounds, X, np.int64(a), np.int64(b))


# -- branches and loops ----------------------------------------------------------------------

def update_in_branch(x, c):
    if c > 0:
        x[0] = 100.0
    else:
        x[-1] = -100.0
    return x


@pytest.mark.parametrize("c", [1, -1])
def test_update_in_tensor_branch(c):
    x = np.arange(5.0)
    same_as_numpy(update_in_branch, x, np.int64(c))
    np.testing.assert_array_equal(x, np.arange(5.0))


def numpy_array_made_inside(n):
    out = np.zeros(5)
    for i in range(n):
        out[i] = i * i
    return out


def test_numpy_array_made_inside_filled_in_tensor_loop():
    same_as_numpy(numpy_array_made_inside, np.int64(4))


def array_made_outside_in_tensor_if(c):
    out = np.zeros(3)
    if c > 0:
        out[0] = 1.0
    else:
        out[1] = 2.0
    return out


@pytest.mark.parametrize("c", [1, -1])
def test_array_made_outside_updated_in_tensor_if(c):
    """Both branches are traced on the same ndarray: the update must not leak."""
    same_as_numpy(array_made_outside_in_tensor_if, np.int64(c))


def list_made_outside_in_tensor_if(c, v):
    out = [0.0, 0.0]
    if c > 0:
        out[0] = v
    else:
        out[1] = v
    return out[0] + 10 * out[1]


@pytest.mark.parametrize("c", [1, -1])
def test_list_made_outside_updated_in_tensor_if(c):
    want = list_made_outside_in_tensor_if(c, 2.0)
    assert ag.function(list_made_outside_in_tensor_if)(np.int64(c), np.float64(2.0)) == want


# -- Python values: the original statement, in place --------------------------------------

def python_updates(seq, d, arr):
    alias_seq, alias_d, alias_arr = seq, d, arr
    seq[0] = "a"
    seq[1:3] = [7]
    seq[-1] += 5
    d[1] = "one"
    d["k"] = d.get("k", 0) + 1
    d[(1, 2)] = 3
    arr[arr > 1] = 0
    arr[0] += 4
    np.add.at(arr, [1, 1], 1)
    return (alias_seq is seq, alias_d is d, alias_arr is arr, seq, d, arr.tolist())


def test_python_values_behave_as_original():
    def fresh():
        return [1, 2, 3, 4], {"k": 1}, np.array([0, 1, 2, 3])
    want = python_updates(*fresh())
    args = fresh()
    got = ag.to_graph(python_updates)(*args)
    assert got == want and got[:3] == (True, True, True)
    assert args[0] == want[3] and args[1] == want[4]   # the caller's objects were changed
    assert args[2].tolist() == want[5]


class Box:
    def __init__(self):
        self.items = [1, 2]


def global_and_closure():
    GLOBAL_LIST[0] = 9
    box = Box()
    box.items[1] = 5
    return GLOBAL_LIST[0] + box.items[1]


GLOBAL_LIST = [0]


def test_globals_and_attribute_owners_unchanged():
    assert ag.to_graph(global_and_closure)() == 14 and GLOBAL_LIST == [9]
    code = ag.to_code(global_and_closure)
    # an attribute's item: the operator updates it (a Variable assigns, a list in place)
    assert "GLOBAL_LIST[0] = 9" in code and "ag__.setitem_attr(box, 'items', 1, 5)" in code


def test_generated_code_rebinds_the_name():
    code = ag.to_code(aug_updates)
    assert "x = ag__.setitem(x, (i, j), 10.0, '+=')" in code
    assert "x = ag__.setitem(x, slice(1, 3, None), 2, '*=')" in code
    assert "x = ag__.ufunc_at(np.add, x, idx, v)" in ag.to_code(ufunc_ats)


def test_dict_string_keys_stay_places():
    def f(a):
        d = {"b": 0}
        if a > 0:
            d["b"] = 1
        return d["b"]
    assert "ag__.item(d, 'b'" in ag.to_code(f)
    assert ag.function(f)(np.int64(1)) == 1


def test_refusals_name_the_problem():
    def f(x):
        x[0] = np.ones(3)
        return x
    with pytest.raises(ValueError, match="broadcast"):
        ag.function(f)(np.zeros((4, 2)))

    def g(x):
        x[9] = 1.0
        return x
    with pytest.raises(IndexError, match="out of bounds"):
        ag.function(g)(np.zeros(4))


# -- attribute-held arrays, Variables, aliases ----------------------------------------------------

class Model:
    """The same program over a NumPy array (eager reference) or an ag.Variable."""

    def __init__(self, make):
        self.w = make(np.zeros(4))

    def step(self, i, v):
        self.w[i] = v
        self.w[0] += 1.0
        self.w[1:3] *= 2.0
        return np.sum(self.w[:] if isinstance(self.w, np.ndarray) else self.w.value)


def test_attribute_held_variable_is_assigned_on_every_call():
    ref, model = Model(np.array), Model(ag.Variable)
    traced = ag.function(model.step)
    for i, v in ((np.int64(2), 3.5), (np.int64(1), -1.0), (np.int64(3), 0.25)):
        want = ref.step(i, v)
        got = traced(i, np.float64(v))
        np.testing.assert_allclose(got, want)
        np.testing.assert_allclose(model.w.numpy(), ref.w)   # the state persists
    assert traced.experimental_get_tracing_count() == 1


def tensor_attribute(x):
    box = Box()
    box.items = x * 2.0
    box.items[0] = -1.0
    box.items[1:] += 1.0
    return box.items


def test_attribute_holding_a_tensor_is_rebound():
    same_as_numpy(tensor_attribute, np.array([1.0, 2.0, 3.0]))


HOLDER = Box()


def writes_a_tensor_into_an_array_attribute(x):
    HOLDER.items[0] = x[0]
    return x


def test_array_attribute_given_a_tensor_is_refused_saying_how():
    HOLDER.items = np.zeros(3)
    with pytest.raises(TypeError, match=r"Box\.items is a NumPy array held by an object.*"
                                        r"ag\.Variable"):
        ag.function(writes_a_tensor_into_an_array_attribute)(np.ones(3))


def aliased(x):
    y = x * 1.0
    z = y
    y[0] = 5.0   # NumPy: z sees it
    return y, z


def test_alias_warning_names_the_other_name_at_the_users_line():
    import warnings
    from autograph.operators.updates import AliasWarning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y, z = ag.function(aliased)(np.array([1.0, 2.0]))
    hits = [w for w in caught if issubclass(w.category, AliasWarning)]
    assert len(hits) == 1
    assert "`y` and `z`" in str(hits[0].message)
    assert hits[0].filename == __file__
    assert hits[0].lineno == aliased.__code__.co_firstlineno + 3
    # what autograph does, as the warning says: the other name keeps the old value
    np.testing.assert_array_equal(y, [5.0, 2.0])
    np.testing.assert_array_equal(z, [1.0, 2.0])
    with warnings.catch_warnings(record=True) as caught:   # a copy is not an alias
        warnings.simplefilter("always")
        ag.function(relu_in_place)(np.array([-1.0, 2.0]))
    assert not [w for w in caught if issubclass(w.category, AliasWarning)]
