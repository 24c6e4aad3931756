"""Global switches of autograph (`ag.config`).

`run_functions_eagerly(True)` makes every `ag.function` call its original Python function
instead of a traced graph: print statements run on every call, a debugger stops at the user's
lines, and exceptions come straight from the user's code. It is a debugging switch; turn it
off again to get graphs (and their speed) back.
"""

_run_functions_eagerly = False


def run_functions_eagerly(run_eagerly):
    """Make every ag.function run its Python function directly (True) or traced (False)."""
    global _run_functions_eagerly
    _run_functions_eagerly = bool(run_eagerly)


def functions_run_eagerly():
    """Whether ag.function calls currently run the original Python (see run_functions_eagerly)."""
    return _run_functions_eagerly
