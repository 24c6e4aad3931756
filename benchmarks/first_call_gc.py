"""First calls with the cyclic garbage collector as users have it (on), with and without
autograph's pause (autograph/gc_pause.py), interleaved in one process.

The harness (benchmarks/harness.py) times every sample with the collector off, which
hides what it costs a first call: each of its older-generation passes walks the whole
heap of AST and graph objects a trace builds. Here each sample is one first call (convert
+ trace + compile + run) of a never-seen function of 100, 300 or 1,000 statements,
straight-line or with a staged `if` per block, timed in CPU time with the collector on;
`paused` is autograph as shipped, `unpaused` the same with gc_pause made a no-op, and with
--walked, `walked` paused but without moving what the pause leaves to the oldest generation
(the pass after the pause walks it all, as before that move). The
medians, the collector's passes and its time per call, and the growth exponents go to
stdout and, with --json, to a file.

    python -m benchmarks.first_call_gc [--rounds 5] [--json PATH]
"""

import argparse
import contextlib
import gc
import json
import time

import numpy as np

from benchmarks import programs
from benchmarks.cases.no_cliffs import straight_source
from benchmarks.cases.scaling import generated_source

LINES = [100, 300, 1000]


def _first_call(source, pause, promote=True):
    import autograph as ag
    from autograph import gc_pause
    fn = programs.fresh_function(source, "generated", {})
    threshold = gc_pause.PROMOTE_ABOVE
    if not promote:
        gc_pause.PROMOTE_ABOVE = float("inf")
    passes, spent, start = [0], [0.0], [0.0]

    def callback(phase, info):
        if phase == "start":
            start[0] = time.perf_counter()
        else:
            passes[0] += 1
            spent[0] += time.perf_counter() - start[0]
    real = gc_pause.paused
    if not pause:
        gc_pause.paused = contextlib.nullcontext
    gc.callbacks.append(callback)
    try:
        t = time.process_time()
        ag.function(fn)(np.float64(0.3))
        return time.process_time() - t, passes[0], spent[0]
    finally:
        gc.callbacks.remove(callback)
        gc_pause.paused = real
        gc_pause.PROMOTE_ABOVE = threshold


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--json", default=None)
    p.add_argument("--walked", action="store_true",
                   help="also paused without moving a large young generation to the oldest "
                        "(gc_pause.PROMOTE_ABOVE off): the walk after the pause, as before")
    args = p.parse_args()
    import autograph as ag
    ag.config.set_disk_cache(False)
    assert gc.isenabled()
    out = {}
    for kind, make in (("straight", straight_source), ("branches", generated_source)):
        for lines in LINES:
            source = make(lines)
            _first_call(source, True)                      # warm-up: imports
            names = ["paused", "unpaused"] + (["walked"] if args.walked else [])
            samples = {name: [] for name in names}
            for r in range(args.rounds):                   # interleaved, rotated
                order = names[r % len(names):] + names[:r % len(names)]
                for name in order:
                    samples[name].append(_first_call(source, name != "unpaused",
                                                     promote=name != "walked"))
            for name, rows in samples.items():
                cpu = float(np.median([row[0] for row in rows]))
                out.setdefault(kind, {}).setdefault(name, {})[lines] = {
                    "cpu_median_s": cpu, "gc_passes": int(np.median([r[1] for r in rows])),
                    "gc_s": float(np.median([r[2] for r in rows]))}
    print("| program | lines | paused (CPU) | gc passes | unpaused (CPU) | gc passes | gc time |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind, by_name in out.items():
        for lines in LINES:
            a, b = by_name["paused"][lines], by_name["unpaused"][lines]
            print(f"| {kind} | {lines} | {a['cpu_median_s'] * 1e3:.0f} ms | {a['gc_passes']} | "
                  f"{b['cpu_median_s'] * 1e3:.0f} ms | {b['gc_passes']} | "
                  f"{b['gc_s'] * 1e3:.0f} ms |")
        for name in by_name:
            ys = [by_name[name][n]["cpu_median_s"] for n in LINES]
            slope = float(np.polyfit(np.log(LINES), np.log(ys), 1)[0])
            by_name[name]["exponent"] = slope
            print(f"{kind} {name}: growth exponent {slope:.2f} (100 -> 1,000 lines, CPU)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "results": out}, f, indent=1)


if __name__ == "__main__":
    main()
