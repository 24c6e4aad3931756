"""The attribute schema table covers every primitive (a new primitive without an entry
fails here), agrees with each primitive's shape rule about attribute names, and checks
values strictly."""

import inspect

import numpy as np
import pytest

from autograph.saved_model import SavedModelError
from autograph.saved_model.format import Ref
from autograph.saved_model.schema import SCHEMAS, check_attrs, maybe, register_all_primitives


def _autographs(table):
    """The primitives autograph itself registers (other tests register their own)."""
    return {name for name, p in table.items()
            if getattr(p.infer, "__module__", "").startswith("autograph.")}


def test_every_primitive_has_a_schema():
    table = register_all_primitives()
    missing = sorted(_autographs(table) - set(SCHEMAS))
    assert not missing, (
        f"primitives without an attribute schema: {missing}. Add an entry to "
        "autograph/saved_model/schema.py (what each attribute may hold), so saved models "
        "holding them can be loaded and checked.")
    assert not sorted(set(SCHEMAS) - _autographs(table)), "entries for unknown primitives"


def test_schema_names_agree_with_the_shape_rules():
    table = register_all_primitives()
    for name, schema in SCHEMAS.items():
        params = inspect.signature(table[name].infer).parameters.values()
        if any(p.kind == p.VAR_KEYWORD for p in params):
            continue                      # a rule that takes any attributes
        keywords = {p.name for p in params if p.kind == p.KEYWORD_ONLY}
        if not keywords and not schema:
            continue
        required = {k for k, c in schema.items() if type(c) is not maybe}
        assert required <= keywords, (name, required - keywords)
        assert set(schema) <= keywords, (name, set(schema) - keywords)


@pytest.mark.parametrize("op, attrs, ok", [
    ("sum", {"axis": (0,), "keepdims": False}, True),
    ("sum", {"axis": (0,), "keepdims": False, "dtype": np.dtype("float32")}, True),
    ("sum", {"axis": 0.5, "keepdims": False}, False),
    ("sum", {"axis": None}, False),                           # keepdims missing
    ("getitem", {"index": (("s", None, ("d", 0), None), ("i", 2), ("n",), ("e",))}, True),
    ("getitem", {"index": (("x", 1),)}, False),
    ("cond", {"true_graph": Ref("graph", 1), "false_graph": Ref("graph", 2)}, True),
    ("cond", {"true_graph": Ref("variable", 1), "false_graph": Ref("graph", 2)}, False),
    ("update_variable", {"variable": Ref("variable", 0), "name": "v", "function": "f",
                         "op": "add", "operand_dtype": np.dtype("f8"),
                         "dtype": np.dtype("f8")}, True),
    ("update_variable", {"variable": Ref("variable", 0), "name": "v", "function": "f",
                         "op": "__import__", "operand_dtype": np.dtype("f8"),
                         "dtype": np.dtype("f8")}, False),
    ("while_loop", {"cond_graph": Ref("graph", 1), "body_graph": Ref("graph", 2),
                    "maximum_iterations": "input"}, True),
    ("while_loop", {"cond_graph": Ref("graph", 1), "body_graph": Ref("graph", 2),
                    "maximum_iterations": "eval"}, False),
    ("add", {}, True),
    ("add", {"x": 1}, False),
])
def test_values_are_checked(op, attrs, ok):
    if ok:
        check_attrs(op, attrs, "node")
    else:
        with pytest.raises(SavedModelError, match=f"op '{op}'"):
            check_attrs(op, attrs, "node")
