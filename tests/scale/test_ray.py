"""autograph.ray.map_batches on a local Ray: the saved graph travels to the workers'
callable class; results bitwise equal to a single-process run (issue 17)."""

import importlib
import sys
import textwrap

import numpy as np
import pytest

import autograph as ag

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

import autograph.ray as agray  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             ignore_reinit_error=True, configure_logging=False)
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    yield
    ray.shutdown()


@ag.function
def features(batch):
    x = batch["x"]
    y = np.zeros_like(x)
    for k in ag.range(4):
        y = np.where(x > k, y + np.sqrt(np.abs(x)), y)
    return {"x": x, "y": y}


def single_process(fn, columns):
    return {k: np.asarray(v) for k, v in fn(columns).items()}


def test_1d_column_bitwise_equal(local_ray):
    x = np.random.default_rng(0).uniform(-2, 6, size=1001)
    ds = ray.data.from_items([{"x": v} for v in x]).repartition(7)
    out = agray.map_batches(features, ds, batch_size=64).take_all()
    got = np.array([r["y"] for r in out])
    order = np.argsort(np.array([r["x"] for r in out]), kind="stable")
    want = single_process(features, {"x": x})["y"]
    np.testing.assert_array_equal(got[order], want[np.argsort(x, kind="stable")])


def test_2d_tensor_column_with_uneven_batches(local_ray):
    x = np.random.default_rng(1).normal(size=(103, 5))
    ds = ray.data.from_numpy(x)          # one column named "data"

    @ag.function
    def rows(batch):
        d = batch["data"]
        return np.tanh(d) * np.arange(5.0)

    out = agray.map_batches(rows, ds, batch_size=10).take_batch(1000, batch_format="numpy")
    np.testing.assert_array_equal(out["out"], np.asarray(rows({"data": x})))


def test_function_from_a_deleted_module_still_runs(local_ray, tmp_path):
    name = "autograph_ray_user_module"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent("""
        import numpy as np
        import autograph as ag

        @ag.function
        def user_fn(batch):
            x = batch["data"]
            if np.max(x) > 0:
                x = x * 2.0
            return x
    """))
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module(name)
        x = np.linspace(-1, 1, 50)
        ds = ray.data.from_numpy(x)
        out = agray.map_batches(module.user_fn, ds, batch_size=50)
    finally:
        sys.path.remove(str(tmp_path))
    (tmp_path / f"{name}.py").unlink()
    del sys.modules[name]
    got = out.take_batch(100, batch_format="numpy")["out"]
    np.testing.assert_array_equal(got, x * 2.0)
