"""Which library function the user called, for errors raised deep inside it.

When SciPy or scikit-learn converts a traced tensor with `np.asarray` (or asks for its
truth value, or writes into the user's input), the error happens in a private helper
several calls deep. The user wrote `scipy.linalg.norm(x)`, so the message should say
"scipy.linalg.norm" and what to use instead. `caller_name()` walks the stack to the
outermost library frame below the user's code and names the public function it runs
(`scipy.linalg.norm`, `scipy.stats.norm.logpdf`); `advice(name)` is what to do instead.
"""

import os
import sys

LIBRARIES = ("scipy", "sklearn")
_SKIP = ("autograph", "numpy", "array_api_extra", "array_api_compat", "functools",
         "contextlib")

# what to use instead, inside a traced function, of SciPy functions that convert with np.asarray
INSTEAD = {
    "scipy.linalg.norm": "np.linalg.norm (or xp.linalg.vector_norm / matrix_norm)",
    "scipy.linalg.inv": "np.linalg.inv",
    "scipy.linalg.det": "np.linalg.det",
    "scipy.linalg.solve": "np.linalg.solve",
    "scipy.linalg.cholesky": "np.linalg.cholesky (lower=True's factor; .T for the upper one)",
    "scipy.linalg.eigh": "np.linalg.eigh",
    "scipy.linalg.eigvalsh": "np.linalg.eigvalsh",
    "scipy.linalg.svd": "np.linalg.svd",
    "scipy.linalg.svdvals": "np.linalg.svd(x, compute_uv=False)",
    "scipy.linalg.qr": "np.linalg.qr",
    "scipy.linalg.pinv": "np.linalg.pinv",
    "scipy.linalg.lstsq": "np.linalg.lstsq",
    "scipy.linalg.solve_triangular": "np.linalg.solve",
    "scipy.linalg.expm": "a Taylor or Pade series written with np.linalg (or compute it "
                         "outside the traced function)",
    "scipy.signal.convolve": "scipy.signal.fftconvolve (convolve measures the data to "
                             "choose a method, and checks its result for NaN)",
    "scipy.signal.correlate": "scipy.signal.fftconvolve(a, b[::-1]) (correlate measures the "
                              "data to choose a method)",
    "scipy.signal.oaconvolve": "scipy.signal.fftconvolve",
    "scipy.stats.norm.logpdf": "-0.5 * x**2 - 0.5 * np.log(2 * np.pi)",
    "scipy.stats.norm.pdf": "np.exp(-0.5 * x**2) / np.sqrt(2 * np.pi)",
    "scipy.stats.norm.cdf": "scipy.special.ndtr",
    "scipy.stats.norm.logcdf": "scipy.special.log_ndtr",
    "scipy.stats.norm.ppf": "scipy.special.ndtri",
    "scipy.stats.norm.sf": "scipy.special.ndtr(-x)",
    "scipy.stats.logistic.cdf": "scipy.special.expit",
    "scipy.stats.logistic.ppf": "scipy.special.logit",
    "scipy.stats.gamma.logpdf": "scipy.special.xlogy and scipy.special.gammaln",
    "scipy.stats.gamma.cdf": "scipy.special.gammainc",
    "scipy.stats.beta.cdf": "scipy.special.betainc",
    "scipy.stats.poisson.logpmf": "scipy.special.xlogy(k, mu) - mu - scipy.special.gammaln(k + 1)",
    "scipy.stats.expon.logpdf": "-x (where x >= 0)",
    "scipy.stats.t.cdf": "scipy.special.stdtr",
    "scipy.stats.chi2.cdf": "scipy.special.chdtr",
}


def _module(frame):
    return frame.f_globals.get("__name__") or ""


def _top(module):
    return module.partition(".")[0]


