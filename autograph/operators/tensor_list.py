"""TensorList: a Python list that a loop or `if` the graph runs changes, as a graph value.

The lists pass (converters/lists.py) rewrites `l.append(v)`, `v = l.pop(i)`,
`l.insert(i, v)` in loops and branches into operators (operators/lists.py) that give the
list back; `l[i] = v` is `l = ag__.setitem(l, i, v)` (item_updates). On a list made outside
the loop or `if` being traced those operators return a TensorList: one growing TensorArray
(runtime/tensor_array.py) per field of the element, so a list of arrays is one
TensorArray, a list of `(a, b)` tuples two, a list of `{"k": v}` dicts one per key. It is
functional: each change returns the list to use from now on (`appended`, `popped`,
`inserted`, `assigned`: not the list's own method names, whose calls are refused), and the
loop carries it as its state (its TensorArrays' handles).

What a TensorList does, as the list would:
    append(v), pop(i), insert(i, v), l[i], l[i] = v, len(l) (a tensor), `if l`,
    `for v in l`, np.stack / np.array / np.asarray / np.concatenate (operators/lists.py),
and the graph gives it back to the caller as a Python list of arrays (of tuples or dicts
of arrays). Each element's fields each have one dtype for the whole list (NumPy would
promote a stacked list; a loop variable cannot change its dtype): another is refused.
"""

import numpy as np

from autograph import errors
from autograph.runtime.ir.tensor import is_tensor


# -- the element's structure: a leaf (an array), or a tuple/list/dict of structures ----------

def flatten(value):
    """(leaves, spec) of a list element: spec None for an array, else (type, keys, specs)
    for a tuple, list, namedtuple or dict."""
    if isinstance(value, dict):
        keys = tuple(value)
        parts = [flatten(value[k]) for k in keys]
    elif isinstance(value, (tuple, list)):
        keys = len(value)
        parts = [flatten(v) for v in value]
    else:
        return [value], None
    return [leaf for p in parts for leaf in p[0]], (type(value), keys, tuple(p[1] for p in parts))


def build(spec, leaves):
    """The element of structure `spec` whose leaves (in order) are the iterator `leaves`."""
    if spec is None:
        return next(leaves)
    kind, keys, specs = spec
    if issubclass(kind, dict):
        return kind((k, build(s, leaves)) for k, s in zip(keys, specs))
    parts = [build(s, leaves) for s in specs]
    return kind(*parts) if hasattr(kind, "_fields") else kind(parts)


def _count(spec):
    return 1 if spec is None else sum(_count(s) for s in spec[2])


def describe(spec):
    if spec is None:
        return "an array"
    kind, keys, _ = spec
    if issubclass(kind, dict):
        return f"a {kind.__name__} with keys {list(keys)}"
    return f"a {kind.__name__} of {keys}"


def array_like(value):
    """A value a list of tensors holds: a tensor, a NumPy array or scalar, a number."""
    return is_tensor(value) or (isinstance(value, (np.ndarray, np.generic, bool, int, float,
                                                   complex)) and np.asarray(value).dtype.kind
                                in "biufc")


def element_like(value):
    """Whether `value` can be an element of a TensorList (its leaves array-like)."""
    leaves, _ = flatten(value)
    return bool(leaves) and all(array_like(v) for v in leaves)


def dtype_of(value):
    """The dtype NumPy gives `value` in np.stack: a Python number is int64/float64/...
    (not weak: np.stack([np.float32(1), 0.5]) is float64)."""
    if is_tensor(value) or isinstance(value, (np.ndarray, np.generic)):
        return np.dtype(value.dtype)
    return np.asarray(value).dtype


def _where(prefix=" at "):
    from autograph.operators.location import where
    return where(prefix)


