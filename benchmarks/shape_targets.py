"""The shape corpus (tests/converters/shape_corpus.py) on every target, and what a growing
array costs (issue 31).

    python -m benchmarks.shape_targets            # jit_compile=True and ONNX, whole corpus
    python -m benchmarks.shape_targets --growth   # copies and time of a growing loop

Targets: each program under `jit_compile=True` (Numba: compiles, then must give Python's
answer for loop counts 0, 1 and 3) and exported to ONNX (onnxruntime, the same check). A
program a target refuses must be refused with an error naming the operation; any other
failure, or a wrong answer, is reported as such.

Growth: `m = np.concatenate([m, row[None]])` in a staged loop of n iterations copies the
whole of `m` every iteration, as NumPy does: 2 + 3 + ... + (n + 1) rows, n(n + 3)/2, O(n^2)
elements in all. The report times n = 250 .. 4000 (the time's growth exponent between
sizes) next to a list appended to and stacked once (issue 31 item 1: O(n) copies).
"""

import argparse
import re
import sys
import time

import numpy as np

import autograph as ag


def _same(got, expected):
    got = got if isinstance(got, (tuple, list)) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    if len(got) != len(expected):
        return False
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        if g.shape != e.shape or g.dtype != e.dtype or not np.allclose(g, e):
            return False
    return True


def _targets(programs, x):
    from autograph.onnx.export import ExportError
    from autograph.runtime.exec.native import NativeLoweringError
    try:
        import onnxruntime as ort
    except ImportError:
        ort = None
    rows = []
    for program in programs:
        cases = []
        for n in (0, 1, 3):
            try:
                cases.append((n, program(x.copy(), n)))
            except Exception:   # (the reference raises: the targets are not asked)
                pass
        row = [program.__name__]
        start = time.perf_counter()
        try:
            native = ag.function(program, jit_compile=True)
            ok = all(_same(native(x.copy(), np.int64(n)), e) for n, e in cases)
            row.append("ok" if ok else "WRONG")
        except NativeLoweringError as exc:
            row.append("refused: " + str(exc).split("`")[1])
        except Exception as exc:   # a failure that is not a clear refusal
            row.append(f"FAILED {type(exc).__name__}")
        row.append(f"{time.perf_counter() - start:.1f}s")
        if ort is None:
            row.append("(no onnxruntime)")
        else:
            try:
                traced = ag.function(program)
                traced(x, np.int64(1))
                session = ort.InferenceSession(ag.onnx.export(traced).SerializeToString())
                names = [i.name for i in session.get_inputs()]
                ok = all(_same(session.run(None, dict(zip(names, (x, np.asarray(n))))), e)
                         for n, e in cases)
                row.append("ok" if ok else "WRONG")
            except ExportError as exc:
                found = re.search(r"primitive '(\w+)'", str(exc))
                row.append("refused: " + (found.group(1) if found else str(exc)[:60]))
            except Exception as exc:
                row.append(f"FAILED {type(exc).__name__}")
        rows.append(row)
        print(" | ".join(row), flush=True)
    native_ok = sum(r[1] == "ok" for r in rows)
    onnx_ok = sum(r[3] == "ok" for r in rows)
    bad = [r[0] for r in rows if "WRONG" in r or any(c.startswith("FAILED") for c in r)]
    print(f"\n{len(rows)} programs: {native_ok} run natively, {onnx_ok} in onnxruntime; "
          f"wrong or unclear: {bad or 'none'}")


def grow(x, n):
    m = x[None]
    for i in range(n):
        m = np.concatenate([m, (x * i)[None]])
    return m


def grow_list(x, n):
    rows = [x]
    for i in range(n):
        rows.append(x * i)
    return np.stack(rows)


def _growth():
    x = np.arange(8.0)
    print("n | growing concat (ms) | exponent | list + stack (ms) | exponent | rows concat "
          "copies")
    fns, last = (ag.function(grow), ag.function(grow_list)), None
    for n in (250, 500, 1000, 2000, 4000):
        times = []
        for fn in fns:
            fn(x, np.int64(n))
            times.append(min(_timed(fn, x, n) for _ in range(3)) * 1e3)
        slopes = ["", ""] if last is None else [f"{np.log2(t / u):.2f}"
                                                for t, u in zip(times, last)]
        print(f"{n} | {times[0]:.2f} | {slopes[0]} | {times[1]:.2f} | {slopes[1]} | "
              f"{n * (n + 3) // 2}")
        last = times


def _timed(fn, x, n):
    start = time.perf_counter()
    fn(x, np.int64(n))
    return time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--growth", action="store_true", help="the growing-array costs only")
    args = parser.parse_args(argv)
    if args.growth:
        _growth()
        return 0
    sys.path.insert(0, ".")
    from tests.converters import shape_corpus
    _targets(shape_corpus.PROGRAMS, shape_corpus.X)
    return 0


if __name__ == "__main__":
    sys.exit(main())
