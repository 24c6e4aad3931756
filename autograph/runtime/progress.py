"""Progress bars over loops: `for i in ag.range(n, progress=True)` and `ds.progress()`.

Eagerly (plain Python, `run_functions_eagerly`, a range of Python ints) the range is
iterated through `iterate`; an eager dataset iterator steps a `Counter` per element. While
tracing, `ag.range` makes its `range` node as usual and marks it (`mark`); the `for` loop
that stages it (operators/for_loops.py's _staged_for) and a dataset loop
(autograph/data/lowering.py) then stage the loop through `with_bar`, which adds three
effectful nodes that read the loop from the host while the compiled loop runs (no
callback machinery):

    bar = progress_open(start, limit, delta)   # before the loop: a new bar and its total
    for i in ...:                              # one more loop variable, `bar`: the
        bar = progress(i, bar)                 #   counter value of the next update
        ...
    progress_close(bar, count)                 # after it, also after a break or return

so the cost per iteration is one comparison: codegen writes the `progress` node as

    if i >= bar:
        bar = progress_update(xp, i, bar, 1)

(`emit`; the counter stays a Python int where the body reads it only as an index), and
`update` runs at most UPDATES (100) times a run, the last iteration included, at counts
spread evenly over the total (other executors call the node's kernel every iteration; it
makes the same test). A dataset loop has no counter: it counts its elements in a
second loop variable (which `progress_close` also reads: the exact count after a break).
A run that raises closes the bars it opened (`close_open`, called through
errors.close_bars by the generated code's error handler and the interpreter's). Native
code (`jit_compile=True`) refuses the nodes: Numba cannot call back into the host, so
NativeLoweringError names the loop's line and says to run without jit_compile.

An update tells the bar the count; drawing is the bar's business: tqdm's when tqdm is
importable (the `progress` extra; tqdm redraws at most every 0.1 s), else a plain line on
stderr, drawn when made, at most every MININTERVAL seconds and at the end:
`\r{desc} 37/100 (37%)` (`\r{desc} 37` when the total is unknown), ended by a newline.
"""

import itertools
import sys
import threading
import time

import numpy as np

from autograph.runtime.ir import primitives

UPDATES = 100          # updates per run of a loop with a known total, at most
MININTERVAL = 0.1      # seconds between two draws of the plain line (tqdm's default too)
NEVER = 2 ** 62        # a loop variable's "no update due any more" (by the counter's sign)
_tokens = itertools.count(1)
_local = threading.local()    # .runs: token of a loop's nodes -> its open _Run (per thread)
_no_tqdm = []                 # [True] once `import tqdm` failed (not searched for again)


def _tqdm_class():
    """tqdm.tqdm, or None: not installed (or hidden: sys.modules["tqdm"] is None)."""
    module = sys.modules.get("tqdm", _no_tqdm)
    if module is _no_tqdm:
        if _no_tqdm:
            return None
        try:
            import tqdm as module
        except ImportError:
            _no_tqdm.append(True)
            return None
    return None if module is None else module.tqdm


class _Bar:
    """tqdm's bar when tqdm is installed, else a line on stderr. `total` None: unknown.
    An update (_Run.reached) tells it the count; the line is drawn when made, at most every
    MININTERVAL seconds after (tqdm's rule; tqdm applies it to its own bar) and at `close`."""

    def __init__(self, total, desc):
        self.total, self.desc, self.shown, self.closed = total, desc, 0, False
        self.updates = 0                 # (counted for tests)
        cls = _tqdm_class()
        self.tqdm = None if cls is None else cls(total=total, desc=desc or None, leave=True)
        self.drawn, self.drawn_at = 0, time.monotonic()
        if self.tqdm is None:
            self.draw(0)

    def draw(self, done):
        count = f"{done}" if self.total is None else \
            f"{done}/{self.total} ({100 * done // self.total if self.total else 100}%)"
        sys.stderr.write(f"\r{self.desc + ' ' if self.desc else ''}{count}")
        sys.stderr.flush()
        self.drawn, self.drawn_at = done, time.monotonic()

    def close(self):
        if self.closed:
            return
        self.closed = True
        if self.tqdm is not None:
            self.tqdm.close()
        else:
            if self.drawn != self.shown:
                self.draw(self.shown)
            sys.stderr.write("\n")
            sys.stderr.flush()


