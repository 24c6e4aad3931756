"""`ag.saved_model.load(export_dir)`: a saved model, checked and rebuilt without its source.

The loader trusts nothing in its files. It never unpickles (arrays are read with
`allow_pickle=False`, after their headers are checked: no object dtypes, bounded rank and
size), never evaluates or imports anything a file names: ops must be primitives of the table
(their modules, from a fixed table, are imported as the graphs are read: op_modules.py),
attributes must fit each primitive's schema (schema.py), names of functions come from fixed
tables, and sizes are bounded (format.Limits). Checksums must match.
"""

import json
import math
import os
import tokenize

import numpy as np

from autograph.runtime import trace_type as tt
from autograph.saved_model import format as fmt
from autograph.saved_model.format import DEFAULT_LIMITS, SavedModelError
from autograph.saved_model.graphs import Reader
from autograph.saved_model import archive, params, restored, seal, tree

# the families of primitives a model uses are imported as its graphs are read, each from
# autograph's own table of which module registers which op (op_modules.py): nothing a
# file names is ever imported

_FILES = (fmt.JSON_FILE, fmt.CONSTANTS_FILE, fmt.VARIABLES_FILE)


def load(export_dir, limits=DEFAULT_LIMITS, key=None):
    """The object saved in directory `export_dir` (see docs/saved_model.md). `key`: the key
    the model was saved with (its HMAC is checked; an unsigned model is then refused).
    `limits`: what is accepted (format.Limits). Only SavedModelError leaves it."""
    with _only_saved_model_errors(export_dir):
        path = os.path.join(export_dir, fmt.JSON_FILE)
        if not os.path.isfile(path):
            raise SavedModelError(f"{export_dir!r} holds no {fmt.JSON_FILE}: not a saved model")
        files = {}
        for name in _FILES:
            p = os.path.join(export_dir, name)
            if os.path.isfile(p):
                files[name] = _read_file(p, name, limits)
        return from_files(files, export_dir, limits, key)


