"""Set operations composed from the covered NumPy functions (NumPy on tensors): union1d,
intersect1d, setdiff1d, setxor1d and the array API's unique_values/counts/inverse/all. Their
length depends on the data, so it is unknown while tracing.
"""

import numpy as np

from autograph.runtime.numpy.elementwise import as_tensor


def _t(x):
    return as_tensor(x)


def union1d(ar1, ar2):
    return np.unique(np.concatenate([np.ravel(_t(ar1)), np.ravel(_t(ar2))]))


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    if return_indices:
        raise NotImplementedError("numpy.intersect1d(return_indices=True) is not supported "
                                  "while tracing")
    a, b = _t(ar1), _t(ar2)
    dtype = np.result_type(a.dtype, b.dtype)
    ua = np.unique(a).astype(dtype)
    return ua[np.isin(ua, b)]


def setdiff1d(ar1, ar2, assume_unique=False):
    a = np.ravel(_t(ar1)) if assume_unique else np.unique(_t(ar1))
    return a[np.isin(a, _t(ar2), invert=True)]


def setxor1d(ar1, ar2, assume_unique=False):
    a, b = _t(ar1), _t(ar2)
    if not assume_unique:
        a, b = np.unique(a), np.unique(b)
    aux = np.sort(np.concatenate([np.ravel(a), np.ravel(b)]))
    edge = np.ones((1,), dtype=bool)
    flag = np.concatenate([edge, aux[1:] != aux[:-1], edge])
    return aux[flag[1:] & flag[:-1]]


def _unique_results():
    from numpy.lib import _arraysetops_impl as impl
    return impl


def unique_values(x):
    return np.unique(_t(x))


def unique_counts(x):
    values, counts = np.unique(_t(x), return_counts=True)
    return _unique_results().UniqueCountsResult(values, counts)


def unique_inverse(x):
    t = _t(x)
    values, inverse = np.unique(t, return_inverse=True)
    return _unique_results().UniqueInverseResult(values, np.reshape(inverse, t.shape))


def unique_all(x):
    t = _t(x)
    values, index, inverse, counts = np.unique(t, True, True, True)
    return _unique_results().UniqueAllResult(values, index, np.reshape(inverse, t.shape),
                                             counts)
