"""`ag.config.check_numerics(True)` for code that runs no graph: a function called while
`ag.config.run_functions_eagerly(True)` is set, and `Dataset.map`/`filter` functions that
the host runs on each element. The graph path (autograph.runtime.exec.numerics) tests the
result of every operation that can make a NaN or an infinity; NumPy run eagerly has no
graph to put tests in, so the same rule is kept in two halves:

- A NaN or an infinity made from finite values: the call runs under
  `np.errstate(divide=, over=, invalid="raise")`, so NumPy raises FloatingPointError at
  the operation that made it (NumPy's flags cost nothing until one is raised), and it
  leaves as `ag.errors.NonFiniteError` ("log made NaN, from finite inputs") naming the
  user's file, line and function where it was made (converted code maps back to the
  user's line).
- A NaN or an infinity brought in by an argument: quiet NaNs raise no flag, so an
  argument that holds one is passed as a `Carrier` view, whose `__array_ufunc__` tests
  the result of each ufunc computing with it. As in the graph, operations that only move,
  select or round values (numerics.MOVES: indexing, reshapes, `where`, `maximum`, ...) and
  the real ones whose result is finite when their input is (numerics.BOUNDED: `tanh`,
  `sin`, ...) pass the value on (still a Carrier); the first other one whose result is not
  finite raises "... an input held NaN or infinity already", naming the user's line.
  Results that are finite again (`x * 0.0` of an infinity is NaN, but `isnan(x)` is a bool
  array) are plain arrays. What the call returns is plain arrays too.

Off (the default) none of this runs: the two call sites test the switch once per call
(run_functions_eagerly) or once per pipeline built (Dataset), and this module is not
imported. Not covered: arithmetic on Python floats (`1e308 * 10.0` is Python's, not
NumPy's); and an integer division by zero or a cast of NaN to an integer is reported too
(NumPy raises the same flags for them; the graph tests floating-point results only).
"""

import linecache

import numpy as np

from autograph import errors, frames
from autograph.runtime.exec import numerics
from autograph.runtime.ir import nest

_RAISE = {"divide": "raise", "over": "raise", "invalid": "raise"}
# NumPy's ufunc names where the graph's operation has another name
_OP_NAMES = {"absolute": "abs", "fabs": "abs", "conjugate": "conj", "rint": "round"}
# NumPy's words in a FloatingPointError: what the operation made
_MADE = (("invalid value", "NaN"), ("divide by zero", "infinity"), ("overflow", "infinity"))


def checked(fn):
    """fn, calling through `call` (for a Dataset's map/filter function)."""
    def checked_fn(*args, **kwargs):
        return call(fn, *args, **kwargs)
    checked_fn.__wrapped__ = fn
    return checked_fn


def call(fn, *args, **kwargs):
    """fn(*args, **kwargs) with its NumPy operations checked (see the module docstring)."""
    args, kwargs = _carry((args, kwargs))
    try:
        with np.errstate(**_RAISE):
            out = fn(*args, **kwargs)
    except errors.NonFiniteError:
        raise
    except FloatingPointError as error:
        raise _from_numpy(error) from None
    return _plain(out)


# -- NaNs made from finite values: NumPy's FloatingPointError ----------------------------------

def _from_numpy(error):
    """The NonFiniteError for NumPy's FloatingPointError `error`: the operation (the last
    word of NumPy's message), what it made, and the innermost user frame it came from."""
    text = str(error)
    made = next((what for words, what in _MADE if text.startswith(words)), "values that are "
                "not finite")
    op = text.rsplit(" ", 1)[-1] if " encountered in " in text else "an operation"
    frame = None
    tb = error.__traceback__
    while tb is not None:                 # the innermost frame of the user's code
        if frames.is_user_code(tb.tb_frame.f_code):
            frame = (tb.tb_frame, tb.tb_lineno)
        tb = tb.tb_next
    return errors.NonFiniteError(f"check_numerics: {_OP_NAMES.get(op, op)} made {made}, from "
                                 f"finite inputs (NumPy: {text}), run eagerly{_where(frame)}")


def _where(frame):
    """' at file.py:12, in f:\\n    source' for (frame, line), mapped back to the user's
    line when the frame runs converted code; '' for None."""
    if frame is None:
        return ""
    f, lineno = frame
    from autograph.source import origin
    loc = origin.lookup(f.f_code.co_filename, lineno)
    if loc is not None:
        filename, lineno, source, name = loc.filename, loc.lineno, loc.source_line, \
            loc.function_name
    else:
        filename, name = f.f_code.co_filename, f.f_code.co_name
        source = linecache.getline(filename, lineno)
    text = f" at {filename}:{lineno}, in {name}"
    return text + (f":\n    {source.strip()}" if source and source.strip() else "")


