"""`ag.vmap(fn, in_axes=0, out_axes=0)`: a function mapped over an axis of its arguments.

JAX's semantics: `in_axes` is an int, None, or a tuple with one entry per positional
argument, each a prefix of that argument's structure (lists, tuples, dicts) whose leaves
are an axis or None (that leaf is the same for every element: unbatched). Keyword
arguments are mapped over axis 0. `out_axes` is the same for the outputs. Every mapped
leaf must have the same length along its axis.

How: `fn` is traced once for ONE element (an `ag.function` of it, so its Python control
flow is converted and its trace cached like any), and that graph is transformed into the
batched graph (transform.py) inside the graph being built. Called eagerly, the whole is an
`ag.function` of its own: traced once per input signature, compiled, cached. So
`ag.function(ag.vmap(f))`, `ag.grad(ag.vmap(f))`, `ag.vmap(ag.grad(f))` and
`ag.vmap(ag.vmap(f))` compose as graphs do.
"""

import functools

import numpy as np

from autograph.runtime.ir import nest, primitives
from autograph.runtime.ir.graph import get_default_graph
from autograph.runtime.ir.tensor import Tensor
from autograph.batching import nested, refusals, rules  # noqa: F401  (rules register)
from autograph.batching.transform import BatchingError, Frame, batch_graph, materialize, size_of

def vmap(fn, in_axes=0, out_axes=0):
    """`fn` mapped over axis `in_axes` of its arguments; results stacked along `out_axes`."""
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if getattr(fn, "__ag_grad__", None) is not None:    # per-example gradients: of_grad.py
        from autograph.batching.of_grad import vmap_of_grad
        return vmap_of_grad(fn.__ag_grad__, in_axes, out_axes, vmap)
    name = getattr(fn, "__name__", "fn")
    per_element = []        # the ag.function tracing one element (made on first use)
    eager = []

    def element_function():
        if not per_element:
            from autograph.function import Function, function
            # a Function of the user's is traced privately: its traces for one element
            # while vmap runs (which may hold vmap_call nodes) stay out of its own cache
            per_element.append(function(fn.python_function, autograph=fn._autograph)
                               if isinstance(fn, Function) else function(fn))
        return per_element[0]

    def staged(*args, **kwargs):
        return _batched_call(element_function(), name, in_axes, out_axes, args, kwargs)

    staged.__name__ = f"vmap_{name}"

    def batched(*args, **kwargs):
        if get_default_graph() is not None:
            return staged(*args, **kwargs)
        if not eager:
            from autograph.function import function
            eager.append(function(staged, autograph=False))
        return eager[0](*args, **kwargs)

    try:
        functools.update_wrapper(batched, fn)
    except (AttributeError, TypeError):
        pass
    batched.__name__ = f"vmap_{name}"
    batched.__wrapped__ = fn
    return batched


def _check_axes_spec(spec, what):
    for leaf in nest.flatten(spec):
        if leaf is not None and not isinstance(leaf, (int, np.integer)):
            raise TypeError(f"vmap {what} must be ints or None (or a structure of them), "
                            f"got {leaf!r}")


def _leaf_axes(spec, tree, what):
    """The axis of every leaf of `tree`, from `spec` (an axis, None, or a prefix of `tree`)."""
    if spec is None or isinstance(spec, (int, np.integer)):
        return [None if spec is None else int(spec)] * len(nest.flatten(tree))
    if not nest.is_nested(tree) or type(spec) is not type(tree) and not (
            isinstance(spec, (list, tuple)) and isinstance(tree, (list, tuple))):
        raise ValueError(f"vmap {what} {spec!r} does not match the structure of the value "
                         f"{nest.describe(tree)}: it must be a prefix of it")
    kids, specs = nest.children(tree), nest.children(spec)
    if isinstance(spec, dict) and set(spec) != set(tree):
        raise ValueError(f"vmap {what} has keys {sorted(spec)} but the value has "
                         f"{sorted(tree)}")
    if len(kids) != len(specs):
        raise ValueError(f"vmap {what} {spec!r} has {len(specs)} entries but the value has "
                         f"{len(kids)}")
    out = []
    for s, k in zip(specs, kids):
        out.extend(_leaf_axes(s, k, what))
    return out


def _describe_arg(i, names):
    return f"argument {i}" + (f" ({names[i]})" if i < len(names) else "")


