"""One generated program's derivatives, four kinds by three modes, against central
differences (issue 26).

Kinds, for y = generated(x, v) (a vector), F = <y, C> and F2 = <y, y>:
- "first":    dF/dx (and dF/dv for the Variable v, in the tape modes);
- "second":   dF2/dx as the second `gradient()` call of one persistent tape (after dF/dx);
- "jacobian": dy/dx (on the same persistent tape, after both gradients);
- "hessian":  d(dF/dx)/dx, the jacobian of a gradient (nested tapes; `ag.grad` of `ag.grad`).

Modes: "eager" (GradientTape on NumPy values: the live graph), "traced" (the same tape code
inside an `ag.function`), "grad" (`ag.grad`, `ag.vjp`: no tape). Each mode's numbers must
equal the other modes' (to 1e-9) and central differences of the plain NumPy run (the
reference). Where differences at two step sizes disagree, a condition flips within the step
(a kink): that case is compared across modes only, and counted.

`check(program, timeout)` returns (findings, kinks): findings are (kind, mode, what, message)
for a wrong number, an error or a timeout (every case runs under its own time limit).
"""

import numpy as np

import autograph as ag
from benchmarks.differential.check import guarded, load

C = np.array([1.0, -0.7])    # (programs return vectors of length 2)
KINDS = ("first", "second", "jacobian", "hessian")
MODES = ("eager", "traced", "grad")
MODE_RTOL, MODE_ATOL = 1e-9, 1e-11
FD_RTOL, FD_ATOL = 1e-5, 1e-7


# -- the reference: central differences of the plain NumPy run ---------------------------------

def _fd(fn, x, h):
    """d fn / dx by central differences (fn: vector -> array)."""
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        cols.append((np.asarray(fn(x + e)) - np.asarray(fn(x - e))) / (2 * h))
    return np.stack(cols, axis=-1)


def _fd2(fn, x, h):
    """The Hessian of scalar fn by second central differences."""
    n = x.size
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            ei, ej = np.eye(n)[i] * h, np.eye(n)[j] * h
            out[i, j] = (fn(x + ei + ej) - fn(x + ei - ej) - fn(x - ei + ej)
                         + fn(x - ei - ej)) / (4 * h * h)
    return out


def reference(f, x0, v0):
    """{kind: (expected, smooth)}: central differences, and whether two step sizes agree."""
    var = ag.Variable(v0.copy())

    def y_of(x):
        return np.asarray(f(x, var), dtype=np.float64)

    def y_of_v(v):
        var.assign(v)
        try:
            return y_of(x0)
        finally:
            var.assign(v0.copy())

    def F(x):
        return float(np.dot(y_of(x), C))

    def F2(x):
        y = y_of(x)
        return float(np.dot(y, y))

    out = {}
    for kind, fn, h, rtol in (
            ("first", F, 1e-5, FD_RTOL), ("second", F2, 1e-5, FD_RTOL),
            ("jacobian", y_of, 1e-5, FD_RTOL), ("first_v", lambda v: np.dot(y_of_v(v), C),
                                                1e-5, FD_RTOL)):
        point = v0 if kind == "first_v" else x0
        a, b = _fd(fn, point, h), _fd(fn, point, 4 * h)
        out[kind] = (a, np.allclose(a, b, rtol=1e-4, atol=1e-6))
    a, b = _fd2(F, x0, 1e-4), _fd2(F, x0, 4e-4)
    out["hessian"] = (a, np.allclose(a, b, rtol=1e-3, atol=1e-4))
    return out


# -- the three modes ---------------------------------------------------------------------------

def _tape_kinds(f, x0, var, watch):
    """The four kinds with tapes; `watch(tape, x)` gives the x to compute with."""
    res = {}
    with ag.GradientTape(persistent=True) as g:
        x = watch(g, x0)
        y = f(x, var)
        F = np.sum(y * C)
        F2 = np.sum(y * y)
    # (zeros where a target does not depend on x: eagerly, Python control flow may take
    # a path that does not, where a staged branch connects it; TF gives None there too)
    res["first"] = g.gradient(F, x, unconnected_gradients="zero")
    res["first_v"] = g.gradient(F, var, unconnected_gradients="zero")
    res["second"] = g.gradient(F2, x, unconnected_gradients="zero")
    res["jacobian"] = g.jacobian(y, x)
    with ag.GradientTape() as g2:
        x = watch(g2, x0)
        with ag.GradientTape() as g1:
            g1.watch(x)
            F = np.sum(f(x, var) * C)
        dF = g1.gradient(F, x, unconnected_gradients="zero")
    res["hessian"] = g2.jacobian(dF, x)
    return res


