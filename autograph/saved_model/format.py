"""The saved-model format: names, versions, size limits, and the codec of attribute values.

A saved model is a directory holding `saved_model.json` (the description: object tree,
functions, graphs, Variables by reference, checksums) and two NumPy archives,
`constants.npz` (the values of Const nodes) and `variables.npz` (Variable values). The same
three files zipped together are the single-bytes form (`to_bytes` / `from_bytes`).
docs/saved_model.md documents every field; this module is the code's side of that page.

Attribute values are JSON with a few tagged objects (`{"$dtype": "float64"}`,
`{"$tuple": [...]}`, `{"$graph": 3}`, ...). Decoding builds only plain, inert Python values
(None, bool, int, float, complex, str, tuples, lists, dicts with str keys, NumPy dtypes of
fixed kinds) and markers that the loader resolves (graphs, Variables, arrays, the fixed
stand-ins of formatting and random templates). Nothing is ever looked up by a name the file
gives, except in the small fixed tables below.
"""

import math

import numpy as np

FORMAT_NAME = "autograph.saved_model"
FORMAT_VERSION = "1.1"    # 1.1: the description's seal (seal.py)
JSON_FILE = "saved_model.json"
CONSTANTS_FILE = "constants.npz"
VARIABLES_FILE = "variables.npz"


class SavedModelError(ValueError):
    """A saved model that cannot be written or read (the message says what and where)."""


class Limits:
    """What a loader accepts. The defaults bound memory and time on a file from a stranger;
    pass your own `Limits` to `load(..., limits=)` for bigger models. Immutable; compared
    by value; `limits.replace(max_bytes=...)` is a copy with some changed.
    (A plain class, not a dataclass: importing dataclasses costs a fresh process's load
    more than this whole module.)"""

    __slots__ = ("max_json_bytes", "max_nodes", "max_graphs", "max_rank", "max_elements",
                 "max_nesting", "max_string", "max_bytes", "max_loop_iterations")

    def __init__(self, max_json_bytes=512 * 2**20,    # 512 MiB of JSON description
                 max_nodes=5_000_000,                 # nodes over all graphs
                 max_graphs=1_000_000,
                 max_rank=64,
                 max_elements=2**34,                  # per array (and per static shape)
                 max_nesting=64,                      # of attribute values and of subgraphs
                 max_string=1 << 20,                  # characters in one string
                 max_bytes=1 << 32,                   # per file and per archive member,
                                                      # checked before it is read (4 GiB)
                 max_loop_iterations=None):           # per run of each while loop; None:
                                                      # unbounded. Hit: LoopLimitError
        values = locals()
        for name in self.__slots__:
            object.__setattr__(self, name, values[name])

    def __setattr__(self, name, value):
        raise AttributeError(f"Limits are immutable: use limits.replace({name}=...)")

    def replace(self, **changes):
        return Limits(**{**self._asdict(), **changes})

    def _asdict(self):
        return {name: getattr(self, name) for name in self.__slots__}

    def __eq__(self, other):
        return type(other) is Limits and self._asdict() == other._asdict()

    def __hash__(self):
        return hash(tuple(self._asdict().values()))

    def __repr__(self):
        return "Limits(" + ", ".join(f"{k}={v!r}" for k, v in self._asdict().items()) + ")"


DEFAULT_LIMITS = Limits()

# dtypes a file may name: every NumPy kind except object, str, void and datetime
_DTYPE_KINDS = "biufc"
HANDLE = "handle"          # the dtype of a TensorArray / generator handle tensor (object)


_NAMES = {}      # dtype -> its name in the file (asked once per dtype)
_PARSED = {}     # name -> dtype


def dtype_name(dtype):
    name = _NAMES.get(dtype)
    if name is None:
        name = _NAMES[dtype] = _dtype_name(dtype)
    return name


