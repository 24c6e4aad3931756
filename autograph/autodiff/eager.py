"""The eager GradientTape's live graph: a Graph that evaluates every node as it is added.

While an eager tape is active its LiveGraph is the default graph, so Variable reads and
NumPy calls on watched values stage nodes as they do in a trace, and each node runs at
once (with the reference interpreter's `_eval`) and keeps its value. A tensor of a live
graph therefore has a value: `bool`, `float`, `int`, `np.asarray` give it, Python control
flow on it works, and NumPy calls on it after the block compute plain arrays. Assignments
to Variables happen when they are staged, as eagerly.

`gradient` stages the reverse-mode transform into the same live graph and returns NumPy
values: the numbers are those of a traced function, node for node, which is what keeps
`run_functions_eagerly(True)` training steps equal to traced ones. The transform's nodes
are evaluated on demand, when `gradient` reads its results, not as they are staged: the
rules of indexed reads stage full-size scatters that accumulation then bypasses (see
autodiff/accumulate.py), and those are never computed. An update (`ufunc_at`, `setitem`)
of an array that only the transform made, and that only it reads, writes into that array,
as codegen does: a Python loop reading `xs[t]` costs one row per read, not one array.
The transform's nodes are pure, so a value an update wrote over is recomputed if a node
added later (a nested tape's) reads it.

A node has run when it has a value for every output, not just the first: differentiating a
`cond` or `while_loop` that already ran adds outputs to it (a loop's trip count and stacks,
a branch's exported values), and the node runs again, with the effects inside it replayed
from its first run (replay.py). A node that cannot give a missing output (an effect that
already happened) is an error naming the user's line, never a spin.

While its tape records, `gradient` returns tensors of the live graph (they have values:
NumPy computes with them), so the gradient computation is itself recorded and a persistent
tape differentiates it again, as TensorFlow's tape records a `gradient` called inside its
block (higher-order gradients in one tape).
"""

import numpy as np

from autograph import errors
from autograph.autodiff import replay
from autograph.runtime.control_flow import CONTROL_FLOW_OPS, is_effectful
from autograph.runtime.devices import get_device
from autograph.runtime.exec import interpreter
from autograph.runtime.exec.loop_inplace import KERNELS as INPLACE_KERNELS
from autograph.runtime.ir import nest
from autograph.runtime.ir.graph import Graph
from autograph.runtime.ir.tensor import Tensor


