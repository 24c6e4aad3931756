"""JAX-style forward mode and Jacobians: `jvp`, `jacfwd`, `jacrev`, `hessian`, `hvp`.

Each stages its work into an `ag.function` (autograph=False; `fn` itself is converted
when called inside the trace), so it is traced once per input signature, cached per
`fn` (held weakly), optimised and compiled like any graph. Inside the trace, `fn` is
traced into a graph of its own (`trace`), which the JVP transform (jvp.py) copies into
the trace with tangents, once per tangent direction. Called inside another trace, each
of these inlines, so they compose with each other and with `ag.grad`, `ag.function` and
`GradientTape`.

- `jvp(fn, primals, tangents)` -> `(fn(*primals), J tangents)`; `primals` and `tangents`
  are tuples of the same structure (pytrees of arrays); the tangent output has the
  output's structure, zeros where the output does not depend on the primals.
- `jacfwd(fn, argnums=0)`: one JVP per input element (a column each); `jacrev`: one VJP
  per output element (a row each). Shape: output shape + input shape; a tuple `argnums`
  gives a tuple; pytree outputs give the same pytree of Jacobians.
- `hessian(fn, argnums=0)` = `jacfwd(jacrev(fn))`: forward over reverse.
- `hvp(fn, primals, vector)`: the Hessian of a scalar `fn` at `primals` times `vector`,
  forward over reverse (one JVP of the gradient: about 2-3 gradient evaluations, no
  Hessian formed).
"""

import functools
import weakref

import numpy as np

from autograph.runtime.ir import nest, primitives
from autograph.runtime.ir.graph import Graph, get_default_graph
from autograph.runtime.ir.tensor import Tensor

_cache = weakref.WeakKeyDictionary()   # fn -> {key: staged Function}


def _as_function(fn):
    from autograph.function import Function, function
    return fn if isinstance(fn, Function) else function(fn)


def _cached(fn, key, make):
    try:
        per = _cache.setdefault(fn, {})
    except TypeError:        # not weakly referable: no cache
        return make()
    if key not in per:
        per[key] = make()
    return per[key]


def _staged(body, name):
    from autograph.function import function
    body.__name__ = name
    return function(body, autograph=False)


def _name(fn):
    return getattr(fn, "__name__", type(fn).__name__)


def _as_arrays(tree):
    """Python numbers among the leaves become arrays: a differentiated argument is a tensor
    of the trace (a Python number would be a constant of it, and its tangent lost)."""
    def one(v):
        if isinstance(v, (int, float, complex, np.generic)) and not isinstance(v, bool):
            return np.asarray(v)
        return v
    return nest.map_structure(one, tree)


def _argnums(argnums):
    return (argnums,) if isinstance(argnums, int) else tuple(argnums)


# -- tracing fn into a graph of its own ------------------------------------------------------

class Traced:
    """`fn` traced on the leaves of `args` (a graph whose inputs are those leaves' tensors).
    `outputs`: fn's result with its tensors replaced by graph outputs' positions."""

    def __init__(self, fn, args):
        outer = get_default_graph()
        self.graph = g = Graph(outer.unique_name(f"{_name(fn)}_traced"), parent=outer)
        self.leaves = nest.flatten(list(args))
        with g.as_default():
            phs = [g.placeholder(f"arg{i}", x.dtype, x.shape, x.weak) if isinstance(x, Tensor)
                   else x for i, x in enumerate(self.leaves)]
            out = fn(*nest.pack_sequence_as(list(args), phs))
            flat = nest.flatten(out)
            tensors = [primitives.convert(x) if not isinstance(x, Tensor) and _arraylike(x)
                       else x for x in flat]
            self.slots = [i for i, x in enumerate(tensors) if isinstance(x, Tensor)]
            g.set_outputs([tensors[i] for i in self.slots], identity=False)
        self.out, self.flat = out, tensors

    def inputs(self):
        return [x for x in self.leaves if isinstance(x, Tensor)]

    def run(self, tangents):
        """(fn's output, its tangent) staged into the current graph, `tangents` one per
        tensor leaf of the arguments (None: zero)."""
        from autograph.autodiff import jvp as jvp_mod
        outs, touts = jvp_mod.jvp_graph(self.graph, self.inputs(), tangents)
        flat, tflat = list(self.flat), [None] * len(self.flat)
        for k, i in enumerate(self.slots):
            flat[i], tflat[i] = outs[k], touts[k]
        tflat = [_zeros_tangent(v) if t is None else t for v, t in zip(flat, tflat)]
        return (nest.pack_sequence_as(self.out, flat), nest.pack_sequence_as(self.out, tflat))


