"""`ag.profile(fn)(*args)`: where a compiled graph spends its time, by line of the user's.

The function is called once as usual (tracing and compiling it), then once more with a
line tracer (`sys.settrace`) on the generated code's frames only: each line of generated
code runs one node (codegen's `made_by`), and every node knows the user's line that made
it, so the time between two line events (CPU time of the thread, so that a shared machine's
scheduler does not charge a line for the neighbours), the number of line events and the
bytes of the array a line assigns are added up per user line. What is measured is the compiled code
itself (the Python executor), loops and branches included; the tracer's own cost (~1 us a
line) is in the times, so they are right relative to each other, not absolute.

`gradient=True` profiles `ag.grad(fn)`: the forward and the backward graph, whose nodes
name the forward lines they differentiate, so the table says what each line costs in both
(the backward part apart) and how many bytes of its values the backward pass keeps: see
_Tracer. A gradient inside the function (a GradientTape, ag.grad) is profiled the same way.
"""

import ast
import collections
import linecache
import sys
import time

import numpy as np

_GENERATED = "<autograph codegen"
# CPU time of the thread: on a shared machine wall time would time the neighbours (a line
# the scheduler preempted took 40 ms instead of 0.04 ms)
_clock = time.thread_time
# backward ops that read only their input's shape and dtype (a gradient's seed): it is not
# kept for them
_SHAPE_ONLY = frozenset({"ones_like", "zeros_like", "empty_like"})

Row = collections.namedtuple("Row", "file line text seconds runs bytes backward stored")
Row.__doc__ = """One user line: `seconds` of its nodes' lines in all (`backward`: of those its
gradient's rules made), `runs` (generated lines executed), `bytes` (of the arrays they
assigned), `stored` (bytes of this line's values that the backward pass read)."""


class Profile:
    """The table: `rows` are a Row per user line (file, line, source text, seconds, runs,
    bytes, backward seconds, stored bytes); `result` is what the profiled call returned;
    `stored` the bytes the backward pass read of the forward pass's, all lines together.
    `str()` is the table as text (the backward and stored columns when there was a
    backward pass)."""

    def __init__(self, rows, result, total):
        self.rows, self.result, self.total = rows, result, total
        self.stored = sum(r.stored for r in rows)
        self.has_backward = any(r.backward or r.stored for r in rows)

    def __str__(self):
        back = self.has_backward
        out = [f"{'line':>6} {'time (ms)':>10} " + (f"{'backward':>9} " if back else "") +
               f"{'share':>6} {'runs':>8} {'bytes':>12} " +
               (f"{'stored':>12} " if back else "") + " source"]
        for r in self.rows:
            share = 100 * r.seconds / self.total if self.total else 0.0
            out.append(f"{r.line:>6} {1e3 * r.seconds:>10.3f} " +
                       (f"{1e3 * r.backward:>9.3f} " if back else "") +
                       f"{share:>5.1f}% {r.runs:>8} {r.bytes:>12} " +
                       (f"{r.stored:>12} " if back else "") + f" {r.text.strip()}")
        if back:
            out.append(f"stored for the backward pass: {self.stored} bytes")
        return "\n".join(out)

    def _repr_html_(self):
        import html
        back = self.has_backward
        rows = "".join(
            f"<tr><td>{r.line}</td><td>{1e3 * r.seconds:.3f}</td>" +
            (f"<td>{1e3 * r.backward:.3f}</td>" if back else "") +
            f"<td>{r.runs}</td><td>{r.bytes}</td>" + (f"<td>{r.stored}</td>" if back else "") +
            f"<td><code>{html.escape(r.text.strip())}</code></td></tr>" for r in self.rows)
        return ("<table><tr><th>line</th><th>time (ms)</th>" +
                ("<th>backward (ms)</th>" if back else "") + "<th>runs</th><th>bytes</th>" +
                ("<th>stored</th>" if back else "") + f"<th>source</th></tr>{rows}</table>")


