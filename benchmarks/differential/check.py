"""Run one generated program three ways and classify what differs.

(a) plain Python, (b) converted (`ag.to_graph`) on the same Python values, (c) traced
(`ag.function`) with NumPy values for the numeric inputs. (b) must equal (a) exactly (the
same value and type, or the same exception type); (c) must equal (a) numerically, raise the
same exception type, or refuse clearly: an autograph error (StagingError, ConversionError,
SymbolicTensorError) whose message names the user's file and line.

A finding is a tuple `(category, mode, key)`: category is "wrong", "error", "timeout" or
"refusal"; key is the exception type and its message with the program's names, numbers and
code quotes replaced by placeholders, so that one bug found by many programs is one class.
Refusals additionally get a "misleading" finding when the message does not fit the user's
code (class 14 of issue 11).
"""

import itertools
import linecache
import re
import signal

import numpy as np

import autograph as ag
from autograph import errors
from autograph.runtime.ir.tensor import SymbolicTensorError

REFUSALS = (errors.AutographError, SymbolicTensorError)
# names of the compiler's generated code that a message to the user must not show
INTERNAL = re.compile(r"\b(retval_\w*|do_return\w*|continue_\w*|break_\w*|loop_body\w*|"
                      r"loop_test\w*|if_true\w*|if_false\w*|ag__\w*|UndefinedReturnValue|"
                      r"Undefined\b|extra_test|opts|symbol_names|get_state|set_state)")
_counter = itertools.count()


class Timeout(BaseException):
    """A run took longer than its guard (BaseException: no `except Exception` swallows it)."""


def _alarm(signum, frame):
    raise Timeout()


def guarded(seconds, fn, *args):
    """fn(*args) as ("ok", value) or ("raise", exception) or ("timeout", None)."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return "ok", fn(*args)
    except Timeout:
        return "timeout", None
    except RecursionError as e:
        return "raise", e
    except Exception as e:  # noqa: BLE001 - every exception is an outcome to compare
        return "raise", e
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def load(source, entry="generated"):
    """exec `source` under a fresh file name registered with linecache; its `entry`."""
    filename = f"<differential-{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "differential_generated"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[entry], filename


def normalize(message, limit=170):
    """A message with the program's particulars replaced, for grouping into classes."""
    m = str(message).split("\n")[0]
    m = re.sub(r"<differential-\d+>:\d+", "FILE:L", m)
    m = re.sub(r"<differential-\d+>", "FILE", m)
    m = re.sub(r"`[^`]*`", "`CODE`", m)
    m = re.sub(r"'[^']*'", "'V'", m)
    m = re.sub(r"\"[^\"]*\"", '"V"', m)
    m = re.sub(r"line \d+", "line L", m)
    m = re.sub(r"-?\d+(\.\d+)?", "N", m)
    m = re.sub(r"Tensor\([^)]*\)", "Tensor(...)", m)
    m = re.sub(r"<[^<>]* at 0x[0-9a-f]+>", "<obj>", m)
    return m[:limit]


def text_of(exc):
    """An exception's message with its notes (where autograph names the user's line)."""
    return "\n".join([str(exc), *getattr(exc, "__notes__", ())])


def misleading(message, source, filename):
    """Reasons (a list of short tags) why a refusal's message (with its notes: pass
    `text_of(exc)`) does not fit the user's code."""
    msg = str(message)
    out = []
    if filename not in msg:
        out.append("names no user line")
    if ("np.stack" in msg or "np.array" in msg) and "np." not in source:
        out.append("advises np.stack/np.array the user never wrote")
    if "try/except" in msg and "except" not in source:
        out.append("speaks of try/except where the user wrote try/finally")
    if re.search(r"\boutput \d+", msg):
        out.append("speaks of an 'output N'")
    for name in set(INTERNAL.findall(msg)):
        if not re.search(rf"\b{re.escape(name)}\b", source):
            out.append(f"shows internal name {name}")
            break
    line = re.search(re.escape(filename) + r'(?::|", line )(\d+)', msg)
    if line:
        text = source.splitlines()[int(line.group(1)) - 1].strip()
        if re.search(r"use it in an? (`?if`?|condition|`?while`?)", msg, re.I) and \
                re.match(r"(if|elif|while)\b", text):
            out.append("advises 'use it in an if' on an if/while line")
    return out


