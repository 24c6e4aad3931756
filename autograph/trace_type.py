"""Trace keys: what about an argument decides whether a traced graph can be reused.

`ag.function` keys each call by its arguments and reuses a traced graph when the key matches:

- arrays and NumPy scalars  -> `TensorSpec(shape, dtype)` (the values do not matter);
- Python bool/int/float/complex/str/bytes/None -> the value itself (`Literal`): f(1), f(2), f(1)
  traces twice, because the function may branch on the value while tracing;
- lists, tuples, namedtuples, dicts (key order ignored) and dataclasses -> their structure and
  the keys of their leaves (`Structure`);
- `ag.Variable` -> its identity (the graph reads it at run time, so its value never matters);
- objects with a `__tracing_type__()` method -> the hashable value it returns (`Protocol`);
- any other object -> the object itself, held weakly, matched by identity, then by equality
  (`ObjectKey`); a trace keyed by an object that dies is dropped by `ag.function`.

Keys of tensors are ordered by specificity: `TensorSpec((2,))` is a subtype of
`TensorSpec((None,))`, which is a subtype of `TensorSpec(None)` (unknown rank). A call may use
any trace whose key is a supertype of its own; the most specific one wins. `supertype` relaxes
two keys into one (for `reduce_retracing=True`).
"""

import reprlib
import sys
import weakref

import numpy as np

from autograph.runtime import devices

from autograph.runtime.ir import nest
from autograph.runtime.ir.dtypes import as_dtype
from autograph.runtime.ir.tensor import Tensor

_PRIMITIVES = (bool, int, float, complex, str, bytes, type(None))


# -- TensorSpec -------------------------------------------------------------------------------

