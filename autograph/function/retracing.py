"""Retracing: comparing trace keys (autograph.function.trace_type) and tracing again.

Which trace a call may use, one key relaxed to cover two (`reduce_retracing`), a value
checked against a key, keys described in words for errors and warnings, the warning that
says why a Function traced again, and the rule that a second trace creates no Variables.
Imported on first use (a first call has no earlier trace to compare with); the comparing
names stay reachable through autograph.function.trace_type.
"""

import contextlib
import reprlib
import warnings

import numpy as np

from autograph.runtime.ir import nest
from autograph.runtime.ir.dtypes import as_dtype
from autograph.runtime.ir.graph import _creation
from autograph.runtime.ir.tensor import Tensor
from autograph.function.trace_type import (Literal, ObjectKey, Structure, TensorSpec, _PRIMITIVES,
                                           _labels, _shape_str, is_array, make_key, objects,
                                           tensor_specs)


# -- ordering keys ----------------------------------------------------------------------------

def is_subtype(a, b):
    """Whether every call with key `a` may use a trace made for key `b`."""
    if a == b:
        return True
    ta = type(a)
    if ta is not type(b):
        return False
    if ta is TensorSpec:
        return a.is_subtype_of(b)
    if ta is Structure:
        return (a.kind is b.kind and a.labels == b.labels
                and all(is_subtype(x, y) for x, y in zip(a.children, b.children)))
    if ta is tuple:
        return len(a) == len(b) and all(is_subtype(x, y) for x, y in zip(a, b))
    return False


def supertype(a, b):
    """The most specific key both `a` and `b` are subtypes of, or None (e.g. two different
    Python values: those are never relaxed)."""
    if a == b:
        return a
    ta = type(a)
    if ta is not type(b):
        return None
    if ta is TensorSpec:
        return a.most_specific_common_supertype([b])
    if ta is Structure:
        if a.kind is not b.kind or a.labels != b.labels:
            return None
        kids = tuple(supertype(x, y) for x, y in zip(a.children, b.children))
        return None if any(k is None for k in kids) else Structure(a.kind, a.labels, kids)
    if ta is tuple:
        if len(a) != len(b):
            return None
        kids = tuple(supertype(x, y) for x, y in zip(a, b))
        return None if any(k is None for k in kids) else kids
    return None


def specificity(key):
    """How much a key pins down: known ranks and dims count. Among traces that fit a call,
    the one with the highest specificity is the most specific."""
    score = 0
    for spec in tensor_specs(key):
        if spec.shape is not None:
            score += 1 + sum(d is not None for d in spec.shape)
    return score


# -- checking values against keys ---------------------------------------------------------------

_KIND_FITS = {   # value dtype kind -> dtype kinds a Python value may be converted to
    "b": "b",
    "i": "iufc",
    "u": "iufc",
    "f": "fc",
    "c": "c",
}


def describe_value(value):
    """A short description of an argument value for error messages."""
    if is_array(value):
        name = as_dtype(value.dtype).name
        article = "an" if name[0] in "aio" else "a"   # an int32, a uint8, a float64
        return f"{article} {name} array of shape {_shape_str(tuple(value.shape))}"
    if isinstance(value, TensorSpec):
        return repr(value)
    if type(value) in _PRIMITIVES:
        return f"Python {type(value).__name__} {value!r}"
    if isinstance(value, (list, tuple, dict)):
        if all(type(leaf) in _PRIMITIVES for leaf in nest.flatten(value)):
            return f"a {type(value).__name__} {reprlib.repr(value)}"
        return f"a {type(value).__name__} {nest.describe(value)}"
    return f"a {type(value).__name__} object"


class SignatureMismatch(TypeError):
    """A value does not fit a key; `path` names the argument (e.g. `x`, `xs[1]`) and
    `advice` says what would fit."""

    def __init__(self, path, expected, got, advice=None):
        advice = advice or ("Pass a matching array" if expected.startswith("TensorSpec")
                            else "Pass an argument like that")
        self.path, self.expected, self.got, self.advice = path, expected, got, advice
        super().__init__(f"argument `{path}`: expected {expected}, got {got}")


def convert_to_spec(value, spec, path):
    """`value` as an array that fits `spec`: arrays must match its dtype and shape; Python
    scalars and lists of a compatible kind are converted (int -> float is fine, float -> int
    is not). Raises SignatureMismatch otherwise."""
    if isinstance(value, TensorSpec):
        ok = value.is_subtype_of(spec)
        if not ok:
            raise SignatureMismatch(path, repr(spec), repr(value))
        return value
    if is_array(value):
        if as_dtype(value.dtype) != spec.dtype or not spec._shape_covers(tuple(value.shape)):
            raise SignatureMismatch(path, repr(spec), describe_value(value))
        return value
    if isinstance(value, (Tensor, str, bytes)) or value is None:
        raise SignatureMismatch(path, repr(spec), describe_value(value))
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001 - anything NumPy cannot read is simply a mismatch
        raise SignatureMismatch(path, repr(spec), describe_value(value)) from None
    if spec.dtype.kind not in _KIND_FITS.get(array.dtype.kind, ""):
        raise SignatureMismatch(path, repr(spec), describe_value(value))
    try:   # converting the Python values themselves: out-of-range ints fail, never wrap
        array = np.asarray(value, dtype=spec.dtype)
    except (OverflowError, ValueError):
        raise SignatureMismatch(path, repr(spec), describe_value(value)) from None
    if not spec._shape_covers(array.shape):
        raise SignatureMismatch(path, repr(spec), describe_value(value))
    return array