class _Run:
    """One run of a loop: its bar and when the next update is due, as a count of
    iterations begun (`due`). With a known total: every ceil(total / UPDATES) iterations and
    at the last; unknown: a stride that doubles while updates come faster than 20 a second
    (and halves below 2 a second)."""
    __slots__ = ("bar", "total", "stride", "due", "clock", "start", "delta")

    def __init__(self, total, desc, start=0, delta=1):
        self.total, self.start, self.delta = total, start, delta
        self.stride = 1 if total is None else max(1, -(-total // UPDATES))   # (rounded up)
        self.due = min(self.stride, total) if total else (1 if total is None else None)
        self.clock = time.monotonic()
        self.bar = _Bar(total, desc)

    def reached(self, done):
        """`done` iterations have begun and an update is due: update the bar; returns the
        count of the next update (None: no more). (The bar's update is written out here:
        this runs ~100 times a run, and a call less is ~15% of it.)"""
        bar = self.bar
        bar.updates += 1
        if bar.tqdm is not None:
            bar.tqdm.update(done - bar.shown)
        elif time.monotonic() - bar.drawn_at >= MININTERVAL:
            bar.draw(done)
        bar.shown = done
        if self.total is None:
            now = time.monotonic()
            if now - self.clock < 0.05:
                self.stride *= 2
            elif now - self.clock > 0.5 and self.stride > 1:
                self.stride //= 2
            self.clock = now
            self.due = done + self.stride
        else:
            due = done + self.stride
            self.due = None if done >= self.total else due if due < self.total else self.total
        return self.due


# -- eager loops ------------------------------------------------------------------------------

def iterate(values, desc=""):
    """Iterate the Python range `values`, driving a bar (closed at the end, at a `break`:
    the generator is closed, and when an error leaves the loop)."""
    return iterate_items(values, len(values), desc)


def iterate_items(items, total, desc=""):
    """Iterate `items` (`total` of them, None when unknown), driving a bar."""
    bar = Counter(total, desc)
    try:
        for item in items:
            bar.step()
            yield item
    finally:
        bar.close()


class Counter:
    """An eager loop's bar: `step()` per iteration begun, `close()` at its end (again: no-op)."""

    def __init__(self, total, desc=""):
        self.run, self.done = _Run(total, desc), 0

    def step(self):
        self.done += 1
        if self.done == self.run.due:
            self.run.reached(self.done)

    def close(self):
        bar = self.run.bar
        if not bar.closed:
            if self.done != bar.shown:
                self.run.reached(self.done)
            bar.close()


# -- staged loops -----------------------------------------------------------------------------

def _runs():
    runs = getattr(_local, "runs", None)
    if runs is None:
        runs = _local.runs = {}
    return runs


def _open_kernel(xp, start, limit, delta, *, desc, token, known, counted):
    """A loop begins: a new bar (closing one of the same loop an earlier run left open);
    returns the counter value at which the first update is due (`counted`: the count 0
    first). The loop variables are Python ints on NumPy (a test or an addition of Python
    ints takes ~30 ns, against NumPy scalars' ~100), else the namespace's int64 scalars."""
    start, limit, delta = int(start), int(limit), int(delta)
    runs = _runs()
    old = runs.pop(token, None)
    if old is not None:
        old.bar.close()
    total = len(range(start, limit, delta)) if known else None
    if counted:      # (the updates read a count of iterations from 0, not the counter)
        start, delta = 0, 1
    run = runs[token] = _Run(total, desc, start, delta)
    at = (-NEVER if delta < 0 else NEVER) if run.due is None else start + (run.due - 1) * delta
    return (_int(xp, 0), _int(xp, at)) if counted else _int(xp, at)


def _int(xp, value):
    return value if xp is np else xp.asarray(value, dtype=xp.int64)


def _tick_kernel(xp, i, at, *, token, sign, counted=False):
    """An iteration with counter `i` begins (or, `counted`, the loop's count of iterations
    before this one); `at` is when the next update is due. Returns the new `at` (and,
    `counted`, the count with this iteration). Other executors call this on every
    iteration; codegen tests `i >= at` inline, counts inline and calls `update`."""
    if counted:
        return _int(xp, int(i) + 1), update(xp, i, at, token)
    return update(xp, i, at, token)


def update(xp, i, at, token):
    """The `progress` node's work when `i` reached `at` (else it returns `at`): the bar's
    update, and the counter value of the next one. Positional arguments: keyword ones
    cost ~40% of this call, which runs ~100 times a run."""
    try:
        run = _local.runs[token]
    except (AttributeError, KeyError):
        return at                          # (no open bar: not this thread's loop)
    i, delta = int(i), run.delta
    if (i < at) if delta > 0 else (i > at):
        return at
    due = run.reached((i - run.start) // delta + 1)
    at = (-NEVER if delta < 0 else NEVER) if due is None else run.start + (due - 1) * delta
    return at if xp is np else _int(xp, at)


def _close_kernel(xp, at, count, *, token):
    """The loop ended (its last iteration, a break, a return): the bar shows how far it
    got (`count` of iterations begun where the loop counts them, else the last update's)
    and closes."""
    run = _runs().pop(token, None)
    if run is not None:
        count = int(count)
        if count >= 0 and count != run.bar.shown:
            run.reached(count)
        run.bar.close()


def close_open():
    """Close the bars this thread's running loops left open (a run raised)."""
    runs = getattr(_local, "runs", None)
    while runs:
        runs.popitem()[1].bar.close()


def _scalar_ints(*args, counted, **attrs):
    """`at` (the counter of the next update), after the count where the loop counts."""
    return [(np.dtype(np.int64), (), False)] * (2 if counted else 1)


primitives.register("progress_open", _scalar_ints, kernel=_open_kernel, effectful=True,
                    doc="a loop with a progress bar begins: the counter of its first update")
primitives.register("progress", _scalar_ints, kernel=_tick_kernel, effectful=True,
                    doc="an iteration of a loop with a progress bar: the counter of the next "
                        "update (updates the bar when one is due)")
primitives.register("progress_close", lambda *a, **k: [], kernel=_close_kernel,
                    effectful=True, doc="a loop with a progress bar ended: its bar closes")
primitives.nondifferentiable("progress_open", "progress", "progress_close")


def mark(range_tensor, desc):
    """Ask the `for` loop that stages `range_tensor` (a range node's output) for a bar."""
    graph = range_tensor.node.graph
    marks = graph.__dict__.setdefault("_progress_ranges", {})
    marks[id(range_tensor.node)] = desc


def marked(node):
    """The description of a range node marked for a bar, or None."""
    return getattr(node.graph, "_progress_ranges", {}).get(id(node))


def _sign(delta):
    """+1 or -1 when the counter's step is a constant (codegen then compares inline), 0."""
    value = delta if not hasattr(delta, "node") else (
        delta.node.attrs["value"] if delta.node.op == "Const" else None)
    if value is None or np.ndim(value) != 0:
        return 0
    return 1 if value > 0 else -1 if value < 0 else 0


def with_bar(start, limit, delta, desc, known, loop, body, state, names, extra_test,
             item=None):
    """Stage `loop(body, state, names, extra_test)` (a staged for loop whose body gets
    (item, *state) and returns the state as a for loop's body does) with a bar; returns the
    loop's final state (a tuple). `item`: a range loop's item of its counter (the loop
    passes the counter); None: a dataset loop. The update reads the range's counter, or a
    count of iterations the body keeps in a loop variable of its own: in a dataset loop
    (no counter) and in a loop that may stop early (`extra_test`: a break or return), whose
    close then shows the exact count reached."""
    token = next(_tokens)
    n = len(names)
    counted = item is None or extra_test is not None
    start, limit, delta = (primitives.convert(v) for v in (start, limit, delta))
    first = tuple(primitives.bind("progress_open", [start, limit, delta],
                                  {"desc": desc, "token": token, "known": bool(known),
                                   "counted": counted}).outputs)
    sign = 1 if counted else _sign(delta)
    lead = 2 if counted else 1

    def bar_body(x, *s):
        attrs = {"token": token, "sign": sign, "counted": counted}
        if counted:
            ahead = tuple(primitives.bind("progress", [s[0], s[1]], attrs).outputs)
            s = s[2:]
        else:
            ahead, s = (primitives.bind1("progress", [primitives.convert(x), s[0]], attrs),), s[1:]
        out = body(x if item is None else item(x), *s)
        full = ahead + (() if n == 0 else (out,) if n == 1 else tuple(out))
        return full[0] if len(full) == 1 else full

    test = None if extra_test is None else (lambda *s: extra_test(*s[lead:]))
    out = loop(bar_body, first + tuple(state),
               (("<progress count>",) if counted else ()) + ("<progress bar>",) + tuple(names),
               test)
    out = tuple(out) if n + lead > 1 else (out,)
    count = out[0] if counted else primitives.convert(np.int64(-1))
    primitives.bind("progress_close", [out[lead - 1], count], {"token": token})
    return out[lead:]


# -- generated code -----------------------------------------------------------------------------

def emit(compiler, node, ins, env, depth):
    """codegen's lines for a `progress` node: the comparison inline, the kernel only when
    an update is due (a step of unknown sign calls it every iteration), and a loop's count
    as a Python int addition."""
    attrs = node.attrs
    names = compiler.outputs(node, env)
    fn = compiler.__dict__.get("progress_update")
    if fn is None:   # (a global of the generated code, named once per compiled function)
        fn = compiler.__dict__["progress_update"] = compiler.bind("progress_update", update)
    counter, at = ins
    call = f"{fn}(xp, {counter}, {at}, {attrs['token']!r})"
    sign = attrs["sign"]
    if not sign:
        compiler.emit(depth, f"{names[-1]} = {call}")
    elif names[-1] == at:   # (the loop variable itself: an `if`, nothing to do otherwise)
        compiler.emit(depth, f"if {counter} {'>=' if sign > 0 else '<='} {at}:")
        compiler.emit(depth + 1, f"{at} = {call}")
    else:
        compiler.emit(depth, f"{names[-1]} = {call} if {counter} "
                             f"{'>=' if sign > 0 else '<='} {at} else {at}")
    if attrs["counted"]:
        compiler.emit(depth, f"{names[0]} = {counter} + 1")


_tick_kernel.codegen_emit = emit      # (codegen writes the node's lines with `emit`,
_tick_kernel.index_inputs = (0,)      # and may pass the counter as a Python int)
