"""The device errors a user meets through ag.function, each naming what to do: an unknown
device name, a device whose library is missing, an array from another device, and a
primitive the device's array namespace does not have."""

import sys

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.ir import primitives
from autograph.runtime.devices import (DeviceError, DeviceUnavailable, UnsupportedPrimitiveError,
                                       get_device)

xps = pytest.importorskip("array_api_strict")


def add_one(x):
    return x + 1


def test_unknown_device_name():
    f = ag.function(add_one, device="cdua")
    with pytest.raises(DeviceError) as info:
        f(np.ones(2))
    text = str(info.value)
    assert "unknown device 'cdua'" in text and "available: cpu" in text
    assert "missing:" not in text or "cuda" in text  # missing devices come with their reason


def test_device_whose_library_is_missing(clean_registry, monkeypatch):
    from autograph.runtime.devices import cuda
    monkeypatch.setitem(sys.modules, "cupy", None)
    monkeypatch.setattr(cuda, "_cupy", None)
    clean_registry._DEVICES.pop("cuda", None)
    clean_registry._MISSING.pop("cuda", None)
    with pytest.raises(DeviceUnavailable, match="'cuda' is not available: CuPy not installed"):
        ag.function(add_one, device="cuda")(np.ones(2))
    with pytest.raises(DeviceUnavailable, match="CuPy not installed"):
        with ag.device("cuda"):
            pass


def test_array_from_another_device():
    on_cpu = ag.function(add_one, device="cpu")
    with pytest.raises(DeviceError) as info:
        on_cpu(xps.asarray([1.0, 2.0]))
    text = str(info.value)
    assert "array on device 'strict'" in text and "runs on 'cpu'" in text
    assert "device='strict'" in text  # says how to run it there instead


def test_arrays_from_two_devices_in_one_call():
    pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    torch_array = get_device("torch").to_device(np.ones(2))
    with pytest.raises(DeviceError, match="array on device 'torch'.*runs on 'strict'"):
        ag.function(lambda x, y: x + y)(xps.asarray([1.0, 2.0]), torch_array)


@pytest.fixture
def nonstandard_primitive():
    """A primitive whose kernel is a NumPy-only function (np.nanmean): not in the standard."""
    name = "devtest_nanmean"
    primitives.register(name, lambda x: [(x.dtype, (), False)], kernel="nanmean")
    yield name
    del primitives.PRIMITIVES[name]


def nanmean_program(x):
    return primitives.bind1("devtest_nanmean", [x]) * 2.0


def test_primitive_outside_the_standard(nonstandard_primitive, clean_registry):
    x = np.array([1.0, np.nan, 3.0])
    assert ag.function(nanmean_program)(x) == 4.0  # NumPy has it
    with pytest.raises(UnsupportedPrimitiveError) as info:
        ag.function(nanmean_program, device="strict")(x)
    text = str(info.value)
    assert "primitive 'devtest_nanmean'" in text and "device 'strict'" in text
    assert "'nanmean'" in text and "kernels=" in text

    def nanmean(xp, a):
        keep = ~xp.isnan(a)
        return xp.sum(xp.where(keep, a, xp.zeros_like(a))) / xp.sum(xp.astype(keep, a.dtype))

    ag.register_device("strict_plus", xps, kernels={"devtest_nanmean": nanmean})
    out = ag.function(nanmean_program, device="strict_plus", outputs="host")(x)
    np.testing.assert_allclose(out, 4.0)


def test_variable_from_another_device():
    v = ag.Variable(np.float64(1.0), name="counter")  # on the cpu: the default device

    def bump(x):
        v.assign(v + x)
        return v + 0.0

    with pytest.raises(DeviceError) as info:
        ag.function(bump, device="strict")(np.float64(1.0))
    text = str(info.value)
    assert "Variable 'counter' lives on device 'cpu'" in text and "'bump'" in text
    assert "with ag.device" in text
    assert v.numpy() == 1.0  # nothing was written


@pytest.mark.parametrize("name", ["strict", "torch"])
def test_variable_numpy_comes_back_to_the_host_from_any_device(name):
    try:
        dev = get_device(name)
    except DeviceUnavailable as e:
        pytest.skip(str(e))
    with ag.device(name):
        v = ag.Variable(np.arange(3.0))
    assert dev.owns(v._value)
    host = v.numpy()
    assert type(host) is np.ndarray
    np.testing.assert_array_equal(host, [0.0, 1.0, 2.0])
