"""The reference evaluator: runs a graph node by node. Short and obviously correct.

It is the meaning of a graph that the fast executor (codegen) and the optimiser are
tested against. Nodes run in graph order, which is program order, so side effects (print,
assign, TensorArray writes) happen in the order the program staged them.
"""

import numpy as np

from autograph.runtime import primitives
from autograph.runtime.devices import get_device


def run(graph, arrays, device=None):
    """Evaluate `graph` on `arrays` (one per `graph.inputs`); returns the output list."""
    device = get_device(device)
    return _run(graph, [device.to_device(a) for a in arrays], device)


def truth(value, device):
    """A condition value as a Python bool, read on the host."""
    return bool(device.to_host(value))


def device_attrs(attrs, device):
    """Node attrs as a kernel takes them: NumPy dtypes become the device's dtype objects."""
    return {k: device.dtype(v) if isinstance(v, np.dtype) else v for k, v in attrs.items()}


def _run(graph, args, device):
    if len(args) != len(graph.inputs):
        raise TypeError(f"graph {graph.name!r} takes {len(graph.inputs)} inputs, "
                        f"got {len(args)}")
    env = {id(t): a for t, a in zip(graph.inputs, args)}
    for node in graph.nodes:
        if node.op == "Placeholder":
            continue
        values = [env[id(t)] for t in node.inputs]
        outs = _eval(node, values, device)
        for t, v in zip(node.outputs, outs):
            env[id(t)] = v
    return [env[id(t)] for t in graph.outputs]


def _eval(node, values, device):
    """The output values of one node (a list, one per output)."""
    op, attrs = node.op, node.attrs
    if op == "Const":
        return [device.to_device(attrs["value"])]
    if op == "cond":
        branch = attrs["true_graph"] if truth(values[0], device) else attrs["false_graph"]
        return _run(branch, values[1:], device)
    if op == "while_loop":
        n = len(node.outputs)
        limit = attrs["maximum_iterations"]
        if limit == "input":
            limit, values = int(device.to_host(values[-1])), values[:-1]
        loop_vars, captured = values[:n], values[n:]
        count = 0
        while (limit is None or count < limit) and \
                truth(_run(attrs["cond_graph"], loop_vars + captured, device)[0], device):
            loop_vars = _run(attrs["body_graph"], loop_vars + captured, device)
            count += 1
        return loop_vars
    kernel = device.kernel(op, primitives.lookup(op).kernel)
    result = kernel(*values, **device_attrs(attrs, device))
    if len(node.outputs) == 1:
        return [result]
    return list(result) if node.outputs else []
