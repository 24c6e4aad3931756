"""Stages that only run on the host, and the graph nodes that iterate a pipeline there.

A generator's position is a live Python iterator, a streaming shuffle's is a buffer and a
random stream, a prefetch's is a background thread: none of them is an array, so a pipeline
holding one is iterated by the host, eagerly, through the stages of autograph.data.stages.
Inside a traced loop it becomes three effectful nodes: `data_iter_open(handle)` makes an
iterator of the dataset the handle names, `data_iter_next(it)` yields `(has_value, *value)`,
and `data_iter_close(it)` (after the loop) releases it. The loop stays one while_loop node.
"""

import itertools
import queue
import threading
import weakref

import numpy as np

from autograph.runtime.ir import nest, primitives
from autograph.data import shuffle as shuffling
from autograph.data.stages import Stage


class _Box:
    """A mutable position (eager only): the stage's live state."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


class Generator(Stage):
    def __init__(self, fn, signature):
        self.fn, self.signature = fn, signature

    def init(self, epoch):
        return _Box(it=iter(self.fn()), pulled=False, has=False, value=None)

    def seek(self, box):
        if not box.pulled:
            try:
                value = next(box.it)
            except StopIteration:
                box.has, box.value = False, None
            else:
                # an element that does not conform raises here and is dropped: the next
                # seek reads the one after it (as tf.data does)
                box.value = conform(value, self.signature, self.fn)
                box.has = True
            box.pulled = True
        return box

    def valid(self, box):
        return box.has

    def elem(self, box):
        return box.value

    def advance(self, box):
        box.pulled = False
        return box


def conform(value, signature, fn):
    """What a generator yielded, as arrays of `signature` (tf.data's checks): the structure
    must match, each part must convert to its dtype and have a compatible shape; else a
    TypeError (structure, dtype) or ValueError (shape) naming the generator."""
    specs = nest.flatten(signature)
    try:
        parts = _flatten_up_to(signature, value)
    except (TypeError, ValueError):
        raise TypeError(f"{_name(fn)} yielded an element that does not match the expected "
                        f"structure {signature!r}: {value!r}") from None
    arrays = []
    for part, spec in zip(parts, specs):
        try:
            a = np.asarray(part, dtype=spec.dtype)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(f"{_name(fn)} yielded an element that cannot be converted to "
                            f"{np.dtype(spec.dtype).name}: {part!r}") from None
        if spec.shape is not None and (len(spec.shape) != a.ndim or any(
                d is not None and d != n for d, n in zip(spec.shape, a.shape))):
            raise ValueError(f"{_name(fn)} yielded an element of shape {a.shape} where an "
                             f"element of shape {spec.shape} was expected ({spec!r})")
        arrays.append(a)
    return nest.pack_sequence_as(signature, arrays)


def _flatten_up_to(signature, value):
    """The parts of `value` at the leaves (TensorSpecs) of `signature`."""
    if not nest.is_nested(signature):
        return [value]
    if isinstance(signature, dict):
        if not isinstance(value, dict) or set(value) != set(signature):
            raise TypeError("keys differ")
        return [p for k in nest._sorted_keys(signature) for p in _flatten_up_to(signature[k],
                                                                             value[k])]
    kids = nest.children(signature)
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__") or \
            len(value) != len(kids):
        raise TypeError("length differs")
    return [p for sk, v in zip(kids, list(value)) for p in _flatten_up_to(sk, v)]


def _name(fn):
    """`the generator gen (file.py:12)`: where the user's generator is defined."""
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    code = getattr(fn, "__code__", None)
    where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
    return f"from_generator: the generator {name}{where}"


class ShuffleStream(Stage):
    """The buffered shuffle of a stream, drawing as shuffle.shuffle_order does."""

    def __init__(self, up, buffer_size, seed, reshuffle, iteration=0):
        self.up, self.buffer_size, self.seed, self.reshuffle = up, buffer_size, seed, reshuffle
        self.iteration = int(iteration)

    def init(self, epoch):
        draws = shuffling.Draws(int(np.asarray(self.seed)), epoch if self.reshuffle else 0,
                                self.iteration)
        return _Box(up=self.up.init(epoch), buf=None, draws=draws, pulled=False, value=None)

    def _pull(self, box):
        box.up = self.up.seek(box.up)
        if not self.up.valid(box.up):
            return False, None
        value = self.up.elem(box.up)
        box.up = self.up.advance(box.up)
        return True, value

    def seek(self, box):
        if box.pulled:
            return box
        box.pulled = True
        if box.buf is None:
            box.buf = []
            while len(box.buf) < max(self.buffer_size, 1):
                ok, v = self._pull(box)
                if not ok:
                    break
                box.buf.append(v)
        if not box.buf:
            box.value = None
            return box
        r = box.draws.choose(len(box.buf))
        box.value = (box.buf[r],)
        ok, v = self._pull(box)
        if ok:
            box.buf[r] = v
        else:
            box.buf[r] = box.buf[-1]
            box.buf.pop()
        return box

    def valid(self, box):
        return box.value is not None

    def elem(self, box):
        return box.value[0]

    def advance(self, box):
        box.pulled, box.value = False, None
        return box


_END = object()


class Prefetch(Stage):
    """A background thread runs the upstream stages into a queue of at most `size`
    elements; a slot is taken before each pull, so at most `size` elements are pulled
    ahead of the consumer."""

    def __init__(self, up, size):
        self.up, self.size = up, max(int(size), 1)

    def init(self, epoch):
        box = _Box(q=queue.Queue(), slots=threading.Semaphore(self.size),
                   stop=threading.Event(), pulled=False, value=_END)
        box.thread = threading.Thread(target=self._produce, args=(box, epoch), daemon=True)
        box.thread.start()
        return box

    def _produce(self, box, epoch):
        up = self.up
        try:
            ps = up.init(epoch)
            while True:
                box.slots.acquire()
                if box.stop.is_set():
                    return
                ps = up.seek(ps)
                if not up.valid(ps):
                    box.q.put((_END, None))
                    return
                box.q.put((up.elem(ps), None))
                ps = up.advance(ps)
        except BaseException as exc:   # re-raised in the consumer
            box.q.put((_END, exc))

    def seek(self, box):
        if not box.pulled:
            box.pulled = True
            box.value, exc = box.q.get()
            box.slots.release()
            if exc is not None:
                raise exc
        return box

    def valid(self, box):
        return box.value is not _END

    def elem(self, box):
        return box.value

    def advance(self, box):
        box.pulled = False
        return box

    @staticmethod
    def close(box):
        box.stop.set()
        box.slots.release()


# -- the host-iteration nodes -------------------------------------------------------------------

_DATASETS = weakref.WeakValueDictionary()   # handle -> Dataset
_ITERATORS = {}                              # iterator id -> live eager iterator
_ids = itertools.count(1)


def register(dataset):
    """A handle (int64) that names `dataset` to the host-iteration nodes."""
    handle = next(_ids)
    _DATASETS[handle] = dataset
    return np.int64(handle)


def _open_infer(handle, **_):
    return [(np.dtype(np.int64), (), False)]


def _open_kernel(xp, handle, *, keep=None):
    ds = _DATASETS.get(int(np.asarray(handle)))
    if ds is None:
        raise RuntimeError("the dataset this loop iterates no longer exists")
    it_id = next(_ids)
    from autograph.data.iterator import Iterator
    _ITERATORS[it_id] = Iterator(ds, bar=False)   # (a progress() bar is the graph loop's)
    return np.int64(it_id)


def _next_infer(it, *, specs):
    return [(np.dtype(np.bool_), (), False)] + [(np.dtype(d), s, False) for d, s in specs]


def _next_kernel(xp, it, *, specs):
    iterator = _ITERATORS.get(int(np.asarray(it)))
    value = None if iterator is None else next(iterator, _END)
    if value is None or value is _END:
        return [np.bool_(False)] + [_no_element(t, s) for t, s in specs]
    return [np.bool_(True)] + [np.asarray(v) for v in nest.flatten(value)]


def _no_element(dtype, shape):
    """What data_iter_next yields past the end (never read): zeros of the spec's shape, or
    of no rows where that shape is huge (batch(2**40, drop_remainder=True) says 2**40)."""
    shape = () if shape is None else tuple(d or 0 for d in shape)
    size = 1
    for d in shape:
        size *= d
    if size > 2**16:
        shape = tuple(0 for _ in shape)
    return np.zeros(shape, dtype)


def _close_infer(it, *_):
    return []


def _close_kernel(xp, it, *_):
    iterator = _ITERATORS.pop(int(np.asarray(it)), None)
    if iterator is not None:
        iterator.close()
    return []


primitives.register("data_iter_open", _open_infer, kernel=_open_kernel, effectful=True,
                    doc="an iterator over the dataset a handle names (host)")
primitives.register("data_iter_next", _next_infer, kernel=_next_kernel, effectful=True,
                    doc="(has_value, *value) from a host dataset iterator")
primitives.register("data_iter_close", _close_infer, kernel=_close_kernel, effectful=True,
                    doc="releases a host dataset iterator")
primitives.nondifferentiable("data_iter_open", "data_iter_next", "data_iter_close")
