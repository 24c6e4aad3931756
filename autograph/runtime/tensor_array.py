"""TensorArray: a list of arrays that a graph can grow, one element per loop iteration.

Appending to a Python list inside a traced loop happens while tracing only; a TensorArray
is the graph's own list. The style is functional: `ta = ta.write(i, value)`.

Eagerly (no graph being built) it is a Python list of NumPy arrays. While tracing it is a
*handle* tensor (dtype object) flowing through the graph: `ta_new` makes the run-time list,
`ta_write` stores into it in place (an effectful node, so writes keep their order and are
never dropped; cost is linear in the number of writes) and returns the same list as a new
handle, so that reads and `stack` depend on the writes before them. Through the nest
protocol (`__ag_flatten__`) a TensorArray is a valid loop variable and branch output.
"""

import numpy as np

from autograph.errors import StagingError
from autograph.runtime.ir import primitives
from autograph.runtime.control_flow import join_shapes   # (also registers Cast)
from autograph.runtime.ir.graph import get_default_graph
from autograph.runtime.ir.tensor import Tensor

_HANDLE = np.dtype(object)
_INT = np.dtype(np.int64)


class _Storage:
    """The run-time value of a handle: the elements, and whether the array may grow.

    A fixed-size array puts its elements into one preallocated device array at the first
    write (`buffer[i] = value`, as a hand-written loop fills its output), so `stack` returns
    that array without copying and the per-step values are not all kept alive. A growing
    array, one whose elements differ in shape or dtype, or one filled by `unstack`, keeps a
    Python list (`items`). `stack` shares the buffer with its result; a later write copies
    it first, so values stay immutable."""
    __slots__ = ("_items", "dynamic", "fresh", "buffer", "written", "shared", "ready",
                 "eshape", "edtype")

    def __init__(self, size, dynamic):
        self._items = [None] * size
        self.dynamic = dynamic
        self.fresh = True       # nothing stored yet: the first write may start buffer mode
        self.buffer = None      # the elements, stacked (buffer mode), or None (list mode)
        self.written = None     # buffer mode: bytearray, 1 where an element was written
        self.shared = False     # buffer mode: `stack` returned the buffer
        self.ready = False      # a NumPy buffer that writes may go straight into
        self.eshape = self.edtype = None   # buffer mode: the elements' shape and dtype

    def __repr__(self):
        return f"<TensorArray storage, {len(self)} elements>"

    def __len__(self):
        return len(self._items) if self.buffer is None else len(self.written)

    @property
    def items(self):
        """The elements as a list (None where never written); leaves buffer mode."""
        self.to_list()
        return self._items

    def to_list(self):
        self.fresh = self.ready = False
        buf = self.buffer
        if buf is not None:   # the old buffer is never written again: views of it are safe
            self._items = [buf[i, ...] if w else None for i, w in enumerate(self.written)]
            self.buffer = self.written = None

    def write(self, xp, i, value):
        buf = self.buffer
        if self.fresh:
            self.fresh = False
            if not self.dynamic and self._items:
                buf = self._allocate(xp, value)
        if buf is not None:
            if value.shape == buf.shape[1:] and value.dtype == buf.dtype:
                if self.shared:
                    buf = self.buffer = _copy(xp, buf)
                    self.shared = False
                    self.ready = xp is np
                buf[i, ...] = value   # (the array API wants every axis indexed)
                self.written[i] = 1
                return
            self.to_list()
        self._items[i] = value

    def _allocate(self, xp, value):
        shape = (len(self._items),) + tuple(value.shape)
        if xp is np:
            buf = np.empty(shape, dtype=value.dtype)
        else:
            device = getattr(value, "device", None)
            kw = {} if device is None else {"device": device}
            try:
                buf = xp.empty(shape, dtype=value.dtype, **kw)
            except (TypeError, ValueError, AttributeError):
                return None
        self.buffer, self.written, self.shared = buf, bytearray(len(self._items)), False
        self.ready, self.eshape, self.edtype = xp is np, buf.shape[1:], buf.dtype
        self._items = None
        return buf

    def read(self, xp, i):
        """Element i (a copy in buffer mode: a later write must not change it); None when
        never written."""
        buf = self.buffer
        if buf is None:
            return self._items[i]
        return _copy(xp, buf[i, ...]) if self.written[i] else None

    def missing(self):
        if self.buffer is None:
            return [i for i, v in enumerate(self._items) if v is None]
        return [i for i, w in enumerate(self.written) if not w] if 0 in self.written else []


