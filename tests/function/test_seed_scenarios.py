"""The tf.function guides' tracing scenarios (seeds 000, 002, 003, 004), with NumPy arrays in
place of tf.Tensors, checked against the exact output the guides print."""

import numpy as np
import pytest

import autograph as ag


def lines(capsys):
    return capsys.readouterr().out.splitlines()


# -- "What is tracing?": double traces once per dtype ---------------------------------------

def test_double_traces_per_dtype(capsys):
    @ag.function
    def double(a):
        print("Tracing with", a)
        return a + a

    r1 = double(np.int32(1))
    r2 = double(np.float32(1.1))
    assert lines(capsys) == [
        'Tracing with Tensor("a:0", shape=(), dtype=int32)',
        'Tracing with Tensor("a:0", shape=(), dtype=float32)',
    ]
    assert r1 == 2 and np.asarray(r1).dtype == np.int32
    assert np.asarray(r2).dtype == np.float32 and np.isclose(r2, np.float32(1.1) * 2)

    # the same dtype again: no tracing, the cached graph runs
    assert double(np.int32(21)) == 42
    assert lines(capsys) == []
    assert double.experimental_get_tracing_count() == 2

    # converted (autograph=True) or not, the graph is the seed's: a -> add -> Identity
    graph = double.get_concrete_function(np.int32(0)).graph
    assert [(n.input, n.name) for n in graph.as_graph_def().node] == [
        ([], "a"), (["a", "a"], "add"), (["add"], "Identity")]

    signatures = double.pretty_printed_concrete_signatures()
    assert signatures == (
        "double(a)\n"
        "  Input Parameters:\n"
        "    a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=int32, name=None)\n"
        "  Output Type:\n"
        "    TensorSpec(shape=(), dtype=int32, name=None)\n"
        "  Captures:\n"
        "    None\n"
        "\n"
        "double(a)\n"
        "  Input Parameters:\n"
        "    a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=float32, name=None)\n"
        "  Output Type:\n"
        "    TensorSpec(shape=(), dtype=float32, name=None)\n"
        "  Captures:\n"
        "    None")


def test_double_graph_nodes_and_concrete_function(capsys):
    @ag.function(autograph=False)
    def double(a):
        print("Tracing with", a)
        return a + a

    conc = double.get_concrete_function(np.int64(1))
    assert lines(capsys) == ['Tracing with Tensor("a:0", shape=(), dtype=int64)']
    assert [(n.input, n.name) for n in conc.graph.as_graph_def().node] == [
        ([], "a"), (["a", "a"], "add"), (["add"], "Identity")]
    assert conc(np.int64(4)) == 8
    assert conc(a=np.int64(5)) == 10
    assert str(conc) == (
        "ConcreteFunction double(a)\n"
        "  Input Parameters:\n"
        "    a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=int64, name=None)\n"
        "  Output Type:\n"
        "    TensorSpec(shape=(), dtype=int64, name=None)\n"
        "  Captures:\n"
        "    None")
    assert repr(conc.structured_input_signature) == \
        "((TensorSpec(shape=(), dtype=int64, name='a'),), {})"
    assert repr(conc.structured_outputs) == 'Tensor("Identity:0", shape=(), dtype=int64)'
    # a concrete function is one signature: another dtype is a clear TypeError
    with pytest.raises(TypeError, match=r"argument `a` was traced as TensorSpec\(shape=\(\), "
                                        r"dtype=int64.*got a float64 array"):
        conc(np.float64(1.0))
    # get_concrete_function with the same key returns the cached trace, without tracing
    assert double.get_concrete_function(np.int64(7)) is conc
    assert lines(capsys) == []


def test_get_concrete_function_on_a_tensorspec(capsys):
    @ag.function
    def double(a):
        print("Tracing with", a)
        return a + a

    conc = double.get_concrete_function(ag.TensorSpec(shape=[], dtype=np.float64))
    assert lines(capsys) == ['Tracing with Tensor("a:0", shape=(), dtype=float64)']
    assert conc(np.float64(1.5)) == 3.0
    # calling the Function with a matching array reuses that trace
    assert double(np.float64(2.0)) == 4.0
    assert double.experimental_get_tracing_count() == 1
    assert lines(capsys) == []


# -- the quiz (seed 003): which calls trace, and what ag.print shows -------------------------

