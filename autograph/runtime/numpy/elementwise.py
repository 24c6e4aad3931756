"""Elementwise NumPy (ufuncs) on symbolic tensors, and the operand rules every op shares.

NumPy decides the dtypes of an elementwise call from its operands (NEP 50: a Python scalar
is weak and adopts the array's dtype). Kernels of the array API standard do not promote
mixed dtypes the way NumPy does, and some take only numbers or only bools, so staging a
ufunc here asks NumPy for its loop dtypes (`np.ufunc.resolve_dtypes`, cached), casts each
tensor operand to its loop dtype with an `astype` node, and makes Python-scalar constants
directly in that dtype (no extra node). The kernel then sees exactly NumPy's loop types.
"""

import math

import numpy as np

from autograph.runtime.ir import dtypes, primitives, shapes
from autograph.runtime.ir.dtypes import BOOL, INT8
from autograph.runtime.ir.primitives import bind1, current_graph, register
from autograph.runtime.ir.tensor import Tensor

_PY_SCALARS = (bool, int, float, complex)
_SEQUENCES = (list, tuple)
_WEAK_KEY = dtypes.WEAK_TYPE


# -- operands -------------------------------------------------------------------------------

def _packing():
    """autograph.runtime.numpy.packing, imported when a list or tuple is an operand (a
    first call on arrays and scalars does without it)."""
    from autograph.runtime.numpy import packing
    return packing


def const(value, weak=False):
    """A Const node holding `value` (a NumPy array or scalar)."""
    return primitives.const(value, weak)


def operand_key(x):
    """(dtype key, weak) of an operand: a Tensor or anything NumPy can make an array of."""
    if isinstance(x, Tensor):
        return dtypes.key_of(x.dtype, x.weak), x.weak
    if isinstance(x, _SEQUENCES):   # [x, 1] holding a tensor: what np.array makes
        packing = _packing()
        if packing.contains_tensor(x):
            return packing.packed_dtype(x), False
    return dtypes.key_of_value(x)


def as_tensor(x, dtype=None):
    """`x` as a Tensor of the given dtype: tensors are cast (a weak one stays weak), other
    values become constants made directly in `dtype` (a Python scalar stays weak)."""
    if isinstance(x, Tensor):
        return x if dtype is None or x.dtype == dtype else cast(x, dtype, weak=x.weak)
    if isinstance(x, _SEQUENCES):   # a list holding tensors
        packing = _packing()
        if packing.contains_tensor(x):
            return packing.pack(x, dtype)
    weak = type(x) in _PY_SCALARS
    if dtype is None:
        dtype = dtypes.default_dtype(dtypes.key_of_value(x)[0])
    return primitives.const(x, weak, dtype=dtype)   # one array made: the Const's own copy


def cast(x, dtype, weak=False):
    """`x.astype(dtype)` as a graph node (no node when the dtype already matches)."""
    dtype = dtypes.as_dtype(dtype)
    if x.dtype == dtype and x.weak == weak:
        return x
    attrs = {"dtype": dtype, "weak": True} if weak else {"dtype": dtype}
    return bind1("astype", (x,), attrs)


def common(args):
    """Tensors for `args`, all of NumPy's result dtype (weak scalars promote per NEP 50).
    Returns (tensors, dtype, weak): weak when every operand is weak."""
    current_graph(args)
    keyed = [operand_key(a) for a in args]
    dtype = dtypes.result_type(tuple(k for k, _ in keyed))
    weak = all(w for _, w in keyed)
    return [as_tensor(a, dtype) for a in args], dtype, weak


def _astype_infer(x, *, dtype, weak=False):
    return [(dtype, x.shape, weak)]


def _astype_kernel(xp, x, *, dtype, weak=False):
    return xp.astype(x, dtype, copy=False)


register("astype", _astype_infer, _astype_kernel, doc="x.astype(dtype)")


def describe(args):
    """Operands as an error message names them (arrays by dtype and shape, not contents)."""
    def one(a):
        if isinstance(a, Tensor):
            return repr(a)
        if isinstance(a, np.ndarray):
            return f"a {a.dtype} array of shape {a.shape}"
        return f"{type(a).__name__} {a!r}"
    return ", ".join(one(a) for a in args)


# -- elementwise: NumPy ufuncs ---------------------------------------------------------------

