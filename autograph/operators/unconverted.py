"""Functions that run unconverted because autograph could not convert them, and why.

When a function's source cannot be had (or is not the code that runs), `ag.function`
traces it as plain Python and converted code calls it as it is, after a warning that says
why. Its Python control flow then runs while tracing, and a tensor used there (`if x > 0`,
`for i in ag.range(n)`) fails with a SymbolicTensorError whose usual advice, "write this in
converted code, or loop over ag.range(n)", tells the user to do what they already do. So
the reason is remembered with the code object (`remember`), and the runtime's error about a
symbolic tensor asks `note()`: when a frame of such a function is on the stack, the error
says that this function runs unconverted, why, and at which of its lines.
"""

import sys
import warnings

_LIMIT = 1024
_reasons = {}   # code object -> (qualname, reason), the latest _LIMIT


def remember(fn, reason):
    """`fn` (a Python function) runs unconverted because of `reason` (text)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return
    if len(_reasons) >= _LIMIT:
        _reasons.pop(next(iter(_reasons)))
    _reasons[code] = (getattr(fn, "__qualname__", code.co_name), str(reason))


def reason(fn):
    """Why `fn` runs unconverted, or None."""
    entry = _reasons.get(getattr(fn, "__code__", None))
    return None if entry is None else entry[1]


def warn(fn, reason_text, stacklevel=3):
    """Say once per function that it runs unconverted (the call that found out warns)."""
    from autograph.errors import AutographWarning
    code = getattr(fn, "__code__", None)
    if code in _reasons:
        return
    remember(fn, reason_text)
    message = (f"autograph could not convert {getattr(fn, '__qualname__', fn)}, so it runs "
               f"unconverted (as plain Python while tracing): {reason_text}")
    from autograph.operators.location import user_location
    loc = user_location()   # the user's line of the call, not the generated one
    if loc is None:
        warnings.warn(message, AutographWarning, stacklevel=stacklevel)
    else:
        warnings.warn_explicit(message, AutographWarning, loc.filename, loc.lineno)


def note():
    """For an error about a symbolic tensor: 'f runs unconverted (why), at file:line' when
    the innermost such function is on the stack, else ''."""
    if not _reasons:
        return ""
    frame = sys._getframe(1)
    while frame is not None:
        entry = _reasons.get(frame.f_code)
        if entry is not None:
            name, why = entry
            import linecache
            code = frame.f_code
            line = linecache.getline(code.co_filename, frame.f_lineno).strip()
            at = f"{code.co_filename}:{frame.f_lineno}" + (f" (`{line}`)" if line else "")
            return (f"{name} runs unconverted, as plain Python, because autograph could not "
                    f"convert it ({why.rstrip('.')}). Its Python control flow runs while "
                    f"tracing, where a tensor's value is unknown: this line needs the "
                    f"function converted. At {at}")
        frame = frame.f_back
    return ""