def _batched_call(traced, name, in_axes, out_axes, args, kwargs):
    from autograph.function.trace_type import TensorSpec
    if isinstance(in_axes, tuple):
        if len(in_axes) != len(args):
            raise ValueError(f"vmap in_axes {in_axes!r} has {len(in_axes)} entries but "
                             f"{name} was called with {len(args)} positional arguments")
        axes = [a for spec, arg in zip(in_axes, args) for a in _leaf_axes(spec, arg, "in_axes")]
    else:
        axes = _leaf_axes(in_axes, list(args), "in_axes")
    axes += [0] * len(nest.flatten(kwargs))
    leaves = nest.flatten([list(args), kwargs])
    owners = [i for i, arg in enumerate(args) for _ in nest.flatten(arg)] + \
        [f"keyword {k!r}" for k in sorted(kwargs) for _ in nest.flatten(kwargs[k])]
    specs, inputs, flags, size, first = [], [], [], None, None
    for leaf, axis, owner in zip(leaves, axes, owners):
        if axis is None:
            if isinstance(leaf, (Tensor, np.ndarray)) or hasattr(leaf, "read_value"):
                t = primitives.convert(leaf.read_value() if hasattr(leaf, "read_value") else leaf)
                specs.append(TensorSpec(t.shape, t.dtype))
                inputs.append(t)
                flags.append(False)
            else:
                specs.append(leaf)    # a Python value: part of the per-element trace key
            continue
        t = primitives.convert(leaf.read_value() if hasattr(leaf, "read_value") else leaf)
        where = owner if isinstance(owner, str) else f"argument {owner}"
        if t.shape is None:
            raise BatchingError(f"vmap: {where} of {name} has an unknown rank; its mapped "
                                "axis cannot be found")
        if not -len(t.shape) <= axis < len(t.shape):
            raise ValueError(f"vmap in_axes: axis {axis} is out of range for {where} of "
                             f"{name}, of shape {t.shape}")
        axis %= len(t.shape)
        if axis:
            t = np.moveaxis(t, axis, 0)
        n = t.shape[0]
        if n is not None:
            if size is not None and n != size:
                raise ValueError(
                    f"vmap got inconsistent sizes for the mapped axis: {first} of {name} has "
                    f"{size} elements, {where} has {n}")
            size, first = n, where
        elif first is None:
            first = where
        specs.append(TensorSpec(t.shape[1:], t.dtype))
        inputs.append(t)
        flags.append(True)
    if not any(flags):
        raise ValueError(f"vmap of {name}: in_axes must map at least one argument (every "
                         "one is None)")
    frame = Frame(size if size is not None else size_of(inputs[flags.index(True)]))
    spec_args, spec_kwargs = nest.pack_sequence_as([list(args), kwargs], specs)
    nested_call = nested.inside_element_trace()
    with nested.element_trace():
        conc = traced.get_concrete_function(*spec_args, **spec_kwargs)
    graph = conc.graph
    if len(graph.inputs) != len(inputs):
        raise RuntimeError(f"vmap: {len(graph.inputs)} graph inputs for {len(inputs)} values")
    if nested_call:        # inside an outer vmap's function: one node the outer batches
        outs = nested.call(graph, inputs, flags, frame)
    elif any(node.op in refusals.GRADIENT_STACKS for node in graph.walk()):
        outs = _one_lane_at_a_time(graph, inputs, flags, frame)
    else:
        outs = batch_graph(graph, inputs, flags, frame)
    by_id = {id(t): out for t, out in zip(graph.outputs, outs)}
    structure = conc.structured_outputs
    out_leaves = nest.flatten(structure)
    out_spec = _leaf_axes(out_axes, structure, "out_axes")
    result = []
    for k, (leaf, axis) in enumerate(zip(out_leaves, out_spec)):
        value, is_batched = by_id.get(id(leaf), (leaf, False))
        if axis is None:
            if is_batched:
                raise BatchingError(
                    f"vmap of {name}: output {k} depends on the mapped arguments, but its "
                    "out_axes entry is None (an unbatched output must be the same for every "
                    "element)")
            result.append(value)
            continue
        value = value if is_batched else materialize(frame, value)
        r = len(value.shape)
        if not -r <= axis < r:
            raise ValueError(f"vmap out_axes: axis {axis} is out of range for output {k} "
                             f"of {name}, of rank {r - 1} per element")
        result.append(np.moveaxis(value, 0, axis % r) if axis % r else value)
    return nest.pack_sequence_as(structure, result)


def _one_lane_at_a_time(graph, inputs, flags, frame):
    """A graph holding a gradient's per-iteration stacks (the gradient of a loop) has no
    batched form here: it runs once per lane in a staged loop, its outputs stacked
    (lanes.py). Correct, and as fast as a loop of calls of the compiled gradient."""
    from autograph.batching.lanes import lane_loop

    def per_lane(lane):
        return [t for t, _ in batch_graph(graph, lane, [False] * len(lane), Frame(1))]
    return lane_loop(frame, _Outputs(graph.outputs), inputs, flags, per_lane)


class _Outputs:
    """What lane_loop reads of a node: its outputs (here a graph's)."""

    def __init__(self, outputs):
        self.outputs = outputs
        self.op, self.name, self.origin = "graph", "graph", None
