"""SciPy's ufuncs (`scipy.special`) on symbolic tensors: primitives whose kernel is the ufunc.

`scipy.special.expit(x)` on a tensor reaches `Tensor.__array_ufunc__` like any NumPy ufunc
(SciPy's functions are `np.ufunc`s). Each single-output ufunc of `scipy.special` is the
primitive `special_<name>`: its dtypes and broadcasting are the ufunc's own loops (the
same `Elementwise` staging NumPy's ufuncs use), its kernel calls the ufunc, and its
reverse-mode rule is built from SciPy's own functions (the derivative of `gammaln` is
`digamma`, of `digamma` `polygamma(1, .)`, of `i0e` `i1e - sign * i0e`, ...), so the rules
are themselves differentiable and a second gradient works.

A ufunc whose derivative is not in `PARTIALS` has a rule that raises a clear error naming
the function and argument (never a silent zero); integer orders and degrees (`jn`'s n,
`eval_legendre`'s n) are step functions of their argument: zero cotangents.

The primitives are registered without importing SciPy (a saved model that holds one loads
without it until it runs); the ufunc is looked up on first use. Kernels call SciPy on NumPy
arrays; on the cuda device, CuPy's `cupyx.scipy.special` function of the same name (untested
here: no GPU in this session), on other host devices SciPy on NumPy copies.
"""

import importlib
import math

import numpy as np

from autograph.runtime.ir import primitives
from autograph.runtime.numpy import elementwise

# the single-output ufuncs of scipy.special (1.17); names a SciPy lacks raise on first use
# (jn is jv, psi is digamma: one ufunc each)
NAMES = tuple("""
agm bdtr bdtrc bdtri bdtrik bdtrin bei beip ber berp besselpoly beta betainc betaincc
betainccinv betaincinv betaln binom boxcox boxcox1p btdtria btdtrib cbrt chdtr chdtrc
chdtri chdtriv chndtr chndtridf chndtrinc chndtrix cosdg cosm1 cotdg dawsn digamma ellipe
ellipeinc ellipk ellipkinc ellipkm1 elliprc elliprd elliprf elliprg elliprj entr erf erfc
erfcinv erfcx erfi erfinv eval_chebyc eval_chebys eval_chebyt eval_chebyu eval_gegenbauer
eval_genlaguerre eval_hermite eval_hermitenorm eval_jacobi eval_laguerre eval_legendre
eval_sh_chebyt eval_sh_chebyu eval_sh_jacobi eval_sh_legendre exp1 exp10 exp2 expi expit
expm1 expn exprel fdtr fdtrc fdtri fdtridfd gamma gammainc gammaincc gammainccinv
gammaincinv gammaln gammasgn gdtr gdtrc gdtria gdtrib gdtrix hankel1 hankel1e hankel2
hankel2e huber hyp0f1 hyp1f1 hyp2f1 hyperu i0 i0e i1 i1e inv_boxcox inv_boxcox1p
it2struve0 itmodstruve0 itstruve0 iv ive j0 j1 jv jve k0 k0e k1 k1e kei keip ker kerp
kl_div kn kolmogi kolmogorov kv kve log1p log_expit log_ndtr log_wright_bessel loggamma
logit lpmv mathieu_a mathieu_b modstruve nbdtr nbdtrc nbdtri nbdtrik nbdtrin ncfdtr
ncfdtri ncfdtridfd ncfdtridfn ncfdtrinc nctdtr nctdtridf nctdtrinc nctdtrit ndtr ndtri
ndtri_exp nrdtrimn nrdtrisd obl_cv owens_t pdtr pdtrc pdtri pdtrik poch powm1 pro_cv
pseudo_huber radian rel_entr rgamma round sindg smirnov smirnovi spence stdtr stdtridf
stdtrit struve tandg tklmbda voigt_profile wofz wright_bessel wrightomega xlog1py xlogy y0
y1 yn yv yve zeta zetac
""".split())

PREFIX = "special_"


def _sp():
    return importlib.import_module("scipy.special")


