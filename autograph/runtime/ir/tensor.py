"""The symbolic Tensor: an output of a graph node, with a dtype and a static shape.

A Tensor stands for an array that will exist when the graph runs. NumPy's dispatch
protocols (`__array_ufunc__`, `__array_function__`) and Python's operators turn what users
write (`np.tanh(x)`, `x @ w`, `x[i]`, `x + 1`) into new graph nodes, so the same code runs
eagerly on arrays and symbolically while tracing.

`shape` is a tuple whose entries are ints or None (unknown), or None for an unknown rank.
`weak` marks a tensor made from a Python scalar (or computed from such ones with Python
operators, as `1 + 2` is still a Python int): like a Python scalar under NEP 50, it adopts
the dtype of the array it meets. NumPy calls (`np.add`, `np.where`, ...) make strong
results, as they make arrays in NumPy.
"""

import importlib
import sys

import numpy as np

from autograph.runtime.ir import nest


class _Lazy:
    """Stands for a module of the NumPy surface until first use (it builds on primitives
    and graph, which import this one, so it cannot be imported at the top); then the
    module replaces it under its global name. Python's operators need only the
    elementwise family (`_ew`); NumPy's dispatch (`_ops`, autograph.runtime.numpy.dispatch)
    loads every family, which a first call that uses none of them does not pay for."""

    def __init__(self, global_name, module):
        self._global, self._module = global_name, module

    def __getattr__(self, name):
        module = importlib.import_module(self._module)
        globals()[self._global] = module
        return getattr(module, name)


_ops = _Lazy("_ops", "autograph.runtime.numpy.dispatch")
_ew = _Lazy("_ew", "autograph.runtime.numpy.elementwise")

# right-hand operands a Tensor operator accepts; anything else gets NotImplemented, so
# that Python falls back (`t == None` is False, `t + "a"` a TypeError from Python)
_OPERANDS = (int, float, complex, bool, np.ndarray, np.generic, list, tuple)


_ORDERING = ("lt", "gt", "le", "ge")


_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
            "pow": "**", "matmul": "@", "and": "&", "or": "|", "xor": "^", "lshift": "<<",
            "rshift": ">>"}


def _unknown_length(self, name):
    """`x.shape[0] > n` or `t * x.shape[0]` where the length is unknown while tracing
    (None): say so, instead of Python's "unsupported operand type(s)"."""
    verb = "compare None with" if name in _ORDERING else \
        f"apply `{_SYMBOLS.get(name, name)}` to None and"
    raise TypeError(
        f"Cannot {verb} the tensor {self!r}: None is probably a length "
        f"from x.shape that is unknown while tracing (a dimension that changes in a loop, or "
        f"a None in a TensorSpec). Use len(x) or np.size(x, axis), which give the length "
        f"when the graph runs.{where(' At ')}")


def _binary(ufunc, name):
    # `t == None` stays False and `t != None` True (Python's fallback); every other
    # operator refuses a None operand by name
    none_refused = name not in ("eq", "ne")

    def op(self, other):
        if not isinstance(other, _ACCEPTED):
            if other is None and none_refused:
                _unknown_length(self, name)
            return NotImplemented
        return _ew.ufunc(ufunc, self, other)

    def rop(self, other):
        if not isinstance(other, _ACCEPTED):
            if other is None and none_refused:
                _unknown_length(self, name)
            return NotImplemented
        return _ew.ufunc(ufunc, other, self)
    op.__name__, rop.__name__ = f"__{name}__", f"__r{name}__"
    return op, rop


def _unary(ufunc, name):
    def op(self):
        return _ew.ufunc(ufunc, self)
    op.__name__ = f"__{name}__"
    return op


def _live(t):
    return t.node.graph.live_value(t)


def _outside_traces():
    from autograph.runtime.ir.graph import get_default_graph
    return get_default_graph() is None


def _lived(x):
    """`x` with tensors of live graphs replaced by their values."""
    return nest.map_structure(lambda v: _live(v) if isinstance(v, Tensor) and v.node.graph.live
                              else v, x)


