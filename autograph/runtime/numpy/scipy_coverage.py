"""The published probe of SciPy inside traced functions: docs/scipy_coverage.md.

Each case calls one commonly used SciPy function (scipy.special, scipy.stats, scipy.linalg,
scipy.signal) the way a user would, inside `ag.function`, and compares the result with
SciPy's own eager answer. A case either gives SciPy's answer (within float64 rounding) or
raises an error that names the SciPy function; the list records which, and a test
(tests/runtime/test_scipy_coverage.py) reruns the probe and checks the file is current:

    SCIPY_ARRAY_API=1 python -m autograph.runtime.numpy.scipy_coverage --write docs/scipy_coverage.md

SciPy hands tensors to their array API namespace only under SCIPY_ARRAY_API=1, set before
scipy is first imported; running this module sets it (and refuses when scipy was imported
without it). `GRADIENTS` names the cases whose gradients the tests compare with central
differences.
"""

import os
import re
import sys

import numpy as np

# inputs: x real, p in (0, 1), q positive, m a small matrix, s a signal
_RNG = np.random.default_rng(0)
X = np.array([0.3, -1.2, 2.5, 0.7])
P = np.array([0.05, 0.3, 0.6, 0.95])
Q = np.array([0.4, 1.3, 2.2, 5.0])
A = _RNG.standard_normal((4, 4))
M = A @ A.T + 4 * np.eye(4)
S = np.sin(np.linspace(0.0, 6.0, 32)) + 0.1 * _RNG.standard_normal(32)
K = np.array([0.25, 0.5, 0.25])


def _special(sp):
    u = lambda name, arg: (f"scipy.special.{name}", lambda a: getattr(sp, name)(a), (arg,))
    cases = [u(n, X) for n in (
        "expit", "log_expit", "erf", "erfc", "erfcx", "erfi", "dawsn", "ndtr", "log_ndtr",
        "j0", "j1", "i0", "i1", "i0e", "i1e", "exp10", "exp2", "expm1", "cosm1", "cbrt",
        "sindg", "cosdg", "wrightomega", "round", "exprel")]
    cases += [u(n, Q) for n in (
        "gamma", "gammaln", "loggamma", "rgamma", "digamma", "psi", "y0", "y1", "k0", "k1",
        "k0e", "k1e", "exp1", "expi", "log1p", "entr", "spence", "zetac")]
    cases += [u(n, P) for n in ("logit", "erfinv", "ndtri")]
    cases += [u("erfcinv", 2 * P), u("ndtri_exp", np.log(P))]
    b = lambda name, first, second: (
        f"scipy.special.{name}", lambda a, c: getattr(sp, name)(a, c), (first, second))
    cases += [b("xlogy", X, Q), b("xlog1py", X, Q), b("beta", Q, Q[::-1]),
              b("betaln", Q, Q[::-1]), b("poch", Q, X), b("gammainc", Q, Q[::-1]),
              b("gammaincc", Q, Q[::-1]), b("gammaincinv", Q, P), b("rel_entr", Q, Q[::-1]),
              b("kl_div", Q, Q[::-1]), b("huber", Q, X), b("pseudo_huber", Q, X),
              b("jv", Q, Q[::-1]), b("iv", Q, Q[::-1]), b("kv", Q, Q[::-1]),
              b("yv", Q, Q[::-1]), b("boxcox", Q, X), b("boxcox1p", Q, X), b("powm1", Q, X),
              b("stdtr", Q, X), b("chdtr", Q, Q[::-1]), b("owens_t", X, Q),
              b("binom", Q + 3, Q), b("hyp0f1", Q, X)]
    cases += [("scipy.special.jn", lambda a: sp.jn(2, a), (X,)),
              ("scipy.special.betainc", lambda a, c, d: sp.betainc(a, c, d), (Q, Q[::-1], P)),
              ("scipy.special.hyp1f1", lambda a, c, d: sp.hyp1f1(a, c, d), (Q, Q[::-1], X)),
              ("scipy.special.logsumexp", lambda a: sp.logsumexp(a), (X,)),
              ("scipy.special.logsumexp(b=)", lambda a, c: sp.logsumexp(a, b=c), (X, Q)),
              ("scipy.special.softmax", lambda a: sp.softmax(a), (X,)),
              ("scipy.special.log_softmax", lambda a: sp.log_softmax(a), (X,)),
              ("scipy.special.polygamma", lambda a: sp.polygamma(1, a), (Q,)),
              ("scipy.special.logsumexp(axis=)", lambda a: sp.logsumexp(a, axis=0), (M,)),
              ("scipy.special.softmax(axis=)", lambda a: sp.softmax(a, axis=1), (M,)),
              ("scipy.special.expn", lambda a: sp.expn(2, a), (Q,)),
              ("scipy.special.kn", lambda a: sp.kn(1, a), (Q,)),
              ("scipy.special.ellipk", lambda a: sp.ellipk(a), (P,)),
              ("scipy.special.ellipe", lambda a: sp.ellipe(a), (P,)),
              ("scipy.special.zeta", lambda a: sp.zeta(a + 1.5, 2.0), (Q,)),
              ("scipy.special.zeta(q=)", lambda a: sp.zeta(2.5, a), (Q,))]
    return cases


