"""Turning measured cases into a table (Markdown, for the terminal and the README), a JSON
record with machine information, and growth exponents for the scaling series."""

import datetime
import json
import math
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np

from benchmarks import frameworks
from benchmarks.harness import OK

README_START = "<!-- benchmark-table:start -->"
README_END = "<!-- benchmark-table:end -->"
MAX_EXPONENT = 1.15   # issue 6: conversion and trace time grow linearly


def machine_info():
    """Where and with what the numbers were taken."""
    info = {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    try:
        import autograph
        info["autograph"] = autograph.__version__
    except Exception:  # noqa: BLE001
        info["autograph"] = "not importable"
    info["git_commit"] = _git_commit()
    try:   # other work on the machine inflates timings (ratios suffer less: rounds interleave)
        info["loadavg_1_5_15min"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    info.update(frameworks.versions())
    return info


def _cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _git_commit():
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, cwd=Path(__file__).resolve().parent, timeout=5)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def fmt_ns(ns):
    if ns is None:
        return "-"
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def _slope(points):
    if len(points) < 2:
        return None
    xs = np.log([p[0] for p in points])
    ys = np.log([p[1] for p in points])
    return float(np.polyfit(xs, ys, 1)[0])


def exponents(cases):
    """Least-squares slope of log(median) over log(size), per series and contender, from
    wall times and from CPU times (the goal is judged on CPU time: see harness._sample)."""
    series, limits = {}, {}
    for case in cases:
        if not case.get("series"):
            continue
        limits[case["series"]] = case.get("max_exponent", limits.get(case["series"], MAX_EXPONENT))
        x = case["params"].get("x", case.get("x"))
        for name, res in case["contenders"].items():
            if res["status"] == OK:
                series.setdefault((case["series"], name), []).append(
                    (x, res["median_ns"], res.get("cpu_median_ns", res["median_ns"])))
    out = []
    for (label, name), points in series.items():
        if len(points) < 2:      # a contender run at one size only (jax at the largest)
            continue
        points.sort()
        wall = _slope([(p[0], p[1]) for p in points])
        cpu = _slope([(p[0], p[2]) for p in points])
        limit = limits.get(label, MAX_EXPONENT)
        out.append({"series": label, "contender": name, "sizes": [p[0] for p in points],
                    "median_ns": [p[1] for p in points],
                    "cpu_median_ns": [p[2] for p in points],
                    "exponent": wall, "cpu_exponent": cpu, "max_exponent": limit,
                    "met": None if cpu is None or name != "autograph" else cpu <= limit})
    return out


def _floor_name(case):
    names = case["contenders"]
    floor = case.get("floor", "numpy_hand")
    if floor in names and names[floor]["status"] == OK:
        return floor
    ref = case.get("reference")
    return ref if ref in names and names[ref]["status"] == OK else None


def _cpu(res):
    """A contender's CPU median (the wall median in records older than the CPU column)."""
    return res.get("cpu_median_ns") or res["median_ns"]


def floor_ratios(record):
    """{(case id, contender): CPU median / the floor's CPU median} for the contenders that
    ran (CPU, as the goals: on a shared machine wall ratios drift with the load)."""
    out = {}
    for case in record["cases"]:
        floor = _floor_name(case)
        if not floor:
            continue
        base = _cpu(case["contenders"][floor])
        for name, res in case["contenders"].items():
            if res["status"] == OK:
                out[(case["id"], name)] = _cpu(res) / base
    return out


def merge(records):
    """One record from several runs (e.g. a full run and a later `--only` run of some cases):
    a case measured in several takes the last run's. The table then gives one "Measured"
    line per run, naming its cases, so no row hides which run it came from."""
    by_id, order, parts = {}, [], []
    for k, rec in enumerate(records):
        ids = [c["id"] for c in rec["cases"]]
        parts.append({"machine": rec["machine"], "mode": rec["mode"], "threads": rec.get("threads"),
                      "duration_s": rec.get("duration_s"), "complete": rec.get("complete", True),
                      "ids": ids})
        for case in rec["cases"]:
            if case["id"] not in by_id:
                order.append(case["id"])
            by_id[case["id"]] = dict(case, run=k)
    for part in parts:       # a run's cases that a later run measured again are not its own
        part["ids"] = [i for i in part["ids"] if by_id[i]["run"] == parts.index(part)]
    cases = [by_id[i] for i in order]
    out = dict(records[-1], cases=cases, parts=parts)
    out["exponents"] = exponents(cases)
    return out


def _measured_line(m, record, cases=None):
    versions = ", ".join(f"{k} {m[k]}" for k in ("python", "numpy", "autograph", "tensorflow",
                                                   "jax", "torch", "numba", "onnxruntime")
                         if k in m)
    pinned = record.get("threads")
    took = record.get("duration_s")
    return (f"Measured {m['date_utc']} on {m['cpu']} ({m['cpu_count']} CPUs), {m['platform']}; "
            + (f"cases {', '.join(cases)}; " if cases else "")
            + f"{versions}; mode: {record['mode']}, commit {m.get('git_commit')}; "
            + (f"threads pinned to {pinned}; " if pinned else "threads not pinned; ")
            + (f"the run took {took / 60:.1f} min; " if took else "")
            + (f"load average at the start {m['loadavg_at_start']}, "
               if m.get("loadavg_at_start") else "")
            + f"at the end {m.get('loadavg_1_5_15min')}."
            + (" INCOMPLETE: the run stopped before its last case."
               if record.get("complete") is False else ""))


def table(record, baseline=None):
    """The whole result as Markdown: timings, goals, growth exponents. With `baseline` (an
    earlier record), the note column gives each row's earlier "vs floor" ratio: ratios,
    unlike absolute times, survive a change in machine load between the two runs."""
    before = floor_ratios(baseline) if baseline else {}
    if record.get("parts"):
        lines = [_measured_line(p["machine"], p, _id_ranges(p["ids"])) + "\n"
                 for p in record["parts"] if p["ids"]]
        lines[-1] = lines[-1].rstrip("\n")
        lines += [""]
    else:
        lines = [_measured_line(record["machine"], record), ""]
    lines += [
             "| case | contender | median | IQR | CPU | vs floor | note |",
             "|---|---|---:|---:|---:|---:|---|"]
    for case in record["cases"]:
        if case.get("build_error"):
            lines.append(f"| {case['id']} | (all) | - | - | - | - | build failed: "
                         f"{_cell(case['build_error'])} |")
            continue
        floor = _floor_name(case)
        base = _cpu(case["contenders"][floor]) if floor else None
        for name, res in case["contenders"].items():
            if res["status"] == OK:
                ratio = f"{_cpu(res) / base:.2f}x" if base else "-"
                was = before.get((case["id"], name))
                note = "; ".join(x for x in (_cell(res.get("note", "")),
                                             f"was {was:.2f}x" if was is not None else "") if x)
                lines.append(f"| {case['id']} | {name} | {fmt_ns(res['median_ns'])} | "
                             f"{fmt_ns(res['iqr_ns'])} | {fmt_ns(res.get('cpu_median_ns'))} | "
                             f"{ratio} | {note} |")
            else:
                lines.append(f"| {case['id']} | {name} | - | - | - | - | "
                             f"{res['status']}: {_cell(res['note'])} |")
    lines += ["", "\"vs floor\": CPU median divided by the floor's CPU median (numpy_hand; "
              "python_compile for "
              "7a, graph_build for 7b; else the reference). \"CPU\": median process CPU time per "
              "call; far below the wall median means the run waited for a busy CPU, above it "
              "means the contender used several threads.", "",
              "| case | goal | measured (CPU) | met | wall-time view |", "|---|---|---:|---|---|"]
    for case in record["cases"]:
        for g in case["goals"]:
            on_wall = g.get("judged_on") == "wall"
            met = {True: "yes", False: "**NO**", None: "n/a (not run)"}[
                g["met"] if on_wall else g.get("cpu_met")]
            wall = _goal_value(g, g["value"])
            if g["met"] is not None:
                wall += " (" + ("yes" if g["met"] else "no") + ")"
            measured = _goal_value(g, g.get("cpu_value"))
            if on_wall:
                measured = f"{_goal_value(g, g['value'])} (wall: the goal is about waiting)"
            lines.append(f"| {case['id']} | {g['text']} | {measured} | {met} | {wall} |")
    lines += ["", "\"met\" is judged on CPU medians (the issues' rule on this shared machine: "
              "a sample's CPU time does not count the time it waited for a busy core; with "
              "the threads pinned every contender computes on one). The wall-time view judges "
              "the same goal on wall medians (a goal about waiting, such as prefetch's overlap, is "
              "judged on it). Goals marked [30.k] are issue 30's."]
    exps = record.get("exponents", [])
    if exps:
        lines += ["", "| growth | contender | sizes | medians (wall) | exponent (wall) | "
                      "exponent (CPU) |", "|---|---|---|---|---:|---:|"]
        for e in exps:
            wall = "-" if e["exponent"] is None else f"{e['exponent']:.2f}"
            cpu = "-" if e["cpu_exponent"] is None else f"{e['cpu_exponent']:.2f}"
            if e["met"] is False:
                cpu = f"**{cpu}** (> {e.get('max_exponent', MAX_EXPONENT)})"
            elif e["met"]:
                cpu = f"{cpu} (<= {e.get('max_exponent', MAX_EXPONENT)}: met)"
            lines.append(f"| {e['series']} | {e['contender']} | "
                         f"{', '.join(str(s) for s in e['sizes'])} | "
                         f"{', '.join(fmt_ns(t) for t in e['median_ns'])} | {wall} | {cpu} |")
    return "\n".join(lines) + "\n"


def _id_ranges(ids):
    """Case ids shortened to their prefixes ("13a_prefix_sum_25k" -> "13a"), once each."""
    seen = []
    for i in ids:
        short = i.split("_", 1)[0]
        if short not in seen:
            seen.append(short)
    return seen


def _goal_value(goal, value):
    if value is None:
        return "-"
    if goal["max_ns"] is not None:
        return fmt_ns(value)
    return f"{value:.3g}x {goal['versus']}"


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_json(record, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1, sort_keys=False, default=_jsonable) + "\n")
    return path


def _jsonable(x):
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating,)):
        return float(x)
    return str(x)


def update_readme(path, text):
    """Replace the block between the table markers in the README with `text`."""
    path = Path(path)
    body = path.read_text()
    if README_START not in body or README_END not in body:
        raise SystemExit(f"{path} has no {README_START} ... {README_END} block to replace")
    head, rest = body.split(README_START, 1)
    _, tail = rest.split(README_END, 1)
    path.write_text(f"{head}{README_START}\n{text}{README_END}{tail}")


def is_finite(x):
    return x is not None and math.isfinite(x)
