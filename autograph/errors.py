"""The errors autograph raises about user programs.

Each message speaks of the user's code: the variable, and (added by the operators layer
through the origin map) the user's file and line.
"""

import sys


class AutographError(Exception):
    """Base class of autograph's own errors."""


class StagingError(AutographError, TypeError):
    """The program cannot become a graph as written: a variable is undefined on one path,
    or branches/iterations disagree on a variable's type or structure."""


class UnboundInGraph(StagingError, UnboundLocalError):
    """A variable with no value is read in a branch or loop body traced for a tensor
    condition (Python would raise UnboundLocalError only if that path ran)."""


class NameInGraph(StagingError, NameError):
    """A name that does not exist is read on a path of a tensor `if` or loop, which the
    graph holds whether or not the path runs (Python would raise only if it ran)."""


class ConversionError(AutographError, ValueError):
    """The compiler cannot convert a construct (found while reading the source)."""


# -- errors raised while a graph runs -----------------------------------------------------------
#
# Every node records where the user's code made it (runtime.graph.Node.origin). When a kernel
# raises while a graph runs (a shape mismatch in `A @ b` with unknown dims, an index out of
# bounds, a failed reshape), the executor that ran it names that node here: the exception
# keeps its type and gains the user's file, line and source text of the operation.

def origin_location(origin):
    """The user's LineLocation (file, line, column, source line, function) of a node's
    `origin`, or None. A line of converted code maps to the user's line it came from."""
    if origin is None:
        return None
    filename, lineno, function_name = origin
    # The origin map is looked up, not imported: this module sits below autograph.source,
    # and a generated file exists only once autograph.source.origin has registered it.
    origin_map = sys.modules.get("autograph.source.origin")
    if origin_map is not None and origin_map.is_generated(filename):
        # a line of scaffolding (no user line of its own) belongs to the statement above it
        for line in range(lineno, max(0, lineno - 50), -1):
            loc = origin_map.lookup(filename, line)
            if loc is not None:
                return loc
        return None
    import linecache
    text = linecache.getline(filename, lineno).rstrip("\n")
    if origin_map is not None:
        return origin_map.LineLocation(filename, lineno, 0, text, function_name)
    return (filename, lineno, 0, text, function_name)


class RunErrorLocator:
    """The handler of a compiled graph's errors (generated code calls it from its `except`):
    names the node whose line of `filename` raised, its op and the user's line that made it
    (`made_by`: per generated line, (node name, op, origin) or None) in the exception,
    which keeps its type."""
    __slots__ = ("filename", "graph_name", "made_by")

    def __init__(self, filename, graph_name, made_by):
        self.filename, self.graph_name, self.made_by = filename, graph_name, made_by

    def __call__(self, exc):
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != self.filename:
            tb = tb.tb_next
        if tb is None or not 1 <= tb.tb_lineno <= len(self.made_by):
            return
        made_by = self.made_by[tb.tb_lineno - 1]
        if made_by is not None:
            locate_run_error(exc, self.graph_name, *made_by)


def describe_origin(origin):
    """'file.py:12 (`y = A @ b`)' for a node's origin, or '' when unknown."""
    loc = origin_location(origin)
    if loc is None:
        return ""
    filename, lineno, _, text, _ = loc
    text = (text or "").strip()
    return f"{filename}:{lineno}" + (f" (`{text}`)" if text else "")


def add_to_message(exc, text):
    """Append `text` to the message of `exc` in place (its type and identity stay, so
    `except ValueError` still catches it): into its one string argument when it has one,
    else as a note (printed under the message)."""
    args = exc.args
    if (len(args) == 1 and isinstance(args[0], str) and type(exc).__str__ is BaseException.__str__
            and not isinstance(exc, KeyError)):   # (KeyError shows the repr of its argument)
        try:
            exc.args = (args[0] + text,)
            return
        except Exception:
            pass
    if hasattr(exc, "add_note"):
        exc.add_note(text.lstrip("\n"))


def locate_run_error(exc, graph_name, node_name, op, origin):
    """Say in `exc` which operation of the user's failed while graph `graph_name` ran
    (once: the innermost executor that saw it names it)."""
    if getattr(exc, "_autograph_node", None) is not None:
        return exc
    try:
        exc._autograph_node = node_name
        exc._autograph_origin = origin   # the traceback shows this line (source.origin)
    except Exception:     # exceptions without a __dict__: say it anyway (once is best effort)
        pass
    loc = origin_location(origin)
    text = f"\n  raised while running the graph of {graph_name}, by node {node_name!r} ({op})"
    if loc is not None:
        filename, lineno, _, source_line, function_name = loc
        text += f" made at {filename}:{lineno}, in {function_name}"
        if source_line and source_line.strip():
            text += f":\n    {source_line.strip()}"
    add_to_message(exc, text)
    return exc


class RetracingWarning(UserWarning):
    """A Function traced again; the message says which argument changed and how."""


class AutographWarning(UserWarning):
    """ag.function had to trace a function without converting its control flow."""
