"""GradientTape: TensorFlow's recording context, on top of the graph transform.

Inside a traced function a tape is a range of the graph being built: the nodes staged
while it is active. `gradient` runs the reverse-mode transform over that range (nodes
staged before the tape or while `stop_recording()` is on carry no gradient) and stages
the cotangents into the same graph. Trainable Variables read in the range are watched
(`watch_accessed_variables=True`); tensors are watched with `watch`. Tapes nest: an
outer tape's range holds the inner tape's gradient nodes, so differentiating them again
gives second derivatives.

Eagerly (no trace running), a tape runs its block on a live graph (eager.py): every node
is evaluated as it is staged, so Python control flow on the values works, and
`gradient` differentiates the recorded graph and evaluates the result.
"""

import contextlib

import numpy as np

from autograph.runtime.ir import nest, primitives
from autograph.runtime.ir.graph import get_default_graph
from autograph.runtime.ir.tensor import Tensor


class GradientTape:
    def __init__(self, persistent=False, watch_accessed_variables=True, checkpoints=None):
        from autograph.runtime.loop_options import check_checkpoints
        # every staged loop's gradient keeps at most `checkpoints` snapshots of its state
        # (autodiff/checkpointed.py); None: one state per step
        self.checkpoints = check_checkpoints(checkpoints, "GradientTape")
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._graph = None
        # the recorded range, as marks (nodes) rather than positions: the gradient transform
        # inserts nodes before a loop it augments (stacks, a trip count), which shifts the
        # positions of every later node; a mark is the node just before a range's start,
        # or the last node inside it (None: the graph's start), see _index
        self._start = self._end = None
        self._stopped = []          # [(start mark, end mark)] of ranges under stop_recording
        self._watched = []          # tensors and Variables
        self._used = False
        self._live = None           # eager: the live graph and its scope
        self._watched_arrays = {}   # eager: id(array passed to watch) -> (array, tensor)

    # -- recording -----------------------------------------------------------------------------

    def __enter__(self):
        graph = get_default_graph()
        if graph is None:
            from autograph.autodiff import eager
            self._live = eager.LiveGraph("gradient_tape")
            self._scope = self._live.as_default()
            self._scope.__enter__()
            graph = self._live
        self._graph, self._start, self._end = graph, _mark(graph), None
        return self

    def __exit__(self, *exc):
        self._end = _mark(self._graph)
        if self._live is not None:
            self._scope.__exit__(*exc)
        return False

    def watch(self, tensor):
        """Watch a tensor, a Variable, or a nest of them, and return it.

        Eagerly, a NumPy value is watched as a new tensor of the tape, which `watch`
        returns: compute with that (`x = tape.watch(x)`). NumPy computes on a plain array
        without asking anyone, so the array itself cannot be tracked in place (TF's
        `tape.watch(x)` then using `x` works on tf.Tensors only); passing the array itself
        to `gradient` afterwards is an error that says so."""
        def one(x):
            if self._live is not None and not isinstance(x, Tensor) and \
                    not hasattr(x, "read_value"):
                watched = self._live.source(np.asarray(x))
                self._watched_arrays[id(x)] = (x, watched)
                x = watched
            self._watched.append(x)
            return x
        return nest.map_structure(one, tensor)

    @contextlib.contextmanager
    def stop_recording(self):
        """Nodes staged inside this block carry no gradient for this tape."""
        k = len(self._stopped)
        self._stopped.append((_mark(self._graph), _OPEN))
        try:
            yield
        finally:
            self._stopped[k] = (self._stopped[k][0], _mark(self._graph))

    def reset(self):
        self._start = _mark(self._graph)
        self._watched, self._stopped = [], []

    def watched_variables(self):
        return tuple(v for v in self._accessed() if v is not None)

    # -- gradients -----------------------------------------------------------------------------

    def _range(self):
        """[a, b): the positions of the recorded nodes now."""
        b = _index(self._graph, self._end) if self._end is not None else len(self._graph.nodes)
        return _index(self._graph, self._start), b

    def _recording(self):
        """Inside the `with` block and not under stop_recording: what runs now is recorded."""
        return self._graph is not None and self._end is None and not any(
            e is _OPEN for _, e in self._stopped)

    def _accessed(self):
        from autograph.runtime.variables import Variable
        found = {id(v): v for v in self._watched if isinstance(v, Variable)}
        if self.watch_accessed_variables:
            a, b = self._range()
            for node in self._graph.nodes[a:b]:
                for n in _walk(node):
                    if n.op == "read_variable":
                        var = n.attrs["variable"]()
                        if var is not None and var.trainable:
                            found.setdefault(id(var), var)
        return list(found.values())

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients="none"):
        """d target / d sources, shaped like `sources` (any nest of tensors and Variables).
        None for a source the target does not depend on (zeros with
        unconnected_gradients="zero")."""
        from autograph.autodiff import transform
        if self._used and not self.persistent:
            raise RuntimeError("A non-persistent GradientTape can only compute one gradient; "
                               "create it with ag.GradientTape(persistent=True) to call "
                               "gradient() more than once.")
        self._used = True
        unconnected = getattr(unconnected_gradients, "value", unconnected_gradients)
        if unconnected not in ("none", "zero"):
            raise ValueError(f"unconnected_gradients must be 'none' or 'zero', got "
                             f"{unconnected_gradients!r}")
        flat_sources = nest.flatten(sources)
        targets = nest.flatten(target)
        grad_ys = None if output_gradients is None else nest.flatten(output_gradients)
        if self._live is not None:
            self._check_eager_use(targets, flat_sources, unconnected)
            return self._live.gradient(self, targets, sources, flat_sources, grad_ys,
                                       unconnected)
        return nest.pack_sequence_as(sources, self._staged(targets, flat_sources, grad_ys,
                                                           unconnected))

    def _check_eager_use(self, targets, flat_sources, unconnected):
        """Eagerly, the one misuse that would otherwise give a silent None: computing with
        the NumPy array given to `watch` instead of the tensor `watch` returned. A target
        the tape did not record may also simply not depend on the sources: with
        unconnected_gradients="zero" the caller expects that, and gets zeros."""
        for i, x in enumerate(flat_sources):
            if not isinstance(x, Tensor) and id(x) in self._watched_arrays \
                    and self._watched_arrays[id(x)][0] is x:
                raise ValueError(
                    f"GradientTape.gradient(): source {i} is the NumPy array that was passed "
                    "to tape.watch(), not the tensor tape.watch() returned. Eagerly, NumPy "
                    "computes on a plain array without the tape, so the array cannot be "
                    "tracked in place: write `x = tape.watch(x)` inside the `with` block, "
                    "compute with that x, and pass it to gradient() (or use an ag.Variable).")
        watched = [t for t in self._watched if isinstance(t, Tensor)]
        if watched and any(t is x for t in watched for x in flat_sources) and targets and \
                unconnected == "none" and \
                not any(isinstance(y, Tensor) or hasattr(y, "read_value") for y in targets):
            raise ValueError(
                "GradientTape.gradient(): the target is a NumPy value that the tape did not "
                "record, so it does not depend on the watched tensors. Either it was computed "
                "from the NumPy array given to tape.watch() rather than from the tensor that "
                "tape.watch() returned (`x = tape.watch(x)`, then compute with x), or it "
                "really does not depend on them: then pass unconnected_gradients='zero' to "
                "get zeros.")

    def _staged(self, targets, flat_sources, grad_ys, unconnected):
        from autograph.autodiff import transform
        from autograph.runtime.variables import Variable
        graph = self._graph
        a, b = self._range()
        accessed = {id(v) for v in self._accessed()}
        ctx = transform.Context()
        ctx.checkpoints = self.checkpoints
        stopped = [(_index(graph, s), _index(graph, e)) for s, e in self._stopped]
        for i, node in enumerate(graph.nodes):
            if i < a or i >= b or any(s <= i < e for s, e in stopped):
                ctx.stopped.add(id(node))
        watched_ids = {id(x) for x in self._watched if isinstance(x, Tensor)}
        recorded = {id(t) for n in graph.nodes[a:b] for t in n.outputs}
        ok, xs = [], []
        for x in flat_sources:
            if isinstance(x, Variable):
                ok.append(id(x) in accessed)
                xs.append(x)
            elif isinstance(x, Tensor):
                ok.append(id(x) in watched_ids or id(x) in recorded)
                xs.append(x)
            else:
                ok.append(False)
                xs.append(None)
        live = [x for x, k in zip(xs, ok) if k]
        ys = [t.read_value() if hasattr(t, "read_value") else primitives.convert(t)
              for t in targets]
        with graph.as_default():
            grads = iter(transform.gradients(ys, live, grad_ys, unconnected, ctx))
            out = []
            for x, k in zip(flat_sources, ok):
                g = next(grads) if k else None
                if g is None and unconnected == "zero" and x is not None:
                    g = primitives.convert(np.zeros(np.shape(x) if not isinstance(x, Tensor)
                                                    else x.shape, getattr(x, "dtype", None)))
                out.append(g)
        return out

    def jacobian(self, target, sources, unconnected_gradients="none"):
        """d target[i...] / d sources: shape target.shape + source.shape per source."""
        if target is None:
            raise ValueError("GradientTape.jacobian(): the target is None. A gradient() "
                             "that does not depend on its sources is None (pass "
                             "unconnected_gradients='zero' to get zeros instead).")
        persistent, self.persistent = self.persistent, True
        try:
            flat_sources = nest.flatten(sources)
            t = target if isinstance(target, Tensor) else primitives.convert(target) \
                if get_default_graph() is not None else target
            shape = tuple(np.shape(t)) if not isinstance(t, Tensor) else t.shape
            if shape is None or None in shape:
                raise ValueError("jacobian needs a target of known shape")
            size = int(np.prod(shape))
            rows = []
            for i in range(size):
                onehot = np.zeros(size, dtype=t.dtype)
                onehot[i] = 1
                self._used = False
                rows.append(self.gradient(target, flat_sources,
                                          output_gradients=onehot.reshape(shape),
                                          unconnected_gradients="zero"))
            out = []
            for k, x in enumerate(flat_sources):
                xs_shape = tuple(np.shape(x)) if not isinstance(x, Tensor) else x.shape
                col = np.stack([r[k] for r in rows]) if rows else np.zeros((0,) + xs_shape)
                out.append(np.reshape(col, shape + tuple(xs_shape)))
            return nest.pack_sequence_as(sources, out)
        finally:
            self.persistent = persistent


_OPEN = object()


def _mark(graph):
    """A mark for the current end of `graph`: its last node (None when it has none). The
    position just after a mark stays right when nodes are inserted before later nodes."""
    return graph.nodes[-1] if graph.nodes else None


def _index(graph, mark):
    """The position just after `mark` in `graph.nodes` now."""
    if mark is None:
        return 0
    if mark is _OPEN:
        return len(graph.nodes)
    for i in range(len(graph.nodes) - 1, -1, -1):   # (marks are mostly near the end)
        if graph.nodes[i] is mark:
            return i + 1
    raise RuntimeError(f"GradientTape: node {mark.name!r} of its recorded range left the "
                       "graph (a graph rewritten while a tape records it)")


def _walk(node):
    yield node
    for g in node.attrs.values():
        if hasattr(g, "walk") and hasattr(g, "nodes"):
            yield from g.walk()
