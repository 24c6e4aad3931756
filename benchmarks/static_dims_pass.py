"""What the static_dims pass costs the conversion: CPU time of the whole pipeline (parsing
included) over a corpus of functions (_MODULES), all of them and those whose source reads
`.shape`, and of the static_dims pass alone on the same trees, medians of interleaved
rounds, one thread. The pass walks each tree twice (names bound to dimensions,
then the subscripts and NumPy calls); every other function (no "shape" in its source) skips
it at the gate.

    python -m benchmarks.static_dims_pass [--rounds 9]
"""

import argparse
import inspect
import os
import statistics
import sys
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"


_MODULES = ("tests.converters.shape_corpus", "benchmarks.programs",
            "tests.converters.test_static_dims", "tests.function.test_unknown_dims")


def _corpus():
    """The plain functions of _MODULES: (all of them, those whose source reads .shape)."""
    import importlib
    fns = []
    for name in _MODULES:
        module = importlib.import_module(name)
        fns += [f for _, f in inspect.getmembers(module, inspect.isfunction)
                if f.__module__ == name and not f.__name__.startswith("test_")]
    return fns, [f for f in fns if ".shape" in inspect.getsource(f)]


def _pipeline_seconds(fns):
    from autograph.converters import pipeline
    from autograph.source import parser
    t = time.process_time()
    for fn in fns:
        node, text, info = parser.parse_entity(fn)
        pipeline.convert(node, pipeline.Context(fn, node, info, source=text))
    return time.process_time() - t


def _pass_seconds(fns):
    from autograph.converters import pipeline, static_dims
    from autograph.source import parser
    trees = []
    for fn in fns:
        node, text, info = parser.parse_entity(fn)
        trees.append((node, pipeline.Context(fn, node, info, source=text)))
    t = time.process_time()
    for node, ctx in trees:
        static_dims.transform(node, ctx)
    return time.process_time() - t


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args(argv)
    every, reading = _corpus()
    for label, fns in (("all functions", every), ("those reading .shape", reading)):
        whole, alone = [], []
        _pipeline_seconds(fns), _pass_seconds(fns)   # warm-up: imports, template caches
        for _ in range(args.rounds):
            whole.append(_pipeline_seconds(fns))
            alone.append(_pass_seconds(fns))
        w, a = statistics.median(whole), statistics.median(alone)
        print(f"{len(fns)} {label}; medians of {args.rounds} interleaved rounds (CPU time)")
        print(f"  whole pipeline     {w * 1e3:8.2f} ms  ({w / len(fns) * 1e6:6.0f} us/function)")
        print(f"  static_dims alone  {a * 1e3:8.2f} ms  ({a / len(fns) * 1e6:6.0f} us/function)"
              f"  = {a / w:.1%} of the pipeline")


if __name__ == "__main__":
    sys.exit(main())
