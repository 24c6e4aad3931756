"""dataset_training: the `train(dataset)` pattern of the tf.function guide, with ag.data.

What it teaches:
- `for x, y in dataset:` inside an ag.function is ONE while_loop node, however many
  elements the dataset has: the graph of the guide's `train(dataset)` has the same node
  count for 10 elements and for 1,000,000, while a loop over a Python list unrolls;
- the arrays of `from_tensor_slices` enter the graph as the function's inputs, never as
  constants, so the graph stays a few hundred bytes for any amount of data;
- a real model trained over shuffled batches in one call: linear regression by SGD, the
  shuffle seeded so the epochs (`repeat`) are reproducible, each new iteration reshuffles,
  and the k-th eager iteration gives the same batches in the same order as the k-th run.

Run it: python examples/dataset_training.py
"""

import numpy as np

import autograph as ag
from autograph.data import Dataset


@ag.function
def train(dataset):
    loss = np.int64(0)
    for x, y in dataset:
        loss += np.abs(y - x)   # some dummy computation, as in the guide
    return loss


def node_count(fn, *args):
    return sum(1 for _ in fn.get_concrete_function(*args).graph.walk())


def const_bytes(fn, *args):
    graph = fn.get_concrete_function(*args).graph
    return sum(n.attrs["value"].nbytes for n in graph.walk() if n.op == "Const")


TRUE_W = np.array([2.0, -1.0, 0.5])


def make_data(n=2048, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3))
    return x, x @ TRUE_W + 0.01 * rng.standard_normal(n)


@ag.function
def fit(dataset, w, lr):
    step = np.int64(0)
    for xb, yb in dataset:
        err = xb @ w - yb
        w = w - lr * (xb.T @ err) / len(xb)
        step += 1
    return w, step


def fit_eagerly(dataset, w, lr):
    for xb, yb in dataset:
        w = w - lr * (xb.T @ (xb @ w - yb)) / len(xb)
    return w


def main():
    print("== the guide's train(dataset): node count ==")
    for n in (10, 10**6):
        ds = Dataset.from_tensor_slices((np.ones(n, np.int64), np.full(n, 3, np.int64)))
        print(f"train(Dataset of {n} pairs) = {train(ds)}: {node_count(train, ds)} nodes, "
              f"{const_bytes(train, ds)} bytes in constants")
    for n in (3, 10):
        data = [(np.int64(1), np.int64(1))] * n
        print(f"train(list of {n} pairs): {node_count(ag.function(train.python_function), data)} nodes")

    print("== SGD over shuffled batches, 20 epochs in one call ==")
    x, y = make_data()
    def make():
        return Dataset.from_tensor_slices((x, y)).shuffle(512, seed=0).batch(64).repeat(20)
    ds = make()
    w, steps = fit(ds, np.zeros(3), 0.1)
    print(f"steps: {steps}")
    print(f"w: {np.round(w, 3)} (true {TRUE_W})")
    # the k-th traced run and the k-th eager iteration of a dataset see the same order
    # (each new iteration reshuffles): compare with the first iteration of a twin dataset
    print(f"same as eager iteration: {np.allclose(w, fit_eagerly(make(), np.zeros(3), 0.1))}")
    print(f"while_loop nodes in fit's graph: "
          f"{sum(n.op == 'while_loop' for n in fit.get_concrete_function(ds, np.zeros(3), 0.1).graph.nodes)}")


if __name__ == "__main__":
    main()