def caller_name(frame=None):
    """The public name of the library function the user's code called, or None when the
    stack holds no library frame."""
    frame = frame or sys._getframe(1)
    entry = []   # library frames, innermost first, up to the user's frame
    while frame is not None:
        top = _top(_module(frame))
        if top in LIBRARIES:
            entry.append(frame)
        elif top not in _SKIP and entry:
            break   # the user's code (or anything else) called the library here
        frame = frame.f_back
    for f in reversed(entry):   # outermost first: a public wrapper, or the function it wraps
        name = public_name(f)
        if name is not None:
            return name
    return None


def public_name(frame):
    """`package.function` (or `package.instance.method`) for a library frame, where the
    package exposes it under that name; None otherwise."""
    code = frame.f_code
    module = _module(frame)
    parts = module.split(".")
    public = [p for p in parts if not p.startswith("_")]
    args = code.co_varnames[:code.co_argcount]
    self = frame.f_locals.get("self") if args[:1] == ("self",) else None
    for k in range(len(public), 0, -1):
        package = ".".join(public[:k])
        mod = sys.modules.get(package)
        if mod is None:
            continue
        if self is not None:   # a method of a public instance: scipy.stats.norm.logpdf
            inst_name = getattr(self, "name", None)
            if isinstance(inst_name, str) and getattr(mod, inst_name, None) is self:
                return f"{package}.{inst_name}.{code.co_name}"
            cls = type(self)   # or of a public class: sklearn.preprocessing.MinMaxScaler.fit
            if getattr(mod, cls.__name__, None) is cls:
                return f"{package}.{cls.__name__}.{code.co_name}"
            continue
        obj = getattr(mod, code.co_name, None)
        while obj is not None:
            if getattr(obj, "__code__", None) is code:
                return f"{package}.{code.co_name}"
            obj = getattr(obj, "__wrapped__", None)
        if code.co_freevars:   # a wrapper made per function (SciPy's array API wrappers)
            for attr in dir(mod):
                if _runs(getattr(mod, attr, None), frame):
                    return f"{package}.{attr}"
    return None


def _runs(fn, frame):
    """Whether `frame` runs function object `fn`: its code, and its closure's cells hold
    the values the frame sees (wrappers made by one factory share their code)."""
    code = frame.f_code
    if getattr(fn, "__code__", None) is not code or fn.__closure__ is None:
        return False
    return all(name in frame.f_locals and cell.cell_contents is frame.f_locals[name]
               for name, cell in zip(code.co_freevars, fn.__closure__))


def advice(name):
    """What to do instead of calling library function `name` on a symbolic tensor."""
    instead = INSTEAD.get(name)
    out = f"use {instead} instead, or call {name} outside the traced function" if instead \
        else f"call {name} outside the traced function, on its results"
    if name.startswith("scipy.") and not os.environ.get("SCIPY_ARRAY_API"):
        out += (". SciPy passes traced tensors to their own array API namespace only when "
                "the environment variable SCIPY_ARRAY_API=1 is set before scipy is first "
                "imported (docs/scipy.md)")
    elif name.startswith("sklearn."):
        out += (". scikit-learn uses the array API only inside "
                "sklearn.config_context(array_api_dispatch=True), and its input checks "
                "branch on the data unless assume_finite=True is set too (docs/scipy.md)")
    return out


def library_message(tensor, what):
    """The error message for using `tensor` `what` ("as a NumPy array") inside a library
    function, or None when no library function is on the stack."""
    name = caller_name(sys._getframe(1))
    if name is None:
        return None
    how = _HOW.get(what, f"uses a tensor {what}")
    text = advice(name)
    return (f"{name} cannot run on the symbolic tensor {tensor!r}: it {how}, and a traced "
            f"value is only known when the graph runs. {text[0].upper()}{text[1:]}.")


_HOW = {"as a NumPy array": "converts an array with np.asarray",
        "bool()": "branches on a value computed from its arguments (a data-dependent `if`)",
        "float()": "converts a value computed from its arguments to a Python float",
        "int()": "converts a value computed from its arguments to a Python int",
        "as a Python int": "uses a value computed from its arguments as a Python int"}
