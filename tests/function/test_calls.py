"""Calling Functions and ConcreteFunctions: parameters of every kind, the fast path against
the general path, concrete functions inside traces, and the errors of bad calls."""

import numpy as np
import pytest

import autograph as ag


def reference_sum(*xs, scale=1):
    total = xs[0]
    for x in xs[1:]:
        total = total + x
    return total * scale


def test_varargs_and_kwargs():
    @ag.function
    def f(*xs, **opts):
        return reference_sum(*xs, scale=opts.get("scale", 1))

    a, b = np.arange(2.0), np.ones(2)
    np.testing.assert_array_equal(f(a, b), a + b)
    np.testing.assert_array_equal(f(a, b, b, scale=2), (a + 2 * b) * 2)
    conc = f.get_concrete_function(a, b)
    assert str(conc).splitlines()[0] == "ConcreteFunction f(*xs, **opts)"
    assert [s.name for s in conc.structured_input_signature[0]] == ["xs_0", "xs_1"]
    np.testing.assert_array_equal(conc(b, b), 2 * b)
    with pytest.raises(TypeError, match=r"argument `xs` was traced as a tuple like .*but got a tuple"):
        conc(b, b, b)


def test_defaults_and_the_fast_path_agree_with_the_general_path():
    @ag.function
    def f(x, y, power=2):
        return (x - y) ** power

    x, y = np.arange(4.0), np.ones(4)
    expected = (x - y) ** 2
    np.testing.assert_array_equal(f(x, y), expected)            # traces (general path)
    np.testing.assert_array_equal(f(x, y), expected)            # fast path
    np.testing.assert_array_equal(f(x, y=y), expected)          # keywords: general path
    np.testing.assert_array_equal(f(x, y, 2), expected)         # same key as the default
    assert len(f._fast) == 3      # (x, y), (x, y=y) and (x, y, 2): all go straight to the graph
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_array_equal(f(x, y, 3), (x - y) ** 3)     # a new Python value traces
    assert f.experimental_get_tracing_count() == 2


def test_concrete_function_called_inside_a_trace_is_inlined():
    @ag.function
    def double(a):
        return a + a

    conc = double.get_concrete_function(ag.TensorSpec([None]))

    @ag.function
    def quadruple(x):
        return conc(conc(x))

    np.testing.assert_array_equal(quadruple(np.ones(3, np.float32)), np.full(3, 4.0))
    ops = [n.op for n in quadruple.get_concrete_function(
        np.ones(3, np.float32)).graph.as_graph_def().node]
    assert ops.count("add") == 2


def test_concrete_function_argument_errors():
    @ag.function
    def f(xs, n):
        return xs[0] * n + xs[1]

    conc = f.get_concrete_function([np.ones(2), np.ones(2)], 3)
    np.testing.assert_array_equal(conc([np.ones(2), np.zeros(2)]), np.full(2, 3.0))
    with pytest.raises(TypeError, match=r"argument `xs\[1\]` was traced as TensorSpec\(shape="
                                        r"\(2,\), dtype=float64.*got a float64 array of shape "
                                        r"\(3,\)"):
        conc([np.ones(2), np.ones(3)])
    with pytest.raises(TypeError, match=r"argument `xs`.*got a list"):
        conc([np.ones(2)])
    with pytest.raises(TypeError, match=r"f\(xs, n=3\) is missing argument `xs`"):
        conc()
    with pytest.raises(TypeError, match=r"traced with int value 3 for argument `n`"):
        conc([np.ones(2), np.ones(2)], 4)


def test_wrong_number_of_arguments_names_the_function():
    @ag.function
    def f(x):
        return x

    with pytest.raises(TypeError, match=r"f\(x\): too many positional arguments"):
        f(np.ones(1), np.ones(1))
    with pytest.raises(TypeError, match=r"f\(x\): missing a required argument: 'x'"):
        f()
    with pytest.raises(TypeError, match=r"f\(x\): multiple values for argument 'x'"):
        f(np.ones(1), x=np.ones(1))
    with pytest.raises(TypeError, match=r"f\(x\): got an unexpected keyword argument 'y'"):
        f(np.ones(1), y=np.ones(1))

    @ag.function
    def g(x, /, y=2):
        return x * y

    with pytest.raises(TypeError, match=r"g\(x, /, y=2\): 'x' parameter is positional only"):
        g(x=np.ones(1))
    assert g(np.ones(1), y=3) == 3.0


def test_symbolic_tensor_leaking_out_of_a_trace_is_a_clear_error():
    leaked = []

    @ag.function
    def f(x):
        leaked.append(x)
        return x

    f(np.ones(2))
    with pytest.raises(ValueError, match="outside the trace that made it"):
        f(leaked[0])


class Model:
    def __init__(self):
        self.calls = 0

    @ag.function
    def apply(self, x):
        self.calls += 1
        return x * 2


def test_run_functions_eagerly_for_methods():
    m = Model()
    m.apply(np.ones(2))
    m.apply(np.ones(2))
    assert m.calls == 1
    ag.config.run_functions_eagerly(True)
    try:
        np.testing.assert_array_equal(m.apply(np.ones(2)), [2.0, 2.0])
        m.apply(np.ones(2))
    finally:
        ag.config.run_functions_eagerly(False)
    assert m.calls == 3


def test_a_bound_method_can_be_decorated_directly():
    class Scale:
        def __init__(self, k):
            self.k = k

        def __call__(self, x):
            if x > 0:
                return x * self.k
            return -x

    f = ag.function(Scale(3.0).__call__)
    assert f(np.float64(2.0)) == 6.0
    assert f(np.float64(-2.0)) == 2.0
    assert f.experimental_get_tracing_count() == 1     # one trace, with a tensor `if`
    assert "if_stmt" in ag.to_code(f)