def _copy(xp, array):
    return array.copy() if xp is np else xp.asarray(array, copy=True)


def _index(i, size, dynamic, grow):
    i = int(i)
    if i < 0 or i >= size and not (grow and dynamic):
        raise IndexError(
            f"TensorArray index {i} is out of range for its size {size}. Create it with a "
            "larger size, or with dynamic_size=True to let writes grow it.")
    return i


# -- kernels ---------------------------------------------------------------------------------

def _new_kernel(xp, size, *, dynamic_size, **_):
    return _Storage(int(size), dynamic_size)


def _write_kernel(xp, handle, index, value):
    # the per-step fast path of a loop filling a NumPy buffer (one element-sized copy)
    if handle.ready and value.shape == handle.eshape and value.dtype is handle.edtype \
            and index >= 0:
        try:
            handle.buffer[index] = value
        except IndexError:   # past the end: the general path says it in our words
            pass
        else:
            handle.written[index] = 1
            return handle
    size = len(handle)
    i = _index(index, size, handle.dynamic, grow=True)
    if i >= size:
        items = handle.items
        items.extend([None] * (i + 1 - size))
    handle.write(xp, i, value)
    return handle


def _read_kernel(xp, handle, index, **_):
    i = _index(index, len(handle), False, grow=False)
    value = handle.read(xp, i)
    if value is None:
        raise ValueError(f"TensorArray element {i} was read before it was written")
    return value


def _stack_kernel(xp, handle, *, dtype, element_shape, **_):
    n = len(handle)
    if not n:
        if element_shape is None or None in element_shape:
            raise ValueError("cannot stack an empty TensorArray whose element shape is "
                             "unknown; pass element_shape= when you create it")
        return xp.zeros((0,) + tuple(element_shape), dtype=dtype)
    missing = handle.missing()
    if missing:
        raise ValueError(f"TensorArray.stack(): element(s) {missing[:5]} of {n} were "
                         "never written")
    if handle.buffer is not None:
        handle.shared, handle.ready = True, False
        return handle.buffer
    return xp.stack(handle.items)


def _gather_kernel(xp, handle, indices, *, dtype, element_shape):
    picked = [_read_kernel(xp, handle, i) for i in xp.reshape(indices, (-1,))]
    if not picked:
        return xp.zeros((0,) + tuple(element_shape or ()), dtype=dtype)
    return xp.stack(picked)


def _concat_kernel(xp, handle, *, dtype, element_shape):
    missing = handle.missing()
    items = handle.items
    if missing:
        raise ValueError(f"TensorArray.concat(): element(s) {missing[:5]} of {len(items)} were "
                         "never written")
    if not items:
        return xp.zeros((0,) + tuple(element_shape or ())[1:], dtype=dtype)
    return xp.concat(items, axis=0)


def _size_kernel(xp, handle, *, dtype):
    return xp.asarray(len(handle), dtype=dtype)


def _unstack_kernel(xp, handle, value, **_):
    n = value.shape[0]
    items = handle.items
    if n > len(items) and not handle.dynamic and items:
        _index(n - 1, len(items), False, grow=True)
    items[:] = [value[i] for i in range(n)] + items[n:]
    return handle


def _handle_infer(*_, **__):
    return [(_HANDLE, (), False)]


def _read_infer(handle, index, *, dtype, element_shape):
    return [(dtype, element_shape, False)]


def _stack_infer(handle, *, dtype, element_shape, size):
    shape = None if element_shape is None else (size,) + tuple(element_shape)
    return [(dtype, shape, False)]


def _gather_infer(handle, indices, *, dtype, element_shape):
    n = None if indices.shape is None or len(indices.shape) != 1 else indices.shape[0]
    return [(dtype, None if element_shape is None else (n,) + tuple(element_shape), False)]


def _concat_infer(handle, *, dtype, element_shape):
    shape = None if not element_shape else (None,) + tuple(element_shape)[1:]
    return [(dtype, shape, False)]


