"""ag.vmap through control flow: work counted, time measured, side by side with jax.vmap.

    python -m benchmarks.vmap_bench [--n 100000] [--jax-python /path/to/python-with-jax]

Threads pinned to 1 (OMP/MKL/OpenBLAS and XLA). What it shows (issue 32):
1. collatz over N starting values: equal to the per-element loop; the body's executions
   COUNTED (the `remainder` kernel, once per step, wrapped to count the lanes it sees while
   the interpreter runs the batched graph) against the sum of trip counts; time of the
   compiled batched call; jax.vmap(lax.while_loop) on the CPU when a Python with JAX is
   given (run in a subprocess: JAX stays out of this process) and the masked work it does
   (max(trips) * N, by JAX's batching rule).
2. the jax#2947 pattern (a lane's inner loop ends only under its own predicate) ends.
3. per-example gradients of a small MLP with a data-dependent loop: vmap(grad) equal to a
   Python loop of ag.grad calls, and the time of each.
4. jit_compile=True of a vmapped loop with an unbatched predicate (native code).
5. collatz under jit_compile=True (a loop over lanes, each running its own loop:
   batching/lane_loops.py) against jax.jit(jax.vmap(lax.while_loop)), the two timed in
   turn (--rounds calls each, interleaved: one call of ours, one of JAX's in its own
   process, ...), medians and their ratio; the lane loop's body executions counted by
   running the same graph in the interpreter (the count is exact; the interpreter is slow,
   so on --count-n values).
6. collatz in codegen (n / 5 values) with and without the select and amortised
   compaction rules, timed in turn, body executions counted.

Run it pinned to one core as well: `taskset -c 0 python -m benchmarks.vmap_bench ...`.
"""

import argparse
import json
import os
import subprocess
import sys
import time

for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402

import autograph as ag  # noqa: E402
from autograph.runtime.exec import interpreter  # noqa: E402
from benchmarks.kernel_counts import collatz, counting  # noqa: E402




def best(fn, *args, rounds=3):
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return min(times)


JAX_COLLATZ = r"""
import json, os, sys, time
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
import numpy as np, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
def collatz(n):
    def cond(s): return s[0] != 1
    def body(s):
        n, k = s
        return jnp.where(n % 2 == 0, n // 2, 3 * n + 1), k + 1
    return jax.lax.while_loop(cond, body, (n, jnp.int64(0)))[1]
f = jax.jit(jax.vmap(collatz))
starts = jnp.arange(1, int(sys.argv[1]) + 1, dtype=jnp.int64)
out = np.asarray(f(starts))
times = []
for _ in range(3):
    t = time.perf_counter(); f(starts).block_until_ready(); times.append(time.perf_counter() - t)
print(json.dumps({"time": min(times), "version": jax.__version__, "sum": int(out.sum()),
                  "masked_work": int(out.max()) * len(out)}))
"""


def part_collatz(n, jax_python, report):
    starts = np.arange(1, n + 1, dtype=np.int64)
    t = time.perf_counter()
    trips = np.array([collatz(int(s)) for s in starts])
    report["python_loop_s"] = time.perf_counter() - t
    vm = ag.function(ag.vmap(collatz))
    got = vm(starts)
    assert np.array_equal(got, trips), "vmap(collatz) differs from the per-element loop"
    report["vmap_s"] = best(vm, starts)
    graph = vm.get_concrete_function(starts).graph
    with counting("remainder") as seen:
        (out,) = interpreter.run(graph, [starts])
    assert np.array_equal(out, trips)
    report.update(n=n, sum_trips=int(trips.sum()), max_trips=int(trips.max()),
                  body_executions=int(sum(seen)),
                  ratio=float(sum(seen) / trips.sum()),
                  masked_work=int(trips.max()) * n)
    assert report["ratio"] <= 1.2
    if jax_python:
        res = subprocess.run([jax_python, "-c", JAX_COLLATZ, str(n)], capture_output=True,
                             text=True, env=dict(os.environ, JAX_PLATFORMS="cpu"))
        if res.returncode == 0:
            jx = json.loads(res.stdout.strip().splitlines()[-1])
            assert jx["sum"] == int(trips.sum()), "jax.vmap collatz disagrees"
            report["jax"] = jx
            report["jax_over_vmap"] = jx["time"] / report["vmap_s"]
        else:
            report["jax_error"] = res.stderr[-500:]


