"""What new users met in their first programs (issue 27's second list), each as a class:
generator functions under ag.function, recursion errors, loops over NumPy scalars, a Variable
as a loop's starting value, one return type per trace, grad_sum's calling convention."""

import asyncio
import functools
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import autograph as ag
from autograph.operators.unroll import UnrollWarning

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# -- generator and coroutine functions are refused where they are decorated -----------------

def gen_fn(x):
    yield x


async def coro_fn(x):
    return x


async def agen_fn(x):
    yield x


class WithGeneratorMethod:
    def values(self, x):
        yield x


def _wrapped(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)
    wrapper.__wrapped__ = fn
    return wrapper


@pytest.mark.parametrize("fn, kind", [
    (gen_fn, "a generator function"),
    (coro_fn, "a coroutine function"),
    (agen_fn, "an async generator function"),
    (WithGeneratorMethod.values, "a generator function"),
    (WithGeneratorMethod().values, "a generator function"),
    (functools.partial(gen_fn, 1.0), "a generator function"),
])
@pytest.mark.parametrize("how", ["decorator", "input_signature", "autograph=False"])
def test_generator_functions_are_refused_at_their_definition(fn, kind, how):
    options = {"decorator": {}, "input_signature": {"input_signature": [ag.TensorSpec([])]},
               "autograph=False": {"autograph": False}}[how]
    with pytest.raises(TypeError) as info:
        ag.function(fn, **options)
    inner = getattr(getattr(fn, "func", fn), "__func__", getattr(fn, "func", fn))
    message = str(info.value)
    assert kind in message and inner.__qualname__ in message
    assert f"{__file__}:{inner.__code__.co_firstlineno}" in message


def test_generator_behind_a_decorator_is_refused():
    with pytest.raises(TypeError, match="generator function"):
        ag.function(_wrapped(gen_fn))


def test_a_function_that_uses_a_generator_inside_still_traces():
    @ag.function
    def f(x):
        def squares(n):
            for i in range(n):
                yield x * i
        return sum(squares(4))
    assert f(np.float64(2.0)) == 12.0
    coro = coro_fn(1)
    assert asyncio.run(coro) == 1   # (the coroutine itself is fine as Python)


# -- a RecursionError is the user's own, with nothing internal chained to it ----------------

RECURSION = textwrap.dedent('''
    import json, sys
    import numpy as np
    import autograph as ag

    def chain(e):
        out = []
        while e is not None:
            out.append(type(e).__name__)
            e = e.__cause__ or e.__context__
        return out

    @ag.function
    def down(n):
        if n > 0:
            return down(n - 1) + 1
        return n

    def py_down(n):
        return py_down(n - 1) + 1

    def helper(x):
        if x > 0:
            return helper(x + 1)
        return x

    @ag.function
    def calls_helper(x):
        return helper(x) * 2

    class Tree:
        @ag.function
        def depth(self, x):
            return self.depth(x - 1)

    tree = Tree()
    cases = {"ag.function": lambda: down(np.int64(3)),
             "to_graph": lambda: ag.to_graph(py_down)(3),
             "helper": lambda: calls_helper(np.float64(1.0)),
             "method": lambda: tree.depth(np.float64(1.0))}
    out = {}
    for name, call in cases.items():
        try:
            call()
            out[name] = ["no error"]
        except RecursionError as e:
            out[name] = chain(e)
        except Exception as e:
            out[name] = ["other", type(e).__name__, str(e)[:200]]
    print(json.dumps(out))
    down(np.int64(2))   # uncaught: what Python prints
''')


def test_recursion_errors_carry_no_internal_exception(tmp_path):
    """In a fresh process (autograph's error path imports modules on first use, which at
    the recursion limit used to fail inside importlib and chain its KeyError)."""
    script = tmp_path / "recursion.py"
    script.write_text(RECURSION)
    env = dict(os.environ, PYTHONPATH=ROOT, AUTOGRAPH_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=300)
    import json
    chains = json.loads(proc.stdout.strip().splitlines()[0])
    assert chains == {name: ["RecursionError"] for name in chains}, chains
    assert proc.returncode != 0
    err = proc.stderr
    assert "RecursionError" in err.splitlines()[-2] or "RecursionError" in err
    assert "KeyError" not in err and "During handling" not in err
    assert "_NotKept" not in err and "importlib" not in err


# -- loops over NumPy scalars: warned at the user's line past the unroll limit ---------------

