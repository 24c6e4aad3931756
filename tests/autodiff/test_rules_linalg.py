"""VJP rules of numpy.linalg primitives (and diagonal/tril/triu) against float64 central
differences, batched, with second order for a subset. Only the triangle NumPy reads
matters for cholesky/eigh: the finite differences perturb the whole matrix, so the rules
must give the unread triangle a zero cotangent."""

import numpy as np
import pytest

from tests.autodiff.harness import check_vjp

rng = np.random.default_rng(2)
A = rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)
B = rng.standard_normal((2, 3, 2))
S = A @ np.swapaxes(A, -1, -2) + np.eye(3)
R = rng.standard_normal((4, 3))
W = np.arange(1.0, 4.0)

CASES = {
    "inv": (lambda a: np.linalg.inv(a), A, 2),
    "det": (lambda a: np.linalg.det(a), A, 2),
    "solve": (lambda a, b: np.linalg.solve(a, b), (A, B), 2),
    "solve_vector": (lambda a, b: np.linalg.solve(a[0], b[0, :, 0]), (A, B), 2),
    "slogdet": (lambda a: np.linalg.slogdet(a)[1], A, 2),
    "cholesky": (lambda s: np.linalg.cholesky(s), S, 1),
    "eigh_values": (lambda s: np.linalg.eigh(s)[0], S, 1),
    "eigh_vectors": (lambda s: np.abs(np.linalg.eigh(s)[1]) * W, S, 1),
    "eigh_upper": (lambda s: np.linalg.eigh(s, UPLO="U")[0], S, 1),
    "eigvalsh": (lambda s: np.linalg.eigvalsh(s), S, 1),
    "svdvals": (lambda r: np.linalg.svd(r, compute_uv=False), R, 1),
    "svd_s": (lambda r: np.linalg.svd(r)[1] * W, R, 1),
    # singular vectors: losses that do not change when a pair (u_i, v_i) flips sign
    "svd_polar": (lambda r: np.linalg.svd(r, full_matrices=False)[0]
                  @ np.linalg.svd(r, full_matrices=False)[2] * W, R, 2),
    "svd_vectors": (lambda r: np.linalg.svd(r, full_matrices=False)[0] ** 2 * W
                    + np.sum(np.linalg.svd(r, full_matrices=False)[2] ** 2 * R[:3], 0), R, 1),
    "svd_wide": (lambda r: np.linalg.svd(r.T, full_matrices=False)[2] ** 2, R, 1),
    "svd_batched_square": (lambda a: np.linalg.svd(a)[0] ** 2 + np.linalg.svd(a)[2] ** 4
                           + np.linalg.svd(a)[1][..., None], A, 1),
    "norm_nuc": (lambda r: np.linalg.norm(r, "nuc"), R, 1),
    "pinv": (lambda r: np.linalg.pinv(r), R, 2),
    "pinv_wide": (lambda r: np.linalg.pinv(r.T) ** 2, R, 1),
    "lstsq": (lambda r, b: np.linalg.lstsq(r, b[0, :, 0].repeat(2)[:4])[0], (R, B), 1),
    "lstsq_matrix": (lambda r, b: np.linalg.lstsq(r, np.ones((4, 2)) + r[:, :2] * b[0, 0, 0])[0]
                     + np.linalg.lstsq(r, r[:, 0])[3][:, None], (R, B), 1),
    "qr": (lambda r: np.linalg.qr(r)[0][:3] * 2 + np.linalg.qr(r)[1] ** 2, R, 1),
    "qr_r": (lambda r: np.linalg.qr(r, mode="r") ** 2, R, 1),
    "qr_square": (lambda a: np.linalg.qr(a, mode="complete")[0] * W, A[0], 1),
    "diagonal": (lambda a: np.diagonal(a, axis1=1, axis2=2) ** 2, A, 2),
    "diagonal_offset": (lambda r: np.diagonal(r, 1) ** 2 + np.sum(np.diagonal(r, -2)), R, 2),
    "trace": (lambda a: np.trace(a[0]) * np.trace(a[1] ** 2), A, 2),
    "tril_triu": (lambda a: np.tril(a, -1) * 2 + np.triu(a ** 2, 1), A, 2),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_linalg(name):
    f, args, order = CASES[name]
    args = args if isinstance(args, tuple) else (args,)
    check_vjp(f, *args, order=order, h=1e-4)


def test_complex_inverse_is_holomorphic():
    z = A[0] + 1j * rng.standard_normal((3, 3))
    check_vjp(lambda a: np.linalg.inv(a) @ a @ a, z, order=2, h=1e-4)


@pytest.mark.parametrize("f, what", [
    (lambda a: np.linalg.qr(a[:2])[1], "qr"), (lambda a: np.linalg.svd(a[:2])[2], "svd"),
    (lambda a: np.linalg.cholesky(a * (1 + 0j)), "cholesky"),
], ids=["qr_wide", "svd_wide_full_vh", "complex_cholesky"])
def test_unsupported_rules_say_so(f, what):
    with pytest.raises(NotImplementedError, match=f"numpy.linalg.{what}"):
        check_vjp(f, S[0])
