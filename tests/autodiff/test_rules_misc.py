"""VJP rules of numpy.fft (JAX's complex convention), bincount weights, polymul, einsum
and statistics composites against float64 central differences."""

import numpy as np
import pytest

from tests.autodiff.harness import check_vjp

rng = np.random.default_rng(3)
X = rng.standard_normal((3, 8))
Z = rng.standard_normal((3, 8)) + 1j * rng.standard_normal((3, 8))
H = rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))

FFT = {
    "fft": (lambda z: np.fft.fft(z), Z), "ifft": (lambda z: np.fft.ifft(z, axis=0), Z),
    "fft_n": (lambda z: np.fft.fft(z, n=5), Z), "fft_pad": (lambda z: np.fft.fft(z, n=11), Z),
    "fft_ortho": (lambda z: np.fft.fft(z, norm="ortho"), Z),
    "fft_real_input": (lambda x: np.fft.fft(x), X),
    "rfft": (lambda x: np.fft.rfft(x), X), "rfft_odd": (lambda x: np.fft.rfft(x, n=7), X),
    "rfft_forward": (lambda x: np.fft.rfft(x, norm="forward", axis=0), X),
    "irfft": (lambda h: np.fft.irfft(h), H), "irfft_odd": (lambda h: np.fft.irfft(h, n=9), H),
    "irfft_ortho": (lambda h: np.fft.irfft(h, n=6, norm="ortho"), H),
    "hfft": (lambda h: np.fft.hfft(h), H), "ihfft": (lambda x: np.fft.ihfft(x), X),
    "fft2": (lambda z: np.fft.fft2(z), Z), "ifftn": (lambda z: np.fft.ifftn(z, s=(2, 8), axes=(0, 1)), Z),
    "rfft2": (lambda x: np.fft.rfft2(x), X), "rfftn_s": (lambda x: np.fft.rfftn(x, s=(4, 6), axes=(0, 1)), X),
    "irfft2": (lambda h: np.fft.irfft2(h), H),
    "irfftn_ortho": (lambda h: np.fft.irfftn(h, s=(2, 7), axes=(0, 1), norm="ortho"), H),
    "fftshift": (lambda z: np.fft.fftshift(np.fft.fft(z)), Z),
}


@pytest.mark.parametrize("name", sorted(FFT))
def test_fft(name):
    f, arg = FFT[name]
    check_vjp(f, arg, order=2 if name in ("fft", "rfft", "irfft") else 1)


def test_bincount_weights():
    idx = np.array([0, 3, 3, 1, 0])
    check_vjp(lambda w, i: np.bincount(i, weights=w ** 2), X[0, :5], idx, wrt=[0])


def test_polymul():
    check_vjp(lambda a, b: np.polymul(a, b) ** 2, X[0, :4] + 3.0, X[1, :3] + 3.0, order=2)


def test_einsum_and_statistics():
    check_vjp(lambda x: np.einsum("ij,kj->ik", x, x ** 2), X, order=2)
    check_vjp(lambda x: np.quantile(x, 0.3, axis=1), X, h=1e-5)
