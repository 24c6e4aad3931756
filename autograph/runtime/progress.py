"""`for i in ag.range(n, progress=True)`: a progress bar over a loop, staged or not.

Eagerly (plain Python, `run_functions_eagerly`, a range of Python ints) the range is
iterated through `iterate`, which drives the bar. While tracing, `ag.range` makes its
`range` node as usual and marks it (`mark`): the `for` loop that stages it (operators,
StagedIterable.of) then puts one `progress` node in the loop body, an effect that reads the
counter on every run, so the bar moves while the compiled loop runs, from the host, with no
callback machinery. Its kernel compares the counter with the next value worth showing and
returns: the bar is redrawn at most ~100 times per run of the loop (`UPDATES`).

The bar is tqdm's when tqdm is importable (an optional extra), else a plain line on stderr,
`\\r{desc} 37/100 (37%)`, ended by a newline when the loop finishes. A new run of the loop
(the counter back at its start) starts a new bar.
"""

import itertools
import sys

from autograph.runtime.ir import primitives

UPDATES = 100          # redraws per run of a loop, at most (and its last value)
_tokens = itertools.count(1)
_runs = {}             # token of a progress node -> its _Run (the bar of the loop's run)


class _Bar:
    """tqdm's bar when tqdm is installed, else a line on stderr."""

    def __init__(self, total, desc):
        self.total, self.desc, self.shown = total, desc, 0
        try:
            from tqdm import tqdm
        except ImportError:
            self.tqdm = None
        else:
            self.tqdm = tqdm(total=total, desc=desc or None, leave=True)

    def show(self, done):
        if self.tqdm is not None:
            self.tqdm.update(done - self.shown)
        else:
            percent = 100 * done // self.total if self.total else 100
            sys.stderr.write(f"\r{self.desc + ' ' if self.desc else ''}{done}/{self.total} "
                             f"({percent}%)")
            sys.stderr.flush()
        self.shown = done

    def close(self):
        if self.tqdm is not None:
            self.tqdm.close()
        else:
            sys.stderr.write("\n")
            sys.stderr.flush()


class _Run:
    """One run of a loop: its bar, and the counter value of the next redraw."""
    __slots__ = ("bar", "start", "delta", "total", "stride", "last", "next")

    def __init__(self, start, limit, delta, desc):
        self.start, self.delta = start, delta
        self.total = len(range(start, limit, delta))
        self.stride = max(1, -(-self.total // UPDATES))     # (rounded up)
        self.last = start + (self.total - 1) * delta      # the last iteration's counter
        self.next = start
        self.bar = _Bar(self.total, desc)

    def at(self, i):
        """An iteration with counter `i` begins and a redraw is due: redraw; returns False
        once the bar is closed (the last iteration)."""
        self.bar.show((i - self.start) // self.delta + 1)
        if i == self.last:
            self.bar.close()
            return False
        step = self.stride * self.delta
        self.next = min(i + step, self.last) if step > 0 else max(i + step, self.last)
        return True


def iterate(values, desc=""):
    """Iterate the Python range `values`, driving a bar."""
    run = _Run(values.start, values.stop, values.step, desc)
    if run.total == 0:
        run.bar.close()
    for i in values:
        if i == run.next:
            run.at(i)
        yield i


def _kernel(xp, i, start, limit, delta, *, desc, token):
    run = _runs.get(token)
    if run is not None and i != run.start and (i < run.next if run.delta > 0 else i > run.next):
        return                               # (most iterations: nothing to draw)
    i = int(i)
    if run is None or i == run.start and int(start) == i and run.next != i:
        run = _runs[token] = _Run(i, int(limit), int(delta), desc)   # a run begins
    if not run.at(i):
        del _runs[token]                     # done: the next run starts a new bar


def _infer(i, start, limit, delta, *, desc, token):
    return []


primitives.register("progress", _infer, kernel=_kernel, effectful=True,
                    doc="moves the progress bar of a loop over ag.range(..., progress=True)")
primitives.nondifferentiable("progress")


def mark(range_tensor, desc):
    """Ask the `for` loop that stages `range_tensor` (a range node's output) for a bar."""
    graph = range_tensor.node.graph
    marks = graph.__dict__.setdefault("_progress_ranges", {})
    marks[id(range_tensor.node)] = desc


def marked(node):
    """The description of a range node marked for a bar, or None."""
    return getattr(node.graph, "_progress_ranges", {}).get(id(node))


def tick(i, start, limit, delta, desc):
    """Stage the `progress` node of one iteration (the loop body calls this with its
    counter)."""
    inputs = [primitives.convert(v) for v in (i, start, limit, delta)]
    primitives.bind("progress", inputs, {"desc": desc, "token": next(_tokens)})
