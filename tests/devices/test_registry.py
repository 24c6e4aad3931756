"""The device registry: names, scopes, registration, plug-ins, listing, and its errors."""

import sys
import types

import numpy as np
import pytest

import autograph as ag
from autograph.runtime import devices as registry
from autograph.runtime.devices import (DeviceError, DeviceUnavailable, UnsupportedPrimitiveError,
                                       current_device, device_of, get_device, place)

xps = pytest.importorskip("array_api_strict")


def test_default_device_is_numpy_cpu():
    dev = get_device()
    assert dev.name == "cpu" and dev.xp is np
    assert get_device("cpu") is dev and get_device(dev) is dev
    a = np.arange(3.0)
    assert dev.to_device(a) is a and dev.to_host(a) is a  # nearly free on the hot path
    assert dev.dtype(np.int64) == np.dtype(np.int64)
    dev.synchronize()


def test_scope_sets_and_restores_the_default():
    assert current_device() is None
    with ag.device("strict") as dev:
        assert dev.name == "strict" and current_device() is dev and get_device() is dev
        with ag.device("cpu"):
            assert get_device().name == "cpu"
        assert get_device() is dev
    assert current_device() is None and get_device().name == "cpu"


def test_scope_rejects_a_typo_on_entry():
    with pytest.raises(DeviceError, match="unknown device 'cdua'.*available: cpu"):
        with ag.device("cdua"):
            pass
    assert current_device() is None


def test_unknown_name_suggests_a_close_one():
    with pytest.raises(DeviceError, match="unknown device 'cdua' \\(did you mean 'cuda'\\?\\)"):
        get_device("cdua")
    with pytest.raises(DeviceError, match="did you mean 'strict'"):
        get_device("stirct")
    with pytest.raises(DeviceError,
                       match="unknown device 'GPU' \\(a GPU is 'cuda' or 'cuda:N' here\\)"):
        get_device("GPU")


def test_unknown_name_lists_what_exists():
    with pytest.raises(DeviceError) as info:
        get_device("gpu7")
    text = str(info.value)
    assert "unknown device 'gpu7'" in text
    assert "available: " in text and "strict" in text and "register_device" in text
    with pytest.raises(DeviceError, match="not int"):
        get_device(3)


