"""The cuda device file, exercised on the CPU with a NumPy-backed stand-in for CuPy
(tests/devices/fake_cupy.py, two pretend GPUs): naming (cuda, cuda:N), placement by the
input arrays' GPU, outputs on the GPU that ran the graph or on the host, synchronisation,
and the errors. The real GPU runs the same code in test_cuda.py when one is visible."""

import numpy as np
import pytest

import autograph as ag
from autograph.runtime.devices import DeviceError, DeviceUnavailable, cuda, device_of, get_device
from tests.devices import fake_cupy


@pytest.fixture
def cupy(clean_registry, monkeypatch):
    mod = fake_cupy.install(monkeypatch)
    monkeypatch.setattr(cuda, "_cupy", None)
    for name in [n for n in list(clean_registry._DEVICES) if n.startswith("cuda")]:
        del clean_registry._DEVICES[name]
    for name in [n for n in list(clean_registry._MISSING) if n.startswith("cuda")]:
        del clean_registry._MISSING[name]
    clean_registry._by_type.clear()
    yield mod
    clean_registry._by_type.clear()


def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_names_and_listing(cupy):
    gpu0, gpu1 = get_device("cuda"), get_device("cuda:1")
    assert gpu0.name == "cuda" and gpu1.name == "cuda:1" and gpu0.xp is cupy
    assert get_device("cuda:0") is gpu0
    rows = {row.name: row for row in ag.list_devices()}
    assert rows["cuda"].available and "Pretend GPU 0" in rows["cuda"].detail
    assert rows["cuda:1"].available and "Pretend GPU 1" in rows["cuda:1"].detail
    with pytest.raises(DeviceUnavailable, match="there are 2 GPU\\(s\\): cuda:0 .. cuda:1"):
        get_device("cuda:2")
    with pytest.raises(DeviceUnavailable, match="'cuda' or 'cuda:N', not 'cuda:x'"):
        get_device("cuda:x")


def test_moves_and_ownership(cupy):
    gpu0, gpu1 = get_device("cuda"), get_device("cuda:1")
    a = gpu1.to_device(np.arange(4.0))
    assert a.device.id == 1 and gpu1.owns(a) and not gpu0.owns(a)
    assert device_of(a) is gpu1 and device_of(np.arange(2)) is get_device("cpu")
    assert gpu1.to_device(a) is a
    back = gpu1.to_host(a)
    assert type(back) is np.ndarray and fake_cupy.transfers["to_host"] == 1
    gpu1.synchronize()
    assert fake_cupy.transfers["sync"] == 1


def test_collatz_runs_on_the_gpu_of_its_inputs(cupy):
    gpu1 = get_device("cuda:1")
    f = ag.function(collatz)
    out = f(gpu1.to_device(np.int64(27)))
    assert isinstance(out, cupy.ndarray) and out.device.id == 1
    assert int(gpu1.to_host(out)) == 111
    numpy_out = f(np.int64(27))        # NumPy in: the CPU runs it, NumPy out
    assert type(numpy_out) in (np.ndarray, np.int64) and int(numpy_out) == 111


def test_explicit_device_moves_host_inputs_once_per_call(cupy):
    f = ag.function(collatz, device="cuda")
    f(np.int64(6))
    before = fake_cupy.transfers["to_gpu"]
    out = f(np.int64(27))
    assert fake_cupy.transfers["to_gpu"] == before + 1   # the one input; constants stay put
    assert out.device.id == 0 and int(get_device("cuda").to_host(out)) == 111
    host = ag.function(collatz, device="cuda", outputs="host")(np.int64(27))
    assert not isinstance(host, cupy.ndarray) and int(host) == 111
    with ag.device("cuda:1"):
        scoped = ag.function(collatz)(np.int64(27))
    assert scoped.device.id == 1


def test_array_of_another_gpu_is_refused(cupy):
    on_gpu0 = ag.function(collatz, device="cuda")
    with pytest.raises(DeviceError, match="array on device 'cuda:1'.*runs on 'cuda'"):
        on_gpu0(get_device("cuda:1").to_device(np.int64(27)))
    with pytest.raises(DeviceError, match="array on device 'cuda'.*runs on 'cpu'"):
        ag.function(collatz, device="cpu")(get_device("cuda").to_device(np.int64(27)))