def _shape_str(shape):
    if shape is None:
        return "<unknown>"
    dims = ", ".join("None" if d is None else str(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


def _norm_shape(shape):
    if shape is None:
        return None
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    return tuple(None if d is None else int(d) for d in shape)


class TensorSpec:
    """The type of an array argument: a dtype and a shape whose dims may be unknown.

    `shape=None` means an unknown rank; a `None` entry in `shape` an unknown dimension.
    Use it in `input_signature=[...]` and `get_concrete_function(...)`."""

    __slots__ = ("shape", "dtype", "name", "_hash")

    def __init__(self, shape, dtype=np.float32, name=None):
        self.shape = _norm_shape(shape)
        self.dtype = as_dtype(dtype)   # NumPy dtypes; array-API dtype objects by name
        self.name = name
        self._hash = hash((self.shape, self.dtype, name))

    @classmethod
    def from_array(cls, array, name=None):
        """The exact spec of an array (or NumPy scalar)."""
        return cls(array.shape, array.dtype, name)

    @property
    def ndim(self):
        return None if self.shape is None else len(self.shape)

    def with_name(self, name):
        return TensorSpec(self.shape, self.dtype, name)

    def _shape_covers(self, shape):
        """Whether every array of `shape` fits this spec's shape."""
        if self.shape is None:
            return True
        if shape is None or len(shape) != len(self.shape):
            return False
        return all(mine is None or mine == theirs for mine, theirs in zip(self.shape, shape))

    def is_compatible_with(self, other):
        """Whether an array (or every array of spec `other`) can be passed where this spec is
        expected: same dtype, and a shape that fits (unknown dims on either side match)."""
        if not isinstance(other, TensorSpec):
            if not hasattr(other, "dtype") or not hasattr(other, "shape"):
                other = np.asarray(other)
            other = TensorSpec(other.shape, other.dtype)
        if other.dtype != self.dtype:
            return False
        if self.shape is None or other.shape is None:
            return True
        return len(self.shape) == len(other.shape) and all(
            a is None or b is None or a == b for a, b in zip(self.shape, other.shape))

    def is_subtype_of(self, other):
        """Whether every array of this spec also fits `other` (`(2,)` is a subtype of `(None,)`)."""
        return (isinstance(other, TensorSpec) and self.dtype == other.dtype
                and other._shape_covers(self.shape))

    def most_specific_common_supertype(self, others):
        """The narrowest spec that covers this one and all `others`, or None if the dtypes differ."""
        shape = self.shape
        for other in others:
            if not isinstance(other, TensorSpec) or other.dtype != self.dtype:
                return None
            shape = _relax_shape(shape, other.shape)
        return TensorSpec(shape, self.dtype)

    def __eq__(self, other):
        return (type(other) is TensorSpec and self.shape == other.shape
                and self.dtype == other.dtype and self.name == other.name)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"TensorSpec(shape={_shape_str(self.shape)}, dtype={self.dtype.name}, name={self.name!r})"

    def describe(self):
        """Short text for summaries: `int32 array, shape=(None,)`."""
        return f"{self.dtype.name} array, shape={_shape_str(self.shape)}"


def _relax_shape(a, b):
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


# -- the other leaf keys ------------------------------------------------------------------------

class Literal:
    """A Python primitive, keyed by its type and value (`True`, `1` and `1.0` differ)."""

    __slots__ = ("value", "_hash")

    def __init__(self, value):
        self.value = value
        self._hash = hash((type(value), value))

    def __eq__(self, other):
        return (type(other) is Literal and type(self.value) is type(other.value)
                and self.value == other.value)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"Literal[{self.value!r}]"


class ObjectKey:
    """Any other object: held weakly, matched by identity first, then by `==`.

    Objects that cannot be weakly referenced are held strongly (they then live as long as
    the trace). `identity_only` keys (Variables) never compare by value."""

    __slots__ = ("_ref", "_strong", "_hash", "type_name", "identity_only")

    def __init__(self, obj, identity_only=False):
        self.type_name = type(obj).__name__
        self.identity_only = identity_only
        try:
            self._ref = weakref.ref(obj)
            self._strong = None
        except TypeError:
            self._ref = None
            self._strong = obj
        if identity_only:
            self._hash = id(obj)
        else:
            try:
                self._hash = hash(obj)
            except TypeError:  # unhashable (e.g. __eq__ without __hash__): equality decides
                self._hash = hash(type(obj))

    @property
    def obj(self):
        """The object, or None once it has died."""
        return self._strong if self._ref is None else self._ref()

    @property
    def weakly_held(self):
        return self._ref is not None

    def __eq__(self, other):
        if type(other) is not ObjectKey:
            return False
        if other is self:
            return True
        a, b = self.obj, other.obj
        if a is None or b is None:   # a dead object matches nothing
            return False
        if a is b:
            return True
        if self.identity_only or other.identity_only:
            return False
        try:
            return (a == b) is True
        except Exception:  # noqa: BLE001 - a failing __eq__ just means "not equal"
            return False

    def __hash__(self):
        return self._hash

    def __repr__(self):
        obj = self.obj
        return f"<{self.type_name} object>" if obj is None else f"<{self.type_name} at {id(obj):#x}>"


class Protocol:
    """An object implementing `__tracing_type__()`: keyed by what that method returns."""

    __slots__ = ("type_name", "value", "_hash")

    def __init__(self, obj):
        self.type_name = type(obj).__name__
        self.value = obj.__tracing_type__()
        try:
            self._hash = hash(self.value)
        except TypeError:
            raise TypeError(
                f"{type(obj).__name__}.__tracing_type__() returned an unhashable "
                f"{type(self.value).__name__}; return a hashable value (a tuple, a type, ...)") from None

    def __eq__(self, other):
        return type(other) is Protocol and self.value == other.value

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"{self.type_name}[{self.value!r}]"


class Structure:
    """A list/tuple/namedtuple/dict/dataclass: its type, its keys or field names, and the keys
    of its children (dict keys sorted, so insertion order never causes a retrace)."""

    __slots__ = ("kind", "labels", "children", "_hash")

    def __init__(self, kind, labels, children):
        self.kind = kind
        self.labels = labels
        self.children = children
        self._hash = hash((kind, labels, children))

    def __eq__(self, other):
        return (type(other) is Structure and self.kind is other.kind
                and self.labels == other.labels and self.children == other.children)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"{self.kind.__name__}{list(self.children)}"


# -- making keys ----------------------------------------------------------------------------

def is_array(x):
    """Whether `x` is an array argument (traced as a placeholder): a NumPy array or scalar,
    or an array of another library that a device claims."""
    if isinstance(x, (np.ndarray, np.generic)):
        return True
    if isinstance(x, (Tensor, TensorSpec)) or type(x) in _PRIMITIVES or is_variable(x):
        return False
    if hasattr(x, "__array_namespace__") and hasattr(x, "dtype") and hasattr(x, "shape"):
        return True
    return devices.device_of(x) is not None


def is_tensor_leaf(x):
    """Leaves that become placeholders: arrays, and TensorSpecs (in get_concrete_function)."""
    return isinstance(x, TensorSpec) or is_array(x)


def is_variable(x):
    # (a Variable exists only once autograph.runtime.variables is loaded: not imported here,
    # so a process that never makes one never loads it)
    variables = sys.modules.get("autograph.runtime.variables")
    return variables is not None and isinstance(x, variables.Variable)


def make_key(value):
    """The trace key of one argument value (see the module docstring)."""
    if isinstance(value, TensorSpec):
        return value if value.name is None else TensorSpec(value.shape, value.dtype)
    if type(value) in _PRIMITIVES:
        return Literal(value)
    if is_variable(value):
        return ObjectKey(value, identity_only=True)
    if is_array(value):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, Tensor):
        raise ValueError(
            f"The symbolic tensor {value!r} was passed to an autograph function outside the "
            "trace that made it. Return it from the traced function instead of keeping it.")
    if hasattr(type(value), "__tracing_type__"):
        return Protocol(value)
    if nest.is_nested(value):
        return Structure(type(value), _labels(value),
                         tuple(make_key(child) for child in nest.children(value)))
    return ObjectKey(value)


def _labels(value):
    """What names a structure's children: dict keys (sorted), dataclass field names, or
    just their number (sequences and objects using nest's __ag_flatten__ protocol)."""
    if isinstance(value, dict):
        return tuple(nest._sorted_keys(value))
    if nest._is_dataclass_instance(value):
        return tuple(f.name for f in nest._dataclasses().fields(value))
    return len(nest.children(value))


def leaves(key):
    """All leaf keys of a key, depth first, in the order nest.flatten gives their values."""
    if isinstance(key, tuple):
        return [leaf for k in key for leaf in leaves(k)]
    if type(key) is Structure:
        return [leaf for k in key.children for leaf in leaves(k)]
    return [key]


def tensor_specs(key):
    """The TensorSpec leaves of a key: one per placeholder of its trace."""
    return [leaf for leaf in leaves(key) if type(leaf) is TensorSpec]


def objects(key):
    """The weakly held objects a key refers to (their death invalidates the key)."""
    return [leaf for leaf in leaves(key) if type(leaf) is ObjectKey and leaf.weakly_held]


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
