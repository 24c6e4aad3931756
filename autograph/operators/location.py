"""Where in the user's code an operator was called from, for error messages.

Generated code maps back to the user's file and line through the origin map
(`autograph.source.origin`). Operators call `where()` only when they are about to raise, so
the stack walk costs nothing on the normal path.
"""


def user_location():
    """The user's LineLocation of the innermost converted-code frame, or None."""
    try:
        from autograph.source import origin
    except ImportError:  # the front end is not there: no location, still a clear message
        return None
    try:
        return origin.user_location()
    except Exception:  # never let a lookup failure hide the real error
        return None


def where(prefix=" at "):
    """' at file.py:12' (with `prefix`) for the innermost user line, or '' when unknown."""
    loc = user_location()
    if loc is None:
        return ""
    text = f"{prefix}{loc.filename}:{loc.lineno}"
    source_line = getattr(loc, "source_line", None)
    if source_line:
        text += f" (`{source_line.strip()}`)"
    return text


def warn_once(message, category, warned, key=None):
    """Warn with `message` at the innermost user line, once per line (`warned`: the set
    of lines, or of `key`s where the line is unknown, already warned about)."""
    import warnings
    from autograph.operators import calls
    calls.trace_effect()   # a trace that warned is not one to load instead of tracing
    loc = user_location()
    seen = (loc.filename, loc.lineno) if loc is not None else key
    if seen in warned:
        return
    warned.add(seen)
    if loc is None:
        warnings.warn(message, category, stacklevel=4)
    else:
        warnings.warn_explicit(message, category, loc.filename, loc.lineno)
