"""The one shuffling routine: eager iteration and the traced loop both call it.

`Dataset.shuffle(buffer_size, seed)` has the buffered semantics users know from tf.data:
a buffer of `buffer_size` elements, each output drawn uniformly from the buffer and its slot
refilled from upstream. Which *position* comes out next depends only on the random draws and
the buffer's fill, never on the element values, so for an upstream of known length `n` the
whole epoch is a permutation of positions, `shuffle_order(n, buffer_size, seed, iteration,
epoch)`.

Eager iteration calls it directly; a traced loop stages the `data_shuffle_order` primitive,
whose kernel is this same function. Hence both orders are equal by construction.

Reshuffling (tf.data's `reshuffle_each_iteration`): every shuffle dataset owns an *iteration
counter*, named by an int64 handle that is one of the dataset's leaves. Each new iteration
over a dataset that contains it (`iter(ds)`, a `for` loop, one run of a traced loop) takes the
counter's next value `k`: eagerly in Python, in a graph through the effectful
`data_shuffle_iteration` node, so the k-th eager iteration and the k-th run of a traced loop
see the same order and a trace is reused across runs. Each pass `e` of an enclosing `repeat`
draws from its own stream `(seed, k, e)`: passes and iterations differ, reproducibly in every
process. Without reshuffling, k and e are always 0.
"""

import itertools
import threading
import weakref

import numpy as np

from autograph.runtime.ir import primitives

from autograph.data import buffered


class Draws:
    """The random stream of one epoch: uniform doubles from PCG64 seeded by (seed, iteration,
    epoch). `choose(k)` picks a slot in a buffer of k elements."""

    def __init__(self, seed, epoch, iteration=0):
        key = [int(seed) & (2**63 - 1), int(iteration), int(epoch)]
        self._rng = np.random.Generator(np.random.PCG64(key))

    def choose(self, k):
        return int(self._rng.random() * k)

    def block(self, n):
        return self._rng.random(n)


def shuffle_order(n, buffer_size, seed, epoch, iteration=0):
    """The positions 0..n-1 in the order a buffered shuffle emits them (int64 array):
    the draws `Draws.choose` would make one by one, turned into the order by the vectorized
    equivalent of the buffer loop (autograph.data.buffered)."""
    n, buffer_size = int(n), max(int(buffer_size), 1)
    return buffered.permutation(Draws(seed, epoch, iteration).block(n), buffer_size)


def _order_infer(n, seed, epoch, iteration=None, *, buffer_size):
    return [(np.dtype(np.int64), (None,), False)]


def _order_kernel(xp, n, seed, epoch, iteration=0, *, buffer_size):
    host = lambda v: int(np.asarray(v))   # noqa: E731 (tiny host reads of scalars)
    return xp.asarray(shuffle_order(host(n), buffer_size, host(seed), host(epoch),
                                    host(iteration)))


primitives.register("data_shuffle_order", _order_infer, kernel=_order_kernel,
                    doc="the permutation of one epoch of Dataset.shuffle", nondiff=False)
primitives.nondifferentiable("data_shuffle_order")


def order(n, buffer_size, seed, epoch, iteration=0):
    """shuffle_order eagerly on NumPy values, or its node while tracing."""
    from autograph.runtime.ir.tensor import Tensor
    if any(isinstance(v, Tensor) for v in (n, seed, epoch, iteration)):
        conv = lambda v: primitives.convert(np.int64(v) if not isinstance(v, Tensor) else v)  # noqa: E731
        return primitives.bind1("data_shuffle_order",
                                [conv(n), conv(seed), conv(epoch), conv(iteration)],
                                {"buffer_size": int(buffer_size)})
    return shuffle_order(n, buffer_size, seed, epoch, iteration)


# -- iteration counters ---------------------------------------------------------------------

class Counter:
    """How many iterations over a shuffle dataset have begun (held by the Dataset)."""

    def __init__(self):
        self.next = 0
        self._lock = threading.Lock()

    def take(self):
        with self._lock:   # functions may run in several threads
            k, self.next = self.next, self.next + 1
        return k


_COUNTERS = weakref.WeakValueDictionary()   # handle -> Counter of a live Dataset
_ORPHANS = {}                               # handles no live Dataset names (a loaded graph)
_ids = itertools.count(1)


def new_counter():
    """(handle, counter): the handle (int64) names the counter to the graph node."""
    counter, handle = Counter(), next(_ids)
    _COUNTERS[handle] = counter
    return np.int64(handle), counter


def next_iteration(handle):
    """Take the next iteration number of the counter `handle` names (eagerly)."""
    h = int(np.asarray(handle))
    counter = _COUNTERS.get(h)
    if counter is None:   # e.g. a graph loaded in another process: count from 0 here
        counter = _ORPHANS.setdefault(h, Counter())
    return np.int64(counter.take())


def iteration(handle):
    """next_iteration eagerly, or the effectful node that takes it each time the graph runs."""
    from autograph.runtime.ir.tensor import Tensor
    from autograph.runtime.ir.graph import get_default_graph
    if isinstance(handle, Tensor) or get_default_graph() is not None:
        h = handle if isinstance(handle, Tensor) else primitives.constant(
            np.int64(handle), dtype=np.int64)
        return primitives.bind1("data_shuffle_iteration", [h], node_name="ShuffleIteration")
    return next_iteration(handle)


def _iteration_infer(handle):
    return [(np.dtype(np.int64), (), False)]


def _iteration_kernel(xp, handle):
    return xp.asarray(next_iteration(handle))


primitives.register("data_shuffle_iteration", _iteration_infer, kernel=_iteration_kernel,
                    effectful=True, nondiff=False,
                    doc="the next iteration number of a shuffle dataset (reshuffling)")
primitives.nondifferentiable("data_shuffle_iteration")

