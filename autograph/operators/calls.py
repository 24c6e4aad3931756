"""`converted_call`: how converted code calls what it cannot tell apart statically.

The compiler (autograph.api, a layer above) registers the function that does the work with
`set_call_handler`; this module only forwards to it, so imports keep pointing down the
layers while generated code still finds everything under `ag__`.
"""

_handler = None


def set_call_handler(handler):
    """Install `handler(f, args, kwargs)`: api.py does this when it is imported."""
    global _handler
    _handler = handler


def converted_call(f, *args, **kwargs):
    """Call `f(*args, **kwargs)`, converting `f` first if it is user code."""
    if _handler is None:
        import autograph.api  # noqa: F401  (registers the handler)
    return _handler(f, args, kwargs)
