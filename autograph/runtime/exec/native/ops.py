"""The primitives `jit_compile=True` lowers, as Numba-typed Python expressions.

Each entry turns one node into one expression over the names of its inputs, using only
what Numba compiles in nopython mode (its supported subset of NumPy: ufuncs on scalars and
arrays, full reductions, `np.where`, creation functions, basic indexing, joins, reshapes).
A primitive missing here, or an entry answering None for a node's attrs or dtypes, cannot
be lowered: `jit_compile=True` then raises `NativeLoweringError` naming the operation and
the user's line (TensorFlow's contract), never falls back silently.

Dtypes are the graph's, exactly. Numba widens small integer scalars to 64 bits and boxes
scalars as Python numbers, so a node with a 0-d output is wrapped in its dtype's
constructor (`np.int32(a + b)`): the value wraps where NumPy's does, and loop variables
keep one type across iterations. Array results follow NumPy's ufunc loops in Numba too;
the graph has already cast every operand to the result dtype (NEP 50 is decided while
tracing), so no rule here promotes.
"""

import numpy as np

from autograph.runtime.exec.native.selections import RULES as _SELECTIONS

# ufunc-like primitives: primitive -> the NumPy function Numba implements
_UFUNCS = {
    "abs": "abs", "acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
    "atan": "arctan", "atanh": "arctanh", "atan2": "arctan2", "ceil": "ceil", "cos": "cos",
    "cosh": "cosh", "deg2rad": "deg2rad", "exp": "exp", "exp2": "exp2", "expm1": "expm1",
    "floor": "floor", "hypot": "hypot", "isfinite": "isfinite", "isinf": "isinf",
    "isnan": "isnan", "log": "log", "log10": "log10", "log1p": "log1p", "log2": "log2",
    "logaddexp": "logaddexp", "maximum": "maximum", "minimum": "minimum", "fmax": "fmax",
    "fmin": "fmin", "fmod": "fmod", "copysign": "copysign", "rad2deg": "rad2deg",
    "sign": "sign", "signbit": "signbit", "sin": "sin", "sinh": "sinh", "sqrt": "sqrt",
    "square": "square", "tan": "tan", "tanh": "tanh", "trunc": "trunc", "conj": "conjugate",
    "pow": "power", "divide": "true_divide", "floor_divide": "floor_divide",
    "remainder": "remainder", "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift",
}
# primitives that are Python operators in Numba on scalars and arrays alike
_OPERATORS = {"add": "+", "subtract": "-", "multiply": "*", "equal": "==",
              "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">",
              "greater_equal": ">=", "bitwise_and": "&", "bitwise_or": "|",
              "bitwise_xor": "^"}
_LOGICAL = {"logical_and": "logical_and", "logical_or": "logical_or",
            "logical_xor": "logical_xor"}
_FULL_REDUCTIONS = {"sum": "np.sum", "prod": "np.prod", "mean": "np.mean", "max": "np.max",
                    "min": "np.min", "any": "np.any", "all": "np.all",
                    "argmax": "np.argmax", "argmin": "np.argmin"}


def dtype_name(dtype):
    """`np.float64` for a dtype: the constructor Numba knows as that scalar type."""
    dtype = np.dtype(dtype)
    return "np.bool_" if dtype.kind == "b" else f"np.{dtype.name}"


def is_scalar(t):
    return t.shape == ()


def scalar_of(t, expr):
    """`expr` as a scalar of `t`'s dtype (`bool(...)` for booleans)."""
    if t.dtype.kind == "b":
        return f"bool({expr})"
    return f"{dtype_name(t.dtype)}({expr})"


def lower(node, ins):
    """The expression computing `node` (one output) from input names `ins`, or None when
    Numba cannot run it. Scalar outputs are converted to their exact dtype by the caller."""
    op, attrs = node.op, node.attrs
    out = node.outputs[0] if len(node.outputs) == 1 else None
    if out is None or out.shape is None:
        return None
    rule = _RULES.get(op)
    if rule is not None:
        return rule(node, ins, attrs)
    if op in _OPERATORS and len(ins) == 2 and not _has_attrs(attrs):
        return f"({ins[0]} {_OPERATORS[op]} {ins[1]})"
    if op in _UFUNCS and not _has_attrs(attrs):
        return f"np.{_UFUNCS[op]}({', '.join(ins)})"
    if op in _LOGICAL and len(ins) == 2:
        if all(is_scalar(t) for t in node.inputs):
            return f"(bool({ins[0]}) {_LOGICAL_SCALAR[op]} bool({ins[1]}))"
        return f"np.{_LOGICAL[op]}({ins[0]}, {ins[1]})"
    return None