def _stats(st):
    one = lambda name, fn, *args: (f"scipy.stats.{name}", fn, args)
    return [
        one("zscore", lambda a: st.zscore(a), X), one("zmap", lambda a, c: st.zmap(a, c), X, Q),
        one("skew", lambda a: st.skew(a), X), one("kurtosis", lambda a: st.kurtosis(a), X),
        one("moment", lambda a: st.moment(a, 3), X),
        one("variation", lambda a: st.variation(a), Q), one("gmean", lambda a: st.gmean(a), Q),
        one("hmean", lambda a: st.hmean(a), Q), one("pmean", lambda a: st.pmean(a, 2.0), Q),
        one("sem", lambda a: st.sem(a), X), one("tmean", lambda a: st.tmean(a), X),
        one("tvar", lambda a: st.tvar(a), X), one("tstd", lambda a: st.tstd(a), X),
        one("entropy", lambda a: st.entropy(a), Q),
        one("entropy(qk=)", lambda a, c: st.entropy(a, c), Q, Q[::-1]),
        one("norm.logpdf", lambda a: st.norm.logpdf(a), X),
        one("norm.cdf", lambda a: st.norm.cdf(a), X),
        one("gamma.logpdf", lambda a: st.gamma.logpdf(a, 2.0), Q),
        one("logistic.cdf", lambda a: st.logistic.cdf(a), X),
        one("logistic.logpdf", lambda a: st.logistic.logpdf(a), X),
        one("norm.ppf", lambda a: st.norm.ppf(a), P),
        one("norm.logcdf", lambda a: st.norm.logcdf(a, loc=0.5, scale=2.0), X),
        one("gamma.cdf", lambda a: st.gamma.cdf(a, 2.0), Q),
        one("expon.logpdf", lambda a: st.expon.logpdf(a), Q),
        one("zscore(axis=)", lambda a: st.zscore(a, axis=1), M),
    ]


def _linalg(sl):
    one = lambda name, fn, *args: (f"scipy.linalg.{name}", fn, args)
    return [one("norm", lambda a: sl.norm(a), X), one("det", lambda a: sl.det(a), M),
            one("inv", lambda a: sl.inv(a), M), one("solve", lambda a, c: sl.solve(a, c), M, X),
            one("cholesky", lambda a: sl.cholesky(a), M),
            one("eigh(eigvals_only=)", lambda a: sl.eigh(a, eigvals_only=True), M),
            one("svd(compute_uv=)", lambda a: sl.svd(a, compute_uv=False), M),
            one("expm", lambda a: sl.expm(a), M / 4)]


def _signal(sg):
    one = lambda name, fn, *args: (f"scipy.signal.{name}", fn, args)
    return [one("convolve", lambda a, c: sg.convolve(a, c), S, K),
            one("correlate", lambda a, c: sg.correlate(a, c), S, K),
            one("fftconvolve", lambda a, c: sg.fftconvolve(a, c), S, K),
            one("oaconvolve", lambda a, c: sg.oaconvolve(a, c), S, K),
            one("detrend", lambda a: sg.detrend(a), S),
            one("hilbert", lambda a: sg.hilbert(a), S)]


def cases():
    """[(public name, function, args)], SciPy imported under SCIPY_ARRAY_API=1."""
    require_array_api()
    import scipy.linalg
    import scipy.signal
    import scipy.special
    import scipy.stats
    return (_special(scipy.special) + _stats(scipy.stats) + _linalg(scipy.linalg)
            + _signal(scipy.signal))


