"""The eager GradientTape's live graph: a Graph that evaluates every node as it is added.

While an eager tape is active its LiveGraph is the default graph, so Variable reads and
NumPy calls on watched values stage nodes as they do in a trace, and each node runs at
once (with the reference interpreter's `_eval`) and keeps its value. A tensor of a live
graph therefore has a value: `bool`, `float`, `int`, `np.asarray` give it, Python control
flow on it works, and NumPy calls on it after the block compute plain arrays. Assignments
to Variables happen when they are staged, as eagerly.

`gradient` stages the reverse-mode transform into the same live graph (so its nodes are
evaluated too) and returns NumPy values: the numbers are those of a traced function,
node for node, which is what keeps `run_functions_eagerly(True)` training steps equal to
traced ones.
"""

import numpy as np

from autograph.runtime.devices import get_device
from autograph.runtime.exec import interpreter
from autograph.runtime.ir import nest
from autograph.runtime.ir.graph import Graph
from autograph.runtime.ir.tensor import Tensor


class LiveGraph(Graph):
    live = True

    def __init__(self, name="gradient_tape"):
        super().__init__(name)
        self.values = {}
        self.device = get_device(None)

    def add_node(self, op, inputs=(), attrs=None, specs=(), name=None, origin=None):
        node = super().add_node(op, inputs, attrs, specs, name, origin)
        self._evaluate(node)
        return node

    def _append(self, op, inputs, attrs, specs, name, origin=None):
        node = super()._append(op, inputs, attrs, specs, name, origin)
        self._evaluate(node)
        return node

    def _evaluate(self, node):
        if node.op == "Placeholder":
            return
        values = [self.values[id(t)] for t in node.inputs]
        outs = interpreter._eval(node, values, self.device)
        for t, v in zip(node.outputs, outs):
            self.values[id(t)] = v

    def source(self, array):
        """A placeholder holding `array`: a watched NumPy value."""
        t = self.placeholder("watched", array.dtype, array.shape)
        self.values[id(t)] = array
        return t

    def live_value(self, t):
        value = self.values[id(t)]
        return self.device.to_host(value) if not isinstance(value, np.ndarray) else value

    def gradient(self, tape, targets, sources, flat_sources, grad_ys, unconnected):
        from autograph.runtime.variables import Variable
        flat = []
        for x in flat_sources:
            if isinstance(x, (Tensor, Variable)) or x is None:
                flat.append(x)
            else:   # an array that was never watched through the tape: no gradient
                flat.append(None)
        with self.as_default():
            grads = tape._staged(targets, [x if x is not None else np.float64(0)
                                           for x in flat], grad_ys, unconnected)
        out = []
        for orig, x, g in zip(flat_sources, flat, grads):
            if x is None:
                g = None if unconnected == "none" else np.zeros_like(np.asarray(orig, float))
            out.append(None if g is None else np.asarray(self.live_value(g)))
        return nest.pack_sequence_as(sources, out)
