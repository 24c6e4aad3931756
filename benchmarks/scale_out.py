"""python -m benchmarks.scale_out [--quick]: autograph.dask against Dask's own map_blocks.

1. Per-chunk overhead: `autograph.dask.map_blocks(tanh_fn, x)` against
   `x.map_blocks(np.tanh)` on the same 50 MB chunks, on a LocalCluster of worker processes
   (median of rounds; the ratio is the goal: <= 1.1x).
2. Speed-up from 1 to 2 worker processes on a CPU-bound traced loop (a per-element
   iteration over many chunks): goal >= 1.7x on a 2-core machine.

Each configuration runs in one process, side by side, and prints a Markdown table.
"""

import argparse
import json
import statistics
import time

import numpy as np


def _median_time(fn, rounds):
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def tanh_fn():
    import autograph as ag

    @ag.function
    def tanh_block(x):
        return np.tanh(x)
    return tanh_block


def busy_fn():
    import autograph as ag

    @ag.function
    def busy(x):
        for _ in ag.range(400):
            x = np.sin(x) * 1.0001 + 0.001
        return x
    return busy


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    import dask.array as da
    from dask.distributed import Client, LocalCluster
    import autograph.dask as agdask

    rounds = 3 if args.quick else 7
    chunk = (1 if args.quick else 50) * 2**20 // 8          # elements in a 50 MB chunk
    n_chunks = 4 if args.quick else 8
    rows = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=40) as cluster, Client(cluster):
        x = da.random.random(chunk * n_chunks, chunks=chunk).persist()
        ours = agdask.map_blocks(tanh_fn(), x)
        theirs = x.map_blocks(np.tanh)
        ours.sum().compute(), theirs.sum().compute()          # warm: load once per worker
        t_ours = _median_time(lambda: ours.sum().compute(), rounds)
        t_theirs = _median_time(lambda: theirs.sum().compute(), rounds)
        rows.append(("tanh, %d chunks of %d MB" % (n_chunks, chunk * 8 // 2**20),
                     "dask map_blocks(np.tanh)", t_theirs, "autograph.dask.map_blocks",
                     t_ours, t_ours / t_theirs, "<= 1.1x"))
    busy = busy_fn()
    times = {}
    y_len, y_chunks = (20_000, 16) if args.quick else (800_000, 32)
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None, silence_logs=40) as cluster, Client(cluster):
            # the data is made by the tasks themselves, so the scheduler places each chain
            # where a worker is free (persisted chunks would pin the work to their holders)
            y = da.random.random(y_len, chunks=y_len // y_chunks)
            job = agdask.map_blocks(busy, y)
            job.sum().compute()
            times[workers] = _median_time(lambda: job.sum().compute(), rounds)
    rows.append((f"CPU-bound loop, {y_chunks} chunks", "1 worker process", times[1],
                 "2 worker processes", times[2], times[1] / times[2], ">= 1.7x speed-up"))
    print("| workload | baseline | time | contender | time | ratio | goal |")
    print("|---|---|---:|---|---:|---:|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[2]*1e3:.1f} ms | {r[3]} | {r[4]*1e3:.1f} ms | "
              f"{r[5]:.2f}x | {r[6]} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([dict(zip(("workload", "baseline", "baseline_s", "contender",
                                 "contender_s", "ratio", "goal"), r)) for r in rows], f,
                      indent=1)


if __name__ == "__main__":
    main()