def test_tensor_conditions_are_read_on_the_host_once_per_decision(cupy):
    """What a data-dependent loop costs on a GPU: one device-to-host read per evaluation of
    the loop condition and one per tensor `if`, nothing else (outputs stay on the GPU)."""
    f = ag.function(collatz, device="cuda")
    f(np.int64(27))                                   # trace and compile
    fake_cupy.transfers["to_host"] = 0
    out = f(np.int64(27))
    assert int(np.asarray(out)) == 111
    # 112 checks of `n != 1` (111 true, 1 false) + 111 evaluations of `n % 2 == 0`
    assert fake_cupy.transfers["to_host"] == 112 + 111


def test_a_second_gpu_runs_kernels_as_the_current_device(cupy):
    """CuPy computes on its *current* GPU: a graph for cuda:1 must run with GPU 1 current,
    both in a device scope and with an explicit device."""
    gpu1 = get_device("cuda:1")
    x = gpu1.to_device(np.arange(1.0, 4.0))
    with pytest.raises(ValueError, match="different from the current device"):
        cupy.tanh(x)                      # the stand-in is as strict as CuPy
    with ag.device("cuda:1"):
        out = ag.function(newton)(x)
    assert out.device.id == 1
    np.testing.assert_allclose(gpu1.to_host(out), newton(np.arange(1.0, 4.0)))
    out = ag.function(newton, device="cuda:1")(np.arange(1.0, 4.0))
    assert out.device.id == 1
    out = ag.function(newton)(x)          # placed by its input
    assert out.device.id == 1


def newton(a):
    x = a
    while np.max(np.abs(x * x - a)) > 1e-12:
        x = (x + a / x) / 2
    return x


def _compiler_cases():
    from tests.converters import samples
    for fn, arg_sets, static in samples.SAMPLES:
        for args in arg_sets[:2]:
            yield pytest.param(fn, args, static, id=f"{fn.__name__}{args}")


@pytest.mark.parametrize("fn,args,static", list(_compiler_cases()))
def test_compiler_samples_on_the_second_gpu(cupy, fn, args, static):
    """Every compiled sample on cuda:1 (not CuPy's default GPU): no kernel may compute or
    allocate on another GPU, and the answer is Python's."""
    import inspect
    from tests.converters import samples
    want = fn(*args)
    params = list(inspect.signature(fn).parameters)
    call_args = [a if p in static else samples.as_array(a) for p, a in zip(params, args)]
    got = ag.function(fn, device="cuda:1")(*call_args)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        if isinstance(g, cupy.ndarray):
            assert g.device.id == 1
            g = cupy.asnumpy(g)
        np.testing.assert_allclose(np.asarray(g, np.float64), np.float64(w), rtol=1e-9)


def test_demos_on_the_second_gpu(cupy, capsys):
    from tests.devices import test_every_device as demos
    gpu1 = get_device("cuda:1")
    demos.fizzbuzz(15)
    want = capsys.readouterr().out
    f = ag.function(demos.fizzbuzz, device="cuda:1")
    f(np.int64(15))
    capsys.readouterr()
    f(np.int64(15))
    assert capsys.readouterr().out == want
    rng = np.random.default_rng(3)
    data = rng.uniform(size=(2, 3, 4)).astype(np.float32)
    init = np.zeros((2, 4), np.float32)
    out = ag.function(demos.dynamic_rnn, device="cuda:1")(data, init)
    assert out.device.id == 1
    demos.assert_matches(gpu1.to_host(out), demos.dynamic_rnn_numpy(data, init))


def test_an_old_cupy_without_standard_names_fails_clearly(cupy, monkeypatch):
    import sys
    del cupy.permute_dims                      # as in CuPy before 14
    monkeypatch.setitem(sys.modules, "array_api_compat.cupy", None)  # and no compat wrapper
    gpu = get_device("cuda")
    assert gpu.xp is cupy
    from autograph.runtime.devices import UnsupportedPrimitiveError
    with pytest.raises(UnsupportedPrimitiveError, match="'permute_dims'.*device 'cuda'"):
        ag.function(lambda x: np.transpose(x) * 2, device="cuda")(np.ones((2, 3)))
