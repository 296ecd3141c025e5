"""Compiled loops of the multi-class sampler (:mod:`isbetter.models.f1_multiclass`).

The random variates are drawn by NumPy (``numpy.random.Generator``); these numba
functions only add them up. Each variate belongs to one joint-outcome cell
``c = (j * m + k) * m + l`` (true class j, A predicts k, B predicts l) and adds to
row j (both systems), A's column k, B's column l, and to A's (B's) true positives of
class j when k = j (l = j): the only sums the measures need. The variates of the
non-empty cells (the same cells in every draw) go straight to these sums; the series
terms (random cells) first into one draw's two m x m confusion matrices.

:func:`kernels` compiles both functions on first use on a machine and loads them
from isbetter's cache (:mod:`isbetter.cache`) after; this module imports numba, so
it is imported only when draws are made, never by ``import isbetter``. Both
release the GIL: the sampler's threads run them in parallel.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["kernels"]

# out[side, what, class, draw]: side 0 = A, 1 = B; what 0 = tp, 1 = row, 2 = column.
# Explicit signatures with layout "A" (any strides): `out` is often a view of a block.
_OUT = "float64[:, :, :, :]"


_SIGNATURES = {
    "add_cells": f"void(float64[:, :], int64[:], int64, {_OUT})",
    "add_series": f"void(int64[:], float64[:], int32[:], int32[:, :], {_OUT})",
}


def kernels() -> dict[str, object]:
    """Return the compiled ``add_cells`` and ``add_series`` (from isbetter's cache)."""
    from isbetter import cache

    return cache.compiled("f1_multiclass", _build, lambda _: None)


def _build() -> dict[str, object]:
    # explicit signatures: compiled (or loaded) here, nothing left for a warm-up
    return {
        name: numba.njit(signature, nogil=True, cache=True)(globals()[f"_{name}"])
        for name, signature in _SIGNATURES.items()
    }


def _add_cells(values: np.ndarray, cells: np.ndarray, m: int, out: np.ndarray) -> None:
    """Add ``values[i, d]`` (a variate of cell ``cells[i]`` in draw d) to the sums in `out`."""
    size = values.shape[1]
    for i in range(cells.size):
        c = cells[i]
        j, ka, kb = c // (m * m), (c // m) % m, c % m  # truth, A's and B's predictions
        for d in range(size):
            v = values[i, d]
            out[0, 1, j, d] += v
            out[0, 2, ka, d] += v
            out[1, 2, kb, d] += v
            if ka == j:
                out[0, 0, j, d] += v
            if kb == j:
                out[1, 0, j, d] += v


def _add_series(
    counts: np.ndarray, terms: np.ndarray, cells: np.ndarray, entry: np.ndarray, out: np.ndarray
) -> None:
    """Add the series terms to the sums: draw d has the next ``counts[d]`` terms and cells.

    ``entry[0, c]`` and ``entry[1, c]`` are cell c's entries ``j * m + k`` of A's and
    ``j * m + l`` of B's confusion matrix. The terms of a draw go into the two m x m
    matrices (two additions per term), whose diagonals, row and column sums are then
    added to `out`. Row sums are added to A's only (``out[0, 1]``); the caller copies
    them to B's.
    """
    m = out.shape[2]
    mm = m * m
    conf = np.zeros(2 * mm)  # one draw's confusion matrices of A and B
    col = np.zeros(2 * m)
    t = 0
    for d in range(counts.size):
        conf[:] = 0.0
        for _ in range(counts[d]):
            v, c = terms[t], cells[t]
            t += 1
            conf[entry[0, c]] += v
            conf[mm + entry[1, c]] += v
        col[:] = 0.0
        for j in range(m):
            row = 0.0
            for k in range(m):
                x = conf[j * m + k]
                row += x
                col[k] += x
                col[m + k] += conf[mm + j * m + k]
            out[0, 1, j, d] += row
            out[0, 0, j, d] += conf[j * m + j]
            out[1, 0, j, d] += conf[mm + j * m + j]
        for k in range(m):
            out[0, 2, k, d] += col[k]
            out[1, 2, k, d] += col[m + k]