def owner(uf):
    """'scipy.special' when `uf` is one of SciPy's special functions, else None (SciPy is
    not imported for the question: a ufunc of SciPy's exists only once SciPy is). Under
    SCIPY_ARRAY_API=1 `scipy.special.erf` is a wrapper of the ufunc `_ufuncs.erf`."""
    import sys
    name = getattr(uf, "__name__", None)
    if not isinstance(name, str):
        return None
    for module in ("scipy.special._ufuncs", "scipy.special"):
        mod = sys.modules.get(module)
        if mod is not None and getattr(mod, name, None) is uf:
            return "scipy.special"
    return None


# SciPy's ufunc digamma is named psi; zeta(x, q) is the private ufunc _zeta (the function
# scipy.special.zeta calls)
_UFUNC_NAMES = {"digamma": "psi", "zeta": "_zeta"}
_FROM_UFUNC = {v: k for k, v in _UFUNC_NAMES.items()}


class _Lazy:
    """The Elementwise staging of one SciPy ufunc, made when first used."""

    def __init__(self, name):
        self.name, self._entry = name, None

    def entry(self):
        if self._entry is None:
            sp = _sp()
            raw = importlib.import_module("scipy.special._ufuncs")
            uf = getattr(raw, _UFUNC_NAMES.get(self.name, self.name), None)
            uf = uf if isinstance(uf, np.ufunc) else getattr(sp, self.name, None)
            if not isinstance(uf, np.ufunc):
                raise NotImplementedError(f"this SciPy has no ufunc scipy.special.{self.name}")
            self._entry = elementwise.Elementwise(uf, PREFIX + self.name, owner="scipy.special")
        return self._entry

    def infer(self, *xs):
        return self.entry().infer(*xs)

    def kernel(self, xp, *arrays):
        uf = self.entry().ufunc
        if xp is np:
            return uf(*arrays)
        if getattr(xp, "__name__", "").startswith("cupy"):   # CuPy's own, on the GPU
            fn = getattr(importlib.import_module("cupyx.scipy.special"), self.name, None)
            if fn is None:
                raise NotImplementedError(f"scipy.special.{self.name} has no CuPy version "
                                          "(cupyx.scipy.special): run it on the cpu device")
            return fn(*arrays)
        # another array library on the host (the strict device): SciPy on NumPy copies
        return xp.asarray(uf(*[np.asarray(a) for a in arrays]))


_LAZY = {name: _Lazy(name) for name in NAMES}


def register_ufuncs():
    """Put every SciPy ufunc of NAMES into the ufunc dispatch table (imports SciPy)."""
    for name, lazy in _LAZY.items():
        try:
            entry = lazy.entry()
        except NotImplementedError:
            continue
        elementwise.UFUNCS[entry.ufunc] = entry


def staged(uf):
    """The staging of SciPy ufunc `uf`, or None when it has no primitive here."""
    if owner(uf) is None or _FROM_UFUNC.get(uf.__name__, uf.__name__) not in _LAZY:
        return None
    register_ufuncs()
    return elementwise.UFUNCS.get(uf)


_ALIASES = {"psi": "digamma"}   # the ufunc `digamma` is named psi (its __name__)


class Special:
    """The array API namespace's `special`: SciPy (under SCIPY_ARRAY_API=1) looks for
    `xp.special.<name>` to run a special function on another library's arrays, so
    `scipy.special.erf(tensor)` stages the primitive `special_erf` there too."""

    def __getattr__(self, name):
        lazy = _LAZY.get(_ALIASES.get(name, name))
        if lazy is None:
            raise AttributeError(f"autograph's array API namespace has no special.{name}")
        try:
            entry = lazy.entry()
        except NotImplementedError as e:
            raise AttributeError(str(e)) from None
        elementwise.UFUNCS.setdefault(entry.ufunc, entry)

        def fn(*args, **kwargs):
            if kwargs.get("out") is not None:
                raise TypeError(f"scipy.special.{name}(..., out=...) cannot write into a "
                                "symbolic tensor; use the returned value")
            dtype = kwargs.pop("dtype", None)
            out = entry(*args, strong=True)
            return out if dtype is None else elementwise.cast(out, np.dtype(dtype))
        fn.__name__ = fn.__qualname__ = name
        setattr(self, name, fn)
        return fn