def from_bytes(data, limits=DEFAULT_LIMITS, key=None):
    """The object of a single-bytes saved model (`to_bytes`), checked as `load` checks."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"from_bytes takes bytes, not {type(data).__name__}")
    with _only_saved_model_errors("<bytes>"):
        files = {}
        for member in archive.members(bytes(data), "the archive"):
            if member.name not in _FILES:
                raise SavedModelError(f"unexpected member {member.name!r} in the archive")
            if member.name in files:
                raise SavedModelError(f"member {member.name!r} appears twice in the archive")
            files[member.name] = bytes(_member(member, "the archive", limits))
        return from_files(files, "<bytes>", limits, key)


class _only_saved_model_errors:
    """Whatever a damaged file makes the checks raise leaves as SavedModelError: one that
    names the reason where the checks foresaw it, else one that names the Python error
    (`unexpected` set: a check the loader lacks; please report it)."""

    def __init__(self, where):
        self.where = where

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        if kind is None or issubclass(kind, SavedModelError) or \
                not issubclass(kind, Exception):
            return False
        if issubclass(kind, RecursionError):
            err = SavedModelError(f"{self.where}: the model nests too deep to load")
        elif issubclass(kind, MemoryError):
            err = SavedModelError(f"{self.where}: the model does not fit in memory; "
                                  "load(..., limits=Limits(...)) bounds what is accepted")
        else:
            err = SavedModelError(f"{self.where}: not a valid saved model "
                                  f"({kind.__name__}: {str(exc)[:200]})")
            err.unexpected = True
        raise err from exc


def _read_file(path, name, limits):
    """A file's bytes, its size checked against the limits before it is read (a sparse
    5 GiB file is refused, not allocated)."""
    size = os.path.getsize(path)
    limit = limits.max_json_bytes if name == fmt.JSON_FILE else limits.max_bytes
    if size > limit:
        raise SavedModelError(f"{path} is {size} bytes, over the limit of {limit} bytes; "
                              "pass load(..., limits=Limits(max_bytes=..., "
                              "max_json_bytes=...)) to accept it")
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) != size:
        raise SavedModelError(f"{path} changed while it was read")
    return data


def _member(member, where, limits):
    """The bytes of `member` (a view), its declared sizes checked first."""
    _check_stored(member, where)
    limit = limits.max_json_bytes if member.name == fmt.JSON_FILE else limits.max_bytes
    if member.file_size > limit:
        raise SavedModelError(f"{where}: member {member.name!r} is {member.file_size} bytes, "
                              f"over the limit of {limit} bytes")
    return member.data


def _check_json_size(size, where, limits):
    if size > limits.max_json_bytes:
        raise SavedModelError(f"{where} is {size} bytes, over the limit of "
                              f"{limits.max_json_bytes} bytes for the JSON description; "
                              "pass load(..., limits=Limits(max_json_bytes=...)) to accept it")


def from_files(files, where, limits=DEFAULT_LIMITS, key=None):
    with _only_saved_model_errors(where):
        doc = read_description(files, where, limits, key)
        constants = read_npz(files.get(fmt.CONSTANTS_FILE, b""), fmt.CONSTANTS_FILE, limits)
        for a in constants.values():
            a.flags.writeable = False        # constants are read-only snapshots
        values = read_npz(files.get(fmt.VARIABLES_FILE, b""), fmt.VARIABLES_FILE, limits)
        return build(doc, constants, values, limits)


def read_description(files, where, limits, key=None):
    """The parsed and version-checked JSON description (seal and checksums verified)."""
    text = files.get(fmt.JSON_FILE)
    if text is None:
        raise SavedModelError(f"{where}: no {fmt.JSON_FILE}")
    _check_json_size(len(text), f"{where}/{fmt.JSON_FILE}", limits)
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise SavedModelError(f"{where}/{fmt.JSON_FILE} is not valid JSON: {e}") from None
    if type(doc) is not dict or doc.get("format") != fmt.FORMAT_NAME:
        raise SavedModelError(f"{where}/{fmt.JSON_FILE} is not an autograph saved model "
                              f"(its 'format' is not {fmt.FORMAT_NAME!r})")
    fmt.check_version(doc.get("format_version"), f"{where}/{fmt.JSON_FILE}")
    seal.check(bytes(text), doc, files, key, f"{where}/{fmt.JSON_FILE}")
    sums = doc.get("checksums")
    if type(sums) is not dict:
        raise SavedModelError(f"{where}: 'checksums' is missing")
    for name in (fmt.CONSTANTS_FILE, fmt.VARIABLES_FILE):
        if name not in files and name not in sums:
            continue
        want = sums.get(name)
        data = files.get(name)
        if data is None or type(want) is not str:
            raise SavedModelError(f"{where}: {name} is missing (or has no checksum)")
        got = "sha256:" + seal.sha256_hex(data)
        if got != want:
            raise SavedModelError(f"{where}/{name}: checksum mismatch (the file is damaged or "
                                  f"was changed): expected {want}, got {got}")
    graphs = doc.get("graphs")
    if type(graphs) is not list or len(graphs) > limits.max_graphs:
        raise SavedModelError(f"{where}: 'graphs' must be a list of at most "
                              f"{limits.max_graphs} graphs")
    count = sum(len(g.get("nodes", ())) if type(g) is dict and type(g.get("nodes")) is list
                else 0 for g in graphs)
    if count > limits.max_nodes:
        raise SavedModelError(f"{where}: {count} nodes, over the limit ({limits.max_nodes})")
    return doc


def read_npz(data, name, limits):
    """{key: array} of an .npz archive, each member's header checked before it is read."""
    if not data:
        return {}
    out = {}
    for member in archive.members(data, name):
        key = member.name[:-4] if member.name.endswith(".npy") else None
        if not key:
            raise SavedModelError(f"{name}: unexpected member {member.name!r}")
        if key in out:
            raise SavedModelError(f"{name}: member {member.name!r} appears twice")
        out[key] = _read_array(_member(member, name, limits), f"{name}[{key!r}]", limits)
    return out


def _check_stored(member, where):
    """Members are stored uncompressed and unencrypted (as save writes them): their declared
    sizes are then bytes actually present, so nothing is allocated for a size a file only
    claims."""
    if member.method != 0 or member.file_size != member.compress_size:
        raise SavedModelError(f"{where}: member {member.name!r} is compressed; saved "
                              "models hold uncompressed members only (no decompression "
                              "bombs)")
    if member.flags & 0x1:
        raise SavedModelError(f"{where}: member {member.name!r} is encrypted")


class _Reader:
    """A read-only file over a member's bytes (NumPy's header readers take a file)."""

    def __init__(self, view):
        self.view, self.pos = view, 0

    def read(self, n=-1):
        end = len(self.view) if n is None or n < 0 else min(len(self.view), self.pos + n)
        out = bytes(self.view[self.pos:end])
        self.pos = end
        return out


def _read_array(view, where, limits):
    """One .npy member: its header checked first (dtype, rank, size), then its bytes
    copied as a flat buffer of that dtype; never unpickled."""
    f = _Reader(view)
    shape, fortran, dtype = _check_header(f, where, limits)
    count = math.prod(shape)
    size = count * dtype.itemsize
    if f.pos + size > len(view):        # before allocating what the header claims
        raise SavedModelError(f"{where}: the header claims {count} elements of {dtype}, more "
                              f"than the {len(view)} bytes of the member hold")
    if f.pos + size != len(view):
        raise SavedModelError(f"{where}: the data does not hold {count} elements of {dtype}")
    data = bytearray(view[f.pos:])                 # writable: a Variable may own it as is
    array = np.frombuffer(data, dtype=dtype, count=count)
    return array.reshape(shape, order="F" if fortran else "C")