# NumPy runs some arithmetic on bools that the array API only defines for numbers:
# on bools, add/maximum are logical_or and multiply/minimum are logical_and ...
_BOOL_AS = {"add": "logical_or", "maximum": "logical_or", "multiply": "logical_and",
            "minimum": "logical_and", "abs": "positive_bool", "positive": "positive_bool"}
# ... and every other loop on bools computes as on the numbers 0 and 1
_BOOL_NATIVE = {"logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
                "bitwise_or", "bitwise_xor", "bitwise_invert", "equal", "not_equal"}


class Elementwise:
    """A NumPy ufunc staged as the primitive `prim` (an array API function name).
    `inputs_as` forces the kernel's input dtype (bool for the logical functions, whose
    array API versions take only bools)."""

    __slots__ = ("ufunc", "prim", "inputs_as", "owner", "_plans", "_specs")

    def __init__(self, ufunc, prim, inputs_as=None, owner="numpy"):
        self.ufunc, self.prim, self.inputs_as = ufunc, prim, inputs_as
        self.owner = owner   # the module users know the ufunc from, for messages
        # tracing asks the same questions over and over: cache the answers
        self._plans = {}   # operand dtype keys -> (primitive, kernel input dtypes, out dtype)
        self._specs = {}   # (dtype, weak, shape) of each input -> infer's answer

    def prim_for(self, ins):
        """The primitive and input dtypes that compute NumPy's loop `ins` in the array API."""
        if ins[0] == BOOL and all(d == BOOL for d in ins):
            if self.prim in _BOOL_AS:
                return _BOOL_AS[self.prim], ins
            if self.prim not in _BOOL_NATIVE:
                return self.prim, (INT8,) * len(ins)
        return self.prim, ins

    def loop(self, keys, args=()):
        try:
            ins, outs = dtypes.resolve_ufunc(self.ufunc, keys)
        except TypeError as e:  # NumPy has no loop for these dtypes
            raise TypeError(f"{self.owner}.{self.ufunc.__name__} is not defined for "
                            f"{describe(args) or keys}: {e}") from None
        if self.inputs_as is not None:
            ins = (self.inputs_as,) * len(ins)
        return ins, outs

    def plan(self, keys, args=()):
        """(primitive, kernel input dtypes, NumPy's output dtype) for operands with `keys`."""
        plan = self._plans.get(keys)
        if plan is None:
            ins, outs = self.loop(keys, args)
            prim, ins = self.prim_for(ins)
            plan = self._plans[keys] = (prim, ins, outs[0])
        return plan

    def infer(self, *xs):
        if len(xs) == 2:
            a, b = xs
            sig = (a.dtype, a.weak, a.shape, b.dtype, b.weak, b.shape)
        else:
            sig = tuple([(x.dtype, x.weak, x.shape) for x in xs])
        spec = self._specs.get(sig)
        if spec is None:
            keys = tuple([dtypes.key_of(x.dtype, x.weak) for x in xs])
            out = self.loop(keys, xs)[1][0]
            weak = out != BOOL and all(x.weak for x in xs)
            try:
                shape = shapes.broadcast(*[x.shape for x in xs])
            except ValueError as e:
                raise ValueError(f"{self.owner}.{self.ufunc.__name__}: {e}: "
                                 f"{describe(xs)}") from None
            spec = ((out, shape, weak),)
            if len(self._specs) < 4096:
                self._specs[sig] = spec
        return spec

    def __call__(self, *args, strong=False):
        """Stage the ufunc on `args`. On weak operands only, the result is weak (like
        Python's `1 + 2`) unless `strong`: a NumPy call (`np.add(1, 2)`) makes an array."""
        if len(args) != self.ufunc.nin:
            raise TypeError(f"{self.owner}.{self.ufunc.__name__} takes {self.ufunc.nin} "
                            f"argument(s), got {len(args)}")
        current_graph(args)   # a tensor used outside its trace: say so before making Consts
        keys = tuple([(_WEAK_KEY[a.dtype.kind] if a.weak else a.dtype)
                      if type(a) is Tensor else operand_key(a)[0] for a in args])
        prim, ins, out = self.plan(keys, args)
        if strong and all(a.weak if type(a) is Tensor else type(a) in _PY_SCALARS
                          for a in args):   # one strong input makes a strong result
            first = args[0]
            first = (cast(first, ins[0]) if type(first) is Tensor
                     else const(np.asarray(first, dtype=ins[0])))
            args = (first,) + args[1:]
        result = bind1(prim, [a if type(a) is Tensor and a.dtype is dt else as_tensor(a, dt)
                              for a, dt in zip(args, ins)])
        return result if result.dtype is out else cast(result, out)