def _names(text):
    """(names read, names assigned, names deleted, renames) of one generated line; renames:
    [(target, source)] of an assignment of plain names (`a, b = c, d`: a loop's variables
    passed on), whose targets are what their sources were."""
    line = text.strip()
    if line.endswith(":"):
        line += " pass"
    try:
        tree = ast.parse(line)
    except SyntaxError:     # (`else:`, `elif x:`, `try:`: nothing a backward line reads)
        return (), (), (), ()
    reads, writes, dels = [], [], []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (reads if isinstance(n.ctx, ast.Load) else
             writes if isinstance(n.ctx, ast.Store) else dels).append(n.id)
    renames = ()
    stmt = tree.body[0] if tree.body else None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        targets, value = stmt.targets[0], stmt.value
        ts = targets.elts if isinstance(targets, ast.Tuple) else [targets]
        vs = value.elts if isinstance(value, ast.Tuple) else [value]
        if len(ts) == len(vs) and all(isinstance(t, ast.Name) for t in ts) and \
                all(isinstance(v, ast.Name) for v in vs):
            renames = tuple((t.id, v.id) for t, v in zip(ts, vs))
    return tuple(reads), tuple(writes), tuple(dels), renames


class _Line:
    """What the tracer knows of one generated line: the user line of the node it runs
    (key: (file, line, text), or None), whether that node is backward-pass work (a
    gradient rule made it: runtime.ir.graph.GradientOrigin), its op and its names."""
    __slots__ = ("key", "backward", "op", "reads", "writes", "dels", "renames", "target")

    def __init__(self, made_by, lines, lineno):
        from autograph import errors
        from autograph.runtime.ir.graph import GradientOrigin
        node = made_by[lineno - 1] if 0 < lineno <= len(made_by) else None
        loc = errors.origin_location(node[2]) if node is not None else None
        self.key = None if loc is None else (loc[0], loc[1], loc[3])
        self.backward = node is not None and isinstance(node[2], GradientOrigin)
        self.op = None if node is None else node[1]
        text = lines[lineno - 1] if lineno <= len(lines) else ""
        self.reads, self.writes, self.dels, self.renames = _names(text)
        target = text.strip().partition(" = ")
        self.target = target[0] if target[1] and target[0].isidentifier() else None


class _Frame:
    __slots__ = ("made_by", "lines", "file", "last", "start", "names")

    def __init__(self, made_by, lines, file):
        self.made_by, self.lines, self.file = made_by, lines, file
        self.last, self.start = None, 0.0
        self.names = {}     # local name -> the _Line that last assigned it (None: an input)


