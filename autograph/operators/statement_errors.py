"""The errors a staged `if`, `while` or `for` raises, worded for the user.

Imported only when one is about to be raised (autograph.operators.control_flow and its
siblings call these through a lazy import): each returns the exception, naming the user's
line (`where`) and the variable, and the caller raises it, so that a trace that stages
without error never loads this module.
"""

from autograph import errors
from autograph.operators import _where as where   # (location: loaded on first use)
from autograph.runtime.ir import nest


def refuse_in_try(statement):
    """A tensor `if`/loop inside a `try` block (converted code passes in_try=True)."""
    return errors.StagingError(
        f"This `{statement}`{where()} would run in the graph (its condition is a tensor), but "
        f"it is inside a `try` block: Python's try/except cannot catch errors raised while "
        f"the graph runs, so the program would not mean what it says. Move the try/except "
        f"outside the function, or make the condition a Python value.")


def name_in_graph(exc, statement):
    """A name that does not exist, met while tracing a path of a tensor `if` or loop that
    may never run: a refusal that says so (still a NameError)."""
    return errors.NameInGraph(
        f"{exc} (in a branch or body of the `{statement}`{where(' at ')}, whose condition is a "
        f"tensor: the graph holds that path whether or not it runs, so every name it reads must "
        f"exist when the function is traced)")


def locate(exc, statement, returns=False):
    """The same error with the user's location of the statement added, once; `returns`:
    the statement's outputs are the function's return value (an `if` whose branches
    return)."""
    msg = str(exc)
    if returns:
        msg = msg.replace("for the results", "for the return value").replace("'item 0 of the return value'", "the return value")
    if "return value" in msg and "None in the" in msg:
        msg += (" A path through a function that ends without `return` returns None; "
                "return a value of the same kind on every path.")
    loc = where(" at ")
    if loc and loc.strip() not in msg:
        msg = f"{msg}\n(in the `{statement}`{loc})"
    new = type(exc)(msg)
    new.__cause__ = exc.__cause__
    return new


def undefined_after_branch(name, which):
    """A state variable of a tensor `if` is defined after one branch, not after `which`."""
    other = "else" if which == "if" else "if"
    return errors.StagingError(
        f"'{name}' has a value after the {other} branch of the `if`{where()} but not "
        f"after its {which} branch. The condition is a tensor, so both branches become "
        f"part of the graph and '{name}' must be defined on both. Assign '{name}' "
        f"before the `if`, or in the {which} branch too.")


def undefined_at_loop_end(name, what):
    return errors.StagingError(
        f"'{name}' is undefined at the end of an iteration of the {what}{where()}, "
        f"whose condition is a tensor. Assign '{name}' on every path through the "
        f"loop body, or before the loop.")


def changes_structure(name, old, new, what):
    return errors.StagingError(
        f"'{name}' changes structure in the {what}{where()}, whose condition is a "
        f"tensor: it enters the loop as {nest.describe(old)} and an iteration makes "
        f"it {nest.describe(new)}. A graph loop's variables keep their structure; to "
        f"collect values in a loop use ag.TensorArray (ta = ta.write(i, value)).")
