"""Packing booleans into the bits of uint8 and back, composed from the covered NumPy
functions (NumPy on tensors): packbits, unpackbits.
"""

import numpy as np

from autograph.runtime.ir import shapes
from autograph.runtime.numpy.elementwise import as_tensor
from autograph.runtime.numpy.shape_ops import need_rank


def _t(x):
    return as_tensor(x)


def packbits(a, /, axis=None, bitorder="big"):
    x = _t(a)
    if x.dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    if axis is None:
        x, axis = np.ravel(x), 0
    ax = shapes.normalize_axis(axis, need_rank(x, "numpy.packbits"))
    bits = np.moveaxis((x != 0).astype(np.uint8), ax, -1)
    n = bits.shape[-1]
    if n is None:
        raise NotImplementedError("numpy.packbits needs the length of the axis known")
    pad = -n % 8
    if pad:
        bits = np.concatenate([bits, np.zeros(tuple(bits.shape[:-1]) + (pad,), np.uint8)], -1)
    groups = np.reshape(bits, tuple(bits.shape[:-1]) + ((n + pad) // 8, 8))
    weights = 2 ** np.arange(7, -1, -1) if bitorder == "big" else 2 ** np.arange(8)
    packed = np.sum(groups * weights.astype(np.uint8), axis=-1, dtype=np.uint8)
    return np.moveaxis(packed, -1, ax)


def unpackbits(a, /, axis=None, count=None, bitorder="big"):
    x = _t(a)
    if x.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if axis is None:
        x, axis = np.ravel(x), 0
    ax = shapes.normalize_axis(axis, need_rank(x, "numpy.unpackbits"))
    moved = np.moveaxis(x, ax, -1)
    shifts = np.arange(7, -1, -1) if bitorder == "big" else np.arange(8)
    bits = (moved[..., None] >> shifts.astype(np.uint8)) & np.uint8(1)
    n = moved.shape[-1]
    if n is None:
        raise NotImplementedError("numpy.unpackbits needs the length of the axis known")
    bits = np.reshape(bits, tuple(moved.shape[:-1]) + (8 * n,))
    if count is not None:
        if count >= 0:
            bits = bits[..., :count] if count <= 8 * n else np.concatenate(
                [bits, np.zeros(tuple(bits.shape[:-1]) + (count - 8 * n,), np.uint8)], -1)
        else:
            bits = bits[..., :8 * n + count]
    return np.moveaxis(bits, -1, ax)