# the differentiable cases whose gradients tests compare with central differences
GRADIENTS = (
    "scipy.special.expit", "scipy.special.log_expit", "scipy.special.erf",
    "scipy.special.erfc", "scipy.special.erfcx", "scipy.special.erfi", "scipy.special.dawsn",
    "scipy.special.ndtr", "scipy.special.log_ndtr", "scipy.special.j0", "scipy.special.j1",
    "scipy.special.i0", "scipy.special.i1", "scipy.special.i0e", "scipy.special.i1e",
    "scipy.special.exp10", "scipy.special.exp2", "scipy.special.expm1", "scipy.special.cosm1",
    "scipy.special.cbrt", "scipy.special.sindg", "scipy.special.cosdg",
    "scipy.special.wrightomega", "scipy.special.exprel", "scipy.special.gamma",
    "scipy.special.gammaln", "scipy.special.loggamma", "scipy.special.rgamma",
    "scipy.special.digamma", "scipy.special.psi", "scipy.special.y0", "scipy.special.y1",
    "scipy.special.k0", "scipy.special.k1", "scipy.special.k0e", "scipy.special.k1e",
    "scipy.special.exp1", "scipy.special.expi", "scipy.special.log1p", "scipy.special.entr",
    "scipy.special.spence", "scipy.special.logit", "scipy.special.erfinv",
    "scipy.special.ndtri", "scipy.special.erfcinv", "scipy.special.ndtri_exp",
    "scipy.special.xlogy", "scipy.special.xlog1py", "scipy.special.beta",
    "scipy.special.betaln", "scipy.special.poch", "scipy.special.rel_entr",
    "scipy.special.kl_div", "scipy.special.jv", "scipy.special.iv", "scipy.special.kv",
    "scipy.special.yv", "scipy.special.powm1", "scipy.special.jn",
    "scipy.special.logsumexp", "scipy.special.logsumexp(b=)", "scipy.special.softmax",
    "scipy.special.log_softmax", "scipy.stats.zscore", "scipy.stats.skew",
    "scipy.stats.kurtosis", "scipy.stats.variation", "scipy.stats.gmean",
    "scipy.stats.sem", "scipy.stats.entropy", "scipy.stats.norm.logpdf",
    "scipy.stats.norm.cdf", "scipy.stats.gamma.logpdf", "scipy.stats.logistic.cdf",
    "scipy.linalg.expm", "scipy.linalg.det", "scipy.linalg.inv", "scipy.linalg.solve",
    "scipy.linalg.norm", "scipy.signal.fftconvolve", "scipy.special.owens_t",
    "scipy.special.stdtr", "scipy.special.chdtr", "scipy.special.gammainc",
    "scipy.special.gammaincc", "scipy.special.betainc", "scipy.special.boxcox",
    "scipy.special.boxcox1p", "scipy.special.huber", "scipy.special.pseudo_huber",
    "scipy.special.zeta(q=)", "scipy.special.polygamma",
)


def require_array_api():
    if "scipy" in sys.modules and not os.environ.get("SCIPY_ARRAY_API"):
        raise RuntimeError("scipy was imported without SCIPY_ARRAY_API=1: the probe needs it "
                           "set before scipy is first imported")
    os.environ["SCIPY_ARRAY_API"] = "1"


def _summary(error):
    """An error as the list shows it: type and message, without tensor names or places."""
    text = str(error).split("\n")[0]
    text = text.split(" At ")[0]
    text = re.sub(r'Tensor\("[^"]*", shape=[^)]*\)?, dtype=\w+\)', "a tensor", text)
    return f"{type(error).__name__}: {text}"


def run_case(name, fn, args):
    """('ok', None) when the traced call gives SciPy's eager answer, else ('error', text)
    for an error that names the SciPy function; anything else is ('wrong', text)."""
    import autograph as ag
    want = fn(*args)
    try:
        got = ag.function(fn)(*args)
    except Exception as e:   # noqa: BLE001  (the probe records what users would see)
        text = _summary(e)
        public = name.split("(")[0]
        return ("error", text) if public in text else ("wrong", text)
    try:
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9, atol=1e-12)
    except AssertionError as e:
        return "wrong", str(e).strip().split("\n")[0]
    return "ok", None


def probe():
    """{name: (status, text)} for every case."""
    import warnings
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fn, args in cases():
            out[name] = run_case(name, fn, args)
    return out


def markdown(results):
    ok = sorted(n for n, (s, _) in results.items() if s == "ok")
    bad = sorted(n for n, (s, _) in results.items() if s != "ok")
    lines = [
        "# SciPy inside traced functions", "",
        "<!-- generated by `python -m autograph.runtime.numpy.scipy_coverage --write "
        "docs/scipy_coverage.md`; tests/runtime/test_scipy_coverage.py checks it is "
        "current -->", "",
        f"A probe of {len(results)} commonly used SciPy functions, each called inside "
        "`ag.function` on float64 arrays under `SCIPY_ARRAY_API=1` (see docs/scipy.md). "
        f"{len(ok)} give SciPy's own eager answer (relative tolerance 1e-9); "
        f"{len(bad)} raise an error that names the function. Every `scipy.special` ufunc "
        "with one output works (the cases here are a sample); the functions marked "
        "with a gradient have theirs checked against central differences.", "",
        f"## Same answer as SciPy ({len(ok)})", ""]
    lines += [f"- `{n}`" + (" (gradient)" if n in GRADIENTS else "") for n in ok]
    lines += ["", f"## A clear error ({len(bad)})", ""]
    lines += [f"- `{n}`: {results[n][1]}" for n in bad]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    require_array_api()
    text = markdown(probe())
    if "--write" in sys.argv:
        with open(sys.argv[sys.argv.index("--write") + 1], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
