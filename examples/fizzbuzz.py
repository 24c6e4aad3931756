"""FizzBuzz over a tensor range: the main demo of what autograph does.

What it teaches:
- a `for` loop over `ag.range(1, n + 1)` with a tensor `n` becomes ONE while_loop node, and an
  `if/elif/else` chain on a tensor becomes nested cond nodes: every branch is traced, once;
- Python's `print` runs while tracing only, so each "Tracing ..." line appears once per branch,
  while `ag.print` is a graph node that prints on every call;
- a second call with the same signature (an int64 scalar) reuses the traced graph: no tracing;
- `ag.to_code` shows the converted source, and the graph stays small whatever `n` is.

Run it: python examples/fizzbuzz.py
"""

import numpy as np

import autograph as ag


@ag.function
def fizzbuzz(n):
    for i in ag.range(1, n + 1):
        print("Tracing for loop")
        if i % 15 == 0:
            print("Tracing fizzbuzz branch")
            ag.print("fizzbuzz")
        elif i % 3 == 0:
            print("Tracing fizz branch")
            ag.print("fizz")
        elif i % 5 == 0:
            print("Tracing buzz branch")
            ag.print("buzz")
        else:
            print("Tracing default branch")
            ag.print(i)


def main():
    print("== the converted code: ag.to_code(fizzbuzz) ==")
    print(ag.to_code(fizzbuzz))
    print("== fizzbuzz(5): the first call traces every branch once, then runs the graph ==")
    fizzbuzz(np.int64(5))
    print("== fizzbuzz(20): same signature (int64 scalar), no tracing, only ag.print runs ==")
    fizzbuzz(np.int64(20))
    print("== the graph ==")
    graph = fizzbuzz.get_concrete_function(ag.TensorSpec([], np.int64)).graph
    top = len(graph.as_graph_def().node)
    total = sum(1 for _ in graph.walk())
    print(f"{top} nodes at the top level, {total} counting the loop body and branches,")
    print("the same for n = 5, 20 or 10**6: the loop is a node, not unrolled.")
    print(f"traces: {fizzbuzz.experimental_get_tracing_count()}")
    print("draw it: autograph graph examples/fizzbuzz.py::fizzbuzz --arg 'int64[]' -o fizzbuzz.svg")


if __name__ == "__main__":
    main()
