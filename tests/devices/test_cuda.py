"""The GPU devices (cuda via CuPy, torch:cuda via PyTorch). Without a GPU every test here is
skipped with the reason `list_devices` gives; the same code paths run on the CPU through the
strict and torch devices in test_every_device.py."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.devices import DeviceError, DeviceUnavailable, device_of, get_device, place


def _device_or_skip(name):
    try:
        return get_device(name)
    except DeviceUnavailable as e:
        pytest.skip(str(e))


@pytest.fixture
def cuda():
    return _device_or_skip("cuda")


@pytest.fixture
def torch_cuda():
    return _device_or_skip("torch:cuda")


def test_cuda_round_trip(cuda):
    import cupy
    a = np.arange(12.0).reshape(3, 4)
    d = cuda.to_device(a)
    assert isinstance(d, cupy.ndarray) and cuda.owns(d) and device_of(d) is cuda
    assert cuda.to_device(d) is d  # the device's own arrays are not copied
    back = cuda.to_host(cupy.sin(d))
    cuda.synchronize()
    assert type(back) is np.ndarray
    np.testing.assert_allclose(back, np.sin(a))
    assert cuda.dtype(np.float32) == np.float32
    assert get_device("cuda:0") is cuda


def test_cuda_index_out_of_range_is_clear(cuda):
    import cupy
    count = cupy.cuda.runtime.getDeviceCount()
    with pytest.raises(DeviceUnavailable, match=f"there are {count} GPU"):
        get_device(f"cuda:{count}")


def test_cupy_array_into_a_cpu_function_is_an_error(cuda):
    with pytest.raises(DeviceError, match="array on device 'cuda'.*runs on 'cpu'"):
        place(cuda.to_device(np.ones(3)), get_device("cpu"), "argument 'x'")


def test_torch_cuda_round_trip(torch_cuda):
    import torch
    a = np.arange(6, dtype=np.float32)
    d = torch_cuda.to_device(a)
    assert isinstance(d, torch.Tensor) and d.device.type == "cuda"
    assert device_of(d) is torch_cuda and not get_device("torch").owns(d)
    np.testing.assert_allclose(torch_cuda.to_host(torch_cuda.xp.exp(d)), np.exp(a), rtol=1e-6)


def test_function_placement_on_cuda(cuda):
    """CuPy arrays in -> the graph runs on the GPU and returns CuPy arrays; outputs='host'
    returns NumPy; NumPy in with device='cuda' is moved once per call."""
    import cupy

    def f(x):
        total = np.zeros_like(x)
        while np.sum(total) < 100.0:
            total = total + x
        return total

    x = np.arange(1.0, 5.0)
    expected = f(x)
    out = ag.function(f)(cuda.to_device(x))
    assert isinstance(out, cupy.ndarray)
    np.testing.assert_allclose(cuda.to_host(out), expected)
    host = ag.function(f, device="cuda", outputs="host")(x)
    assert type(host) is np.ndarray
    np.testing.assert_allclose(host, expected)
    with ag.device("cuda"):
        scoped = ag.function(f)(x)
    np.testing.assert_allclose(cuda.to_host(scoped), expected)
