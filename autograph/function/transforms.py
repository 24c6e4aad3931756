"""The functions a transform of the user's function made (`ag.value_and_grad`, `ag.grad`):
the trace cache keys their traces by the transform, its options and the function it
transforms, as it keys a plain `def` by its source.

A transform's function carries `__ag_transform__ = (name, f, *options)`. Any function may
carry an attribute of that name, so only functions whose code a transform registered here
are taken for transforms (autodiff/api.py registers its wrappers' code when it makes them).
"""

_CODES = set()   # the code objects of the functions the transforms return


def register(fn, name, f, *options):
    """Mark `fn`, made by transform `name` of `f` with `options`, as such."""
    fn.__ag_transform__ = (name, f) + options
    _CODES.add(fn.__code__)


def transform_of(fn):
    """(name, f, *options) when a transform made `fn`, else None."""
    transform = getattr(fn, "__ag_transform__", None)
    if transform is None or getattr(fn, "__code__", None) not in _CODES:
        return None
    return transform
