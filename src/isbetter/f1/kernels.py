"""Compiled sampler of the multi-class model (:mod:`isbetter.f1.multiclass`).

One numba function draws a chunk of posterior draws: every random variate comes from
the ``numpy.random.Generator`` passed in (numba runs NumPy's own algorithms on its
bit generator), and goes straight into the only sums the measures need. Each
variate belongs to one joint-outcome cell ``c = (j * m + k) * m + l`` (true class j,
A predicts k, B predicts l) and adds to five of them: row j (the same for both
systems), A's column k, B's column l, and A's (B's) true positives of class j when
k = j (l = j). ``slots[c]`` lists those five places in a draw's accumulator of
``5 m + 1`` sums (the last one collects the true positives that are not: k != j).

:func:`kernels` compiles it on first use on a machine and loads it from isbetter's
cache (:mod:`isbetter.core.cache`) after; this module imports numba, so it is imported
only when draws are made, never by ``import isbetter``. It releases the GIL: the
sampler's threads run it in parallel, each chunk with its own Generator.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["kernels", "slots"]

#: Places a cell's variate adds to, per draw: row j, A's column k, B's column l,
#: A's and B's true positives of class j (or the discarded last place).
SLOTS = 5

# out[side, what, class, draw]: side 0 = A, 1 = B; what 0 = tp, 1 = row, 2 = column.
# The signature's arrays have layout "A" (any strides): `out` is often a view of a block.


def kernels() -> dict[str, object]:
    """Return the compiled ``draw_chunk`` (from isbetter's cache)."""
    from isbetter.core import cache

    return cache.compiled("f1_multiclass", _build, lambda _: None)


def _build(on_disk: bool) -> dict[str, object]:
    # explicit signature: compiled (or loaded) here, nothing left for a warm-up
    generator = numba.typeof(np.random.Generator(np.random.SFC64(0)))
    signature = numba.void(
        generator,
        numba.types.Array(numba.int32, 2, "A"),  # slots of the count columns
        numba.types.Array(numba.float64, 1, "A"),  # their Gamma shapes
        numba.types.Array(numba.int32, 1, "A"),  # n > 0: Gamma(n) as n Exp(1) variates
        numba.types.Array(numba.int32, 2, "A"),  # slots of every cell (the series)
        numba.float64,  # expected series terms per draw
        numba.float64,  # series cut-off log(1 / s0)
        numba.types.Array(numba.float64, 4, "A"),  # out
    )
    return {"draw_chunk": numba.njit(signature, nogil=True, cache=on_disk)(_draw_chunk)}


def slots(cells: np.ndarray, m: int) -> np.ndarray:
    """Return the five accumulator places of each cell in `cells` (int32, shape (n, 5))."""
    cells = np.asarray(cells, dtype=np.int64)
    j, k, el = cells // (m * m), (cells // m) % m, cells % m
    nothing = SLOTS * m  # the accumulator's last place, never read
    tp_a = np.where(k == j, 3 * m + j, nothing)
    tp_b = np.where(el == j, 4 * m + j, nothing)
    return np.stack([j, m + k, 2 * m + el, tp_a, tp_b], axis=1).astype(np.int32)


def _draw_chunk(
    rng: np.random.Generator,
    column_slots: np.ndarray,
    shapes: np.ndarray,
    units: np.ndarray,
    cell_slots: np.ndarray,
    terms: float,
    cut: float,
    out: np.ndarray,
) -> None:
    """Draw ``out.shape[-1]`` draws into `out` (tp, row and column sums of A and B).

    Per draw: one Gamma(shape) variate per count column (the sum of ``units``
    Exp(1) variates where that is > 0); then, if ``terms > 0``, Poisson(terms) series
    terms ``s0**V * E`` (V uniform, E ~ Exp(1)), each in a uniformly random cell:
    ``floor(U * n_cells)`` with U one of NumPy's 2**53 equally spaced uniforms, so a
    cell's probability is ``1 / n_cells`` to within a relative ``n_cells * 2**-53``
    (exactly when ``n_cells`` is a power of 2; numba's ``integers`` is 6x slower).
    """
    m = out.shape[2]
    n_cells = cell_slots.shape[0]
    acc = np.empty(SLOTS * m + 1)
    for d in range(out.shape[3]):
        acc[:] = 0.0
        for i in range(shapes.size):
            if units[i] > 0:
                v = 0.0
                for _ in range(units[i]):
                    v += rng.standard_exponential()
            else:
                v = rng.standard_gamma(shapes[i])
            for s in range(SLOTS):
                acc[column_slots[i, s]] += v
        if terms > 0.0:
            for _ in range(rng.poisson(terms)):
                v = np.exp(-cut * rng.random()) * rng.standard_exponential()
                c = int(rng.random() * n_cells)
                for s in range(SLOTS):
                    acc[cell_slots[c, s]] += v
        for j in range(m):
            out[0, 0, j, d] = acc[3 * m + j]
            out[1, 0, j, d] = acc[4 * m + j]
            out[0, 1, j, d] = acc[j]
            out[1, 1, j, d] = acc[j]
            out[0, 2, j, d] = acc[m + j]
            out[1, 2, j, d] = acc[2 * m + j]
