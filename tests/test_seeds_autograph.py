"""The seed guides' AutoGraph programs, with NumPy arrays in place of tf.Tensors: their
printed outputs and results, and the size of the code the compiler generates for them
(at most half of TensorFlow 2.21's non-blank to_code lines for the same function)."""

import numpy as np
import pytest

import autograph as ag


def _code_lines(fn):
    return [line for line in ag.to_code(fn).splitlines() if line.strip()]


# -- square_if_positive (seed 003) --------------------------------------------------------

def square_if_positive(x):
    if x > 0:
        x = x * x
    else:
        x = 0
    return x


def test_square_if_positive():
    f = ag.function(square_if_positive)
    assert f(np.int64(1)) == 1 and f(np.int64(-1)) == 0
    assert f(np.int64(7)) == 49
    assert f.experimental_get_tracing_count() == 1  # one trace: both branches are in the graph
    conc = f.get_concrete_function(ag.TensorSpec([], np.int64))
    assert "cond" in [n.op for n in conc.graph.as_graph_def().node]


def test_square_if_positive_code():
    lines = _code_lines(square_if_positive)
    assert len(lines) <= 23 // 2, "\n".join(lines)
    text = "\n".join(lines)
    assert "ag__.if_stmt(x > 0, if_true, if_false, (x,), ('x',))" in text
    assert "x = x * x" in text and "x = 0" in text


# -- the tanh loop with ag.print (seed 002/004) --------------------------------------------

def tanh_loop(x):
    while np.sum(x) > 1:
        ag.print(x)
        x = np.tanh(x)
    return x


def test_tanh_loop_prints_every_iteration(capsys):
    x = np.random.default_rng(7).uniform(size=5).astype(np.float32)
    expected = tanh_loop(x)  # eagerly: ag.print prints NumPy values, np.tanh runs now
    eager_out = capsys.readouterr().out
    got = ag.function(tanh_loop)(x)
    traced_out = capsys.readouterr().out
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert traced_out == eager_out
    assert len(eager_out.splitlines()) >= 3  # several iterations, one line each


def test_tanh_loop_code():
    lines = _code_lines(tanh_loop)
    assert len(lines) <= 23 // 2, "\n".join(lines)
    text = "\n".join(lines)
    assert "np.sum(x) > 1" in text and "x = np.tanh(x)" in text and "ag.print(x)" in text


# -- fizzbuzz (seed 002) -------------------------------------------------------------------

def fizzbuzz(n):
    for i in range(1, n + 1):
        print('Tracing for loop')
        if i % 15 == 0:
            print('Tracing fizzbuzz branch')
            ag.print('fizzbuzz')
        elif i % 3 == 0:
            print('Tracing fizz branch')
            ag.print('fizz')
        elif i % 5 == 0:
            print('Tracing buzz branch')
            ag.print('buzz')
        else:
            print('Tracing default branch')
            ag.print(i)


def fizzbuzz_tf_range(n):
    for i in ag.range(1, n + 1):
        print('Tracing for loop')
        if i % 15 == 0:
            print('Tracing fizzbuzz branch')
            ag.print('fizzbuzz')
        elif i % 3 == 0:
            print('Tracing fizz branch')
            ag.print('fizz')
        elif i % 5 == 0:
            print('Tracing buzz branch')
            ag.print('buzz')
        else:
            print('Tracing default branch')
            ag.print(i)


SEED_FIZZBUZZ = """\
Tracing for loop
Tracing fizzbuzz branch
Tracing fizz branch
Tracing buzz branch
Tracing default branch
1
2
fizz
4
buzz
1
2
fizz
4
buzz
fizz
7
8
fizz
buzz
11
fizz
13
14
fizzbuzz
16
17
fizz
19
buzz
"""


@pytest.mark.parametrize("fn", [fizzbuzz, fizzbuzz_tf_range])
def test_fizzbuzz_prints_the_seed_output(fn, capsys):
    f = ag.function(fn)
    f(np.int64(5))
    f(np.int64(20))
    assert capsys.readouterr().out == SEED_FIZZBUZZ
    assert f.experimental_get_tracing_count() == 1


