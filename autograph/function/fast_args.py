"""The call fast path for structured arguments: lists, tuples, dicts, namedtuples and
dataclasses of NumPy arrays and Python primitives.

`Function.__call__` first keys a call by its flat arguments (`concrete.fast_key`);
a structure makes that key unhashable, and the call used to take the general path (bind,
build every trace key, flatten) on every call, 12x the cost of the flat call. Here one walk
over the arguments makes both a hashable key (per container its type and length or keys,
per array its type, dtype and shape, per Python value its type and value) and the arrays
in the order the graph's placeholders take them (`nest.flatten`'s order: dict keys sorted,
dataclass fields in declaration order). A key holds the types of the containers, so two
calls with the same key have the same trace key and the same flat arrays.

Anything else in a structure (an object, a function, an array of another library, a
container subclass other than a namedtuple) makes the call ineligible: `key` returns None
and the call takes the general path, as before.

Also here, for the flat fast path too: a function passed as an argument is held weakly in
a fast-path key (`weak_parts`), so the key does not keep it and its closure alive.
Imported by the first call that needs it (autograph.function._fast_args).

(`optree` 0.20 was measured as the walker: its C++ flatten plus the per-leaf key loop took
16.7 us for five arrays and a dict of two, against 4.3 us for this walk, and was even
(~150 us each) for a list of 20 dicts of six leaves; it would not pay for a dependency.)
"""

import weakref

import numpy as np

from autograph.runtime import devices

_NESTED = object()    # first item of every key made here (never equal to a flat key's)
_PRIMS = frozenset([bool, int, float, complex, str, bytes, type(None)])
_ORDERS = {}          # a dict's keys (insertion order) -> the same keys sorted
_FIELDS = {}          # a dataclass type -> its field names


class _NotFast(Exception):
    pass


def key(args, kwargs):
    """(key, arrays) for a call, or None when some argument is not eligible."""
    parts, arrays = [_NESTED, tuple(kwargs)], []
    try:
        _walk_all(args, parts, arrays)
        if kwargs:
            _walk_all(kwargs.values(), parts, arrays)
    except _NotFast:
        return None
    return tuple(parts), arrays


def _walk_all(values, parts, arrays):
    ndarray = np.ndarray
    for x in values:
        if type(x) is ndarray:   # the common leaf, without a call
            parts += (ndarray, x.dtype, x.shape)
            arrays.append(x)
        else:
            _walk(x, parts, arrays)


def _walk(x, parts, arrays):
    t = type(x)
    if t is np.ndarray or isinstance(x, np.generic):
        parts += (t, x.dtype, x.shape)
        arrays.append(x)
    elif t in _PRIMS:
        parts += (t, x)
    elif t is dict:
        keys = tuple(x)
        order = _ORDERS.get(keys)
        if order is None:
            order = _sorted(keys)
        parts += (dict, keys)
        _walk_all([x[k] for k in order], parts, arrays)
    elif t is list or t is tuple or (isinstance(x, tuple) and hasattr(t, "_fields")):
        parts += (t, len(x))
        _walk_all(x, parts, arrays)
    else:
        names = _FIELDS.get(t)
        if names is None:
            names = _fields(x)
        parts.append(t)
        _walk_all([getattr(x, name) for name in names], parts, arrays)


def _sorted(keys):
    try:
        order = tuple(sorted(keys))
    except TypeError:   # keys of mixed types: nest's textual order
        order = tuple(sorted(keys, key=repr))
    if len(_ORDERS) > 4096:
        _ORDERS.clear()
    _ORDERS[keys] = order
    return order


def _fields(x):
    t = type(x)
    if not (hasattr(t, "__dataclass_fields__") and not hasattr(t, "__ag_flatten__")):
        raise _NotFast
    import dataclasses   # loaded already: `t` is a dataclass
    names = tuple(f.name for f in dataclasses.fields(t))
    if len(_FIELDS) > 1024:
        _FIELDS.clear()
    _FIELDS[t] = names
    return names


# -- on the Function: keeping a structured call's runner; functions in keys held weakly ---------

def remember_nested(fn, args, kwargs, flat, runner, on_numpy):
    """The fast path for a call with structures of NumPy arrays (`key` above):
    kept when the call's arrays, walked as fast_args walks them, are exactly the arrays
    the graph was given, in order."""
    from autograph.function import _FAST_PATH_ENTRIES
    nested = key(args, kwargs) if on_numpy else None
    if nested is None or devices.current_device() is not None:
        return
    arrays = nested[1]
    if len(arrays) != len(flat) or any(a is not b for a, b in zip(arrays, flat)):
        return
    if len(fn._fast) >= _FAST_PATH_ENTRIES:
        fn._forget_fast()
    fn._fast[nested[0]] = runner


class _WeakPart:
    """A function inside a fast-path key, held weakly: equal to that function while it
    lives (a tuple holding it compares and hashes like the call's key, fast_key(args))."""

    __slots__ = ("ref", "hash")

    def __init__(self, obj, on_death):
        self.ref = weakref.ref(obj, on_death)
        self.hash = hash(obj)

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        obj = self.ref()
        return other is self or (obj is not None and other is obj)


def weak_parts(key, fn):
    """Fast-path key `key` with its functions held weakly: when one dies, Function `fn`'s
    fast path starts over."""
    this = weakref.ref(fn)

    def forget(_ref):
        f = this()
        if f is not None:
            f._forget_fast()

    return _weak_parts(key, forget)


def _weak_parts(key, on_death):
    from autograph.function import _HELD_WEAKLY
    if type(key) is tuple:
        return tuple([_weak_parts(k, on_death) for k in key])
    if type(key) in _HELD_WEAKLY:
        try:
            return _WeakPart(key, on_death)
        except TypeError:   # cannot be weakly referenced: held like any key part
            return key
    return key
