"""`export`: pick the concrete function, lower its graph, write the model file."""

from autograph.errors import describe_origin
from autograph.onnx import lower


class ExportError(ValueError):
    """The graph holds something ONNX cannot express (the message says what and where)."""


def _concrete(fn):
    from autograph.function.concrete import ConcreteFunction
    if isinstance(fn, ConcreteFunction):
        return fn
    traces = getattr(fn, "_traces", None)
    if traces is None:
        raise TypeError(f"ag.onnx.export takes an ag.function or a ConcreteFunction, "
                        f"not {type(fn).__name__}")
    if fn.input_signature is not None:
        return fn.get_concrete_function()
    concretes = list(dict.fromkeys(traces.values()))
    if len(concretes) == 1:
        return concretes[0]
    what = "has not been traced yet" if not concretes else \
        f"has {len(concretes)} traces, and an ONNX model holds one"
    raise ValueError(
        f"ag.onnx.export: {fn.__name__} {what}. Pass one ConcreteFunction: "
        f"ag.onnx.export({fn.__name__}.get_concrete_function(ag.TensorSpec(...), ...), path), "
        "or give the function an input_signature.")


def to_model(fn, opset=18):
    """The onnx.ModelProto for `fn` (an ag.function traced once, or a ConcreteFunction)."""
    import onnx
    concrete = _concrete(fn)
    graph = concrete._graph_to_run()
    if not graph.outputs:
        raise ExportError(
            f"ag.onnx.export: {concrete.name} returns no arrays (its results are Python values "
            "fixed when it was traced), and an ONNX model needs at least one output.")
    try:
        proto = lower.lower_function(graph, concrete.name, opset)
    except lower.Unsupported as e:
        where = describe_origin(e.node.origin) if e.node.origin else "an unknown line"
        raise ExportError(
            f"ag.onnx.export: cannot export {concrete.name}: {e.why} (primitive "
            f"{e.node.op!r}, node {e.node.name!r}, made at {where}).") from None
    model = onnx.helper.make_model(
        proto, opset_imports=[onnx.helper.make_opsetid("", opset)],
        producer_name="autograph", producer_version=_version())
    model.ir_version = min(model.ir_version, 9)   # readable by the onnxruntime releases we test
    onnx.checker.check_model(model, full_check=True)
    return model


def export(fn, path=None, opset=18):
    """Lower `fn` to an ONNX model, check it, write it to `path` (if given), return it."""
    if opset < 18:
        raise ValueError(f"ag.onnx.export needs opset 18 or newer (reductions take axes as "
                         f"inputs there), not {opset}")
    model = to_model(fn, opset)
    if path is not None:
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
    return model


def _version():
    try:
        from importlib.metadata import version
        return version("numpy-autograph")
    except Exception:   # running from a source tree that was never installed
        return "0"


__all__ = ["export", "to_model", "ExportError"]
