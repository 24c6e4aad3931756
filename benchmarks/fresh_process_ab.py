"""A/B of a fresh process's first call between two autograph trees (issue 29: signing the
disk caches must not cost a fresh process more than 0.3 ms).

Each tree gets its own warm cache directory (and key); `farm-bench` then starts the two
processes in turn (A B A B ...) and reports each one's median and the paired ratio:
import numpy + autograph, define collatz in a file, call it once (the trace loaded from
the disk cache). Also a no-op floor (import numpy) to read the figures "above numpy".

    python -m benchmarks.fresh_process_ab /path/to/tree_a /path/to/tree_b [-n 40]

(`farm-bench` is the process timer on this project's machines; without it the script
prints the commands.) Results of issue 29 are in docs/caches.md.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from benchmarks import programs

SCRIPT = ("import time\nimport numpy as np\nt0 = time.perf_counter()\nimport autograph as ag\n"
          + programs.COLLATZ + "t1 = time.perf_counter()\nr = ag.function(collatz)(np.int64(27))\n"
          "t2 = time.perf_counter()\nprint(r, (t2 - t0) * 1e3, (t2 - t1) * 1e3)\n")


def _command(tree, folder, label):
    cache = os.path.join(folder, f"cache_{label}")
    os.makedirs(cache, mode=0o700, exist_ok=True)
    script = os.path.join(folder, f"fresh_{label}.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    env = {"PYTHONPATH": tree, "AUTOGRAPH_CACHE_DIR": cache,
           "AUTOGRAPH_CACHE_KEY": os.path.join(folder, f"key_{label}", "cache-key")}
    command = ["env", "-u", "PYTHONDONTWRITEBYTECODE"] + [f"{k}={v}" for k, v in env.items()] \
        + [sys.executable, script]
    for _ in range(2):      # warm: bytecode written, the cache holds the trace
        subprocess.run(command, check=True, capture_output=True)
    return command


def _inside(a, b, n):
    """Median of what each process measures itself: `import autograph` + the first call
    (import numpy and interpreter start left out: on a busy machine their noise is larger
    than the difference sought). A and B alternate."""
    import statistics
    times = {"A": ([], []), "B": ([], [])}
    for _ in range(n):
        for label, cmd in (("A", a), ("B", b)):
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            times[label][0].append(float(out.split()[1]))
            times[label][1].append(float(out.split()[2]))
    for label, (both, first) in times.items():
        for what, ts in (("import autograph + first call", both), ("first call alone", first)):
            ts.sort()
            print(f"{label}: {what}, ms: min {ts[0]:.2f}  median "
                  f"{statistics.median(ts):.2f}  (n={n})")


AUTH = """import time, os, sys
t0 = time.perf_counter()
from autograph.source import cache_auth
t1 = time.perf_counter()
name, data = b"0" * 64 + b".agt", os.urandom(3000)
blob = cache_auth.sign(name, data)
t2 = time.perf_counter()
assert cache_auth.verify(name, blob) == data
t3 = time.perf_counter()
print((t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3)
"""


def _auth_cost(tree, folder, n):
    """In a fresh process (autograph imported): importing cache_auth, the first signature
    (the SHA-256 module loaded, the key read) and one verification of a 3 KB entry."""
    import statistics
    env = {**os.environ, "PYTHONPATH": tree,
           "AUTOGRAPH_CACHE_KEY": os.path.join(folder, "key_a", "cache-key")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    rows = []
    for _ in range(n):
        out = subprocess.run([sys.executable, "-c", "import autograph\n" + AUTH], env=env,
                             check=True, capture_output=True, text=True).stdout
        rows.append([float(x) for x in out.split()])
    for i, what in enumerate(("import cache_auth", "key read + _sha256 loaded + first tag",
                              "verify a 3 KB entry")):
        col = sorted(r[i] for r in rows)
        print(f"auth cost, {what}: min {col[0]:.3f} ms  median {statistics.median(col):.3f} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tree_a")
    parser.add_argument("tree_b")
    parser.add_argument("-n", type=int, default=40)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="ag_ab_")
    a = _command(os.path.abspath(args.tree_a), folder, "a")
    b = _command(os.path.abspath(args.tree_b), folder, "b")
    _inside(a, b, args.n)
    _auth_cost(os.path.abspath(args.tree_a), folder, args.n)
    bench = shutil.which("farm-bench")
    if bench is None:
        print("farm-bench is not on PATH; time these two commands:\n", " ".join(a), "\n",
              " ".join(b))
        return
    subprocess.run([bench, "-n", str(args.n), "--warmup", "3", "--timeout", "600",
                    "--vs", " ".join(b), "--"] + a, check=False)


if __name__ == "__main__":
    main()
