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

This is the flat-cell model of DESIGN 3.4; the hierarchical model of Zhang et al.
(ICDM 2015), which ties the confusion-matrix rows together through an overall
tendency to predict correctly, is not implemented.

Exchanging A and B transposes the cells (j, k, l) -> (j, l, k); the sampler draws
each such pair of cells in the order of their shape parameters (ties by an
orientation of the whole table), so the exchange negates the draws exactly (same
seed) unless the table is itself symmetric.

References
----------
.. [1] Zhang, Wang, Yilmaz, Wang, Zhou (2016). Bayesian performance comparison of
   text classifiers. SIGIR. Section 5.
.. [2] Zhang, Wang, Zhao, Wang (2015). A Bayesian hierarchical model for comparing
   average F1 scores. ICDM.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from isbetter._errors import InputError
from isbetter.measures import Measure
from isbetter.models.f1 import orientation

__all__ = ["joint_cells", "macro_micro", "sample_average_delta"]


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
    >>> from isbetter.measures import f1
    >>> conf = np.array([[8, 2], [1, 9]])
    >>> [round(float(x), 4) for x in macro_micro(conf, f1)]
    [0.8496, 0.85]
    """
    tp, fp, fn, tn = _one_vs_rest(np.asarray(conf, dtype=float))
    macro = measure(tp, fp, fn, tn).mean(axis=-1)
    micro = measure(tp.sum(-1), fp.sum(-1), fn.sum(-1), tn.sum(-1))
    return macro, micro


def sample_average_delta(
    cells: np.ndarray,
    measure: Measure,
    *,
    alpha: float | None = None,
    draws: int = 20_000,
    rng: np.random.Generator,
    chunk_cells: int = 2_000_000,
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
    chunk_cells : int, default: 2000000
        Draws are made in chunks of at most this many Gamma variates (memory bound).

    Returns
    -------
    macro, micro : numpy.ndarray
        Each of shape ``(draws,)``.
    """
    cells = np.asarray(cells, dtype=float)
    m = cells.shape[0]
    if cells.shape != (m, m, m):
        raise InputError(f"`cells` must have shape (m, m, m), got {cells.shape}.")
    a = 1.0 / m**2 if alpha is None else float(alpha)
    if not a > 0:
        raise InputError(f"`alpha` must be a positive Dirichlet concentration, got {alpha!r}.")
    shape = cells + a
    iu, ju = np.triu_indices(m, 1)
    s_up, s_lo = shape[:, iu, ju], shape[:, ju, iu]  # (m, P): cell (j,k,l) and its mirror
    orient = orientation((s_up - s_lo).ravel())  # flips when A and B are exchanged
    up_first = np.where(s_up == s_lo, orient, s_up < s_lo)
    s_min, s_max = np.minimum(s_up, s_lo), np.maximum(s_up, s_lo)
    diag = shape[:, np.arange(m), np.arange(m)]  # (m, m): A and B predict the same
    per_draw = m**3
    step = max(1, chunk_cells // per_draw)
    macro_out = np.empty(draws)
    micro_out = np.empty(draws)
    for start in range(0, draws, step):
        s = min(step, draws - start)
        g = np.empty((s, m, m, m))
        g[:, :, np.arange(m), np.arange(m)] = rng.standard_gamma(diag, size=(s, *diag.shape))
        lo = rng.standard_gamma(s_min, size=(s, *s_min.shape))
        hi = rng.standard_gamma(s_max, size=(s, *s_max.shape))
        g[:, :, iu, ju] = np.where(up_first, lo, hi)
        g[:, :, ju, iu] = np.where(up_first, hi, lo)
        g /= g.sum(axis=(1, 2, 3), keepdims=True)
        conf_a = g.sum(axis=3)  # (s, j, k)
        conf_b = g.sum(axis=2)  # (s, j, l)
        mac_a, mic_a = macro_micro(conf_a, measure)
        mac_b, mic_b = macro_micro(conf_b, measure)
        macro_out[start : start + s] = measure.difference(mac_a, mac_b)
        micro_out[start : start + s] = measure.difference(mic_a, mic_b)
    return macro_out, micro_out


def observed_averages(cells: np.ndarray, measure: Measure) -> dict[str, Any]:
    """Observed macro / micro measures of A and B from the joint counts."""
    cells = np.asarray(cells, dtype=float)
    mac_a, mic_a = macro_micro(cells.sum(axis=2), measure)
    mac_b, mic_b = macro_micro(cells.sum(axis=1), measure)
    return {"macro": (float(mac_a), float(mac_b)), "micro": (float(mic_a), float(mic_b))}
