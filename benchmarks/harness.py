"""The timing harness: contenders, cases, and how one case is measured.

A *case* is one workload (collatz(27), a 100,000-step loop, ...). Its *contenders* are the
same workload written for each system: the user's function run eagerly on NumPy, a
hand-written NumPy floor, autograph, and (when importable) TensorFlow and JAX.

Measuring rules, the same for every case, because ratios are only fair if every contender
is timed the same way in the same process:
- every contender's result is checked against the case's reference before any timing;
- warm-up calls first (imports, traces, caches), then `repeats` rounds;
- rounds are interleaved: each round times every contender once, in a rotated order, so
  drift of the machine (frequency, other processes) hits all contenders alike;
- one timed sample is `number` back-to-back calls with the garbage collector off, timed
  with `time.perf_counter_ns`; `number` is calibrated so a sample lasts about `target_ns`;
- a *fresh* contender (first-call latency) gets a new, never-seen function from `make()`
  before every sample and times exactly one call of it;
- the result is the median per call and the interquartile range over the rounds;
- a contender whose samples have used up `budget_ns` stops after at least 3 rounds (a
  1000-line conversion takes seconds; the others keep their full count of rounds).
"""

import gc
import os
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional

import numpy as np

# status of a contender after a case ran
OK, SKIPPED, ERROR, WRONG = "ok", "skipped", "error", "wrong result"


@dataclass
class Contender:
    """One system's version of a case's workload.

    `make()` returns the zero-argument callable to time (building it may trace/compile).
    `fresh=True`: `make()` is called before every timed call, which then measures a first
    call. `result(value)` turns what the callable returned into NumPy for the check."""
    name: str
    make: Callable[[], Callable[[], Any]]
    fresh: bool = False
    result: Callable[[Any], Any] = np.asarray
    check: bool = True             # False: its result is not comparable (a graph, a count)
    warmup: Optional[int] = None   # calls before timing (None: the run's; a first call that
                                   # compiles for seconds needs only the one that checks it)


@dataclass
class Unavailable:
    """A contender that cannot run here (framework not installed); `note` says why."""
    name: str
    note: str


@dataclass
class Goal:
    """A target from issue 6: `subject`'s median per call divided by `versus`'s must be at
    most `max_ratio`, or (with `versus=None`) the median itself at most `max_ns`."""
    text: str
    subject: str
    versus: Optional[str] = None
    max_ratio: Optional[float] = None
    max_ns: Optional[float] = None
    judged_on: str = "cpu"     # "wall" where the goal is about waiting (prefetch overlaps sleeps)

    def evaluate(self, results, key="median_ns"):
        """(value, met) where value is the ratio or the absolute time of the medians under
        `key` (wall by default, "cpu_median_ns" for CPU time); met is None when a contender
        the goal needs did not run."""
        sub = results.get(self.subject)
        if sub is None or sub["status"] != OK:
            return None, None
        if self.versus is None:
            return sub[key], sub[key] <= self.max_ns
        other = results.get(self.versus)
        if other is None or other["status"] != OK or other[key] <= 0:
            return None, None
        ratio = sub[key] / other[key]
        return ratio, ratio <= self.max_ratio


@dataclass
class Case:
    """A workload and its contenders. `build(quick)` returns (params, contenders) where
    contenders are `Contender`s or `Unavailable`s; it runs only when the case is measured,
    so heavy imports happen per case. `reference` names the contender whose result the
    others must reproduce. `series`/`x` group cases whose growth is fitted (scaling)."""
    id: str
    title: str
    build: Callable[[bool], Any]
    reference: str = "numpy_eager"
    goals: List[Goal] = field(default_factory=list)
    silence: bool = False          # the workload prints (fizzbuzz): send fd 1 to /dev/null
    rtol: float = 1e-6
    series: Optional[str] = None
    x: Optional[float] = None
    floor: str = "numpy_hand"      # the "vs floor" column divides by this contender's median
    gc_enabled: bool = False       # True: samples run with the cyclic collector on, as a user's
                                   # program does (first calls, where the collector is the cost)
    max_exponent: Optional[float] = None   # the growth goal of this case's series (None: 1.15)


@contextmanager
def silenced():
    """Send stdout (Python's and file descriptor 1) to /dev/null: ag.print / tf.print /
    jax.debug.print output must not flood the table, and every contender pays the same."""
    sys.stdout.flush()
    saved_fd = os.dup(1)
    saved_stdout = sys.stdout
    devnull = open(os.devnull, "w")
    try:
        os.dup2(devnull.fileno(), 1)
        sys.stdout = devnull
        yield
    finally:
        sys.stdout.flush()
        sys.stdout = saved_stdout
        os.dup2(saved_fd, 1)
        os.close(saved_fd)
        devnull.close()


def _cpu_ns():
    """This process's CPU time plus that of its finished children, in nanoseconds."""
    t = os.times()
    return time.process_time_ns() + round((t.children_user + t.children_system) * 1e9)


def _sample(fn, number, keep_gc=False):
    """(wall, cpu) nanoseconds for `number` calls of `fn`, garbage collector off.

    Wall time (perf_counter) is the measure. Process CPU time is kept beside it: on a shared
    machine a long sample waits for the CPU more often than a short one, which inflates wall
    times and growth exponents; CPU time does not wait (but counts every thread, so a
    multi-threaded framework can show more CPU than wall time). The CPU time of child
    processes the calls ran and waited for (a fresh-process case) counts too."""
    enabled = gc.isenabled()
    if not keep_gc:
        gc.disable()
    try:
        c0 = _cpu_ns()
        t0 = time.perf_counter_ns()
        for _ in range(number):
            fn()
        t1 = time.perf_counter_ns()
        return t1 - t0, _cpu_ns() - c0
    finally:
        if enabled:
            gc.enable()