def np_counter(x, n):
    t = np.int64(0)
    while t < n:
        x = x * 1.001 + 0.01
        t += 1
    return x


def np_float_counter(x, n):
    s = np.float64(0.0)
    while s < n:
        x = np.sin(x) + 0.5
        s = s + np.float64(1.0)
    return x


def np_arange_loop(x, n):
    for v in np.arange(n):
        x = x * 0.999 + v * 1e-4
    return x


@pytest.mark.parametrize("fn, numpy_test", [(np_counter, True), (np_float_counter, True),
                                            (np_arange_loop, False)])
def test_a_long_loop_over_numpy_scalars_warns_at_its_line(fn, numpy_test):
    n = 1200
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = ag.function(fn)(np.float64(0.5), n)
    np.testing.assert_allclose(got, fn(0.5, n), rtol=1e-12)
    unrolled = [w for w in caught if issubclass(w.category, UnrollWarning)]
    assert len(unrolled) == 1
    w = unrolled[0]
    loop_line = next(i for i, line in enumerate(
        __import__("inspect").getsource(fn).splitlines()) if "while" in line or "for" in line)
    assert w.filename == __file__
    assert w.lineno == fn.__code__.co_firstlineno + loop_line
    assert ("NumPy scalars are Python values while tracing" in str(w.message)) == numpy_test


@pytest.mark.parametrize("n", [1000, 1500])
def test_gradient_through_a_long_numpy_scalar_loop(n):
    """No RecursionError, and the gradient matches central differences, in every mode."""
    x0, eps = 0.3, 1e-6
    want = (np_counter(x0 + eps, n) - np_counter(x0 - eps, n)) / (2 * eps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnrollWarning)
        value, grad = ag.value_and_grad(np_counter)(np.float64(x0), n)
        traced = ag.grad(ag.function(np_counter))(np.float64(x0), n)
        x = ag.Variable(np.float64(x0))
        with ag.GradientTape() as tape:
            y = np_counter(x, n)
        taped = tape.gradient(y, x)
    np.testing.assert_allclose(value, np_counter(x0, n), rtol=1e-12)
    for g in (grad, traced, taped):
        np.testing.assert_allclose(g, want, rtol=1e-6)


def test_the_cure_the_warning_names_makes_one_graph_loop():
    def tensor_bound(x, n):
        t = np.int64(0)
        while t < n:
            x = x * 1.001 + 0.01
            t += 1
        return x

    def tensor_counter(x, n):
        t = ag.constant(np.int64(0))
        while t < n:
            x = x * 1.001 + 0.01
            t += 1
        return x

    for fn, n in ((tensor_bound, np.int64(1200)), (tensor_counter, 1200)):
        f = ag.function(fn)
        with warnings.catch_warnings():
            warnings.simplefilter("error", UnrollWarning)
            np.testing.assert_allclose(f(np.float64(0.5), n), np_counter(0.5, 1200),
                                       rtol=1e-12)
        nodes = f.get_concrete_function(np.float64(0.5), n).graph.as_graph_def().node
        assert any(node.op == "while_loop" for node in nodes) and len(nodes) < 30


# -- a Variable as a loop's starting value is read, as TensorFlow does -----------------------

W = ag.Variable(np.array([0.5, -1.0, 2.0]))
V = ag.Variable(np.float64(1.5))


def var_for_range(x, n):
    h = W
    for i in ag.range(n):
        h = np.tanh(h * x)
    return h


def var_while(x, n):
    h = W
    i = 0
    while i < n:
        h = h * x + 1
        i += 1
    return h


def var_pair(x, n):
    a, b = W, V
    for i in range(n):
        a, b = a * b, b + x
    return a, b


def var_python_loop_then_tensor_if(x):
    h = V
    for i in range(3):
        if x > i:
            h = h + x
    return h


def _reference(fn, *args):
    """The function with the Variables' values in their place (eager NumPy)."""
    saved = W, V
    g = fn.__globals__
    g["W"], g["V"] = W.numpy(), V.numpy()
    try:
        return fn(*args)
    finally:
        g["W"], g["V"] = saved


