"""Run in a subprocess by test_scipy_coverage.py (SciPy must be imported under
SCIPY_ARRAY_API=1): the probe, its markdown, and gradients vs central differences in every
mode, printed as JSON."""

import json
import os
import sys

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np  # noqa: E402

import autograph as ag  # noqa: E402
from autograph.runtime.numpy import scipy_coverage, scipy_special  # noqa: E402


def central(f, args, i, h=1e-6):
    x = np.array(args[i], dtype=np.float64)
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        a1, a2 = list(args), list(args)
        a1[i], a2[i] = x + e, x - e
        g.flat[k] = (np.sum(f(*a1)) - np.sum(f(*a2))) / (2 * h)
    return g


refused = set()
# an eager GradientTape around an ag.function whose while_loop runs a count known only at
# run time does not return (before issue 36 too: reported); expm squares in such a loop
EAGER_TAPE_HANGS = {"scipy.linalg.expm"}


class _Skip(Exception):
    pass


def gradients(cases):
    """{name: max relative error over modes and arguments} for GRADIENTS."""
    out = {}
    for name, fn, args in cases:
        if name not in scipy_coverage.GRADIENTS:
            continue
        traced = ag.function(fn)   # (converted itself: the probe's module is autograph's)

        def loss(*a, fn=traced):
            return np.sum(fn(*a))
        worst = 0.0
        partials = scipy_special.PARTIALS.get(
            {"jn": "jv", "psi": "digamma"}.get(name.rpartition(".")[2], name.rpartition(".")[2]))
        for i in range(len(args)):
            if name.startswith("scipy.special.") and partials is not None and \
                    partials[i] in (None, scipy_special.ZERO):
                continue   # no derivative in that argument (an error or a zero: unit tests)
            want = central(fn, args, i)
            got = []
            got.append(ag.grad(loss, argnums=i)(*args))
            xs = [np.asarray(a) for a in args]
            try:
                if name in EAGER_TAPE_HANGS:
                    raise _Skip
                with ag.GradientTape(persistent=True) as tape:   # eager tape
                    # (every array watched: SciPy refuses a mix of NumPy arrays and tensors)
                    xs = [tape.watch(v) for v in xs]
                    y = loss(*xs)
                got.append(tape.gradient(y, xs[i]))
            except TypeError as e:
                if "writes into the symbolic tensor" not in str(e):
                    raise
                refused.add(name)   # a library write on the eager tape: refused, named
            except _Skip:
                pass

            @ag.function
            def in_function(*a, i=i):
                a = list(a)
                with ag.GradientTape() as t:
                    t.watch(a[i])
                    y = loss(*a)
                return t.gradient(y, a[i])
            got.append(in_function(*args))
            for g in got:
                g = np.asarray(g)
                scale = max(1.0, float(np.max(np.abs(want))))
                worst = max(worst, float(np.max(np.abs(g - want))) / scale)
        out[name] = worst
    return out


def second_gradients():
    """d2/dx2 of a few through a persistent tape (second gradients of the rules)."""
    import scipy.special as sp
    x = np.array([0.4, 1.3, 2.2])
    out = {}
    for name, f in (("gammaln", sp.gammaln), ("expit", sp.expit), ("erf", sp.erf),
                    ("digamma", sp.digamma), ("i0e", sp.i0e)):
        def d1(v, f=f):
            return ag.grad(lambda u: np.sum(f(u)))(v)
        got = ag.grad(lambda v: np.sum(d1(v)))(x)
        want = central(lambda v: d1(v), [x], 0, h=1e-5)
        out[name] = float(np.max(np.abs(got - want) / (1e-6 + np.abs(want))))
    return out


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore")
    results = scipy_coverage.probe()
    report = {"results": results, "markdown": scipy_coverage.markdown(results)}
    if "--gradients" in sys.argv:
        report["gradients"] = gradients(scipy_coverage.cases())
        report["second"] = second_gradients()
        report["refused_on_eager_tape"] = sorted(refused)
    print(json.dumps(report))
