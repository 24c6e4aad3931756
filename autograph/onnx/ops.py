"""One ONNX lowering per primitive: `RULES[op](builder, node, input_names) -> output name(s)`.

NumPy's promotion is already decided in the graph (each node's output dtype), but ONNX
operators want operands of one type: arithmetic casts its operands to the output dtype,
comparisons to the operands' common dtype. Where NumPy and ONNX differ in meaning the
rule spells NumPy's out: floor division and remainder round toward minus infinity,
`not_equal` is `Not(Equal)`, `expm1`/`log1p` are composed (a few ulps from NumPy's).
"""

import numpy as np

from autograph.onnx.values import Unsupported, onnx_dtype, value_info

RULES = {}


def rule(*names):
    def add(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return add


def _operands(b, node, ins, dtype):
    return [b.cast(n, t.dtype, dtype) for n, t in zip(ins, node.inputs)]


def _common(node):
    strong = [t.dtype for t in node.inputs if not t.weak] or [t.dtype for t in node.inputs]
    return np.result_type(*strong)


# -- elementwise ---------------------------------------------------------------------------

_UNARY = {"abs": "Abs", "negative": "Neg", "sqrt": "Sqrt", "exp": "Exp", "log": "Log",
          "sin": "Sin", "cos": "Cos", "tan": "Tan", "tanh": "Tanh", "sinh": "Sinh",
          "cosh": "Cosh", "asin": "Asin", "acos": "Acos", "atan": "Atan", "asinh": "Asinh",
          "acosh": "Acosh", "atanh": "Atanh", "floor": "Floor", "ceil": "Ceil", "sign": "Sign",
          "round": "Round", "logical_not": "Not", "bitwise_invert": "BitwiseNot",
          "isnan": "IsNaN", "Identity": "Identity", "positive": "Identity",
          "positive_bool": "Identity"}

for _name, _op in _UNARY.items():
    def _unary(b, node, ins, _op=_op):
        if _op in ("IsNaN", "Identity", "Not", "BitwiseNot"):
            return b.emit(_op, ins)
        return b.emit(_op, _operands(b, node, ins, node.outputs[0].dtype))
    RULES[_name] = _unary


@rule("isinf")
def _isinf(b, node, ins):
    if node.inputs[0].dtype.kind != "f":     # integers and bools are never infinite
        x = ins[0]
        return b.emit("Not", [b.emit("Equal", [x, x])])
    return b.emit("IsInf", ins)


@rule("isfinite")
def _isfinite(b, node, ins):
    x = ins[0]
    if node.inputs[0].dtype.kind != "f":
        return b.emit("Equal", [x, x])
    return b.emit("Not", [b.emit("Or", [b.emit("IsNaN", [x]), b.emit("IsInf", [x])])])


@rule("square")
def _square(b, node, ins):
    x, = _operands(b, node, ins, node.outputs[0].dtype)
    return b.emit("Mul", [x, x])


@rule("expm1")
def _expm1(b, node, ins):
    dtype = node.outputs[0].dtype
    x, = _operands(b, node, ins, dtype)
    return b.emit("Sub", [b.emit("Exp", [x]), b.const(1, dtype)])


@rule("log1p", "log2", "log10")
def _logs(b, node, ins):
    dtype = node.outputs[0].dtype
    x, = _operands(b, node, ins, dtype)
    if node.op == "log1p":
        return b.emit("Log", [b.emit("Add", [x, b.const(1, dtype)])])
    base = {"log2": 2.0, "log10": 10.0}[node.op]
    return b.emit("Div", [b.emit("Log", [x]), b.const(np.log(base), dtype)])


@rule("trunc")
def _trunc(b, node, ins):
    x, = _operands(b, node, ins, node.outputs[0].dtype)
    return b.emit("Mul", [b.emit("Sign", [x]), b.emit("Floor", [b.emit("Abs", [x])])])


_BINARY = {"add": "Add", "subtract": "Sub", "multiply": "Mul", "divide": "Div",
           "pow": "Pow", "maximum": "Max", "minimum": "Min", "logical_and": "And",
           "logical_or": "Or", "logical_xor": "Xor", "bitwise_and": "BitwiseAnd",
           "bitwise_or": "BitwiseOr", "bitwise_xor": "BitwiseXor", "matmul": "MatMul"}

for _name, _op in _BINARY.items():
    def _binary(b, node, ins, _op=_op):
        return b.emit(_op, _operands(b, node, ins, node.outputs[0].dtype))
    RULES[_name] = _binary


_COMPARE = {"equal": "Equal", "less": "Less", "less_equal": "LessOrEqual",
            "greater": "Greater", "greater_equal": "GreaterOrEqual"}

for _name, _op in _COMPARE.items():
    def _compare(b, node, ins, _op=_op):
        return b.emit(_op, _operands(b, node, ins, _common(node)))
    RULES[_name] = _compare


@rule("not_equal")
def _not_equal(b, node, ins):
    return b.emit("Not", [b.emit("Equal", _operands(b, node, ins, _common(node)))])


@rule("remainder", "floor_divide")
def _floor_ops(b, node, ins):
    """NumPy rounds toward minus infinity: a % b takes b's sign, a // b = floor(a / b)."""
    dtype = node.outputs[0].dtype
    x, y = _operands(b, node, ins, dtype)
    if dtype.kind in "iu":
        mod = b.emit("Mod", [x, y], fmod=0)              # the sign of the divisor, as NumPy
        if node.op == "remainder":
            return mod
        return b.emit("Div", [b.emit("Sub", [x, mod]), y])  # exact: x - mod is a multiple
    quotient = b.emit("Floor", [b.emit("Div", [x, y])])
    if node.op == "floor_divide":
        return quotient
    return b.emit("Sub", [x, b.emit("Mul", [quotient, y])])


@rule("fmod")
def _fmod(b, node, ins):
    return b.emit("Mod", _operands(b, node, ins, node.outputs[0].dtype), fmod=1)


@rule("where")
def _where(b, node, ins):
    dtype = node.outputs[0].dtype
    cond = b.cast(ins[0], node.inputs[0].dtype, bool)
    x = b.cast(ins[1], node.inputs[1].dtype, dtype)
    y = b.cast(ins[2], node.inputs[2].dtype, dtype)
    return b.emit("Where", [cond, x, y])


@rule("clip")
def _clip(b, node, ins):
    dtype = node.outputs[0].dtype
    parts = _operands(b, node, ins, dtype)
    out = parts[0]
    if len(parts) > 1:
        out = b.emit("Max", [out, parts[1]])
    if len(parts) > 2:
        out = b.emit("Min", [out, parts[2]])
    return out


@rule("astype", "Cast")
def _astype(b, node, ins):
    return b.cast(ins[0], node.inputs[0].dtype, node.outputs[0].dtype) \
        if node.inputs[0].dtype != node.outputs[0].dtype else b.emit("Identity", ins)


@rule("Const")
def _const(b, node, ins):
    return b.const(node.attrs["value"])


# -- reductions ----------------------------------------------------------------------------

_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin",
           "prod": "ReduceProd"}


