"""`ag.saved_model.save(obj, export_dir)`: the object tree, its functions' traces and its
Variables, written as JSON + .npz (see docs/saved_model.md).

What is saved of an object: its public attributes that are Variables, `ag.function`s
(also methods decorated on its class), other objects holding those (children, by
attribute name), lists, tuples and dicts of them, and plain Python values (numbers,
strings). Of each function: every concrete function it has traced, or the one its
`input_signature` (or an empty parameter list) gives; a function with neither is an error
that says what to do.
"""

import inspect
import io
import json
import os
import warnings

import numpy as np

from autograph.function import trace_type as tt
from autograph.runtime.ir import nest
from autograph.runtime.ir.tensor import Tensor
from autograph.saved_model import format as fmt
from autograph.saved_model.format import SavedModelError
from autograph.saved_model import seal, tree
from autograph.saved_model.graph_writer import Writer


def save(obj, export_dir, signatures=None, key=None):
    """Write `obj` (a Module, an object holding Variables and ag.functions, an ag.function,
    or a ConcreteFunction) to the directory `export_dir` (created if needed). `key` (bytes
    or str): sign every file with an HMAC-SHA256 that `load(..., key=key)` checks."""
    files = serialize(obj, signatures, key)
    os.makedirs(export_dir, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(export_dir, name), "wb") as f:
            f.write(data)


def to_bytes(obj, signatures=None, key=None):
    """The single-bytes form: the three files of `save`, in one uncompressed zip."""
    import zipfile      # here: `import autograph.saved_model` (for load) does not need it
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in serialize(obj, signatures, key).items():
            z.writestr(name, data)
    return buf.getvalue()


def serialize(obj, signatures=None, key=None):
    """{file name: bytes} of a saved model of `obj`."""
    if inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isbuiltin(obj):
        raise SavedModelError(
            f"{getattr(obj, '__name__', obj)!r} is a plain Python function: only traced "
            "graphs can be saved. Decorate it with @ag.function and call it once (or give it "
            "an input_signature) before saving.")
    state = _State()
    root = state.object(obj, "obj")
    sigs = {}
    if signatures is not None:
        if not isinstance(signatures, dict):
            signatures = {"serving_default": signatures}
        for name, fn in signatures.items():
            if not isinstance(name, str):
                raise SavedModelError("signature names must be strings")
            sigs[name] = state.object(fn, f"signatures[{name!r}]")
    tree.prune(state.objects)
    objects, renumber = tree.compact(state.objects, [root] + list(sigs.values()))
    root, sigs = renumber[root], {k: renumber[i] for k, i in sigs.items()}
    w = state.writer
    variables = {f"v{i}": np.asarray(v.numpy(), order="C") for i, v in enumerate(w.variables)}
    constants = {k: np.asarray(a, order="C") for k, a in w.constants.items()}
    blobs = {fmt.CONSTANTS_FILE: _npz(constants), fmt.VARIABLES_FILE: _npz(variables)}
    doc = {
        "format": fmt.FORMAT_NAME,
        "format_version": fmt.FORMAT_VERSION,
        "producer": f"autograph {_version()}",
        "checksums": {name: "sha256:" + seal.sha256_hex(data)
                      for name, data in blobs.items()},
        "root": root,
        "signatures": sigs,
        "objects": objects,
        "functions": state.functions,
        "variables": [_variable_record(v, i) for i, v in enumerate(w.variables)],
        "graphs": w.graphs,
    }
    text = json.dumps(doc, separators=(",", ":"), allow_nan=False).encode("utf-8")
    return {fmt.JSON_FILE: seal.close(text, blobs, key), **blobs}


