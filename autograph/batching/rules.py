"""Every batching rule, loaded: the family files register into `transform.RULES` (by
primitive name) and `transform.REFUSED` (with reasons); the ufuncs of NumPy and SciPy are
found by their shape rule (`broadcasting.is_elementwise`)."""

from autograph.batching import (axes, broadcasting, conds, indexing, lanes, loops,  # noqa: F401
                                nested, refusals, tensor_arrays)
from autograph.batching.transform import REFUSED, RULES, rule_for  # noqa: F401

# structural: no inputs, so never batched (graph inputs, constants, Variable reads)
STRUCTURAL = {"Placeholder", "Const", "read_variable"}


