"""A None where a NumPy function needs a number or a shape, refused while tracing.

`x.shape` is the static shape, as in TensorFlow: a dimension the signature leaves unknown
reads as None while tracing. Handed to NumPy in place of a length, that None must not be
read as something else. NumPy itself reads some of these Nones as "the default":
`np.arange(0, None, 2)` is `np.arange(0, 0, 2)` (a None stop is the one-argument form, so
the start becomes the stop), `np.eye(n, None)` is square, `np.tri(n, None)` and
`np.tril_indices(n, 0, None)` too; a loop over `np.arange(0, x.shape[0], step)` then ran
zero times and the function returned a wrong answer without an error. Others fail deep
inside NumPy with a message about NoneType (`np.arange(None)`, `np.linspace(0, 1, None)`).

`check(f, args, kwargs)` runs before converted code's call of a NumPy function while a
graph is being traced (packing.call) and raises a TypeError that names the user's line and
the fix (`len(x)` or `np.size(x, axis)`: tensors then, which these functions take). Run
eagerly, converted code keeps NumPy's own behaviour: nothing is checked.
"""

import numpy as np

from autograph.runtime.ir import primitives
from autograph.runtime.ir.graph import get_default_graph

_SEQUENCES = (list, tuple)

# what each parameter is: a number (None refused) or a shape (None refused in it or as it)
_N, _S = "number", "shape"


def _params(*pairs):
    """((position, name, kind), ...) of the parameters that are lengths or numbers."""
    return tuple((i, name, kind) for i, (name, kind) in enumerate(pairs) if kind)


_TABLE = {
    "arange": _params(("start", _N), ("stop", _N), ("step", _N)),
    "linspace": _params(("start", _N), ("stop", _N), ("num", _N)),
    "logspace": _params(("start", _N), ("stop", _N), ("num", _N)),
    "geomspace": _params(("start", _N), ("stop", _N), ("num", _N)),
    "eye": _params(("N", _N), ("M", _N), ("k", _N)),
    "identity": _params(("n", _N)),
    "tri": _params(("N", _N), ("M", _N), ("k", _N)),
    "tril_indices": _params(("n", _N), ("k", _N), ("m", _N)),
    "triu_indices": _params(("n", _N), ("k", _N), ("m", _N)),
    "diag_indices": _params(("n", _N)),
    "indices": _params(("dimensions", _S)),
    "hamming": _params(("M", _N)), "hanning": _params(("M", _N)),
    "bartlett": _params(("M", _N)), "blackman": _params(("M", _N)),
    "kaiser": _params(("M", _N), ("beta", _N)),
    "zeros": _params(("shape", _S)), "ones": _params(("shape", _S)),
    "empty": _params(("shape", _S)), "full": _params(("shape", _S)),
}   # (reshape, broadcast_to: a None in the shape is refused by shape_ops.static_ints)
_FUNCTIONS = {getattr(np, name): (name, params) for name, params in _TABLE.items()
              if hasattr(np, name)}
_FUNCTIONS.update({getattr(np.fft, name): (f"fft.{name}", _params(("n", _N), ("d", _N)))
                   for name in ("fftfreq", "rfftfreq")})
CHECKED = frozenset(_FUNCTIONS)   # (converted code calls these through converted_call)


def _has_none(value, kind):
    if value is None:
        return True
    return kind == _S and type(value) in _SEQUENCES and any(d is None for d in value)


def check(f, args, kwargs):
    """Raise if, while tracing, a None stands where `f` needs a number or in a shape."""
    entry = _FUNCTIONS.get(f)
    if entry is None or get_default_graph() is None:
        return
    name, params = entry
    for position, param, kind in params:
        if position < len(args):
            value = args[position]
        elif param in kwargs:
            value = kwargs[param]
        else:
            continue
        if _has_none(value, kind):
            raise TypeError(message(f"numpy.{name}", param, value))


# where len(x) is not the fix: these counts must be Python ints while tracing
_COUNT_HINT = (" Here num must be a Python int while tracing (a length known only when the "
               "graph runs cannot be it): for n points from a to b write "
               "a + np.arange(n) * ((b - a) / (n - 1)), with n = len(x).")
_HINTS = {("numpy.linspace", "num"): _COUNT_HINT, ("numpy.logspace", "num"): _COUNT_HINT,
          ("numpy.geomspace", "num"): _COUNT_HINT}


def message(call, param, value):
    """The refusal of a None `value` (or a shape holding one) given as `param` of `call`."""
    from autograph.runtime.ir import tensor
    if value is None:
        return (f"{call}{tensor.where(' at ')}: its argument {param} is None. "
                + primitives.not_a_value(None) + _HINTS.get((call, param), ""))
    return (f"{call}{tensor.where(' at ')}: the shape {value!r} (argument {param}) has an "
            f"unknown dimension (None). A dimension that is only known when the graph runs "
            f"(a None in a TensorSpec) shows as None in x.shape; give its length as a "
            f"tensor instead: len(x) or np.size(x, axis), or use np.zeros_like(x) / "
            f"np.full_like(x, value).")
