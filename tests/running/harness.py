"""The matrix's judge, run inside each context (tests/running/test_matrix.py): every case
of the corpus module, wherever and however its text was run, is called as plain Python,
converted (`ag.to_graph`, on the same Python values) and, for cases that trace, traced
(`ag.function`, non-static arguments as NumPy values); all must agree with Python. A
warning that autograph could not convert a function is a failure too: in these contexts
the source is there, so falling back to unconverted code would be silent.

`report(namespace)` writes {"meta": ..., "problems": {label: [text, ...]}} as JSON to the
file named by $AG_MATRIX_OUT (or prints it after a marker), so that any context (a kernel,
a doctest example) can hand its results back.
"""

import inspect
import json
import os
import sys
import warnings

import numpy as np

MARKER = "AG-MATRIX-RESULT "


def _cases(ns):
    out = []
    for fn, argsets, static in ns.get("SAMPLES", ()):
        out.append((f"sample {fn.__name__}", fn, argsets, static, True))
    for fn, argsets in ns.get("PYTHON_ONLY", ()):
        out.append((f"sample {fn.__name__}", fn, argsets, (), False))
    for name in ("CASES", "GENERATED", "CELL_CASES"):
        out.extend(ns.get(name, ()))
    return out


def as_array(value):
    if isinstance(value, bool):
        return np.bool_(value)
    if isinstance(value, int):
        return np.int64(value)
    if isinstance(value, float):
        return np.float64(value)
    return value


def _outcome(call):
    try:
        return ("value", call())
    except Exception as e:   # compared by type with Python's
        return ("raised", type(e).__name__, str(e)[:300])


def _same(a, b, exact_types):
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return (type(a) is type(b) or not exact_types) and len(a) == len(b) and all(
            _same(x, y, exact_types) for x, y in zip(a, b))
    if exact_types and type(a) is not type(b):
        return False
    try:
        return bool(np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float),
                                rtol=1e-9, atol=1e-12))
    except (TypeError, ValueError):
        return a == b


def _compare(kind, want, got, exact_types):
    if want[0] == "raised" or got[0] == "raised":
        if want[:2] == got[:2]:
            return None
        return f"{kind}: Python gave {want}, autograph {got}"
    if not _same(want[1], got[1], exact_types):
        return f"{kind}: Python gave {want[1]!r}, autograph {got[1]!r}"
    return None


def _traced_args(fn, args, static):
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    return tuple(a if (i < len(names) and names[i] in static) else as_array(a)
                 for i, a in enumerate(args))


def check_case(fn, argsets, static, traced):
    import autograph as ag
    problems = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        converted = _outcome(lambda: ag.to_graph(fn))
        if converted[0] == "raised":
            problems.append(f"conversion failed: {converted[1]}: {converted[2]}")
        function = ag.function(fn) if traced else None
        for args in argsets:
            want = _outcome(lambda: fn(*args))
            if converted[0] == "value":
                problems.append(_compare(f"converted{args}", want,
                                         _outcome(lambda: converted[1](*args)), True))
            if traced:
                problems.append(_compare(f"traced{args}", want, _outcome(
                    lambda: function(*_traced_args(fn, args, static))), False))
    for w in caught:
        text = str(w.message)
        if "could not convert" in text or "unconverted" in text:
            problems.append(f"fell back: {text[:300]}")
    return [p for p in problems if p]


def run(ns):
    problems = {}
    cases = _cases(ns)
    for label, fn, argsets, static, traced in cases:
        found = check_case(fn, argsets, static, traced)
        if found:
            problems[label] = found
    loader = ns.get("__loader__")
    meta = {"cases": len(cases), "labels": [c[0] for c in cases],
            "loader": type(loader).__name__ if loader is not None else None,
            "cached": ns.get("__cached__"), "name": ns.get("__name__"),
            "dont_write_bytecode": sys.dont_write_bytecode}
    return {"meta": meta, "problems": problems}


def report(ns, extra=None):
    result = run(ns)
    if extra:
        result["problems"].update(extra)
    text = json.dumps(result, default=repr)
    path = os.environ.get("AG_MATRIX_OUT")
    if path:
        with open(path, "a") as f:
            f.write(text + "\n")
    else:
        print(MARKER + text)
    return result
