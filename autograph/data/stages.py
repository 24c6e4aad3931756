"""The pipeline as a state machine that runs the same way eagerly and inside a trace.

Each dataset transformation becomes a *stage* with five methods over a position `ps` (a
tuple of arrays: NumPy ones when iterating eagerly, symbolic tensors inside a traced loop):

    init(epoch) -> ps        the position before the first element of pass `epoch`
    seek(ps)    -> ps        move forward to the next element, if any (filter skips here)
    valid(ps)   -> bool      whether `ps` (after seek) holds an element
    elem(ps)    -> element   that element (called only when valid)
    advance(ps) -> ps        past that element (the caller seeks again)

Eager iteration is `ps = seek(init(0)); while valid(ps): yield elem(ps); ps = seek(advance(ps))`
and a traced `for` loop is exactly that loop as one while_loop node. Both run this module's
code, on NumPy or on tensors (NumPy calls dispatch to the graph), which is why traced and eager
iteration agree. Sources that can be indexed (from_tensor_slices, range, from_tensors, and
map/shuffle/batch/take/skip/shard of them) are `Indexed`: their position is a cursor, and
batch gathers a whole batch with one fancy index. The other stages (filter, repeat, and
what follows them) are streams, in autograph.data.streams.
"""

import numpy as np

from autograph.runtime import control_flow as cf
from autograph.runtime.ir import nest
from autograph.runtime.ir.tensor import Tensor

from autograph.data import shuffle as shuffling


def _len0(x):
    if isinstance(x, Tensor):
        from autograph.operators.py_builtins import first_dim
        n = first_dim(x)
        return np.int64(n) if isinstance(n, int) else n
    return np.int64(np.shape(x)[0])


def _int(v):
    """An int64 starting value of a position: a tensor while tracing, so that loops over
    positions are staged from their first iteration (a Python first iteration would fold
    index ranges into constants)."""
    from autograph.runtime.ir.graph import get_default_graph
    if get_default_graph() is not None:
        from autograph.runtime.ir import primitives
        return primitives.constant(np.int64(v), dtype=np.int64)
    return np.int64(v)


def _zeros(shape, dtype):
    """Zeros: a broadcast scalar while tracing (no constant of the buffer's size)."""
    from autograph.runtime.ir.graph import get_default_graph
    if get_default_graph() is not None:
        from autograph.runtime.ir import primitives
        return np.broadcast_to(primitives.constant(np.zeros((), dtype)), shape)
    return np.zeros(shape, dtype)


def _bool(v):
    """A bool starting value of a position (a tensor while tracing, as _int)."""
    from autograph.runtime.ir.graph import get_default_graph
    if get_default_graph() is not None:
        from autograph.runtime.ir import primitives
        return primitives.constant(np.bool_(v), dtype=np.bool_)
    return np.bool_(v)


def _and(a, b):
    if isinstance(a, (bool, np.bool_)) and isinstance(b, (bool, np.bool_)):
        return bool(a) and bool(b)
    return np.logical_and(a, b)


def call(fn, elem):
    """A user function on an element: a plain tuple is unpacked into arguments, a namedtuple
    (like any other structure) is one argument (tf.data's rule)."""
    return fn(*elem) if type(elem) is tuple else fn(elem)


def _arange(lo, hi):
    if isinstance(lo, Tensor) or isinstance(hi, Tensor):
        from autograph.runtime.ops import range_
        return range_(lo, hi)
    return np.arange(lo, hi)


def _setrow(buf, i, x):
    if isinstance(buf, Tensor) or isinstance(x, Tensor) or isinstance(i, Tensor):
        from autograph.runtime.numpy import updates
        return updates.setitem(buf, i, x)
    buf = buf.copy()
    buf[i] = x
    return buf


class Stage:
    def init(self, epoch):
        raise NotImplementedError

    def seek(self, ps):
        return ps

    def valid(self, ps):
        raise NotImplementedError

    def elem(self, ps):
        raise NotImplementedError

    def advance(self, ps):
        raise NotImplementedError


