"""`ag.data.Dataset`: a small, NumPy-first input pipeline that a traced loop lowers to one node.

A Dataset is an immutable tree: a source (`from_tensor_slices`, `from_tensors`, `range`,
`from_generator`) and transformations over it. It holds no iteration state; `iter(ds)` makes
an iterator whose position is the state of autograph.data.stages. The same stages run when a
traced function loops over the dataset (autograph.data.lowering), so both agree.

As an argument of an `ag.function`, a dataset flattens (nest's `__ag_flatten__` protocol)
into a key for its structure and element spec, and its arrays: the arrays become the trace's
placeholders, so a new dataset with the same structure and shapes reuses the trace and the
data never enters the graph as constants.
"""

import numpy as np

from autograph.runtime.ir import nest
from autograph.runtime.ir.tensor import Tensor

from autograph.data import host, stages
from autograph.data import shuffle as shuffling

_INDEXED_SOURCES = ("slices", "tensors", "range")
_KEEPS_INDEX = ("map", "shuffle", "batch", "take", "skip", "shard", "prefetch")


class _Key:
    """The dataset's structure as a trace key (its arrays are keyed as placeholders)."""

    def __init__(self, value):
        self._value = value

    def __tracing_type__(self):
        return self._value

    def __repr__(self):
        return f"Dataset{self._value!r}"