_LOGICAL_SCALAR = {"logical_and": "and", "logical_or": "or", "logical_xor": "!="}


def _has_attrs(attrs):
    return bool(attrs)


def _negative(node, ins, attrs):
    return f"(-{ins[0]})"


def _positive(node, ins, attrs):
    return ins[0]


def _not(node, ins, attrs):
    if is_scalar(node.inputs[0]):
        return f"(not {ins[0]})"
    return f"np.logical_not({ins[0]})"


def _invert(node, ins, attrs):
    if node.inputs[0].dtype.kind == "b":
        return _not(node, ins, attrs)
    return f"np.invert({ins[0]})"


def _astype(node, ins, attrs):
    dtype = np.dtype(attrs["dtype"])
    if is_scalar(node.outputs[0]):
        return ins[0]          # the caller's scalar conversion is the cast
    if dtype.kind == "c" or node.inputs[0].dtype.kind == "c":
        return None
    return f"{ins[0]}.astype({dtype_name(dtype)})"


def _extremum(ufunc):
    """maximum/minimum with Numba's arguments swapped: of two equal values NumPy returns
    the second and Numba the first, which differ in the sign of a zero
    (`np.maximum(-0.0, 0.0)` is `0.0`). NaN propagates from either side in both."""
    def rule(node, ins, attrs):
        if attrs or len(ins) != 2:
            return None
        return f"np.{ufunc}({ins[1]}, {ins[0]})"
    return rule


def _where(node, ins, attrs):
    if all(is_scalar(t) for t in node.inputs):
        return f"({ins[1]} if {ins[0]} else {ins[2]})"
    if not all(len(t.shape) == len(node.outputs[0].shape) for t in node.inputs):
        return None            # Numba's where does not broadcast across ranks
    return f"np.where({', '.join(ins)})"


def _reduction(node, ins, attrs):
    x, out = node.inputs[0], node.outputs[0]
    axis = attrs.get("axis")
    if isinstance(axis, int):
        axis = (axis,)
    ndim = len(x.shape)
    full = axis is None or sorted(a % max(ndim, 1) for a in axis) == list(range(ndim))
    if attrs.get("dtype") not in (None, out.dtype):
        return None
    if full:
        if attrs.get("keepdims"):
            return None
        if not x.shape and node.op in ("argmax", "argmin"):
            return "0"
        return f"{_FULL_REDUCTIONS[node.op]}({ins[0]})"
    # one axis of several: Numba's np.sum takes an axis (the mean divides it by the count)
    if len(axis) != 1 or node.op not in ("sum", "mean") or x.dtype != out.dtype or \
            x.dtype.kind not in "fc" and node.op == "mean":
        return None
    k = axis[0] % ndim
    expr = f"np.sum({ins[0]}, axis={k})"
    if node.op == "mean":
        expr = f"({expr} / {ins[0]}.shape[{k}])"
    if attrs.get("keepdims"):
        expr = f"np.expand_dims({expr}, {k})"
    return expr


def _matmul(node, ins, attrs):
    a, b = node.inputs
    if a.dtype.kind not in "fc" or len(a.shape) > 2 or len(b.shape) > 2 or \
            not a.shape or not b.shape:
        return None            # Numba's np.dot: BLAS floats, 1-D and 2-D only
    # np.dot wants C or F order: `ins` are lower.blas_operand's (made contiguous there,
    # where native/layout.py does not know them C-ordered already)
    return f"np.dot({ins[0]}, {ins[1]})"


def index_bound(v, dyn):
    """A slice bound of an encoded index as Numba source (`dyn`: names of its dynamic values)."""
    if v is None:
        return ""
    if isinstance(v, tuple):
        return f"int({dyn[v[1]]})"
    return repr(int(v))


def basic_index_item(item, dyn):
    """One item of an encoded index (runtime.numpy.indexing.encode_index) as Numba source,
    `dyn` the names of its dynamic values; None for an index array or a mask."""
    tag = item[0]
    if tag == "i":
        return repr(int(item[1]))
    if tag == "d":
        return f"int({dyn[item[1]]})"
    if tag == "n":
        return "None"
    if tag == "e":
        return "..."
    if tag == "s":
        start, stop, step = (index_bound(v, dyn) for v in item[1:])
        return f"{start}:{stop}" + (f":{step}" if step else "")
    return None