class _Tracer:
    """Per user line: [seconds, runs, bytes, backward seconds, stored bytes].

    Stored bytes are measured as the call runs: when a backward line (a node a gradient
    rule made) reads a local that a forward line assigned, that value is stored for the
    backward pass, counted once (by identity) at the user line that made it. So a loop's
    stack pushes (backward work inside the forward loop) count each iteration's value at
    the line that computed it, and what the backward reads after the forward pass counts
    once. A checkpointed loop's store is counted, at its loop's line, when the backward
    pass first restores from it (the snapshots the forward pass kept). Arrays the caller
    passed in, views of them and Variables' values cost nothing."""

    def __init__(self):
        self.per_line = {}       # user (file, line, text) -> [s, runs, bytes, back s, stored]
        self.frames = {}         # id(frame) -> _Frame
        self.info = {}           # (file, lineno) -> _Line
        self.seen = {}           # id -> value: every value counted (kept alive: ids stay)
        self.inputs = None       # ids of the arrays the call was given

    def __call__(self, frame, event, arg):
        if event != "call" or not frame.f_code.co_filename.startswith(_GENERATED):
            return None
        locator = frame.f_globals.get("ag_error_at")
        if locator is None:
            return None
        name = frame.f_code.co_filename
        if self.inputs is None:
            self.inputs = {}
            for v in frame.f_locals.values():
                self.mark_input(v)
        self.frames[id(frame)] = _Frame(locator.made_by, linecache.getlines(name), name)
        return self.local

    def mark_input(self, v):
        while isinstance(v, np.ndarray):
            self.inputs[id(v)] = v
            v = v.base
        if isinstance(v, np.generic):
            self.inputs[id(v)] = v

    def line(self, state, lineno):
        key = (state.file, lineno)
        info = self.info.get(key)
        if info is None:
            info = self.info[key] = _Line(state.made_by, state.lines, lineno)
        return info

    def local(self, frame, event, arg):
        now = _clock()
        state = self.frames.get(id(frame))
        if state is None:
            return None
        if state.last is not None:
            self.finish(state, self.line(state, state.last), now - state.start, frame)
        if event == "line":
            info = self.line(state, frame.f_lineno)
            if info.backward and info.key is not None:
                self.stored_reads(state, info, frame)
            state.last, state.start = frame.f_lineno, _clock()
        elif event == "return":
            del self.frames[id(frame)]
        return self.local

    def entry(self, key):
        entry = self.per_line.get(key)
        if entry is None:
            entry = self.per_line[key] = [0.0, 0, 0, 0.0, 0]
        return entry

    def finish(self, state, info, seconds, frame):
        """A generated line has run: its time, run and allocation go to its user line;
        the names it assigned now belong to it."""
        names = state.names
        if info.renames:
            was = {source: names.get(source) for _, source in info.renames}
            for target, source in info.renames:
                names[target] = was[source]
        else:
            for name in info.writes:
                names[name] = info
        for name in info.dels:
            names.pop(name, None)
        if info.key is None:
            return
        entry = self.entry(info.key)
        entry[3 if info.backward else 0] += seconds
        entry[1] += 1
        if info.target is not None:
            value = frame.f_locals.get(info.target)
            entry[2] += int(getattr(value, "nbytes", 0) or 0)
            if info.op == "read_variable":   # (a Variable's value is the Variable's memory)
                self.mark_input(value)

    def stored_reads(self, state, info, frame):
        """Before backward line `info` runs: the forward values it reads are stored."""
        if info.op in _SHAPE_ONLY:
            return
        local = frame.f_locals
        for name in info.reads:
            made = state.names.get(name)
            value = local.get(name)
            if info.op == "ad_ckpt_restore" and type(value).__name__ == "Checkpoints":
                self.entry(info.key)[4] += self.store_bytes(value)
            elif made is not None and not made.backward and made.key is not None and \
                    info.op != "ad_ckpt_offer":   # (an offer keeps only what its store does)
                n = self.array_bytes(value)
                if n:
                    self.entry(made.key)[4] += n

    def array_bytes(self, v):
        if not isinstance(v, (np.ndarray, np.generic)) or id(v) in self.seen:
            return 0
        self.seen[id(v)] = v
        root = v
        while isinstance(root, np.ndarray) and root.base is not None:
            root = root.base
        if id(v) in self.inputs or id(root) in self.inputs:
            return 0
        return int(v.nbytes)

    def store_bytes(self, store):
        """The bytes of the snapshots a checkpointed loop's store holds (revolve.py)."""
        if id(store) in self.seen:
            return 0
        self.seen[id(store)] = store
        states = list(store.slots.values()) + ([store.last[1]] if store.last else [])
        return sum(self.array_bytes(v) for state in states for v in state)


def profile(fn, gradient=False):
    """A function that calls `fn` (a function or ag.function) with its arguments and returns
    the Profile of the call (see the module's docstring)."""
    import autograph as ag

    def run(*args, **kwargs):
        plain = getattr(fn, "python_function", fn)
        if gradient:
            function = ag.function(ag.grad(plain))
        else:
            function = fn if isinstance(fn, ag.Function) else ag.function(plain)
        function(*args, **kwargs)              # traced and compiled outside the profile
        tracer = _Tracer()
        old = sys.gettrace()
        start = _clock()
        sys.settrace(tracer)
        try:
            result = function(*args, **kwargs)
        finally:
            sys.settrace(old)
        total = _clock() - start
        # the function's own lines (its outputs are made at the caller's line: left out)
        import inspect
        source, first = inspect.getsourcelines(plain)
        where = (inspect.getsourcefile(plain), first, first + len(source) - 1)
        rows = sorted(Row(f, line, text, s + back, runs, b, back, stored)
                      for (f, line, text), (s, runs, b, back, stored) in
                      tracer.per_line.items()
                      if f == where[0] and where[1] <= line <= where[2])
        return Profile(rows, result, sum(r.seconds for r in rows) or total)
    return run
