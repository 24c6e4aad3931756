"""The reference evaluator: runs a graph node by node. Short and obviously correct.

It is the meaning of a graph that the fast executor (codegen) and the optimiser are
tested against. Nodes run in graph order, which is program order, so side effects (print,
assign, TensorArray writes) happen in the order the program staged them.
"""

import numpy as np

from autograph import errors
from autograph.runtime.ir import primitives
from autograph.runtime.devices import get_device


def run(graph, arrays, device=None, check=False):
    """Evaluate `graph` on `arrays` (one per `graph.inputs`); returns the output list.

    `check=True` also compares every value with its tensor's static dtype and shape and
    raises AssertionError naming the node on a difference (a shape or dtype rule that
    disagrees with its kernel): a debugging aid for primitive authors."""
    device = get_device(device)
    return _run(graph, [device.to_device(a) for a in arrays], device, check)


def truth(value, device):
    """A condition value as a Python bool, read on the host."""
    return bool(device.to_host(value))


def device_attrs(attrs, device):
    """Node attrs as a kernel takes them: NumPy dtypes become the device's dtype objects."""
    return {k: device.dtype(v) if isinstance(v, np.dtype) else v for k, v in attrs.items()}


def _run(graph, args, device, check=False, effects=None):
    if len(args) != len(graph.inputs):
        raise TypeError(f"graph {graph.name!r} takes {len(graph.inputs)} inputs, "
                        f"got {len(args)}")
    env = {id(t): a for t, a in zip(graph.inputs, args)}
    node = None
    try:
        for node in graph.nodes:
            if node.op == "Placeholder":
                continue
            values = [env[id(t)] for t in node.inputs]
            outs = _eval(node, values, device, check, effects)
            for t, v in zip(node.outputs, outs):
                if check:
                    _check(node, t, v, device)
                env[id(t)] = v
    except Exception as exc:
        errors.close_bars()   # (progress bars its loops opened)
        # name the node that raised and the user's line that made it (the innermost graph
        # names it: a node inside a branch or loop body, not the cond/while_loop node)
        if node is not None:
            errors.locate_run_error(exc, _root(graph).name, node.name, node.op, node.origin)
        raise
    return [env[id(t)] for t in graph.outputs]


def _root(graph):
    while graph.parent is not None:
        graph = graph.parent
    return graph


def _check(node, t, value, device):
    if t.dtype == object:          # handles (TensorArray storage) have no array type
        return
    host = device.to_host(value)
    shape_ok = t.shape is None or (len(t.shape) == host.ndim and all(
        d is None or d == e for d, e in zip(t.shape, host.shape)))
    assert host.dtype == t.dtype and shape_ok, (
        f"node {node.name!r} ({node.op}) made a {host.dtype.name} array of shape "
        f"{host.shape}, but its tensor {t!r} says {t.dtype.name} {t.shape}")


def _eval(node, values, device, check=False, effects=None):
    """The output values of one node (a list, one per output). `effects(node, values)`, when
    given, runs each effectful primitive node instead (autodiff/replay.py journals them)."""
    op, attrs = node.op, node.attrs
    if op == "Const":
        return [device.to_device(attrs["value"])]
    if op == "cond":
        branch = attrs["true_graph"] if truth(values[0], device) else attrs["false_graph"]
        return _run(branch, values[1:], device, check, effects)
    if op == "while_loop":
        n = len(node.outputs)
        limit = attrs["maximum_iterations"]
        if limit == "input":
            limit, values = int(device.to_host(values[-1])), values[:-1]
        loop_vars, captured = values[:n], values[n:]
        count = 0
        try:
            while (limit is None or count < limit) and truth(
                    _run(attrs["cond_graph"], loop_vars + captured, device, check, effects)[0],
                    device):
                loop_vars = _run(attrs["body_graph"], loop_vars + captured, device, check,
                                 effects)
                count += 1
        except Exception as exc:   # say which iteration failed, and the loop's scalars then
            shown = errors.shown_variables(range(n), attrs["body_graph"].inputs[:n])
            errors.note_loop(exc, node.name, node.origin, count,
                             [(name, loop_vars[j]) for j, name in shown])
            raise
        return loop_vars
    if effects is not None and primitives.lookup(op).effectful:
        return effects(node, values)
    kernel = device.kernel(op, primitives.lookup(op).kernel)
    result = kernel(*values, **device_attrs(attrs, device))
    if len(node.outputs) == 1:
        return [result]
    return list(result) if node.outputs else []
