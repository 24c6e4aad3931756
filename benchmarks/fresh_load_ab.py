"""A/B of a saved model's fresh process between two autograph trees, with onnxruntime and the
NumPy floor in the same interleaved rounds (issue 30, goal 7).

The model and the processes are benchmarks/fresh_load.py's and case 15's: a small MLP saved
with `ag.saved_model.save` and exported with `ag.onnx.export`; each process imports NumPy,
then the runtime, loads the model, calls it once and checks the result. The floor
(`numpy_hand`) computes the MLP with NumPy from the saved weights. Per round the four
processes run in turn (order reversed every other round); each one's CPU time (user +
system, from the parent's rusage of its children) is recorded; medians, each contender's
median above the floor, and the paired ratio to onnxruntime are printed.

Three settings (`--mode`):

- `nopyc`: an empty `-X pycache_prefix` per process: every Python module it imports, the
  standard library's and NumPy's too, is compiled from source (case 15b);
- `B`: `python -B` with no bytecode in the autograph trees (the `__pycache__` folders are
  removed first): the installed packages (NumPy, onnxruntime, the standard library) keep
  their bytecode, autograph's source is compiled (an editable install where
  PYTHONDONTWRITEBYTECODE is set, as on this project's machines);
- `pyc`: bytecode present, written by two warm-up runs of each (case 15a).

    python -m benchmarks.fresh_load_ab BEFORE_TREE AFTER_TREE [--mode nopyc B pyc] [-n 15]

Run it with an interpreter that has onnxruntime (`/work/peersvenv/bin/python` here).
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile

from benchmarks.cases.saved_model_process import FLOOR, SCRIPT, WEIGHTS
from benchmarks.fresh_load import BODIES, MAKE

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _prepare(trees):
    out = tempfile.mkdtemp(prefix="ag_fresh_load_ab_")
    env = dict(os.environ, PYTHONPATH=ROOT)
    subprocess.run([sys.executable, "-c", MAKE.format(out=out) + WEIGHTS.format(out=out)],
                   env=env, check=True, capture_output=True)
    scripts = {}
    for name, body in (("numpy_hand", FLOOR), ("onnxruntime", BODIES["onnxruntime"]),
                       ("autograph", BODIES["autograph"])):
        scripts[name] = os.path.join(out, f"fresh_{name}.py")
        with open(scripts[name], "w") as f:
            f.write(SCRIPT.format(body=body.format(out=out), out=out))
    runs = {"numpy_hand": (scripts["numpy_hand"], None),
            "onnxruntime": (scripts["onnxruntime"], None)}
    for label, tree in trees.items():
        runs[label] = (scripts["autograph"], tree)
    return runs


def _cpu_ms(script, tree, mode):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONPATH", None)
    if tree is not None:
        env["PYTHONPATH"] = tree
    args = [sys.executable]
    if mode == "nopyc":
        args += ["-X", f"pycache_prefix={tempfile.mkdtemp(prefix='ag_nopyc_')}"]
    elif mode == "B":
        args += ["-B"]
    else:
        env.pop("PYTHONDONTWRITEBYTECODE")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args + [script], env=env, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return 1e3 * (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)


def _drop_bytecode(tree):
    for folder, dirs, _ in os.walk(os.path.join(tree, "autograph")):
        if "__pycache__" in dirs:
            shutil.rmtree(os.path.join(folder, "__pycache__"))
            dirs.remove("__pycache__")


def run(runs, trees, mode, n):
    if mode == "B":
        for tree in trees.values():
            _drop_bytecode(tree)
    if mode == "pyc":
        for script, tree in runs.values():
            for _ in range(2):
                _cpu_ms(script, tree, mode)
    samples = {name: [] for name in runs}
    order = list(runs)
    for i in range(n):
        for name in (order if i % 2 == 0 else order[::-1]):
            samples[name].append(_cpu_ms(*runs[name], mode))
    med = {name: statistics.median(s) for name, s in samples.items()}
    print(f"\n{mode} (n = {n}, CPU ms per process, medians; load average "
          f"{os.getloadavg()[0]:.1f})")
    print("| contender | CPU | above the floor | paired / onnxruntime |")
    print("|---|---:|---:|---:|")
    for name, value in med.items():
        paired = statistics.median(a / b for a, b in zip(samples[name], samples["onnxruntime"]))
        print(f"| {name} | {value:.0f} | {value - med['numpy_hand']:+.0f} | {paired:.3f}x |")
    return samples


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("before")
    p.add_argument("after")
    p.add_argument("--mode", nargs="+", default=["nopyc", "B", "pyc"],
                   choices=["nopyc", "B", "pyc"])
    p.add_argument("-n", type=int, default=15)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    trees = {"autograph before": os.path.abspath(args.before),
             "autograph after": os.path.abspath(args.after)}
    runs = _prepare(trees)
    results = {mode: run(runs, trees, mode, args.n) for mode in args.mode}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "trees": trees, "samples_cpu_ms": results}, f, indent=1)


if __name__ == "__main__":
    main()
