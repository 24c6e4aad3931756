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

from autograph import config
from autograph.runtime.ir import nest
from autograph.runtime.ir.tensor import Tensor

from autograph.data import batching, combine, counts, host, stages, streams
from autograph.data import spec as specs
from autograph.data import shuffle as shuffling

_INDEXED_SOURCES = ("slices", "tensors", "range")
_KEEPS_INDEX = ("map", "shuffle", "batch", "take", "skip", "shard", "prefetch", "progress")


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
        """One element per row of the arrays in `tensors` (a nest of arrays of equal length).
        A Python list is one array (tf.data's rule), tuples and dicts are structure."""
        tensors = _as_arrays(tensors)
        leaves = nest.flatten(tensors)
        if not leaves or any(x.shape is not None and len(x.shape) == 0 for x in leaves):
            raise ValueError("from_tensor_slices needs arrays with a first axis to slice")
        lengths = {x.shape[0] for x in leaves if x.shape is not None and x.shape[0] is not None}
        if len(lengths) > 1:
            raise ValueError(f"from_tensor_slices: the arrays have different lengths {sorted(lengths)}")
        return Dataset("slices", own=leaves, structure=tensors)

    @staticmethod
    def from_tensors(tensors):
        """One element: `tensors` itself (a Python list is one array, as in tf.data)."""
        tensors = _as_arrays(tensors)
        return Dataset("tensors", own=nest.flatten(tensors), structure=tensors)

    @staticmethod
    def range(*args, output_type=np.int64):
        """Elements like Python's range(start, stop, step), of dtype `output_type`."""
        if not 1 <= len(args) <= 3:
            raise TypeError(f"Dataset.range takes 1 to 3 arguments (stop or start, stop[, "
                            f"step]), got {len(args)}")
        r = range(*[counts.integer("Dataset.range", "argument", a) for a in args])
        if r.step == 0:   # (range() above raised already; kept for a clear message)
            raise ValueError("Dataset.range: step must not be zero")
        return Dataset("range", (r.start, r.stop, r.step, np.dtype(output_type)))

    @staticmethod
    def from_generator(generator, output_signature):
        """Elements from `generator()` (called once per iteration), shaped and typed by
        `output_signature` (a nest of ag.TensorSpec). Every element is checked against the
        signature (structure, dtype conversion, shape): a mismatch raises at the `next()`
        that reads it, eagerly and in a graph. Iterated on the host, also in a graph."""
        if not callable(generator):
            raise TypeError("from_generator takes a callable that returns an iterator")
        from autograph.function.trace_type import TensorSpec
        if not all(isinstance(s, TensorSpec) for s in nest.flatten(output_signature)):
            raise TypeError(f"from_generator: output_signature must be a nest of "
                            f"ag.TensorSpec, got {output_signature!r}")
        return Dataset("gen", (output_signature,), fn=generator)

    @staticmethod
    def zip(*datasets):
        """Elements of several datasets side by side, as a nest like the argument:
        `zip(a, b)` or `zip((a, b))` yields tuples, `zip({"x": a, "y": b})` dicts. It ends
        with the shortest dataset."""
        if len(datasets) == 1:   # zip(ds) is ds's elements; zip((a, b)) is zip(a, b)
            datasets = datasets[0]
        flat, template = _datasets_in(datasets)
        if not flat:
            raise ValueError("Dataset.zip needs at least one dataset")
        return Dataset("zip", ups=flat, structure=template)

    # -- transformations ------------------------------------------------------------------
    def concatenate(self, dataset):
        """This dataset's elements, then `dataset`'s (their elements must have the same
        structure and dtypes; a dimension on which they differ is None in element_spec)."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"concatenate takes a Dataset, got {type(dataset).__name__}")
        combine.concatenated_spec(self.element_spec, dataset.element_spec)   # (raises here)
        return Dataset("concatenate", ups=(self, dataset))

    def map(self, fn, num_parallel_calls=None, deterministic=None):
        """fn(element) for every element (a plain tuple is unpacked into arguments, tf.data's
        rule); fn is converted like an ag.function body, so its Python control flow works on
        tensors.
        `num_parallel_calls` and `deterministic` are accepted for tf.data code; elements are
        computed one after another, in order (what deterministic=True promises)."""
        if num_parallel_calls is not None and num_parallel_calls != counts.AUTOTUNE:
            counts.integer("map", "num_parallel_calls", num_parallel_calls)
        return Dataset("map", ups=(self,), fn=fn)

    def filter(self, predicate):
        """The elements for which predicate(element) is true."""
        return Dataset("filter", ups=(self,), fn=predicate)

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None):
        """Stack consecutive elements into batches of `batch_size` (the last may be shorter
        unless `drop_remainder`). `num_parallel_calls`/`deterministic` as in map()."""
        size = counts.integer("batch", "batch_size", batch_size)
        if size < 1:
            raise ValueError(f"batch: batch_size must be greater than zero, got {size}")
        return Dataset("batch", (size, bool(drop_remainder)), ups=(self,))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        """A buffered shuffle. With `reshuffle_each_iteration` (the default) every new
        iteration over the dataset (`iter(ds)`, each `for` loop, each run of a traced loop)
        and every pass of a later repeat() sees a new order; with a seed the k-th iteration's
        order is the same in every process. Without it, every iteration sees one order."""
        size = counts.integer("shuffle", "buffer_size", buffer_size)
        if size < 1:
            raise ValueError(f"shuffle: buffer_size must be greater than zero, got {size}")
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (2**62))
        handle, counter = shuffling.new_counter()
        ds = Dataset("shuffle", (size, bool(reshuffle_each_iteration)),
                     ups=(self,), own=[np.int64(seed), handle])
        ds._counter = counter   # the dataset keeps its iteration counter alive
        return ds

    def repeat(self, count=None):
        """The dataset `count` times: forever when None or negative, empty when 0. Repeating
        forever ends when a pass yields no element (so `range(0).repeat()` is empty)."""
        n = None if count is None else counts.integer("repeat", "count", count)
        return Dataset("repeat", (None if n is None or n < 0 else n,), ups=(self,))

    def take(self, count):
        """The first `count` elements (all of them when `count` is negative)."""
        return Dataset("take", (counts.integer("take", "count", count),), ups=(self,))

    def skip(self, count):
        """All but the first `count` elements (none when `count` is negative)."""
        return Dataset("skip", (counts.integer("skip", "count", count),), ups=(self,))

    def shard(self, num_shards, index):
        """Every num_shards-th element, starting at `index`."""
        num = counts.integer("shard", "num_shards", num_shards)
        i = counts.integer("shard", "index", index)
        if num < 1:
            raise ValueError(f"shard: num_shards must be greater than zero, got {num}")
        if not 0 <= i < num:
            raise ValueError(f"shard: index must be in [0, num_shards) = [0, {num}), got {i}")
        return Dataset("shard", (num, i), ups=(self,))

    def prefetch(self, buffer_size):
        """Produce up to `buffer_size` elements ahead, in a background thread (eager and
        host iteration; a graph loop over arrays computes elements when it needs them).
        `ag.data.AUTOTUNE` (-1) or None picks the size; 0 prefetches nothing."""
        size = counts.AUTOTUNE if buffer_size is None else \
            counts.integer("prefetch", "buffer_size", buffer_size)
        if size < counts.AUTOTUNE:
            raise ValueError(f"prefetch: buffer_size must be >= 0 or ag.data.AUTOTUNE (-1), "
                             f"got {size}")
        return Dataset("prefetch", (counts.AUTOTUNE_PREFETCH if size < 0 else size,), ups=(self,))

    def enumerate(self, start=0):
        """(index, element) pairs."""
        return Dataset("enumerate", (counts.integer("enumerate", "start", start),), ups=(self,))

    def progress(self, desc=""):
        """The same elements; a loop over this dataset (or one built on it) shows a
        progress bar of the elements it receives, eagerly and inside an ag.function, as
        `ag.range(n, progress=desc)` does (autograph.runtime.progress). Its total is the
        dataset's length when known (`len(ds)`), else the bar counts without one."""
        if not isinstance(desc, str):
            raise TypeError(f"progress: desc must be a str (the bar's label), got "
                            f"{type(desc).__name__}")
        return Dataset("progress", (desc,), ups=(self,))

    def _bar(self):
        """The label of the bar a loop over this dataset shows (a progress() stage in the
        pipeline, the first one met), or None."""
        if self._kind == "progress":
            return self._args[0]
        return next((d for d in (up._bar() for up in self._ups) if d is not None), None)

    def _bar_total(self):
        """The bar's total: the number of elements when known, else None."""
        n = counts.length(self)
        return None if n is None or n == counts.INFINITE else int(n)

    # -- what a dataset is ----------------------------------------------------------------
    def _indexed(self):
        if self._kind in _INDEXED_SOURCES:
            return True
        if self._kind in ("zip", "concatenate"):
            return all(up._indexed() for up in self._ups)
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
        # (the spec is found again from the new leaves: a relaxed trace has other shapes)
        ds._structure, ds._fn, ds._spec, ds._handle = self._structure, self._fn, None, None
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
        if fn is not None and not graph and config._check_numerics:
            from autograph.runtime.exec import eager_numerics   # the host runs fn eagerly
            fn = eager_numerics.checked(fn)
        if kind == "slices":
            return stages.Slices(self._structure, own)
        if kind == "tensors":
            return stages.Tensors(nest.pack_sequence_as(self._structure, own))
        if kind == "range":
            return stages.Range(*a)
        if kind == "gen":
            return host.Generator(self._fn, a[0])
        if kind == "zip":
            every = all(isinstance(u, stages.Indexed) for u in ups)
            return (combine.ZipI if every else combine.ZipS)(ups, self._structure)
        if kind == "concatenate":
            every = all(isinstance(u, stages.Indexed) for u in ups)
            return (combine.ConcatI if every else combine.ConcatS)(*ups)
        if kind in ("take", "skip", "repeat") and counts.length(self) == 0:
            # take(0), skip(-1), repeat(0): empty without reading the input (tf.data's rule)
            return stages.TakeI(up, 0) if indexed else streams.Counted(up, "take", 0)
        if kind == "map":
            if not indexed:
                return streams.MapS(up, fn)
            plan = None
            if graph and up.gatherable:   # (eagerly fn runs per element, as written)
                plan = batching.plan(self._fn, self._ups[0].element_spec)
            return stages.MapI(up, fn, plan)
        if kind == "filter":
            return streams.Filter(up, fn)
        if kind == "batch":
            n = counts.length(self._ups[0], bound=True)
            rows = a[0] if n is None or n == counts.INFINITE else max(min(a[0], n), 1)
            if indexed:
                return stages.BatchI(up, a[0], a[1], rows)
            return streams.BatchS(up, a[0], a[1], self._ups[0].element_spec, rows)
        if kind == "shuffle":
            k = iteration(own[1]) if a[1] else np.int64(0)
            if indexed:
                return stages.ShuffleI(up, a[0], own[0], a[1], k)
            assert not graph, "a host pipeline is never staged in a graph"
            return host.ShuffleStream(up, a[0], own[0], a[1], k)
        if kind in ("take", "skip", "shard"):
            if indexed:
                cls = {"take": stages.TakeI, "skip": stages.SkipI, "shard": stages.ShardI}[kind]
                return cls(up, *a)
            return streams.Counted(up, kind, *a)
        if kind == "repeat":
            return streams.Repeat(up, a[0])
        if kind == "progress":      # (the bar is the loop's: iterator.py, lowering.py)
            return up
        if kind == "prefetch":
            return up if graph or a[0] == 0 else host.Prefetch(up, a[0])
        if kind == "enumerate":
            return streams.Enumerate(up, a[0])
        raise AssertionError(kind)

    @property
    def element_spec(self):
        """The nest of ag.TensorSpec of one element (autograph.data.spec: tf.data's rules)."""
        if self._spec is None:
            self._spec = specs.element_spec(self)
        return self._spec

    def cardinality(self):
        """The number of elements (int64), or ag.data.INFINITE_CARDINALITY (-1), or
        ag.data.UNKNOWN_CARDINALITY (-2) when a filter or a generator decides it."""
        return counts.cardinality(counts.length(self))

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
        n = counts.length(self)
        if n is None:
            raise TypeError(f"the length of this dataset is not known ({self._unknown_why()})")
        if n == counts.INFINITE:
            raise TypeError("the dataset is infinite (repeat() without a count)")
        return int(n)

    def _unknown_why(self):
        return "it reads a generator" if self._host_only() else "filter() decides at run time"

    def __repr__(self):
        try:
            spec = self.element_spec
        except Exception:   # noqa: BLE001 (a repr never raises)
            spec = "?"
        return f"<Dataset {self._kind} element_spec={spec}>"


def _converted(fn):
    from autograph import api

    def call(*args):
        return api.converted_call(fn, *args)
    return call


def _as_arrays(tensors):
    """A nest given to a source, read as tf.data reads it: tuples, dicts, namedtuples and
    dataclasses are structure, a Python list is one array, tensors stay tensors."""
    if isinstance(tensors, Tensor):
        return tensors
    if isinstance(tensors, list) or not nest.is_nested(tensors):
        return np.asarray(tensors)
    return nest.rebuild(tensors, [_as_arrays(x) for x in nest.children(tensors)])


def _datasets_in(x):
    """(the datasets in a nest, the nest with their positions as leaves)."""
    if isinstance(x, Dataset):
        return [x], 0
    if not isinstance(x, (tuple, list, dict)):
        raise TypeError(f"Dataset.zip takes datasets (in tuples or dicts), got {type(x).__name__}")
    flat, kids = [], []
    for kid in nest.children(x):
        sub, t = _datasets_in(kid)
        kids.append(nest.map_structure(lambda i, k=len(flat): i + k, t))
        flat.extend(sub)
    rebuilt = nest.rebuild(x, kids)
    return flat, tuple(rebuilt) if isinstance(rebuilt, list) else rebuilt