UFUNCS = {}


def _elementwise(ufunc, prim=None, inputs_as=None, kernel=None):
    prim = prim or ufunc.__name__
    entry = Elementwise(ufunc, prim, inputs_as)
    register(prim, entry.infer, kernel or prim, doc=f"numpy.{ufunc.__name__}")
    UFUNCS[ufunc] = entry
    return entry


for _uf in (np.add, np.subtract, np.multiply, np.divide, np.floor_divide, np.remainder,
            np.maximum, np.minimum, np.hypot, np.logaddexp, np.copysign,
            np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
            np.bitwise_and, np.bitwise_or, np.bitwise_xor,
            np.negative, np.positive, np.exp, np.expm1, np.log, np.log1p, np.log2, np.log10,
            np.sqrt, np.square, np.sin, np.cos, np.tan, np.sinh, np.cosh, np.tanh,
            np.isnan, np.isfinite, np.isinf, np.sign, np.signbit, np.floor, np.ceil,
            np.trunc):
    _elementwise(_uf)
for _uf, _name in ((np.power, "pow"), (np.absolute, "abs"), (np.invert, "bitwise_invert"),
                   (np.left_shift, "bitwise_left_shift"), (np.right_shift, "bitwise_right_shift"),
                   (np.arcsin, "asin"), (np.arccos, "acos"), (np.arctan, "atan"),
                   (np.arcsinh, "asinh"), (np.arccosh, "acosh"), (np.arctanh, "atanh"),
                   (np.arctan2, "atan2"), (np.rint, "round"), (np.conjugate, "conj")):
    _elementwise(_uf, _name)
for _uf in (np.logical_and, np.logical_or, np.logical_xor, np.logical_not):
    _elementwise(_uf, inputs_as=BOOL)


# ufuncs outside the array API standard, composed from its functions
def _fmod(xp, a, b):   # C's remainder: the sign of the dividend (Python's % takes the divisor's)
    r = xp.remainder(a, b)
    return xp.where((r != 0) & ((a < 0) != (b < 0)), r - b, r)


def _fmax(xp, a, b):   # maximum that ignores NaNs
    return xp.where(xp.isnan(b), a, xp.where(xp.isnan(a), b, xp.maximum(a, b)))


def _fmin(xp, a, b):
    return xp.where(xp.isnan(b), a, xp.where(xp.isnan(a), b, xp.minimum(a, b)))


for _uf, _kernel in ((np.fmod, _fmod), (np.fmax, _fmax), (np.fmin, _fmin),
                     (np.exp2, lambda xp, x: 2.0 ** x),
                     (np.deg2rad, lambda xp, x: x * (math.pi / 180.0)),
                     (np.rad2deg, lambda xp, x: x * (180.0 / math.pi))):
    _elementwise(_uf, kernel=_kernel)
UFUNCS[np.radians], UFUNCS[np.degrees] = UFUNCS[np.deg2rad], UFUNCS[np.rad2deg]


register("positive_bool", lambda x: [(x.dtype, x.shape, x.weak)], lambda xp, x: x,
         doc="abs/positive of bools: the value itself")


def ufunc(uf, *args, strong=False):
    """Stage NumPy ufunc `uf` called on `args` (at least one of them a Tensor). `strong`:
    called as a NumPy function, so the result is an array even of weak operands."""
    entry = UFUNCS.get(uf)
    if entry is None and type(uf) is np.ufunc and ufunc_owner(uf) == "scipy.special":
        from autograph.runtime.numpy import scipy_special   # SciPy's: registered on first use
        entry = scipy_special.staged(uf)
    if entry is None:
        if uf is np.matmul:   # a generalized ufunc: staged with the linear algebra
            from autograph.runtime.numpy.array_ops import matmul
            return matmul(*args)
        if uf is np.divmod:   # two outputs: two primitives
            return (ufunc(np.floor_divide, *args, strong=strong),
                    ufunc(np.remainder, *args, strong=strong))
        raise NotImplementedError(
            f"autograph cannot trace {ufunc_name(uf)} on symbolic tensors yet; "
            "express it with supported NumPy functions (autograph.runtime.numpy.dispatch."
            "supported() lists them), or run this part outside the traced function")
    return entry(*args, strong=strong)