def check_value(value, key, path):
    """`value` made to fit `key` (arrays converted where allowed); raises SignatureMismatch
    naming the argument path when it cannot."""
    if type(key) is TensorSpec:
        return convert_to_spec(value, key, path)
    if type(key) is Structure:
        if not nest.is_nested(value) or type(value) is not key.kind or _labels(value) != key.labels:
            raise SignatureMismatch(path, f"a {key.kind.__name__} like {describe_key(key)}",
                                    describe_value(value), "Pass the same structure")
        kids = nest.children(value)
        labels = key.labels if isinstance(key.labels, tuple) else range(key.labels)
        new = [check_value(v, k, _child_path(path, value, label))
               for v, k, label in zip(kids, key.children, labels)]
        return nest.rebuild(value, new)
    if make_key(value) != key:
        advice = ("Pass the same value" if type(key) is Literal
                  else "Pass the same object (objects are matched by identity, then ==)")
        raise SignatureMismatch(path, describe_key(key), describe_value(value), advice)
    return value


def _child_path(path, value, label):
    if nest._is_dataclass_instance(value):
        return f"{path}.{label}"
    return f"{path}[{label!r}]"


def describe_key(key):
    """A key as users read it in summaries and messages."""
    if type(key) is TensorSpec:
        return repr(key)
    if type(key) is Literal:
        return f"Literal[{key.value!r}]"
    if type(key) is Structure:
        kids = ", ".join(describe_key(k) for k in key.children)
        if key.kind is dict:
            kids = ", ".join(f"{label!r}: {describe_key(k)}" for label, k in zip(key.labels, key.children))
            return "{" + kids + "}"
        if key.kind is list:
            return f"[{kids}]"
        if key.kind is tuple:
            return f"({kids}{',' if len(key.children) == 1 else ''})"
        return f"{key.kind.__name__}({kids})"
    return repr(key)


# -- explaining retraces ----------------------------------------------------------------------

def explain_change(old, new, path):
    """Why a call with key `new` did not reuse the trace made for key `old`: a list of
    `argument `path`: what -> what; advice` lines (empty when the keys are equal)."""
    if old == new:
        return []
    told, tnew = type(old), type(new)
    if told is Structure and tnew is Structure and old.kind is new.kind and old.labels == new.labels:
        labels = old.labels if isinstance(old.labels, tuple) else range(old.labels)
        out = []
        for a, b, label in zip(old.children, new.children, labels):
            child = (f"{path}.{label}" if hasattr(old.kind, "__dataclass_fields__")
                     else f"{path}[{label!r}]")
            out.extend(explain_change(a, b, child))
        return out
    if told is TensorSpec and tnew is TensorSpec:
        if old.dtype != new.dtype:
            return [f"argument `{path}`: dtype {old.dtype.name} -> {new.dtype.name}"]
        return [f"argument `{path}`: shape {_shape_str(old.shape)} -> {_shape_str(new.shape)}; "
                "pass reduce_retracing=True or an input_signature with None dims to reuse one trace"]
    if told is Literal and tnew is Literal:
        a, b = old.value, new.value
        kind = (f"Python {type(a).__name__}" if type(a) is type(b)
                else f"Python {type(a).__name__} -> {type(b).__name__}:")
        advice = "; pass an array to avoid retracing" if type(b) in (int, float, complex) else ""
        return [f"argument `{path}`: {kind} {a!r} -> {b!r}{advice}"]
    if told is ObjectKey and tnew is ObjectKey:
        return [f"argument `{path}`: a different {new.type_name} object (objects are keyed by "
                "identity; reuse the same object, or give its class a __tracing_type__ method)"]
    return [f"argument `{path}`: {describe_key(old)} -> {describe_key(new)}"]


# -- tracing again: relaxing a key, saying why, refusing new Variables ---------------------------

def generalize(fn, key):
    """reduce_retracing: relax `key` against earlier traces whose keys differ only in
    shapes, so one trace with unknown dims serves them all."""
    general = key
    for trace_key in list(fn._traces):   # a GC callback may drop one meanwhile
        relaxed = supertype(general, trace_key)
        if relaxed is not None:
            general = relaxed
    return general


def warn_retracing(fn, names, key):
    from autograph.function import RetracingWarning, _user_stacklevel
    old_names, old_key = fn._last_trace
    reasons = []
    if old_names == names:
        for name, a, b in zip(names, old_key, key):
            reasons.extend(explain_change(a, b, name))
    why = "; ".join(reasons) if reasons else "the arguments' structure changed"
    warnings.warn(
        f"ag.function {fn.__name__} traced {fn._tracing_count} times; this trace because "
        f"{why}. Tracing is slow: keep argument types and shapes stable.",
        RetracingWarning, stacklevel=_user_stacklevel())


class _CreationRefused(list):
    """Sits on the runtime's Variable-creation stack while a Function traces again: a new
    Variable appends itself here, which raises ValueError at the user's `ag.Variable(...)`."""

    def __init__(self, message):
        super().__init__()
        self.message = message

    def append(self, variable):
        raise ValueError(self.message.format(name=repr(getattr(variable, "name", "?"))))


@contextlib.contextmanager
def forbid_creation(message):
    """Refuse Variable creation inside the block. Uses the stack behind record_creations()
    (autograph.runtime.ir.graph); if the runtime keeps it differently, creation is only
    refused after the trace (the check in Function._trace)."""
    stack = getattr(_creation, "stack", None)
    if not isinstance(stack, list):
        yield
        return
    stack.append(_CreationRefused(message))
    try:
        yield
    finally:
        stack.pop()
