"""Flush-to-zero for subnormal floats: the floating-point unit's FTZ and DAZ modes.

A float smaller than the smallest normal number (2.2e-308 for float64, 1.2e-38 for
float32) is *subnormal*, and x86 cores compute with such numbers through a microcode
assist 10-100x slower than normal arithmetic. A decaying recurrence (an RNN's gradient
flowing back through thousands of steps, an exponential moving average of nothing) can
spend most of its time there. XLA and TensorFlow run their computations with the FPU told
to flush subnormal results to zero (FTZ) and to read subnormal inputs as zero (DAZ);
NumPy never does. `ag.config.flush_denormals(True)` does the same for the calling thread.

The modes are bits of the thread's floating-point control register: MXCSR on x86-64 (FTZ
bit 15, DAZ bit 6), FPCR on ARM64 (FZ bit 24, which does both). They are read and written
through the C library's `fegetenv`/`fesetenv` (ctypes): the environment is read, the bits
set, and the whole environment written back, so rounding mode and exception masks stay as
they were; `restore` writes back the environment saved before. On Windows the C runtime's
`_controlfp` sets its `_DN_FLUSH` mode. Elsewhere `set_flush` raises NotImplementedError.
"""

import ctypes
import ctypes.util
import platform
import sys

_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86")
_ARM64 = platform.machine().lower() in ("aarch64", "arm64")

# (fenv_t size in bytes, byte offset of the control register, its width, the flush bits)
if sys.platform.startswith("linux") and _X86:
    _LAYOUT = (32, 28, 4, 0x8040)          # glibc: x87 environment (28 bytes), then MXCSR
elif sys.platform.startswith("linux") and _ARM64:
    _LAYOUT = (8, 0, 4, 1 << 24)           # glibc: fpcr, fpsr
elif sys.platform == "darwin" and _X86:
    _LAYOUT = (16, 4, 4, 0x8040)           # control, status (16 bits each), mxcsr
elif sys.platform == "darwin" and _ARM64:
    _LAYOUT = (16, 8, 8, 1 << 24)          # fpsr, fpcr (64 bits each)
else:
    _LAYOUT = None

_libm = None


def _c_library():
    global _libm
    if _libm is None:
        if sys.platform == "darwin":
            _libm = ctypes.CDLL("libSystem.dylib")
        else:
            try:
                _libm = ctypes.CDLL("libm.so.6")
            except OSError:
                _libm = ctypes.CDLL(ctypes.util.find_library("m"))
        for name in ("fegetenv", "fesetenv"):
            getattr(_libm, name).argtypes = [ctypes.c_void_p]
            getattr(_libm, name).restype = ctypes.c_int
    return _libm


def supported():
    """Whether this platform's flush mode can be set (x86-64 or ARM64 on Linux and macOS,
    and Windows)."""
    return _LAYOUT is not None or sys.platform == "win32"


def _windows_controlfp(new, mask):
    crt = ctypes.cdll.msvcrt
    crt._controlfp.argtypes = [ctypes.c_uint, ctypes.c_uint]
    crt._controlfp.restype = ctypes.c_uint
    return crt._controlfp(new, mask)


_DN_FLUSH, _MCW_DN = 0x01000000, 0x03000000


def save():
    """The calling thread's floating-point environment, for `restore`."""
    if sys.platform == "win32":
        return _windows_controlfp(0, 0)
    if _LAYOUT is None:
        raise NotImplementedError(_UNSUPPORTED)
    env = ctypes.create_string_buffer(_LAYOUT[0] + 64)   # (room to spare for the C library)
    if _c_library().fegetenv(env):
        raise OSError("fegetenv failed")
    return env.raw


def restore(saved):
    """Write back an environment `save` returned (on this thread)."""
    if sys.platform == "win32":
        _windows_controlfp(saved & _MCW_DN, _MCW_DN)
        return
    env = ctypes.create_string_buffer(saved, len(saved))
    if _c_library().fesetenv(env):
        raise OSError("fesetenv failed")


def set_flush(on):
    """Set (True) or clear (False) flush-to-zero and denormals-are-zero on this thread."""
    if sys.platform == "win32":
        _windows_controlfp(_DN_FLUSH if on else 0, _MCW_DN)
        return
    saved = save()
    size, offset, width, bits = _LAYOUT
    word = int.from_bytes(saved[offset:offset + width], sys.byteorder)
    word = word | bits if on else word & ~bits
    env = saved[:offset] + word.to_bytes(width, sys.byteorder) + saved[offset + width:]
    restore(env)


def flushing():
    """Whether this thread flushes subnormal results to zero now."""
    if sys.platform == "win32":
        return bool(_windows_controlfp(0, 0) & _DN_FLUSH)
    saved = save()
    size, offset, width, bits = _LAYOUT
    return bool(int.from_bytes(saved[offset:offset + width], sys.byteorder) & bits)


_UNSUPPORTED = (f"flushing subnormal floats to zero is not supported on "
                f"{sys.platform}/{platform.machine()} (supported: x86-64 and ARM64 on Linux "
                f"and macOS, Windows)")
