"""Random numbers: draws from a NumPy generator staged as effectful graph nodes.

Eagerly `rng.normal(0, 1, size=3)` is NumPy's own call. While tracing, a call on a
`numpy.random.Generator` or `numpy.random.RandomState` (the legacy `np.random.random`,
`np.random.seed`, ... are methods of NumPy's global RandomState) becomes one `random` node
that holds the generator *object* and calls the same method on it each time the graph
runs, with the run's values of any tensor arguments. So a traced function draws exactly
the numbers eager NumPy draws from that generator, in the same order, and new numbers on
every call. The node is effectful: it is never folded, merged, dropped or reordered (a
draw whose result is unused still advances the generator, as it does eagerly), and a node
in a loop body draws once per iteration.

The graph holds the generator strongly (NumPy's Generator cannot be weakly referenced; the
function's globals or closure hold it anyway). A generator created inside the traced
function (`rng = np.random.default_rng(0)`) is made anew on every run by an `rng_new`
node, as the Python function makes it on every call.

Each primitive's shape rule (`_infer`, with the per-method rules below) and kernel sit
side by side here; `autograph.operators.calls.converted_call` routes calls to `call`.
"""

import inspect

import numpy as np

from autograph.errors import StagingError
from autograph.runtime.ir import nest, primitives, shapes
from autograph.runtime.ir import tensor as _tensor
from autograph.runtime.ir.graph import get_default_graph
from autograph.runtime.ir.tensor import Tensor

SOURCES = (np.random.Generator, np.random.RandomState)
# module functions that are not methods of the global RandomState
MODULE_FUNCTIONS = (np.random.default_rng, np.random.seed)

# methods whose result is float (NumPy's `dtype=` argument, where it has one, else float64)
_FLOAT = {"random", "random_sample", "sample", "ranf", "uniform", "normal", "standard_normal",
          "exponential", "standard_exponential", "gamma", "standard_gamma", "beta",
          "lognormal", "laplace", "logistic", "gumbel", "chisquare", "noncentral_chisquare",
          "f", "noncentral_f", "standard_t", "standard_cauchy", "triangular", "vonmises",
          "wald", "weibull", "pareto", "rayleigh", "power"}
# methods whose result is int64 (NumPy's default integer on the platforms we run on)
_INT = {"poisson", "binomial", "negative_binomial", "geometric", "hypergeometric", "zipf",
        "logseries"}
_SPECIAL = {"integers", "randint", "rand", "randn", "choice", "permutation", "shuffle",
            "seed"}
SUPPORTED = _FLOAT | _INT | _SPECIAL
# arguments that are not distribution parameters (they do not broadcast into the shape)
_NOT_PARAMS = {"size", "dtype", "out", "method", "endpoint", "axis", "replace", "p",
               "shuffle"}


class _Slot:
    """Where a tensor argument's run-time value goes in a call's arguments."""

    def __repr__(self):
        return "<tensor>"


_SLOT = _Slot()


# -- the kernels --------------------------------------------------------------------------------

def _host(value):
    """A device array (or NumPy value) as NumPy: the generator draws on the host. NumPy's
    random API takes scalars where it refuses 0-d arrays (default_rng(np.array(3)))."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value
    from autograph.runtime.devices import device_of
    device = device_of(value)
    out = np.asarray(value) if device is None else np.asarray(device.to_host(value))
    return out[()] if out.ndim == 0 else out   # a 0-d value as the NumPy scalar the CPU gives


def _fill(template, arrays):
    """The call's (args, kwargs) with this run's values in the tensors' places."""
    it = iter(arrays)
    leaves = [_host(next(it)) if leaf is _SLOT else leaf for leaf in nest.flatten(template)]
    return nest.pack_sequence_as(template, leaves)


def _to_device(xp, value, dtype):
    out = np.asarray(value, dtype=dtype)
    if xp is np:
        return out[()] if out.ndim == 0 else out   # a scalar keeps codegen's fast path
    return xp.asarray(out)


def _draw_kernel(xp, *arrays, source, method, template, dtype, shape, weak, **_):
    if source is None:                 # a generator made by an rng_new node of this run
        source, arrays = arrays[0], arrays[1:]
    args, kwargs = _fill(template, arrays)
    return _to_device(xp, getattr(source, method)(*args, **kwargs), np.dtype(dtype))


def _draw_infer(*inputs, source, method, template, dtype, shape, weak):
    # (`dtype` is a NumPy dtype's name: the generator makes NumPy arrays on every device,
    # so executors must not turn it into the device's dtype object)
    return [(np.dtype(dtype), shape, weak)]


def _seed_kernel(xp, *arrays, fn, template):
    args, kwargs = _fill(template, arrays)
    fn(*args, **kwargs)


