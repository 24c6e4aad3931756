"""Export a traced function to ONNX, for users who deploy outside Python.

    import autograph as ag
    model = ag.onnx.export(step, "step.onnx")       # a Function traced once, or a ConcreteFunction

The traced (optimized) graph is lowered node by node: `cond` becomes an ONNX `If`,
`while_loop` a `Loop`, a TensorArray an ONNX sequence, a Variable an initializer holding
its value at export time. The model passes `onnx.checker`. A primitive with no ONNX
mapping, or one that changes state (assigning a Variable, drawing random numbers,
printing), is refused with an error naming it and the user's line that made it.

Needs the optional extra `onnx` (`pip install -e '.[onnx]'`); `onnxruntime` runs the
result. See docs/onnx.md.
"""

from autograph.onnx.export import export, to_model  # noqa: F401