class Tensor:
    __slots__ = ("node", "index", "dtype", "shape", "weak", "__weakref__")

    # NumPy defers to us in mixed operations (ndarray + Tensor -> Tensor.__radd__)
    __array_priority__ = 1000

    def __init__(self, node, index, dtype, shape, weak=False):
        self.node = node
        self.index = index
        # made for every node output: skip the conversions when given the right types
        self.dtype = dtype if isinstance(dtype, np.dtype) else np.dtype(dtype)
        self.shape = shape if shape is None or type(shape) is tuple else tuple(shape)
        self.weak = weak

    @property
    def graph(self):
        return self.node.graph

    @property
    def op(self):
        return self.node

    @property
    def name(self):
        return f"{self.node.name}:{self.index}"

    @property
    def ndim(self):
        if self.shape is None:
            raise_symbolic(self, "ndim", "its rank is unknown while tracing; "
                                         "give the argument a TensorSpec with a known rank")
        return len(self.shape)

    def __repr__(self):
        shape = "<unknown>" if self.shape is None else _shape_str(self.shape)
        if self.node.graph.live:   # (an eager tape's tensor has its value: show it, as TF does)
            return (f'Tensor("{self.name}", shape={shape}, dtype={self.dtype.name}, '
                    f'numpy={_live(self)!r})')
        return f'Tensor("{self.name}", shape={shape}, dtype={self.dtype.name})'

    # -- Python protocols that need a concrete value ----------------------------------------
    # (a tensor of a live graph, an eager GradientTape's, has its value already: _live)

    def __bool__(self):
        if self.node.graph.live:
            return bool(_live(self))
        raise_symbolic(self, "bool()", "its truth value is only known when the graph runs. "
                       "Use it in an `if`/`while` inside an autograph function (converted code "
                       "turns those into cond/while_loop), or use ag.cond / np.where")

    def __index__(self):
        if self.node.graph.live:
            return _live(self).__index__()
        raise_symbolic(self, "as a Python int", "its value is only known when the graph "
                       "runs. Use it in array operations instead; loop with `range(n)` inside "
                       "an autograph-converted function or with ag.range(n); a shape or a "
                       "list index must be a Python int while tracing (pass it as a Python "
                       "int argument)")

    def __float__(self):
        if self.node.graph.live:
            return float(_live(self))
        raise_symbolic(self, "float()", "use .astype(np.float64) to convert inside the graph")

    def __int__(self):
        if self.node.graph.live:
            return int(_live(self))
        raise_symbolic(self, "int()", "use .astype(np.int64) to convert inside the graph")

    def __hash__(self):
        return id(self)

    # -- NumPy's dispatch protocols -----------------------------------------------------------

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        for x in inputs:   # another library's array type (e.g. ag.Variable) handles itself
            if type(x) is not Tensor and hasattr(type(x), "__array_ufunc__") \
                    and not isinstance(x, (np.ndarray, np.generic)):
                return NotImplemented
        if self.node.graph.live and _outside_traces():   # after an eager tape's block
            return getattr(ufunc, method)(*_lived(inputs), **_lived(kwargs))
        return _ops.ufunc_method(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        for t in types:
            if not issubclass(t, (Tensor, np.ndarray)):
                return NotImplemented
        if self.node.graph.live and _outside_traces():
            return func(*_lived(args), **_lived(kwargs))
        return _ops.array_function(func, args, kwargs)

    def __array_namespace__(self, *, api_version=None):
        """The array API namespace of staged operations (autograph.runtime.numpy.array_api):
        SciPy, scikit-learn and array-api-extra code that asks a tensor for its namespace
        traces through. Eager arrays keep NumPy's namespace."""
        from autograph.runtime.numpy import array_api
        return array_api.array_namespace(self, api_version)

    @property
    def device(self):
        return "cpu"   # the array API's device: the graph runs where its Function puts it

    def to_device(self, device, /, *, stream=None):
        from autograph.runtime.numpy import array_api
        array_api._device(device)
        return self

    def __array__(self, dtype=None, copy=None):
        if self.node.graph.live:
            return np.asarray(_live(self), dtype=dtype)
        raise_symbolic(self, "as a NumPy array", "its value is only known when the graph "
                       "runs. Use NumPy functions on it (they build graph nodes; in converted "
                       "code, np.array([...]) and list displays given to NumPy functions are "
                       "packed for you, elsewhere combine tensors with np.stack(values)); to "
                       "collect values in a tensor loop use ag.TensorArray (ta = ta.write(i, "
                       "value)); return it from the traced function to get its value")

    # -- operators ----------------------------------------------------------------------------

    __add__, __radd__ = _binary(np.add, "add")
    __sub__, __rsub__ = _binary(np.subtract, "sub")
    _mul, _rmul = _binary(np.multiply, "mul")

    def __mul__(self, other):
        if isinstance(other, (list, tuple)):
            _check_repeat(self, other)
        return self._mul(other)

    def __rmul__(self, other):
        if isinstance(other, (list, tuple)):
            _check_repeat(self, other)
        return self._rmul(other)
    __truediv__, __rtruediv__ = _binary(np.divide, "truediv")
    __floordiv__, __rfloordiv__ = _binary(np.floor_divide, "floordiv")
    __mod__, __rmod__ = _binary(np.remainder, "mod")
    _pow, __rpow__ = _binary(np.power, "pow")

    def __pow__(self, other):
        if type(other) is int and other == 2:   # like ndarray: x ** 2 is np.square(x)
            return _ew.ufunc(np.square, self)
        return self._pow(other)
    __matmul__, __rmatmul__ = _binary(np.matmul, "matmul")
    __and__, __rand__ = _binary(np.bitwise_and, "and")
    __or__, __ror__ = _binary(np.bitwise_or, "or")
    __xor__, __rxor__ = _binary(np.bitwise_xor, "xor")
    __lshift__, __rlshift__ = _binary(np.left_shift, "lshift")
    __rshift__, __rrshift__ = _binary(np.right_shift, "rshift")
    __lt__, __gt__ = _binary(np.less, "lt")[0], _binary(np.greater, "gt")[0]
    __le__, __ge__ = _binary(np.less_equal, "le")[0], _binary(np.greater_equal, "ge")[0]
    __eq__, __ne__ = _binary(np.equal, "eq")[0], _binary(np.not_equal, "ne")[0]
    __neg__ = _unary(np.negative, "neg")
    __pos__ = _unary(np.positive, "pos")
    __abs__ = _unary(np.absolute, "abs")
    __invert__ = _unary(np.invert, "invert")

    # augmented assignment: a new tensor, as Python's fallback makes, but refused where a
    # library's `view += y` would change another array in NumPy (array_api_writes.inplace)
    def __iadd__(self, other):
        return _inplace(self, other, "__add__", "+")

    def __isub__(self, other):
        return _inplace(self, other, "__sub__", "-")

    def __imul__(self, other):
        return _inplace(self, other, "__mul__", "*")

    def __itruediv__(self, other):
        return _inplace(self, other, "__truediv__", "/")

    def __ifloordiv__(self, other):
        return _inplace(self, other, "__floordiv__", "//")

    def __imod__(self, other):
        return _inplace(self, other, "__mod__", "%")

    def __ipow__(self, other):
        return _inplace(self, other, "__pow__", "**")

    def __imatmul__(self, other):
        return _inplace(self, other, "__matmul__", "@")

    def __iand__(self, other):
        return _inplace(self, other, "__and__", "&")

    def __ior__(self, other):
        return _inplace(self, other, "__or__", "|")

    def __ixor__(self, other):
        return _inplace(self, other, "__xor__", "^")

    def __ilshift__(self, other):
        return _inplace(self, other, "__lshift__", "<<")

    def __irshift__(self, other):
        return _inplace(self, other, "__rshift__", ">>")

    def __round__(self, ndigits=None):
        return _ops.round_(self, ndigits or 0)

    def __divmod__(self, other):
        return self // other, self % other

    def __rdivmod__(self, other):
        return other // self, other % self

    # -- indexing, length, iteration ----------------------------------------------------------

    def __getitem__(self, key):
        return _ops.getitem(self, key)

    def __contains__(self, value):
        raise_symbolic(self, "with `in`", "membership is only known when the graph runs; "
                       "use np.any(x == value)")

    def __format__(self, spec):
        if not spec:
            return repr(self)
        raise_symbolic(self, f"in a format string ({spec!r})", "its value is only known "
                       "when the graph runs; use ag.print(x) to print it on every run")

    def __copy__(self):
        return self   # tensors are immutable: a copy is the tensor itself

    def __deepcopy__(self, memo):
        return self

    def __setitem__(self, key, value):
        if from_library(1):
            from autograph.runtime.numpy import array_api_writes
            # array API code (SciPy, array-api-extra's `at`) writes into arrays it made
            array_api_writes.setitem(self, key, value)
            return
        tape = (" An eager GradientTape runs your code unconverted: differentiate it with "
                "ag.grad, or record it inside an ag.function, whose converted code turns "
                "x[i] = v into a new value." if self.node.graph.live else "")
        raise TypeError(
            f"Cannot assign to an element of the symbolic tensor {self!r}: tensors are "
            "immutable while tracing. Build the new value instead, e.g. with np.where(mask, "
            f"new, x), np.concatenate, or collect elements in an ag.TensorArray.{tape}")

    def __len__(self):
        if self.shape is None or (self.shape and self.shape[0] is None):
            what = "its rank" if self.shape is None else "its first dimension"
            raise_symbolic(self, "with len()", f"{what} is unknown while tracing. Use "
                           "np.shape(x) / x.shape for the known dimensions, or give the "
                           "argument a TensorSpec with a known first dimension")
        if not self.shape:
            raise TypeError(f"len() of unsized object: {self!r} is a scalar (0-d) tensor")
        return self.shape[0]

    def __iter__(self):
        if self.shape is None or (self.shape and self.shape[0] is None):
            if getattr(self.node, "op", None) == "range":   # the user loops over ag.range
                raise_symbolic(self, "in a Python iteration", "the number of elements "
                               "is unknown while tracing (a range over a tensor: ag.range, "
                               "or range() of a tensor). Only a `for` statement in code autograph "
                               "converts runs over it in the graph (as a while_loop); a "
                               "comprehension or generator expression, and code autograph "
                               "does not convert (autograph=False, @ag.do_not_convert, a "
                               "library function), iterate in Python. Write the loop as a "
                               "`for` statement in converted code")
            raise_symbolic(self, "in a Python iteration", "the number of elements is unknown "
                           "while tracing. Write the `for` loop inside an autograph-converted "
                           "function (it becomes a while_loop), or loop over ag.range(n)")
        if not self.shape:
            raise TypeError(f"iteration over a 0-d tensor: {self!r}")
        return (self[i] for i in range(self.shape[0]))

    # -- NumPy's array attributes and methods ------------------------------------------------

    @property
    def T(self):
        return self if self.ndim < 2 else _ops.transpose(self)

    @property
    def mT(self):
        axes = list(range(self.ndim))
        axes[-2:] = axes[-1], axes[-2]
        return _ops.transpose(self, axes)

    @property
    def size(self):
        return _ops.size(self)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return _ops.FUNCTIONS[np.reshape](self, shape, order)

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = axes[0]
        return _ops.transpose(self, axes or None)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return _ops.cast(self, dtype)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return _ops.FUNCTIONS[np.sum](self, axis, dtype, out, keepdims, **kw)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return _ops.FUNCTIONS[np.prod](self, axis, dtype, out, keepdims, **kw)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return _ops.FUNCTIONS[np.mean](self, axis, dtype, out, keepdims, **kw)

    def max(self, axis=None, out=None, keepdims=False, **kw):
        return _ops.FUNCTIONS[np.max](self, axis, out, keepdims, **kw)

    def min(self, axis=None, out=None, keepdims=False, **kw):
        return _ops.FUNCTIONS[np.min](self, axis, out, keepdims, **kw)

    def any(self, axis=None, out=None, keepdims=False, **kw):
        return _ops.FUNCTIONS[np.any](self, axis, out, keepdims, **kw)

    def all(self, axis=None, out=None, keepdims=False, **kw):
        return _ops.FUNCTIONS[np.all](self, axis, out, keepdims, **kw)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        return _ops.FUNCTIONS[np.argmax](self, axis, out, keepdims=keepdims)

    def argmin(self, axis=None, out=None, *, keepdims=False):
        return _ops.FUNCTIONS[np.argmin](self, axis, out, keepdims=keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return _ops.FUNCTIONS[np.var](self, axis, dtype, out, ddof, keepdims, **kw)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return _ops.FUNCTIONS[np.std](self, axis, dtype, out, ddof, keepdims, **kw)

    def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
        return _ops.argsort(self, axis)

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        raise TypeError(f"{self!r}.sort() sorts in place, but tensors are immutable while "
                        "tracing; use x = np.sort(x) instead")

    def cumsum(self, axis=None, dtype=None, out=None):
        return _ops.FUNCTIONS[np.cumsum](self, axis, dtype, out)

    def cumprod(self, axis=None, dtype=None, out=None):
        return _ops.FUNCTIONS[np.cumprod](self, axis, dtype, out)

    def clip(self, min=None, max=None, out=None, **kw):
        return _ops.FUNCTIONS[np.clip](self, min, max, out, **kw)

    # methods of the NumPy coverage (issue 12): each is its NumPy function
    def conj(self):
        return np.conjugate(self)

    conjugate = conj

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return _ops.FUNCTIONS[np.diagonal](self, offset, axis1, axis2)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return _ops.FUNCTIONS[np.trace](self, offset, axis1, axis2, dtype, out)

    def nonzero(self):
        return _ops.FUNCTIONS[np.nonzero](self)

    def searchsorted(self, v, side="left", sorter=None):
        return _ops.FUNCTIONS[np.searchsorted](self, v, side, sorter)

    def swapaxes(self, axis1, axis2):
        return _ops.FUNCTIONS[np.swapaxes](self, axis1, axis2)

    def compress(self, condition, axis=None, out=None):
        return _ops.FUNCTIONS[np.compress](condition, self, axis, out)

    def round(self, decimals=0, out=None):
        return _ops.FUNCTIONS[np.round](self, decimals, out)

    def dot(self, b, out=None):
        return _ops.FUNCTIONS[np.dot](self, b, out)

    def repeat(self, repeats, axis=None):
        return _ops.repeat(self, repeats, axis)

    @property
    def real(self):
        return _ops.real(self)

    @property
    def imag(self):
        return _ops.imag(self)

    def squeeze(self, axis=None):
        return _ops.squeeze(self, axis)

    def flatten(self, order="C"):
        return _ops.ravel(self)

    def ravel(self, order="C"):
        return _ops.ravel(self)

    def take(self, indices, axis=None, out=None, mode="raise"):
        return _ops.FUNCTIONS[np.take](self, indices, axis, out, mode)

    def copy(self, order="C"):
        """A new tensor of the same value (an Identity node): a name bound to the copy is
        not an alias of this tensor (see the alias warning of item updates)."""
        from autograph.runtime.ir import primitives
        return primitives.bind1("Identity", [self])

    def __getattr__(self, name):
        # only reached for names Tensor lacks: say whether NumPy arrays have it
        if not name.startswith("__") and hasattr(np.ndarray, name):
            raise AttributeError(
                f"numpy.ndarray.{name} is not supported on the symbolic tensor {self!r} "
                "while tracing (autograph.runtime.numpy.dispatch.supported() lists what is)")
        raise AttributeError(f"'Tensor' object has no attribute {name!r}")

    def item(self, *args):
        raise_symbolic(self, "with .item()", "its value is only known when the graph runs; "
                       "keep it a tensor, or return it from the traced function")

    def tolist(self):
        raise_symbolic(self, "with .tolist()", "its value is only known when the graph runs; "
                       "return it from the traced function to get its value")


_ACCEPTED = (Tensor,) + _OPERANDS


# array API libraries whose in-place writes into tensors are followed (array_api_writes)
LIBRARIES = ("scipy", "sklearn", "array_api_extra", "array_api_compat")


def from_library(depth):
    """Whether the frame `depth` levels above the caller belongs to one of LIBRARIES (the
    caller of Tensor.__setitem__ / __iadd__: checked without importing anything)."""
    name = sys._getframe(depth + 1).f_globals.get("__name__")
    return isinstance(name, str) and name.partition(".")[0] in LIBRARIES


def _inplace(x, other, method, symbol):
    if not isinstance(other, _ACCEPTED):
        return NotImplemented
    if from_library(2):   # (_inplace <- Tensor.__iadd__ <- the library's `x += y`)
        from autograph.runtime.numpy import array_api_writes
        array_api_writes.check_inplace(x, symbol)
    elif user_inplace_check is not None:
        user_inplace_check(x, sys._getframe(2), symbol)
    return getattr(x, method)(other)   # what Python's fallback `x = x + other` runs


def _check_repeat(tensor, seq):
    """`[0.0] * n` with a scalar tensor `n`: Python repeats the list n times when n is an
    int (len(x), a NumPy integer), NumPy multiplies element-wise when n is a 0-d array.
    While tracing the count is unknown, and guessing would make a list of the wrong
    length, so a scalar (or unknown-rank) tensor times a list is refused; a tensor with
    axes multiplies element-wise, as NumPy does."""
    if tensor.shape is not None and tensor.shape != ():
        return
    kind = type(seq).__name__
    raise SymbolicTensorError(
        f"Cannot repeat a Python {kind} by the symbolic tensor {tensor!r} (`{kind} * n`): "
        f"the count is only known when the graph runs (a len() of an unknown dimension is "
        f"one), so the {kind}'s length cannot be known while tracing. For n copies of a "
        f"value make an array: np.full(n, value) or np.zeros(n) (n may be a tensor); for "
        f"element-wise multiplication write np.asarray(values) * n."
        f"{where(' At ')}")


def _shape_str(shape):
    dims = ", ".join("None" if d is None else str(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


class SymbolicTensorError(TypeError):
    """A symbolic tensor was used where Python needs a concrete value."""


def _no_location(prefix):
    return ""


# where(prefix) -> " at file.py:12 (`source`)" for the user's innermost line, or "": the
# compiler (autograph.operators, through .location) installs it; the runtime knows no files
where = _no_location


def set_locator(fn):
    global where
    where = fn


# user_inplace_check(x, frame, symbol): what `x op= y` in code that is not a library's also
# runs, with that code's frame; the compiler (autograph.operators) installs a check that
# warns where another name would see NumPy's in-place write (the runtime knows no names)
user_inplace_check = None


def set_user_inplace_check(fn):
    global user_inplace_check
    user_inplace_check = fn


# context_note() -> why the code running now is not converted, with its line, or "": the
# compiler (autograph.operators.unconverted) installs it; its text replaces the usual
# advice (write it in converted code), which such code could not follow
context_note = _no_location


def set_context_note(fn):
    global context_note
    context_note = fn


def raise_symbolic(tensor, what, fix):
    from autograph.runtime.ir import graph  # (lazily: graph imports this module)
    if graph.get_default_graph() is None and getattr(tensor, "node", None) is not None:
        # no trace is running: the tensor leaked out of the one that made it
        raise SymbolicTensorError(f"Cannot use the symbolic tensor {tensor!r} {what}. "
                                  + graph.leak_message(tensor))
    from autograph.runtime.numpy import library_calls   # inside SciPy: name its function
    message = library_calls.library_message(tensor, what)
    if message is not None:
        raise SymbolicTensorError(message + where(" At "))
    note = context_note("")
    if note:
        raise SymbolicTensorError(f"Cannot use the symbolic tensor {tensor!r} {what}: {note}.")
    raise SymbolicTensorError(
        f"Cannot use the symbolic tensor {tensor!r} {what}: {fix}.{where(' At ')}")


# symbolic tensors and NumPy values are leaves of every structure: tell nest so up front
nest.add_leaf_type(Tensor)
for _leaf in (np.ndarray, np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
              np.uint16, np.uint32, np.uint64, np.float16, np.float32, np.float64,
              np.complex64, np.complex128):
    nest.add_leaf_type(_leaf)


def is_tensor(x):
    return isinstance(x, Tensor)
