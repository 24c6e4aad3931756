"""The cuda device: CuPy on an NVIDIA GPU. `cuda` is GPU 0, `cuda:N` GPU N.

Present only when CuPy imports and a GPU is visible. CuPy follows NumPy's API (and the array
API standard), so the runtime's kernels run unchanged; `to_device` copies host memory to the
GPU once per call, `to_host` copies back, and `synchronize` waits for the GPU's queue, which
matters for timing (kernels are launched asynchronously).
"""

import numpy as np

from autograph.runtime.devices import Device, DeviceUnavailable

_cupy = None


def _import_cupy():
    global _cupy
    if _cupy is None:
        try:
            import cupy
        except ImportError:
            raise DeviceUnavailable(
                "CuPy not installed (pip install -e '.[cuda]' from a clone)") from None
        except Exception as e:  # CuPy present but broken (driver, CUDA runtime)
            raise DeviceUnavailable(f"CuPy failed to import: {type(e).__name__}: {e}") from None
        _cupy = cupy
    return _cupy


def _gpu_count():
    cupy = _import_cupy()
    try:
        return cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        raise DeviceUnavailable(f"CuPy sees no GPU ({type(e).__name__}: {e})") from None


# array API standard names the runtime's kernels use that CuPy only has since 14
_STANDARD = ("permute_dims", "concat", "pow", "astype", "cumulative_sum", "bitwise_left_shift",
             "acos", "isdtype")


def _namespace(cupy):
    """CuPy itself when it has the standard's names, else array-api-compat's wrapper of it
    (when installed; without it, kernels that need a missing name fail with an error naming
    the primitive and the device)."""
    if all(hasattr(cupy, name) for name in _STANDARD):
        return cupy
    try:
        from array_api_compat import cupy as compat
    except ImportError:
        return cupy
    return compat


def names():
    try:
        count = _gpu_count()
    except DeviceUnavailable:
        return ["cuda"]
    return ["cuda"] + [f"cuda:{i}" for i in range(1, count)]


def name_of(array):
    index = array.device.id
    return "cuda" if index == 0 else f"cuda:{index}"


def _index(name):
    if name == "cuda":
        return 0
    head, _, tail = name.partition(":")
    if head != "cuda" or not tail.isdigit():
        raise DeviceUnavailable(f"a CUDA device is named 'cuda' or 'cuda:N', not {name!r}")
    return int(tail)


def create(name):
    index = _index(name)
    cupy = _import_cupy()
    count = _gpu_count()
    if count == 0:
        raise DeviceUnavailable("CuPy sees no GPU")
    if index >= count:
        raise DeviceUnavailable(f"there are {count} GPU(s): cuda:0 .. cuda:{count - 1}")
    gpu = cupy.cuda.Device(index)

    def to_device(a):
        if isinstance(a, cupy.ndarray) and a.device.id == index:
            return a
        with gpu:
            return cupy.asarray(a)

    def to_host(a):
        return cupy.asnumpy(a) if isinstance(a, cupy.ndarray) else np.asarray(a)

    def synchronize():
        gpu.synchronize()

    props = cupy.cuda.runtime.getDeviceProperties(index)
    gpu_name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    return Device("cuda" if index == 0 else f"cuda:{index}", _namespace(cupy), to_device, to_host,
                  synchronize,
                  array_types=(cupy.ndarray,), owns_array=lambda a: a.device.id == index,
                  description=f"CuPy {cupy.__version__} on {gpu_name}", activate=gpu)