def _getitem(node, ins, attrs):
    key = [basic_index_item(item, ins[1:]) for item in attrs["index"]]
    if None in key:
        return None
    if not key:
        return ins[0]
    return f"{ins[0]}[{', '.join(key)}]"


def _static_shape(t):
    return t.shape is not None and all(isinstance(d, int) for d in t.shape)


def _reshaped(node, ins, attrs):
    """reshape / squeeze / expand_dims to a shape known when compiling."""
    out = node.outputs[0]
    if len(node.inputs) != 1:
        return None
    if not _static_shape(out):
        # reshape(x, (-1,)) and the like: one length counted when the graph runs
        shape = attrs.get("shape") if node.op == "reshape" else None
        if shape is None or not shape or not all(isinstance(d, int) for d in shape):
            return None
        return f"np.ascontiguousarray({ins[0]}).reshape({tuple(shape)!r})"
    if not out.shape:
        return f"{ins[0]}.ravel()[0]" if node.inputs[0].shape else ins[0]
    if not node.inputs[0].shape:
        return f"np.full({out.shape!r}, {ins[0]})"
    return f"np.ascontiguousarray({ins[0]}).reshape({out.shape!r})"


def _run_shape(spec, ins):
    """A shape spec (ints and ("d", j): the j-th input's value) as a Numba tuple."""
    items = [str(d) if isinstance(d, int) else f"int({ins[d[1]]})" for d in spec]
    return "(" + "".join(f"{item}, " for item in items) + ")"


def _fill(value):
    def rule(node, ins, attrs):
        out = node.outputs[0]
        if ins and out.shape and value(attrs) is not None:   # lengths known at run time
            return (f"np.full({_run_shape(attrs['shape'], ins)}, {value(attrs)}, "
                    f"{dtype_name(out.dtype)})")
        if ins or not _static_shape(out) or not out.shape:
            return None if ins or not _static_shape(out) else f"{value(attrs)}"
        return f"np.full({out.shape!r}, {value(attrs)}, {dtype_name(out.dtype)})"
    return rule


def _full_value(attrs):
    v = attrs["fill_value"]
    return repr(v.item() if isinstance(v, np.generic) else v) if isinstance(
        v, (bool, int, float, np.generic)) and np.isfinite(v) else None


def _full(node, ins, attrs):
    if _full_value(attrs) is None:
        return None
    return _fill(_full_value)(node, ins, attrs)


def _like(value):
    def rule(node, ins, attrs):
        out = node.outputs[0]
        fill = value(attrs)
        if fill is None:
            return None
        if is_scalar(out):
            return fill
        shape = f"{ins[0]}.shape" if "shape" not in attrs else repr(tuple(attrs["shape"]))
        if "shape" in attrs and not _static_shape(out):
            return None
        return f"np.full({shape}, {fill}, {dtype_name(out.dtype)})"
    return rule


def _arange(node, ins, attrs):
    dtype = np.dtype(attrs["dtype"])
    if dtype.kind not in "iuf" or len(ins) != 3:
        return None
    cast = "float" if dtype.kind == "f" else "int"
    expr = f"np.arange({', '.join(f'{cast}({i})' for i in ins)})"
    natural = np.dtype(np.float64 if dtype.kind == "f" else np.int64)
    return expr if dtype == natural else f"{expr}.astype({dtype_name(dtype)})"


def _round(node, ins, attrs):
    if attrs:
        return None
    if node.inputs[0].dtype.kind in "iub":
        return ins[0]
    return f"np.rint({ins[0]})"


def _join(fn):
    def rule(node, ins, attrs):
        if fn == "stack" and all(is_scalar(t) for t in node.inputs):
            out = node.outputs[0]       # scalars: a 1-D array of them
            return f"np.array(({''.join(i + ', ' for i in ins)}), {dtype_name(out.dtype)})"
        if any(is_scalar(t) for t in node.inputs):
            return None
        return f"np.{fn}(({', '.join(ins)},), axis={int(attrs['axis'])})"
    return rule


def _broadcast_to(node, ins, attrs):
    out = node.outputs[0]
    if not _static_shape(out):
        return None
    if is_scalar(out):
        return ins[0]
    if is_scalar(node.inputs[0]):
        return f"np.full({out.shape!r}, {ins[0]})"
    # a writable copy: Numba types broadcast views read-only, which would not unify with
    # the writable arrays a loop variable or branch result holds elsewhere
    return f"np.broadcast_to({ins[0]}, {out.shape!r}).copy()"