def test_missing_library_says_what_to_install(clean_registry, monkeypatch):
    from autograph.runtime.devices import cuda
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` raises ImportError
    monkeypatch.setattr(cuda, "_cupy", None)
    for name in ("cuda", "cuda:1"):
        clean_registry._DEVICES.pop(name, None)
        clean_registry._MISSING.pop(name, None)
    with pytest.raises(DeviceUnavailable, match="'cuda' is not available: CuPy not installed"):
        get_device("cuda")
    with pytest.raises(DeviceUnavailable, match=r"CuPy not installed.*pip install -e '\.\[cuda\]'"):
        get_device("cuda:1")
    rows = {row.name: row for row in ag.list_devices()}
    assert not rows["cuda"].available
    assert str(rows["cuda"]) == \
        "cuda: missing, CuPy not installed (pip install -e '.[cuda]' from a clone)"


def test_missing_torch_says_what_to_install(clean_registry, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    clean_registry._DEVICES.pop("torch", None)
    clean_registry._MISSING.pop("torch", None)
    with pytest.raises(DeviceUnavailable, match="PyTorch not installed"):
        get_device("torch")


def test_list_devices_shows_every_builtin_with_a_reason():
    rows = ag.list_devices()
    names = [row.name for row in rows]
    for name in ("cpu", "cuda", "torch", "torch:cuda", "strict"):
        assert name in names
    by_name = {row.name: row for row in rows}
    assert by_name["cpu"].available and "NumPy" in by_name["cpu"].detail
    assert by_name["strict"].available
    for row in rows:
        assert row.detail  # a library when available, a reason when missing
        assert str(row).startswith(row.name + ": ")
    assert "cpu" in rows.names
    assert str(rows).splitlines()[0].startswith("cpu: NumPy")


def test_register_device_from_a_non_numpy_namespace(clean_registry):
    moves = []

    def to_device(a):
        moves.append("in")
        return xps.asarray(np.asarray(a))

    dev = ag.register_device("lab", xps, to_device=to_device, to_host=np.asarray)
    assert get_device("lab") is dev and dev.xp is xps
    a = dev.to_device(np.arange(4))
    assert moves == ["in"] and dev.owns(a) and not dev.owns(np.arange(4))
    assert device_of(a) in (dev, get_device("strict"))  # both own array_api_strict arrays
    np.testing.assert_array_equal(dev.to_host(xps.sum(a)), 6)
    assert dev.dtype(np.float32) is xps.float32 and dev.dtype("bool") is xps.bool
    assert "lab" in ag.list_devices().names
    registry.unregister_device("lab")
    with pytest.raises(DeviceError, match="unknown device 'lab'"):
        get_device("lab")


def test_register_device_rejects_a_bad_name():
    with pytest.raises(DeviceError, match="non-empty string"):
        ag.register_device("", xps)


def test_dtype_missing_from_the_namespace_is_a_clear_error():
    with pytest.raises(DeviceError, match="device 'strict' has no dtype 'float16'"):
        get_device("strict").dtype(np.float16)


def test_kernels_come_from_the_namespace_or_a_per_device_table(clean_registry):
    strict = get_device("strict")
    sin = strict.kernel("sin", "sin")
    assert sin is xps.sin
    composite = strict.kernel("square_plus", lambda xp, a, *, k: xp.multiply(a, a) + k)
    result = composite(strict.to_device(np.array([2.0])), k=1.0)
    np.testing.assert_allclose(strict.to_host(result), [5.0])
    with pytest.raises(UnsupportedPrimitiveError) as info:
        strict.kernel("einsum", "einsum")
    text = str(info.value)
    assert "'einsum'" in text and "'strict'" in text and "kernels=" in text
    lab = ag.register_device("lab2", xps, kernels={"einsum": lambda xp, a: xp.sum(a)})
    total = lab.kernel("einsum", "einsum")(xps.asarray([1, 2, 3]))
    assert int(lab.to_host(total)) == 6


def test_device_of_is_cheap_and_knows_each_library():
    cpu, strict = get_device("cpu"), get_device("strict")
    assert device_of(np.zeros(2)) is cpu and device_of(np.float32(1)) is cpu
    assert device_of(strict.to_device(np.zeros(2))) is strict
    assert device_of(3) is None and device_of([1, 2]) is None


def test_place_moves_host_values_and_rejects_foreign_arrays():
    cpu, strict = get_device("cpu"), get_device("strict")
    a = place(np.arange(3), strict, "argument 'x'")
    assert strict.owns(a)
    assert place(a, strict) is a
    assert strict.owns(place(5, strict))
    with pytest.raises(DeviceError) as info:
        place(a, cpu, "argument 'x'")
    text = str(info.value)
    assert "argument 'x' is an array on device 'strict'" in text and "runs on 'cpu'" in text
    assert "to_host" in text


def test_entry_point_plugins_load_lazily(clean_registry, monkeypatch):
    import importlib.metadata as md
    calls = []

    def plugin():
        calls.append(1)
        return registry.Device("plugged", xps, array_types=(type(xps.asarray(0)),))

    def broken():
        raise ImportError("no such accelerator library")

    class EP:
        def __init__(self, name, fn):
            self.name, self.value, self._fn = name, f"somepkg:{name}", fn

        def load(self):
            return self._fn

    def entry_points(group):
        assert group == "autograph.devices"
        return [EP("plugged", plugin), EP("broken", broken)]

    monkeypatch.setattr(md, "entry_points", entry_points)
    clean_registry._entry_points_loaded = False
    assert get_device("plugged").name == "plugged"
    assert get_device("plugged").xp is xps
    rows = {row.name: row for row in ag.list_devices()}
    assert rows["plugged"].available
    assert not rows["broken"].available and "no such accelerator library" in rows["broken"].detail
    with pytest.raises(DeviceUnavailable, match="'broken' is not available: entry point"):
        get_device("broken")
    assert calls == [1]  # loaded once, not per lookup


def test_an_installed_plugin_package_adds_a_device(clean_registry, monkeypatch, tmp_path):
    """A real (if tiny) installed distribution: its entry point in the autograph.devices
    group registers a device the first time an unknown name is looked up."""
    (tmp_path / "agdev_plugin.py").write_text(
        "import array_api_strict\n"
        "import autograph\n"
        "def register():\n"
        "    autograph.register_device('plugin-strict', array_api_strict,\n"
        "                              description='from an installed plug-in')\n")
    info = tmp_path / "agdev_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: agdev-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[autograph.devices]\nplugin-strict = agdev_plugin:register\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    clean_registry._entry_points_loaded = False
    dev = get_device("plugin-strict")
    assert dev.xp is xps and dev.description == "from an installed plug-in"
    out = ag.function(lambda x: x * 2, device="plugin-strict", outputs="host")(np.arange(3))
    np.testing.assert_array_equal(out, [0, 2, 4])


def test_a_device_object_works_wherever_a_name_does():
    strict = get_device("strict")
    out = ag.function(lambda x: x * 2, device=strict)(np.ones(2))
    assert strict.owns(out)
    with ag.device(strict):
        assert strict.owns(ag.function(lambda x: x + 1)(np.ones(2)))


def test_scopes_are_per_thread():
    import threading
    seen = []
    with ag.device("strict"):
        worker = threading.Thread(target=lambda: seen.append(get_device().name))
        worker.start()
        worker.join()
        seen.append(get_device().name)
    assert seen == ["cpu", "strict"]


def test_torch_devices_off_the_cpu_make_new_arrays_there(clean_registry):
    """torch:<device> activates the torch device, so kernels that create arrays (zeros,
    arange) allocate there; checked with PyTorch's `meta` device, which needs no GPU."""
    pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    assert get_device("torch").activate is None
    meta = get_device("torch:meta")
    assert meta.name == "torch:meta"
    with ag.device("torch:meta"):
        made = meta.xp.zeros(3)
    assert made.device.type == "meta" and meta.owns(made)
    assert device_of(made) is meta


def test_a_registered_device_is_activated_around_each_run(clean_registry):
    class Counting:
        entered = 0
        depth = 0

        def __enter__(self):
            Counting.entered += 1
            Counting.depth += 1

        def __exit__(self, *exc):
            Counting.depth -= 1

    seen = []
    dev = ag.register_device("counted", xps, activate=Counting())

    def kernel_sees_depth(x):
        return x + 1

    f = ag.function(kernel_sees_depth, device="counted", outputs="host")
    for _ in range(3):
        seen.append(int(f(np.int64(1))))
    assert seen == [2, 2, 2] and Counting.entered == 3 and Counting.depth == 0
    with ag.device(dev):
        assert Counting.depth == 1
    assert Counting.entered == 4


def test_a_composite_kernel_using_a_name_the_namespace_lacks_is_named():
    strict = get_device("strict")
    kernel = strict.kernel("devtest_nanmax", lambda xp, a: xp.nanmax(a))
    with pytest.raises(UnsupportedPrimitiveError) as info:
        kernel(strict.to_device(np.array([1.0, np.nan])))
    text = str(info.value)
    assert "primitive 'devtest_nanmax'" in text and "'strict'" in text and "'nanmax'" in text
    broken = strict.kernel("devtest_broken", lambda xp, a: a.no_such_method())
    with pytest.raises(AttributeError, match="no_such_method"):  # other errors pass through
        broken(strict.to_device(np.ones(1)))
