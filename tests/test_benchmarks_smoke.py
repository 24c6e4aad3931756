"""Smoke test of the benchmark suite: `python -m benchmarks --quick` runs, prints a well-formed
table and writes well-formed JSON. Never asserts on timings (CI machines vary); the harness's
own logic (result checks, fresh calls, goals, growth exponents) is tested on toy cases."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks import report
from benchmarks.harness import (MIN_ROUNDS, ERROR, OK, SKIPPED, WRONG, Case, Contender, Goal, Unavailable,
                                run_case, silenced)

ROOT = Path(__file__).resolve().parents[1]
STATUSES = {OK, SKIPPED, ERROR, WRONG}


@pytest.fixture(scope="module")
def quick_json(tmp_path_factory):
    return tmp_path_factory.mktemp("bench") / "quick.json"


@pytest.fixture(scope="module")
def quick_run(quick_json):
    out = quick_json
    # jit_compile=True contenders cache native code in a directory of the test's own
    env = dict(os.environ, AUTOGRAPH_CACHE_DIR=str(quick_json.parent / "agcache"))
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, json.loads(out.read_text())


def test_json_has_machine_info_and_every_case(quick_run):
    _, record = quick_run
    assert record["mode"] == "quick"
    m = record["machine"]
    for key in ("date_utc", "platform", "cpu", "cpu_count", "python", "numpy", "autograph"):
        assert m[key], key
    ids = [c["id"] for c in record["cases"]]
    for prefix in ("1_", "2a_", "2b_", "3_", "4_", "5_", "6_", "7a_", "7b_"):
        assert any(i.startswith(prefix) for i in ids), f"case {prefix}* missing from {ids}"
    assert len(ids) == len(set(ids))


def test_every_contender_is_well_formed(quick_run):
    _, record = quick_run
    for case in record["cases"]:
        assert "build_error" not in case, case
        names = set(case["contenders"])
        assert "autograph" in names, case["id"]
        for name, res in case["contenders"].items():
            where = f"{case['id']}/{name}"
            assert res["status"] in STATUSES, where
            if res["status"] == OK:
                assert res["median_ns"] > 0 and res["iqr_ns"] >= 0, where
                assert res["cpu_median_ns"] >= 0 and res["min_ns"] <= res["median_ns"], where
                assert len(res["samples_ns"]) == res["repeats"], where
                assert MIN_ROUNDS <= res["repeats"] <= record["repeats"], where
                q1, med, q3 = np.percentile(res["samples_ns"], [25, 50, 75])
                assert math.isclose(med, res["median_ns"], rel_tol=1e-3), where
            else:
                assert res["note"], f"{where}: a contender that did not run must say why"
        # the hand-written floors depend on nothing but NumPy: they always run
        if "numpy_hand" in names:
            assert case["contenders"]["numpy_hand"]["status"] == OK, case["id"]


def test_optional_frameworks_are_skipped_with_a_note_when_missing(quick_run):
    _, record = quick_run
    for module, name in (("tensorflow", "tensorflow"), ("jax", "jax")):
        try:
            __import__(module)
            continue                      # installed here: nothing to check
        except ImportError:
            pass
        for case in record["cases"]:
            res = case["contenders"].get(name)
            if res is not None:
                assert res["status"] == SKIPPED and "not importable" in res["note"]


def test_goals_agree_with_the_medians(quick_run):
    _, record = quick_run
    for case in record["cases"]:
        for g in case["goals"]:
            if g["met"] is None:
                continue
            sub = case["contenders"][g["subject"]]["median_ns"]
            if g["versus"] is None:
                assert g["value"] == sub and g["met"] == (sub <= g["max_ns"])
            else:
                ratio = sub / case["contenders"][g["versus"]]["median_ns"]
                assert math.isclose(g["value"], ratio) and g["met"] == (ratio <= g["max_ratio"])
            cpu = case["contenders"][g["subject"]]["cpu_median_ns"]
            if g["versus"] is None:
                assert g["cpu_value"] == cpu and g["cpu_met"] == (cpu <= g["max_ns"])
            elif g["cpu_value"] is not None:
                cpu_ratio = cpu / case["contenders"][g["versus"]]["cpu_median_ns"]
                assert math.isclose(g["cpu_value"], cpu_ratio)


def test_table_lists_every_row_of_the_json(quick_run):
    stdout, record = quick_run
    assert "| case | contender | median | IQR | CPU | vs floor | note |" in stdout
    assert record["machine"]["date_utc"] in stdout
    rows = {tuple(cell.strip() for cell in line.strip("|").split("|")[:2])
            for line in stdout.splitlines() if line.startswith("| ")}
    for case in record["cases"]:
        for name in case["contenders"]:
            assert (case["id"], name) in rows, (case["id"], name)
    for goal_case in (c for c in record["cases"] if c["goals"]):
        for g in goal_case["goals"]:
            assert f"| {goal_case['id']} | {g['text']} |" in stdout
    for e in record["exponents"]:
        assert e["sizes"] == sorted(e["sizes"]) and len(e["sizes"]) >= 2
        assert f"| {e['series']} | {e['contender']} |" in stdout


# -- the harness on toy cases ------------------------------------------------------------------

def _toy_case(contenders, **kw):
    return Case("toy", "toy", lambda quick: ({"n": 1}, contenders), **kw)


def test_harness_flags_wrong_results_and_errors_and_keeps_going():
    def boom():
        raise ValueError("no such op")
    case = _toy_case([
        Contender("numpy_eager", lambda: lambda: np.arange(3)),
        Contender("right", lambda: lambda: np.arange(3)),
        Contender("wrong", lambda: lambda: np.arange(3) + 1),
        Contender("broken", lambda: boom),
        Unavailable("missing", "not importable (no module)"),
    ])
    out = run_case(case, quick=True, repeats=3, target_ns=1e5, warmup=1)
    status = {k: v["status"] for k, v in out["contenders"].items()}
    assert status == {"numpy_eager": OK, "right": OK, "wrong": WRONG, "broken": ERROR,
                      "missing": SKIPPED}
    assert "ValueError: no such op" in out["contenders"]["broken"]["note"]
    assert "reference" in out["contenders"]["wrong"]["note"]


def test_results_are_flagged_unchecked_when_the_reference_fails():
    def boom():
        raise RuntimeError("reference broke")
    case = _toy_case([Contender("numpy_eager", lambda: boom),
                      Contender("other", lambda: lambda: 1)])
    out = run_case(case, quick=True, repeats=3, target_ns=1e4, warmup=1)
    assert out["contenders"]["numpy_eager"]["status"] == ERROR
    assert out["contenders"]["other"]["status"] == OK
    assert "not checked" in out["contenders"]["other"]["note"]


def test_fresh_contenders_get_a_new_function_for_every_timed_call():
    made = []

    def make():
        made.append(object())
        return lambda: 1
    case = _toy_case([Contender("numpy_eager", lambda: lambda: 1),
                      Contender("fresh", make, fresh=True)])
    out = run_case(case, quick=True, repeats=4, target_ns=1e5, warmup=2)
    assert len(made) == 2 + 4                      # warm-up calls + one per round
    assert out["contenders"]["fresh"]["number"] == 1


def test_slow_contenders_stop_at_their_budget_but_fast_ones_keep_every_round():
    import time
    case = _toy_case([Contender("numpy_eager", lambda: lambda: 1),
                      Contender("slow", lambda: lambda: time.sleep(0.002) or 1)])
    out = run_case(case, quick=True, repeats=8, target_ns=1e3, warmup=1, budget_ns=1e6)
    assert out["contenders"]["slow"]["repeats"] == MIN_ROUNDS
    assert out["contenders"]["numpy_eager"]["repeats"] == 8


def test_goals_and_exponents_are_computed_from_medians():
    case = _toy_case([Contender("numpy_eager", lambda: lambda: sum(range(2000))),
                      Contender("fast", lambda: lambda: 1999000)],
                     goals=[Goal("fast beats eager", "fast", "numpy_eager", max_ratio=1.0),
                            Goal("eager under 1 s", "numpy_eager", max_ns=1e9),
                            Goal("needs a missing one", "fast", "jax", max_ratio=1.0)])
    out = run_case(case, quick=True, repeats=5, target_ns=1e5)
    met = [g["met"] for g in out["goals"]]
    assert met == [True, True, None]
    fake = [{"series": "s", "params": {"x": x}, "contenders": {
        "lin": {"status": OK, "median_ns": 3.0 * x}, "quad": {"status": OK, "median_ns": x * x}}}
        for x in (10, 100, 1000)]
    for c in fake:   # CPU time grows like the wall time here
        for res in c["contenders"].values():
            res["cpu_median_ns"] = res["median_ns"] / 2
    exps = {e["contender"]: (e["exponent"], e["cpu_exponent"]) for e in report.exponents(fake)}
    assert exps["lin"] == pytest.approx((1.0, 1.0)) and exps["quad"] == pytest.approx((2.0, 2.0))


def test_silenced_swallows_prints_and_restores_stdout(capfd):
    with silenced():
        print("should not appear")
    print("visible")
    assert capfd.readouterr().out == "visible\n"


def test_baseline_ratios_appear_in_the_note_column(quick_run):
    _, record = quick_run
    ratios = report.floor_ratios(record)
    assert ratios, "some contender must have run against its floor"
    text = report.table(record, baseline=record)
    for (case_id, name), r in ratios.items():
        assert f"| {case_id} | {name} |" in text and f"| was {r:.2f}x |" in text


def test_render_reprints_the_table_of_a_results_file(quick_run, quick_json, capsys):
    from benchmarks.__main__ import main
    _, record = quick_run
    assert main(["--render", str(quick_json)]) == 0
    assert capsys.readouterr().out == report.table(record) + "\n"


def test_readme_table_block_is_replaced(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{report.README_START}\nold\n{report.README_END}\noutro\n")
    report.update_readme(readme, "| new | table |\n")
    assert readme.read_text() == (f"intro\n{report.README_START}\n| new | table |\n"
                                  f"{report.README_END}\noutro\n")


def test_the_run_records_its_threads_and_how_long_it_took(quick_run):
    stdout, record = quick_run
    assert record["threads"] == 1                      # python -m benchmarks pins by default
    assert record["duration_s"] > 0
    assert all(c["duration_s"] >= 0 for c in record["cases"])
    assert "threads pinned to 1" in stdout
    ids = [c["id"] for c in record["cases"]]
    for prefix in ("13a_", "13b_", "13c_", "13d_", "13e_", "14a_", "14b_", "15a_", "8c_", "11_"):
        assert any(i.startswith(prefix) for i in ids), f"issue 30's case {prefix}* is missing"


def test_pin_sets_every_thread_variable_and_argv_is_read_before_argparse(monkeypatch):
    from benchmarks import threads
    for name in threads.VARIABLES + ("XLA_FLAGS", "AUTOGRAPH_BENCH_THREADS"):
        monkeypatch.delenv(name, raising=False)
    assert threads.pin(1) == 1 and threads.pinned() == 1
    assert all(os.environ[name] == "1" for name in threads.VARIABLES)
    assert threads.XLA_SINGLE in os.environ["XLA_FLAGS"]
    assert threads.pin(1) == 1 and os.environ["XLA_FLAGS"].count("multi_thread_eigen") == 1
    assert threads.threads_from_argv(["--quick", "--threads", "4"]) == 4
    assert threads.threads_from_argv(["--threads=0"]) == 0
    assert threads.threads_from_argv(["--quick"]) == 1


def test_gc_stays_on_only_in_cases_that_ask_and_warmup_is_per_contender():
    import gc
    seen, made = {}, []

    def probe(tag):
        return lambda: seen.setdefault(tag, []).append(gc.isenabled()) or 1

    def make():
        made.append(1)
        return lambda: 1
    for flag in (False, True):
        case = _toy_case([Contender("numpy_eager", lambda f=flag: probe(f)),
                          Contender("once", make, fresh=True, warmup=1)], gc_enabled=flag)
        made.clear()
        out = run_case(case, quick=True, repeats=3, target_ns=1e4, warmup=2)
        assert len(made) == 1 + 3                      # its own single warm-up + 3 rounds
        assert out.get("gc_enabled", False) is flag
    assert not any(seen[False][3:]) and all(seen[True][3:])   # (3: the untimed warm-ups)


def test_a_series_judges_growth_against_its_own_limit():
    fake = [{"series": "s", "max_exponent": 1.1, "params": {"x": x}, "contenders": {
        "autograph": {"status": OK, "median_ns": x ** 1.12, "cpu_median_ns": x ** 1.12}}}
        for x in (10, 100, 1000)]
    (e,) = report.exponents(fake)
    assert e["max_exponent"] == 1.1 and e["met"] is False      # 1.12 > 1.1 (but <= 1.15)
    for c in fake:
        del c["max_exponent"]
    assert report.exponents(fake)[0]["met"] is True


def test_merged_runs_keep_each_case_once_and_say_which_run_measured_it():
    def run(date, ids, median):
        return {"mode": "full", "threads": 1, "duration_s": 60.0,
                "machine": {"date_utc": date, "cpu": "c", "cpu_count": 2, "platform": "p",
                            "python": "3", "numpy": "2"},
                "cases": [{"id": i, "title": i, "params": {}, "goals": [], "floor": "numpy_hand",
                           "contenders": {"numpy_hand": {"status": OK, "median_ns": median,
                                                         "iqr_ns": 0.0,
                                                         "cpu_median_ns": median}}}
                          for i in ids]}
    record = report.merge([run("first", ["1_a", "13a_x"], 1.0), run("second", ["13a_x"], 2.0)])
    assert [c["id"] for c in record["cases"]] == ["1_a", "13a_x"]
    assert record["cases"][1]["contenders"]["numpy_hand"]["median_ns"] == 2.0   # the later run
    text = report.table(record)
    assert "Measured first" in text and "cases 1; " in text
    assert "Measured second" in text and "cases 13a; " in text