@pytest.mark.parametrize("fn, args", [
    (var_for_range, (np.float64(0.7), np.int64(3))),
    (var_while, (np.float64(0.5), np.int64(4))),
    (var_pair, (np.float64(0.25), np.int64(3))),
    (var_python_loop_then_tensor_if, (np.float64(1.5),)),
])
def test_a_variable_starts_a_loop(fn, args):
    f = ag.function(fn)
    for value in (np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.25, -0.5])):
        W.assign(value)   # read when the graph runs, not when it was traced
        got, want = f(*args), _reference(fn, *args)
        for a, b in zip(np.atleast_1d(got) if not isinstance(got, tuple) else got,
                        np.atleast_1d(want) if not isinstance(want, tuple) else want):
            np.testing.assert_allclose(a, b, rtol=1e-12)
    assert f.experimental_get_tracing_count() == 1
    W.assign(np.array([0.5, -1.0, 2.0]))


# -- one trace, one return type -------------------------------------------------------------

def _dataset():
    def gen():
        for i in range(5):
            yield np.int64(i)
    return ag.data.Dataset.from_generator(gen, output_signature=ag.TensorSpec([], np.int64))


DS = _dataset()


def ret_dataset_break(limit):
    for v in DS:
        if v > limit:
            return v
    return limit


def ret_loop_or_arith(limit):
    last = np.int64(-1)
    for v in DS:
        last = v
        if v > limit:
            break
    return last, limit + 1


def ret_cond(x):
    if x > 0:
        return x * 2
    return x


def ret_while(n):
    i = np.int64(0)
    while i < n:
        i += 2
    return i


def ret_float(x):
    y = np.float64(0.0)
    for i in ag.range(3):
        y = y + x
    return y if x > 1 else x - 1


@pytest.mark.parametrize("fn, inputs", [
    (ret_dataset_break, [np.int64(2), np.int64(10), np.int64(-1), np.array(2)]),
    (ret_loop_or_arith, [np.int64(2), np.int64(10), np.array(-1)]),
    (ret_cond, [np.int64(3), np.int64(-3), np.array(4)]),
    (ret_while, [np.int64(0), np.int64(5)]),
    (ret_float, [np.float64(2.0), np.float64(0.5), np.array(3.0)]),
])
@pytest.mark.parametrize("jit", [False, True])
def test_one_trace_returns_one_type(fn, inputs, jit):
    if jit:
        pytest.importorskip("numba")
        if fn in (ret_dataset_break, ret_loop_or_arith):
            pytest.skip("datasets are iterated on the host (no native lowering)")
    f = ag.function(fn, jit_compile=jit or None)
    kinds = set()
    for x in inputs:
        for _ in range(2):   # the first call and the fast path
            out = f(x)
            want = fn(x.item() if isinstance(x, np.ndarray) else x)
            leaves = out if isinstance(out, tuple) else (out,)
            wants = want if isinstance(want, tuple) else (want,)
            for got, ref in zip(leaves, wants):
                assert got == ref
                kinds.add(type(got))
    assert f.experimental_get_tracing_count() == 1
    assert len(kinds) == 1 and issubclass(kinds.pop(), np.generic)


# -- autograph.dask.grad_sum's convention: params is one list --------------------------------

def test_grad_sum_wrong_calls_say_the_convention():
    da = pytest.importorskip("dask.array")
    import autograph.dask as agdask
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(40, 3)), rng.normal(size=40)
    w, b = rng.normal(size=3), np.float64(0.1)
    dx, dy = da.from_array(x, chunks=(10, 3)), da.from_array(y, chunks=10)

    def loss(params, xb, yb):
        w, b = params
        return np.sum((xb @ w + b - yb) ** 2)

    value, (gw, gb) = agdask.grad_sum(loss, [w, b], dx, dy)
    r = x @ w + b - y
    np.testing.assert_allclose(value, np.sum(r ** 2), rtol=1e-10)
    np.testing.assert_allclose(gw, 2 * x.T @ r, rtol=1e-10)
    np.testing.assert_allclose(gb, 2 * np.sum(r), rtol=1e-10)

    def unpacked(w, b, xb, yb):
        return np.sum((xb @ w + b - yb) ** 2)

    with pytest.raises(TypeError, match=r"params as ONE list.*`w, b = params`"):
        agdask.grad_sum(unpacked, [w, b], dx, dy)
    with pytest.raises(TypeError, match="params must be a list"):
        agdask.grad_sum(loss, w, dx, dy)

    def takes_one(w, xb, yb):   # fits the arity, but reads the list as an array
        return np.sum((xb @ w - yb) ** 2)

    with pytest.raises(Exception) as info:
        agdask.grad_sum(takes_one, [w, b], dx, dy)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "ONE list of 2 arrays" in notes and "(3,)" in notes
