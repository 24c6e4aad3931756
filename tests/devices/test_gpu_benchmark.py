"""benchmarks/gpu.py runs end to end at its quick sizes (on the CPU devices here; on a GPU
machine the cuda column joins), every cell checked against NumPy before it is timed."""

import importlib.util
import pathlib

import pytest

pytest.importorskip("array_api_strict")

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "gpu.py"


def test_quick_run_has_a_time_in_every_cell(capsys):
    spec = importlib.util.spec_from_file_location("gpu_benchmark", SCRIPT)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = bench.main(["--quick", "--devices", "cpu,strict", "--budget", "0"])
    out = capsys.readouterr().out
    assert set(rows) == {"dynamic_rnn", "matmul_loop", "host_reads"}
    for name, cells in rows.items():
        assert set(cells) >= {"numpy eager", "cpu", "strict"}
        for label, cell in cells.items():
            assert cell != "error", (name, label, out)
            assert cell.endswith("ms") or cell.endswith("us/it")
    assert "host_reads" in out and "us/it" in out
