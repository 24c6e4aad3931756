"""Vector contractions composed from the covered NumPy functions (NumPy on tensors):
vecdot (and linalg.vecdot), matvec, vecmat; and einsum_path, which needs only shapes.
"""

import numpy as np

from autograph.runtime.ir.tensor import Tensor
from autograph.runtime.numpy.elementwise import as_tensor


def _t(x):
    return as_tensor(x)


def _static(shape, what):
    if shape is None or None in shape:
        raise NotImplementedError(f"{what} needs the shape known while tracing")
    return tuple(shape)


def _conj(x):
    return np.conj(x) if x.dtype.kind == "c" else x


def vecdot(x1, x2, /, *, axis=-1, out=None, dtype=None, **kw):
    a, b = _t(x1), _t(x2)
    r = np.sum(_conj(a) * b, axis=axis)
    return r if dtype is None else r.astype(dtype)


def matvec(x1, x2, /, *, out=None, dtype=None, **kw):
    r = np.sum(_t(x1) * _t(x2)[..., None, :], axis=-1)
    return r if dtype is None else r.astype(dtype)


def vecmat(x1, x2, /, *, out=None, dtype=None, **kw):
    r = np.sum(_conj(_t(x1))[..., :, None] * _t(x2), axis=-2)
    return r if dtype is None else r.astype(dtype)


def einsum_path(subscripts, *operands, optimize="greedy", einsum_call=False):
    stand_ins = [np.zeros(_static(_t(o).shape, "numpy.einsum_path"), _t(o).dtype)
                 if isinstance(o, Tensor) else o for o in operands]
    return np.einsum_path(subscripts, *stand_ins, optimize=optimize)
