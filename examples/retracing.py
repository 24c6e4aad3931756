"""retracing: the tracing rules of autograph.function, made visible.

What it teaches (the rules of TensorFlow's tf.function guide, with NumPy values):
- an array argument is keyed by dtype and shape: a new dtype or shape traces a new graph,
  the same ones reuse it (Python's print runs only while tracing, so it shows each trace);
- a Python argument is keyed by its value: every new value retraces, so pass numbers that
  change from call to call (step counts, learning rates) as arrays;
- an input_signature with a None dimension accepts every length with one trace;
- reduce_retracing=True relaxes shapes after a second shape is seen;
- a new ag.function object never shares traces with another.

Run it: python examples/retracing.py
"""

import numpy as np

import autograph as ag


@ag.function
def double(a):
    print("Tracing with", a)
    return a + a


@ag.function
def train(num_steps):
    print("Tracing with num_steps =", num_steps)
    ag.print("Executing with num_steps =", num_steps)
    total = 0
    for _ in ag.range(num_steps):
        total += 1
    return total


@ag.function(input_signature=[ag.TensorSpec([None], np.int64)])
def g(x):
    print("Tracing with", x)
    return x


@ag.function(reduce_retracing=True)
def relaxed(x):
    print("Tracing with", x)
    return np.sum(x)


def f():
    print("Tracing!")
    ag.print("Executing")


def main():
    print("== arrays are keyed by dtype and shape ==")
    print(double(np.int64(1)))
    print(double(np.float64(1.1)))
    print(double(np.array([1, 2, 3], dtype=np.int64)))
    print(double(np.int64(5)))          # same signature as the first call: no trace
    print(f"traces: {double.experimental_get_tracing_count()}")
    print("== the concrete signatures ==")
    print(double.pretty_printed_concrete_signatures())

    print("== Python values are keyed by value: each new one retraces ==")
    train(num_steps=10)
    train(num_steps=20)
    print(f"traces: {train.experimental_get_tracing_count()}")
    print("== arrays reuse the trace ==")
    train(num_steps=np.int64(10))
    train(num_steps=np.int64(20))
    print(f"traces: {train.experimental_get_tracing_count()}")

    print("== input_signature with a None dimension: no retrace for new lengths ==")
    print(g(np.array([1, 2, 3], dtype=np.int64)))
    print(g(np.array([1, 2, 3, 4, 5], dtype=np.int64)))
    print(f"traces: {g.experimental_get_tracing_count()}")

    print("== reduce_retracing=True: the second shape traces a relaxed graph ==")
    for n in (2, 3, 4, 5):
        print(relaxed(np.arange(n, dtype=np.float64)))
    print(f"traces: {relaxed.experimental_get_tracing_count()}")

    print("== separate Function objects do not share traces ==")
    ag.function(f)()
    ag.function(f)()


if __name__ == "__main__":
    main()
