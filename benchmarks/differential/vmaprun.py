"""Differential run for ag.vmap: generated programs batched vs run one element at a time.

    python -m benchmarks.differential.vmaprun --count 1000 --seed 0 [--json out.json]
    python -m benchmarks.differential.vmaprun --seed 0 --show 17      # one program

Program i of seed s is the differential generator's (`generate(random.Random(f"{s}:{i}"))`:
nested if/elif/else, while and for loops, break/continue/return at any depth, helpers,
closures, state in attributes and dicts). Each is called on LANES input triples (x, n, xs)
(its own three and more drawn like them), as NumPy values, one at a time through
`ag.function` (the reference), and once through `ag.vmap` with in_axes drawn per program
(each of x, n, xs mapped or not; an unmapped one takes lane 0's value). Outcomes:

- pass: every output equals the stacked per-element outputs, value and dtype;
- both raise: some element raises and so does vmap (an element whose program fails makes
  the batch fail, as in JAX);
- refused: vmap raises BatchingError (a documented refusal: a ragged batch, say) where the
  elements run;
- wrong / error / timeout: a batched result differs, vmap raises something else, or hangs.
"""

import argparse
import collections
import json
import random
import sys
import time

import numpy as np

import autograph as ag
from autograph.batching.transform import BatchingError
from benchmarks.differential import check as checking
from benchmarks.differential.generator import generate

LANES = 6
AXES = [(0, None, None), (0, 0, None), (0, 0, 0), (None, 0, None), (None, None, 0),
        (0, None, 0), (None, 0, 0)]


def case(seed, index):
    """(program, inputs for every lane, in_axes) of program `index`."""
    p = generate(random.Random(f"{seed}:{index}"))
    rng = random.Random(f"{seed}:{index}:vmap")
    inputs = list(p.inputs)
    while len(inputs) < LANES:
        inputs.append((rng.randint(-6, 12), rng.randint(0, 4),
                       [rng.randint(-5, 9) for _ in range(3)]))
    return p, inputs, rng.choice(AXES)


def _arrays(inputs):
    return ([np.int64(x) for x, _, _ in inputs], [np.int64(n) for _, n, _ in inputs],
            [np.array(xs, dtype=np.int64) for _, _, xs in inputs])


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if got.dtype.kind == "f":
        return bool(np.allclose(got, want, rtol=1e-9, atol=1e-12, equal_nan=True))
    return bool(np.array_equal(got, want))


def lane_form(batched):
    """`batched` traced as `jit_compile=True` traces it (a loop or `if` whose condition
    differs from lane to lane becomes a loop over lanes: batching/lane_loops.py), but run
    by codegen: the native form's graph checked without a Numba compile per program."""
    from autograph.operators import jit_ranges
    traced = ag.function(batched, autograph=False)

    def call(*args):
        with jit_ranges.tracing_for_native():
            return traced(*args)
    return call


def run_one(seed, index, timeout=20.0, native_form=False):
    """(outcome, detail) of program `index` (`native_form`: vmap's `jit_compile=True`
    form of it, run by codegen: lane_form)."""
    p, inputs, axes = case(seed, index)
    fn, _ = checking.load(p.source)
    columns = _arrays(inputs)
    lanes = [[col[k] if ax == 0 else col[0] for col, ax in zip(columns, axes)]
             for k in range(LANES)]
    traced = ag.function(fn)
    outs, raised = [], None
    for args in lanes:
        kind, value = checking.guarded(timeout, traced, *args)
        if kind == "timeout":
            return "skipped", "an element does not finish"
        if kind == "raise":
            raised = value
            break
        outs.append(value)
    batch = [np.stack(col) if ax == 0 else col[0] for col, ax in zip(columns, axes)]
    batched = ag.vmap(fn, in_axes=axes)
    kind, got = checking.guarded(timeout * 3, lane_form(batched) if native_form else batched,
                                 *batch)
    if kind == "timeout":
        return "timeout", f"in_axes={axes}"
    if raised is not None:
        if kind == "raise":
            return "both raise", type(raised).__name__
        return "wrong", f"an element raises {type(raised).__name__}: {raised} but vmap returns"
    if kind == "raise":
        if isinstance(got, BatchingError):
            return "refused", str(got).split("\n")[0][:300]
        return "error", f"{type(got).__name__}: {str(got)[:400]}"
    want_leaves = [o if isinstance(o, tuple) else (o,) for o in outs]
    got_leaves = got if isinstance(got, tuple) else (got,)
    for j, g in enumerate(got_leaves):
        want = np.stack([np.asarray(w[j]) for w in want_leaves])
        if not _same(g, want):
            return "wrong", f"output {j}: vmap {np.asarray(g)!r} vs elements {want!r}"
    return "pass", ""


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", default="0")
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--show", type=int, default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--native-form", action="store_true",
                    help="check the jit_compile=True form (lane loops), run by codegen")
    args = ap.parse_args(argv)
    if args.show is not None:
        p, inputs, axes = case(args.seed, args.show)
        print(p.source, f"\ninputs {inputs}\nin_axes {axes}")
        print(run_one(args.seed, args.show, native_form=args.native_form))
        return 0
    start = time.time()
    tally, examples = collections.Counter(), {}
    for i in range(args.start, args.start + args.count):
        outcome, detail = run_one(args.seed, i, native_form=args.native_form)
        tally[outcome] += 1
        if outcome not in ("pass", "both raise"):
            examples.setdefault(outcome, []).append((i, detail))
    elapsed = time.time() - start
    print(f"{args.count} programs (seed {args.seed}) in {elapsed:.0f} s: " +
          ", ".join(f"{k} {v}" for k, v in sorted(tally.items())))
    for outcome, items in sorted(examples.items()):
        print(f"  {outcome}: {len(items)}, e.g.")
        for i, detail in items[:5]:
            print(f"    program {i}: {detail}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"counts": tally, "examples": examples}, fh, indent=1)
    return 1 if tally["wrong"] or tally["error"] or tally["timeout"] else 0


if __name__ == "__main__":
    sys.exit(main())
