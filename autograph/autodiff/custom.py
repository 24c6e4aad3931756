"""`ag.custom_gradient`: TensorFlow's decorator, traced.

`f(*args)` returns `(y, grad_fn)`; `grad_fn(dy)` returns one gradient per argument. While
tracing, `grad_fn` is traced at once into a graph (its parent is the current graph, so
what it uses of the forward pass is captured), and `y` passes through a
`custom_gradient` node that holds that graph in its attrs. The node runs as the identity;
its gradient rule inlines the held graph with the cotangent. The rule is graph ops, not a
Python callback, so it survives saving and runs on every executor. Eagerly (no trace and
no tape) `f`'s value is returned as it is.
"""

import functools

from autograph.autodiff.transform import gradient_origin
from autograph.runtime.ir import nest, primitives
from autograph.runtime.ir.graph import Graph, get_default_graph
from autograph.runtime.ir.tensor import Tensor


def _infer(y, *args, grad_graph, n_args):
    return [(y.dtype, y.shape, y.weak)]


def _kernel(xp, y, *args, grad_graph, n_args):
    return y


def _vjp(cts, node):
    g = node.attrs["grad_graph"]
    n_args = node.attrs["n_args"]
    env = {id(g.inputs[0]): cts[0]}
    for outer, inner in g.captures.values():
        env[id(inner)] = node.resolve(outer)
    for n in g.nodes:
        if n.op == "Placeholder":
            continue
        ins = [env[id(t)] for t in n.inputs]
        new = get_default_graph().add_node(n.op, ins, n.attrs,
                                           [(t.dtype, t.shape, t.weak) for t in n.outputs],
                                           name=n.name, origin=gradient_origin(n.origin))
        for a, b in zip(n.outputs, new.outputs):
            env[id(a)] = b
    grads = [env.get(id(t), t) for t in g.outputs]
    return [None] + grads[:n_args] + [None] * (len(node.inputs) - 1 - n_args)


primitives.register("custom_gradient", _infer, _kernel,
                    doc="y, whose gradient is the graph in attrs['grad_graph']", vjp=_vjp)


def custom_gradient(f):
    """Decorate `f(*args) -> (y, grad_fn)`; `grad_fn(dy)` returns the gradients of the
    arguments (one, or a tuple/list of them). `y` is a single tensor."""
    @functools.wraps(f)
    def wrapper(*args):
        y, grad_fn = f(*args)
        graph = get_default_graph()
        if graph is None:
            return y
        y = primitives.convert(y)
        g = Graph(graph.unique_name("custom_grad"), parent=graph)
        with g.as_default():
            dy = g.placeholder("dy", y.dtype, y.shape)
            grads = grad_fn(dy)
            grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
            if len(grads) != len(args):
                raise TypeError(f"the grad_fn of {f.__name__} returned {len(grads)} "
                                f"gradients for {len(args)} arguments")
            grads = [primitives.convert(x) for x in grads]
        g.set_outputs(grads, identity=False)
        xs = [primitives.convert(a) for a in args]
        return primitives.bind1("custom_gradient", [y] + xs,
                                {"grad_graph": g, "n_args": len(xs)})
    return wrapper


_ = (nest, Tensor)
