"""Micro- and macro-averaged measures of two multi-class classifiers, jointly (paired).

For single-label classification into M classes, every document has a joint
outcome (true class j, prediction of A k, prediction of B l): one of M^3 cells.
The paired model extends Zhang et al.'s (2016, section 5, "Multiple classes")
binary model to these cells:

    phi ~ Dirichlet(alpha 1_{M^3}),     counts ~ Multinomial(N, phi)

and the posterior is again exact: ``phi | data ~ Dirichlet(alpha + counts)``. From a
draw of ``phi`` follow both classifiers' confusion matrices (A: sum over l, B: sum
over k), each class's one-vs-rest cells (tp, fp, fn, tn), and so

* the **micro-averaged** measure, the measure of the pooled cells (for F1 of
  single-label classification this is the accuracy);
* the **macro-averaged** measure, the mean of the per-class measures.

**Prior.** A flat Dirichlet (alpha = 1 per cell) puts M^3 pseudo-documents on the
table: 8 000 for 20 classes, more than many test sets. The default here is
``alpha = 1 / M^2`` per cell, a total prior mass of M: by the aggregation property
the class proportions get a flat ``Dirichlet(1, ..., 1)`` prior (as ``mu ~ Beta(1, 1)``
in the binary model), and each class's M^2 joint predictions share one
pseudo-document. The prior is settable (`alpha`).

This is the flat-cell model of Zhang et al. (2016, §3); the hierarchical model of Zhang et al.
(ICDM 2015), which ties the confusion-matrix rows together through an overall
tendency to predict correctly, is fitted by MCMC in :mod:`isbetter.f1.icdm`.

**Sampler.** Only the two confusion matrices are needed, never the M^3 cells of a
draw. Each cell's ``Gamma(count + alpha)`` variate is split into a count part
``Gamma(count)``, drawn directly (about one variate per non-zero cell), and a prior
part ``Gamma(alpha)``. The prior parts of all M^3 cells together are a gamma process,
drawn with Bondesson's series: about ``M * 40`` terms per draw (650 to 820 for 20
classes) instead of 8 000 small-shape Gamma variates. The terms left out weigh less
than the unit roundoff of double precision relative to the total (with probability
``1 - 2**-53`` per draw; see :func:`sample_average_delta`), so the draws are those of
the exact posterior in double precision. One compiled function
(:mod:`isbetter.f1.kernels`) draws every variate of a chunk of draws from
that chunk's ``numpy.random.Generator`` (NumPy's algorithms, run by numba) and adds
it to the sums of its cell's class (row, columns and true positives of A and B), the
only statistics the measures need. Each chunk of draws has its own random stream;
blocks of chunks run on threads, and the draws do not depend on their number.

Exchanging A and B transposes the cells (j, k, l) -> (j, l, k). The sampler works on
one orientation of the table (the one whose first asymmetric cell favours A) and
swaps the roles of A and B back afterwards, so the random stream does not depend on
which system is called A: the exchange negates the draws exactly (same seed) unless
the table is itself symmetric.

References
----------
.. [1] Zhang, Wang, Yilmaz, Wang, Zhou (2016). Bayesian performance comparison of
   text classifiers. SIGIR. Section 5.
.. [2] Zhang, Wang, Zhao, Wang (2015). A Bayesian hierarchical model for comparing
   average F1 scores. ICDM.
.. [3] Bondesson (1982). On simulation from infinitely divisible distributions.
   Advances in Applied Probability 14(4), 855-869.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import gammainccinv, gammaincinv

from isbetter.core.errors import InputError
from isbetter.f1.measures import Measure
from isbetter.f1.paired import orientation

__all__ = ["joint_cells", "macro_micro", "sample_average_delta"]

#: Bound on the neglected prior mass of a draw relative to its total: the unit
#: roundoff of double precision.
_EPS = 2.0**-53
#: Probability per draw that the neglected mass exceeds that bound.
_DELTA = 2.0**-53
#: The series is used when its expected number of terms per draw is at most this
#: many times the number of cells (otherwise every cell gets its own Gamma variate).
_SERIES_TERMS_PER_CELL = 1.0
#: Random variates per chunk of draws (one random stream each), about: enough work per
#: call of the compiled sampler that the Python around it does not count.
_CHUNK_VARIATES = 2**18
#: Draws summarised at once (one task of a thread).
_BLOCK_DRAWS = 1024
#: Random streams: one per chunk of draws.
_BIT_GENERATOR = np.random.SFC64
#: Counts up to this are drawn as sums of Exp(1) variates (cheaper than one Gamma).
_EXP_SUM_MAX = 5


def joint_cells(gold_idx: np.ndarray, a_idx: np.ndarray, b_idx: np.ndarray, m: int) -> np.ndarray:
    """Count the joint outcomes (true j, A predicts k, B predicts l), shape (m, m, m).

    Examples
    --------
    >>> import numpy as np
    >>> c = joint_cells(np.array([0, 1, 2]), np.array([0, 1, 1]), np.array([0, 2, 2]), 3)
    >>> int(c[0, 0, 0]), int(c[1, 1, 2]), int(c[2, 1, 2]), int(c.sum())
    (1, 1, 1, 3)
    """
    flat = (gold_idx * m + a_idx) * m + b_idx
    return np.bincount(flat, minlength=m**3).reshape(m, m, m).astype(np.int64)


def _one_vs_rest(conf: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per-class (tp, fp, fn, tn) from confusion matrices of shape (..., m, m), rows = truth."""
    tp = np.diagonal(conf, axis1=-2, axis2=-1)
    row = conf.sum(axis=-1)
    col = conf.sum(axis=-2)
    total = row.sum(axis=-1, keepdims=True)
    fn = row - tp
    fp = col - tp
    return tp, fp, fn, total - tp - fp - fn