def _size_infer(handle, *, dtype):
    return [(dtype, (), False)]


primitives.register("ta_new", _handle_infer, _new_kernel, effectful=True,
                    doc="a fresh TensorArray storage (a new one on every run)")
primitives.register("ta_write", _handle_infer, _write_kernel, effectful=True,
                    doc="stores element `index`; returns the handle")
primitives.register("ta_unstack", _handle_infer, _unstack_kernel, effectful=True,
                    doc="stores the rows of a tensor as the elements; returns the handle")
primitives.register("ta_read", _read_infer, _read_kernel, doc="element `index`")
primitives.register("ta_stack", _stack_infer, _stack_kernel, doc="all elements, stacked")
primitives.register("ta_size", _size_infer, _size_kernel, doc="number of elements")
primitives.register("ta_gather", _gather_infer, _gather_kernel,
                    doc="the elements at `indices`, stacked")
primitives.register("ta_concat", _concat_infer, _concat_kernel,
                    doc="all elements joined along their first axis")


# -- the user-facing object ------------------------------------------------------------------

def _join(known, new):
    """The element shape after storing an element of shape `new` (`known` None: none yet)."""
    return new if known is None else join_shapes(known, new)


class TensorArray:
    """A growable list of arrays of one dtype; eager (a list) or symbolic (a handle)."""

    def __init__(self, dtype, size=0, dynamic_size=False, clear_after_read=True,
                 element_shape=None, *, _handle=None, _items=None):
        self.dtype = np.dtype(dtype)
        self.dynamic_size = bool(dynamic_size)
        # reads do not clear elements here: values are immutable arrays, nothing to free
        self.clear_after_read = clear_after_read
        self.element_shape = None if element_shape is None else tuple(element_shape)
        self._static_size = None if isinstance(size, Tensor) or dynamic_size else int(size)
        self._handle = _handle
        self._items = _items
        if _handle is None and _items is None:
            if get_default_graph() is not None or isinstance(size, Tensor):
                size = primitives.convert(size)
                self._handle = primitives.bind1("ta_new", [size],
                                                {"dynamic_size": self.dynamic_size})
            else:
                self._items = [None] * int(size)

    @property
    def handle(self):
        """The symbolic handle tensor (None for an eager TensorArray)."""
        return self._handle

    def _like(self, handle=None, items=None, element_shape=None):
        ta = TensorArray.__new__(TensorArray)
        ta.dtype, ta.dynamic_size = self.dtype, self.dynamic_size
        ta.clear_after_read, ta._static_size = self.clear_after_read, self._static_size
        ta.element_shape = self.element_shape if element_shape is None else element_shape
        ta._handle, ta._items = handle, items
        return ta

    def _symbolic(self, *args):
        if self._handle is not None:
            return True
        if any(isinstance(a, Tensor) for a in args):
            raise StagingError(
                "This TensorArray was created outside the traced function (it holds concrete "
                "arrays), so it cannot take symbolic values. Create it inside the function.")
        return False

    # -- nest protocol: a TensorArray flattens to its handle --------------------------------

    def __ag_flatten__(self):
        return [] if self._handle is None else [self._handle]

    def __ag_unflatten__(self, leaves):
        if self._handle is None:
            return self
        if isinstance(leaves[0], _Storage):   # a graph's result: an eager TensorArray
            return self._like(items=list(leaves[0].items))
        return self._like(handle=leaves[0])

    # -- operations --------------------------------------------------------------------------

    def write(self, index, value):
        """Store `value` at `index`; returns the TensorArray to use from now on."""
        if not self._symbolic(index, value):
            weak = type(value) in (bool, int, float, complex)
            value = np.asarray(value)
            if value.dtype != self.dtype:
                self._check_dtype(value.dtype, weak)
                value = value.astype(self.dtype)
            i = _index(index, len(self._items), self.dynamic_size, grow=True)
            if i >= len(self._items):
                self._items.extend([None] * (i + 1 - len(self._items)))
            self._items[i] = value
            if self.element_shape is None:
                self.element_shape = value.shape
            return self
        value = primitives.convert(value)
        if value.dtype != self.dtype:
            self._check_dtype(value.dtype, value.weak)
            value = primitives.bind1("Cast", [value], {"dtype": self.dtype})
        self._check_static_index(index)
        index = primitives.convert(index)
        handle = primitives.bind1("ta_write", [self._handle, index, value])
        return self._like(handle=handle,
                          element_shape=_join(self.element_shape, value.shape))

    def _check_dtype(self, dtype, weak):
        if not weak and not np.can_cast(dtype, self.dtype, "same_kind"):
            raise StagingError(
                f"TensorArray of dtype {self.dtype.name} cannot store a value of dtype "
                f"{np.dtype(dtype).name}; convert it first with .astype(np.{self.dtype.name})")

    def _check_static_index(self, index):
        """A Python index past a fixed size is an error now, not when the graph runs."""
        if self._static_size is not None and not isinstance(index, Tensor):
            _index(index, self._static_size, False, grow=False)

    def read(self, index):
        """Element `index`."""
        if not self._symbolic(index):
            i = _index(index, len(self._items), False, grow=False)
            if self._items[i] is None:
                raise ValueError(f"TensorArray element {i} was read before it was written")
            return self._items[i]
        self._check_static_index(index)
        return primitives.bind1("ta_read", [self._handle, primitives.convert(index)],
                                {"dtype": self.dtype, "element_shape": self.element_shape})

    def stack(self):
        """All elements as one array (element 0 first)."""
        if not self._symbolic():
            if not self._items:
                return np.zeros((0,) + tuple(self.element_shape or ()), self.dtype)
            missing = [i for i, v in enumerate(self._items) if v is None]
            if missing:
                raise ValueError(f"TensorArray.stack(): element(s) {missing[:5]} of "
                                 f"{len(self._items)} were never written")
            return np.stack(self._items)
        return primitives.bind1("ta_stack", [self._handle],
                                {"dtype": self.dtype, "element_shape": self.element_shape,
                                 "size": self._static_size})

    def gather(self, indices):
        """The elements at `indices` (a 1-D sequence), stacked."""
        if not self._symbolic(indices):
            picked = [self.read(i) for i in np.reshape(indices, (-1,))]
            if not picked:
                return np.zeros((0,) + tuple(self.element_shape or ()), self.dtype)
            return np.stack(picked)
        indices = primitives.convert(indices)
        return primitives.bind1("ta_gather", [self._handle, indices],
                                {"dtype": self.dtype, "element_shape": self.element_shape})

    def concat(self):
        """All elements joined along their first axis (elements of rank >= 1)."""
        if not self._symbolic():
            missing = [i for i, v in enumerate(self._items) if v is None]
            if missing:
                raise ValueError(f"TensorArray.concat(): element(s) {missing[:5]} of "
                                 f"{len(self._items)} were never written")
            if not self._items:
                return np.zeros((0,) + tuple(self.element_shape or ())[1:], self.dtype)
            return np.concatenate(self._items)
        return primitives.bind1("ta_concat", [self._handle],
                                {"dtype": self.dtype, "element_shape": self.element_shape})

    def unstack(self, value):
        """Store the rows of `value` as the elements; returns the TensorArray."""
        if not self._symbolic(value):
            value = np.asarray(value, dtype=self.dtype)
            self._items = [value[i] for i in range(value.shape[0])]
            self.element_shape = value.shape[1:]
            return self
        value = primitives.convert(value)
        if value.dtype != self.dtype:
            value = primitives.bind1("Cast", [value], {"dtype": self.dtype})
        handle = primitives.bind1("ta_unstack", [self._handle, value])
        es = None if value.shape is None else value.shape[1:]
        return self._like(handle=handle, element_shape=_join(self.element_shape, es))

    def size(self):
        """The number of elements (a 0-d int64 array or tensor)."""
        if not self._symbolic():
            return np.asarray(len(self._items), dtype=_INT)
        return primitives.bind1("ta_size", [self._handle], {"dtype": _INT})

    def __repr__(self):
        if self._handle is None:
            return f"<TensorArray dtype={self.dtype.name} size={len(self._items)}>"
        return f"<TensorArray dtype={self.dtype.name} handle={self._handle.name}>"