class Dataset:
    """An input pipeline. Build one with the static constructors, chain transformations,
    iterate it eagerly (`for x in ds`, `ds.as_numpy_iterator()`) or inside an ag.function,
    where `for x in ds:` is one while_loop node."""

    def __init__(self, kind, args=(), ups=(), own=(), structure=None, fn=None):
        self._kind, self._args, self._ups = kind, tuple(args), tuple(ups)
        self._own, self._structure, self._fn = list(own), structure, fn
        self._spec = None
        self._handle = host.register(self) if self._host_only() else None

    # -- sources --------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors):
        """One element per row of the arrays in `tensors` (a nest of arrays of equal length)."""
        leaves = [x if isinstance(x, Tensor) else np.asarray(x) for x in nest.flatten(tensors)]
        if not leaves or any(np.ndim(x) == 0 for x in leaves):
            raise ValueError("from_tensor_slices needs arrays with a first axis to slice")
        lengths = {x.shape[0] for x in leaves if x.shape[0] is not None}
        if len(lengths) > 1:
            raise ValueError(f"from_tensor_slices: the arrays have different lengths {sorted(lengths)}")
        return Dataset("slices", own=leaves, structure=tensors)

    @staticmethod
    def from_tensors(tensors):
        """One element: `tensors` itself."""
        leaves = [x if isinstance(x, Tensor) else np.asarray(x) for x in nest.flatten(tensors)]
        return Dataset("tensors", own=leaves, structure=tensors)

    @staticmethod
    def range(*args):
        """int64 elements like Python's range(start, stop, step)."""
        r = range(*[int(a) for a in args])
        return Dataset("range", (r.start, r.stop, r.step))

    @staticmethod
    def from_generator(generator, output_signature):
        """Elements from `generator()` (called once per iteration), shaped and typed by
        `output_signature` (a nest of ag.TensorSpec). Iterated on the host, also in a graph."""
        if not callable(generator):
            raise TypeError("from_generator takes a callable that returns an iterator")
        return Dataset("gen", (output_signature,), fn=generator)

    # -- transformations ------------------------------------------------------------------
    def map(self, fn):
        """fn(element) for every element (tuples are unpacked into arguments); fn is converted
        like an ag.function body, so its Python control flow works on tensors."""
        return Dataset("map", ups=(self,), fn=fn)

    def filter(self, predicate):
        """The elements for which predicate(element) is true."""
        return Dataset("filter", ups=(self,), fn=predicate)

    def batch(self, batch_size, drop_remainder=False):
        """Stack consecutive elements into batches of `batch_size` (the last may be shorter
        unless `drop_remainder`)."""
        if int(batch_size) < 1:
            raise ValueError("batch_size must be at least 1")
        return Dataset("batch", (int(batch_size), bool(drop_remainder)), ups=(self,))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        """A buffered shuffle. With `reshuffle_each_iteration` (the default) every new
        iteration over the dataset (`iter(ds)`, each `for` loop, each run of a traced loop)
        and every pass of a later repeat() sees a new order; with a seed the k-th iteration's
        order is the same in every process. Without it, every iteration sees one order."""
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2**62))
        handle, counter = shuffling.new_counter()
        ds = Dataset("shuffle", (int(buffer_size), bool(reshuffle_each_iteration)),
                     ups=(self,), own=[np.int64(seed), handle])
        ds._counter = counter   # the dataset keeps its iteration counter alive
        return ds

    def repeat(self, count=None):
        """The dataset `count` times (forever when None)."""
        return Dataset("repeat", (None if count is None or count < 0 else int(count),), ups=(self,))

    def take(self, count):
        return Dataset("take", (int(count),), ups=(self,))

    def skip(self, count):
        return Dataset("skip", (int(count),), ups=(self,))

    def shard(self, num_shards, index):
        """Every num_shards-th element, starting at `index`."""
        if not 0 <= int(index) < int(num_shards):
            raise ValueError(f"shard index {index} is not in [0, {num_shards})")
        return Dataset("shard", (int(num_shards), int(index)), ups=(self,))

    def prefetch(self, buffer_size):
        """Produce up to `buffer_size` elements ahead, in a background thread (eager and
        host iteration; a graph loop over arrays computes elements when it needs them)."""
        return Dataset("prefetch", (max(int(buffer_size), 1),), ups=(self,))

    def enumerate(self, start=0):
        """(index, element) pairs."""
        return Dataset("enumerate", (int(start),), ups=(self,))

    # -- what a dataset is ----------------------------------------------------------------
    def _indexed(self):
        if self._kind in _INDEXED_SOURCES:
            return True
        return self._kind in _KEEPS_INDEX and self._ups[0]._indexed()

    def _host_only(self):
        """Whether iterating needs the host (a generator, a shuffle of an unindexed stream)."""
        if self._kind == "gen":
            return True
        if self._kind == "shuffle" and not self._ups[0]._indexed():
            return True
        return any(up._host_only() for up in self._ups)

    def _leaves(self):
        return [leaf for up in self._ups for leaf in up._leaves()] + self._own

    def _key(self):
        fn = self._fn if self._kind in ("map", "filter") else None
        struct = None if self._structure is None else nest.structure_of(self._structure)
        return (self._kind, self._args, fn, struct, tuple(up._key() for up in self._ups))

    def _rebuild(self, leaves):
        ups = tuple(up._rebuild(leaves) for up in self._ups)
        own = [next(leaves) for _ in self._own]
        ds = Dataset.__new__(Dataset)
        ds._kind, ds._args, ds._ups, ds._own = self._kind, self._args, ups, own
        ds._structure, ds._fn, ds._spec, ds._handle = self._structure, self._fn, self._spec, None
        if hasattr(self, "_counter"):   # (a shuffle's counter, while its handle names it)
            ds._counter = self._counter
        return ds

    def __ag_flatten__(self):
        extra = [] if self._handle is None else [self._handle]
        return [_Key(self._key())] + self._leaves() + extra

    def __ag_unflatten__(self, leaves):
        it = iter(leaves[1:])
        ds = self._rebuild(it)
        ds._handle = next(it, None) if self._handle is not None else None
        return ds

    def _stage(self, leaves, graph, iteration=None):
        """This pipeline's stages over the given leaf values (an iterator). `iteration(handle)`
        gives a shuffle its iteration number (default: take the counter's next, eagerly or
        by a graph node)."""
        iteration = shuffling.iteration if iteration is None else iteration
        ups = [up._stage(leaves, graph, iteration) for up in self._ups]
        own = [next(leaves) for _ in self._own]
        kind, a = self._kind, self._args
        up = ups[0] if ups else None
        indexed = isinstance(up, stages.Indexed)
        fn = _converted(self._fn) if kind in ("map", "filter") else None
        if kind == "slices":
            return stages.Slices(self._structure, own)
        if kind == "tensors":
            return stages.Tensors(nest.pack_sequence_as(self._structure, own))
        if kind == "range":
            return stages.Range(*a)
        if kind == "gen":
            return _SpecSource(a[0]) if graph else host.Generator(self._fn, a[0])
        if kind == "map":
            return stages.MapI(up, fn) if indexed else stages.MapS(up, fn)
        if kind == "filter":
            return stages.Filter(up, fn)
        if kind == "batch":
            if indexed:
                return stages.BatchI(up, *a)
            return stages.BatchS(up, a[0], a[1], self._ups[0].element_spec)
        if kind == "shuffle":
            if indexed:
                k = iteration(own[1]) if a[1] else np.int64(0)
                return stages.ShuffleI(up, a[0], own[0], a[1], k)
            # (graph=True here only learns the element spec: a host pipeline never runs
            # its stages in a graph, and shuffling keeps the spec)
            if graph:
                return up
            k = iteration(own[1]) if a[1] else np.int64(0)
            return host.ShuffleStream(up, a[0], own[0], a[1], k)
        if kind in ("take", "skip", "shard"):
            if indexed:
                cls = {"take": stages.TakeI, "skip": stages.SkipI, "shard": stages.ShardI}[kind]
                return cls(up, *a)
            return stages.Counted(up, kind, *a)
        if kind == "repeat":
            return stages.Repeat(up, a[0])
        if kind == "prefetch":
            return up if graph else host.Prefetch(up, a[0])
        if kind == "enumerate":
            return stages.Enumerate(up, a[0])
        raise AssertionError(kind)

    @property
    def element_spec(self):
        """The nest of ag.TensorSpec of one element (traced once, in a throwaway graph)."""
        if self._spec is None:
            self._spec = _element_spec(self)
        return self._spec

    def __iter__(self):
        from autograph.runtime.ir.graph import get_default_graph
        if get_default_graph() is not None:
            raise TypeError(
                "A Dataset was iterated by plain Python while a function is traced (code that "
                "autograph did not convert, e.g. ag.function(..., autograph=False) or a "
                "do_not_convert function): its elements would be fixed at trace time. Loop "
                "over it in converted code (`for x in ds:` in an ag.function), where the loop "
                "becomes one while_loop node.")
        from autograph.data.iterator import Iterator
        return Iterator(self)

    def as_numpy_iterator(self):
        """An iterator of NumPy elements (what iterating gives; here for tf.data users)."""
        return iter(self)

    def __len__(self):
        n = self._length()
        if n is None:
            raise TypeError(f"the length of this dataset is not known ({self._unknown_why()})")
        if n == float("inf"):
            raise TypeError("the dataset is infinite (repeat() without a count)")
        return int(n)

    def _length(self):
        k, a = self._kind, self._args
        if k == "slices":
            return self._own[0].shape[0]
        if k == "tensors":
            return 1
        if k == "range":
            return len(range(*a))
        if k in ("gen", "filter"):
            return None
        n = self._ups[0]._length()
        if n is None:
            return None
        if k == "batch":
            return n // a[0] if a[1] else -(-n // a[0])
        if k == "take":
            return min(n, a[0]) if a[0] >= 0 else n
        if k == "skip":
            return max(n - a[0], 0)
        if k == "shard":
            return max(-(-(n - a[1]) // a[0]), 0)
        if k == "repeat":
            return float("inf") if a[0] is None else n * a[0] if n else 0
        return n

    def _unknown_why(self):
        return "it reads a generator" if self._host_only() else "filter() decides at run time"

    def __repr__(self):
        try:
            spec = self.element_spec
        except Exception:   # noqa: BLE001 (a repr never raises)
            spec = "?"
        return f"<Dataset {self._kind} element_spec={spec}>"


class _SpecSource(stages.Indexed):
    """A generator as seen while learning the element spec: placeholders of its signature."""

    def __init__(self, signature):
        self.signature = signature

    def length(self, ist):
        from autograph.runtime.ir.graph import get_default_graph
        return get_default_graph().placeholder("n", np.dtype(np.int64), ())

    def at(self, ist, i):
        from autograph.runtime.ir.graph import get_default_graph
        g = get_default_graph()
        return nest.map_structure(lambda s: g.placeholder("x", np.dtype(s.dtype), s.shape),
                                  self.signature)


def _converted(fn):
    from autograph import api

    def call(*args):
        return api.converted_call(fn, *args)
    return call


def _element_spec(ds):
    import contextlib
    import io

    from autograph.runtime.ir.graph import Graph
    from autograph.function.trace_type import TensorSpec
    g = Graph("element_spec")
    with g.as_default(), contextlib.redirect_stdout(io.StringIO()):
        # any length: the spec of an element does not depend on how many there are
        leaves = [g.placeholder("x", x.dtype, _any_length(x.shape)) for x in ds._leaves()]
        stage = ds._stage(iter(leaves), graph=True)
        elem = stage.elem(stage.init(np.int64(0)))
    return nest.map_structure(lambda t: TensorSpec(t.shape, t.dtype), elem)


def _any_length(shape):
    return shape if shape is None or len(shape) == 0 else (None,) + tuple(shape[1:])
