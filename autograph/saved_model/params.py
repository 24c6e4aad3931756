"""The parameters of a saved trace: their keys (array specs, Python values, structures,
objects fixed in the graph), read from the file, and how a call's arguments are matched
against them (the dispatch of restored functions)."""

import inspect

import numpy as np

from autograph.runtime import trace_type as tt
from autograph.runtime.ir.tensor import Tensor
from autograph.saved_model import format as fmt
from autograph.saved_model.format import SavedModelError

_KINDS = {k.name: k for k in inspect._ParameterKind}


class NoMatch(Exception):
    """A call that does not fit a trace (the message says why)."""

    pass


# -- parameters and their keys -------------------------------------------------------------------

class Param:
    def __init__(self, name, kind, key, default, raw):
        self.name, self.kind, self.key, self.default, self.raw = name, kind, key, default, raw

    @classmethod
    def from_json(cls, rec, where, limits):
        if type(rec) is not dict or type(rec.get("name")) is not str or \
                rec.get("kind") not in _KINDS:
            raise SavedModelError(f"{where}: a parameter has a 'name', a 'kind' and a 'key'")
        default = fmt.decode(rec["default"], where, limits) if "default" in rec else \
            inspect.Parameter.empty
        return cls(rec["name"], _KINDS[rec["kind"]], _key(rec.get("key"), where, limits, 0),
                   default, rec)


def _key(rec, where, limits, depth):
    if depth > limits.max_nesting or type(rec) is not dict:
        raise SavedModelError(f"{where}: not a parameter key: {fmt._show(rec)}")
    if "spec" in rec:
        spec = rec["spec"]
        if type(spec) is not list or len(spec) != 2:
            raise SavedModelError(f"{where}: a spec is [dtype, shape]")
        return tt.TensorSpec(fmt.parse_shape(spec[1], where, limits),
                             fmt.parse_dtype(spec[0], where))
    if "fixed" in rec:
        return Fixed(str(rec["fixed"]))
    if "literal" in rec:
        value = fmt.decode(rec["literal"], where, limits)
        try:
            hash(value)     # a trace key: a list or a dict there was never written
        except TypeError:
            raise SavedModelError(f"{where}: a literal parameter value must be hashable, "
                                  f"got {fmt._show(value)}") from None
        return tt.Literal(value)
    kinds = {"list": list, "tuple": tuple, "dict": dict}
    if rec.get("structure") in kinds and type(rec.get("children")) is list:
        kind = kinds[rec["structure"]]
        labels = rec.get("labels")
        children = tuple(_key(c, where, limits, depth + 1) for c in rec["children"])
        if kind is dict:
            if type(labels) is not list or len(labels) != len(children) or \
                    not all(type(k) is str for k in labels):
                raise SavedModelError(f"{where}: a dict key has string labels")
            labels = tuple(labels)
        else:
            labels = len(children)
        return tt.Structure(kind, labels, children)
    raise SavedModelError(f"{where}: not a parameter key: {fmt._show(rec)}")


class Fixed:
    """A parameter the trace took as a Python object (a function, a config object): part
    of the saved graph, so a call must leave it out."""

    def __init__(self, what):
        self.what = what


def match(value, key, path, flat):
    """Append `value`'s arrays to `flat` if it fits `key`, else raise NoMatch."""
    if type(key) is Fixed:
        if value is not Fixed:
            raise NoMatch(f"`{path}` was the {key.what} when traced and is part of the "
                           "saved graph: leave it out")
        return
    if type(key) is tt.TensorSpec:
        if isinstance(value, Tensor):
            dtype, shape = value.dtype, value.shape
        elif tt.is_array(value):
            dtype, shape = np.dtype(value.dtype), tuple(value.shape)
        elif type(value) in (bool, int, float, complex, list):
            value = np.asarray(value)
            dtype, shape = value.dtype, value.shape
        else:
            raise NoMatch(f"`{path}` must be an array ({key.describe()}), got "
                           f"{tt.describe_value(value)}")
        ok = dtype == key.dtype and (key.shape is None or (
            shape is not None and len(shape) == len(key.shape) and
            all(k is None or k == d for k, d in zip(key.shape, shape))))
        if not ok:
            raise NoMatch(f"`{path}` must be {key.describe()}, got {dtype.name} "
                           f"shape={tt._shape_str(shape)}")
        flat.append(value)
        return
    if type(key) is tt.Literal:
        if type(value) is not type(key.value) or value != key.value:
            raise NoMatch(f"`{path}` must be {key.value!r}, got {tt.describe_value(value)}")
        return
    kind = key.kind
    if type(value) is not kind:
        raise NoMatch(f"`{path}` must be a {kind.__name__}, got {type(value).__name__}")
    if kind is dict:
        if sorted(value) != list(key.labels):
            raise NoMatch(f"`{path}` must have keys {list(key.labels)}")
        items = [value[k] for k in key.labels]
    else:
        if len(value) != len(key.children):
            raise NoMatch(f"`{path}` must have {len(key.children)} items")
        items = list(value)
    for i, (v, k) in enumerate(zip(items, key.children)):
        match(v, k, f"{path}[{i}]", flat)


def describe_key(key):
    if type(key) is tt.TensorSpec:
        return f"TensorSpec(shape={tt._shape_str(key.shape)}, dtype={key.dtype.name})"
    if type(key) is tt.Literal:
        return repr(key.value)
    if type(key) is Fixed:
        return f"<{key.what}, fixed>"
    inner = ", ".join(describe_key(k) for k in key.children)
    if key.kind is list:
        return f"[{inner}]"
    if key.kind is tuple:
        return f"({inner})"
    return "{" + ", ".join(f"{lab!r}: {describe_key(k)}"
                           for lab, k in zip(key.labels, key.children)) + "}"
