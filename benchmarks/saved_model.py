"""Saved-model speed and size: save and load of a 10,000-node graph with 100 MB of
Variables (goal: <= 1 s each plus disk time), and the JSON size against node count (it
should grow linearly).

    python -m benchmarks.saved_model            # full sizes
    python -m benchmarks.saved_model --quick    # small sizes (seconds)

"Disk time" is measured separately: writing and reading back the same bytes with plain
file I/O, so the figures say what the format itself costs.
"""

import argparse
import io
import os
import shutil
import tempfile
import time

import numpy as np

import autograph as ag
from autograph.saved_model.load import from_files
from autograph.saved_model.save import serialize


class Model:
    """`steps` unrolled steps, each reading one of `n_vars` Variables (4 nodes a step)."""

    def __init__(self, n_vars, elements, steps):
        rng = np.random.default_rng(0)
        self.vs = [ag.Variable(rng.random(elements), name=f"v{i}") for i in range(n_vars)]
        self.steps = steps
        vs = self.vs

        def f(x):
            y = x
            for i in range(steps):
                y = y * 0.999 + vs[i % len(vs)]
            return y
        self.f = ag.function(f, autograph=False)


def build(n_vars, elements, steps):
    m = Model(n_vars, elements, steps)
    m.f.get_concrete_function(ag.TensorSpec([elements], np.float64))
    return m


def nodes(obj):
    return sum(1 for c in obj.f._traces.values() for _ in c.graph.walk())


def best(fn, rounds):
    """(best wall time, best CPU time of this process, result): CPU time says what the
    work costs on a machine shared with other jobs, where wall time also counts waiting."""
    walls, cpus = [], []
    for _ in range(rounds):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    return _Time(min(walls), min(cpus)), out


class _Time:
    def __init__(self, wall, cpu):
        self.wall, self.cpu = wall, cpu

    def __format__(self, spec):
        return f"{format(self.wall, spec)} s wall, {format(self.cpu, spec)} s CPU"


def run(quick=False):
    rounds = 2 if quick else 3
    n_vars, elements = (10, 12_500) if quick else (100, 125_000)     # 1 MB / 100 MB
    steps = 250 if quick else 2_500
    m = build(n_vars, elements, steps)
    mb = sum(v.numpy().nbytes for v in m.vs) / 2**20
    n = nodes(m)
    d = tempfile.mkdtemp()
    try:
        t_ser, files = best(lambda: serialize(m), rounds)
        t_save, _ = best(lambda: ag.saved_model.save(m, d), rounds)
        t_disk_w, _ = best(lambda: _write(d + "_raw", files), rounds)
        t_load, lo = best(lambda: ag.saved_model.load(d), rounds)
        t_disk_r, _ = best(lambda: _read(d), rounds)
        t_parse, _ = best(lambda: from_files(files, d), rounds)
        x = np.ones(elements)
        same = np.array_equal(lo.f(x), m.f(x))
        print(f"graph: {n} nodes, {len(m.vs)} Variables, {mb:.1f} MiB of values")
        print(f"save (serialize + write):     {t_save:.3f}")
        print(f"  serialize alone:            {t_ser:.3f}")
        print(f"  plain write of the bytes:   {t_disk_w:.3f}")
        print(f"load (read + check + build):  {t_load:.3f}")
        print(f"  from bytes in memory:       {t_parse:.3f}")
        print(f"  plain read of the files:    {t_disk_r:.3f}")
        print(f"JSON {len(files['saved_model.json']) / 1024:.0f} KiB; outputs after load "
              f"bitwise equal: {same}")
        print("\nJSON size against node count (1 small Variable):")
        sizes = []
        for s in ([50, 100, 200, 400] if quick else [500, 1000, 2000, 4000]):
            mm = build(1, 4, s)
            j = len(serialize(mm)["saved_model.json"])
            sizes.append((nodes(mm), j))
            print(f"  {nodes(mm):6d} nodes: {j:9d} bytes ({j / nodes(mm):.1f} per node)")
        (n0, j0), (n1, j1) = sizes[0], sizes[-1]
        print(f"  growth exponent {np.log(j1 / j0) / np.log(n1 / n0):.3f} (1.0 = linear)")
    finally:
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(d + "_raw", ignore_errors=True)


def _write(d, files):
    os.makedirs(d, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def _read(d):
    out = {}
    for name in os.listdir(d):
        with open(os.path.join(d, name), "rb") as f:
            out[name] = f.read()
    return out


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    run(p.parse_args().quick)