def eager(f, x0, var):
    return _tape_kinds(f, x0, var, lambda g, x: g.watch(x))


def traced(f, x0, var):
    def watch(g, x):
        g.watch(x)
        return x

    def run(x):
        r = _tape_kinds(f, x, var, watch)
        return tuple(r[k] for k in KINDS + ("first_v",))
    out = ag.function(run)(x0)
    return dict(zip(KINDS + ("first_v",), out))


def grad_mode(f, x0, var):
    def F(x):
        return np.sum(f(x, var) * C)

    def F2(x):
        y = f(x, var)
        return np.sum(y * y)

    def y_of(x):
        return f(x, var)

    dF = ag.grad(F)

    def hrow(x, e):
        return np.sum(dF(x) * e)
    res = {"first": ag.grad(F)(x0), "second": ag.grad(F2)(x0)}
    y0, pullback = ag.vjp(y_of, x0)
    rows = np.eye(np.size(y0))
    res["jacobian"] = np.stack([pullback(r)[0] for r in rows])
    eye = np.eye(x0.size)
    hgrad = ag.grad(hrow)
    res["hessian"] = np.stack([hgrad(x0, eye[i]) for i in range(x0.size)])
    return res


RUNNERS = {"eager": eager, "traced": traced, "grad": grad_mode}


# -- comparing ---------------------------------------------------------------------------------

def _close(a, b, rtol, atol):
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and np.allclose(a, b, rtol=rtol, atol=atol)


def check(program, timeout=20.0, modes=MODES, f=None):
    """(findings, kinks) for one GradProgram (see the module docstring); `f`: the function
    itself instead of the program's source (a shared sample)."""
    if f is None:
        f, _ = load(program.source)
    ref = reference(f, program.x, program.v)
    findings, kinks = [], 0
    got = {}
    for mode in modes:
        var = ag.Variable(program.v.copy())
        status, value = guarded(timeout, RUNNERS[mode], f, program.x.copy(), var)
        if status == "timeout":
            findings += [(k, mode, "timeout", "") for k in KINDS]
            continue
        if status == "raise":
            msg = f"{type(value).__name__}: {value}"[:600]
            findings += [(k, mode, "error", msg) for k in KINDS]
            continue
        got[mode] = value
    for kind in KINDS + ("first_v",):
        expected, smooth = ref[kind]
        if kind == "first_v":
            expected = expected.reshape(program.v.shape)
        elif kind == "jacobian":
            expected = expected.reshape(-1, program.x.size)
        elif kind in ("first", "second"):
            expected = expected.reshape(program.x.shape)
        kinks += not smooth
        values = {m: got[m][kind] for m in got if kind in got[m]}
        rtol = FD_RTOL if kind != "hessian" else 1e-4
        atol = FD_ATOL if kind != "hessian" else 1e-5
        base = None
        for mode, value in values.items():
            label = "first" if kind == "first_v" else kind
            if base is not None and not _close(value, base[1], MODE_RTOL, MODE_ATOL):
                findings.append((label, mode, "modes differ",
                                 f"{kind}: {mode} {value!r} vs {base[0]} {base[1]!r}"))
            elif smooth and not _close(value, expected, rtol, atol):
                findings.append((label, mode, "wrong",
                                 f"{kind}: {mode} {value!r}, central differences {expected!r}"))
            if base is None:
                base = (mode, value)
    return findings, kinks


# -- the shared samples (tests/autodiff/samples.py) as programs --------------------------------

def sample_program(sample, matrix=None):
    """(GradProgram, f) for a shared sample `sample(x)` (or `sample(x, matrix)`): a scalar
    of a float64 vector of length 3, made a vector of length 2 (the sample at x and at
    0.9 x) plus the Variable's value, so that every kind applies to it."""
    from benchmarks.differential.gradgen import GradProgram

    def f(x, v):
        args = () if matrix is None else (matrix,)
        return np.stack([sample(x, *args), sample(x * 0.9, *args)]) + v.read_value()
    x = np.array([0.3, 0.2, 0.4])
    return GradProgram(f"<sample {sample.__name__}>", x, np.array([0.1, -0.2])), f
