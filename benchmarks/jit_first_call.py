"""`jit_compile=True` first calls in fresh processes, A/B between autograph trees (issue
30 goal 6): the RNN gradient (case 11's `value_and_grad`, N=1000, H=64, B=32, float64)
and the vectorised Mandelbrot over a plain `range(100)` (case 13d, 200x200 complex128).

Each process (threads pinned to 1) measures its own CPU time (`time.process_time`):

- `import`: numpy, autograph and numba;
- `first`: the first call with an empty native cache (a private cache dir per process):
  trace, lower, Numba's per-process setup (~1 s: its typing registries, SciPy's BLAS)
  and the compile;
- `warm`: the same first call of a never-seen copy of the program in a process where
  Numba already compiled something else (a small array function): the compile alone;
- `cached`: a second process with the first one's cache dir: the machine code loaded,
  and how many functions Numba compiled there (0: nothing typed) and graphs autograph
  lowered (0: the trace came from the trace cache, not traced);
- `new program`: a fresh process with that cache dir and a never-seen copy of the
  program: what a new program pays on a machine whose shared helpers (native/library.py)
  and fused loops (native/kernel_modules.py) are compiled already;
- `again`: a fresh process with an empty cache that compiles the program under another
  name, then times a never-seen copy (what case 13e of `python -m benchmarks` times);
- `run`: the minimum CPU time of 5 later calls.

Each first call is split too (`... trace`: converting, tracing and differentiating, or
loading the trace from the trace cache, the Function's `_trace_or_load`; `... tracing`:
the part of it spent tracing, `_trace_graph`, 0 for a loaded trace; `... lower`: writing
the Numba source; `... numba`: Numba's compile or cache load, helpers and kernels
included): what a second process spends on tracing against loading (issue 30 goal 6's
last clause).

`--bytecode` lets the child processes write and read Python's bytecode (in a private
`PYTHONPYCACHEPREFIX`, one warm-up process first) as an installed package would, where
this machine sets PYTHONDONTWRITEBYTECODE=1: without it every process compiles autograph's
and the benchmark's own modules from source, which the tracing times then carry.

Trees alternate (A B A B ...) for `--rounds` rounds; medians are reported.

    python -m benchmarks.jit_first_call TREE_A [TREE_B ...] [--rounds 3] [--bytecode]
        [--only rnn|mandelbrot] [--json out.json]
"""

import argparse
import collections
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r'''
import sys, time, json
t0 = time.process_time()
import numpy as np
import autograph as ag
import numba
from numba.core import event
t1 = time.process_time()
compiled = []
class Count(event.Listener):
    def on_start(self, ev):
        compiled.append(1)
    def on_end(self, ev):
        pass
event.register("numba:compile", Count())
phases = {"trace": 0.0, "lower": 0.0, "numba": 0.0, "tracing": 0.0}


def timed(owner, name, phase):
    inner = getattr(owner, name, None)
    if inner is None:     # (a tree without it)
        return

    def wrapper(*args, **kwargs):
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            phases[phase] += time.process_time() - start
    setattr(owner, name, wrapper)


from autograph.function import Function
from autograph.runtime.exec.native import jit as native_jit, lower as native_lower
timed(Function, "_trace_or_load", "trace")
timed(Function, "_trace_graph", "tracing")
timed(native_lower.Lowering, "build", "lower")
timed(native_jit._Runner, "compile_for", "numba")
which, mode, k = sys.argv[1], sys.argv[2], sys.argv[3]
if mode == "warm":
    numba.njit(lambda a: np.dot(a, a) + 1.0)(np.ones((2, 2)))
    compiled.clear()
from benchmarks.programs import MANDELBROT


def fresh_function(text, name, namespace):
    """`name` from a module file of its own, named by the program's number: the second
    process of a program reads the same file (the trace cache's key names the file)."""
    import importlib.util, os
    path = os.path.join(os.environ["AG_BENCH_SRC"], f"{name}.py")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write("import numpy as np\nimport autograph as ag\n" + text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def program(k):
    if which == "rnn":
        text = (f"""
def loss_{k}(W, xs, h0):
    h = h0
    for t in ag.range(xs.shape[0]):
        h = np.tanh(h @ W + xs[t])
    return np.sum(h)
""")
        rng = np.random.default_rng(0)
        args = (rng.standard_normal((64, 64)) / 8, 0.5 * rng.standard_normal((1000, 32, 64)),
                np.zeros((32, 64)))
        loss = fresh_function(text, f"loss_{k}", {"np": np, "ag": ag})
        return ag.function(ag.value_and_grad(loss), jit_compile=True), args
    text = MANDELBROT.format(k=k)
    side = 200
    args = (np.linspace(-2, 1, side)[None, :] + 1j * np.linspace(-1.5, 1.5, side)[:, None],)
    return ag.function(fresh_function(text, f"mandelbrot_{k}", {"np": np}),
                       jit_compile=True), args


if mode == "again":     # the benchmark harness's case: this program compiled before under
    other, args = program(str(k) + "_before")   # another name in this process
    other(*args)
    compiled.clear()
    phases.update(dict.fromkeys(phases, 0.0))
fn, args = program(k)
t2 = time.process_time()
fn(*args)
t3 = time.process_time()
runs = []
for _ in range(5):
    a = time.process_time()
    fn(*args)
    runs.append(time.process_time() - a)
print(json.dumps({"import": t1 - t0, "first": t3 - t2, "run": min(runs),
                  "compiled": len(compiled), "lowered": native_jit.stats()["lowered"],
                  **phases}))
'''

