"""A Python scalar as the NumPy scalar of a given dtype, cheaply.

Numba returns a 0-d result as a Python bool/int/float/complex, and generated code meets
Python ints (loop counters, shapes); the interpreter's results are NumPy scalars of the
graph's dtypes. `np.int64(r)` costs ~250-300 ns (the constructor parses its arguments),
while under NumPy 2's promotion rules (NEP 50: a Python scalar is "weak", it takes the NumPy
operand's dtype) `ZERO + r` with ZERO = np.int64(0) gives the same np.int64 in ~35 ns.

The identity added is 0 for integers, -0.0 for floats (-0.0 + x is x for every x, -0.0 and
NaN included, where 0.0 + -0.0 would be 0.0) and -0.0-0.0j for complex. Bools index the pair
(np.False_, np.True_). Each dtype's box is checked on probe values against the constructor
(type and bytes) before it is used; other dtypes, and NumPy 1 (value-based promotion), keep
the constructor. Used by runtime.exec.native (results, scalar Variables).
"""

import numpy as np

_BOXES = {}   # dtype -> ("add", zero) | ("index", pair) | ("call", type)


def box(dtype):
    """("add", zero), ("index", pair) or ("call", type): how to box a scalar as `dtype`."""
    found = _BOXES.get(dtype)
    if found is None:
        found = _BOXES[dtype] = _choose_box(np.dtype(dtype))
    return found


def _choose_box(dtype):
    t = dtype.type
    if dtype.kind == "b":
        return ("index", (np.False_, np.True_))
    if dtype.kind not in "iufc" or int(np.__version__.split(".")[0]) < 2:   # no NEP 50
        return ("call", t)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        zero, probes = t(0), [0, 1, info.max, info.min, info.max // 3, info.min // 3]
    else:
        real = np.finfo(dtype)
        edges = [0.0, -0.0, 1.5, -2.25, float("nan"), float("inf"), float("-inf"),
                 float(real.max), float(real.min), float(real.smallest_subnormal)]
        if dtype.kind == "f":
            zero, probes = t(-0.0), edges
        else:
            zero = t(complex(-0.0, -0.0))
            probes = [complex(a, b) for a in edges for b in edges[:7]]
    with np.errstate(all="raise"):
        for v in probes:
            want, got = t(v), zero + v
            if type(got) is not t or got.tobytes() != want.tobytes():
                return ("call", t)
    return ("add", zero)


def boxed(ns, name, dtype, value):
    """The expression boxing `value` (Numba's Python scalar) as a NumPy scalar of `dtype`,
    with the constant it needs stored in `ns` under `name`."""
    form, ns[name] = box(dtype)
    if form == "add":
        return f"{name} + {value}"
    if form == "index":
        return f"{name}[{value}]"
    return f"{name}({value})"