def _same_value(expected, got, exact):
    if expected is None or got is None:
        return expected is got
    if exact:
        if type(expected) is not type(got):
            return False
        if isinstance(expected, tuple):
            return len(expected) == len(got) and all(
                _same_value(e, g, True) for e, g in zip(expected, got))
        return expected == got
    if isinstance(expected, tuple):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return False
        return all(_same_value(e, g, False) for e, g in zip(expected, got))
    try:
        g = np.asarray(got)
    except Exception:  # noqa: BLE001
        return False
    if g.dtype == object or g.shape != ():
        return False
    return bool(g == expected)


def numpy_args(inputs, tensor_args):
    x, n, xs = inputs
    return (np.int64(x) if tensor_args[0] else x,
            np.int64(n) if tensor_args[1] else n,
            np.array(xs, dtype=np.int64) if tensor_args[2] else list(xs))


def check(program, timeout=10.0, only_input=None, modes=("converted", "traced")):
    """Findings for one `Program`: a sorted list of (category, mode, key, detail) tuples.

    detail is a dict with the input index, the first line of the message and, for a
    misleading refusal, the reasons."""
    findings = {}

    def add(category, mode, key, index, message="", **extra):
        findings.setdefault((category, mode, key), dict(input=index, message=str(message)[:400], **extra))

    fn, filename = load(program.source)
    converted = traced = None
    for index, inputs in enumerate(program.inputs):
        if only_input is not None and index != only_input:
            continue
        x, n, xs = inputs
        kind, expected = guarded(timeout, fn, x, n, list(xs))
        if kind == "timeout":
            continue                       # the generator should never produce these
        if "converted" in modes:
            if converted is None:
                ck, converted = guarded(timeout, ag.to_graph, fn)
                if ck == "timeout":
                    add("timeout", "to_graph", "timeout", index)
                    return _done(findings)
                if ck != "ok":
                    add("error", "to_graph", f"{type(converted).__name__}: {normalize(converted)}",
                        index, converted)
                    return _done(findings)
            ck, got = guarded(timeout, converted, x, n, list(xs))
            _compare(add, "converted", kind, expected, ck, got, index, program.source,
                     filename, exact=True)
        if "traced" in modes:
            if traced is None:
                traced = ag.function(fn)
            tk, got = guarded(timeout, traced, *numpy_args(inputs, program.tensor_args))
            _compare(add, "traced", kind, expected, tk, got, index, program.source,
                     filename, exact=False)
    return _done(findings)


def _done(findings):
    return sorted((c, m, k, d) for (c, m, k), d in findings.items())


def _compare(add, mode, py_kind, expected, kind, got, index, source, filename, exact):
    if kind == "timeout":
        add("timeout", mode, "timeout", index)
        return
    if kind == "ok":
        if py_kind == "raise":
            add("wrong", mode, f"no exception where Python raises {type(expected).__name__}",
                index, expected)
        elif not _same_value(expected, got, exact):
            add("wrong", mode, "different result", index,
                f"Python {expected!r}, {mode} {got!r}")
        return
    # the run raised
    if py_kind == "raise" and type(got) is type(expected):
        return
    if mode == "traced" and isinstance(got, REFUSALS):
        key = f"{type(got).__name__}: {normalize(got)}"
        add("refusal", mode, key, index, got)
        for reason in misleading(text_of(got), source, filename):
            add("misleading", mode, f"{reason} | {key}", index, got)
        return
    what = f"raises {type(got).__name__}"
    if py_kind == "raise":
        what += f" where Python raises {type(expected).__name__}"
    add("error", mode, f"{what}: {normalize(got)}", index, got)
