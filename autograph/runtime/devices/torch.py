"""The torch devices: PyTorch through array-api-compat (which gives torch the array API
standard's function names). `torch` runs on PyTorch's CPU, `torch:cuda` / `torch:cuda:N` on a
GPU. Present only when torch and array-api-compat import (and, for torch:cuda, a GPU is
visible)."""

import numpy as np

from autograph.runtime.devices import Device, DeviceUnavailable


def _import():
    try:
        import torch
    except ImportError:
        raise DeviceUnavailable(
            "PyTorch not installed (pip install -e '.[torch]' from a clone)") from None
    try:
        from array_api_compat import torch as xp
    except ImportError:
        raise DeviceUnavailable(
            "array-api-compat not installed (pip install array-api-compat)") from None
    return torch, xp


def names():
    names = ["torch", "torch:cuda"]
    try:
        torch, _ = _import()
        names += [f"torch:cuda:{i}" for i in range(1, torch.cuda.device_count())]
    except DeviceUnavailable:
        pass
    return names


def name_of(array):
    dev = array.device
    if dev.type == "cpu":
        return "torch"
    if dev.type == "cuda":
        return "torch:cuda" if not dev.index else f"torch:cuda:{dev.index}"
    return f"torch:{dev.type}"


def _torch_device(name, torch):
    tail = name[len("torch"):].lstrip(":")
    if tail in ("", "cpu"):
        return torch.device("cpu")
    if tail == "cuda" or tail == "cuda:0":
        if not torch.cuda.is_available():
            raise DeviceUnavailable("PyTorch sees no CUDA GPU")
        return torch.device("cuda", 0)
    try:
        dev = torch.device(tail)
    except RuntimeError:
        raise DeviceUnavailable(f"PyTorch has no device {tail!r}") from None
    if dev.type == "cuda" and (dev.index or 0) >= torch.cuda.device_count():
        raise DeviceUnavailable(f"PyTorch sees {torch.cuda.device_count()} CUDA GPU(s)")
    return dev


def create(name):
    torch, xp = _import()
    where = _torch_device(name, torch)
    canonical = name_of(torch.empty(0, device=where)) if where.type != "cpu" else "torch"

    def to_device(a):
        if isinstance(a, torch.Tensor):
            return a if a.device == where else a.to(where)
        a = np.asarray(a)
        if not a.flags.writeable or not a.flags.c_contiguous:
            a = np.array(a, order="C")   # a copy; np.ascontiguousarray would make 0-d 1-d
        return torch.from_numpy(a).to(where) if where.type != "cpu" else torch.from_numpy(a)

    def to_host(a):
        if isinstance(a, torch.Tensor):
            return a.detach().cpu().numpy()
        return np.asarray(a)

    def synchronize():
        if where.type == "cuda":
            torch.cuda.synchronize(where)

    # off the CPU, factory functions in kernels (xp.zeros, xp.arange) must allocate on the
    # device too: a torch.device is a context manager that makes it their default
    activate = None if where.type == "cpu" else where
    return Device(canonical, xp, to_device, to_host, synchronize, array_types=(torch.Tensor,),
                  owns_array=lambda a: a.device == where,
                  description=f"PyTorch {torch.__version__} on {where}", activate=activate)
