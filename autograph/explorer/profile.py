"""`ag.profile(fn)(*args)`: where a compiled graph spends its time, by line of the user's.

The function is called once as usual (tracing and compiling it), then once more with a
line tracer (`sys.settrace`) on the generated code's frames only: each line of generated
code runs one node (codegen's `made_by`), and every node knows the user's line that made
it, so the time between two line events, the number of line events and the bytes of the
array a line assigns are added up per user line. What is measured is the compiled code
itself (the Python executor), loops and branches included; the tracer's own cost (~1 us a
line) is in the times, so they are right relative to each other, not absolute.

`gradient=True` profiles `ag.grad(fn)`: the forward and the backward graph, whose nodes
name the forward lines they differentiate, so the table says what each line costs in both.
"""

import linecache
import sys
import time

_GENERATED = "<autograph codegen"


class Profile:
    """The table: `rows` are (file, line, source text, seconds, runs, bytes) per user line;
    `result` is what the profiled call returned. `str()` is the table as text."""

    def __init__(self, rows, result, total):
        self.rows, self.result, self.total = rows, result, total

    def __str__(self):
        out = [f"{'line':>6} {'time (ms)':>10} {'share':>6} {'runs':>8} {'bytes':>12}  source"]
        for filename, line, text, seconds, runs, nbytes in self.rows:
            share = 100 * seconds / self.total if self.total else 0.0
            out.append(f"{line:>6} {1e3 * seconds:>10.3f} {share:>5.1f}% {runs:>8} "
                       f"{nbytes:>12}  {text.strip()}")
        return "\n".join(out)

    def _repr_html_(self):
        import html
        rows = "".join(
            f"<tr><td>{line}</td><td>{1e3 * s:.3f}</td><td>{runs}</td><td>{b}</td>"
            f"<td><code>{html.escape(text.strip())}</code></td></tr>"
            for _, line, text, s, runs, b in self.rows)
        return ("<table><tr><th>line</th><th>time (ms)</th><th>runs</th><th>bytes</th>"
                f"<th>source</th></tr>{rows}</table>")


class _Tracer:
    def __init__(self):
        self.per_line = {}       # user (file, line) -> [seconds, runs, bytes]
        self.frames = {}         # id(frame) -> [made_by, source lines, last lineno, t]

    def __call__(self, frame, event, arg):
        if event != "call" or not frame.f_code.co_filename.startswith(_GENERATED):
            return None
        locator = frame.f_globals.get("ag_error_at")
        if locator is None:
            return None
        lines = linecache.getlines(frame.f_code.co_filename)
        self.frames[id(frame)] = [locator.made_by, lines, None, time.perf_counter()]
        return self.local

    def local(self, frame, event, arg):
        now = time.perf_counter()
        state = self.frames.get(id(frame))
        if state is None:
            return None
        made_by, lines, last, start = state
        if last is not None:
            self.add(made_by, lines, last, now - start, frame)
        if event == "line":
            state[2], state[3] = frame.f_lineno, time.perf_counter()
        elif event == "return":
            del self.frames[id(frame)]
        return self.local

    def add(self, made_by, lines, lineno, seconds, frame):
        from autograph import errors
        node = made_by[lineno - 1] if 0 < lineno <= len(made_by) else None
        loc = errors.origin_location(node[2]) if node is not None else None
        if loc is None:
            return
        key = (loc[0], loc[1], loc[3])
        entry = self.per_line.setdefault(key, [0.0, 0, 0])
        entry[0] += seconds
        entry[1] += 1
        target = lines[lineno - 1].strip().partition(" = ") if lineno <= len(lines) else ("",)
        if len(target) == 3 and target[1] and target[0].isidentifier():
            value = frame.f_locals.get(target[0])
            entry[2] += int(getattr(value, "nbytes", 0) or 0)


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
        start = time.perf_counter()
        sys.settrace(tracer)
        try:
            result = function(*args, **kwargs)
        finally:
            sys.settrace(old)
        total = time.perf_counter() - start
        # the function's own lines (its outputs are made at the caller's line: left out)
        import inspect
        source, first = inspect.getsourcelines(plain)
        where = (inspect.getsourcefile(plain), first, first + len(source) - 1)
        rows = sorted((f, line, text, s, runs, b)
                      for (f, line, text), (s, runs, b) in tracer.per_line.items()
                      if f == where[0] and where[1] <= line <= where[2])
        return Profile(rows, result, sum(r[3] for r in rows) or total)
    return run
