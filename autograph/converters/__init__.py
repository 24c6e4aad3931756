"""The compiler's passes: each module rewrites one construct, in this order.

    declarations             `global`/`nonlocal` inside blocks -> at the top of the function
    locals_calls             locals() / vars() -> ag__.user_locals(the user's variables)
    asserts                  assert -> ag__.assert_stmt
    return_statements        returns anywhere -> returns at the end (if/else or a flag)
    break_statements         break -> a flag joining the loop condition
    continue_statements      continue -> a flag guarding the rest of the body
    static_dims              y[:x.shape[0]], np.clip(v, 0, x.shape[0]) -> ag__.known_dim(x.shape[0])
                             (a None from an unknown dimension refused while tracing)
    item_updates             x[i] = v, x[i] += v, np.add.at(x, i, v) -> x = ag__.setitem(x, i, v)...
    formatting               f-strings, literal "...".format(...) and "..." % ... ->
                             ag__.str_format / str_mod (staged on tensors); print -> ag__.py_print
    call_trees               calls of user code -> ag__.converted_call; builtins -> ag__.range...
    control_flow             if/while/for -> ag__.if_stmt/while_stmt/for_stmt (functional state);
                             it first runs `variables` (reads of maybe-unassigned variables
                             -> ag__.ld(x)) on the same analyses
    conditional_expressions  a if c else b -> ag__.if_exp
    logical_expressions      and/or/not, chained comparisons -> ag__.and_/or_/not_

Jumps are lowered before control flow so that the control-flow pass sees structured code
whose flags are ordinary variables; expressions are converted last, inside the functions
the control-flow pass made.
"""

import importlib

_PIPELINE_NAMES = frozenset(["PIPELINE", "Context", "convert", "_ONLY_FOR", "_expressions"])


def __getattr__(name):
    """The pipeline's names and the passes, imported when first used (PEP 562)."""
    if name in _PIPELINE_NAMES:
        return getattr(importlib.import_module("autograph.converters.pipeline"), name)
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


__all__ = ["PIPELINE", "Context", "convert"]