def ufunc_owner(uf):
    """The module users know ufunc `uf` from: "numpy", "scipy.special", or None for another
    library's ufunc (messages never say numpy.expit)."""
    if getattr(np, uf.__name__, None) is uf:
        return "numpy"
    from autograph.runtime.numpy import scipy_special
    return scipy_special.owner(uf)


def ufunc_name(uf):
    """`uf` as messages name it: numpy.add, scipy.special.expit, or the ufunc 'f' (not
    NumPy's) for one of another library."""
    owner = ufunc_owner(uf)
    return f"{owner}.{uf.__name__}" if owner else f"the ufunc {uf.__name__!r} (not NumPy's)"


# -- reverse-mode rules (adjoint.py: broadcasting, dtypes, the complex convention) ------------

def _unary(derivative, reads="x"):
    """The rule of y = f(x): ct * derivative(x, y). `reads` names what the derivative
    uses, so the rule touches only that primal ("x", "y" or "xy")."""
    def rule(cts, node):
        from autograph.runtime.numpy.adjoint import fit, ins
        x = ins(node)[0]
        if x.dtype.kind not in "fc":
            return [None]
        a = x.value if "x" in reads else None
        y = node.outputs[0] if "y" in reads else None
        return [fit(derivative(cts[0], a, y), x)]
    return rule


def _binary(da, db, reads="ab"):
    """The rule of y = f(a, b): ct * da(...) and ct * db(...), summed over broadcasting.
    `da`/`db` take (ct, a, b, y) and may be None (no cotangent for that operand)."""
    def rule(cts, node):
        from autograph.runtime.numpy.adjoint import fit, ins, needs
        g, (ta, tb) = cts[0], ins(node)
        want_a = da is not None and ta.dtype.kind in "fc" and needs(node, 0)
        want_b = db is not None and tb.dtype.kind in "fc" and needs(node, 1)
        a = ta.value if "a" in reads and (want_a or want_b) else None
        b = tb.value if "b" in reads and (want_a or want_b) else None
        y = node.outputs[0] if "y" in reads and (want_a or want_b) else None
        return [fit(da(g, a, b, y), ta, (tb,)) if want_a else None,
                fit(db(g, a, b, y), tb, (ta,)) if want_b else None]
    return rule


def _max_share(g, a, b, first):
    """maximum/minimum: the cotangent goes to the operand that won (half each on a tie)."""
    win = (a > b) if first else (b > a)
    return np.where(win, g, np.where(a == b, g * 0.5, 0.0 * g))


def _fmax_share(g, a, b, first, less=False):
    """fmax/fmin: as maximum, but a NaN operand loses to a number."""
    mine, other = (a, b) if first else (b, a)
    beats = (mine < other) if less else (mine > other)
    win = np.logical_or(beats, np.logical_and(np.isnan(other), np.logical_not(np.isnan(mine))))
    return np.where(win, g, np.where(mine == other, g * 0.5, 0.0 * g))


def _abs_rule(g, x, y):
    if x.dtype.kind == "c":   # d|z| along dz is Re(conj(z) dz) / |z|
        return g * np.where(y == 0, 0.0 * x, np.conjugate(x) / np.where(y == 0, 1.0, y))
    return g * np.sign(x)


def _pow_a(g, a, b, y):
    return g * b * np.power(a, b - 1)


def _pow_b(g, a, b, y):
    safe = np.where(a == 0, 1.0 + 0.0 * a, a)   # 0 ** b is flat in b where it is finite
    return g * np.where(a == 0, 0.0 * y, y * np.log(safe))


_LN2, _LN10 = math.log(2.0), math.log(10.0)

