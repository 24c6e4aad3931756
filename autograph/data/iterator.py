"""Eager iteration of a Dataset, with a state that can be saved and restored elsewhere.

The iterator's position is the stages' state (autograph.data.stages): for pipelines over
arrays it is a tuple of NumPy arrays (cursors, shuffle permutations, batch buffers), which
`get_state()` writes as plain JSON-able data and `set_state()` puts back without replaying
anything. A position that holds live host state (a generator, a streaming shuffle, a
prefetch thread) cannot be written down; its state is the number of elements consumed,
and restoring replays that many from a fresh iterator (the generator must be repeatable).

An iterator is safe to share between threads: one lock around each step (next, get_state,
set_state) delivers every element exactly once, as tf.data's iterators do. Without
contention the lock costs a fraction of a microsecond per element.

Starting an iterator takes the next iteration number of every reshuffling shuffle in the
pipeline (autograph.data.shuffle); the state records them, so a restored iterator continues
the same orders (restoring does not take new numbers: the counters move only on `iter()`).
"""

import threading

import numpy as np

from autograph.runtime.ir import nest

from autograph.data import host, stages
from autograph.data import shuffle as shuffling

_VERSION = 2


class Iterator:
    """`iter(dataset)`: yields NumPy elements; `get_state()` / `set_state(state)`. A
    pipeline with a progress() stage gets a bar over the elements this iterator gives
    (`bar=False`: none; a graph loop that iterates on the host shows its own)."""

    def __init__(self, dataset, bar=True):
        self._dataset = dataset
        self._lock = threading.Lock()
        self._bar = None
        desc = dataset._bar() if bar else None
        if desc is not None:    # ds.progress(): a bar over the elements this iterator gives
            from autograph.runtime import progress
            self._bar = progress.Counter(dataset._bar_total(), desc)
        self._start()

    def _start(self, iterations=None):
        """A fresh position; `iterations`: the shuffles' iteration numbers to reuse (else
        each shuffle takes its counter's next)."""
        replay = None if iterations is None else iter(iterations)
        taken = []

        def iteration(handle):
            k = shuffling.next_iteration(handle) if replay is None else np.int64(next(replay))
            taken.append(int(k))
            return k
        self._iterations = taken
        self._stage = self._dataset._stage(iter(self._dataset._leaves()), graph=False,
                                           iteration=iteration)
        self._ps = self._stage.init(np.int64(0))
        self._consumed = 0
        self._done = False
        # an indexed pipeline (arrays, range, ... without filter/repeat) has a fixed length
        # per iteration: next() is a cursor check and one at(), no seek/valid/advance
        self._length = None
        if isinstance(self._stage, stages.Indexed):
            self._length = self._stage.length(self._ps[1:])

    def __iter__(self):
        return self

    def __next__(self):
        with self._lock:
            if self._bar is None:
                return self._step_unlocked()
            try:
                value = self._step_unlocked()
            except StopIteration:
                self._bar.close()
                raise
            self._bar.step()
            return value

    def _step_unlocked(self):
        if self._done:
            raise StopIteration
        stage = self._stage
        if self._length is not None:
            ps = self._ps
            i = ps[0]
            if i >= self._length:
                self._done = True
                raise StopIteration
            try:
                return stage.at(ps[1:], i)
            finally:   # (an element whose map function raised is dropped, as in tf.data)
                self._ps = (i + 1,) + ps[1:]
                self._consumed += 1
        ps = stage.seek(self._ps)
        if not stage.valid(ps):
            self._ps, self._done = ps, True
            self.close()
            raise StopIteration
        try:
            value = stage.elem(ps)
        except Exception:
            self._ps = stage.advance(ps)
            self._consumed += 1
            raise
        self._ps = stage.advance(ps)
        self._consumed += 1
        return value

    next = __next__

    def close(self):
        """Stop the background threads of prefetch() stages (a loop that breaks early)."""
        for box in _boxes(self._ps):
            if hasattr(box, "stop"):
                host.Prefetch.close(box)

    def __del__(self):
        try:
            if self._bar is not None:   # (a loop left by a break or an error)
                self._bar.close()
            self.close()
        except Exception:   # noqa: BLE001 (interpreter shutdown)
            pass

    # -- state ----------------------------------------------------------------------------
    def get_state(self):
        """The position as plain data (dicts, lists, numbers): `json.dumps` takes it."""
        with self._lock:
            return self._get_state()

    def _get_state(self):
        leaves = nest.flatten(self._ps)
        position = None
        if all(isinstance(x, (np.ndarray, np.generic)) for x in leaves):
            position = [{"dtype": np.asarray(x).dtype.str, "shape": list(np.shape(x)),
                         "data": np.asarray(x).ravel().tolist()} for x in leaves]
        return {"version": _VERSION, "consumed": self._consumed, "done": self._done,
                "iterations": list(self._iterations), "position": position}

    def set_state(self, state):
        """Continue from a state that get_state() gave (in this process or another)."""
        with self._lock:
            self._set_state(state)

    def _set_state(self, state):
        if state.get("version") != _VERSION:
            raise ValueError(f"unknown iterator state version {state.get('version')!r}")
        self.close()
        self._start(state.get("iterations", []))
        position = state.get("position")
        template = nest.flatten(self._ps)
        if position is not None and len(position) == len(template) and all(
                isinstance(x, (np.ndarray, np.generic)) for x in template):
            leaves = [np.asarray(p["data"], dtype=np.dtype(p["dtype"])).reshape(p["shape"])
                      for p in position]
            leaves = [x[()] if x.ndim == 0 else x for x in leaves]
            self._ps = nest.pack_sequence_as(self._ps, leaves)
        else:
            for _ in range(int(state["consumed"])):
                try:
                    self._step_unlocked()
                except StopIteration:
                    break
                except Exception:   # noqa: BLE001 (raised to the user the first time)
                    pass
        self._consumed = int(state["consumed"])
        self._done = bool(state.get("done", False))


def _boxes(ps, seen=None):
    """The live host positions (host._Box) inside a position, depth first."""
    seen = set() if seen is None else seen
    for leaf in nest.flatten(ps):
        if isinstance(leaf, host._Box) and id(leaf) not in seen:
            seen.add(id(leaf))
            yield leaf
            for value in vars(leaf).values():
                if isinstance(value, (host._Box, tuple)):
                    yield from _boxes(value, seen)
