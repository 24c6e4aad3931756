"""Python values meeting tensors: lists and tuples holding tensors given to NumPy (packed as
NumPy packs them), and lengths of unknown dimensions (a tensor or a clear error, never a
made-up int). Every traced result is compared with eager NumPy on the same values: same
dtype, same shape, same numbers."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.ir.tensor import SymbolicTensorError

V = np.array([1.0, 2.0, 3.0])
I = np.int64(2)


def _same(got, ref):
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.dtype == ref.dtype, (got.dtype, ref.dtype)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    np.testing.assert_allclose(got, ref)


# each takes (v, i): v a float64 vector, i an int64 scalar; written as users write them
PACKED = {
    "concatenate_tuple_with_list": lambda v, i: np.concatenate((v, [i])),
    "concatenate_lists_only": lambda v, i: np.concatenate([[i], [1, 2]]),
    "asarray_tensor_and_int": lambda v, i: np.asarray([i, 1]),
    "asarray_float_and_int": lambda v, i: np.asarray([v[0], 1]),
    "array_nested": lambda v, i: np.array([[i, i * 2], [1, 2]]),
    "array_nested_float": lambda v, i: np.array([[v[0], 1], [2, 3]]),
    "array_three_deep": lambda v, i: np.array([[[i, 1]], [[2, 3]]]),
    "array_tuple": lambda v, i: np.array((i, i)),
    "array_of_vectors": lambda v, i: np.array([v, v * 2]),
    "array_vector_and_list": lambda v, i: np.array([v, [1, 2, 3]]),
    "array_dtype": lambda v, i: np.array([i, 2], dtype=np.float32),
    "array_dtype_int": lambda v, i: np.array([v[0], v[1]], dtype=int),
    # dtypes as NumPy's array coercion picks them: Python scalars count as int64/float64
    "array_python_float_with_int": lambda v, i: np.array([2.5, i]),
    "array_int8_with_int64": lambda v, i: np.array([np.int8(1), i]),
    "array_float32_with_python_float": lambda v, i: np.array([v.astype(np.float32)[0], 1.5]),
    "array_float32_pair": lambda v, i: np.array([v.astype(np.float32)[0], np.float32(2)]),
    "array_int32_with_big_int": lambda v, i: np.array([i.astype(np.int32), 2 ** 40]),
    "array_bool": lambda v, i: np.array([i > 1, True]),
    "array_bool_and_int8": lambda v, i: np.array([i > 1, np.int8(3)]),
    "array_ndmin": lambda v, i: np.array([i, 1], ndmin=2),
    "asarray_tensor": lambda v, i: np.asarray(v) + 1,
    "array_tensor_dtype": lambda v, i: np.array(v, dtype=np.float32),
    "stack_vectors": lambda v, i: np.stack([v, v * 2]),
    "stack_vector_and_list": lambda v, i: np.stack([v, [1.0, 2.0, 3.0]]),
    "hstack": lambda v, i: np.hstack([v, [i]]),
    "vstack": lambda v, i: np.vstack([v, [1, 2, 3]]),
    "sum": lambda v, i: np.sum([v[0], i]),
    "mean": lambda v, i: np.mean([v[0], 3]),
    "max": lambda v, i: np.max([i, 7]),
    "min_tuple": lambda v, i: np.min((v[1], v[2])),
    "prod": lambda v, i: np.prod([i, i]),
    "all": lambda v, i: np.all([i > 0, v[0] > 0]),
    "argmax": lambda v, i: np.argmax([i, 5]),
    "cumsum": lambda v, i: np.cumsum([i, 1, 2]),
    "sort": lambda v, i: np.sort([i, 0, 5]),
    "clip": lambda v, i: np.clip([i, -i], 0, 10),
    "reshape": lambda v, i: np.reshape([i, 1, 2, 3], (2, 2)),
    "atleast_1d": lambda v, i: np.atleast_1d([i]),
    "zeros_like": lambda v, i: np.zeros_like([i, 1]),
    "norm": lambda v, i: np.linalg.norm([v[0], v[1]]),
    "ufunc_add": lambda v, i: np.add([i, 1], 1),
    "ufunc_maximum": lambda v, i: np.maximum([i, 0], [1, 5]),
    "where": lambda v, i: np.where([True, False, True], v, 0),
    "dot": lambda v, i: np.dot([1, 2, 3], v),
    "outer": lambda v, i: np.outer([i, 1], [1, 2]),
    "operator_add_list": lambda v, i: v + [i, 1, 2],
    "operator_matmul": lambda v, i: np.array([[1.0, 0, 0]]) @ v,
    "list_in_expression": lambda v, i: np.sum(np.array([v[0] * i, 1.0]) * v[:2]),
}


@pytest.mark.parametrize("name", sorted(PACKED))
def test_lists_holding_tensors_pack_as_numpy_does(name):
    fn = PACKED[name]
    _same(ag.function(fn)(V, I), fn(V, I))


@pytest.mark.parametrize("name", ["asarray_tensor_and_int", "array_nested", "sum", "hstack"])
def test_packing_with_unknown_dimensions(name):
    fn = PACKED[name]
    traced = ag.function(fn, input_signature=[ag.TensorSpec([None], np.float64),
                                              ag.TensorSpec([], np.int64)])
    _same(traced(V, I), fn(V, I))


def test_packing_a_list_variable_and_a_weak_loop_value():
    @ag.function
    def f(v, n):
        s = 0            # a Python int that becomes a loop variable (a weak tensor)
        for k in range(n):
            s += k
        parts = [s, v[0]]
        return np.array(parts), np.concatenate(([s], v))

    def plain(v, n):
        s = sum(range(n))
        return np.array([s, v[0]]), np.concatenate(([s], v))
    for got, ref in zip(f(V, np.int64(4)), plain(V, 4)):
        _same(got, ref)


def test_lists_in_variables_pack_too():
    def f(v, i):
        parts = [v[0], i]
        pair = (i, 1)
        grown = []
        for k in range(3):           # a Python loop: appends run while tracing
            grown.append(v[k] * k)
        return (np.sum(parts), np.mean(parts), np.max(pair), np.asarray(pair),
                np.sum(grown), np.array(grown), np.prod(parts))
    for got, ref in zip(ag.function(f)(V, I), f(V, I)):
        _same(got, ref)
    code = ag.to_code(f)
    assert "converted_call(np.sum, parts)" in code


def test_ragged_lists_are_refused_like_numpy():
    with pytest.raises(ValueError, match="inhomogeneous"):
        np.array([V, [1.0, 2.0]])
    with pytest.raises(ValueError, match="inhomogeneous"):
        ag.function(lambda v: np.array([v, [1.0, 2.0]]))(V)


def test_numpy_calls_without_tensors_are_unchanged():
    @ag.function
    def f(x):
        return x + np.array([1, 2, 3]) + np.asarray([[0.5]])[0] + np.zeros(3)
    _same(f(V), V + np.array([1, 2, 3]) + 0.5)
    assert "np.tanh(x)" in ag.to_code(lambda x: np.tanh(x))   # plain calls stay as written


# -- lengths of unknown dimensions ------------------------------------------------------------

UNKNOWN = [ag.TensorSpec([None], np.float64)]

LENGTHS = {
    "len": lambda x: len(x),
    "range_len": lambda x: sum_range(x),
    "len_arithmetic": lambda x: len(x) * 2 + 1,
    "len_division": lambda x: len(x) / 2,
    "len_compare": lambda x: len(x) == 3,
    "len_max": lambda x: max(len(x), 2),
    "len_times_tensor": lambda x: len(x) * x,
    "size": lambda x: x.size + 0,
    "np_size": lambda x: np.size(x) + 0,
    "np_size_axis": lambda x: np.size(x, 0) + 0,
    "zeros_len": lambda x: np.zeros(len(x)),
    "zeros_len_int": lambda x: np.zeros(len(x), dtype=int),
    "ones_tuple_len": lambda x: np.ones((len(x), 2)),
    "full_len": lambda x: np.full(len(x), 2.0),
    "empty_len_shape": lambda x: np.empty(len(x)) * 0,
    "arange_len": lambda x: np.arange(len(x)) * x,
    "arange_start_len": lambda x: np.arange(1, len(x) + 1),
    "reshape_len": lambda x: x.reshape(len(x), 1),
    "slice_len": lambda x: x[:len(x) // 2],
}


def sum_range(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * i
    return s


@pytest.mark.parametrize("name", sorted(LENGTHS))
@pytest.mark.parametrize("n", [0, 1, 3, 6])
def test_lengths_of_unknown_dimensions_are_tensors(name, n):
    fn = LENGTHS[name]
    x = np.arange(n, dtype=np.float64) + 1
    _same(ag.function(fn, input_signature=UNKNOWN)(x), fn(x))


def test_the_issue_reproducer_is_refused_at_the_users_line():
    def f(x):
        acc = [0.0] * len(x)
        return np.sum(x) + len(acc)
    assert f(np.ones(3)) == 6.0
    g = ag.function(f, input_signature=UNKNOWN)
    with pytest.raises(SymbolicTensorError) as info:
        g(np.ones(3))
    msg = str(info.value)
    assert "test_python_values.py" in msg and "acc = [0.0] * len(x)" in msg
    assert "np.full(n, value)" in msg


@pytest.mark.parametrize("body", [
    lambda x: [0.0] * len(x),
    lambda x: len(x) * [0.0],
    lambda x: (0,) * len(x),
    lambda x: len([1, 2] * (len(x) - 1)),
])
def test_sequences_repeated_by_an_unknown_length_are_refused(body):
    with pytest.raises(SymbolicTensorError, match="Cannot repeat a Python"):
        ag.function(body, input_signature=UNKNOWN)(np.ones(3))


def test_list_times_scalar_tensor_argument_is_refused_not_guessed():
    # eagerly a NumPy integer repeats the list, a 0-d array multiplies it: refuse both
    def f(n):
        return np.array([1.0, 2.0] * n)
    assert f(np.int64(2)).shape == (4,)
    with pytest.raises(SymbolicTensorError, match="Cannot repeat"):
        ag.function(f)(np.int64(2))
    assert ag.function(f)(2).shape == (4,)     # a Python int is a Python value: repeated


def test_list_times_vector_multiplies_elementwise_as_numpy():
    f = lambda v: [1.0, 2.0, 3.0] * v   # noqa: E731
    _same(ag.function(f)(V), f(V))


def test_shape_with_unknown_dims_in_a_creation_names_the_fix():
    with pytest.raises(TypeError, match=r"unknown dimension \(None\).*len\(x\)") as info:
        ag.function(lambda x: np.zeros(x.shape), input_signature=UNKNOWN)(np.ones(3))
    assert "test_python_values.py" in str(info.value)


@pytest.mark.parametrize("spec, what", [(ag.TensorSpec(None, np.float64), "rank is unknown"),
                                        (ag.TensorSpec([], np.float64), "scalar")])
def test_len_without_a_first_axis_is_a_clear_error(spec, what):
    with pytest.raises(TypeError, match=what):
        ag.function(lambda x: len(x), input_signature=[spec])(np.ones(()))


def test_python_iteration_over_unknown_length_is_refused():
    def f(x):
        return [v for v in range(len(x))]
    with pytest.raises(SymbolicTensorError, match="number of elements is unknown"):
        ag.function(f, input_signature=UNKNOWN)(np.ones(3))


# -- random nested lists: every mix of tensors, NumPy scalars and Python scalars ---------------

_DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float32, np.float64,
           np.complex64]


def _random_case(rng):
    """(template, args): a nested list whose leaves are ("arg", k), NumPy scalars or Python
    scalars, of one rectangular shape; args are the tensors' values."""
    args = []

    def leaf():
        r = rng.integers(4)
        dtype = _DTYPES[rng.integers(len(_DTYPES))]
        value = dtype(rng.integers(0, 5))
        if r == 0:
            return [True, 3, 2.5, 1j][rng.integers(4)]
        if r == 1:
            return value
        args.append(value)
        return ("arg", len(args) - 1)

    def build(shape):
        if not shape:
            return leaf()
        items = [build(shape[1:]) for _ in range(shape[0])]
        return items if rng.integers(2) else tuple(items)

    shape = tuple(int(d) for d in rng.integers(1, 4, size=rng.integers(1, 4)))
    template = build(shape)
    if not args:   # at least one tensor
        args.append(np.float32(1))
        template = [template, template] if False else template
        return ("arg", 0) if not shape else _with_arg(template), args
    return template, args


def _with_arg(template):
    if isinstance(template, (list, tuple)):
        items = list(template)
        items[0] = _with_arg(items[0])
        return type(template)(items)
    return ("arg", 0)


def _fill(template, args):
    if isinstance(template, tuple) and len(template) == 2 and template[0] == "arg":
        return args[template[1]]
    if isinstance(template, (list, tuple)):
        return type(template)(_fill(t, args) for t in template)
    return template


@pytest.mark.parametrize("seed", range(200))
def test_random_nested_lists_pack_as_numpy_does(seed):
    rng = np.random.default_rng(seed)
    template, args = _random_case(rng)
    op = ["array", "asarray", "sum", "stack_rows", "add"][seed % 5]

    def f(*xs):
        data = _fill(template, xs)
        if op == "array":
            return np.array(data)
        if op == "asarray":
            return np.asarray(data)
        if op == "sum":
            return np.sum(data)
        if op == "stack_rows":
            return np.stack(list(data))
        return np.add(data, 1)

    ref = f(*args)
    _same(ag.function(f)(*args), ref)
