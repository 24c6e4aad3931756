"""The one shuffling routine: eager iteration and the traced loop both call it.

`Dataset.shuffle(buffer_size, seed)` has the buffered semantics users know from tf.data:
a buffer of `buffer_size` elements, each output drawn uniformly from the buffer and its slot
refilled from upstream. Which *position* comes out next depends only on the random draws and
the buffer's fill, never on the element values, so for an upstream of known length `n` the
whole epoch is a permutation of positions, `shuffle_order(n, buffer_size, seed, epoch)`.

Eager iteration calls it directly; a traced loop stages the `data_shuffle_order` primitive,
whose kernel is this same function. Hence both orders are equal by construction. Each epoch
(each pass of an enclosing `repeat`) draws from its own stream, `(seed, epoch)`, so epochs
differ and are reproducible.
"""

import numpy as np

from autograph.runtime.ir import primitives


class Draws:
    """The random stream of one epoch: uniform doubles from PCG64 seeded by (seed, epoch).
    `choose(k)` picks a slot in a buffer of k elements."""

    def __init__(self, seed, epoch):
        self._rng = np.random.Generator(np.random.PCG64([int(seed) & (2**63 - 1), int(epoch)]))

    def choose(self, k):
        return int(self._rng.random() * k)

    def block(self, n):
        return self._rng.random(n)


def shuffle_order(n, buffer_size, seed, epoch):
    """The positions 0..n-1 in the order a buffered shuffle emits them (int64 array)."""
    n, buffer_size = int(n), max(int(buffer_size), 1)
    u = Draws(seed, epoch).block(n)     # the same doubles `choose` would draw one by one
    out = np.empty(n, dtype=np.int64)
    buf = list(range(min(buffer_size, n)))
    nxt = len(buf)
    for k in range(n):
        r = int(u[k] * len(buf))
        out[k] = buf[r]
        if nxt < n:
            buf[r] = nxt
            nxt += 1
        else:
            buf[r] = buf[-1]
            buf.pop()
    return out


def _order_infer(n, seed, epoch, *, buffer_size):
    return [(np.dtype(np.int64), (None,), False)]


def _order_kernel(xp, n, seed, epoch, *, buffer_size):
    host = lambda v: int(np.asarray(v))   # noqa: E731 (tiny host reads of scalars)
    return xp.asarray(shuffle_order(host(n), buffer_size, host(seed), host(epoch)))


primitives.register("data_shuffle_order", _order_infer, kernel=_order_kernel,
                    doc="the permutation of one epoch of Dataset.shuffle", nondiff=False)
primitives.nondifferentiable("data_shuffle_order")


def order(n, buffer_size, seed, epoch):
    """shuffle_order eagerly on NumPy values, or its node while tracing."""
    from autograph.runtime.ir.tensor import Tensor
    if any(isinstance(v, Tensor) for v in (n, seed, epoch)):
        conv = lambda v: primitives.convert(np.int64(v) if not isinstance(v, Tensor) else v)  # noqa: E731
        return primitives.bind1("data_shuffle_order", [conv(n), conv(seed), conv(epoch)],
                                {"buffer_size": int(buffer_size)})
    return shuffle_order(n, buffer_size, seed, epoch)

