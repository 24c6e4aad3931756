"""dynamic_rnn: accumulate a loop's results in an ag.TensorArray.

What it teaches:
- appending to a Python list inside a traced loop would run once, while tracing; a
  TensorArray is a graph value: `states = states.write(i, state)` inside a tensor loop
  collects one row per iteration, at run time, and `states.stack()` makes one array;
- a Python function (`rnn_step`) passed as an argument is called while tracing and becomes
  part of the graph (a different function object traces a new graph);
- `input_data.shape[0]` is a static Python int when the input's shape is known.

Run it: python examples/dynamic_rnn.py
"""

import numpy as np

import autograph as ag

batch_size, seq_len, feature_size = 2, 3, 4


def rnn_step(inp, state):
    return inp + state


@ag.function
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


def make_input(seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(size=(batch_size, seq_len, feature_size)).astype(np.float32)


def main():
    data = make_input()
    result = np.asarray(dynamic_rnn(rnn_step, data, np.zeros([batch_size, feature_size], np.float32)))
    print(f"== states: shape {result.shape}, dtype {result.dtype} ==")
    for b in range(batch_size):
        for t in range(seq_len):
            print(f"batch {b} time {t}:", " ".join(f"{v:.6f}" for v in result[b, t]))
    print(f"traces: {dynamic_rnn.experimental_get_tracing_count()}")


if __name__ == "__main__":
    main()
