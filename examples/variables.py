"""variables: state that lives outside a traced function, done right with ag.Variable.

What it teaches:
- a Variable created on the first call (the Counter module) is kept and updated by every
  later call: its value is read and written when the graph runs, not when it is traced;
- plain Python attributes are read while tracing: changing `model.bias` afterwards is NOT
  seen by the already-traced graph (the same object gives the same trace key);
- Variables as attributes are read at run time, so `bias.assign_add(5.0)` is seen;
- creating a new Variable in a later trace is an error (ValueError).

Run it: python examples/variables.py
"""

import numpy as np

import autograph as ag


class Counter:
    """Counts its calls in a Variable made on the first call."""

    def __init__(self):
        self.count = None

    @ag.function
    def __call__(self):
        if self.count is None:
            self.count = ag.Variable(0)
        self.count.assign_add(1)
        return self.count.read_value()


class SimpleModel:
    def __init__(self):
        # These values are *not* Variables.
        self.bias = 0.0
        self.weight = 2.0


class BetterModel:
    def __init__(self):
        self.bias = ag.Variable(0.0)
        self.weight = ag.Variable(2.0)


@ag.function
def evaluate(model, x):
    return model.weight * x + model.bias


@ag.function
def add_fresh_variable(x):
    v = ag.Variable(1.0)
    return v.read_value() + x


def main():
    print("== a counter module ==")
    c = Counter()
    for _ in range(3):
        print("count:", c())

    x = np.float64(10.0)
    print("== plain attributes are read while tracing ==")
    simple = SimpleModel()
    print("simple:", evaluate(simple, x))
    simple.bias += 5.0
    print("after bias += 5:", evaluate(simple, x), "(stale: the trace baked in bias = 0)")

    print("== Variables are read when the graph runs ==")
    better = BetterModel()
    print("better:", evaluate(better, x))
    better.bias.assign_add(5.0)
    print("after bias.assign_add(5):", evaluate(better, x))

    print("== a Variable may only be created on the first trace ==")
    print("first trace:", add_fresh_variable(np.float64(1.0)))
    try:
        add_fresh_variable(np.float32(1.0))     # a new dtype: a second trace
        print("second trace created a Variable")
    except ValueError as e:
        print(f"second trace: ValueError: {e}")


if __name__ == "__main__":
    main()