def _dtype_name(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.dtype(object):
        return HANDLE
    if dtype.kind not in _DTYPE_KINDS:
        raise SavedModelError(f"dtype {dtype} cannot be saved (numbers and booleans only)")
    return dtype.str if dtype.byteorder not in "=|" else dtype.name


def parse_dtype(name, where, handle_ok=False):
    """The NumPy dtype a file names; only numeric and boolean dtypes (object refused)."""
    if handle_ok and name == HANDLE:
        return np.dtype(object)
    hit = _PARSED.get(name) if type(name) is str else None
    if hit is not None:
        return hit
    if not isinstance(name, str) or len(name) > 32:
        raise SavedModelError(f"{where}: a dtype must be a short string, got {_show(name)}")
    try:
        dtype = np.dtype(name)
    except Exception:   # TypeError, ValueError, UnicodeEncodeError, SyntaxError: NumPy's parser
        raise SavedModelError(f"{where}: unknown dtype {name!r}") from None
    if dtype.kind not in _DTYPE_KINDS or dtype.hasobject:
        raise SavedModelError(f"{where}: dtype {name!r} is refused (object, string and other "
                              "non-numeric dtypes are never loaded)")
    if len(_PARSED) < 256:
        _PARSED[name] = dtype
    return dtype


def version_tuple(version):
    """(major, minor) of a checked version string; (0, 0) for anything else."""
    try:
        major, minor = version.split(".")
        return int(major), int(minor)
    except (AttributeError, ValueError):
        return (0, 0)


def check_version(version, where="saved_model.json"):
    """Accept every 1.x; refuse a newer major version naming both versions."""
    if not isinstance(version, str) or not version.count(".") == 1:
        raise SavedModelError(f"{where}: format_version must be a string 'MAJOR.MINOR', got "
                              f"{_show(version)}")
    major, minor = version.split(".")
    if not (major.isdigit() and minor.isdigit()):
        raise SavedModelError(f"{where}: format_version {version!r} is not 'MAJOR.MINOR'")
    mine = int(FORMAT_VERSION.split(".")[0])
    if int(major) > mine:
        raise SavedModelError(
            f"{where} is in saved-model format {version}, newer than this autograph reads "
            f"(format {FORMAT_VERSION}, which reads every 1.x file). Upgrade autograph to load "
            "it.")
    if int(major) < 1:
        raise SavedModelError(f"{where}: format_version {version!r} was never written")
    return version


# -- shapes --------------------------------------------------------------------------------------

def encode_shape(shape):
    return None if shape is None else [None if d is None else int(d) for d in shape]


def parse_shape(value, where, limits, partial=True):
    """A static shape from the file: a list of non-negative ints (None where `partial`), or
    None for an unknown rank; rank and element count bounded."""
    if value is None and partial:
        return None
    if not isinstance(value, (list, tuple)):
        raise SavedModelError(f"{where}: a shape must be a list, got {_show(value)}")
    if len(value) > limits.max_rank:
        raise SavedModelError(f"{where}: rank {len(value)} is over the limit "
                              f"({limits.max_rank})")
    size = 1
    for d in value:
        if d is None and partial:
            continue
        if type(d) is not int or d < 0:
            raise SavedModelError(f"{where}: a dimension must be a non-negative int, got "
                                  f"{_show(d)}")
        size *= d
    if size > limits.max_elements:
        raise SavedModelError(f"{where}: shape {list(value)} has {size} elements, over the "
                              f"limit ({limits.max_elements}); raise Limits.max_elements to "
                              "load it")
    return tuple(value)


# -- attribute values ----------------------------------------------------------------------------

class Ref:
    """A reference in an attribute to something the loader resolves: kind 'graph' (index
    into the graph table), 'variable' (index into the Variable table), 'array' (a key of
    constants.npz), 'fn' (a name in FUNCTIONS)."""

    __slots__ = ("kind", "target")

    def __init__(self, kind, target):
        self.kind, self.target = kind, target

    def __repr__(self):
        return f"<{self.kind} {self.target!r}>"


class Marker:
    """A fixed stand-in (a template slot) named by the file from a fixed table."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


class Composite:
    """A formatting record of a print template: kind 'text', 'sub' or 'field'."""

    __slots__ = ("kind", "items")

    def __init__(self, kind, items):
        self.kind, self.items = kind, items


_SCALAR_TAGS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def encode_float(x):
    x = float(x)
    if math.isfinite(x):
        return x
    return {"$float": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}


def decode(value, where, limits, depth=0):
    """A JSON attribute value as inert Python data (see the module docstring)."""
    if depth > limits.max_nesting:
        raise SavedModelError(f"{where}: attribute nested more than {limits.max_nesting} deep")
    t = type(value)
    if value is None or t is bool or t is int:
        return value
    if t is float:
        return value
    if t is str:
        if len(value) > limits.max_string:
            raise SavedModelError(f"{where}: a string of {len(value)} characters is over the "
                                  f"limit ({limits.max_string})")
        return value
    if t is list:
        return [decode(v, where, limits, depth + 1) for v in value]
    if t is not dict or len(value) != 1:
        raise SavedModelError(f"{where}: not an attribute value: {_show(value)}")
    (tag, body), = value.items()
    if tag == "$tuple" and type(body) is list:
        return tuple(decode(v, where, limits, depth + 1) for v in body)
    if tag == "$dict" and type(body) is list:
        out = {}
        for item in body:
            if type(item) is not list or len(item) != 2 or type(item[0]) is not str:
                raise SavedModelError(f"{where}: a $dict holds [str key, value] pairs")
            out[item[0]] = decode(item[1], where, limits, depth + 1)
        return out
    if tag == "$dtype":
        return parse_dtype(body, where)
    if tag == "$float" and body in _SCALAR_TAGS:
        return _SCALAR_TAGS[body]
    if tag == "$complex" and type(body) is list and len(body) == 2:
        re, im = (decode(v, where, limits, depth + 1) for v in body)
        if type(re) not in (int, float) or type(im) not in (int, float):
            raise SavedModelError(f"{where}: a $complex holds two numbers")
        return complex(re, im)
    if tag in ("$graph", "$variable") and type(body) is int and body >= 0:
        return Ref(tag[1:], body)
    if tag in ("$array", "$fn") and type(body) is str and len(body) < 256:
        return Ref(tag[1:], body)
    if tag == "$ndarray":
        return decode_array(body, where, limits)
    if tag == "$slot" and body in SLOT_NAMES:
        return Marker(body)
    if tag in ("$text", "$sub", "$field") and type(body) is list:
        return Composite(tag[1:], tuple(decode(v, where, limits, depth + 1) for v in body))
    raise SavedModelError(f"{where}: unknown attribute tag {_show(tag)}")


SLOT_NAMES = ("print", "random", "text")


def encode_array(a):
    """[dtype, shape, flat values] of a small array (complex as real, imaginary pairs)."""
    flat = a.reshape(-1)
    if a.dtype.kind == "c":
        flat = flat.view(np.dtype(f"f{a.dtype.itemsize // 2}"))
    values = flat.tolist()
    if a.dtype.kind in "fc":
        values = [encode_float(x) for x in values]
    return [dtype_name(a.dtype), list(a.shape), values]


def decode_array(body, where, limits):
    """A read-only array from encode_array's form (numbers only, size checked)."""
    if type(body) is not list or len(body) != 3 or type(body[2]) is not list:
        raise SavedModelError(f"{where}: an $ndarray is [dtype, shape, values]")
    dtype = parse_dtype(body[0], where)
    shape = parse_shape(body[1], where, limits, partial=False)
    values = body[2]
    size = math.prod(shape) * (2 if dtype.kind == "c" else 1)
    if len(values) != size:
        raise SavedModelError(f"{where}: an $ndarray of shape {list(shape)} holds "
                              f"{len(values)} values")
    out = []
    for x in values:
        t = type(x)
        if t is dict and len(x) == 1 and x.get("$float") in _SCALAR_TAGS:
            x = _SCALAR_TAGS[x["$float"]]
        elif t not in (bool, int, float):
            raise SavedModelError(f"{where}: an $ndarray holds numbers, not {_show(x)}")
        out.append(x)
    try:
        if dtype.kind == "c":
            parts = np.array(out, dtype=np.dtype(f"f{dtype.itemsize // 2}"))
            array = parts.view(dtype).reshape(shape)
        else:
            array = np.array(out, dtype=dtype).reshape(shape)
    except (OverflowError, ValueError) as e:
        raise SavedModelError(f"{where}: {e}") from None
    array.flags.writeable = False
    return array


def _show(value, n=60):
    text = repr(value)
    return text if len(text) <= n else text[:n] + "..."