JAX_SERVER = r"""
import json, os, sys, time
os.environ["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
import numpy as np, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
def collatz(n):
    def cond(s): return s[0] != 1
    def body(s):
        n, k = s
        return jnp.where(n % 2 == 0, n // 2, 3 * n + 1), k + 1
    return jax.lax.while_loop(cond, body, (n, jnp.int64(0)))[1]
f = jax.jit(jax.vmap(collatz))
starts = jnp.arange(1, int(sys.argv[1]) + 1, dtype=jnp.int64)
out = np.asarray(f(starts))
print(json.dumps({"version": jax.__version__, "sum": int(out.sum())}), flush=True)
for line in sys.stdin:          # one timed call per line: the caller interleaves
    t = time.perf_counter(); f(starts).block_until_ready()
    print(time.perf_counter() - t, flush=True)
"""


def part_native(n, count_n, rounds, jax_python, report):
    """collatz under jit_compile=True vs jax.jit(jax.vmap(while_loop)), interleaved."""
    try:
        import numba  # noqa: F401
    except ImportError:
        report["native"] = "numba not installed"
        return
    from autograph.operators import jit_ranges
    starts = np.arange(1, n + 1, dtype=np.int64)
    trips = np.array([collatz(int(s)) for s in starts])
    native = ag.function(ag.vmap(collatz), jit_compile=True)
    t = time.perf_counter()
    got = native(starts)
    first = time.perf_counter() - t
    assert np.array_equal(got, trips), "jit_compile vmap(collatz) differs from the elements"
    # the body executions of the same form, counted in the interpreter
    small = starts[:count_n]
    traced = ag.function(ag.vmap(collatz))
    with jit_ranges.tracing_for_native():
        graph = traced.get_concrete_function(small).graph
    assert not any(node.op == "nonzero" for node in graph.walk())
    with counting("remainder") as seen:
        (out,) = interpreter.run(graph, [small])
    assert np.array_equal(out, trips[:count_n])
    res = {"n": n, "first_call_s": first, "counted_n": count_n,
           "counted_body_executions": int(sum(seen)),
           "counted_sum_trips": int(trips[:count_n].sum()),
           "ratio": float(sum(seen) / trips[:count_n].sum())}
    assert res["ratio"] == 1.0
    proc = None
    if jax_python:
        proc = subprocess.Popen([jax_python, "-c", JAX_SERVER, str(n)], text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                env=dict(os.environ, JAX_PLATFORMS="cpu"))
        hello = json.loads(proc.stdout.readline())
        assert hello["sum"] == int(trips.sum()), "jax.vmap collatz disagrees"
        res["jax_version"] = hello["version"]
    ours, theirs = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        native(starts)
        ours.append(time.perf_counter() - t)
        if proc is not None:
            proc.stdin.write("go\n")
            proc.stdin.flush()
            theirs.append(float(proc.stdout.readline()))
    if proc is not None:
        proc.stdin.close()
        proc.wait()
    res["ag_native_s"] = {"median": float(np.median(ours)), "min": min(ours),
                          "max": max(ours)}
    if theirs:
        res["jax_s"] = {"median": float(np.median(theirs)), "min": min(theirs),
                        "max": max(theirs)}
        res["jax_over_ag_median"] = res["jax_s"]["median"] / res["ag_native_s"]["median"]
    res["pinned_cpus"] = sorted(os.sched_getaffinity(0))
    res["load_average"] = os.getloadavg()
    report["native"] = res


