"""Run in a subprocess by test_array_api_libraries.py under SCIPY_ARRAY_API=1: the issue's
reproducers and scikit-learn's array API functions inside ag.function, as JSON."""

import json
import os
import warnings

os.environ["SCIPY_ARRAY_API"] = "1"
warnings.simplefilter("ignore")

import numpy as np  # noqa: E402
import scipy.linalg as sl  # noqa: E402
import scipy.special as sp  # noqa: E402

import autograph as ag  # noqa: E402

X = np.array([0.1, -0.3, 2.0])


def expit(x):
    return sp.expit(x)


def erf(x):
    return sp.erf(x)


def logsumexp(x):
    return sp.logsumexp(x)


def softmax(x):
    return sp.softmax(x)


def norm(x):
    return sl.norm(x)


def compare(fn, *args):
    try:
        got = ag.function(fn)(*args)
    except Exception as e:   # noqa: BLE001
        return {"error": f"{type(e).__name__}: {e}"}
    want = fn(*args)
    return {"equal": bool(np.allclose(got, want, rtol=1e-12, atol=1e-14)),
            "dtype": str(np.asarray(got).dtype) == str(np.asarray(want).dtype)}


def sklearn_cases():
    try:
        import sklearn
        from sklearn import preprocessing
        from sklearn.metrics import pairwise
    except ImportError:
        return None
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((4, 3))

    def rbf(u, v):
        return pairwise.rbf_kernel(u, v, gamma=0.5)

    def cosine(u, v):
        return pairwise.cosine_similarity(u, v)

    def euclid(u, v):
        return pairwise.euclidean_distances(u, v)

    def normalize(u):
        return preprocessing.normalize(u)

    def scaler(u):
        return preprocessing.MinMaxScaler().fit_transform(u)

    out = {}
    with sklearn.config_context(array_api_dispatch=True, assume_finite=True):
        for name, fn, args in (("rbf_kernel", rbf, (a, b)), ("cosine_similarity", cosine, (a, b)),
                               ("euclidean_distances", euclid, (a, b)),
                               ("normalize", normalize, (a,)), ("MinMaxScaler", scaler, (a,))):
            out[name] = compare(fn, *args)
        # the graph is ordinary: its gradient exists (d/du of sum(rbf(u, v)))
        g = ag.grad(lambda u, v: np.sum(rbf(u, v)))(a, b)   # (both traced: see docs)
        h = 1e-6
        e = np.zeros_like(a)
        e[0, 0] = h
        fd = (np.sum(rbf(a + e, b)) - np.sum(rbf(a - e, b))) / (2 * h)
        out["rbf_gradient_error"] = float(abs(g[0, 0] - fd))
    return out


if __name__ == "__main__":
    report = {name: compare(fn, X) for name, fn in (
        ("expit", expit), ("erf", erf), ("logsumexp", logsumexp), ("softmax", softmax),
        ("norm", norm))}
    report["sklearn"] = sklearn_cases()
    print(json.dumps(report))
