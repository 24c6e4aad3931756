"""Stages that combine datasets: `Dataset.zip` and `Dataset.concatenate`.

    zip          element k is the nest of every input's element k; it ends with the shortest
                 input (tf.data's rule). Indexed when every input is: one cursor, length the
                 minimum; else each input's position is carried and sought.
    concatenate  the first input's elements, then the second's. Indexed when both are: the
                 cursor picks a side with `cond`; else the position carries both sides and
                 the second is sought only once the first has ended.

The element spec of a concatenation is the most specific spec both sides fit (tf.data's
rule): the same structure and dtypes are required (TypeError), and a dimension on which
the sides differ becomes None.
"""

import numpy as np

from autograph.runtime import control_flow as cf
from autograph.runtime.ir import nest

from autograph.data.stages import Indexed, Stage, _and


class ZipI(Indexed):
    """ps = (cursor, istate of input 0, istate of input 1, ...)."""

    def __init__(self, ups, template):
        self.ups, self.template = list(ups), template
        self.gatherable = all(u.gatherable for u in self.ups)
        self.sliceable = all(getattr(u, "sliceable", False) for u in self.ups)

    def istate(self, epoch):
        return tuple(tuple(u.istate(epoch)) for u in self.ups)

    def length(self, ist):
        lengths = [u.length(s) for u, s in zip(self.ups, ist)]
        n = lengths[0]
        for m in lengths[1:]:
            n = np.minimum(n, m)
        return n

    def at(self, ist, i):
        return nest.pack_sequence_as(self.template, [u.at(s, i) for u, s in zip(self.ups, ist)])

    def gather(self, ist, idx):
        return nest.pack_sequence_as(self.template,
                                     [u.gather(s, idx) for u, s in zip(self.ups, ist)])


class ZipS(Stage):
    """ps = (position of input 0, position of input 1, ...)."""

    def __init__(self, ups, template):
        self.ups, self.template = list(ups), template

    def init(self, epoch):
        return tuple(u.init(epoch) for u in self.ups)

    def seek(self, ps):
        return tuple(u.seek(p) for u, p in zip(self.ups, ps))

    def valid(self, ps):
        ok = self.ups[0].valid(ps[0])
        for u, p in zip(self.ups[1:], ps[1:]):
            ok = _and(ok, u.valid(p))
        return ok

    def elem(self, ps):
        return nest.pack_sequence_as(self.template, [u.elem(p) for u, p in zip(self.ups, ps)])

    def advance(self, ps):
        return tuple(u.advance(p) for u, p in zip(self.ups, ps))


class ConcatI(Indexed):
    """ps = (cursor, istate of the first, istate of the second)."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def istate(self, epoch):
        return (tuple(self.a.istate(epoch)), tuple(self.b.istate(epoch)))

    def length(self, ist):
        return self.a.length(ist[0]) + self.b.length(ist[1])

    def at(self, ist, i):
        na = self.a.length(ist[0])
        return cf.cond(i < na, lambda: self.a.at(ist[0], i),
                       lambda: self.b.at(ist[1], i - na))


class ConcatS(Stage):
    """ps = (position of the first, position of the second); the second is sought only once
    the first has no element."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def init(self, epoch):
        return (self.a.init(epoch), self.b.init(epoch))

    def seek(self, ps):
        pa = self.a.seek(ps[0])
        return (pa, cf.cond(self.a.valid(pa), lambda: ps[1], lambda: self.b.seek(ps[1])))

    def valid(self, ps):
        return np.logical_or(self.a.valid(ps[0]), self.b.valid(ps[1]))

    def elem(self, ps):
        return cf.cond(self.a.valid(ps[0]), lambda: self.a.elem(ps[0]),
                       lambda: self.b.elem(ps[1]))

    def advance(self, ps):
        return cf.cond(self.a.valid(ps[0]), lambda: (self.a.advance(ps[0]), ps[1]),
                       lambda: (ps[0], self.b.advance(ps[1])))


def concatenated_spec(a, b):
    """The most specific spec that elements of spec `a` and of spec `b` both fit."""
    from autograph.function.trace_type import TensorSpec
    if nest.structure_of(a) != nest.structure_of(b):
        raise TypeError(f"concatenate: the datasets' elements have different structures: "
                        f"{a!r} and {b!r}")
    out = []
    for x, y in zip(nest.flatten(a), nest.flatten(b)):
        if np.dtype(x.dtype) != np.dtype(y.dtype):
            raise TypeError(f"concatenate: the datasets' elements have different dtypes: "
                            f"{a!r} and {b!r}")
        if x.shape is None or y.shape is None or len(x.shape) != len(y.shape):
            shape = None
        else:
            shape = tuple(d if d == e else None for d, e in zip(x.shape, y.shape))
        out.append(TensorSpec(shape, x.dtype))
    return nest.pack_sequence_as(a, out)
