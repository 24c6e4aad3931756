"""Histograms of several variables composed from the covered NumPy functions (NumPy on
tensors): histogramdd, histogram2d.
"""

import numpy as np

from autograph.runtime.numpy.elementwise import as_tensor


def _t(x):
    return as_tensor(x)


builtins_range = range


def _static(shape, what):
    if shape is None or None in shape:
        raise NotImplementedError(f"{what} needs the shape known while tracing")
    return tuple(shape)


def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """Each dimension binned as numpy.histogram bins it; the counts of the combined bin."""
    s = _t(sample)
    if isinstance(sample, (list, tuple)):
        s = np.stack([_t(c) for c in sample], axis=-1)
    if len(s.shape) == 1:
        s = s[:, None]
    d = _static(s.shape[1:], "numpy.histogramdd")[0]
    nbins = [bins] * d if isinstance(bins, (int, np.integer)) else list(bins)
    if not all(isinstance(b, (int, np.integer)) for b in nbins):
        raise NotImplementedError("numpy.histogramdd: bins must be ints while tracing")
    ranges = [None] * d if range is None else list(range)
    edges, flat, inside = [], None, None
    for i in builtins_range(d):
        col = s[:, i]
        _, e = np.histogram(col, nbins[i], ranges[i])
        edges.append(e)
        idx = np.searchsorted(e, col, side="right") - 1
        idx = np.where(col == e[-1], nbins[i] - 1, idx)
        ok = (idx >= 0) & (idx < nbins[i])
        inside = ok if inside is None else inside & ok
        idx = np.clip(idx, 0, nbins[i] - 1)
        flat = idx if flat is None else flat * nbins[i] + idx
    total = int(np.prod(nbins))
    w = np.ones(np.shape(flat), np.float64) if weights is None else _t(weights)
    w = np.where(inside, w, 0)
    hits = (flat[:, None] == np.arange(total)[None, :])
    counts = np.sum(np.where(hits, w[:, None], 0), axis=0).astype(
        np.result_type(w.dtype, np.float64))
    hist = np.reshape(counts, tuple(nbins))
    if density:
        widths = np.ones((), np.float64)
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = nbins[i]
            widths = widths * np.reshape(np.diff(e), shape)
        hist = hist / np.sum(hist) / widths
    return hist, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    hist, edges = histogramdd(np.stack([_t(x), _t(y)], axis=-1), bins, range, density,
                              weights)
    return hist, edges[0], edges[1]