def _sum_to_shape(node, ins, attrs):
    """The transpose of broadcasting (gradient rules stage it): sums over the leading axes
    and the axes `shape` broadcasts along, one `np.sum(axis=k)` each; static shapes only."""
    x, out = node.inputs[0], node.outputs[0]
    if len(node.inputs) != 1 or not _static_shape(x) or not _static_shape(out):
        return None
    target = out.shape
    if not x.shape:
        return ins[0]
    if not target:
        return f"np.sum({ins[0]})"
    lead = len(x.shape) - len(target)
    axes = list(range(lead)) + [lead + i for i, d in enumerate(target)
                                if d == 1 and x.shape[lead + i] != 1]
    if not axes and x.shape == target:
        return ins[0]
    expr = ins[0]
    for a in sorted(axes, reverse=True):
        expr = f"np.sum({expr}, axis={a})"
    return f"np.ascontiguousarray({expr}).reshape({target!r})"


def _shape_of(node, ins, attrs):
    ndim = len(node.inputs[0].shape)
    if ndim == 0:
        return "np.empty(0, np.int64)"
    return f"np.array(({''.join(f'{ins[0]}.shape[{k}], ' for k in range(ndim))}), np.int64)"


def _size_of(node, ins, attrs):
    return f"{ins[0]}.size" if node.inputs[0].shape else "1"


def _permute(node, ins, attrs):
    """`x.T` when the axes reverse (every 2-D transpose): the same view, where Numba's
    `np.transpose(x, axes)` compiles an axes check costing seconds per process."""
    axes = tuple(attrs["axes"])
    if not axes:
        return ins[0]
    if axes == tuple(range(len(axes)))[::-1]:
        return f"{ins[0]}.T"
    return f"np.transpose({ins[0]}, {axes!r})"


def _clip(node, ins, attrs):
    x, bounds = ins[0], list(ins[1:])
    if "min" in attrs["which"]:
        x = f"np.maximum({x}, {bounds.pop(0)})"
    if "max" in attrs["which"]:
        x = f"np.minimum({x}, {bounds.pop(0)})"
    return x


def _integer_division(operator, ufunc):
    """`x % c` / `x // c` for integer scalars and a constant divisor other than 0 and -1:
    then Python's operators in Numba give NumPy's results (floored, the divisor's sign)
    and compile to a plain machine division, several times cheaper per iteration than
    the ufunc; any other divisor keeps the ufunc (NumPy's 0 for x // 0, and MIN // -1
    wraps instead of trapping)."""
    def rule(node, ins, attrs):
        if attrs:
            return None
        x, y = node.inputs
        if is_scalar(x) and is_scalar(y) and x.dtype.kind in "iu" and y.dtype == x.dtype \
                and y.node.op == "Const" and int(y.node.attrs["value"]) not in (0, -1):
            return f"({ins[0]} {operator} {ins[1]})"
        return f"np.{ufunc}({', '.join(ins)})"
    return rule


_RULES = {
    "remainder": _integer_division("%", "remainder"),
    "floor_divide": _integer_division("//", "floor_divide"),
    "negative": _negative, "positive": _positive, "positive_bool": _positive,
    "logical_not": _not, "bitwise_invert": _invert,
    "maximum": _extremum("maximum"), "minimum": _extremum("minimum"),
    "astype": _astype, "Cast": _astype, "where": _where, "matmul": _matmul,
    "getitem": _getitem, "reshape": _reshaped, "squeeze": _reshaped,
    "expand_dims": _reshaped,
    "zeros": _fill(lambda attrs: "0"), "ones": _fill(lambda attrs: "1"), "full": _full,
    "zeros_like": _like(lambda attrs: "0"), "ones_like": _like(lambda attrs: "1"),
    "full_like": _like(_full_value), "range": _arange, "arange": _arange, "round": _round,
    "concat": _join("concatenate"), "stack": _join("stack"), "permute_dims": _permute,
    "clip": _clip, "broadcast_to": _broadcast_to, "shape_of": _shape_of, "size_of": _size_of, "sum_to_shape": _sum_to_shape,
    **{name: _reduction for name in _FULL_REDUCTIONS},
    **_SELECTIONS,
}
