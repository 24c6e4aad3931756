"""Case 2c/2d: the first call of collatz(27) in a fresh Python process, as a user meets it.

Each timed call starts a new interpreter that imports NumPy and the contender's framework,
defines collatz (from a file, as a user's module would) and calls it once; the whole
process is timed. `numpy_hand` is the floor: the same process computing collatz in plain
Python after `import numpy`, so a contender's cost "above import numpy" is its median minus
the floor's. 2c runs with bytecode present (the second run of a program); 2d with no
bytecode at all (each process gets an empty bytecode directory and writes none), as in a
container or a read-only install. Contenders whose framework is not importable here
(numba, jax, tensorflow) are marked so.
"""

import importlib.util
import os
import subprocess
import sys
import tempfile

from benchmarks import programs
from benchmarks.harness import Case, Contender, Goal, Unavailable

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPTS = {
    "numpy_hand": ("numpy", "import numpy as np\n" + programs.COLLATZ + "print(collatz(27))\n"),
    "numpy_eager": ("numpy", "import numpy as np\n" + programs.COLLATZ
                    + "print(collatz(np.int64(27)))\n"),
    "autograph": ("autograph", "import numpy as np\nimport autograph as ag\n" + programs.COLLATZ
                  + "print(ag.function(collatz)(np.int64(27)))\n"),
    "jax": ("jax", "import numpy as np\nimport jax\njax.config.update('jax_enable_x64', True)\n"
            "import jax.numpy as jnp\nfrom jax import lax\n" + programs.COLLATZ_JAX
            + "print(jax.jit(collatz)(jnp.int64(27)).block_until_ready())\n"),
    "numba": ("numba", "import numpy as np\nimport numba\n" + programs.COLLATZ
              + "print(numba.njit(collatz)(np.int64(27)))\n"),
    "tensorflow": ("tensorflow", "import numpy as np\nimport tensorflow as tf\n" + programs.COLLATZ
                   + "print(int(tf.function(collatz)(tf.constant(27, tf.int64))))\n"),
}


def _importable(module):
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _run(path, bytecode, cache_dir):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env["AUTOGRAPH_CACHE_DIR"] = cache_dir   # the case's own: warm after the first run
    args = [sys.executable]
    if bytecode:   # the first (warm-up) run writes what later runs read
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        empty = tempfile.mkdtemp(prefix="ag_nopyc_")
        args += ["-X", f"pycache_prefix={empty}"]
    out = subprocess.run(args + [path], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True).stdout
    return int(out.split()[-1])


def _build(bytecode):
    def build(quick):
        folder = tempfile.mkdtemp(prefix="ag_fresh_")
        cache_dir = os.path.join(folder, "autograph-cache")
        contenders = []
        for name, (module, script) in SCRIPTS.items():
            if not _importable(module):
                contenders.append(Unavailable(name, f"{module} is not importable"))
                continue
            if quick and name in ("jax", "numba", "tensorflow"):
                # seconds per process: the smoke run keeps to the cheap contenders
                contenders.append(Unavailable(name, "left out in --quick"))
                continue
            path = os.path.join(folder, f"fresh_{name}.py")
            with open(path, "w") as f:
                f.write(script)
            # one warm-up process: it writes the bytecode and the trace a 2c process reads
            # (a 2d process compiles everything anyway: a second warm-up buys nothing)
            contenders.append(Contender(name, lambda p=path: (lambda: _run(p, bytecode, cache_dir)),
                                        warmup=1))
        return {"n": 27, "bytecode": bytecode, "process_per_call": True}, contenders
    return build


CASES = [
    Case("2c_fresh_process_collatz", "fresh process: import + first call of collatz(27), bytecode present",
         _build(True),
         goals=[Goal("<= 1.3x the floor (import numpy + plain Python)", "autograph", "numpy_hand",
                     max_ratio=1.3)]),
    Case("2d_fresh_process_collatz_nopyc", "fresh process: import + first call of collatz(27), no bytecode",
         _build(False)),
]