# -- derivatives: one function per input, of the inputs' values and the output y ------------

ZERO = "zero"   # a step function of this input (an integer order or degree)


def _s(name, *args):
    return getattr(_sp(), name)(*args)


def _safe_ratio(y, x, at0):
    """y / x, and `at0` where x == 0 (the limit of a Bessel-type ratio)."""
    zero = np.equal(x, 0)
    return np.where(zero, at0, y / np.where(zero, 1.0, x))


_SQRT_PI, _SQRT_2PI = math.sqrt(math.pi), math.sqrt(2 * math.pi)
_DEG = math.pi / 180.0


def _exprel_d(x, y):
    small = np.less(np.abs(x), 1e-3)
    xs = np.where(small, 1.0, x)
    return np.where(small, 0.5 + x / 3.0, (np.exp(xs) - y) / xs)


def _gammainc_dx(a, x, y):
    return np.exp(-x + (a - 1.0) * np.log(x) - _s("gammaln", a))


def _betainc_dx(a, b, x, y):
    return np.exp((a - 1.0) * np.log(x) + (b - 1.0) * np.log1p(-x) - _s("betaln", a, b))


PARTIALS = {
    "expit": (lambda x, y: y * (1.0 - y),),
    "logit": (lambda x, y: 1.0 / (x * (1.0 - x)),),
    "log_expit": (lambda x, y: _s("expit", -x),),
    "erf": (lambda x, y: (2.0 / _SQRT_PI) * np.exp(-x * x),),
    "erfc": (lambda x, y: (-2.0 / _SQRT_PI) * np.exp(-x * x),),
    "erfi": (lambda x, y: (2.0 / _SQRT_PI) * np.exp(x * x),),
    "erfinv": (lambda x, y: (_SQRT_PI / 2.0) * np.exp(y * y),),
    "erfcinv": (lambda x, y: (-_SQRT_PI / 2.0) * np.exp(y * y),),
    "erfcx": (lambda x, y: 2.0 * x * y - 2.0 / _SQRT_PI,),
    "dawsn": (lambda x, y: 1.0 - 2.0 * x * y,),
    "ndtr": (lambda x, y: np.exp(-0.5 * x * x) / _SQRT_2PI,),
    "log_ndtr": (lambda x, y: np.exp(-0.5 * x * x - y) / _SQRT_2PI,),
    "ndtri": (lambda x, y: _SQRT_2PI * np.exp(0.5 * y * y),),
    "ndtri_exp": (lambda x, y: _SQRT_2PI * np.exp(0.5 * y * y + x),),
    "gamma": (lambda x, y: y * _s("digamma", x),),
    "gammaln": (lambda x, y: _s("digamma", x),),
    "loggamma": (lambda x, y: _s("digamma", x),),
    "rgamma": (lambda x, y: -y * _s("digamma", x),),
    "digamma": (lambda x, y: polygamma(1, x),),
    "zeta": (None, lambda x, q, y: -x * _s("zeta", x + 1.0, q)),
    "gammasgn": (ZERO,),
    "beta": (lambda a, b, y: y * (_s("digamma", a) - _s("digamma", a + b)),
             lambda a, b, y: y * (_s("digamma", b) - _s("digamma", a + b))),
    "betaln": (lambda a, b, y: _s("digamma", a) - _s("digamma", a + b),
               lambda a, b, y: _s("digamma", b) - _s("digamma", a + b)),
    "poch": (lambda z, m, y: y * (_s("digamma", z + m) - _s("digamma", z)),
             lambda z, m, y: y * _s("digamma", z + m)),
    "gammainc": (None, _gammainc_dx),
    "gammaincc": (None, lambda a, x, y: -_gammainc_dx(a, x, y)),
    "betainc": (None, None, _betainc_dx),
    "betaincc": (None, None, lambda a, b, x, y: -_betainc_dx(a, b, x, y)),
    "xlogy": (lambda a, b, y: np.log(b), lambda a, b, y: np.where(np.equal(a, 0), 0.0, a / b)),
    "xlog1py": (lambda a, b, y: np.log1p(b),
                lambda a, b, y: np.where(np.equal(a, 0), 0.0, a / (1.0 + b))),
    "entr": (lambda x, y: -(np.log(x) + 1.0),),
    "rel_entr": (lambda x, z, y: np.log(x / z) + 1.0, lambda x, z, y: -x / z),
    "kl_div": (lambda x, z, y: np.log(x / z), lambda x, z, y: 1.0 - x / z),
    "huber": (None, lambda d, r, y: np.where(np.less_equal(np.abs(r), d), r,
                                             d * np.sign(r))),
    "pseudo_huber": (None, lambda d, r, y: r / np.sqrt(1.0 + (r / d) ** 2)),
    "i0": (lambda x, y: _s("i1", x),),
    "i1": (lambda x, y: _s("i0", x) - _safe_ratio(y, x, 0.5),),
    "i0e": (lambda x, y: _s("i1e", x) - np.sign(x) * y,),
    "i1e": (lambda x, y: _s("i0e", x) - _safe_ratio(y, x, 0.5) - np.sign(x) * y,),
    "j0": (lambda x, y: -_s("j1", x),),
    "j1": (lambda x, y: _s("j0", x) - _safe_ratio(y, x, 0.5),),
    "y0": (lambda x, y: -_s("y1", x),),
    "y1": (lambda x, y: _s("y0", x) - y / x,),
    "k0": (lambda x, y: -_s("k1", x),),
    "k1": (lambda x, y: -_s("k0", x) - y / x,),
    "k0e": (lambda x, y: y - _s("k1e", x),),
    "k1e": (lambda x, y: y - _s("k0e", x) - y / x,),
    "jv": (None, lambda v, x, y: 0.5 * (_s("jv", v - 1.0, x) - _s("jv", v + 1.0, x))),
    "yv": (None, lambda v, x, y: 0.5 * (_s("yv", v - 1.0, x) - _s("yv", v + 1.0, x))),
    "iv": (None, lambda v, x, y: 0.5 * (_s("iv", v - 1.0, x) + _s("iv", v + 1.0, x))),
    "kv": (None, lambda v, x, y: -0.5 * (_s("kv", v - 1.0, x) + _s("kv", v + 1.0, x))),
    "yn": (ZERO, lambda n, x, y: 0.5 * (_s("yv", n - 1.0, x) - _s("yv", n + 1.0, x))),
    "kn": (ZERO, lambda n, x, y: -0.5 * (_s("kv", n - 1.0, x) + _s("kv", n + 1.0, x))),
    "exp1": (lambda x, y: -np.exp(-x) / x,),
    "expi": (lambda x, y: np.exp(x) / x,),
    "exprel": (_exprel_d,),
    "exp10": (lambda x, y: y * math.log(10.0),),
    "exp2": (lambda x, y: y * math.log(2.0),),
    "expm1": (lambda x, y: y + 1.0,),
    "log1p": (lambda x, y: 1.0 / (1.0 + x),),
    "cosm1": (lambda x, y: -np.sin(x),),
    "cbrt": (lambda x, y: 1.0 / (3.0 * y * y),),
    "sindg": (lambda x, y: _DEG * _s("cosdg", x),),
    "cosdg": (lambda x, y: -_DEG * _s("sindg", x),),
    "tandg": (lambda x, y: _DEG * (1.0 + y * y),),
    "cotdg": (lambda x, y: -_DEG * (1.0 + y * y),),
    "wrightomega": (lambda x, y: y / (1.0 + y),),
    "spence": (lambda x, y: np.log(x) / (1.0 - x),),
    "boxcox": (lambda x, lm, y: np.power(x, lm - 1.0), None),
    "boxcox1p": (lambda x, lm, y: np.power(1.0 + x, lm - 1.0), None),
    "powm1": (lambda x, p, y: p * np.power(x, p - 1.0),
              lambda x, p, y: (y + 1.0) * np.log(x)),
    "stdtr": (None, lambda df, t, y: np.exp(
        _s("gammaln", (df + 1.0) / 2.0) - _s("gammaln", df / 2.0)
        - 0.5 * np.log(df * math.pi) - (df + 1.0) / 2.0 * np.log1p(t * t / df))),
    "chdtr": (None, lambda v, x, y: np.exp((v / 2.0 - 1.0) * np.log(x) - x / 2.0
                                           - v / 2.0 * math.log(2.0)
                                           - _s("gammaln", v / 2.0))),
    "pdtr": (ZERO, lambda k, m, y: -np.exp(np.floor(k) * np.log(m) - m
                                           - _s("gammaln", np.floor(k) + 1.0))),
    "owens_t": (lambda h, a, y: -np.exp(-0.5 * h * h) / _SQRT_2PI * 0.5 * _s(
        "erf", a * h / math.sqrt(2.0)),
                lambda h, a, y: np.exp(-0.5 * h * h * (1.0 + a * a))
                / (2 * math.pi * (1.0 + a * a))),
    "round": (ZERO,),
}
for _n in ("eval_chebyc", "eval_chebys", "eval_chebyt", "eval_chebyu", "eval_hermite",
           "eval_hermitenorm", "eval_laguerre", "eval_legendre", "eval_sh_chebyt",
           "eval_sh_chebyu", "eval_sh_legendre"):
    PARTIALS.setdefault(_n, (ZERO, None))   # the degree: an integer; d/dx: not here yet


