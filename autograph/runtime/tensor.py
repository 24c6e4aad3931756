"""The symbolic Tensor: an output of a graph node, with a dtype and a static shape.

A Tensor stands for an array that will exist when the graph runs. NumPy's dispatch
protocols (`__array_ufunc__`, `__array_function__`) and Python's operators turn what users
write (`np.tanh(x)`, `x @ w`, `x[i]`, `x + 1`) into new graph nodes, so the same code runs
eagerly on arrays and symbolically while tracing.

`shape` is a tuple whose entries are ints or None (unknown), or None for an unknown rank.
`weak` marks a tensor made from a Python scalar: like a Python scalar under NEP 50, it
adopts the dtype of the array it meets.
"""

import numpy as np


class Tensor:
    __slots__ = ("node", "index", "dtype", "shape", "weak", "__weakref__")

    # NumPy defers to us in mixed operations (ndarray + Tensor -> Tensor.__radd__)
    __array_priority__ = 1000

    def __init__(self, node, index, dtype, shape, weak=False):
        self.node = node
        self.index = index
        self.dtype = np.dtype(dtype)
        self.shape = None if shape is None else tuple(shape)
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
        return f'Tensor("{self.name}", shape={shape}, dtype={self.dtype.name})'

    # -- Python protocols that need a concrete value ----------------------------------------

    def __bool__(self):
        raise_symbolic(self, "bool()", "its truth value is only known when the graph runs. "
                       "Use it in an `if`/`while` inside an autograph function (converted code "
                       "turns those into cond/while_loop), or use ag.cond / np.where")

    def __index__(self):
        raise_symbolic(self, "as a Python int", "use it in array operations instead, "
                       "or pass a Python int argument if it must be known while tracing")

    def __float__(self):
        raise_symbolic(self, "float()", "use .astype(np.float64) to convert inside the graph")

    def __int__(self):
        raise_symbolic(self, "int()", "use .astype(np.int64) to convert inside the graph")

    def __hash__(self):
        return id(self)


def _shape_str(shape):
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


class SymbolicTensorError(TypeError):
    """A symbolic tensor was used where Python needs a concrete value."""


def raise_symbolic(tensor, what, fix):
    raise SymbolicTensorError(
        f"Cannot use the symbolic tensor {tensor!r} {what}: {fix}.")


def is_tensor(x):
    return isinstance(x, Tensor)
