"""How first calls grow with the program: CPU time per statement of the first call (convert
+ trace + compile + run, a never-seen function each time) of straight-line functions
(case 13c's `y = y * 0.5 + x * c` lines) and of functions with a staged `if` and a loop
per block, at 100 to 3,000 statements, with the collector on as users have it.

Two variants, interleaved in one process (rotated each round): `shipped`, and `f_lineno`,
the same with the node origins' lines read from `frame.f_lineno` as before issue 30's
fix (autograph/frames.py: f_lineno scans the code's line table from its start, so reading
it for every node made tracing quadratic). The medians, microseconds per line and the
growth exponents (100 -> 1,000 and 1,000 -> 3,000 statements) go to stdout and, with
--json, to a file. Threads pinned to 1. Each sample starts after a full collection
(untimed): a trace leaves its graph and syntax tree as cyclic garbage when its function is
dropped, and autograph/gc_pause.py collects that with one full pass once a million objects
have piled up, which would land on whichever later sample crosses the budget (0.5 s on a
1,000-statement sample here), not on the one that made the garbage.

    python -m benchmarks.first_call_growth [--rounds 7] [--lines 100,300,1000,3000] [--json PATH]
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse   # noqa: E402
import gc         # noqa: E402
import json       # noqa: E402
import time       # noqa: E402

import numpy as np   # noqa: E402

from benchmarks import programs                       # noqa: E402
from benchmarks.cases.no_cliffs import straight_source   # noqa: E402
from benchmarks.cases.scaling import generated_source    # noqa: E402

VARIANTS = ("shipped", "f_lineno")


def _first_call(source, variant):
    import autograph as ag
    from autograph import frames
    fn = programs.fresh_function(source, "generated", {})
    real = frames.frame_line
    if variant == "f_lineno":
        frames.frame_line = lambda frame: frame.f_lineno
    gc.collect()   # (untimed) the earlier samples' garbage: see the module's docstring
    try:
        t = time.process_time()
        ag.function(fn)(np.float64(0.3))
        return time.process_time() - t
    finally:
        frames.frame_line = real


def _exponent(lines, times):
    return float(np.polyfit(np.log(lines), np.log(times), 1)[0])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--lines", default="100,300,1000,3000")
    p.add_argument("--kinds", default="straight,branches")
    p.add_argument("--json", default=None)
    args = p.parse_args()
    import autograph as ag
    ag.config.set_disk_cache(False)
    sizes = [int(n) for n in args.lines.split(",")]
    makers = {"straight": straight_source, "branches": generated_source}
    out = {"rounds": args.rounds, "load_before": os.getloadavg(), "results": {}}
    for kind in args.kinds.split(","):
        make = makers[kind]
        _first_call(make(50), "shipped")                   # warm-up: imports
        samples = {v: {n: [] for n in sizes} for v in VARIANTS}
        for r in range(args.rounds):                       # interleaved, rotated
            order = VARIANTS[r % 2:] + VARIANTS[:r % 2]
            for n in sizes:
                source = make(n)
                for variant in order:
                    samples[variant][n].append(_first_call(source, variant))
        res = out["results"][kind] = {}
        for variant in VARIANTS:
            med = {n: float(np.median(samples[variant][n])) for n in sizes}
            row = res[variant] = {"cpu_median_s": med, "samples": samples[variant]}
            small = [n for n in sizes if n <= 1000]
            row["exponent_100_1000"] = _exponent(small, [med[n] for n in small])
            if sizes[-1] > 1000:
                row["exponent_1000_up"] = _exponent([1000, sizes[-1]],
                                                    [med[1000], med[sizes[-1]]])
            print(f"{kind:9} {variant:9} " + "  ".join(
                f"{n}: {med[n] * 1e3:7.1f} ms ({med[n] / n * 1e6:4.0f} us/line)" for n in sizes)
                + f"  exponent 100-1000 {row['exponent_100_1000']:.3f}"
                + (f", 1000-{sizes[-1]} {row['exponent_1000_up']:.3f}"
                   if "exponent_1000_up" in row else ""), flush=True)
    out["load_after"] = os.getloadavg()
    print("load average before/after:", out["load_before"], out["load_after"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