def part_codegen_rules(n, rounds, report):
    """collatz in codegen, with the select and amortised-compaction rules (selects.py,
    amortised.py) and without them (every `if` partitioned, every iteration compacted),
    timed in turn; the body's executions of each counted."""
    from autograph.batching import selects
    starts = np.arange(1, n + 1, dtype=np.int64)
    trips = np.array([collatz(int(s)) for s in starts])
    real = selects.can_select
    forms = {}
    for name, rule in (("rules", real), ("partition_and_compact_always", lambda *g: False)):
        selects.can_select = rule
        try:
            fn = ag.function(ag.vmap(collatz))
            assert np.array_equal(fn(starts), trips)
            with counting("remainder") as seen:
                (out,) = interpreter.run(fn.get_concrete_function(starts).graph, [starts])
            assert np.array_equal(out, trips)
        finally:
            selects.can_select = real
        forms[name] = (fn, int(sum(seen)))
    times = {name: [] for name in forms}
    for _ in range(rounds):
        for name, (fn, _) in forms.items():
            t = time.perf_counter()
            fn(starts)
            times[name].append(time.perf_counter() - t)
    report["codegen_rules"] = {
        "n": n, "sum_trips": int(trips.sum()),
        **{name: {"median_s": float(np.median(times[name])),
                  "body_executions": forms[name][1],
                  "ratio": forms[name][1] / float(trips.sum())} for name in forms}}


def part_2947(report):
    def f(x):
        total = 0
        while x > 0:
            k = x
            while k != 0:
                k = k - 2
                total += 1
            x = x - 2
        return total
    xs = np.arange(0, 40, 2, dtype=np.int64)
    t = time.perf_counter()
    got = ag.vmap(f)(xs)
    report["jax2947_s"] = time.perf_counter() - t
    assert np.array_equal(got, [f(int(x)) for x in xs])
    report["jax2947"] = "terminates, per-element answers"


def mlp_loss(params, x, y):
    w1, w2 = params
    h = np.tanh(x @ w1)
    i = 0
    while np.sum(h * h) > 0.5 and i < 6:
        h = np.tanh(h @ w2) * 0.9
        i += 1
    return np.sum((h - y) ** 2)


def part_per_example(report, batch=256):
    rng = np.random.default_rng(0)
    params = [rng.standard_normal((8, 16)) * 0.5, rng.standard_normal((16, 16)) * 0.5]
    xs, ys = rng.standard_normal((batch, 8)), rng.standard_normal((batch, 16))
    per_example = ag.vmap(ag.grad(mlp_loss), in_axes=(None, 0, 0))
    g = ag.grad(mlp_loss)

    def loop():
        return [g(params, xs[k], ys[k]) for k in range(batch)]
    got, want = per_example(params, xs, ys), loop()
    for k in range(batch):
        for a, b in zip(got, want[k]):
            np.testing.assert_allclose(a[k], b, rtol=1e-9, atol=1e-12)
    report["per_example"] = {"batch": batch, "vmap_grad_s": best(per_example, params, xs, ys),
                             "loop_of_grad_s": best(loop)}


def part_jit(report):
    try:
        import numba  # noqa: F401
    except ImportError:
        report["jit"] = "numba not installed"
        return

    def f(x, n):
        i = 0
        while i < n:
            x = np.sin(x) * 0.9 + 0.1
            i += 1
        return x
    xs = np.linspace(0, 1, 1000)
    g = ag.function(ag.vmap(f, in_axes=(0, None)), jit_compile=True)
    want = ag.vmap(f, in_axes=(0, None))(xs, np.int64(20))
    np.testing.assert_allclose(g(xs, np.int64(20)), want, rtol=1e-12)
    report["jit"] = "jit_compile of a vmapped loop (unbatched predicate) equals codegen"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--jax-python", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--count-n", type=int, default=2000)
    ap.add_argument("--only-native", action="store_true")
    args = ap.parse_args(argv)
    report = {}
    part_native(args.n, args.count_n, args.rounds, args.jax_python, report)
    if not args.only_native:
        part_codegen_rules(args.n // 5, 5, report)
        part_collatz(args.n, args.jax_python, report)
        part_2947(report)
        part_per_example(report)
        part_jit(report)
    print(json.dumps(report, indent=1))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)


if __name__ == "__main__":
    main()
