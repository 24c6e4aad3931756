"""numpy.linalg.eig and eigvals: the eigen-decomposition of general square matrices.

The eigenvalues of a real matrix are complex in general. NumPy returns a real array when
every imaginary part is zero, so its output dtype depends on the data; a traced function's
dtype must be known while tracing, so here the output is always complex (complex64 for
float32 input, complex128 otherwise), as jax.numpy does. The values are NumPy's.

The array API standard has no eig: the kernel runs NumPy's (LAPACK's geev) on the host when
the device's namespace has none. The gradient rule covers the eigenvalues (the usual
first-order perturbation: A_bar = V^-H diag(w_bar) V^H); a cotangent on the eigenvectors
raises, naming the function.
"""

import numpy as np

from autograph.runtime.ir.primitives import bind, defvjp, register
from autograph.runtime.numpy.elementwise import as_tensor, cast
from autograph.runtime.numpy.shape_ops import need_rank


def _complex_of(dtype):
    return np.dtype(np.complex64) if dtype in (np.float32, np.complex64) else \
        np.dtype(np.complex128)


def _eig_infer(x):
    c = _complex_of(x.dtype)
    if x.shape is None:
        return [(c, None, False), (c, None, False)]
    return [(c, x.shape[:-1], False), (c, x.shape, False)]


def _host(xp, a):
    if isinstance(a, np.ndarray):
        return a
    try:
        return np.from_dlpack(a)
    except Exception:   # noqa: BLE001  (namespaces without dlpack export)
        return np.asarray(a)


def _eig_kernel(xp, x):
    native = getattr(getattr(xp, "linalg", None), "eig", None)
    if xp is np or native is None:
        w, v = np.linalg.eig(_host(xp, x))
        c = _complex_of(w.dtype if w.dtype.kind == "c" else np.dtype(x.dtype))
        w, v = w.astype(c), v.astype(c)
        return (w, v) if xp is np else (xp.asarray(w), xp.asarray(v))
    return native(x)


register("eig", _eig_infer, _eig_kernel, doc="numpy.linalg.eig (always complex)")


def _eig_vjp(cts, node):
    cw, cv = cts
    if cv is not None:
        raise NotImplementedError("the gradient through numpy.linalg.eig's eigenvectors is "
                                  "not implemented; only the eigenvalues (linalg.eigvals) "
                                  "are differentiable")
    if cw is None:
        return [None]
    x, v = node.inputs[0], node.outputs[1]
    vinv_h = np.conj(np.swapaxes(np.linalg.inv(v), -1, -2))
    grad = vinv_h @ (cw[..., None] * np.conj(np.swapaxes(v, -1, -2)))
    return [grad if x.dtype.kind == "c" else np.real(grad).astype(x.dtype)]


defvjp("eig", _eig_vjp)


def eig(a):
    x = as_tensor(a)
    if need_rank(x, "numpy.linalg.eig") < 2:
        raise np.linalg.LinAlgError(f"{x.shape and len(x.shape)}-dimensional array given. "
                                    "Array must be at least two-dimensional")
    if x.dtype.kind in "biu":
        x = cast(x, np.dtype(np.float64))
    w, v = bind("eig", (x,)).outputs
    from numpy.linalg import _linalg
    result = getattr(_linalg, "EigResult", None)
    return result(w, v) if result is not None else (w, v)


def eigvals(a):
    return eig(a)[0]


FUNCTIONS = {np.linalg.eig: eig, np.linalg.eigvals: eigvals}