def _seed_infer(*inputs, **_):
    return []


def _new_kernel(xp, *arrays, factory, template):
    args, kwargs = _fill(template, arrays)
    return factory(*args, **kwargs)


def _new_infer(*inputs, factory, template):
    return [(np.dtype(object), (), False)]


primitives.register("random", _draw_infer, kernel=_draw_kernel, effectful=True,
                    doc="draws from a NumPy Generator/RandomState (method `method`) on every run")
primitives.register("random_seed", _seed_infer, kernel=_seed_kernel, effectful=True,
                    doc="reseeds a NumPy RandomState (np.random.seed) on every run")
primitives.register("rng_new", _new_infer, kernel=_new_kernel, effectful=True,
                    doc="makes a new NumPy Generator (np.random.default_rng) on every run")
# random draws carry no gradient (no reparameterisation: a draw's parameters get zeros)
primitives.nondifferentiable("random", "random_seed", "rng_new")


# -- shape and dtype rules, per method ---------------------------------------------------------

def _static_shape(x):
    """The shape of an argument: a tensor's static shape, or NumPy's for a value."""
    return x.shape if isinstance(x, Tensor) else np.shape(x)


def _const_value(t):
    return t.node.attrs["value"] if t.node.op == "Const" else None


def _dims(size):
    """The output shape a `size` argument asks for (None entries where it is a tensor)."""
    if isinstance(size, Tensor):
        value = _const_value(size)
        if value is not None:
            return _dims(value.tolist())
        if size.shape is None or len(size.shape) > 1:
            return None
        return (None,) if size.shape == () else \
            (None if size.shape[0] is None else (None,) * size.shape[0])
    if isinstance(size, (list, tuple)):
        return tuple(_dim(d) for d in size)
    if isinstance(size, np.ndarray) and size.ndim == 1:
        return tuple(int(d) for d in size)
    return (_dim(size),)


def _dim(d):
    if isinstance(d, Tensor):
        value = _const_value(d)
        return None if value is None else int(value)
    return int(d)


def _is_scalar(x):
    return _static_shape(x) == ()


def _rule(method, bound):
    """(dtype, shape, weak) of the value `method` returns for the `bound` arguments (all of
    them, defaults applied)."""
    size = bound.get("size")
    if method in _FLOAT or method in _INT:
        params = [v for k, v in bound.items() if k not in _NOT_PARAMS]
        if method in _FLOAT:
            dtype = np.dtype(bound.get("dtype", np.float64))
        else:
            dtype = np.dtype(np.int64)
        if size is not None:
            return dtype, _dims(size), False
        if all(_is_scalar(p) for p in params):
            # NumPy returns a Python float/int here: weak, like a Python scalar (NEP 50)
            return np.dtype(np.float64 if method in _FLOAT else np.int64), (), True
        return dtype, shapes.broadcast(*[_static_shape(p) for p in params]), False
    if method in ("integers", "randint"):
        dtype_arg = bound.get("dtype", int)
        dtype = np.dtype(dtype_arg)
        params = [bound["low"], bound.get("high")]
        params = [p for p in params if p is not None]
        if size is not None:
            return dtype, _dims(size), False
        if all(_is_scalar(p) for p in params):
            # RandomState.randint with dtype=int gives a Python int; integers a NumPy one
            return dtype, (), method == "randint" and dtype_arg is int
        return dtype, shapes.broadcast(*[_static_shape(p) for p in params]), False
    if method in ("rand", "randn"):
        dims = bound["args"]
        if not dims:
            return np.dtype(np.float64), (), True
        return np.dtype(np.float64), tuple(_dim(d) for d in dims), False
    if method == "choice":
        a, axis = bound["a"], bound.get("axis", 0)
        want = () if size is None else _dims(size)
        if _is_scalar(a):    # a population size: draws from arange(a); one draw is a
            return np.dtype(np.int64), want, size is None   # Python int
        dtype = a.dtype if isinstance(a, (Tensor, np.ndarray)) else np.asarray(a).dtype
        shape = _static_shape(a)
        if shape is None or want is None:
            return dtype, None, False
        axis = shapes.normalize_axis(axis, len(shape))
        return dtype, shape[:axis] + want + shape[axis + 1:], False
    if method == "permutation":
        x = bound["x"]
        if _is_scalar(x):
            n = _const_value(x) if isinstance(x, Tensor) else x
            return np.dtype(np.int64), (None if n is None else int(n),), False
        dtype = x.dtype if isinstance(x, (Tensor, np.ndarray)) else np.asarray(x).dtype
        return dtype, _static_shape(x), False
    raise NotImplementedError(method)


# -- staging a call -----------------------------------------------------------------------------

