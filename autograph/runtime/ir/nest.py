"""Nested structures of values: flatten them to a list of leaves and pack them back.

Tuples, lists, dicts (keys sorted, so order never matters), namedtuples and dataclass
instances are structure; everything else is a leaf. Any other object can join in through
a small protocol: `__ag_flatten__()` returns its leaves (e.g. the tensors it holds) and
`__ag_unflatten__(leaves)` returns a like object holding new leaves. TensorArray uses it
so that it can be a loop variable or a branch output. Control flow uses this to carry
several loop variables at once; `ag.function` uses it to key and flatten arguments.
"""



def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _is_dataclass_instance(x):
    return hasattr(type(x), "__dataclass_fields__") and not isinstance(x, type)


def _dataclasses():
    """The dataclasses module, imported only where a dataclass exists (so it is loaded
    already): a fresh process that never meets one does not pay for its import."""
    import dataclasses
    return dataclasses


def _sorted_keys(d):
    try:
        return sorted(d)
    except TypeError:  # keys of mixed types: fall back to a stable textual order
        return sorted(d, key=repr)


def _is_custom(x):
    return hasattr(type(x), "__ag_flatten__")


# Types that are leaves for sure (asked about for every leaf: answer them first). Exact
# types only: a subclass may be a dataclass or speak the protocol.
_LEAF_TYPES = frozenset([int, float, bool, complex, str, bytes, type(None)])
_STRUCT_TYPES = frozenset([list, tuple, dict])


def add_leaf_type(cls):
    """Declare that instances of exactly `cls` are leaves (neither a container, a dataclass
    nor a protocol speaker), so is_nested answers for them at once."""
    global _LEAF_TYPES
    if isinstance(cls, type) and not hasattr(cls, "__dataclass_fields__") and \
            not hasattr(cls, "__ag_flatten__") and not issubclass(cls, (list, tuple, dict)):
        _LEAF_TYPES = _LEAF_TYPES | {cls}


def is_nested(x):
    t = type(x)
    if t in _LEAF_TYPES:
        return False
    if t in _STRUCT_TYPES:
        return True
    return isinstance(x, (list, tuple, dict)) or _is_dataclass_instance(x) or _is_custom(x)


def children(x):
    """The direct children of a structure, in canonical order."""
    if type(x) is tuple or type(x) is list:
        return list(x)
    if _is_custom(x):
        return list(x.__ag_flatten__())
    if isinstance(x, dict):
        return [x[k] for k in _sorted_keys(x)]
    if _is_dataclass_instance(x):
        return [getattr(x, f.name) for f in _dataclasses().fields(x)]
    return list(x)


def rebuild(x, kids):
    """A structure like `x` with `kids` (from `children`) as its direct children."""
    if type(x) is tuple:
        return tuple(kids)
    if type(x) is list:
        return list(kids)
    if _is_custom(x):
        return x.__ag_unflatten__(list(kids))
    if isinstance(x, dict):
        out = dict(zip(_sorted_keys(x), kids))
        if type(x) is dict:
            return {k: out[k] for k in x}
        # a subclass (defaultdict, Counter, OrderedDict, the user's): a copy keeps what its
        # constructor would not take back (a default_factory; Counter counts an iterable)
        import copy   # (only here: most calls never meet a dict subclass)
        new = copy.copy(x)
        for k in x:
            new[k] = out[k]
        return new
    if _is_namedtuple(x):
        return type(x)(*kids)
    if isinstance(x, tuple):
        return tuple(kids)
    if isinstance(x, list):
        return list(kids)
    if _is_dataclass_instance(x):
        dc = _dataclasses()
        return dc.replace(x, **{f.name: k for f, k in zip(dc.fields(x), kids)})
    raise TypeError(f"not a structure: {type(x).__name__}")


def flatten(x):
    """All leaves of `x`, depth first."""
    if not is_nested(x):
        return [x]
    out = []
    for kid in children(x):
        out.extend(flatten(kid))
    return out


def pack_sequence_as(structure, flat):
    """Rebuild `structure` with the leaves taken in order from `flat`."""
    flat = list(flat)
    it = iter(flat)

    def build(s):
        if not is_nested(s):
            return next(it)
        return rebuild(s, [build(k) for k in children(s)])

    out = build(structure)
    if next(it, _END) is not _END:
        raise ValueError(f"pack_sequence_as: {len(flat)} values for a structure of "
                         f"{len(flatten(structure))} leaves")
    return out


_END = object()


def map_structure(fn, *structures):
    """Apply `fn` leaf-wise over structures of the same shape."""
    first = structures[0]
    for other in structures[1:]:
        assert_same_structure(first, other)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(first, [fn(*leaves) for leaves in zip(*flats)])


def structure_of(x):
    """A hashable description of the structure of `x` (leaves replaced by '*')."""
    if not is_nested(x):
        return "*"
    if isinstance(x, dict):
        keys = tuple(_sorted_keys(x))
        return (type(x).__name__, keys, tuple(structure_of(x[k]) for k in keys))
    return (type(x).__qualname__, len(children(x)), tuple(structure_of(k) for k in children(x)))


def assert_same_structure(a, b, what="structure"):
    sa, sb = structure_of(a), structure_of(b)
    if sa != sb:
        raise ValueError(f"The two {what}s do not match:\n  {describe(a)}\n  {describe(b)}")


def describe(x):
    """A short human-readable picture of a structure, for error messages."""
    if not is_nested(x):
        return "value"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in x.items()) + "}"
    inner = ", ".join(describe(k) for k in children(x))
    if isinstance(x, list):
        return f"[{inner}]"
    if isinstance(x, tuple) and not _is_namedtuple(x):
        return f"({inner}{',' if len(x) == 1 else ''})"
    return f"{type(x).__name__}({inner})"