def test_fizzbuzz_graph_does_not_grow_with_n():
    conc = ag.function(fizzbuzz).get_concrete_function(ag.TensorSpec([], np.int64))
    ops = [n.op for n in conc.graph.as_graph_def().node]
    assert ops.count("while_loop") == 1
    assert "range" not in ops or ops.count("range") <= 1  # never materialised per item


def test_fizzbuzz_code():
    lines = _code_lines(fizzbuzz)
    assert len(lines) <= 60 // 2, "\n".join(lines)
    text = "\n".join(lines)
    assert "ag__.for_stmt(ag__.range(1, n + 1), loop_body)" in text
    assert "print('Tracing fizzbuzz branch')" in text  # Python print stays Python print


# -- collatz (DESIGN.md) ---------------------------------------------------------------------

def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_collatz():
    f = ag.function(collatz)
    assert f(np.int64(27)) == 111
    assert f(np.int64(6)) == 8
    assert f(np.int64(1)) == 0
    assert f.experimental_get_tracing_count() == 1


def test_collatz_code():
    lines = _code_lines(collatz)
    assert len(lines) <= 36 // 2, "\n".join(lines)
    text = "\n".join(lines)
    assert "n, steps = ag__.while_stmt(loop_test, loop_body, (n, steps), ('n', 'steps'))" in text
    assert "ag__.if_exp(n % 2 == 0, lambda: n // 2, lambda: 3 * n + 1)" in text


# -- a training-style loop over a tensor range (seed 000/004) ---------------------------------

steps_run = []


def train_one_step():
    steps_run.append(1)


def train(num_steps):
    print("Tracing with num_steps = ", num_steps)
    ag.print("Executing with num_steps = ", num_steps)
    for _ in ag.range(num_steps):
        train_one_step()


SEED_TRAIN = """\
Retracing occurs for different Python arguments.
Tracing with num_steps =  10
Executing with num_steps =  10
Tracing with num_steps =  20
Executing with num_steps =  20

Traces are reused for Tensor arguments.
Tracing with num_steps =  Tensor("num_steps:0", shape=(), dtype=int64)
Executing with num_steps =  10
Executing with num_steps =  20
"""


def test_training_loop_over_tensor_range(capsys):
    f = ag.function(train)
    print("Retracing occurs for different Python arguments.")
    f(num_steps=10)
    f(num_steps=20)
    print()
    print("Traces are reused for Tensor arguments.")
    steps_run.clear()
    f(num_steps=np.int64(10))
    f(num_steps=np.int64(20))
    assert capsys.readouterr().out == SEED_TRAIN
    assert len(steps_run) == 1  # the Python side effect ran once, while tracing the body


def training_loss(w, xs, ys, lr):
    """Gradient descent on a 1-parameter least-squares problem, one sample per step."""
    loss = 0.0
    for i in range(xs.shape[0]):
        err = w * xs[i] - ys[i]
        w = w - lr * 2.0 * err * xs[i]
        loss = err * err
    return w, loss


def test_training_loop_matches_numpy():
    rng = np.random.default_rng(3)
    xs = rng.uniform(size=50)
    ys = 3.0 * xs
    expected = training_loss(0.0, xs, ys, 0.5)  # the original, eagerly on NumPy
    got = ag.function(training_loss)(np.float64(0.0), xs, ys, np.float64(0.5))
    np.testing.assert_allclose(got[0], expected[0])
    np.testing.assert_allclose(got[1], expected[1])


# -- dynamic_rnn with a TensorArray (seed 002/004) --------------------------------------------

def rnn_step(inp, state):
    return inp + state


def dynamic_rnn(rnn_step, input_data, initial_state):
    # [batch, time, features] -> [time, batch, features]
    input_data = np.transpose(input_data, [1, 0, 2])
    max_seq_len = input_data.shape[0]
    states = ag.TensorArray(np.float32, size=max_seq_len)
    state = initial_state
    for i in ag.range(max_seq_len):
        state = rnn_step(input_data[i], state)
        states = states.write(i, state)
    return np.transpose(states.stack(), [1, 0, 2])


def test_dynamic_rnn():
    x = np.random.default_rng(0).uniform(size=(2, 3, 4)).astype(np.float32)
    got = ag.function(dynamic_rnn)(rnn_step, x, np.zeros((2, 4), np.float32))
    assert got.shape == (2, 3, 4) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.cumsum(x, axis=1), rtol=1e-6)