def is_random_method(f):
    """Whether `f` is a bound method of a NumPy Generator or RandomState (what `rng.random`
    and the legacy `np.random.random` are), np.random.default_rng or np.random.seed."""
    return isinstance(getattr(f, "__self__", None), SOURCES) or \
        any(f is g for g in MODULE_FUNCTIONS)


def _read(x):
    return x.read_value() if hasattr(x, "read_value") and hasattr(x, "assign") else x


def _template(args, kwargs):
    """(template, tensors): the call's arguments with each tensor replaced by a slot."""
    leaves = [_read(x) for x in nest.flatten((tuple(args), dict(kwargs)))]
    tensors = [x for x in leaves if isinstance(x, Tensor)]
    template = nest.pack_sequence_as((tuple(args), dict(kwargs)),
                                     [_SLOT if isinstance(x, Tensor) else x for x in leaves])
    values = nest.pack_sequence_as((tuple(args), dict(kwargs)), leaves)
    return template, tensors, values


def _name(source, method):
    if source is np.random.mtrand._rand:
        return f"numpy.random.{method}"
    return f"{type(source).__name__}.{method}"


def call(f, args, kwargs):
    """`f(*args, **kwargs)` for a random method `f` (see is_random_method): NumPy's own call
    eagerly, a staged node while tracing."""
    if get_default_graph() is None:
        return f(*args, **kwargs)
    if f is np.random.default_rng:
        return _new_generator(args, kwargs)
    if f is np.random.seed:
        return _stage(np.random.mtrand._rand, None, "seed", f, args, kwargs)
    source, method = f.__self__, f.__name__
    return _stage(source, None, method, f, args, kwargs)


def _stage(source, handle, method, f, args, kwargs):
    """Stage `method` of generator `source` (or of the generator that tensor `handle`
    stands for, made by an rng_new node)."""
    name = _name(source, method)
    if method not in SUPPORTED:
        raise StagingError(
            f"{name}{_tensor.where(' at ')} is not supported inside a traced function: it "
            f"would run once, while tracing, and return the same values on every call. "
            f"Supported: {', '.join(sorted(SUPPORTED))}.")
    if method == "shuffle":
        raise StagingError(
            f"{name}(x){_tensor.where(' at ')} shuffles x in place and returns None, but "
            "arrays are immutable inside a traced function (a shuffle staged there could not "
            "change x). Write `x = rng.permutation(x)` instead: it draws the same numbers and "
            "returns the shuffled copy (for the legacy functions, x = np.random.permutation(x)).")
    if kwargs.get("out") is not None:
        raise StagingError(f"{name}(..., out=...){_tensor.where(' at ')}: `out=` cannot be "
                           "written inside a traced function; use the returned array.")
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{name}(){_tensor.where(' at ')}: {e}") from None
    template, tensors, values = _template(bound.args, bound.kwargs)
    inputs = [handle] if handle is not None else []
    inputs += [primitives.convert(t) for t in tensors]
    if method == "seed":   # (only RandomState has one; np.random.seed: `f` is that)
        primitives.bind("random_seed", inputs, {"fn": f, "template": template},
                        node_name="random_seed")
        return None
    attrs = {"source": None if handle is not None else source, "template": template}
    full = inspect.signature(f).bind(*values[0], **values[1])
    full.apply_defaults()
    dtype, shape, weak = _rule(method, dict(full.arguments))
    attrs.update(method=method, dtype=dtype.name, shape=shape, weak=weak)
    return primitives.bind1("random", inputs, attrs, node_name=f"random_{method}")


# -- generators made inside a traced function ---------------------------------------------------

class StagedGenerator:
    """What `np.random.default_rng(seed)` gives inside a traced function: a generator that
    the graph makes anew on every run (an `rng_new` node), as the Python function makes a
    new one on every call. Its methods stage draws from that run's generator."""

    def __init__(self, handle, sample):
        self._handle = handle
        self._sample = sample   # a Generator of the same kind: its method signatures

    def __getattr__(self, method):
        bound = getattr(self._sample, method)
        if not callable(bound):
            raise AttributeError(
                f"Generator.{method} of a generator made inside a traced function is not "
                "available while tracing (the generator exists only when the graph runs)")

        def staged(*args, **kwargs):
            return _stage(self._sample, self._handle, method, bound, args, kwargs)
        staged.__name__ = method
        return staged

    def __repr__(self):
        return f"<StagedGenerator {self._handle.name}: made on every run of the graph>"


def _new_generator(args, kwargs):
    template, tensors, _ = _template(args, kwargs)
    inputs = [primitives.convert(t) for t in tensors]
    handle = primitives.bind1("rng_new", inputs,
                              {"factory": np.random.default_rng, "template": template},
                              node_name="default_rng")
    return StagedGenerator(handle, np.random.default_rng(0))