def _axes_input(b, axis):
    if axis is None:
        return []
    axis = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return [b.const(np.array(axis, np.int64))]


@rule(*_REDUCE)
def _reduce(b, node, ins):
    axis = node.attrs.get("axis")
    if axis is not None and not isinstance(axis, (int, np.integer)) and len(axis) == 0:
        return b.cast(ins[0], node.inputs[0].dtype, node.outputs[0].dtype)
    dtype = node.outputs[0].dtype
    x = b.cast(ins[0], node.inputs[0].dtype, dtype)
    keep = int(bool(node.attrs.get("keepdims", False)))
    return b.emit(_REDUCE[node.op], [x] + _axes_input(b, axis), keepdims=keep)


@rule("any", "all")
def _any_all(b, node, ins):
    axis = node.attrs.get("axis")
    keep = int(bool(node.attrs.get("keepdims", False)))
    x = b.cast(ins[0], node.inputs[0].dtype, bool)
    x = b.emit("Cast", [x], to=_onnx(np.int64))
    op = "ReduceMax" if node.op == "any" else "ReduceMin"
    return b.emit("Cast", [b.emit(op, [x] + _axes_input(b, axis), keepdims=keep)],
                  to=_onnx(bool))


@rule("argmax", "argmin")
def _arg(b, node, ins):
    axis = node.attrs.get("axis")
    keep = int(bool(node.attrs.get("keepdims", False)))
    x = ins[0]
    if axis is None:
        x, axis = b.emit("Reshape", [x, b.const(np.array([-1], np.int64))]), 0
    op = "ArgMax" if node.op == "argmax" else "ArgMin"
    return b.emit(op, [x], axis=int(axis), keepdims=keep, select_last_index=0)


def _onnx(dtype):
    return onnx_dtype(dtype)


# -- shapes, joins, creation ---------------------------------------------------------------