class Indexed(Stage):
    """A stage whose elements are addressable: ps = (cursor, *istate)."""

    gatherable = False

    def istate(self, epoch):
        return ()

    def length(self, ist):
        raise NotImplementedError

    def at(self, ist, i):
        raise NotImplementedError

    def gather(self, ist, idx):
        raise NotImplementedError

    def init(self, epoch):
        return (_int(0),) + tuple(self.istate(epoch))

    def valid(self, ps):
        return ps[0] < self.length(ps[1:])

    def elem(self, ps):
        return self.at(ps[1:], ps[0])

    def advance(self, ps):
        return (ps[0] + 1,) + tuple(ps[1:])


# -- sources ---------------------------------------------------------------------------------

class Slices(Indexed):
    gatherable = sliceable = True   # gather(ist, idx) takes index arrays and slices

    def __init__(self, structure, leaves):
        self.structure, self.leaves = structure, list(leaves)

    def length(self, ist):
        return _len0(self.leaves[0])

    def at(self, ist, i):
        return nest.pack_sequence_as(self.structure, [a[i] for a in self.leaves])

    def gather(self, ist, idx):
        return nest.pack_sequence_as(self.structure, [a[idx] for a in self.leaves])


class Range(Indexed):
    gatherable = True

    def __init__(self, start, stop, step, dtype=np.dtype(np.int64)):
        self.start, self.stop, self.step, self.dtype = start, stop, step, np.dtype(dtype)
        self.n = np.int64(len(range(start, stop, step)))

    def length(self, ist):
        return self.n

    def at(self, ist, i):
        x = np.int64(self.start) + i * np.int64(self.step)
        return x if self.dtype == np.int64 else x.astype(self.dtype)

    gather = at


class Tensors(Indexed):
    def __init__(self, value):
        self.value = value

    def length(self, ist):
        return np.int64(1)

    def at(self, ist, i):
        return self.value


# -- transformations of indexed stages -----------------------------------------------------------

class MapI(Indexed):
    """fn on each element. With a `batched` plan (autograph.data.batching: fn is proven
    row-independent) it can also gather: fn once on the upstream's gathered rows."""

    def __init__(self, up, fn, batched=None):
        self.up, self.fn, self.batched = up, fn, batched
        if batched is not None:
            self.gatherable = up.gatherable
            self.sliceable = getattr(up, "sliceable", False)

    def istate(self, epoch):
        return self.up.istate(epoch)

    def length(self, ist):
        return self.up.length(ist)

    def at(self, ist, i):
        return call(self.fn, self.up.at(ist, i))

    def gather(self, ist, idx):
        return self.batched.apply(self.up.gather(ist, idx))


class ShuffleI(Indexed):
    """The permutation of the whole epoch lives in the position: one node per epoch.
    `iteration` is this iteration's number (autograph.data.shuffle's counter)."""

    def __init__(self, up, buffer_size, seed, reshuffle, iteration):
        self.up, self.buffer_size, self.seed, self.reshuffle = up, buffer_size, seed, reshuffle
        self.iteration = iteration
        self.gatherable = self.sliceable = up.gatherable

    def istate(self, epoch):
        ist = tuple(self.up.istate(epoch))
        perm = shuffling.order(self.up.length(ist), self.buffer_size, self.seed,
                               epoch if self.reshuffle else 0, self.iteration)
        return ist + (perm,)

    def length(self, ist):
        return self.up.length(ist[:-1])

    def at(self, ist, i):
        return self.up.at(ist[:-1], ist[-1][i])

    def gather(self, ist, idx):
        return self.up.gather(ist[:-1], ist[-1][idx])


class _Reindex(Indexed):
    def __init__(self, up):
        self.up, self.gatherable = up, up.gatherable

    def istate(self, epoch):
        return self.up.istate(epoch)

    def at(self, ist, i):
        return self.up.at(ist, self.source(ist, i))

    def gather(self, ist, idx):
        return self.up.gather(ist, self.source(ist, idx))


class TakeI(_Reindex):
    def __init__(self, up, count):
        super().__init__(up)
        self.count = count
        self.sliceable = getattr(up, "sliceable", False)

    def length(self, ist):
        n = self.up.length(ist)
        return n if self.count < 0 else np.minimum(n, np.int64(self.count))

    def source(self, ist, i):
        return i