class LiveGraph(Graph):
    live = True

    def __init__(self, name="gradient_tape"):
        super().__init__(name)
        self.values = {}
        self.device = get_device(None)
        self._uses = {}           # id(tensor) -> how many nodes read it
        self._deferred = None     # while `gradient` stages: the nodes it made, not yet run
        self._journals = {}       # id(cond/while_loop node) -> its effects' journal (replay.py)
        self._ran = set()         # ids of the nodes that ran (an effect runs once)
        self._foreign = {}        # id(another live graph's tensor) -> (it, its placeholder)

    def add_node(self, op, inputs=(), attrs=None, specs=(), name=None, origin=None):
        node = super().add_node(op, inputs, attrs, specs, name, origin)
        self._added(node)
        return node

    def _append(self, op, inputs, attrs, specs, name, origin=None):
        node = super()._append(op, inputs, attrs, specs, name, origin)
        self._added(node)
        return node

    def _added(self, node):
        for t in node.inputs:
            self._uses[id(t)] = self._uses.get(id(t), 0) + 1
        if self._deferred is not None and not is_effectful(node):
            self._deferred.add(id(node))
        else:
            self._demand(node)

    def _evaluate(self, node):
        if node.op == "Placeholder":
            return
        values = [self.values[id(t)] for t in node.inputs]
        kernel = INPLACE_KERNELS.get(node.op)
        if node.op in CONTROL_FLOW_OPS:
            journal = self._journals.get(id(node))
            if journal is None:
                journal = self._journals[id(node)] = replay.Journal()
            else:
                journal.replaying()
            outs = replay.run(node, values, self.device, journal)
        elif kernel is not None and self._owned(node.inputs[0]):
            outs = [kernel(self.device.xp, *values, **node.attrs)]
            # the old value is gone: a reader added later (a nested tape) recomputes it
            del self.values[id(node.inputs[0])]
        else:
            outs = interpreter._eval(node, values, self.device)
        for t, v in zip(node.outputs, outs):
            if id(t) not in self.values:   # (a node run again keeps the values it gave)
                self.values[id(t)] = v

    def _owned(self, t):
        """Whether an update may write into t's value: the transform made it fresh (zeros
        or an update of its own) and nothing but this update reads it."""
        value = self.values[id(t)]
        return (self._deferred is not None and id(t.node) in self._deferred
                and t.node.op in ("zeros", "ufunc_at", "setitem")
                and self._uses.get(id(t)) == 1 and self.device.xp is np
                and isinstance(value, np.ndarray) and value.flags.writeable)

    def _demand(self, node):
        """Run `node` after whatever it reads that has not run yet (no recursion: a long
        chain of updates is as deep as the loop that made it)."""
        stack = [node]
        while stack:
            top = stack[-1]
            waiting = [t.node for t in top.inputs
                       if id(t) not in self.values and t.node.op != "Placeholder"]
            if waiting:
                stack.extend(waiting)
                continue
            stack.pop()
            if top.op == "Placeholder":
                continue   # (its value is given: `source`)
            if top.outputs and all(id(t) in self.values for t in top.outputs):
                continue   # (reached twice)
            if id(top) in self._ran and top.op not in CONTROL_FLOW_OPS and is_effectful(top):
                raise _unresolvable(top, "it has an effect, which already happened")
            self._evaluate(top)
            self._ran.add(id(top))
            if any(id(t) not in self.values for t in top.outputs):
                raise _unresolvable(top, "running it gave no value for an output")

    def live_value(self, t):
        if id(t) not in self.values:
            self._demand(t.node)
        value = self.values[id(t)]
        return self.device.to_host(value) if not isinstance(value, np.ndarray) else value

    def capture(self, tensor):
        """A tensor of another eager tape's live graph (a tape that ended, or one beside
        this) enters as its value, like a NumPy array: this tape records from there (and
        `watch` on it works, as TF's tapes watch each other's tensors)."""
        graph = tensor.node.graph
        if graph is not self and graph.live:
            hit = self._foreign.get(id(tensor))
            if hit is None:
                hit = self._foreign[id(tensor)] = (tensor, self.source(
                    np.asarray(graph.live_value(tensor))))
            return hit[1]
        return super().capture(tensor)

    def source(self, array):
        """A placeholder holding `array`: a watched NumPy value."""
        t = self.placeholder("watched", array.dtype, array.shape)
        self.values[id(t)] = array
        return t

    def gradient(self, tape, targets, sources, flat_sources, grad_ys, unconnected):
        from autograph.runtime.variables import Variable
        flat = []
        for x in flat_sources:
            if isinstance(x, (Tensor, Variable)) or x is None:
                flat.append(x)
            else:   # an array that was never watched through the tape: no gradient
                flat.append(None)
        outer, self._deferred = self._deferred, set()
        try:
            with self.as_default():
                grads = tape._staged(targets, [x if x is not None else np.float64(0)
                                               for x in flat], grad_ys, unconnected)
            values = [None if g is None else np.asarray(self.live_value(g)) for g in grads]
        finally:
            self._deferred = outer if outer is None else outer | self._deferred
        recorded = tape._recording()
        out = []
        for orig, x, g, value in zip(flat_sources, flat, grads, values):
            if x is None:
                g = None if unconnected == "none" else np.zeros_like(np.asarray(orig, float))
                value = g
            out.append(None if g is None else g if recorded and isinstance(g, Tensor)
                       else value)
        return nest.pack_sequence_as(sources, out)


def _unresolvable(node, why):
    return RuntimeError(
        f"The eager GradientTape cannot compute the value of {node.op!r} node {node.name!r} "
        f"(made at {errors.describe_origin(node.origin)}): {why}. This is a bug in "
        "autograph's eager tape; ag.function around the computation avoids the live graph.")
