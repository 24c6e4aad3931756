"""JAX-style gradients of functions: `grad`, `value_and_grad`, `vjp`; and `stop_gradient`.

Each wraps `f` in an `ag.function` (autograph=False: `f` itself is converted when it is
called inside the trace) whose graph computes f's value and, through the reverse-mode
transform, the gradient. So `f` is traced once per input signature and cached like any
Function, the gradient graph is optimised and compiled like any graph, and the results
are NumPy values. Arguments may be nests (lists, tuples, dicts) of arrays; the gradient
has the structure of the differentiated arguments.
"""

import functools

import numpy as np

from autograph.function import transforms
from autograph.runtime.ir import nest, primitives
from autograph.runtime.ir.graph import get_default_graph
from autograph.runtime.ir.tensor import Tensor


def _as_function(f):
    from autograph.function import Function, function
    return f if isinstance(f, Function) else function(f)


def _staged(fn):
    from autograph.function import function
    return function(fn, autograph=False)


def _argnums(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


def _float_tensors(leaves, what):
    from autograph.autodiff.transform import check_source
    for leaf in leaves:
        if isinstance(leaf, Tensor):
            check_source(leaf)
        else:
            raise TypeError(f"{what}: can only differentiate with respect to arrays, got "
                            f"{type(leaf).__name__}")
    return leaves


def _grads_of(y, args, argnums, grad_y=None, checkpoints=None):
    """The gradient of tensor(s) `y` w.r.t. args[argnums] (zeros where unconnected),
    packed like the arguments; staged into the current graph. `checkpoints`: every loop's
    snapshot budget (None: loops store every step)."""
    from autograph.autodiff.transform import Context, gradients
    parts = [args[i] for i in argnums]
    leaves = _float_tensors(nest.flatten(parts), "grad")
    ys = nest.flatten(y)
    ys = [primitives.convert(v) for v in ys]
    grad_ys = None if grad_y is None else nest.flatten(grad_y)
    ctx = Context()
    ctx.checkpoints = checkpoints
    flat = gradients(ys, leaves, grad_ys, unconnected="zero", ctx=ctx)
    return nest.pack_sequence_as(parts, flat)


def value_and_grad(f, argnums=0, has_aux=False, checkpoints=None):
    """`g(*args)` returns `(f(*args), df/dargs[argnums])` (`((value, aux), grad)` with
    `has_aux=True`, where f returns `(value, aux)`). `argnums` an int gives the gradient
    for that argument, a tuple a tuple of gradients. `checkpoints=c`: every staged loop's
    gradient keeps at most c snapshots of its state instead of one per step (a loop's own
    `ag.set_loop_options(checkpoints=...)` wins; docs/checkpointing.md)."""
    from autograph.runtime.loop_options import check_checkpoints
    checkpoints = check_checkpoints(checkpoints, "value_and_grad")
    single = isinstance(argnums, int)
    nums = _argnums(argnums)
    traced = _as_function(f)

    def staged(*args, **kwargs):
        out = traced(*args, **kwargs)
        value, aux = out if has_aux else (out, None)
        grads = _grads_of(value, args, nums, checkpoints=checkpoints)
        g = grads[0] if single else tuple(grads)
        return ((value, aux), g) if has_aux else (value, g)

    staged.__name__ = f"value_and_grad_{getattr(f, '__name__', 'f')}"
    call = _wrap(_staged(staged), f)
    transforms.register(call, "value_and_grad", f, argnums, has_aux, checkpoints)
    return call


def grad(f, argnums=0, has_aux=False, checkpoints=None):
    """`g(*args)` returns df/dargs[argnums] (and `aux` with `has_aux=True`: `(grad, aux)`).
    `checkpoints`: as for `value_and_grad`."""
    vg = value_and_grad(f, argnums, has_aux, checkpoints)

    def g(*args, **kwargs):
        out, gr = vg(*args, **kwargs)
        return (gr, out[1]) if has_aux else gr
    g = functools.wraps(f)(g) if callable(f) and hasattr(f, "__name__") else g
    g.__ag_grad__ = (f, argnums, has_aux)    # what ag.vmap reads (batching/of_grad.py)
    transforms.register(g, "grad", vg, has_aux)   # (the trace cache's key: transforms.py)
    return g


def _wrap(fn, f):
    def call(*args, **kwargs):
        return fn(*args, **kwargs)
    try:
        functools.update_wrapper(call, f)
    except AttributeError:
        pass
    call.__wrapped_function__ = fn
    return call


def vjp(f, *primals, has_aux=False):
    """`(f(*primals), vjp_fn)` where `vjp_fn(ct)` gives the cotangents of every primal (a
    tuple) for the output cotangent `ct` (a nest like f's output)."""
    traced = _as_function(f)
    n = len(primals)

    def forward(*args):
        return traced(*args)

    def backward(*args):
        primal_args, ct = args[:n], args[n]
        out = traced(*primal_args)
        value = out[0] if has_aux else out
        return tuple(_grads_of(value, primal_args, tuple(range(n)), ct))

    forward.__name__ = f"vjp_forward_{getattr(f, '__name__', 'f')}"
    backward.__name__ = f"vjp_{getattr(f, '__name__', 'f')}"
    fwd, bwd = _staged(forward), _staged(backward)
    out = fwd(*primals)

    def vjp_fn(ct):
        return bwd(*primals, ct)
    if has_aux:
        return out[0], vjp_fn, out[1]
    return out, vjp_fn


# -- stop_gradient ---------------------------------------------------------------------------

def _stop_infer(x):
    return [(x.dtype, x.shape, x.weak)]


primitives.register("stop_gradient", _stop_infer, kernel=lambda xp, x: x,
                    doc="x, through which no gradient flows")
primitives.nondifferentiable("stop_gradient")


def stop_gradient(x):
    """`x`, as a value no gradient flows through (a nest: each leaf). Eagerly on arrays it
    is the value itself."""
    def one(v):
        if isinstance(v, Tensor) or get_default_graph() is not None and hasattr(v, "read_value"):
            v = primitives.convert(v.read_value() if hasattr(v, "read_value") else v)
            return primitives.bind1("stop_gradient", [v])
        return v
    return nest.map_structure(one, x)


__all__ = ["grad", "value_and_grad", "vjp", "stop_gradient"]
_ = np
