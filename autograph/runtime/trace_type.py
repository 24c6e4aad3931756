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


# -- the rest: retracing (ordering keys, checking values against them, describing them),
# imported on first use; a first call needs none of it, and its names stay reachable here

_COMPARE = frozenset({"is_subtype", "supertype", "specificity", "describe_value",
                      "SignatureMismatch", "convert_to_spec", "check_value", "describe_key",
                      "explain_change", "_KIND_FITS", "_child_path"})


def __getattr__(name):
    if name in _COMPARE:
        from autograph.function import retracing
        return getattr(retracing, name)
    raise AttributeError(f"module 'autograph.runtime.trace_type' has no attribute {name!r}")
