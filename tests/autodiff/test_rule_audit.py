"""The whole primitive table has a gradient interpretation.

Every primitive registered anywhere in autograph (all modules under autograph.runtime,
autograph.autodiff and autograph.operators are imported, so a new family file is audited
too) has a VJP rule, a non-differentiable mark, or is on the short list below of
structural primitives that the autodiff transform itself handles. A primitive added later without either fails here."""

import importlib
import pkgutil

import numpy as np
import pytest

import autograph
from autograph.runtime.ir import primitives

# handled by the transform (autograph/autodiff), not by a per-primitive rule: graph inputs
# and constants, control flow, and Variables (reads of watched Variables are sources;
# assignments are effects whose values are not differentiated)
STRUCTURAL = {"Placeholder", "Const", "cond", "while_loop", "read_variable",
              "assign_variable", "update_variable"}
KNOWN_GAPS = set()   # (the gradient-list helpers and ta_concat have rules: gradlists.py)


def _import_all():
    for pkg in ("autograph.runtime", "autograph.autodiff", "autograph.operators"):
        mod = importlib.import_module(pkg)
        for info in pkgutil.walk_packages(mod.__path__, pkg + "."):
            importlib.import_module(info.name)


def _autograph_table():
    """The primitives autograph's own modules register (tests register probes of their own)."""
    return {name: p for name, p in primitives.PRIMITIVES.items()
            if getattr(p.infer, "__module__", "").startswith("autograph.")}


def test_every_primitive_has_a_gradient_interpretation():
    _import_all()
    table = _autograph_table()
    assert len(table) > 150          # the NumPy families really were imported
    missing = sorted(name for name, p in table.items()
                     if p.vjp is None and not p.nondiff and name not in STRUCTURAL | KNOWN_GAPS)
    assert not missing, f"primitives without a VJP rule or a nondifferentiable mark: {missing}"


def test_structural_list_stays_short_and_real():
    _import_all()
    assert STRUCTURAL <= set(primitives.PRIMITIVES)
    assert len(STRUCTURAL) <= 8


@pytest.mark.parametrize("name", ["equal", "less", "argmax", "floor", "round", "sign",
                                  "isnan", "logical_and", "random", "shape_of", "arange",
                                  "argsort", "nonzero", "matrix_rank", "searchsorted"])
def test_marked_nondifferentiable(name):
    _import_all()
    assert primitives.lookup(name).nondiff


def test_a_new_primitive_without_a_rule_is_reported():
    _import_all()
    primitives.register("audit_probe", lambda x: [(x.dtype, x.shape, False)], "positive")
    try:
        missing = [n for n, p in primitives.PRIMITIVES.items()
                   if n == "audit_probe" or n in _autograph_table()]
        missing = [n for n in missing for p in [primitives.PRIMITIVES[n]]
                   if p.vjp is None and not p.nondiff and n not in STRUCTURAL | KNOWN_GAPS]
        assert missing == ["audit_probe"]
    finally:
        del primitives.PRIMITIVES["audit_probe"]


def test_rules_are_used_by_ag_grad():
    # end to end through the public API: the transform calls these rules
    def loss(w, x):
        h = np.tanh(x @ w + 0.5)
        return np.sum(np.maximum(h, 0.1) ** 2) / h.shape[0] + np.linalg.det(w[:2, :2])
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((3, 3)), rng.standard_normal((4, 3))
    g = autograph.grad(loss)(w, x)
    eps, v = 1e-6, rng.standard_normal(w.shape)
    numeric = (loss(w + eps * v, x) - loss(w - eps * v, x)) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * v), numeric, rtol=1e-6)