def macro_micro(conf: np.ndarray, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """Macro- and micro-averaged `measure` of confusion matrices (counts or rates).

    Examples
    --------
    >>> import numpy as np
    >>> from isbetter.f1.measures import f1
    >>> conf = np.array([[8, 2], [1, 9]])
    >>> [round(float(x), 4) for x in macro_micro(conf, f1)]
    [0.8496, 0.85]
    """
    tp, fp, fn, tn = _one_vs_rest(np.asarray(conf, dtype=float))
    macro = measure(tp, fp, fn, tn).mean(axis=-1)
    micro = measure(tp.sum(-1), fp.sum(-1), fn.sum(-1), tn.sum(-1))
    return macro, micro


@dataclass(frozen=True)
class _Plan:
    """What every chunk of draws needs: the table's cells mapped onto the two matrices."""

    m: int
    flipped: bool  # the sampler works on cells.transpose(0, 2, 1): A and B exchanged
    cut: float  # series terms with s = exp(-cut * V) > exp(-cut) are drawn (0: no series)
    terms: float  # expected series terms per draw: prior mass times `cut`
    columns: np.ndarray  # int64: the cells (j * m + k) * m + l with a variate in a draw
    shapes: np.ndarray  # float64: its Gamma shape
    units: np.ndarray  # int32: n > 0 draws Gamma(n) as a sum of n Exp(1) variates, 0 not
    column_slots: np.ndarray  # int32 (columns, 5): where each variate adds (_f1_kernels)
    cell_slots: np.ndarray  # int32 (m^3, 5): the same for every cell (series terms only)
    chunk: int  # draws generated together with one random stream
    block: int  # draws summarised together (a multiple of `chunk`; one task of a thread)


def _series_cut(prior_mass: float, n: float) -> float:
    """Return ``log(1 / s0)`` of the series cut-off (``inf`` if it would underflow).

    With ``g`` the upper and ``q`` the lower ``_DELTA / 2`` quantiles of
    ``Gamma(prior_mass)`` (the left-out sum, divided by ``s0``) and of
    ``Gamma(n + prior_mass)`` (the total), ``s0 = _EPS q / ((1 + _EPS) g)``.
    """
    # The terms left out sum to exactly s0 G', G' ~ Gamma(prior_mass), independent of
    # the drawn ones; the drawn total is T' = T - s0 G' with T ~ Gamma(n + prior_mass).
    # A rate (a partial sum over the total) moves by at most s0 G' / T' when the left-out
    # terms are added back. On {G' <= g, T >= q}, which has probability >= 1 - _DELTA,
    # s0 G' / T' <= s0 g / (q - s0 g) = _EPS. A small total (prior draws: n = 0) makes q
    # small and the cut-off deeper, so the bound holds whatever alpha is.
    g = gammainccinv(prior_mass, _DELTA / 2)
    q = gammaincinv(n + prior_mass, _DELTA / 2)
    if not q > 1e-290:
        return np.inf
    return max(0.0, float(np.log((1 + _EPS) * g / (_EPS * q))))  # 0: nothing to draw


def _plan(cells: np.ndarray, a: float) -> _Plan:
    from isbetter.f1.kernels import slots

    m = cells.shape[0]
    # canonical orientation: the random stream must not depend on which system is A
    flipped = not bool(orientation((cells - cells.transpose(0, 2, 1)).ravel()))
    c = (cells.transpose(0, 2, 1) if flipped else cells).ravel()
    cube = np.arange(m**3)
    mass = a * m**3
    cut = _series_cut(mass, float(c.sum()))
    if np.isfinite(cut) and mass * cut <= _SERIES_TERMS_PER_CELL * m**3:
        cols = np.flatnonzero(c > 0)
        shapes, terms = c[cols], mass * cut
    else:  # alpha not small: one Gamma(count + alpha) variate per cell
        cols, shapes, cut, terms = cube, c + a, 0.0, 0.0
    # Gamma(n) for a whole n up to _EXP_SUM_MAX: the sum of n Exp(1) variates
    units = np.where((shapes <= _EXP_SUM_MAX) & (shapes == np.round(shapes)), shapes, 0)
    per_draw = terms + cols.size + units.sum()
    chunk = int(np.clip(_CHUNK_VARIATES // max(per_draw, 1.0), 8, 4096))
    block = chunk * max(1, _BLOCK_DRAWS // chunk)
    cube = cube if terms else cube[:0]  # only the series needs every cell's places
    return _Plan(
        m, flipped, cut, terms, cols.astype(np.int64), shapes.astype(float),
        units.astype(np.int32), slots(cols, m), slots(cube, m), chunk, block,
    )  # fmt: skip


def _chunk_stats(plan: _Plan, rng: np.random.Generator, out: np.ndarray) -> None:
    """Draw a chunk: tp, row and column sums (unnormalised) of A and B into out[side, 0:3]."""
    from isbetter.f1.kernels import kernels  # numba code: only when drawing

    # Bondesson: Gamma(mass) = sum_i exp(-Gamma_i / mass) E_i over the arrivals Gamma_i
    # of a unit-rate Poisson process; a uniformly random cell gets each term. Arrivals
    # below mass * cut: Poisson(terms) many, Gamma_i / mass = cut * V_i, V_i uniform.
    p = plan
    draw = kernels()["draw_chunk"]
    draw(rng, p.column_slots, p.shapes, p.units, p.cell_slots, p.terms, p.cut, out)  # type: ignore[operator]


def _deltas(plan: _Plan, stats: np.ndarray, measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """Macro and micro differences from the sums of :func:`_chunk_stats`."""
    tp, row, col = stats[:, 0], stats[:, 1], stats[:, 2]  # each (2, m, draws)
    total = row[0].sum(axis=0)
    fn = (row - tp) / total
    fp = (col - tp) / total
    tp = tp / total
    tn = 1.0 - tp - fp - fn
    macro = measure(tp, fp, fn, tn).mean(axis=1)  # (2, draws): A, B
    micro = measure(tp.sum(1), fp.sum(1), fn.sum(1), tn.sum(1))
    a, b = (1, 0) if plan.flipped else (0, 1)
    return measure.difference(macro[a], macro[b]), measure.difference(micro[a], micro[b])


def sample_average_delta(
    cells: np.ndarray,
    measure: Measure,
    *,
    alpha: float | None = None,
    draws: int = 20_000,
    rng: np.random.Generator,
    workers: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Posterior draws of the macro and micro differences (positive: A better).

    Parameters
    ----------
    cells : numpy.ndarray
        Joint outcome counts, shape ``(m, m, m)`` (see :func:`joint_cells`); zeros give
        prior draws.
    measure : Measure
        The per-class measure.
    alpha : float, optional
        Dirichlet concentration per cell; default ``1 / m**2`` (total prior mass m).
    draws : int, default: 20000
        Posterior draws.
    rng : numpy.random.Generator
        Source of randomness.
    workers : int, optional
        Threads; default: 2 if two CPUs are available. The draws do not depend on it.

    Returns
    -------
    macro, micro : numpy.ndarray
        Each of shape ``(draws,)``.

    Notes
    -----
    Each cell's ``Gamma(count + alpha)`` is drawn as ``Gamma(count)`` (a sum of Exp(1)
    variates for counts up to 5, numpy's Marsaglia-Tsang sampler above) plus
    ``Gamma(alpha)``. Over all m^3 cells the latter are a gamma process of mass
    ``A = alpha m**3``: by Bondesson's series [3]_, ``Gamma(A) = sum_i exp(-Gamma_i / A)
    E_i`` (``Gamma_i`` the arrival times of a unit-rate Poisson process, ``E_i ~
    Exp(1)``), and giving every term a uniformly random cell gives each cell an
    independent ``Gamma(alpha)``. The terms with ``Gamma_i < A log(1 / s0)`` are drawn:
    ``Poisson(A log(1 / s0))`` of them, with ``exp(-Gamma_i / A) = s0**V``, V uniform.

    *Why the rest is below double precision.* A Poisson process starts afresh at any
    time, so the terms left out sum to exactly ``D = s0 G'``, ``G' ~ Gamma(A)``
    independent of the drawn terms (and spread over the cells like a prior draw). Every
    rate (tp, fp, fn or tn over the total) of the draw differs from that of the
    complete draw by at most ``D / T'``, with ``T'`` the drawn total and ``T = T' + D ~
    Gamma(N + A)`` (N documents). With ``g`` and ``q`` the upper and lower ``u / 2``
    quantiles of ``Gamma(A)`` and ``Gamma(N + A)``, ``u = 2**-53`` the unit roundoff,
    and ``s0 = u q / ((1 + u) g)``: ``D / T' > u`` needs ``G' > g`` or ``T < q``. So
    with probability at least ``1 - u`` per draw, every rate is within one unit
    roundoff of the exact draw's, for any alpha and for prior draws too (N = 0: the
    total has mass A only, q is small and s0 smaller). A draw has ``A log(1 / s0)``
    terms: 646 (20 classes, 7 500 documents) or 817 (prior), against 8 000 cells; when
    that exceeds m^3 or s0 would underflow, each cell gets its own Gamma variate. The
    bound is absolute on rates: a measure with a denominator below about ``u`` times
    the total (a class almost absent from a prior draw) is resolved only to that.

    Examples
    --------
    >>> import numpy as np
    >>> from isbetter.f1.measures import f1
    >>> cells = np.zeros((3, 3, 3))
    >>> cells[[0, 1, 2], [0, 1, 2], [0, 1, 2]], cells[0, 0, 1] = 20, 6  # 6: only A right
    >>> macro, micro = sample_average_delta(cells, f1, draws=2000, rng=np.random.default_rng(0))
    >>> macro.shape, bool(np.mean(micro > 0) > 0.95)
    ((2000,), True)
    """
    cells, a = _checked(cells, alpha)
    if workers is None:
        cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
        workers = min(2, len(cpus) if cpus else os.cpu_count() or 1)
    # one random stream per chunk of draws: the draws do not depend on blocks or threads
    entropy = rng.integers(0, 2**63, size=4).tolist()
    return _draw(_plan(cells, a), measure, draws, np.random.SeedSequence(entropy), workers)


def _checked(cells: np.ndarray, alpha: float | None) -> tuple[np.ndarray, float]:
    cells = np.asarray(cells, dtype=float)
    m = cells.shape[0]
    if cells.shape != (m, m, m):
        raise InputError(f"`cells` must have shape (m, m, m), got {cells.shape}.")
    if not np.all(np.isfinite(cells) & (cells >= 0)):
        raise InputError("`cells` must be finite, non-negative counts.")
    a = 1.0 / m**2 if alpha is None else float(alpha)
    if not a > 0:
        raise InputError(f"`alpha` must be a positive Dirichlet concentration, got {alpha!r}.")
    return cells, a


def _draw(
    plan: _Plan, measure: Measure, draws: int, seed: np.random.SeedSequence, workers: int
) -> tuple[np.ndarray, np.ndarray]:
    """Draw blocks of chunks, each chunk from its own stream, on `workers` threads."""
    streams = seed.spawn(-(-draws // plan.chunk))
    macro, micro = np.empty(draws), np.empty(draws)

    def run(start: int) -> None:
        stop = min(draws, start + plan.block)
        stats = np.empty((2, 3, plan.m, stop - start))
        for lo in range(start, stop, plan.chunk):
            hi = min(stop, lo + plan.chunk)
            chunk_rng = np.random.Generator(_BIT_GENERATOR(streams[lo // plan.chunk]))
            _chunk_stats(plan, chunk_rng, stats[..., lo - start : hi - start])
        macro[start:stop], micro[start:stop] = _deltas(plan, stats, measure)

    starts = range(0, draws, plan.block)
    if max(1, workers) > 1 and len(starts) > 1:
        with ThreadPoolExecutor(min(workers, len(starts))) as pool:
            list(pool.map(run, starts))
    else:
        for start in starts:
            run(start)
    return macro, micro


def observed_averages(cells: np.ndarray, measure: Measure) -> dict[str, Any]:
    """Observed macro / micro measures of A and B from the joint counts."""
    cells = np.asarray(cells, dtype=float)
    mac_a, mic_a = macro_micro(cells.sum(axis=2), measure)
    mac_b, mic_b = macro_micro(cells.sum(axis=1), measure)
    return {"macro": (float(mac_a), float(mac_b)), "micro": (float(mic_a), float(mic_b))}