def _fresh_sample(make, keep_gc=False):
    fn = make()               # building the fresh function is not part of the first call
    return _sample(fn, 1, keep_gc)


def _check(value, reference, rtol):
    """None when `value` matches `reference`, else a short description of the mismatch."""
    try:
        a, b = np.asarray(value), np.asarray(reference)
        if a.shape != b.shape:
            return f"shape {a.shape} != reference {b.shape}"
        if np.issubdtype(a.dtype, np.inexact) or np.issubdtype(b.dtype, np.inexact):
            ok = np.allclose(a, b, rtol=rtol, atol=rtol)
        else:
            ok = np.array_equal(a, b)
        return None if ok else f"value {a.ravel()[:4]} != reference {b.ravel()[:4]}"
    except Exception as e:  # noqa: BLE001 - report, never crash the suite
        return f"cannot compare: {e}"


def _error_note(e):
    text = f"{type(e).__name__}: {e}".replace("\n", " ")
    return text if len(text) <= 300 else text[:297] + "..."


MIN_ROUNDS = 3


def run_case(case, quick, repeats, target_ns, warmup=2, budget_ns=None):
    """Measure one case. Returns a JSON-ready dict with params and one entry per contender:
    status, note, median_ns, iqr_ns (per call), number, samples_ns (per call, per round)."""
    try:
        params, contenders = case.build(quick)
    except Exception as e:  # noqa: BLE001
        return {"id": case.id, "title": case.title, "params": {}, "build_error": _error_note(e),
                "contenders": {}, "goals": []}
    results = {}
    live = []   # (contender, callable or None, number)

    ctx = silenced() if case.silence else _nullcontext()
    with ctx:
        # 1. set up, warm up and check every contender against the reference
        outputs = {}
        for c in contenders:
            if isinstance(c, Unavailable):
                results[c.name] = {"status": SKIPPED, "note": c.note}
                continue
            try:
                fn = None if c.fresh else c.make()
                for _ in range(max(1, warmup if c.warmup is None else c.warmup)):
                    value = (c.make() if c.fresh else fn)()
                outputs[c.name] = c.result(value)
                live.append([c, fn, 1])
                results[c.name] = {"status": OK, "note": ""}
            except Exception as e:  # noqa: BLE001 - one contender failing must not stop the rest
                results[c.name] = {"status": ERROR, "note": _error_note(e)}
        ref = outputs.get(case.reference)
        for entry in list(live):
            name = entry[0].name
            if ref is None and case.reference and name != case.reference and entry[0].check:
                results[name]["note"] = f"result not checked: {case.reference} did not run"
            if ref is not None and name != case.reference and entry[0].check:
                problem = _check(outputs[name], ref, case.rtol)
                if problem:
                    results[name] = {"status": WRONG, "note": problem}
                    live.remove(entry)
        # 2. calibrate: enough calls per sample to last about target_ns
        for entry in live:
            c, fn, _ = entry
            if c.fresh:
                continue
            one = max(_sample(fn, 1)[0], 1)
            entry[2] = max(1, min(1_000_000, int(target_ns // one)))
        # 3. interleaved rounds, rotated order
        samples = {entry[0].name: [] for entry in live}
        cpu = {entry[0].name: [] for entry in live}
        spent = {entry[0].name: 0 for entry in live}
        for r in range(repeats):
            k = r % len(live) if live else 0
            for c, fn, number in live[k:] + live[:k]:
                if results[c.name]["status"] != OK:
                    continue     # failed in an earlier round
                if budget_ns and spent[c.name] > budget_ns and len(samples[c.name]) >= MIN_ROUNDS:
                    continue
                try:
                    ns, cpu_ns = (_fresh_sample(c.make, case.gc_enabled) if c.fresh
                                  else _sample(fn, number, case.gc_enabled))
                except Exception as e:  # noqa: BLE001
                    results[c.name] = {"status": ERROR, "note": _error_note(e)}
                    continue
                samples[c.name].append(ns / number)
                cpu[c.name].append(cpu_ns / number)
                spent[c.name] += ns
    for c, _, number in live:
        res = results[c.name]
        xs = samples[c.name]
        if res["status"] != OK or not xs:
            continue
        q1, med, q3 = np.percentile(xs, [25, 50, 75])
        res.update(median_ns=float(med), iqr_ns=float(q3 - q1), min_ns=float(min(xs)),
                   cpu_median_ns=float(np.median(cpu[c.name])), number=number,
                   repeats=len(xs), samples_ns=[round(float(x), 1) for x in xs])
    goals = []
    for g in case.goals:
        value, met = g.evaluate(results)
        cpu_value, cpu_met = g.evaluate(results, "cpu_median_ns")
        goals.append({"text": g.text, "subject": g.subject, "versus": g.versus,
                      "max_ratio": g.max_ratio, "max_ns": g.max_ns,
                      "value": value, "met": met, "cpu_value": cpu_value, "cpu_met": cpu_met,
                      "judged_on": g.judged_on})
    out = {"id": case.id, "title": case.title, "params": params, "reference": case.reference,
           "floor": case.floor,
           "contenders": results, "goals": goals}
    if case.series:
        out["series"], out["x"] = case.series, case.x
        if case.max_exponent is not None:
            out["max_exponent"] = case.max_exponent
    if case.gc_enabled:
        out["gc_enabled"] = True
    return out


@contextmanager
def _nullcontext():
    yield