class TensorList:
    """A Python list of elements of one structure and dtypes, as a graph value."""

    __slots__ = ("arrays", "spec", "length")

    def __init__(self, arrays, spec=None, length=None):
        self.arrays = list(arrays)   # one TensorArray per leaf of the element
        self.spec = spec             # the element's structure (see flatten)
        self.length = length         # a Python int while known, else None

    @classmethod
    def of(cls, items, like):
        """The list `items` (Python values or tensors) of elements structured like `like`
        (an element, or a TensorList)."""
        if type(like) is TensorList:   # a template: its structure, dtypes, element shapes
            spec, kinds = like.spec, [(a.dtype, a.element_shape) for a in like.arrays]
        else:
            leaves, spec = flatten(like)
            kinds = [(dtype_of(v), None) for v in leaves]
        out = cls([_empty(dtype, shape) for dtype, shape in kinds], spec, 0)
        for item in items:
            out = out.appended(item)
        return out

    @property
    def array(self):
        """The TensorArray of a list of arrays."""
        if self.spec is not None:
            raise errors.StagingError(
                f"This list{_where()} holds {describe(self.spec)} per element, which has no "
                f"single array: index its elements, or stack a field ([e[0] for e in l] "
                f"after the loop).")
        return self.arrays[0]

    def _leaves(self, value, what):
        leaves, spec = flatten(value)
        if spec != self.spec:
            raise errors.StagingError(
                f"{describe(spec).capitalize()} is {what}{_where()} to a list whose elements "
                f"are {describe(self.spec)}, in a loop or `if` the graph runs: the list is a "
                f"list of tensors whose elements all have one structure.")
        from autograph.runtime.ir import primitives
        return [primitives.convert(_checked(v, a.dtype, what))
                for v, a in zip(leaves, self.arrays)]

    def _with(self, arrays, grow):
        n = None if self.length is None or grow is None else self.length + grow
        return TensorList(arrays, self.spec, n)

    def _index(self, index):
        if not is_tensor(index) and index < 0:
            from autograph.runtime.ir import primitives
            return primitives.convert(np.int64(index)) + self.size()
        return index

    def appended(self, value):
        index = self.length if self.length is not None else self.size()
        leaves = self._leaves(value, "appended")
        return self._with([a.write(index, v) for a, v in zip(self.arrays, leaves)], 1)

    def popped(self, index=None):
        """(the list after `pop(index)`, the element popped)."""
        from autograph.runtime import list_edits
        popped = [list_edits.pop(a, index) for a in self.arrays]
        return (self._with([p[1] for p in popped], -1),
                build(self.spec, iter([p[0] for p in popped])))

    def inserted(self, index, value):
        from autograph.runtime import list_edits
        leaves = self._leaves(value, "inserted")
        return self._with([list_edits.insert(a, index, v)
                           for a, v in zip(self.arrays, leaves)], 1)

    def assigned(self, index, value, op=None):
        """The list after `l[index] = value` (or `l[index] op= value`)."""
        if isinstance(index, slice) or (is_tensor(index) and index.shape != ()):
            raise errors.StagingError(
                f"Cannot assign to a slice of a list{_where()} that a loop or `if` the graph "
                f"runs changes: assign its elements one at a time.")
        if op is not None:
            from autograph.operators.updates import _BINARY
            value = _BINARY[op](self[index], value)
        index = self._index(index)
        leaves = self._leaves(value, "assigned")
        return self._with([a.write(index, v) for a, v in zip(self.arrays, leaves)], 0)

    def size(self):
        return self.arrays[0].size()

    def nonempty(self, what):
        """The TensorArrays, checked when the graph runs to hold an element: NumPy refuses
        to stack or concatenate an empty list (ValueError)."""
        from autograph.runtime import list_edits
        message = f"need at least one array to {what}{_where(' (np.' + what + ' at ')}"
        message += ")" if "(" in message else ""
        return [list_edits.nonempty(a, message) for a in self.arrays]

    def stacked(self, check=True):
        """np.stack(l): the elements stacked (a list of tuples: the fields on axis 1);
        `check`: raise, as NumPy does, when the list is empty (np.array(l) does not)."""
        arrays = self.nonempty("stack") if check else self.arrays
        if self.spec is None:
            return arrays[0].stack()
        if issubclass(self.spec[0], dict) or any(s is not None for s in self.spec[2]):
            raise errors.StagingError(
                f"Cannot stack a list of {describe(self.spec)}{_where()} (NumPy makes no array "
                f"of it either): stack each field ([e[k] for e in l]).")
        return np.stack([a.stack() for a in arrays], axis=1)

    def __add__(self, other):
        """`l + [v, w]` (and `l += [v, w]`): the list with those elements appended."""
        if not isinstance(other, (list, tuple)):
            return NotImplemented
        out = self
        for v in other:
            out = out.appended(v)
        return out

    def __radd__(self, other):
        """`[v, w] + l`: the list with those elements inserted first."""
        if not isinstance(other, (list, tuple)):
            return NotImplemented
        out = self
        for v in reversed(other):
            out = out.inserted(0, v)
        return out

    def iterable(self, what, scalars=False):
        """The elements stacked, for `enumerate(l)`, `zip(l, ...)` (`scalars`: for `max(l)`,
        `min(l)`, which compare elements, as Python does, only when each is one number)."""
        shape = self.arrays[0].element_shape if self.spec is None else None
        if self.spec is not None or (scalars and shape != ()):
            raise errors.StagingError(
                f"{what}() of a list that a loop or `if` the graph runs changed{_where()}, "
                f"whose elements are {describe(self.spec) if self.spec is not None else 'arrays'}"
                f": supported for lists of arrays{' of shape ()' if scalars else ''} only. "
                f"Loop over it (`for e in l:`) or stack it (np.stack(l)).")
        return self.stacked(check=False)

    def loop_over(self, body):
        """(iterable, body) for `for v in l`: a list of arrays is iterated as its stacked
        elements (one array along its first axis), any other as a range over its indices
        whose body reads element i."""
        if self.spec is None:
            return self.arrays[0].stack(), body
        from autograph.operators.py_builtins import range_
        return range_(self.size()), lambda i, *state: body(self[i], *state)

    def __len__(self):
        raise TypeError(
            "len() of a list that a loop the graph runs changed is a tensor: it is "
            "known only when the graph runs (converted code's len(l) gives it)")

    def __bool__(self):
        raise errors.StagingError(
            "The truth of a list that a loop the graph runs appended to is known only when "
            "the graph runs: write `len(l) > 0` (an `if l:` or `... if l else ...` works).")

    def __getitem__(self, index):
        if isinstance(index, slice):   # a new list: the elements at those indices
            from autograph.runtime.numpy.array_ops import arange
            picked = arange(self.size())[index]
            return TensorList([_empty(a.dtype, a.element_shape).unstack(a.gather(picked))
                               for a in self.arrays], self.spec, None)
        index = self._index(index)
        return build(self.spec, iter([a.read(index) for a in self.arrays]))

    def __delitem__(self, index):
        raise errors.StagingError(
            f"`del l[i]` on a list that a loop or `if` the graph runs changes{_where()}: write "
            f"`l.pop(i)` instead.")

    def __iter__(self):
        raise errors.StagingError(
            f"Cannot iterate{_where()} over a list that a loop or `if` the graph runs changed "
            f"with Python (sum(l), list(l), sorted(l), a comprehension, unpacking): its length "
            f"is known only when the graph runs. A `for` loop over it, enumerate(l), zip(l, "
            f"...), min(l) and max(l) work in the graph; else stack it (np.sum(np.stack(l), "
            f"axis=0)).")

    def __getattr__(self, name):
        if name in ("append", "extend", "pop", "insert", "remove", "clear", "sort",
                    "reverse", "index", "count", "copy"):
            raise errors.StagingError(
                f"Cannot call .{name}() on a list that a loop or `if` the graph runs "
                f"changes{_where()}: there a list of tensors changes only by `l.append(v)`, "
                f"`l.extend(vs)`, `l.insert(i, v)`, `l.pop(i)` (a statement of its own, or a "
                f"pop that its statement always evaluates) and `l[i] = v`, on a name the "
                f"function binds. Do the rest after the loop, on the list it gives back, or "
                f"keep the values in an array.")
        raise AttributeError(name)

    def __ag_flatten__(self):
        return [leaf for a in self.arrays for leaf in a.__ag_flatten__()]

    def __ag_unflatten__(self, leaves):
        from autograph.runtime.tensor_array import _Storage
        if leaves and isinstance(leaves[0], _Storage):   # a graph's result: the Python list
            fields = [list(s.items) for s in leaves]
            return [build(self.spec, iter([f[k] for f in fields]))
                    for k in range(len(fields[0]))]
        return TensorList([a.__ag_unflatten__([h]) for a, h in zip(self.arrays, leaves)],
                          self.spec, None)

    def __repr__(self):
        return f"<TensorList of {describe(self.spec)}, {len(self.arrays)} field(s)>"


def _empty(dtype, element_shape=None):
    from autograph.runtime.tensor_array import TensorArray
    return TensorArray(dtype, size=0, dynamic_size=True, element_shape=element_shape)


def _checked(value, dtype, what="appended"):
    """`value`, refused unless of the list's dtype: NumPy would promote the stacked list
    to another dtype, which a loop variable cannot change to."""
    if not array_like(value):
        raise errors.StagingError(
            f"{value!r} is {what}{_where()} to a list in a loop or `if` the graph runs: such a "
            f"list holds arrays or numbers (or tuples or dicts of them).")
    if dtype_of(value) != dtype:
        raise errors.StagingError(
            f"A value of dtype {dtype_of(value).name} is {what}{_where()} to a list whose "
            f"elements are {dtype.name}, in a loop or `if` the graph runs: the list is a list "
            f"of tensors of one dtype (NumPy would promote the stacked list instead). Convert "
            f"the value first, e.g. with .astype(np.{dtype.name}), or start the list with "
            f"elements of the dtype it should hold.")
    return value if is_tensor(value) else np.asarray(value)