def _npz(arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _version():
    import autograph
    return autograph.__version__


def _variable_record(v, i):
    dtype = np.dtype(v.dtype)
    return {"name": str(getattr(v, "name", "Variable")), "dtype": fmt.dtype_name(dtype),
            "shape": [int(d) for d in v.shape], "trainable": bool(getattr(v, "trainable", True)),
            "key": f"v{i}"}


class _State:
    def __init__(self):
        self.writer = Writer()
        self.objects = []
        self.functions = []
        self._memo = {}          # id(obj) -> object index
        self._keep = []          # objects memoised by id stay alive meanwhile

    def object(self, obj, path):
        """The index of `obj`'s record in the object table."""
        i = self._memo.get(id(obj))
        if i is not None:
            return i
        from autograph.function.concrete import ConcreteFunction
        from autograph.function import Function
        if obj is None or type(obj) in (bool, int, float, str):
            self.objects.append({"kind": "value", "value": obj if type(obj) is not float
                                 else fmt.encode_float(obj)})
            return len(self.objects) - 1
        i = len(self.objects)
        self._memo[id(obj)] = i
        self._keep.append(obj)
        self.objects.append(None)
        if tt.is_variable(obj):
            rec = {"kind": "variable", "variable": self.writer.variable(obj)}
        elif isinstance(obj, Function):
            traces = _traces(obj, path, required=path.count(".") <= 1)
            rec = {"kind": "function", "name": obj.__name__,
                   "concrete": [self.concrete(c, path) for c in traces]}
        elif isinstance(obj, ConcreteFunction):
            rec = {"kind": "function", "name": obj.name, "concrete": [self.concrete(obj, path)]}
        elif hasattr(obj, "_saved_model_record"):       # a loaded object, saved again
            rec = obj._saved_model_record(self, path)
        elif type(obj) in (list, tuple):
            rec = {"kind": type(obj).__name__,
                   "items": [self.object(x, f"{path}[{k}]") for k, x in enumerate(obj)
                             if _saveable(x)]}
        elif type(obj) is dict:
            rec = {"kind": "dict", "items": [[k, self.object(x, f"{path}[{k!r}]")]
                                             for k, x in obj.items()
                                             if type(k) is str and _saveable(x)]}
        else:
            rec = {"kind": "object", "class": type(obj).__name__,
                   "children": {name: self.object(x, f"{path}.{name}")
                                for name, x in _attributes(obj)}}
            name = _module_name(obj)
            if name is not None:        # a Module: its name, and its Variables' order
                rec["module_name"] = name
                rec["variables"] = [self.writer.variable(v) for v in obj.variables]
        self.objects[i] = rec
        return i

    def concrete(self, c, path):
        """The index of concrete function `c` in the function table."""
        i = self._memo.get(("concrete", id(c)))
        if i is not None:
            return i
        self._keep.append(c)
        graph = self.writer.graph(c.graph)
        params = []
        for name in c._names:
            kind = c._sig.kinds[name]
            p = {"name": name, "kind": kind.name,
                 "key": _key(c._param_keys[name], f"{path}: argument `{name}`")}
            default = c._sig.signature.parameters[name].default
            if default is not inspect.Parameter.empty and _plain(default):
                p["default"] = _plain_json(default)
            params.append(p)
        rec = {"name": c.name, "graph": graph, "params": params,
               "outputs": _outputs(c, path)}
        self.functions.append(rec)
        i = self._memo[("concrete", id(c))] = len(self.functions) - 1
        return i


def _traces(fn, path, required):
    """The concrete functions of Function `fn` to save (tracing one when it has none).

    A function of the saved object itself with nothing to save is an error; one of a
    child object (typically a layer's __call__ that only ever ran inside the parent's
    trace, where it is part of the parent's graph already) is left out with a warning."""
    traces = list(fn._traces.values())
    if traces:
        return traces
    if fn.input_signature is not None or not fn._sig.names:
        return [fn.get_concrete_function()]
    if not required:
        warnings.warn(f"{path} (ag.function {fn.__name__}) was never traced on its own and "
                      "has no input_signature: it is saved without traces (calling it after "
                      "loading raises TypeError). Call it once before saving to keep it.",
                      stacklevel=4)
        return []
    raise SavedModelError(
        f"{path} (ag.function {fn.__name__}) has never been traced and has no "
        "input_signature, so there is no graph to save. Call it once with example inputs "
        "before saving, call its get_concrete_function(ag.TensorSpec(...)), or declare "
        "@ag.function(input_signature=[ag.TensorSpec(shape, dtype), ...]).")


def _attributes(obj):
    """(name, value) of the public attributes to save: instance attributes, then
    ag.functions defined on the class (bound to this instance)."""
    from autograph.function import Function
    out = []
    seen = set()
    ignored = set(getattr(type(obj), "_ag_ignored_attributes", ()))
    for name, value in sorted(getattr(obj, "__dict__", {}).items()):
        if not name.startswith("_") and name not in ignored and _saveable(value):
            out.append((name, value))
            seen.add(name)
    for klass in type(obj).__mro__:
        for name, value in sorted(vars(klass).items()):
            if isinstance(value, Function) and name not in seen and \
                    (not name.startswith("_") or name == "__call__"):
                out.append((name, getattr(obj, name)))
                seen.add(name)
    return out


def _module_name(obj):
    try:
        from autograph.module import Module
    except ImportError:
        return None
    return obj.name if isinstance(obj, Module) else None


def _saveable(x):
    """Whether an attribute value belongs in the object tree: plain values, Variables,
    functions, containers, and objects that may hold those (not arrays, modules, classes
    or plain Python functions)."""
    from autograph.function.concrete import ConcreteFunction
    from autograph.function import Function
    if x is None or type(x) in (bool, int, float, str, list, tuple, dict):
        return True
    if tt.is_variable(x) or isinstance(x, (Function, ConcreteFunction)) or \
            hasattr(x, "_saved_model_record"):
        return True
    if isinstance(x, (np.ndarray, np.generic, Tensor)) or inspect.ismodule(x) or \
            inspect.isclass(x) or inspect.isroutine(x):
        return False
    return hasattr(x, "__dict__")


def _plain(v):
    try:
        _plain_json(v)
        return True
    except SavedModelError:
        return False


def _plain_json(v):
    t = type(v)
    if v is None or t in (bool, int, str):
        return v
    if t is float:
        return fmt.encode_float(v)
    if t in (tuple, list):
        items = [_plain_json(x) for x in v]
        return {"$tuple": items} if t is tuple else items
    if t is dict and all(type(k) is str for k in v):
        return {"$dict": [[k, _plain_json(x)] for k, x in v.items()]}
    raise SavedModelError(f"{type(v).__name__} value {v!r} is not plain data")


def _key(key, where):
    """A trace key as JSON: tensor specs, Python values, lists/tuples/dicts of them."""
    if type(key) is tt.TensorSpec:
        return {"spec": [fmt.dtype_name(key.dtype), fmt.encode_shape(key.shape)]}
    if type(key) is tt.Literal:
        try:
            return {"literal": _plain_json(key.value)}
        except SavedModelError:
            pass
    if type(key) in (tt.ObjectKey, tt.Protocol):
        # an object the trace took as it was (a step function, a config): fixed in the
        # saved graph; a call leaves it out
        return {"fixed": _describe_object(key)}
    if type(key) is tt.Structure and key.kind in (list, tuple, dict):
        labels = list(key.labels) if isinstance(key.labels, tuple) else key.labels
        return {"structure": key.kind.__name__, "labels": labels,
                "children": [_key(k, where) for k in key.children]}
    what = (key.kind.__name__ if type(key) is tt.Structure else
            type(getattr(key, "obj", None) or key).__name__)
    if tt.tensor_specs(key):
        raise SavedModelError(
            f"{where} is an object ({what}) whose arrays enter the graph as inputs through "
            "its own trace type (an ag.data.Dataset, for one): such arguments cannot be "
            "saved yet. Save a function that takes the arrays (or one batch) instead.")
    raise SavedModelError(
        f"{where} was traced with {tt.describe_key(key)}, which cannot be saved: a saved "
        "function takes arrays, Python numbers/strings/bools and lists, tuples and dicts of "
        "them. Pass other objects as attributes of the saved object instead.")


def _describe_object(key):
    obj = getattr(key, "obj", None)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    kind = type(obj).__name__ if obj is not None else "object"
    return f"{kind} {name}" if name else kind


def _outputs(c, path):
    """The function's result structure as JSON, {"$out": k} for the k-th graph output."""
    flat = list(nest.flatten(c._structure)) if nest.is_nested(c._structure) else [c._structure]
    where = {flat_i: k for k, flat_i in enumerate(c._tensor_slots)}

    def leaf(i, value):
        if i in where:
            return {"$out": where[i]}
        try:
            return {"$value": _plain_json(value)}
        except SavedModelError:
            raise SavedModelError(f"{path}: the function returns a {type(value).__name__}, "
                                  "which cannot be saved (arrays and plain Python values "
                                  "only)") from None

    if not nest.is_nested(c._structure):
        return leaf(0, c._structure)
    counter = iter(range(len(flat)))
    marked = nest.pack_sequence_as(c._structure, [_Leaf(next(counter)) for _ in flat])
    return _encode_structure(marked, leaf, flat, path)


class _Leaf:
    def __init__(self, i):
        self.i = i


def _encode_structure(s, leaf, flat, path):
    t = type(s)
    if t is _Leaf:
        return leaf(s.i, flat[s.i])
    if t is list:
        return [_encode_structure(x, leaf, flat, path) for x in s]
    if t is tuple:
        return {"$tuple": [_encode_structure(x, leaf, flat, path) for x in s]}
    if t is dict and all(type(k) is str for k in s):
        return {"$dict": [[k, _encode_structure(x, leaf, flat, path)] for k, x in s.items()]}
    if isinstance(s, tuple):     # a namedtuple: saved as a plain tuple
        return {"$tuple": [_encode_structure(x, leaf, flat, path) for x in s]}
    raise SavedModelError(f"{path}: the function returns a {t.__name__} structure, which "
                          "cannot be saved (lists, tuples and dicts with string keys only)")