@pytest.mark.filterwarnings("ignore::autograph.function.RetracingWarning")
def test_quiz_python_values_and_arrays(capsys):
    @ag.function
    def f(x):
        print("The function is running in Python")
        ag.print(x)

    a = np.array(1, dtype=np.int32)
    f(a)
    b = np.array(2, dtype=np.int32)
    f(b)
    b_ = np.int32(2)          # a NumPy scalar has the key of a 0-d array of its dtype
    f(b_)
    c = np.array(0.1, dtype=np.float32)
    f(c)
    d = np.array(0.2, dtype=np.float32)
    f(d)
    f(1)
    f(2)
    f(1)
    f(0.1)
    f(0.2)
    f(0.1)
    assert lines(capsys) == [
        "The function is running in Python",
        "1",
        "2",
        "2",
        "The function is running in Python",
        "0.1",
        "0.2",
        "The function is running in Python",
        "1",
        "The function is running in Python",
        "2",
        "1",
        "The function is running in Python",
        "0.1",
        "The function is running in Python",
        "0.2",
        "0.1",
    ]
    assert f.experimental_get_tracing_count() == 6


# -- input_signature ---------------------------------------------------------------------------

def test_next_collatz_input_signature(capsys):
    @ag.function(input_signature=(ag.TensorSpec(shape=[None], dtype=np.int32),))
    def next_collatz(x):
        print("Tracing with", x)
        return np.where(x % 2 == 0, x // 2, 3 * x + 1)

    out = next_collatz(np.array([1, 2], dtype=np.int32))
    assert lines(capsys) == ['Tracing with Tensor("x:0", shape=(None,), dtype=int32)']
    np.testing.assert_array_equal(out, [4, 1])
    assert out.dtype == np.int32

    # rank 2 does not fit [None]
    with pytest.raises(TypeError) as err:
        next_collatz(np.array([[1, 2], [3, 4]], dtype=np.int32))
    msg = str(err.value)
    assert "argument `x`" in msg
    assert "TensorSpec(shape=(None,), dtype=int32, name=None)" in msg
    assert "int32 array of shape (2, 2)" in msg

    # float32 does not fit int32
    with pytest.raises(TypeError) as err:
        next_collatz(np.array([1.0, 2.0], dtype=np.float32))
    assert "argument `x`" in str(err.value) and "float32 array of shape (2,)" in str(err.value)

    # a Python list of ints is converted to the signature's dtype
    np.testing.assert_array_equal(next_collatz([3, 4, 5]), [10, 2, 16])
    assert next_collatz.experimental_get_tracing_count() == 1
    assert lines(capsys) == []


def test_g_with_unknown_dim_does_not_retrace(capsys):
    @ag.function(input_signature=(ag.TensorSpec(shape=[None], dtype=np.int32),))
    def g(x):
        print("Tracing with", x)
        return x

    np.testing.assert_array_equal(g(np.array([1, 2, 3], dtype=np.int32)), [1, 2, 3])
    np.testing.assert_array_equal(g(np.array([1, 2, 3, 4, 5], dtype=np.int32)), [1, 2, 3, 4, 5])
    assert lines(capsys) == ['Tracing with Tensor("x:0", shape=(None,), dtype=int32)']
    assert g.experimental_get_tracing_count() == 1


def test_reduce_retracing_generalises_once(capsys):
    @ag.function(reduce_retracing=True)
    def g(x):
        print("Tracing with", x)
        return x

    for n in (3, 5, 7, 9):
        np.testing.assert_array_equal(g(np.arange(1, n + 1, dtype=np.int32)), np.arange(1, n + 1))
    assert lines(capsys) == [
        'Tracing with Tensor("x:0", shape=(3,), dtype=int32)',
        'Tracing with Tensor("x:0", shape=(None,), dtype=int32)',
    ]
    assert g.experimental_get_tracing_count() == 2


# -- Python arguments vs arrays ----------------------------------------------------------------

def train_one_step():
    pass


def test_train_retraces_for_python_ints_not_arrays(capsys):
    @ag.function
    def train(num_steps):
        print("Tracing with num_steps = ", num_steps)
        ag.print("Executing with num_steps = ", num_steps)
        for _ in ag.range(num_steps):
            train_one_step()

    print("Retracing occurs for different Python arguments.")
    train(num_steps=10)
    train(num_steps=20)
    print()
    print("Traces are reused for Tensor arguments.")
    train(num_steps=np.int32(10))
    train(num_steps=np.int32(20))
    assert lines(capsys) == [
        "Retracing occurs for different Python arguments.",
        "Tracing with num_steps =  10",
        "Executing with num_steps =  10",
        "Tracing with num_steps =  20",
        "Executing with num_steps =  20",
        "",
        "Traces are reused for Tensor arguments.",
        'Tracing with num_steps =  Tensor("num_steps:0", shape=(), dtype=int32)',
        "Executing with num_steps =  10",
        "Executing with num_steps =  20",
    ]
    assert train.experimental_get_tracing_count() == 3


def test_separate_functions_never_share_traces(capsys):
    def f():
        print("Tracing!")
        ag.print("Executing")

    ag.function(f)()
    ag.function(f)()
    assert lines(capsys) == ["Tracing!", "Executing", "Tracing!", "Executing"]


def test_pow_concrete_function_pins_python_argument():
    @ag.function
    def pow(a, b):
        return a ** b

    square = pow.get_concrete_function(a=ag.TensorSpec(None, np.float32), b=2)
    assert str(square) == (
        "ConcreteFunction pow(a, b=2)\n"
        "  Input Parameters:\n"
        "    a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=<unknown>, dtype=float32, name=None)\n"
        "    b (POSITIONAL_OR_KEYWORD): Literal[2]\n"
        "  Output Type:\n"
        "    TensorSpec(shape=<unknown>, dtype=float32, name=None)\n"
        "  Captures:\n"
        "    None")
    assert square(np.float32(10.0)) == 100
    assert square(np.array([1.0, 3.0], dtype=np.float32)).tolist() == [1.0, 9.0]
    assert square(np.float32(10.0), b=2) == 100   # the traced value itself is fine
    with pytest.raises(TypeError, match=r"traced with int value 2 for argument `b`, but was "
                                        r"called with Python int 3"):
        square(np.float32(10.0), b=3)


# -- Python side effects run while tracing only ------------------------------------------------

def test_print_runs_at_trace_time_ag_print_every_call(capsys):
    @ag.function
    def f(x):
        print("Traced with", x)
        ag.print("Executed with", x)

    f(1)
    f(1)
    f(2)
    assert lines(capsys) == ["Traced with 1", "Executed with 1", "Executed with 1",
                             "Traced with 2", "Executed with 2"]


def test_list_append_happens_once():
    external_list = []

    @ag.function
    def side_effect(x):
        print("Python side effect")
        external_list.append(x)

    side_effect(1)
    side_effect(1)
    side_effect(1)
    assert len(external_list) == 1


def test_next_iterator_runs_at_trace_time(capsys):
    @ag.function
    def buggy_consume_next(iterator):
        ag.print("Value:", next(iterator))

    iterator = iter([1, 2, 3])
    buggy_consume_next(iterator)
    buggy_consume_next(iterator)
    buggy_consume_next(iterator)
    assert lines(capsys) == ["Value: 1", "Value: 1", "Value: 1"]


# -- globals are read at trace time ----------------------------------------------------------

foo = 1


@ag.function
def buggy_add():
    return 1 + foo


@ag.function
def recommended_add(foo):
    return 1 + foo


def test_globals_are_read_while_tracing():
    global foo
    foo = 1
    assert buggy_add() == 2
    assert recommended_add(foo) == 2
    foo = 100
    assert buggy_add() == 2          # did not change: the trace baked in foo = 1
    assert recommended_add(foo) == 101


def test_run_functions_eagerly_runs_the_python(capsys):
    @ag.function
    def get_mse(y_true, y_pred):
        print("Calculating MSE!")
        return np.mean((y_pred - y_true) ** 2)

    y_true = np.array([1.0, 2.0, 3.0])
    y_pred = np.array([1.0, 1.0, 1.0])
    expected = np.mean((y_pred - y_true) ** 2)
    for _ in range(3):
        assert np.isclose(get_mse(y_true, y_pred), expected)
    assert lines(capsys) == ["Calculating MSE!"]

    ag.config.run_functions_eagerly(True)
    try:
        assert ag.config.functions_run_eagerly()
        for _ in range(3):
            assert np.isclose(get_mse(y_true, y_pred), expected)
        assert lines(capsys) == ["Calculating MSE!"] * 3
    finally:
        ag.config.run_functions_eagerly(False)
    assert not ag.config.functions_run_eagerly()
    get_mse(y_true, y_pred)
    assert lines(capsys) == []


# -- graphs built from Python data grow with it ------------------------------------------------

def test_python_data_loops_unroll_into_the_graph():
    @ag.function
    def train(dataset):
        loss = ag.constant(0)
        for x, y in dataset:
            loss += np.abs(y - x)
        return loss

    def size(data):
        return len(train.get_concrete_function(data).graph.as_graph_def().node)

    small, big = [(1, 1)] * 3, [(1, 1)] * 10
    assert size(big) > size(small)
    assert train(small) == 0 and train([(1, 4), (6, 2)]) == 7