def _shape_input(b, node, spec, dims_from=0):
    """A 1-D int64 ONNX value for a shape spec whose entries are ints or ("d", j)."""
    if all(not isinstance(d, tuple) for d in spec):
        return b.const(np.array(spec, np.int64))
    parts = []
    for d in spec:
        if isinstance(d, tuple):
            t = node.inputs[dims_from + d[1]]
            v = b.cast(b.value(t), t.dtype, np.int64)
            parts.append(b.emit("Reshape", [v, b.const(np.array([1], np.int64))]))
        else:
            parts.append(b.const(np.array([d], np.int64)))
    return b.emit("Concat", parts, axis=0)


@rule("reshape")
def _reshape(b, node, ins):
    return b.emit("Reshape", [ins[0], _shape_input(b, node, node.attrs["shape"], 1)])


@rule("permute_dims")
def _transpose(b, node, ins):
    return b.emit("Transpose", ins, perm=list(node.attrs["axes"]))


@rule("expand_dims")
def _unsqueeze(b, node, ins):
    axis = node.attrs["axis"]
    axis = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return b.emit("Unsqueeze", [ins[0], b.const(np.array(axis, np.int64))])


@rule("squeeze")
def _squeeze(b, node, ins):
    axis = node.attrs.get("axis")
    return b.emit("Squeeze", [ins[0]] + _axes_input(b, axis))


@rule("concat")
def _concat(b, node, ins):
    dtype = node.outputs[0].dtype
    return b.emit("Concat", _operands(b, node, ins, dtype), axis=int(node.attrs["axis"]))


@rule("stack")
def _stack(b, node, ins):
    dtype = node.outputs[0].dtype
    axis = b.const(np.array([node.attrs["axis"]], np.int64))
    parts = [b.emit("Unsqueeze", [x, axis]) for x in _operands(b, node, ins, dtype)]
    return b.emit("Concat", parts, axis=int(node.attrs["axis"]))


@rule("zeros", "ones", "full")
def _fill(b, node, ins):
    dtype = node.attrs["dtype"]
    value = {"zeros": 0, "ones": 1}.get(node.op, node.attrs.get("fill_value"))
    from onnx import numpy_helper
    shape = _shape_input(b, node, node.attrs["shape"])
    return b.emit("ConstantOfShape", [shape],
                  value=numpy_helper.from_array(np.array([value], dtype=dtype)))


@rule("arange")
def _arange(b, node, ins):
    dtype = node.attrs["dtype"]
    return b.emit("Range", _operands(b, node, ins, dtype))


RULES["range"] = _arange


# -- indexing ------------------------------------------------------------------------------

_BIG = np.iinfo(np.int64).max


@rule("getitem")
def _getitem(b, node, ins):
    """Basic indexing: ints (static or run-time) gather, slices slice, None adds an axis."""
    x, shape = ins[0], node.inputs[0].shape
    index = node.attrs["index"]
    if shape is None:
        raise Unsupported(node, "indexing an array of unknown rank")
    consumed = sum(1 for it in index if it[0] in "isd")
    axis = 0

    def scalar(bound):
        if isinstance(bound, tuple):
            t = node.inputs[1 + bound[1]]
            return b.emit("Reshape", [b.cast(ins[1 + bound[1]], t.dtype, np.int64),
                                      b.const(np.array([1], np.int64))])
        return b.const(np.array([bound], np.int64))

    for item in index:
        tag = item[0]
        if tag == "n":
            x = b.emit("Unsqueeze", [x, b.const(np.array([axis], np.int64))])
            axis += 1
        elif tag == "e":
            axis += len(shape) - consumed
        elif tag in "id":
            k = b.const(np.int64(item[1])) if tag == "i" else \
                b.cast(ins[1 + item[1]], node.inputs[1 + item[1]].dtype, np.int64)
            x = b.emit("Gather", [x, k], axis=axis)
        elif tag == "s":
            start, stop, step = item[1:]
            step = 1 if step is None else step
            if isinstance(step, tuple):
                raise Unsupported(node, "a slice step known only at run time")
            if start is None:
                start = 0 if step > 0 else _BIG
            if stop is None:
                stop = _BIG if step > 0 else -_BIG - 1
            x = b.emit("Slice", [x, scalar(start), scalar(stop),
                                 b.const(np.array([axis], np.int64)),
                                 b.const(np.array([step], np.int64))])
            axis += 1
        else:
            raise Unsupported(node, f"an index of kind {tag!r}")
    return b.emit("Identity", [x]) if x == ins[0] else x