ENV = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
       "NUMBA_NUM_THREADS": "1"}


def _child(tree, which, mode, k, cache, bytecode=None):
    env = dict(os.environ, PYTHONPATH=tree, AUTOGRAPH_CACHE_DIR=cache,
               AG_BENCH_SRC=os.path.join(os.path.dirname(cache), "src"), **ENV)
    if bytecode is not None:    # a private bytecode cache per tree, as an install has
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = os.path.join(
            bytecode, hashlib.sha256(tree.encode()).hexdigest()[:16])
    done = subprocess.run([sys.executable, "-c", CHILD, which, mode, str(k)], env=env,
                          capture_output=True, text=True, cwd=tree)   # (-c puts cwd first)
    if done.returncode:
        raise RuntimeError(done.stderr)
    out = done.stdout
    return json.loads(out.strip().splitlines()[-1])


MODES = ("first", "cached", "new program", "warm", "again")


def measure(trees, rounds, programs=("rnn", "mandelbrot"), bytecode=False):
    rows = {}
    k = 0
    with tempfile.TemporaryDirectory() as folder:
        os.mkdir(os.path.join(folder, "src"))
        pyc = os.path.join(folder, "pyc") if bytecode else None
        if bytecode:        # write each tree's bytecode once, outside the timed rounds
            for tree in trees:
                for which in programs:
                    _child(tree, which, "first", 0, os.path.join(folder, "warmup"), pyc)
        for _ in range(rounds):
            for which in programs:
                for tree in trees:
                    k += 1
                    cache = os.path.join(folder, f"c{k}")
                    got = {
                        "first": _child(tree, which, "first", k, cache, pyc),
                        "cached": _child(tree, which, "cached", k, cache, pyc),   # same program
                        "new program": _child(tree, which, "new", k + 5_000, cache, pyc),
                        "warm": _child(tree, which, "warm", k + 10_000,
                                       os.path.join(folder, f"w{k}"), pyc),
                        "again": _child(tree, which, "again", k + 20_000,
                                        os.path.join(folder, f"a{k}"), pyc)}
                    r = rows.setdefault((tree, which), collections.defaultdict(list))
                    r["import"].append(got["first"]["import"])
                    for mode in MODES:
                        r[mode].append(got[mode]["first"])
                    for mode in MODES:
                        for phase in ("trace", "tracing", "lower", "numba"):
                            r[f"{mode} {phase}"].append(got[mode].get(phase, float("nan")))
                    r["run"].append(min(got[m]["run"] for m in ("first", "cached", "warm")))
                    r["compiled first"].append(got["first"]["compiled"])
                    r["compiled cached"].append(got["cached"]["compiled"])
                    r["lowered cached"].append(got["cached"].get("lowered", float("nan")))
    return {f"{tree} {which}": {key: statistics.median(v) for key, v in r.items()}
            for (tree, which), r in rows.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trees", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=("rnn", "mandelbrot"))
    parser.add_argument("--bytecode", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    result = measure(args.trees, args.rounds,
                     (args.only,) if args.only else ("rnn", "mandelbrot"), args.bytecode)
    result["load average at the end"] = os.getloadavg()
    for name, r in result.items():
        print(name, r if not isinstance(r, dict) else
              "  ".join(f"{k} {v:.3g}" for k, v in r.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