class SkipI(_Reindex):
    def __init__(self, up, count):
        super().__init__(up)
        self.count = count

    def length(self, ist):
        return np.maximum(self.up.length(ist) - np.int64(self.count), np.int64(0))

    def source(self, ist, i):
        return i + np.int64(self.count)


class ShardI(_Reindex):
    def __init__(self, up, num, index):
        super().__init__(up)
        self.num, self.index = num, index

    def length(self, ist):
        # ceil(n / num) for n > 0 and 0 below, written so that no sum overflows int64
        n = self.up.length(ist) - np.int64(self.index)
        return np.maximum((n - 1) // np.int64(self.num) + 1, np.int64(0))

    def source(self, ist, i):
        return i * np.int64(self.num) + np.int64(self.index)


class BatchI(Indexed):
    """Batch k is rows [k*b, min(k*b+b, n)) of the upstream: one gather when the upstream
    can gather, else the rows one by one (eagerly a list; in a graph an inner loop that
    fills a buffer of `rows` = min(b, upstream length) rows)."""

    def __init__(self, up, size, drop, rows=None):
        self.up, self.size, self.drop = up, size, drop
        self.rows = size if rows is None else rows

    def istate(self, epoch):
        return self.up.istate(epoch)

    def length(self, ist):
        # (n - 1) // b + 1 is ceil(n / b) for n >= 0 without the overflow of n + b - 1
        n, b = self.up.length(ist), np.int64(self.size)
        return n // b if self.drop else (n - 1) // b + 1

    def at(self, ist, k):
        return _static_batch(self._at(ist, k), self.size if self.drop else None)

    def _at(self, ist, k):
        b = np.int64(self.size)
        lo = k * b
        hi = np.minimum(lo + b, self.up.length(ist))
        if getattr(self.up, "sliceable", False):   # a view of rows, no index array
            return self.up.gather(ist, slice(lo, hi))
        if self.up.gatherable:
            return self.up.gather(ist, _arange(lo, hi))
        first = self.up.at(ist, lo)
        if not isinstance(k, Tensor):
            rows = [first] + [self.up.at(ist, i) for i in range(int(lo) + 1, int(hi))]
            return _stack_rows(rows)
        bufs = [_buffer(x, self.rows) for x in nest.flatten(first)]

        def body(j, *bufs):
            row = nest.flatten(self.up.at(ist, lo + j))
            return (j + 1,) + tuple(_setrow(buf, j, x) for buf, x in zip(bufs, row))
        out = cf.while_loop(lambda j, *_: j < hi - lo, body, (np.int64(1),) + tuple(bufs))
        return nest.pack_sequence_as(first, [buf[:hi - lo] for buf in out[1:]])


def _shape_mismatch(first, k, shape):
    return (f"batch() cannot stack elements of different shapes: the batch's first element "
            f"has shape {tuple(first)} and element {k} has shape {tuple(shape)}")


def _stack_rows(rows):
    """Eager rows (nests of arrays) stacked into one batch, component by component."""
    flat = [nest.flatten(r) for r in rows]
    out = []
    for parts in zip(*flat):
        parts = [np.asarray(x) for x in parts]
        for k, x in enumerate(parts[1:], 1):
            if x.shape != parts[0].shape:
                raise ValueError(_shape_mismatch(parts[0].shape, k, x.shape))
        out.append(np.stack(parts))
    return nest.pack_sequence_as(rows[0], out)


def _buffer(x, rows):
    """A graph buffer of `rows` rows like x: broadcast zeros when x's shape is known."""
    shape = getattr(x, "shape", None)
    if shape is not None and all(d is not None for d in shape):
        return _setrow(_zeros((rows,) + tuple(shape), x.dtype), 0, x)
    return np.stack([x] * rows)


def _static_batch(batch, n):
    """A dropped-remainder batch in a graph: pin its first axis to n (as element_spec says)."""
    if n is None:
        return batch

    def pin(t):
        if isinstance(t, Tensor) and t.shape is not None and len(t.shape) > 0 and \
                t.shape[0] != n and all(d is not None for d in t.shape[1:]):
            return np.reshape(t, (n,) + tuple(t.shape[1:]))
        return t
    return nest.map_structure(pin, batch)
