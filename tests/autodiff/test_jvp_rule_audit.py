"""Every differentiable primitive has a forward-mode (JVP) interpretation.

A primitive with a VJP rule needs a JVP rule (autograph/autodiff/jvp_table.py: written,
linear, or the transpose of its VJP rule), unless it is on the short list of structural
primitives the JVP transform handles itself. A primitive added later with a VJP rule and
no JVP rule fails here, as the VJP audit (test_rule_audit.py) fails one with neither."""

import numpy as np
import pytest

import autograph as ag
from autograph.autodiff import jvp_table
from autograph.autodiff import jvp_rules, jvp_rules_state  # noqa: F401 (fill the table)
from autograph.runtime.ir import primitives
from tests.autodiff.test_rule_audit import _autograph_table, _import_all

# handled by the transform (autograph/autodiff/jvp.py, jvp_control_flow.py), not by a rule:
# graph inputs and constants (their tangents are given or zero), control flow (rebuilt with
# tangent outputs / loop variables), and Variables (a read's tangent is the tangent of the
# value last assigned in the same straight-line code)
STRUCTURAL = {"Placeholder", "Const", "cond", "while_loop", "read_variable",
              "assign_variable", "update_variable"}


def _missing(table):
    return sorted(name for name, p in table.items()
                  if not p.nondiff and name not in STRUCTURAL
                  and jvp_table.lookup(name) is None)


def test_every_differentiable_primitive_has_a_jvp_rule():
    _import_all()
    table = _autograph_table()
    assert len(table) > 150
    assert not _missing(table), f"primitives without a JVP rule: {_missing(table)}"


def test_the_structural_list_is_short_and_real():
    _import_all()
    assert STRUCTURAL <= set(primitives.PRIMITIVES)
    assert all(jvp_table.lookup(n) is None for n in STRUCTURAL)


def test_a_new_primitive_without_a_jvp_rule_is_reported():
    _import_all()
    primitives.register("jvp_audit_probe", lambda x: [(x.dtype, x.shape, False)], "positive",
                        vjp=lambda cts, node: [cts[0]])
    try:
        table = dict(_autograph_table())
        table["jvp_audit_probe"] = primitives.PRIMITIVES["jvp_audit_probe"]
        assert _missing(table) == ["jvp_audit_probe"]

        def f(x):
            return primitives.bind1("jvp_audit_probe", [x]) * 2.0
        with pytest.raises(ag.autodiff.transform.NonDifferentiableError,
                           match="jvp_audit_probe.*forward mode.*no JVP rule"):
            ag.jvp(f, (np.ones(2),), (np.ones(2),))
    finally:
        del primitives.PRIMITIVES["jvp_audit_probe"]


def test_handwritten_linear_and_transposed_rules_agree():
    """One function through all three kinds of rule, against central differences."""
    def f(x):
        m = np.reshape(x, (2, 2))
        a = np.sum(np.tanh(m @ m.T) * 1.5)                 # written: tanh, matmul
        b = np.sum(np.concatenate([m, m[::-1]], axis=0))   # linear: getitem, concat
        c = np.linalg.det(m + 3.0 * np.eye(2)) + np.max(x)  # transposed: det, max
        return a + b + c
    rng = np.random.default_rng(3)
    x, t = rng.standard_normal(4), rng.standard_normal(4)
    _, tout = ag.jvp(f, (x,), (t,))
    h = 1e-6
    np.testing.assert_allclose(tout, (f(x + h * t) - f(x - h * t)) / (2 * h), rtol=1e-6)


def _spd(x):
    m = np.reshape(x, (2, 2))
    return m @ m.T + 2.0 * np.eye(2)


FAMILIES = {
    "solve_inv": lambda x: np.linalg.solve(_spd(x), x[:2]) + np.sum(np.linalg.inv(_spd(x))),
    "cholesky_slogdet": lambda x: np.sum(np.linalg.cholesky(_spd(x))) +
    np.linalg.slogdet(_spd(x))[1],
    "eigvalsh": lambda x: np.linalg.eigvalsh(_spd(x)),
    "sort_clip_prod": lambda x: np.sort(x) * np.clip(x, -0.5, 0.5) + np.prod(x),
    "cumprod_minmax": lambda x: np.cumprod(x) + np.min(x) * np.max(x ** 2),
    "where_take": lambda x: np.where(x > 0, x ** 2, np.sin(x)) + np.take(x, [3, 0, 1, 1]),
    "pow_hypot": lambda x: np.power(np.abs(x) + 1.0, x) + np.hypot(x, 2.0 * x[::-1]),
}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_rules_of_each_family_match_central_differences(name):
    f = FAMILIES[name]
    x = np.array([0.7, -0.3, 0.45, 1.1])
    t = np.array([0.2, 0.5, -0.4, 0.3])
    y, tout = ag.jvp(f, (x,), (t,))
    np.testing.assert_allclose(y, f(x), rtol=1e-12)
    h = 1e-6
    np.testing.assert_allclose(tout, (f(x + h * t) - f(x - h * t)) / (2 * h), rtol=1e-6,
                               atol=1e-9)


def test_special_functions_go_through_their_transposed_rules():
    special = pytest.importorskip("scipy.special")

    def f(x):
        return special.erf(x) * special.gammaln(x + 2.0) + special.expit(x)
    x, t = np.array([0.3, -0.8, 1.2]), np.array([1.0, 0.5, -2.0])
    _, tout = ag.jvp(f, (x,), (t,))
    h = 1e-6
    np.testing.assert_allclose(tout, (f(x + h * t) - f(x - h * t)) / (2 * h), rtol=1e-6)
