"""A saved model in a fresh process: import + load + first call, autograph against
onnxruntime on the same model (issue 30, goal 7: autograph <= onnxruntime).

The model is a small MLP (64 -> 128 -> tanh -> 10, float32, batch 32) held by an
`ag.Module`; it is saved with `ag.saved_model.save` and exported with `ag.onnx.export`. Each
sample starts a new interpreter that imports NumPy, then (timed inside the process, from
after `import numpy`): imports the runtime, loads the model and calls it once. The
whole process is timed too, from outside. The two contenders alternate (A B A B ...), in
two settings:

- bytecode: .pyc files written by a warm-up run and read by every sample (a program's
  second run);
- no bytecode: each process gets an empty `-X pycache_prefix` and writes nothing (a
  container or read-only install), so every Python module it imports is compiled.

onnxruntime runs with one intra-op and one inter-op thread (every contender on one thread).

    python -m benchmarks.fresh_load [-n 30] [--json PATH]

`farm-bench` (the process timer on this project's machines) gives a second opinion on the
whole processes; the script prints the two commands to hand it.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TREE = [ROOT]      # the autograph tree measured (--tree: another checkout, e.g. a baseline)

MAKE = """
import numpy as np
import autograph as ag


class MLP(ag.Module):
    def __init__(self):
        super().__init__()
        r = np.random.default_rng(0)
        self.w1 = ag.Variable(r.standard_normal((64, 128)).astype(np.float32) * 0.1)
        self.b1 = ag.Variable(np.zeros(128, np.float32))
        self.w2 = ag.Variable(r.standard_normal((128, 10)).astype(np.float32) * 0.1)
        self.b2 = ag.Variable(np.zeros(10, np.float32))

    @ag.function(input_signature=[ag.TensorSpec([None, 64], np.float32)])
    def __call__(self, x):
        return np.tanh(x @ self.w1 + self.b1) @ self.w2 + self.b2


m = MLP()
x = np.linspace(-1, 1, 32 * 64, dtype=np.float32).reshape(32, 64)
np.save({out!r} + "/expected.npy", m(x))
ag.saved_model.save(m, {out!r} + "/mlp")
ag.onnx.export(m.__call__, {out!r} + "/mlp.onnx")
"""

TIMED = """import time
import numpy as np
x = np.linspace(-1, 1, 32 * 64, dtype=np.float32).reshape(32, 64)
t0, c0 = time.perf_counter(), time.process_time()
{body}
t1, c1 = time.perf_counter(), time.process_time()
assert np.allclose(y, np.load({out!r} + "/expected.npy"), rtol=1e-5, atol=1e-5)
print((t1 - t0) * 1e3, (c1 - c0) * 1e3)
"""

BODIES = {
    "autograph": ("import autograph as ag\n"
                  "m = ag.saved_model.load({out!r} + '/mlp')\n"
                  "y = m(x)"),
    "onnxruntime": ("import onnxruntime as ort\n"
                    "o = ort.SessionOptions()\n"
                    "o.intra_op_num_threads = o.inter_op_num_threads = 1\n"
                    "s = ort.InferenceSession({out!r} + '/mlp.onnx', o, "
                    "providers=['CPUExecutionProvider'])\n"
                    "y = s.run(None, {{s.get_inputs()[0].name: x}})[0]"),
}


def _env(bytecode):
    env = dict(os.environ)
    env["PYTHONPATH"] = TREE[0] + os.pathsep + env.get("PYTHONPATH", "")
    env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _command(path, bytecode):
    if bytecode:
        return [sys.executable, path]
    return [sys.executable, "-X", f"pycache_prefix={tempfile.mkdtemp(prefix='ag_nopyc_')}", path]


def _sample(path, bytecode):
    env = _env(bytecode)
    t = time.perf_counter()
    out = subprocess.run(_command(path, bytecode), env=env, capture_output=True, text=True,
                         check=True).stdout
    whole = (time.perf_counter() - t) * 1e3
    inside_wall, inside_cpu = (float(v) for v in out.split()[-2:])
    return inside_wall, inside_cpu, whole


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=30)
    p.add_argument("--json", default=None)
    p.add_argument("--tree", default=ROOT, help="the autograph checkout to measure")
    args = p.parse_args()
    TREE[0] = os.path.abspath(args.tree)
    import importlib.util
    if importlib.util.find_spec("onnxruntime") is None:
        sys.exit("onnxruntime is not installed: pip install -e '.[onnx]'")
    out = tempfile.mkdtemp(prefix="ag_fresh_load_")
    subprocess.run([sys.executable, "-c", MAKE.format(out=out)], env=_env(True), check=True)
    paths = {}
    for name, body in BODIES.items():
        paths[name] = os.path.join(out, f"fresh_{name}.py")
        with open(paths[name], "w") as f:
            f.write(TIMED.format(body=body.format(out=out), out=out))
    results = {}
    for bytecode in (True, False):
        setting = "bytecode" if bytecode else "no bytecode"
        for path in paths.values():        # warm-up: bytecode written, caches warm
            for _ in range(2):
                _sample(path, True)
        rows = {name: [] for name in paths}
        for i in range(args.n):
            order = list(paths) if i % 2 == 0 else list(reversed(paths))
            for name in order:
                rows[name].append(_sample(paths[name], bytecode))
        results[setting] = {}
        print(f"\n{setting} (n = {args.n}, medians, ms): import + load + first call, "
              "timed inside the process after `import numpy`; whole process from outside")
        print("| contender | inside, wall | inside, CPU | whole process, wall |")
        print("|---|---:|---:|---:|")
        for name, samples in rows.items():
            med = [statistics.median(col) for col in zip(*samples)]
            results[setting][name] = dict(zip(("inside_wall_ms", "inside_cpu_ms", "whole_ms"), med))
            print(f"| {name} | {med[0]:.1f} | {med[1]:.1f} | {med[2]:.1f} |")
        a, b = (rows[name] for name in ("autograph", "onnxruntime"))
        ratio = statistics.median(x[1] / y[1] for x, y in zip(a, b))
        results[setting]["ratio_inside_cpu_paired"] = ratio
        print(f"autograph / onnxruntime, inside CPU, paired median: {ratio:.2f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "tree": TREE[0], "results": results}, f, indent=1)
    env = " ".join(f"{k}={v}" for k, v in (("PYTHONPATH", TREE[0]), ("OMP_NUM_THREADS", 1)))
    print("\nwhole processes with farm-bench (bytecode present):\n"
          f"  {env} farm-bench -n 30 --vs 'env -u PYTHONDONTWRITEBYTECODE {sys.executable} "
          f"{paths['onnxruntime']}' -- env -u PYTHONDONTWRITEBYTECODE {sys.executable} "
          f"{paths['autograph']}")


if __name__ == "__main__":
    main()
