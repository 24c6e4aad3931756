"""Case 7: how conversion and tracing grow with program size.

- convert: `ag.to_graph` on generated functions of about 10, 100 and 1000 lines (sequences
  of if/else blocks, assignments and small for loops), each timed call on a never-seen
  function. Python's own `compile` of the same text is shown as the floor.
- trace: the first call of `ag.function(..., autograph=False)` (trace + optimize + compile +
  run; `autograph`) and `get_concrete_function(TensorSpec)` alone (the trace; optimizing and
  compiling wait for the first call; `autograph_trace`) on a chain of `x = np.tanh(x) + x`
  steps, giving graphs of 10^2..10^4 nodes; building the same graph directly with
  `runtime.graph.Graph` is shown as the floor.
The report fits log(time) against log(size): the slope is the growth exponent (1 = linear).
"""

import numpy as np

from benchmarks import programs
from benchmarks.cases._common import autograph
from benchmarks.harness import Case, Contender

CONVERT_LINES = [10, 100, 1000]
TRACE_NODES = [100, 1_000, 10_000]
QUICK = 2          # --quick keeps the two smallest sizes


def generated_source(lines):
    """A function of about `lines` lines mixing the constructs converters rewrite."""
    blocks = max(1, round((lines - 3) / 7))
    body = ["def generated(x):", "    y = x * 0.0"]
    for k in range(blocks):
        body += [f"    if x > {k % 7 * 0.1:.1f}:",
                 "        y = y + 1.0",
                 "    else:",
                 "        y = y - 1.0",
                 "    x = x * 0.5 + y",
                 "    for i in range(2):",
                 "        y = y + i"]
    body.append("    return x + y")
    return "\n".join(body) + "\n"


def _convert_case(lines):
    source = generated_source(lines)
    count = source.count("\n")

    def build(quick):
        def make_ag():
            ag = autograph()
            fn = programs.fresh_function(source, "generated", {})
            return lambda: (fn, ag.to_graph(fn))

        def same_as_original(pair):
            fn, converted = pair
            for x in (0.05, 0.35, 0.9):
                want, got = fn(x), converted(x)
                if not np.isclose(want, got):
                    raise AssertionError(f"converted code gives {got} at x={x}, "
                                         f"the original {want}")
            return np.float64(0)

        path = "<generated>"
        contenders = [
            Contender("python_compile", lambda: lambda: compile(source, path, "exec"),
                      check=False, result=lambda _: 0),
            Contender("autograph", make_ag, fresh=True, result=same_as_original, check=False),
        ]
        return {"lines": count, "x": count}, contenders
    return Case(f"7a_convert_{lines}", f"convert a {count}-line function (ag.to_graph)",
                build, reference=None, series="convert lines", x=count, floor="python_compile")


def chain_source(steps):
    return (f"def chain(x):\n"
            f"    for _ in range({steps}):\n"
            f"        x = np.tanh(x) + x\n"
            f"    return x\n")


def build_graph(steps):
    """The same chain built directly in the graph IR: placeholder, 2 nodes a step, output."""
    from autograph.runtime.ir.graph import Graph
    graph = Graph("chain")
    with graph.as_default():
        x = graph.placeholder("x", np.float64, (4,))
        for _ in range(steps):
            x = np.tanh(x) + x
        graph.set_outputs([x])
    return graph


def _trace_case(nodes):
    steps = max(1, (nodes - 2) // 2)

    def build(quick):
        x = np.linspace(-1.0, 1.0, 4)
        eager = programs.fresh_function(chain_source(steps), "chain", {"np": np})
        try:
            count = len(build_graph(steps).nodes)
        except Exception:  # noqa: BLE001 - the IR may not build yet; use the design count
            count = 2 * steps + 2

        def make_ag():
            ag = autograph()
            fn = programs.fresh_function(chain_source(steps), "chain", {"np": np})
            return lambda: ag.function(fn, autograph=False)(x)

        def make_trace_only():
            ag = autograph()
            fn = programs.fresh_function(chain_source(steps), "chain", {"np": np})
            spec = ag.TensorSpec(x.shape, x.dtype)
            return lambda: ag.function(fn, autograph=False).get_concrete_function(spec)

        contenders = [
            Contender("numpy_eager", lambda: lambda: eager(x)),
            Contender("graph_build", lambda: lambda: build_graph(steps),
                      check=False, result=lambda g: len(g.nodes)),
            Contender("autograph_trace", make_trace_only, fresh=True, check=False,
                      result=lambda conc: len(conc.graph.nodes)),
            Contender("autograph", make_ag, fresh=True),
        ]
        return {"steps": steps, "nodes": count, "x": count}, contenders
    return Case(f"7b_trace_{nodes}", f"trace+compile a graph of ~{nodes} nodes (first call)",
                build, series="trace nodes", x=nodes, floor="graph_build")


def cases(quick):
    sizes_c = CONVERT_LINES[:QUICK] if quick else CONVERT_LINES
    sizes_t = TRACE_NODES[:QUICK] if quick else TRACE_NODES
    return [_convert_case(n) for n in sizes_c] + [_trace_case(n) for n in sizes_t]