def test_reduce_retracing_relaxes_rank_changes_to_unknown_rank():
    @ag.function(reduce_retracing=True)
    def f(x):
        return x.shape

    assert f(np.zeros(2)) == (2,)
    assert f(np.zeros((2, 3))) is None          # relaxed to an unknown rank
    assert f(np.zeros(5)) is None and f(np.zeros((1, 1, 1))) is None
    assert f.experimental_get_tracing_count() == 2
    # Python values are never relaxed: each new one is its own trace
    g = ag.function(lambda x, n: x * n, reduce_retracing=True)
    g(np.ones(2), 1)
    g(np.ones(2), 2)
    assert g.experimental_get_tracing_count() == 2


def test_input_signature_converts_python_values_only_when_they_fit():
    @ag.function(input_signature=[ag.TensorSpec([None], np.uint8)])
    def f(x):
        return x + 1

    out = f([1, 2])
    assert out.dtype == np.uint8 and out.tolist() == [2, 3]
    with pytest.raises(TypeError, match=r"argument `x` does not fit the input_signature: "
                                        r"expected TensorSpec\(shape=\(None,\), dtype=uint8, "
                                        r"name=None\), got a list \[-1, 2\]"):
        f([-1, 2])                      # would wrap around: refused
    with pytest.raises(TypeError, match=r"got a list \[1.5\]"):
        f([1.5])                        # float -> int would truncate: refused
    with pytest.raises(TypeError, match=r"got a uint16 array"):
        f(np.array([1], np.uint16))     # arrays must match the dtype exactly
    assert f.experimental_get_tracing_count() == 1


def test_concrete_function_with_a_python_argument_inlines_with_its_traced_value():
    @ag.function
    def pow(a, b):
        return a ** b

    square = pow.get_concrete_function(a=ag.TensorSpec(None, np.float32), b=2)

    @ag.function
    def sum_of_squares(x):
        return np.sum(square(x))

    assert sum_of_squares(np.array([1.0, 2.0, 3.0], np.float32)) == 14.0


def scale(x, k):
    if k > 1:
        return x * k
    return x


class Doubler:
    def __call__(self, x):
        return x * 2


def test_partials_and_callable_objects():
    import functools
    f = ag.function(functools.partial(scale, k=3.0))
    np.testing.assert_array_equal(f(np.ones(2)), [3.0, 3.0])
    assert f.__name__ == "scale"
    g = ag.function(Doubler())
    np.testing.assert_array_equal(g(np.ones(2)), [2.0, 2.0])
    assert g.__name__ == "Doubler"
    assert "Doubler" in str(g.get_concrete_function(np.ones(2)))


def test_keyword_calls_take_the_fast_path_too(capsys):
    @ag.function
    def train(x, num_steps=3, lr=0.5):
        ag.print("steps", num_steps)
        return x - lr * num_steps

    x = np.ones(2)
    for _ in range(2):
        np.testing.assert_array_equal(train(x, num_steps=np.int64(4)), x - 2.0)
        np.testing.assert_array_equal(train(num_steps=np.int64(4), x=x), x - 2.0)
        np.testing.assert_array_equal(train(x, lr=0.25), x - 0.75)
    assert train.experimental_get_tracing_count() == 2      # num_steps array / Python 3
    assert len(train._fast) == 3                              # one entry per call shape
    assert capsys.readouterr().out == "steps 4\nsteps 4\nsteps 3\n" * 2
    np.testing.assert_array_equal(train(x, num_steps=np.int64(4), lr=0.5), x - 2.0)
    assert train.experimental_get_tracing_count() == 2


def test_errors_while_tracing_say_which_trace_failed():
    @ag.function
    def f(x, mode):
        if mode == "bad":
            raise ValueError("unsupported mode")
        return x

    with pytest.raises(ValueError, match="unsupported mode") as err:
        f(np.ones(2, np.float32), "bad")
    assert err.value.__notes__[-1] == (
        "(raised while ag.function traced f(x: TensorSpec(shape=(2,), dtype=float32, "
        "name=None), mode: Literal['bad']))")
    np.testing.assert_array_equal(f(np.ones(2, np.float32), "good"), [1.0, 1.0])
    assert f.experimental_get_tracing_count() == 1     # the failed trace does not count


def test_the_fast_path_cache_stays_bounded():
    import sys
    module = sys.modules["autograph.function"]
    f = ag.function(lambda x: x * 2, input_signature=[ag.TensorSpec([None])])
    for n in range(module._FAST_PATH_ENTRIES + 10):
        x = np.ones(n, np.float32)
        assert f(x).shape == (n,)
        assert f(x).shape == (n,)       # from the fast path
    assert len(f._fast) <= module._FAST_PATH_ENTRIES
    assert len(f._dispatch) <= module._FAST_PATH_ENTRIES
    assert f.experimental_get_tracing_count() == 1


def test_calling_with_a_tensorspec_says_to_use_get_concrete_function():
    @ag.function
    def f(x):
        return x

    with pytest.raises(TypeError, match=r"f was called with an ag.TensorSpec.*"
                                        r"f.get_concrete_function\(spec\)"):
        f(ag.TensorSpec([2]))
    with pytest.raises(TypeError, match="called with an ag.TensorSpec"):
        f([ag.TensorSpec([2])])
    assert f.experimental_get_tracing_count() == 0
