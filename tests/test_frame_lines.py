"""The line a frame is at, in constant time for long functions (autograph.frames.frame_line).

`frame.f_lineno` scans the code object's line table from its start, so asking it for every
node a trace makes was quadratic in the function's length (issue 30: a third of a
1,000-statement function's first call). Long code objects now get their lines listed once.
Checked against CPython's own answer at every instruction, and by counting work: no
`f_lineno` read for a long function, one listing per code object, none kept after it dies.
"""

import gc
import linecache
import sys

import numpy as np

import autograph as ag
from autograph import errors, frames


def _compile(source, name):
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    namespace = {"np": np, "sys": sys}
    exec(compile(source, name, "exec"), namespace)
    return namespace


VARIED = '''
def varied(n, probe):
    total = probe()
    for i in range(n):
        total = (total +
                 i * 2
                 + probe())
        if i % 2:
            continue
        total -= 1
    try:
        total += [probe() for _ in range(2)][0]
        raise ValueError(total)
    except ValueError as e:
        total = probe() + len(str(e))
    finally:
        total += 1
    with open(__file__ if False else "/dev/null") as f:
        total += probe()
    g = lambda v: v + probe()
    total = g(total)
    while total > 100:
        total = total // 3 + probe()
    def inner(k):
        return k + probe()
    total = inner(total); total += probe()
    return total
'''


def _long(n, with_probe=True):
    """A function of `n` statements (plus the VARIED ones): long enough for a table."""
    body = "\n".join(f"    y = y * 0.5 + {k % 7}" + (" + probe()" if with_probe and k % 37 == 0
                                                       else "") for k in range(n))
    return f"def long_one(y, probe):\n{body}\n    return y + probe()\n"


def _probe_log():
    seen = []

    def probe():
        caller = sys._getframe(1)
        seen.append((caller.f_code.co_name, frames.frame_line(caller), caller.f_lineno))
        return 0
    return probe, seen


def test_frame_line_is_f_lineno_in_long_and_short_functions():
    ns = _compile(VARIED + _long(400), "<frame-lines-test>")
    probe, seen = _probe_log()
    ns["varied"](5, probe)
    ns["long_one"](1.0, probe)
    assert len(ns["long_one"].__code__.co_linetable) > frames.LINE_TABLE_ABOVE   # listed
    assert len(seen) > 20 and {name for name, _, _ in seen} >= {"varied", "long_one",
                                                                  "<lambda>", "inner"}
    for name, ours, theirs in seen:
        assert ours == theirs, (name, ours, theirs)


def test_line_table_matches_cpython_at_every_instruction():
    """Every instruction each of these functions runs (opcode tracing): the listed line
    is the one CPython reports there."""
    ns = _compile(VARIED + _long(60), "<frame-lines-opcodes>")
    assert len(ns["long_one"].__code__.co_linetable) > frames.LINE_TABLE_ABOVE
    checked, wrong = [0], []
    codes = {f.__code__: frames.line_table(f.__code__) for f in (ns["varied"], ns["long_one"])}

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True
        if frame.f_code in codes and event in ("opcode", "line"):
            checked[0] += 1
            listed = codes[frame.f_code][frame.f_lasti >> 1]
            if listed != frame.f_lineno:
                wrong.append((frame.f_code.co_name, frame.f_lasti, listed, frame.f_lineno))
        return tracer

    probe = lambda: 0   # noqa: E731
    sys.settrace(tracer)
    try:
        ns["varied"](5, probe)
        ns["long_one"](1.0, probe)
    finally:
        sys.settrace(None)
    assert checked[0] > 500 and not wrong, wrong[:5]


class _CountingFrame:
    """A frame as frame_line sees it, counting the reads of `f_lineno` (the slow scan)."""
    f_trace = None

    def __init__(self, code, lasti):
        self.f_code, self.f_lasti, self.reads = code, lasti, 0

    @property
    def f_lineno(self):
        self.reads += 1
        return -1


def test_a_long_function_s_lines_are_never_scanned_for():
    code = _compile(_long(500), "<frame-lines-count>")["long_one"].__code__
    table = frames.line_table(code)
    assert len(table) == len(code.co_code) // 2   # one entry a code unit: linear
    reads = 0
    for lasti in range(0, len(code.co_code), 2):
        frame = _CountingFrame(code, lasti)
        assert frames.frame_line(frame) == table[lasti >> 1]
        reads += frame.reads
    assert reads == 0


def test_a_trace_lists_each_long_function_once_and_names_its_lines(monkeypatch):
    """Tracing a 400-statement function: one listing of its lines (not one scan a node),
    every node's origin the line of the statement that made it, and the listing dropped
    with the function."""
    source = _long(400, with_probe=False).replace(", probe", "").replace(" + probe()", "")
    listed = []
    real = frames.line_table
    monkeypatch.setattr(frames, "line_table", lambda code: listed.append(code.co_name) or
                        real(code))
    kept = frames.line_tables_kept()
    fn = ag.function(_compile(source, "<frame-lines-trace>")["long_one"])
    assert fn(np.float64(2.0)) == _compile(source, "<plain>")["long_one"](2.0)
    graph = fn.get_concrete_function(np.float64(2.0)).graph
    assert listed.count("long_one") == 1         # the converted function's code, once
    places = [errors.origin_location(node.origin) for node in graph.nodes
              if node.op == "multiply"]
    # statement k (line k + 2 of the user's file) made its own node
    assert [(place[0], place[1]) for place in places] == [
        ("<frame-lines-trace>", line) for line in range(2, 402)]
    del fn, graph, listed[:]
    gc.collect()
    assert frames.line_tables_kept() <= kept
