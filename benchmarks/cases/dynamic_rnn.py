"""Case 5: the seed's dynamic_rnn with a TensorArray (batch 32, length 100, features 256).

The step function is passed in as an argument, as in the seed; the loop runs over a static
length with `ag.range`, writing each state into a TensorArray."""

import functools

import numpy as np

from benchmarks.cases._common import autograph, blocking, jax_contender, tf_contender
from benchmarks.harness import Case, Contender, Goal


def rnn_step(inp, state):
    return inp + state


def make_dynamic_rnn(ag):
    """The seed's program with NumPy for tf and ag for the graph helpers."""
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
    return dynamic_rnn


def dynamic_rnn_hand(rnn_step, input_data, initial_state):
    """The floor: a preallocated output filled in a plain loop."""
    batch, length, features = input_data.shape
    out = np.empty((length, batch, features), input_data.dtype)
    xs = np.transpose(input_data, [1, 0, 2])
    state = initial_state
    for i in range(length):
        state = rnn_step(xs[i], state)
        out[i] = state
    return np.transpose(out, [1, 0, 2])


def build(quick):
    batch, length, features = (4, 10, 16) if quick else (32, 100, 256)
    rng = np.random.default_rng(0)
    data = rng.uniform(size=(batch, length, features)).astype(np.float32)
    h0 = np.zeros((batch, features), np.float32)

    def make_eager():
        return functools.partial(make_dynamic_rnn(autograph()), rnn_step, data, h0)

    def make_ag():
        ag = autograph()
        return functools.partial(ag.function(make_dynamic_rnn(ag)), rnn_step, data, h0)

    def make_tf(tf):
        def dynamic_rnn(rnn_step, input_data, initial_state):
            input_data = tf.transpose(input_data, [1, 0, 2])
            max_seq_len = input_data.shape[0]
            states = tf.TensorArray(tf.float32, size=max_seq_len)
            state = initial_state
            for i in tf.range(max_seq_len):
                state = rnn_step(input_data[i], state)
                states = states.write(i, state)
            return tf.transpose(states.stack(), [1, 0, 2])
        return functools.partial(tf.function(dynamic_rnn), rnn_step,
                                 tf.constant(data), tf.constant(h0))

    def make_jax(jax, jnp, lax):
        def dynamic_rnn(input_data, initial_state):
            def step(state, inp):
                state = rnn_step(inp, state)
                return state, state
            _, states = lax.scan(step, initial_state, jnp.transpose(input_data, [1, 0, 2]))
            return jnp.transpose(states, [1, 0, 2])
        return blocking(jax.jit(dynamic_rnn), jnp.asarray(data), jnp.asarray(h0))

    contenders = [
        Contender("numpy_eager", make_eager),
        Contender("numpy_hand", lambda: functools.partial(dynamic_rnn_hand, rnn_step, data, h0)),
        Contender("autograph", make_ag),
        tf_contender(make_tf),
        jax_contender(make_jax),
    ]
    return {"batch": batch, "length": length, "features": features, "dtype": "float32"}, contenders


CASES = [Case(
    "5_dynamic_rnn", "seed dynamic_rnn + TensorArray, 32x100x256", build, rtol=1e-5,
    goals=[Goal("<= 1.1x hand-written NumPy", "autograph", "numpy_hand", max_ratio=1.1),
           Goal("faster than tf.function", "autograph", "tensorflow", max_ratio=1.0)])]
