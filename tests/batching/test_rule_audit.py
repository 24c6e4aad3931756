"""The whole primitive table has a batching interpretation.

Every primitive registered anywhere in autograph (all modules under autograph.runtime,
autograph.autodiff, autograph.operators and autograph.batching are imported, so a new family
file is audited too) has a batching rule, belongs to a rule family (the ufuncs, found by
their shape rule), or is refused with a reason (transform.REFUSED); the structural ones
have no inputs and so are never batched. A primitive added later without one fails here."""

import importlib
import pkgutil

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.ir import primitives
from autograph.batching import rules, transform

STRUCTURAL = rules.STRUCTURAL


def _import_all():
    from autograph.saved_model.schema import register_all_primitives
    register_all_primitives()        # the data and saved-model primitives too
    for pkg in ("autograph.runtime", "autograph.autodiff", "autograph.operators",
                "autograph.batching"):
        mod = importlib.import_module(pkg)
        for info in pkgutil.walk_packages(mod.__path__, pkg + "."):
            importlib.import_module(info.name)


def _autograph_table():
    return {name: p for name, p in primitives.PRIMITIVES.items()
            if getattr(p.infer, "__module__", "").startswith("autograph.")}


def _missing(names):
    return sorted(n for n in names if n not in STRUCTURAL and n not in transform.REFUSED
                  and transform.rule_for(n) is None)


def test_every_primitive_has_a_batching_rule_or_a_reason():
    _import_all()
    table = _autograph_table()
    assert len(table) > 150
    missing = _missing(table)
    assert not missing, f"primitives without a batching rule or a refusal: {missing}"


def test_refusals_are_reasoned_and_real():
    _import_all()
    assert set(transform.REFUSED) <= set(primitives.PRIMITIVES)
    for name, why in transform.REFUSED.items():
        assert len(why) > 30, name
        assert transform.RULES.get(name) is None, f"{name} both refused and ruled"
    # the structural ones take no inputs: nothing batched can reach them
    assert STRUCTURAL <= set(primitives.PRIMITIVES) and len(STRUCTURAL) <= 4


def test_a_new_primitive_without_a_rule_is_reported():
    _import_all()
    primitives.register("vmap_audit_probe", lambda x: [(x.dtype, x.shape, False)], "positive")
    try:
        assert _missing(["vmap_audit_probe", "add", "sum"]) == ["vmap_audit_probe"]
    finally:
        del primitives.PRIMITIVES["vmap_audit_probe"]


def test_a_refused_primitive_names_the_user_line():
    def f(x):
        return np.nonzero(x > 0)[0]
    with pytest.raises(transform.BatchingError) as err:
        ag.vmap(f)(np.arange(6.0).reshape(2, 3))
    msg = str(err.value)
    assert "'nonzero'" in msg and "ragged" in msg and "test_rule_audit.py" in msg