def polygamma(n, x):
    """scipy.special.polygamma(n, x) for an int n, staged (SciPy's version converts its
    arguments with np.asarray): the primitive `special_polygamma`."""
    from autograph.runtime.numpy.elementwise import as_tensor, cast
    x = as_tensor(x)
    if x.dtype.kind != "f":
        x = cast(x, np.dtype(np.float64))
    return primitives.bind1("special_polygamma", (x,), {"n": int(n)})


def _polygamma_vjp(cts, node):
    from autograph.runtime.numpy.adjoint import fit, ins
    x = ins(node)[0]
    return [fit(cts[0] * polygamma(node.attrs["n"] + 1, x.value), x)]


primitives.register(
    "special_polygamma", lambda x, *, n: [(x.dtype, x.shape, False)],
    lambda xp, x, *, n: _sp().polygamma(n, x).astype(x.dtype, copy=False),
    doc="scipy.special.polygamma(n, x), n a static int", vjp=_polygamma_vjp)


def _rule(name):
    partials = PARTIALS.get(name)

    def rule(cts, node):
        from autograph.runtime.numpy.adjoint import fit, ins, needs
        xs = ins(node)
        out = []
        values = None
        for i, x in enumerate(xs):
            if x.dtype.kind not in "fc" or not needs(node, i):
                out.append(None)
                continue
            p = partials[i] if partials is not None else None
            if p is ZERO:
                out.append(None)
                continue
            if p is None:
                which = f"argument {i + 1} of {len(xs)}" if len(xs) > 1 else "its argument"
                raise NotImplementedError(
                    f"the gradient of scipy.special.{name} with respect to {which} is not "
                    "implemented in autograph; pass that argument as a constant (or under "
                    "ag.stop_gradient), or see docs/scipy.md for the functions that have one")
            if values is None:
                values = [v.value for v in xs]
            d = p(*values, node.outputs[0])
            out.append(fit(cts[0] * d, x, tuple(o for o in xs if o is not x)))
        return out
    return rule


for _name, _lazy in _LAZY.items():
    primitives.register(PREFIX + _name, _lazy.infer, _lazy.kernel, doc=f"scipy.special.{_name}",
                        vjp=_rule(_name))
