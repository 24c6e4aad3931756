"""Where in its loops a compiled graph was when it raised: the loop records codegen keeps.

An error raised while a graph runs already names the user's line (errors.RunErrorLocator).
Inside a staged loop that is half the story: the line ran a thousand times and failed once.
So codegen records, for every loop it writes, a `Loop` (the while_loop node, the user's line
of the loop, the generated locals that hold its variables and how to read its iteration
number), and for every generated line the innermost loop it lies in. When a line raises,
the locator reads the generated function's frame (its locals are the loop variables, under
the user's names) and says, for each enclosing loop, innermost first:

    in the loop at model.py:12 (`while i < n:`), iteration 3: i = 3, s = 7.0

Nothing of this costs anything until something raises, but one thing: a `while` loop that
has no variable counting its iterations keeps a counter of its own (one Python int addition
per iteration, measured in benchmarks/run_errors.py). A counter loop (`for i in range(...)`
as codegen writes it) needs none: its iteration is `(i - start) // step`; nor does a loop
with an integer variable its body steps by a constant (collatz's `steps += 1`): its
iteration is `(steps - steps at the loop's start) // 1`.

The records are plain tuples and strings (the trace cache keeps them with the code);
autograph.errors reads them (`describe_loops`), since the locator lives there.
"""

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


def stepping_variable(node, consts):
    """(j, step, start) for a while_loop `node` whose loop variable j is an integer the body
    steps by a constant at every iteration (`next j = j + step`, step != 0): its value
    counts the iterations. `start`: its initial value when a constant, else None. None
    when there is no such variable."""
    n = len(node.outputs)
    bg = node.attrs["body_graph"]
    for j in range(n):
        ph, out = bg.inputs[j], bg.outputs[j]
        if ph.dtype.kind not in "iu" or ph.shape != () or out.node.op != "add" \
                or out.node.attrs or len(out.node.inputs) != 2:
            continue
        a, b = out.node.inputs
        other = b if a is ph else a if b is ph else None
        if other is None:
            continue
        if other.node.op == "Const":
            value = other.node.attrs["value"]
        else:   # a captured constant: the outer tensor's value
            k = next((k for k, t in enumerate(bg.inputs) if t is other), None)
            value = consts.get(id(node.inputs[k])) if k is not None and k >= n else None
        if value is None or getattr(value, "ndim", 0) != 0 or int(value) == 0:
            continue
        start = consts.get(id(node.inputs[j]))
        return j, int(value), None if start is None else int(start)
    return None


class Loop(tuple):
    """(parent loop index or -1, node name, node origin, shown variables, iteration), where
    iteration is ("count", local) for a counted while loop, ("range", local, start, step)
    for a counter loop whose counter is `local` (`start`: an int, or the local that holds
    it), or ("step", local, start, step, began_until, now_from) for a loop whose variable
    `local` steps by `step` (see stepping_variable and rebinding). Shown variables are
    (local, user's name, began_until, now_from): see `rebinding`."""
    __slots__ = ()

    def __new__(cls, parent, node_name, origin, variables, iteration):
        return tuple.__new__(cls, (parent, node_name, origin, variables, iteration))


def rebinding(loops, body_depths, lines, in_loop):
    """The loops with, per shown variable, where its local changes in the body.

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
        Loop(parent, name, origin,
             tuple((local, user) + assigned[k].get(local, (0, 0)) for local, user in variables),
             iteration + assigned[k].get(iteration[1], (0, 0)) if iteration[0] == "step"
             else iteration)
        for k, (parent, name, origin, variables, iteration) in enumerate(loops))