def _arraylike(x):
    return isinstance(x, (int, float, complex, np.ndarray, np.generic)) and \
        not isinstance(x, bool)


def _zeros_tangent(v):
    """The zero tangent of an output that does not depend on the primals (integer outputs
    get float zeros, as JAX's float0 would be unusable here)."""
    if isinstance(v, Tensor):
        return np.zeros_like(v, dtype=v.dtype if v.dtype.kind in "fc" else np.float64)
    v = np.asarray(v)
    return np.zeros_like(v, dtype=v.dtype if v.dtype.kind in "fc" else np.float64)


def _check_tangent(p, t, where):
    p, t = primitives.convert(p), primitives.convert(t)
    if p.dtype.kind not in "fc":
        raise TypeError(f"{where}: a primal of dtype {p.dtype.name} has no tangent; "
                        "differentiate with respect to floating-point arrays")
    if p.shape is not None and t.shape is not None and tuple(p.shape) != tuple(t.shape):
        raise ValueError(f"{where}: the tangent's shape {t.shape} differs from the primal's "
                         f"{p.shape}")
    return t if t.dtype == p.dtype else t.astype(p.dtype)


# -- jvp -------------------------------------------------------------------------------------

def _jvp_body(fn, n):
    traced = _as_function(fn)

    def body(*args):
        primals, tangents = list(args[:n]), list(args[n:])
        nest.assert_same_structure(primals, tangents, "primals and tangents")
        tr = Traced(traced, primals)
        pl, tl = nest.flatten(primals), nest.flatten(tangents)
        ts = [_check_tangent(p, t, "jvp") for p, t in zip(pl, tl) if isinstance(p, Tensor)]
        return tr.run(ts)
    return body


