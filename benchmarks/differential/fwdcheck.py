"""One generated program's forward-mode derivatives against central differences (issue 33).

For y = generated(x, v) (a vector of length 2, v an `ag.Variable` read inside) and
F = <y, C>, kinds:
- "jvp":     `ag.jvp(y_of, (x,), (t,))`: the primal equals y, the tangent equals the
             central difference of y along t;
- "jacfwd":  `ag.jacfwd(y_of)(x)` equals central differences of y, column by column;
- "jacrev":  `ag.jacrev(y_of)(x)` equals jacfwd (to 1e-9: two transforms, one Jacobian);
- "hessian": `ag.hessian(F)(x)` (forward over reverse) equals central differences of the
             gradient `ag.grad(F)` (itself checked against differences of F by gradrun);
- "hvp":     `ag.hvp(F, (x,), (t,))` equals central differences of the gradient along t.

Modes: "direct" (the transforms called on NumPy values) and "function" (each call
inside an `ag.function`: the transforms inline into another trace). Tolerance: rtol 1e-6
(float64, step 1e-6 for values, 1e-5 for gradients). Where differences at two step sizes
disagree, a condition flips within the step (a kink): that case is compared across modes
and transforms only, and counted.
"""

import numpy as np

import autograph as ag
from benchmarks.differential.check import guarded, load

C = np.array([1.0, -0.7])
KINDS = ("jvp", "jacfwd", "jacrev", "hessian", "hvp")
MODES = ("direct", "function")
RTOL, ATOL = 1e-6, 1e-8
MODE_RTOL, MODE_ATOL = 1e-9, 1e-11


def _direction(x):
    return np.linspace(0.7, -0.4, x.size).reshape(x.shape)


def _fd_dir(fn, x, t, h):
    return (np.asarray(fn(x + h * t), float) - np.asarray(fn(x - h * t), float)) / (2 * h)


def _fd_jac(fn, x, h):
    eye = np.eye(x.size)
    return np.stack([_fd_dir(fn, x, eye[i].reshape(x.shape), h) for i in range(x.size)],
                    axis=-1)


def reference(f, x, v0):
    """{kind: (expected, smooth)} by central differences at two step sizes."""
    var = ag.Variable(v0.copy())

    def y_of(z):
        return np.asarray(f(z, var), dtype=np.float64)

    def F(z):
        return np.sum(f(z, var) * C)
    grad = ag.grad(F)
    t = _direction(x)
    out = {}
    for kind, fn, h, make in (
            ("jvp", y_of, 1e-6, lambda fn, h: _fd_dir(fn, x, t, h)),
            ("jacfwd", y_of, 1e-6, lambda fn, h: _fd_jac(fn, x, h)),
            ("hessian", grad, 1e-5, lambda fn, h: _fd_jac(fn, x, h)),
            ("hvp", grad, 1e-5, lambda fn, h: _fd_dir(fn, x, t, h))):
        a, b = make(fn, h), make(fn, 4 * h)
        out[kind] = (a, np.allclose(a, b, rtol=1e-5, atol=1e-7))
    out["jacrev"] = out["jacfwd"]
    out["value"] = (y_of(x), True)
    return out


def _kinds(f, x, var):
    def y_of(z):
        return f(z, var)

    def F(z):
        return np.sum(f(z, var) * C)
    t = _direction(x)
    y, ty = ag.jvp(y_of, (x,), (t,))
    return {"value": y, "jvp": ty, "jacfwd": ag.jacfwd(y_of)(x),
            "jacrev": ag.jacrev(y_of)(x), "hessian": ag.hessian(F)(x),
            "hvp": ag.hvp(F, (x,), (t,))}


def direct(f, x, var):
    return _kinds(f, x, var)


def function(f, x, var):
    names = ("value",) + KINDS
    out = ag.function(lambda z: tuple(_kinds(f, z, var)[k] for k in names))(x)
    return dict(zip(names, out))


RUNNERS = {"direct": direct, "function": function}


def _close(a, b, rtol, atol):
    if a is None or b is None:
        return False
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol)


def check(program, timeout=30.0, modes=MODES, f=None):
    """(findings, kinks): findings are (kind, mode, what, message)."""
    if f is None:
        f, _ = load(program.source)
    ref = reference(f, program.x, program.v)
    findings, kinks, got = [], 0, {}
    for mode in modes:
        var = ag.Variable(program.v.copy())
        status, value = guarded(timeout, RUNNERS[mode], f, program.x.copy(), var)
        if status != "ok":
            msg = "" if value is None else f"{type(value).__name__}: {value}"[:600]
            findings += [(k, mode, "timeout" if status == "timeout" else "error", msg)
                         for k in KINDS]
            continue
        got[mode] = value
    for kind in ("value",) + KINDS:
        expected, smooth = ref[kind]
        kinks += not smooth
        base = None
        for mode, res in got.items():
            value = res[kind]
            if base is not None and not _close(value, base[1], MODE_RTOL, MODE_ATOL):
                findings.append((kind, mode, "modes differ",
                                 f"{mode} {value!r} vs {base[0]} {base[1]!r}"))
            elif kind == "jacrev" and not _close(value, res["jacfwd"], MODE_RTOL, MODE_ATOL):
                findings.append((kind, mode, "jacrev != jacfwd",
                                 f"{value!r} vs {res['jacfwd']!r}"))
            elif smooth and not _close(value, expected, RTOL, ATOL):
                findings.append((kind, mode, "wrong",
                                 f"{mode} {value!r}, central differences {expected!r}"))
            if base is None:
                base = (mode, value)
    return findings, kinks
