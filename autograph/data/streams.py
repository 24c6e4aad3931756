"""Stream stages: positions that carry more than a cursor (autograph.data.stages).

After a filter or a repeat an element has no index: the position is the upstream's plus the
stage's own state (a pass number, a count of elements passed, batch buffers), and finding the
next element is an inner loop. The loops are ag.while_loop / ag.cond, which run as plain
Python on NumPy values and become nodes while tracing, so eager and traced iteration run
this same code.
"""

import numpy as np

from autograph.runtime import control_flow as cf
from autograph.runtime.ir import nest
from autograph.runtime.ir.tensor import Tensor

from autograph.data.stages import (Stage, _and, _bool, _int, _setrow, _shape_mismatch,
                                   _static_batch, _zeros, call)


class Wrap(Stage):
    """A stage over an upstream stage with ps = (upstream ps, *own)."""

    def __init__(self, up):
        self.up = up

    def valid(self, ps):
        return self.up.valid(ps[0])

    def elem(self, ps):
        return self.up.elem(ps[0])


class MapS(Wrap):
    def __init__(self, up, fn):
        super().__init__(up)
        self.fn = fn

    def init(self, epoch):
        return (self.up.init(epoch),)

    def seek(self, ps):
        return (self.up.seek(ps[0]),)

    def elem(self, ps):
        return call(self.fn, self.up.elem(ps[0]))

    def advance(self, ps):
        return (self.up.advance(ps[0]),)


class Filter(MapS):
    """seek: an inner loop that moves on while the predicate is false."""

    def elem(self, ps):
        return self.up.elem(ps[0])

    def seek(self, ps):
        up = self.up

        def test(p, found):
            return _and(up.valid(p), np.logical_not(found))

        def body(p, found):
            keep = _truth(call(self.fn, up.elem(p)))
            nxt = cf.cond(keep, lambda: p, lambda: up.seek(up.advance(p)))
            return nxt, keep
        p, _ = cf.while_loop(test, body, (up.seek(ps[0]), np.bool_(False)))
        return (p,)


def _truth(x):
    if isinstance(x, Tensor):
        return x if x.dtype == np.bool_ else x != 0
    return np.bool_(bool(np.asarray(x)))


class Enumerate(Wrap):
    def __init__(self, up, start):
        super().__init__(up)
        self.start = start

    def init(self, epoch):
        return (self.up.init(epoch), _int(self.start))

    def seek(self, ps):
        return (self.up.seek(ps[0]), ps[1])

    def elem(self, ps):
        return (ps[1], self.up.elem(ps[0]))

    def advance(self, ps):
        return (self.up.advance(ps[0]), ps[1] + 1)


class Repeat(Wrap):
    """ps = (upstream ps, pass number, first epoch number of this repeat, whether this pass
    has yielded an element). `count` None repeats forever, until a pass yields nothing
    (tf.data's rule: `range(0).repeat()` is empty, it does not spin)."""

    def __init__(self, up, count):
        super().__init__(up)
        self.count = count

    def init(self, epoch):
        base = epoch * np.int64(self.count or 1)
        return (self.up.init(base), _int(0), base, _bool(False))

    def seek(self, ps):
        up, (p, e, base, got) = self.up, ps

        def test(p, e, got):
            more = got if self.count is None else e + 1 < np.int64(self.count)
            return _and(np.logical_not(up.valid(p)), more)

        def body(p, e, got):
            return up.seek(up.init(base + e + 1)), e + 1, np.bool_(False)
        p, e, got = cf.while_loop(test, body, (up.seek(p), e, got))
        return (p, e, base, got)

    def advance(self, ps):
        return (self.up.advance(ps[0]), ps[1], ps[2], np.bool_(True))