# -- NaNs brought in by an argument: Carrier ------------------------------------------------------

def _not_finite(value):
    a = np.asarray(value)
    return a.dtype.kind in "fc" and not np.isfinite(a).all()


def _carries(v):
    """NumPy's arrays and numbers only: a Python float is a constant of the trace (its
    arithmetic is Python's, done while tracing), which the graph does not test either."""
    return isinstance(v, (np.ndarray, np.floating, np.complexfloating)) \
        and not isinstance(v, Carrier) and _not_finite(v)


def _carry(tree):
    """`tree` with each NumPy array or number holding a NaN or an infinity as a
    Carrier; `tree` itself (the caller's lists, not copies) when none does."""
    if not any(_carries(v) for v in nest.flatten(tree)):
        return tree
    return nest.map_structure(lambda v: np.asarray(v).view(Carrier) if _carries(v) else v,
                              tree)


def _plain(tree):
    """`tree` with each Carrier as a plain array; `tree` itself when none is one."""
    if not any(isinstance(v, Carrier) for v in nest.flatten(tree)):
        return tree
    return nest.map_structure(_unwrap, tree)


def _unwrap(v):
    """A Carrier as NumPy's own value: a plain array, or a NumPy scalar for a 0-d one (what
    NumPy's operations give; the Carrier was made 0-d to carry a scalar)."""
    if not isinstance(v, Carrier):
        return v
    plain = v.view(np.ndarray)
    return plain[()] if plain.ndim == 0 else plain


def _passes_on(ufunc, values):
    """True when the graph leaves `ufunc`'s result untested (it moves, selects or rounds,
    or its real result is finite when its input is)."""
    op = _OP_NAMES.get(ufunc.__name__, ufunc.__name__)
    if op in numerics.MOVES:
        return True
    return op in numerics.BOUNDED and all(np.asarray(v).dtype.kind != "c" for v in values)


def _recarry(value):
    """A result holding a NaN or an infinity as a Carrier (a NumPy scalar as a 0-d one)."""
    if isinstance(value, (np.ndarray, np.floating, np.complexfloating)) and \
            not isinstance(value, Carrier) and _not_finite(value):
        return np.asarray(value).view(Carrier)
    return value


class Carrier(np.ndarray):
    """An argument's array that holds a NaN or an infinity, while a checked call runs: the
    first ufunc that computes with it (not a move: numerics.MOVES, BOUNDED) and makes a
    result that is not finite raises NonFiniteError, as the graph's test after that
    operation does."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [v.view(np.ndarray) if isinstance(v, Carrier) else v for v in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, Carrier) else o
                                  for o in kwargs["out"])
        with np.errstate(all="ignore"):   # (inf - inf: NumPy's flag; the test below says it)
            result = getattr(ufunc, method)(*plain, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        if not _passes_on(ufunc, plain):
            for r in results:
                if _not_finite(r):
                    raise _from_input(ufunc, method, r)
        out = tuple(_recarry(r) for r in results)
        return out if isinstance(result, tuple) else out[0]

    def __array_function__(self, func, types, args, kwargs):
        # NumPy's function (its ufuncs come back to __array_ufunc__); a result still not
        # finite carries on
        return nest.map_structure(_recarry, super().__array_function__(func, types, args,
                                                                       kwargs))

    def __getitem__(self, key):
        return _recarry(super().__getitem__(key))


def _from_input(ufunc, method, value):
    a = np.asarray(value)
    nans, infs = int(np.isnan(a).sum()), int(np.isinf(a).sum())
    what = " and ".join(w for w in ("NaN" if nans else "", "infinity" if infs else "") if w)
    if a.size > 1:
        what += f" ({a.size - int(np.isfinite(a).sum())} of {a.size} values)"
    op = _OP_NAMES.get(ufunc.__name__, ufunc.__name__)
    op = op if method == "__call__" else f"{op}.{method}"
    frame = frames.user_frame(1)
    where = _where(None if frame is None else (frame, frame.f_lineno))
    return errors.NonFiniteError(f"check_numerics: {op} made {what}, an input held NaN or "
                                 f"infinity already, run eagerly{where}")
