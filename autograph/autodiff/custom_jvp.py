"""`ag.custom_jvp`: JAX's decorator for a function whose derivative the user gives.

    @ag.custom_jvp
    def f(x, y):
        return np.sin(x) * y

    @f.defjvp
    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        return f(x, y), np.cos(x) * tx * y + np.sin(x) * ty

While tracing, `f` runs as written for the value, and the JVP function is traced at once
into a graph (its primals and tangents are placeholders; its parent is the current
graph, so what it uses of the enclosing trace is captured), held by a `custom_jvp` node
that passes the value through. Forward mode inlines the held graph with the tangents;
reverse mode transposes it (one reverse pass over the inlined tangent computation, whose
value is linear in the tangents), so `ag.grad` agrees with the rule too, as in JAX.
Eagerly (no trace), `f` is called as it is. Arguments are arrays (all differentiated);
the output is one array.
"""

import functools

import numpy as np

from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import Graph, get_default_graph


def _infer(y, *args, jvp_graph, n_args):
    return [(y.dtype, y.shape, y.weak)]


def _kernel(xp, y, *args, jvp_graph, n_args):
    return y


def _inline(node, primals, tangents):
    """The tangent output of the held graph, staged on `primals` and `tangents`."""
    from autograph.autodiff import jvp
    g = node.attrs["jvp_graph"]
    n = node.attrs["n_args"]
    env = {}
    for ph, x in zip(g.inputs[:2 * n], list(primals) + list(tangents)):
        env[id(ph)] = x
    for outer, inner in g.captures.values():
        env[id(inner)] = node.resolve(outer)
    jvp.jvp_nodes(g.nodes, env, {}, jvp.Context())
    out = g.outputs[0]
    return env[id(out)] if id(out) in env else node.resolve(out)


def _jvp_rule(tangents, node):
    from autograph.autodiff.jvp_table import instantiate
    xs = list(node.inputs[1:])
    ts = [instantiate(t, x) for t, x in zip(tangents[1:], xs)]
    return [_inline(node, xs, ts)]


def _vjp_rule(cts, node):
    from autograph.autodiff.jvp_table import zeros_like
    from autograph.autodiff.transform import Context, active_tensors, backprop
    graph = get_default_graph()
    xs = [node.inputs[i] for i in range(1, len(node.inputs))]
    start = len(graph.nodes)
    ts = [zeros_like(x) for x in xs]
    out = _inline(node, xs, ts)
    nodes = graph.nodes[start:]
    ctx = Context()
    active = active_tensors(nodes, [id(t) for t in ts], ctx)
    got = backprop(nodes, {id(out): cts[0]}, active, ctx)
    return [None] + [got.get(id(t)) for t in ts]


primitives.register("custom_jvp", _infer, _kernel, vjp=_vjp_rule,
                    doc="y, whose derivative is the graph in attrs['jvp_graph']")


def _defjvp_rule():
    from autograph.autodiff.jvp_table import defjvp
    defjvp("custom_jvp", _jvp_rule)


class custom_jvp:
    """Decorate `fun`; give its JVP with `@fun.defjvp`: `jvp(primals, tangents)` returns
    `(fun(*primals), tangent_out)`."""

    def __init__(self, fun):
        self.fun, self.jvp = fun, None
        self._tracing_rule = 0     # the rule calls `f` for its primal (JAX's idiom): plain
        functools.update_wrapper(self, fun)

    def defjvp(self, jvp):
        self.jvp = jvp
        return jvp

    def __call__(self, *args):
        graph = get_default_graph()
        if graph is None or self._tracing_rule:
            return self.fun(*args)
        if self.jvp is None:
            raise TypeError(f"{self.fun.__name__} is an ag.custom_jvp function without a "
                            f"rule: give one with @{self.fun.__name__}.defjvp")
        xs = [primitives.convert(a) for a in args]
        y = primitives.convert(self.fun(*xs))
        g = Graph(graph.unique_name("custom_jvp"), parent=graph)
        with g.as_default():
            ps = [g.placeholder(f"p{i}", x.dtype, x.shape, x.weak) for i, x in enumerate(xs)]
            ts = [g.placeholder(f"t{i}", x.dtype, x.shape) for i, x in enumerate(xs)]
            self._tracing_rule += 1
            try:
                res = self.jvp(tuple(ps), tuple(ts))
            finally:
                self._tracing_rule -= 1
            if not isinstance(res, (tuple, list)) or len(res) != 2:
                raise TypeError(f"the JVP rule of {self.fun.__name__} must return "
                                "(primal_out, tangent_out)")
            tout = primitives.convert(res[1])
            if tout.dtype != y.dtype:
                tout = tout.astype(y.dtype)
            if tout.shape != y.shape and y.shape is not None and None not in y.shape:
                tout = np.broadcast_to(tout, y.shape)
        g.set_outputs([tout], identity=False)
        return primitives.bind1("custom_jvp", [y] + xs, {"jvp_graph": g, "n_args": len(xs)})


_defjvp_rule()
