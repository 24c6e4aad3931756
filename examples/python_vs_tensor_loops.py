"""python_vs_tensor_loops: a loop over Python data unrolls; a loop over a tensor does not.

What it teaches:
- iterating over a Python list inside a traced function runs the loop while tracing, adding
  a copy of the body to the graph for every element: the graph grows with the data;
- iterating over a tensor (here the rows of an array argument) becomes one while_loop node:
  the graph has the same size for 3 rows or 10, and for any number at run time.

Run it: python examples/python_vs_tensor_loops.py
"""

import numpy as np

import autograph as ag


@ag.function
def train(dataset):
    loss = ag.constant(0)
    for x, y in dataset:
        loss += np.abs(y - x)   # some dummy computation
    return loss


@ag.function
def train_tensor(dataset):
    loss = ag.constant(0)
    for row in dataset:
        loss += np.abs(row[1] - row[0])
    return loss


def graph_size(f, *args):
    """Nodes of the traced graph, counting those inside loop bodies and branches."""
    graph = f.get_concrete_function(*args).graph
    return len(graph.as_graph_def().node), sum(1 for _ in graph.walk())


def make_data(n):
    return [(i, 2 * i + 1) for i in range(n)]


def main():
    small, big = make_data(3), make_data(10)
    print("== a Python list: the loop is unrolled while tracing ==")
    for data in (small, big):
        top, total = graph_size(train, data)
        print(f"train(list of {len(data)} pairs): {top} nodes ({total} with nested), "
              f"loss = {int(train(data))}")
    print("== an array: one while_loop node ==")
    for data in (small, big):
        array = np.array(data, dtype=np.int64)
        top, total = graph_size(train_tensor, array)
        print(f"train_tensor(int64 array {array.shape}): {top} nodes ({total} with nested), "
              f"loss = {int(train_tensor(array))}")


if __name__ == "__main__":
    main()
