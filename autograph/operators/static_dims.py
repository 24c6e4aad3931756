"""`ag__.known_dim(x.shape[k])`: a static length read straight into an index, a slice bound
or a NumPy argument, where a None would silently mean something else.

`x.shape` is the static shape, as in TensorFlow: a dimension the signature leaves unknown
is None while tracing. Python and NumPy give None a meaning in exactly the places a length
is often put: `y[:x.shape[0]]` would take all of y (no bound), `y[x.shape[0]]` would add an
axis (None is np.newaxis), `np.clip(v, 0, x.shape[0])` would clip nothing above. The
converter (autograph.converters.static_dims) wraps such reads; while tracing, a None there
raises at the user's line and names the fix. Elsewhere the value passes through unchanged,
so converted code run eagerly keeps Python's behaviour, and a dimension that is known costs
one call.
"""

from autograph.runtime.ir.graph import get_default_graph


def known_dim(value):
    """`value` (an entry of some `x.shape`), refused while tracing when it is None."""
    if value is None and get_default_graph() is not None:
        from autograph.operators.location import where
        from autograph.runtime.ir import primitives
        raise TypeError(
            f"A dimension read from x.shape is None{where()}, where None would mean "
            f"something else (as an index a new axis, as a slice bound no bound, as a NumPy "
            f"argument often the default). " + primitives.not_a_value(None))
    return value
