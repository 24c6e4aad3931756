"""`for elem in dataset:` inside a traced function: one while_loop node.

autograph.operators.for_loops.for_stmt hands a Dataset met while tracing to
`DatasetLoop`, a staged iterable whose `staged_for` builds the loop:

- an array-backed pipeline runs the stages of autograph.data.stages on tensors. The loop
  carries the pipeline's position (cursor, shuffle permutation, ...) next to the user's
  variables; the test is `valid(seek(position))` (and the loop's break/return flag), the
  body runs the user's body on `elem(seek(position))` and carries `advance(...)` on.
  The source arrays are the function's placeholders (a dataset argument) or `data_source`
  nodes that refer to the arrays (a dataset the function closes over): never Const nodes.
- a pipeline that needs the host (a generator) loops over the `data_iter_next` node of
  autograph.data.host, which yields (has_value, *value). After a `break` the body pulls no
  further element, so a loop that stops after k elements pulls exactly k.
"""

import numpy as np

from autograph.runtime import control_flow as cf
from autograph.runtime.ir import nest, primitives
from autograph.runtime.ir.tensor import Tensor

from autograph.data import host


def _source_kernel(xp, *, array):
    return xp.asarray(array)


def _source_infer(*, array):
    return [(array.dtype, array.shape, False)]


primitives.register("data_source", _source_infer, kernel=_source_kernel, effectful=True,
                    doc="a dataset's source array, referred to (never copied into the graph)")
primitives.nondifferentiable("data_source")


def _as_graph_leaf(x):
    """A leaf of a dataset in the graph: tensors stay; arrays are referred to by a
    data_source node (scalars such as a shuffle seed are small constants)."""
    if isinstance(x, Tensor):
        return x
    x = np.asarray(x)
    if x.size <= 4:
        return primitives.constant(x, dtype=x.dtype)
    return primitives.bind1("data_source", (), {"array": x}, node_name="DataSource")


def _and(a, b):
    if b is True:
        return a
    return np.logical_and(a, b)


class DatasetLoop:
    """What for_stmt loops over when the iterable is a Dataset while tracing."""

    def __init__(self, dataset):
        self.dataset = dataset

    def staged_for(self, body, state, names, extra_test, staged_while, as_tuple, result):
        ds = self.dataset
        desc = ds._bar()
        if desc is not None:     # ds.progress(): the loop counts its elements for a bar
            from autograph.runtime import progress as bars
            total = ds._bar_total()
            return bars.with_bar(
                0, 0 if total is None else total, 1, desc, total is not None,
                lambda *loop: self._staged_for(*loop, staged_while, as_tuple, result),
                body, state, names, extra_test)
        return self._staged_for(body, state, names, extra_test, staged_while, as_tuple, result)

    def _staged_for(self, body, state, names, extra_test, staged_while, as_tuple, result):
        ds = self.dataset
        if ds._host_only():
            return self._host_for(body, state, names, extra_test, staged_while, as_tuple, result)
        n = len(names)
        stage = ds._stage(iter([_as_graph_leaf(x) for x in ds._leaves()]), graph=True)
        ps0 = stage.init(np.int64(0))

        # the position is carried *before* seek: seeking in the test as well as the body
        # (filter's search, repeat's next pass) keeps the whole loop one node; seeking a
        # position that is already at an element costs one predicate call
        def test(ps, *s):
            go = stage.valid(stage.seek(ps))
            return go if extra_test is None else _and(go, extra_test(*s))

        def loop_body(ps, *s):
            ps = stage.seek(ps)
            out = as_tuple(body(stage.elem(ps), *s), n)
            return result((stage.advance(ps), *out), n + 1)

        out = staged_while(test, loop_body, (ps0, *state), ("<dataset position>",) + names,
                           what="`for` loop")
        return out[1:]

    def _host_for(self, body, state, names, extra_test, staged_while, as_tuple, result):
        ds, n = self.dataset, len(names)
        handle = ds._handle
        keep = None
        if not isinstance(handle, Tensor):
            keep, handle = ds, primitives.constant(np.int64(handle), dtype=np.int64)
        specs = tuple((np.dtype(s.dtype), s.shape) for s in nest.flatten(ds.element_spec))
        structure = ds.element_spec
        it = primitives.bind1("data_iter_open", [handle], {"keep": keep}, node_name="DataIterOpen")

        def pull():
            outs = primitives.bind("data_iter_next", [it], {"specs": specs},
                                   node_name="DataIterNext").outputs
            return (outs[0], tuple(outs[1:]))

        def loop_body(cur, *s):
            has, leaves = cur
            out = as_tuple(body(nest.pack_sequence_as(structure, list(leaves)), *s), n)
            if extra_test is None:
                nxt = pull()
            else:   # after a break, pull nothing more
                nxt = cf.cond(extra_test(*out), pull, lambda: (np.bool_(False), leaves))
            return result((nxt, *out), n + 1)

        def test_flat(cur, *s):
            go = cur[0]
            return go if extra_test is None else _and(go, extra_test(*s))

        out = staged_while(test_flat, loop_body, (pull(), *state), ("<dataset element>",) + names,
                           what="`for` loop")
        primitives.bind("data_iter_close", [it, out[0][0]], node_name="DataIterClose")
        return out[1:]
