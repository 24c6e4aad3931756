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


class NonFiniteError(AutographError, FloatingPointError):
    """With `ag.config.check_numerics(True)`: an operation of a running graph made a NaN or
    an infinity (the message names it, the user's line and the loop iteration)."""


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
    which keeps its type; then the loops around that line (`loops`: the loop records
    described below, `in_loop`: per generated line the innermost one's index or -1) with their iteration numbers and scalar variables, read from the failing frame."""
    __slots__ = ("filename", "graph_name", "made_by", "loops", "in_loop")

    def __init__(self, filename, graph_name, made_by, loops=(), in_loop=()):
        self.filename, self.graph_name, self.made_by = filename, graph_name, made_by
        self.loops, self.in_loop = loops, in_loop

    def __call__(self, exc):
        close_bars()
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != self.filename:
            tb = tb.tb_next
        if tb is None or not 1 <= tb.tb_lineno <= len(self.made_by):
            return
        made_by = self.made_by[tb.tb_lineno - 1]
        if made_by is None or getattr(exc, "_autograph_node", None) is not None:
            return
        locate_run_error(exc, self.graph_name, *made_by)
        if tb.tb_lineno <= len(self.in_loop) and self.in_loop[tb.tb_lineno - 1] >= 0:
            lines = describe_loops(self.loops, self.in_loop[tb.tb_lineno - 1],
                                   tb.tb_frame.f_locals, tb.tb_lineno)
            if lines:
                add_to_message(exc, "".join("\n  " + line for line in lines))
                try:
                    exc._autograph_loops = lines
                except Exception:
                    pass


# -- where in its loops a graph was -------------------------------------------------------------
#
# An error at a user's line inside a staged loop is half the story: the line ran a thousand
# times and failed once. So codegen records, for every loop it writes, a loop record
#   (parent loop index or -1, node name, node origin, shown variables, iteration)
# and for every generated line the innermost loop it lies in. When a line raises, the
# locator reads the generated function's frame (its locals are the loop variables, under the
# user's names) and says, for each enclosing loop, innermost first:
#     in the loop at model.py:12 (`while i < n:`), iteration 3, which began with s = 7.0
# Shown variables are (local, user's name, began_until, now_from) (see loop_rebinding).
# The iteration is ("count", local) for a while loop that counts with a local of its own,
# ("range", local, start, step) for a counter loop (`for i in range(...)` as codegen writes
# it, counter `local`; `start`: an int or the local holding it), or ("step", local, start,
# step, began_until, now_from) for a loop with an integer variable its body steps by a
# constant (collatz's `steps += 1`). Only a while loop with neither keeps a counter (one
# Python int addition per iteration: benchmarks/run_errors.py); the rest costs nothing
# until something raises. The records are plain tuples (the trace cache keeps them).

# loop variables the converters invent (break/continue flags, early-return state, the
# index of a `for` over a tensor): not the user's, so not shown (a set, not a regular
# expression: compiling one would cost every fresh process's first call)
_INVENTED = frozenset({"break_", "continue_", "do_return", "retval_", "pending_return",
                       "itr", "chain", "finally_exc", "finally_caught", "loop_iterate",
                       "extra_test"})


def invented(name):
    """True for a name a converter or the runtime made (`break_`, `break__1`, `retval__2`,
    `<loop counter>`, ...)."""
    if not name.isidentifier():
        return True
    base, _, suffix = name.rpartition("_")
    return name in _INVENTED or (suffix.isdigit() and base in _INVENTED)


def shown_variables(loop_vars, placeholders):
    """((generated local, user's name), ...) of a loop's scalar variables worth showing:
    `loop_vars` are the locals codegen assigns, `placeholders` the body graph's inputs."""
    shown = []
    for local, t in zip(loop_vars, placeholders):
        name = t.node.name
        if t.shape == () and t.dtype.kind in "biufc" and not invented(name):
            shown.append((local, name))
    return tuple(shown)


def loop_rebinding(loops, body_depths, lines, in_loop):
    """The loop records with, per shown variable (and a stepped iteration variable), where
    its local changes in the body (`lines`: the generated source's, `in_loop`: per line the
    innermost loop, `body_depths`: per loop the indentation depth of its body).

    A loop variable's local holds the value the iteration began with until the body assigns
    its next value (codegen writes `s = s + x` straight into the local where nothing later
    needs the old value; else the local changes in the last lines of the body). So an
    error at generated line L reports the variable as the iteration began with it while
    L <= `began_until` (the first line of the loop's own body assigning the local; 0: none),
    as it is now (the iteration's new value, what Python's own local holds then) when
    `now_from` < L (the first such line at the body's own depth, not in a branch), and not
    at all in between (one branch assigned it: which one ran is unknown)."""
    assigned = [dict() for _ in loops]    # loop -> {local: (first line, first top line)}
    wanted = [{v[0] for v in loop[3]} | ({loop[4][1]} if loop[4][0] == "step" else set())
              for loop in loops]
    for index, (text, k) in enumerate(zip(lines, in_loop)):
        if k < 0 or not wanted[k]:
            continue
        body = text.lstrip(" ")
        target, sep, _ = body.partition(" = ")
        if not sep:
            continue
        for local in target.split(", "):
            if local in wanted[k]:
                first, top = assigned[k].get(local, (0, 0))
                at_top = len(text) - len(body) == 4 * body_depths[k]
                assigned[k][local] = (first or index + 1, top or (index + 1 if at_top else 0))
    return tuple(
        (parent, name, origin,
         tuple((local, user) + assigned[k].get(local, (0, 0)) for local, user in variables),
         iteration + assigned[k].get(iteration[1], (0, 0)) if iteration[0] == "step"
         else iteration)
        for k, (parent, name, origin, variables, iteration) in enumerate(loops))



def iteration_of(iteration, values, lineno=0):
    """The 0-based iteration number of a loop, read from the frame's locals at generated
    line `lineno`, or None: `iteration` is ("count", local), ("range", counter local,
    start, step) or ("step", local, start, step, began_until, now_from): see above."""
    try:
        if iteration[0] == "count":
            return int(values[iteration[1]])
        if iteration[0] in ("range", "step"):
            local, start, step = iteration[1:4]
            start = values[start] if isinstance(start, str) else start
            number = (int(values[local]) - int(start)) // int(step)
            if iteration[0] == "step" and iteration[4] and lineno > iteration[4]:
                if not (iteration[5] and iteration[5] < lineno):
                    return None          # stepped in one branch only: unknown here
                number -= 1              # stepped already in this iteration
            return number
    except (KeyError, TypeError, ValueError, IndexError):
        return None
    return None


def _scalar_text(value):
    """A short text of a scalar value (a NumPy or Python number), else None."""
    shape = getattr(value, "shape", ())
    if shape != ():
        return None
    try:
        text = repr(value.item() if hasattr(value, "item") else value)
    except Exception:
        return None
    return text if len(text) <= 40 else text[:37] + "..."


def describe_loops(loops, innermost, values, lineno):
    """Lines naming each loop around generated line `lineno` that failed, innermost first:
    the user's line of the loop, its iteration and its scalar variables' values (`values`:
    the locals of the generated function's frame; see loop_rebinding for which
    value a local holds at `lineno`)."""
    lines = []
    while 0 <= innermost < len(loops) and len(lines) < 32:
        parent, node_name, origin, variables, iteration = loops[innermost]
        began, now = [], []
        for local, name, began_until, now_from in variables:
            if local not in values:
                continue
            if not began_until or lineno <= began_until:
                began.append((name, values[local]))
            elif now_from and now_from < lineno:
                now.append((name, values[local]))
        lines.append(loop_line(node_name, origin, iteration_of(iteration, values, lineno),
                               began, now))
        innermost = parent
    return lines


def loop_line(node_name, origin, number, began, now=()):
    """'in the loop at f.py:5 (`while i < n:`), iteration 3, which began with s = 7.0;
    now i = 4' (`began`, `now`: (user's name, value) pairs; values that are not scalars
    are left out)."""
    text = f"in the loop at {describe_origin(origin) or f'node {node_name!r}'}"
    if number is not None:
        text += f", iteration {number}"
    for words, pairs in ((", which began with ", began), ("; now ", now)):
        shown = [f"{name} = {v}" for name, value in pairs
                 for v in [_scalar_text(value)] if v is not None]
        if shown:
            text += words + ", ".join(shown)
    return text


def note_loop(exc, node_name, origin, number, variables):
    """Add the loop a located error `exc` left (see loop_line) to its message: each loop
    adds itself as the error passes out of it, so the innermost comes first."""
    if getattr(exc, "_autograph_node", None) is None:
        return
    line = loop_line(node_name, origin, number, variables)
    try:
        exc._autograph_loops = getattr(exc, "_autograph_loops", []) + [line]
    except Exception:
        pass
    add_to_message(exc, "\n  " + line)


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


def close_bars():
    """A graph run raised: close the progress bars its loops opened (the module is loaded
    only when some loop has one: autograph.runtime.progress)."""
    bars = sys.modules.get("autograph.runtime.progress")
    if bars is not None:
        bars.close_open()


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