_UNARY_RULES = {
    "negative": (lambda g, x, y: -g, ""),
    "positive": (lambda g, x, y: g, ""),
    "exp": (lambda g, x, y: g * y, "y"),
    "expm1": (lambda g, x, y: g * (y + 1.0), "y"),
    "exp2": (lambda g, x, y: g * y * _LN2, "y"),
    "log": (lambda g, x, y: g / x, "x"),
    "log1p": (lambda g, x, y: g / (x + 1.0), "x"),
    "log2": (lambda g, x, y: g / (x * _LN2), "x"),
    "log10": (lambda g, x, y: g / (x * _LN10), "x"),
    "sqrt": (lambda g, x, y: g * 0.5 / y, "y"),
    "square": (lambda g, x, y: g * (2.0 * x), "x"),
    "sin": (lambda g, x, y: g * np.cos(x), "x"),
    "cos": (lambda g, x, y: -g * np.sin(x), "x"),
    "tan": (lambda g, x, y: g * (1.0 + y * y), "y"),
    "sinh": (lambda g, x, y: g * np.cosh(x), "x"),
    "cosh": (lambda g, x, y: g * np.sinh(x), "x"),
    "tanh": (lambda g, x, y: g * (1.0 - y * y), "y"),
    "asin": (lambda g, x, y: g / np.sqrt(1.0 - x * x), "x"),
    "acos": (lambda g, x, y: -g / np.sqrt(1.0 - x * x), "x"),
    "atan": (lambda g, x, y: g / (1.0 + x * x), "x"),
    "asinh": (lambda g, x, y: g / np.sqrt(x * x + 1.0), "x"),
    "acosh": (lambda g, x, y: g / np.sqrt(x * x - 1.0), "x"),
    "atanh": (lambda g, x, y: g / (1.0 - x * x), "x"),
    "abs": (_abs_rule, "xy"),
    "conj": (lambda g, x, y: np.conjugate(g), ""),
    "deg2rad": (lambda g, x, y: g * (math.pi / 180.0), ""),
    "rad2deg": (lambda g, x, y: g * (180.0 / math.pi), ""),
}

_BINARY_RULES = {
    "add": (lambda g, a, b, y: g, lambda g, a, b, y: g, ""),
    "subtract": (lambda g, a, b, y: g, lambda g, a, b, y: -g, ""),
    "multiply": (lambda g, a, b, y: g * b, lambda g, a, b, y: g * a, "ab"),
    "divide": (lambda g, a, b, y: g / b, lambda g, a, b, y: -g * y / b, "by"),
    "remainder": (lambda g, a, b, y: g, lambda g, a, b, y: -g * np.floor_divide(a, b), "ab"),
    "fmod": (lambda g, a, b, y: g, lambda g, a, b, y: -g * np.trunc(a / b), "ab"),
    "maximum": (lambda g, a, b, y: _max_share(g, a, b, True),
                lambda g, a, b, y: _max_share(g, a, b, False), "ab"),
    "minimum": (lambda g, a, b, y: _max_share(g, -a, -b, True),
                lambda g, a, b, y: _max_share(g, -a, -b, False), "ab"),
    "fmax": (lambda g, a, b, y: _fmax_share(g, a, b, True),
             lambda g, a, b, y: _fmax_share(g, a, b, False), "ab"),
    "fmin": (lambda g, a, b, y: _fmax_share(g, a, b, True, less=True),
             lambda g, a, b, y: _fmax_share(g, a, b, False, less=True), "ab"),
    "hypot": (lambda g, a, b, y: g * a / y, lambda g, a, b, y: g * b / y, "aby"),
    "logaddexp": (lambda g, a, b, y: g * np.exp(a - y),
                  lambda g, a, b, y: g * np.exp(b - y), "aby"),
    "copysign": (lambda g, a, b, y: g * np.where(np.signbit(a) == np.signbit(b), 1.0, -1.0),
                 None, "ab"),
    "atan2": (lambda g, a, b, y: g * b / (a * a + b * b),
              lambda g, a, b, y: -g * a / (a * a + b * b), "ab"),
    "pow": (_pow_a, _pow_b, "aby"),
}

for _name, (_d, _reads) in _UNARY_RULES.items():
    primitives.defvjp(_name, _unary(_d, _reads))
for _name, (_da, _db, _reads) in _BINARY_RULES.items():
    primitives.defvjp(_name, _binary(_da, _db, _reads))


def _astype_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import cast_like, differentiable, ins, outs
    x = ins(node)[0]
    if not differentiable(x) or not differentiable(outs(node)[0]):
        return [None]
    return [cast_like(cts[0], x)]


primitives.defvjp("astype", _astype_vjp)
# piecewise constant, integer, boolean and comparison ufuncs: zero cotangents
primitives.nondifferentiable(
    "floor_divide", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert", "bitwise_left_shift",
    "bitwise_right_shift", "isnan", "isfinite", "isinf", "sign", "signbit", "floor", "ceil",
    "trunc", "round", "logical_and", "logical_or", "logical_xor", "logical_not",
    "positive_bool")