def jvp(fn, primals, tangents):
    """`(fn(*primals), the derivative of fn at primals along tangents)`."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp(fn, primals, tangents): primals and tangents must be tuples "
                        "(one entry per argument of fn), e.g. jvp(f, (x,), (v,))")
    if len(primals) != len(tangents):
        raise ValueError(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    n = len(primals)
    staged = _cached(fn, ("jvp", n), lambda: _staged(_jvp_body(fn, n), f"jvp_{_name(fn)}"))
    return staged(*_as_arrays(list(primals)), *_as_arrays(list(tangents)))


# -- Jacobians -------------------------------------------------------------------------------

def _basis(x):
    """The one-hot tangents of tensor `x` (static shape), as constants."""
    shape = tuple(x.shape)
    size = int(np.prod(shape, dtype=np.int64))
    eye = np.eye(size, dtype=x.dtype)
    return [primitives.const(eye[k].reshape(shape)) for k in range(size)], shape


def _static(x, what):
    if not isinstance(x, Tensor) or x.shape is None or None in x.shape:
        raise ValueError(f"{what}: the Jacobian needs inputs of known shape, got "
                         f"{getattr(x, 'shape', x)!r}")
    if x.dtype.kind not in "fc":
        raise TypeError(f"{what}: can only differentiate with respect to floating-point "
                        f"arrays, got dtype {x.dtype.name}")


def _assemble(cols, out, in_shape):
    """Columns (one per input element, each shaped like `out`) -> out.shape + in_shape."""
    out_shape = tuple(out.shape) if isinstance(out, Tensor) else np.shape(out)
    if not cols:
        return np.zeros(out_shape + in_shape, np.float64)
    j = np.stack([primitives.convert(c) for c in cols], axis=-1)
    return np.reshape(j, out_shape + in_shape)


def _rows(rows, out_shape, x):
    if not rows:
        return np.zeros(out_shape + tuple(x.shape), x.dtype)
    return np.reshape(np.stack(rows, axis=0), out_shape + tuple(x.shape))


def _jac_structure(out_flat, per_leaf, args, nums, single):
    """out pytree of (args[argnums] pytree of Jacobians)."""
    parts = [args[i] for i in nums]
    res = []
    for k in range(len(out_flat)):
        packed = nest.pack_sequence_as(parts, [per_leaf[j][k] for j in range(len(per_leaf))])
        res.append(packed[0] if single else tuple(packed))
    return res


def _jacfwd_body(fn, nums, single):
    traced = _as_function(fn)

    def body(*args):
        args = list(args)
        tr = Traced(traced, args)
        leaves = nest.flatten(args)
        tensor_pos = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
        starts = np.cumsum([0] + [len(nest.flatten(a)) for a in args])
        chosen = [i for a in nums for i in range(starts[a], starts[a + 1])]
        out_flat = nest.flatten(tr.out)
        per_leaf = []
        for i in chosen:
            x = leaves[i]
            _static(x, "jacfwd")
            basis, shape = _basis(x)
            cols = []
            for e in basis:
                ts = [e if p == i else None for p in tensor_pos]
                cols.append(nest.flatten(tr.run(ts)[1]))
            per_leaf.append([_assemble([c[k] for c in cols], out_flat[k], shape)
                             for k in range(len(out_flat))])
        res = _jac_structure(out_flat, per_leaf, args, nums, single)
        return nest.pack_sequence_as(tr.out, res)
    return body


def _chosen_as_arrays(args, nums):
    return [_as_arrays(a) if i in nums else a for i, a in enumerate(args)]


def jacfwd(fn, argnums=0):
    """The Jacobian of `fn` by forward mode (one JVP per input element)."""
    single, nums = isinstance(argnums, int), _argnums(argnums)
    def make():
        return _staged(_jacfwd_body(fn, nums, single), f"jacfwd_{_name(fn)}")
    return _wrap(lambda *args: _cached(fn, ("jacfwd", nums, single), make)(
        *_chosen_as_arrays(args, nums)), fn)


def _jacrev_body(fn, nums, single):
    traced = _as_function(fn)

    def body(*args):
        from autograph.autodiff.transform import check_source, gradients
        args = list(args)
        out = traced(*args)
        parts = [args[i] for i in nums]
        xs = nest.flatten(parts)
        for x in xs:
            _static(x, "jacrev")
            check_source(x)
        out_flat = [primitives.convert(y) for y in nest.flatten(out)]
        per_out = []
        for y in out_flat:
            _static(y, "jacrev")
            basis, shape = _basis(y)
            rows = [gradients([y], xs, [e], unconnected="zero") for e in basis]
            per_out.append([_rows([r[j] for r in rows], shape, x) for j, x in enumerate(xs)])
        per_leaf = [[per_out[k][j] for k in range(len(out_flat))] for j in range(len(xs))]
        res = _jac_structure(out_flat, per_leaf, args, nums, single)
        return nest.pack_sequence_as(out, res)
    return body


def jacrev(fn, argnums=0):
    """The Jacobian of `fn` by reverse mode (one VJP per output element)."""
    single, nums = isinstance(argnums, int), _argnums(argnums)
    def make():
        return _staged(_jacrev_body(fn, nums, single), f"jacrev_{_name(fn)}")
    return _wrap(lambda *args: _cached(fn, ("jacrev", nums, single), make)(
        *_chosen_as_arrays(args, nums)), fn)


def hessian(fn, argnums=0):
    """The Hessian of a scalar `fn`: `jacfwd(jacrev(fn, argnums), argnums)`."""
    return jacfwd(jacrev(fn, argnums), argnums)


def _hvp_body(fn, n):
    traced = _as_function(fn)

    def grad_fn(*xs):
        from autograph.autodiff.api import _grads_of
        return tuple(_grads_of(traced(*xs), list(xs), tuple(range(n))))

    def body(*args):
        primals, vector = list(args[:n]), list(args[n:])
        nest.assert_same_structure(primals, vector, "primals and vector")
        tr = Traced(grad_fn, primals)
        pl, vl = nest.flatten(primals), nest.flatten(vector)
        ts = [_check_tangent(p, t, "hvp") for p, t in zip(pl, vl) if isinstance(p, Tensor)]
        h = tr.run(ts)[1]
        return h[0] if n == 1 else tuple(h)
    return body


def hvp(fn, primals, vector):
    """The Hessian of scalar `fn` at `primals` times `vector` (forward over reverse):
    `jvp(grad(fn), primals, vector)[1]`. `primals`, `vector`: tuples, one entry per
    argument; the result is one array for one argument, else a tuple."""
    if not isinstance(primals, (tuple, list)) or not isinstance(vector, (tuple, list)):
        raise TypeError("hvp(fn, primals, vector): primals and vector must be tuples, "
                        "e.g. hvp(f, (x,), (v,))")
    n = len(primals)
    staged = _cached(fn, ("hvp", n), lambda: _staged(_hvp_body(fn, n), f"hvp_{_name(fn)}"))
    return staged(*_as_arrays(list(primals)), *_as_arrays(list(vector)))


def _wrap(call, fn):
    try:
        functools.update_wrapper(call, fn)
    except (AttributeError, TypeError):
        pass
    return call


__all__ = ["jvp", "jacfwd", "jacrev", "hessian", "hvp"]
