"""Compiled loops of the multi-class sampler (:mod:`isbetter.models.f1_multiclass`).

The random variates are drawn by NumPy (``numpy.random.Generator``); these numba
functions only add them up: each variate belongs to one joint-outcome cell
``c = (j * m + k) * m + l`` (true class j, A predicts k, B predicts l), and adds to
row j (both systems), A's column k, B's column l, and to A's (B's) true positives of
class j when k = j (l = j). Writing these six sums of each draw directly replaces
scattering the variates into two m x m tables per draw and summing those.

Importing this module compiles (or loads from numba's on-disk cache) both functions,
so it is imported only when draws are made, never by ``import isbetter``. Both
release the GIL: the sampler's threads run them in parallel.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["add_cells", "add_series"]

# out[side, what, class, draw]: side 0 = A, 1 = B; what 0 = tp, 1 = row, 2 = column.
# Explicit signatures with layout "A" (any strides): `out` is often a view of a block.
_OUT = "float64[:, :, :, :]"


@numba.njit(f"void(float64[:, :], int64[:], int64, {_OUT})", nogil=True, cache=True)
def add_cells(values: np.ndarray, cells: np.ndarray, m: int, out: np.ndarray) -> None:
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


@numba.njit(f"void(int64[:], float64[:], int32[:], int32[:], {_OUT})", nogil=True, cache=True)
def add_series(
    counts: np.ndarray, terms: np.ndarray, cells: np.ndarray, jkl: np.ndarray, out: np.ndarray
) -> None:
    """Add the series terms to the sums: draw d has the next ``counts[d]`` terms and cells.

    ``jkl[c]`` is cell c's ``j << 20 | k << 10 | l``: one look-up is much cheaper than
    three integer divisions per term. Row sums are added to A's only (``out[0, 1]``);
    the caller copies them to B's.
    """
    m = out.shape[2]
    acc = np.zeros(5 * m)  # one draw's sums: tp A, tp B, row, column A, column B
    t = 0
    for d in range(counts.size):
        acc[:] = 0.0
        for _ in range(counts[d]):
            v, p = terms[t], jkl[cells[t]]
            t += 1
            j, ka, kb = p >> 20, (p >> 10) & 1023, p & 1023
            acc[2 * m + j] += v
            acc[3 * m + ka] += v
            acc[4 * m + kb] += v
            if ka == j:
                acc[j] += v
            if kb == j:
                acc[m + j] += v
        for i in range(m):
            out[0, 0, i, d] += acc[i]
            out[1, 0, i, d] += acc[m + i]
            out[0, 1, i, d] += acc[2 * m + i]
            out[0, 2, i, d] += acc[3 * m + i]
            out[1, 2, i, d] += acc[4 * m + i]