def _check_header(f, where, limits):
    try:
        major, minor = np.lib.format.read_magic(f)
        if (major, minor) == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        elif (major, minor) in ((2, 0), (3, 0)):
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        else:
            raise ValueError(f"unknown .npy version {major}.{minor}")
    except (ValueError, SyntaxError, TypeError, UnicodeError, EOFError, OverflowError,
            RecursionError, tokenize.TokenError) as e:     # NumPy parses the header with tokenize and literal_eval
        raise SavedModelError(f"{where}: not a valid .npy header ({type(e).__name__}: "
                              f"{str(e)[:200]})") from None
    if type(fortran) is not bool or type(shape) is not tuple:
        raise SavedModelError(f"{where}: not a valid .npy header")
    if dtype.hasobject or dtype.kind not in "biufc":
        raise SavedModelError(
            f"{where} is an array of dtype {dtype} (a pickled object array?): refused; a "
            "saved model holds numeric and boolean arrays only and is never unpickled")
    fmt.parse_shape(list(shape), where, limits, partial=False)
    return shape, fortran, dtype


def build(doc, constants, values, limits):
    """The restored object of a checked description."""
    var_records = doc.get("variables", [])
    if type(var_records) is not list:
        raise SavedModelError("'variables' must be a list")
    vars_ = [_variable(rec, i, values, limits) for i, rec in enumerate(var_records)]
    reader = Reader(doc["graphs"], constants, vars_, limits)
    functions = _functions(doc.get("functions", []), reader, limits)
    objects = doc.get("objects", [])
    if type(objects) is not list or not objects:
        raise SavedModelError("'objects' must be a non-empty list")
    builder = tree.TreeBuilder(objects, functions, vars_, limits)
    root = builder.object(doc.get("root", 0))
    sigs = doc.get("signatures", {})
    if type(sigs) is not dict:
        raise SavedModelError("'signatures' must be an object")
    signatures = {fmt.decode(k, "signatures", limits): builder.object(i) for k, i in sigs.items()}
    if isinstance(root, restored.RestoredObject):
        root.__dict__["signatures"] = signatures
    return root


def _variable(rec, i, values, limits):
    from autograph.runtime.variables import Variable
    where = f"variable {i}"
    if type(rec) is not dict:
        raise SavedModelError(f"{where}: expected an object")
    dtype = fmt.parse_dtype(rec.get("dtype"), where)
    shape = fmt.parse_shape(rec.get("shape"), where, limits, partial=False)
    value = values.get(rec.get("key")) if type(rec.get("key")) is str else None
    if value is None:
        raise SavedModelError(f"{where}: no value {rec.get('key')!r} in {fmt.VARIABLES_FILE}")
    if value.dtype != dtype or value.shape != shape:
        raise SavedModelError(f"{where}: the value is {value.dtype} {value.shape}, the "
                              f"description says {dtype} {shape}")
    name, trainable = rec.get("name", "Variable"), rec.get("trainable", True)
    if type(name) is not str or type(trainable) is not bool:
        raise SavedModelError(f"{where}: 'name' must be a string and 'trainable' a bool")
    return Variable(value, name=name, trainable=trainable)


def _functions(records, reader, limits):
    if type(records) is not list:
        raise SavedModelError("'functions' must be a list")
    out = []
    for i, rec in enumerate(records):
        where = f"function {i}"
        if type(rec) is not dict:
            raise SavedModelError(f"{where}: expected an object")
        graph = reader.graph(rec.get("graph"))
        if type(rec.get("params", [])) is not list:
            raise SavedModelError(f"{where}: 'params' must be a list")
        parameters = [params.Param.from_json(p, f"{where} parameter {k}", limits)
                      for k, p in enumerate(rec.get("params", []))]
        specs = [s for p in parameters for s in tt.tensor_specs(p.key)]
        if len(specs) != len(graph.inputs):
            raise SavedModelError(f"{where}: {len(specs)} array parameters for a graph of "
                                  f"{len(graph.inputs)} inputs")
        for k, (spec, ph) in enumerate(zip(specs, graph.inputs)):
            # what a call accepts is what the graph was checked for
            if np.dtype(spec.dtype) != ph.dtype or spec.shape != ph.shape:
                raise SavedModelError(f"{where}: array parameter {k} is {spec}, but the "
                                      f"graph's input is {ph.dtype} {ph.shape}")
        out.append(restored.RestoredConcrete(
            str(rec.get("name", "function")), graph, parameters, rec.get("outputs"), rec,
            limits))
    return out
