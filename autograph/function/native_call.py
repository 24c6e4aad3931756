"""The call path of a `jit_compile=True` Function: from the caller straight to native code.

A call of native code is short (collatz(27): ~120 ns in the compiled loop), so what stands
around it counts: `Function.__call__`'s frame, its fast-path key and dict lookup, the
runner's frame and Numba's dispatcher, which types every argument again, cost ~3x the loop.
For the argument types of its first call, a jit Function therefore gets a Python function
of its own, written here, with the user's parameters:

    def collatz(n):
        if type(n) is _ag_t0 and (not _ag_busy or _ag_calm()):
            a0 = n
            try:
                r = native(a0)
                return t0 + r
            except Exception as _ag_exc:
                _ag_user_error(_ag_exc)
                raise
        return _ag_call(n)

Its `if` checks what the fast path's key checks (exact types; for arrays also dtype and
shape) and the fast path's flag (autograph.config._busy: no trace, device scope or eager
mode), then runs the body the runner would run (native.py's `inline`): with NumPy scalar
arguments it calls the compiled overload's entry point, whose types the `if` just checked,
so Numba resolves nothing. Anything else goes to `Function.__call__` (`_ag_call`).

`_NativeFunction.__call__` is a property returning this function, so the interpreter calls
it directly: no frame of ours runs before the check. The function has the user's own
parameters, so every call Python accepts for the user's function binds the same way, and a
call it rejects gets Python's own message for the user's function.
"""

import inspect

import numpy as np

from autograph.function.concrete import user_error
from autograph.frames import GLUE_PREFIX
from autograph.function import BUSY, _calm

_SIMPLE = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def entry(fn, args, runner):
    """The function `fn`'s calls go to when they pass `args`' types, dtypes and shapes (in
    parameter order, all positional: the fast path's key of that call), or None where the
    runner has no native body or the parameters are not plain ones without defaults."""
    inline = getattr(runner, "__inline__", None)
    params = list(fn._sig.signature.parameters.values())
    if inline is None or len(params) != len(args) or any(
            p.kind not in _SIMPLE or p.default is not p.empty or p.name.startswith("_ag_")
            for p in params):
        return None
    if not all(type(a) is np.ndarray or isinstance(a, np.generic) for a in args):
        return None
    names = [p.name for p in params]
    lines, ns = inline([f"a{i}" for i in range(len(args))], args)
    if set(names) & (set(ns) | {"type", "Exception"}):   # it would hide a name we read
        return None
    checks = []
    for i, (name, a) in enumerate(zip(names, args)):
        ns[f"_ag_t{i}"] = type(a)
        checks.append(f"type({name}) is _ag_t{i}")
        if type(a) is np.ndarray:
            ns[f"_ag_d{i}"] = a.dtype
            checks.append(f"{name}.dtype is _ag_d{i} and {name}.shape == {a.shape!r}")
    ns.update(_ag_busy=BUSY, _ag_calm=_calm, _ag_user_error=user_error,
              _ag_call=fn._generic)
    checks.append("(not _ag_busy or _ag_calm())")
    code = [f"def {fn.__name__ if fn.__name__.isidentifier() else 'entry'}"
            f"({_parameters(params)}):",
            f"    if {' and '.join(checks)}:"]
    if names:
        code.append(f"        {', '.join(f'a{i}' for i in range(len(names)))} = "
                    f"{', '.join(names)}")
    code.append("        try:")
    code += ["            " + line for line in lines]
    code += ["        except Exception as _ag_exc:",
             "            _ag_user_error(_ag_exc)",
             "            raise",
             f"    return _ag_call({', '.join(names)})"]
    local = {}
    exec(compile("\n".join(code) + "\n", f"{GLUE_PREFIX}: call of {fn.__name__}>", "exec"), ns,
         local)
    made = next(iter(local.values()))
    made.__source__ = "\n".join(code) + "\n"
    return made


def _parameters(params):
    """The parameter list as written in a `def` (a `/` after the positional-only ones)."""
    parts = []
    for i, p in enumerate(params):
        parts.append(p.name)
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(params)
                                            or params[i + 1].kind is not p.POSITIONAL_ONLY):
            parts.append("/")
    return ", ".join(parts)
