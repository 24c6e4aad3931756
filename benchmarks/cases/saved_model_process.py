"""Cases 15a/15b (issue 30, goal 7): a saved model in a fresh process, import + load + first
call, autograph against onnxruntime on the same model.

The model is benchmarks/fresh_load.py's: a small MLP (64 -> 128 -> tanh -> 10, float32,
batch 32) held by an `ag.Module`, saved with `ag.saved_model.save` and exported with
`ag.onnx.export` (both once, in a setup process). Each timed call starts a new interpreter
that imports NumPy, then the runtime, loads the model, calls it once and checks the result;
the harness times the whole process (the child's CPU time in the CPU column).
`numpy_hand` is the floor: the same process computing the MLP with NumPy from the saved
weights, so a contender's cost "above import numpy" is its median minus the floor's.
15a runs with bytecode present (a program's second run), 15b with none (an empty
`-X pycache_prefix`: a container or read-only install compiles every module it imports).
onnxruntime runs with one intra-op and one inter-op thread.

`python -m benchmarks.fresh_load` measures the same inside the process (after `import
numpy`), paired, for a closer look."""

import importlib.util
import os
import subprocess
import sys
import tempfile

from benchmarks.fresh_load import BODIES, MAKE
from benchmarks.harness import Case, Contender, Goal, Unavailable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

WEIGHTS = """
np.savez({out!r} + "/weights.npz", *[np.asarray(v.read_value()) for v in (m.w1, m.b1, m.w2, m.b2)])
"""

SCRIPT = """import numpy as np
x = np.linspace(-1, 1, 32 * 64, dtype=np.float32).reshape(32, 64)
{body}
assert np.allclose(y, np.load({out!r} + "/expected.npy"), rtol=1e-5, atol=1e-5), "wrong result"
print(float(y.sum()))
"""

FLOOR = ("w = np.load({out!r} + '/weights.npz')\n"
         "y = np.tanh(x @ w['arr_0'] + w['arr_1']) @ w['arr_2'] + w['arr_3']")


def _env(bytecode):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _run(script, bytecode):
    args = [sys.executable]
    if not bytecode:
        args += ["-X", f"pycache_prefix={tempfile.mkdtemp(prefix='ag_nopyc_')}"]
    out = subprocess.run(args + [script], cwd=ROOT, env=_env(bytecode), capture_output=True,
                         text=True)
    if out.returncode:
        raise RuntimeError((out.stderr.strip().splitlines() or ["(no output)"])[-1])
    return float(out.stdout.split()[-1])


def _build(bytecode):
    def build(quick):
        if quick and not bytecode:     # every process compiles every module: ~1 s each
            return {"bytecode": bytecode}, [Unavailable("autograph", "--quick: left out")]
        out = tempfile.mkdtemp(prefix="ag_saved_process_")
        subprocess.run([sys.executable, "-c", MAKE.format(out=out) + WEIGHTS.format(out=out)],
                       cwd=ROOT, env=_env(True), check=True, capture_output=True)
        bodies = {"numpy_hand": FLOOR, "autograph": BODIES["autograph"],
                  "onnxruntime": BODIES["onnxruntime"]}
        contenders = []
        for name, body in bodies.items():
            if name == "onnxruntime" and importlib.util.find_spec("onnxruntime") is None:
                contenders.append(Unavailable(name, "onnxruntime is not installed "
                                                    "(pip install -e '.[onnx]')"))
                continue
            path = os.path.join(out, f"fresh_{name}.py")
            with open(path, "w") as f:
                f.write(SCRIPT.format(body=body.format(out=out), out=out))
            # the warm-up run writes the bytecode a 15a process reads
            contenders.append(Contender(name, lambda p=path: (lambda: _run(p, bytecode)),
                                        warmup=1))
        return {"model": "MLP 64-128-10 f32, batch 32", "bytecode": bytecode,
                "process_per_call": True}, contenders
    return build


CASES = [
    Case("15a_saved_model_fresh_process", "fresh process: import + load + first call of a saved "
         "MLP, bytecode present", _build(True), reference="numpy_hand", rtol=1e-5,
         goals=[Goal("[30.7] <= onnxruntime's fresh process", "autograph", "onnxruntime",
                     max_ratio=1.0)]),
    Case("15b_saved_model_fresh_process_nopyc", "fresh process: import + load + first call of "
         "a saved MLP, no bytecode", _build(False), reference="numpy_hand", rtol=1e-5),
]