class Counted(Wrap):
    """take/skip/shard of a stream: ps = (upstream ps, elements of the upstream passed)."""

    def __init__(self, up, kind, a, b=0):
        super().__init__(up)
        self.kind, self.a, self.b = kind, a, b

    def init(self, epoch):
        return (self.up.init(epoch), _int(0))

    def _skipping(self, c):
        if self.kind == "skip":
            return c < np.int64(self.a)
        if self.kind == "shard":
            return c % np.int64(self.a) != np.int64(self.b)
        return False

    def seek(self, ps):
        up = self.up
        if self.kind == "take":   # the input is not read once `count` elements are taken
            if self.a < 0:
                return (up.seek(ps[0]), ps[1])
            return (cf.cond(ps[1] < np.int64(self.a), lambda: up.seek(ps[0]), lambda: ps[0]),
                    ps[1])

        def test(p, c):
            return _and(up.valid(p), self._skipping(c))
        p, c = cf.while_loop(test, lambda p, c: (up.seek(up.advance(p)), c + 1),
                             (up.seek(ps[0]), ps[1]))
        return (p, c)

    def valid(self, ps):
        if self.kind == "take" and self.a >= 0:
            return _and(ps[1] < np.int64(self.a), self.up.valid(ps[0]))
        return self.up.valid(ps[0])

    def advance(self, ps):
        return (self.up.advance(ps[0]), ps[1] + 1)


class BatchS(Wrap):
    """batch of a stream: ps = (upstream ps, row count, buffers); seek fills the buffers.
    Eagerly a buffer takes its shape from a batch's first row and grows by doubling, so a
    huge batch_size allocates only the rows it gets; in a graph the buffers have `rows`
    rows (batch_size, or the upstream's length when that is smaller) and the spec's shape,
    which must be known."""

    def __init__(self, up, size, drop, spec, rows=None):
        super().__init__(up)
        self.size, self.drop, self.spec = size, drop, spec
        self.rows = size if rows is None else rows

    def init(self, epoch):
        from autograph.runtime.ir.graph import get_default_graph
        specs = nest.flatten(self.spec)
        if get_default_graph() is None:   # allocated by each batch's first row
            bufs = [np.zeros((0,), s.dtype) for s in specs]
        else:
            bufs = []
            for s in specs:
                if s.shape is None or any(d is None for d in s.shape):
                    from autograph import errors
                    raise errors.StagingError(
                        f"batch() after filter()/repeat() in a graph needs elements of a known "
                        f"shape, but one is {s}. Batch before filtering, or give "
                        f"from_generator a full signature.")
                bufs.append(_zeros((self.rows,) + tuple(s.shape), s.dtype))
        return (self.up.init(epoch), _int(0)) + tuple(bufs)

    def seek(self, ps):
        up, b = self.up, np.int64(self.size)
        from autograph.runtime.ir.graph import get_default_graph
        put = self._put if get_default_graph() is None else _setrow

        def test(p, c, *bufs):
            return _and(up.valid(p), c < b)

        def body(p, c, *bufs):
            row = nest.flatten(up.elem(p))
            bufs = tuple(put(buf, c, x) for buf, x in zip(bufs, row))
            return (up.seek(up.advance(p)), c + 1) + bufs
        return tuple(cf.while_loop(test, body, (up.seek(ps[0]),) + tuple(ps[1:])))

    def _put(self, buf, c, x):
        """Row c of an eager buffer (in place: a batch's buffer is new at its first row)."""
        x, c = np.asarray(x), int(c)
        if c == 0:
            buf = np.empty((min(self.size, 16),) + x.shape, buf.dtype)
        elif x.shape != buf.shape[1:]:
            raise ValueError(_shape_mismatch(buf.shape[1:], c, x.shape))
        elif c == buf.shape[0]:
            grown = np.empty((min(self.size, 2 * c),) + x.shape, buf.dtype)
            grown[:c] = buf
            buf = grown
        buf[c] = x
        return buf

    def valid(self, ps):
        return ps[1] == np.int64(self.size) if self.drop else ps[1] > np.int64(0)

    def elem(self, ps):
        rows = [buf[:ps[1]] for buf in ps[2:]]
        return _static_batch(nest.pack_sequence_as(self.spec, rows),
                             self.size if self.drop else None)

    def advance(self, ps):
        return (ps[0], np.int64(0)) + tuple(ps[2:])