@rule("take")
def _take(b, node, ins):
    axis = node.attrs.get("axis")
    x = ins[0]
    if axis is None:
        x, axis = b.emit("Reshape", [x, b.const(np.array([-1], np.int64))]), 0
    k = b.cast(ins[1], node.inputs[1].dtype, np.int64)
    return b.emit("Gather", [x, k], axis=int(axis))


# -- state: Variables are initializers; nothing may change them ----------------------------

@rule("read_variable")
def _read_variable(b, node, ins):
    from onnx import numpy_helper
    variable = node.attrs["variable"]()
    if variable is None:
        raise Unsupported(node, "a Variable that no longer exists")
    name = b.model.variables.get(id(variable))
    if name is None:
        name = b.model.fresh(node.attrs.get("name") or "variable")
        value = np.asarray(variable.numpy() if hasattr(variable, "numpy") else variable.value)
        b.model.initializers.append(numpy_helper.from_array(value, name))
        b.model.variables[id(variable)] = name
    return b.emit("Identity", [name])


# -- TensorArray handles as ONNX sequences -------------------------------------------------

@rule("ta_new")
def _ta_new(b, node, ins):
    dtype = b.model.handle_dtypes.get(node.outputs[0])
    if dtype is None:
        raise Unsupported(node, "a TensorArray that is never written")
    return b.emit("SequenceEmpty", [], dtype=_onnx(dtype))


@rule("ta_write")
def _ta_write(b, node, ins):
    """Replace element i, or append when i is the length (past it: onnxruntime fails)."""
    from onnx import helper
    seq, i, v = ins
    i = b.cast(i, node.inputs[1].dtype, np.int64)
    v = b.cast(v, node.inputs[2].dtype, b.model.handle_dtypes.get(node.inputs[0]))
    length = b.emit("SequenceLength", [seq])
    inside = b.emit("Less", [i, length])
    out_t = node.outputs[0]
    then_out, else_out = b.model.fresh("replaced"), b.model.fresh("appended")
    erased = b.model.fresh("erased")
    then_g = helper.make_graph(
        [helper.make_node("SequenceErase", [seq, i], [erased]),
         helper.make_node("SequenceInsert", [erased, v, i], [then_out])],
        b.model.fresh("replace"), [], [value_info(b.model, out_t, then_out)])
    else_g = helper.make_graph(
        [helper.make_node("SequenceInsert", [seq, v, i], [else_out])],
        b.model.fresh("append"), [], [value_info(b.model, out_t, else_out)])
    return b.emit("If", [inside], then_branch=then_g, else_branch=else_g, base="ta")


@rule("ta_read")
def _ta_read(b, node, ins):
    return b.emit("SequenceAt", [ins[0], b.cast(ins[1], node.inputs[1].dtype, np.int64)])


@rule("ta_stack")
def _ta_stack(b, node, ins):
    if node.inputs[0] in b.model.stacked:      # a loop's scan output: stacked already
        return b.emit("Identity", ins)
    return b.emit("ConcatFromSequence", [ins[0]], axis=0, new_axis=1)


@rule("ta_concat")
def _ta_concat(b, node, ins):
    return b.emit("ConcatFromSequence", [ins[0]], axis=0, new_axis=0)


@rule("ta_unstack")
def _ta_unstack(b, node, ins):
    return b.emit("SplitToSequence", [ins[1]], axis=0, keepdims=0)


@rule("ta_pop")
def _ta_pop(b, node, ins):
    """list.pop(i) (runtime/list_edits.py): the element, and the sequence without it."""
    i = b.cast(ins[1], node.inputs[1].dtype, np.int64)
    return [b.emit("SequenceAt", [ins[0], i]), b.emit("SequenceErase", [ins[0], i])]


@rule("ta_insert")
def _ta_insert(b, node, ins):
    seq, i, v = ins
    v = b.cast(v, node.inputs[2].dtype, b.model.handle_dtypes.get(node.inputs[0]))
    return b.emit("SequenceInsert", [seq, v, b.cast(i, node.inputs[1].dtype, np.int64)])


@rule("ta_nonempty")
def _ta_nonempty(b, node, ins):
    # (ONNX raises nothing: stacking an empty sequence fails in the runtime instead)
    return b.emit("Identity", ins)


@rule("ta_size")
def _ta_size(b, node, ins):
    return b.cast(b.emit("SequenceLength", [ins[0]]), np.int64, node.outputs[0].dtype)


@rule("shape_of")
def _shape_of(b, node, ins):
    return b.emit("Shape", ins)


@rule("size_of")
def _size_of(b, node, ins):
    return b.emit("Size", ins)
