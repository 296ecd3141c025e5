"""Posterior representations that every model returns.

Each model of isbetter returns one of these objects. They all answer one
question, :meth:`region_masses`: for a ROPE half-width ``rope``, how much
posterior mass lies in the three regions *A better* (``d > rope``), *ROPE*
(``-rope <= d <= rope``) and *B better* (``d < -rope``)? The answer is an array
of shape ``(n_draws, 3)``, one row per posterior draw (one row for closed-form
posteriors). :mod:`isbetter.inference.decisions` is the only code that turns these masses
into the probabilities reported to the user, so the ROPE can be changed after a fit
without refitting.

The difference ``d`` is always oriented so that positive means *A better*.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from scipy import special

from isbetter.core.validate import check_rope
from isbetter.inference.decisions import Counting

__all__ = [
    "DirichletProcessPosterior",
    "DrawsPosterior",
    "HierarchicalPosterior",
    "Posterior",
    "StudentTPosterior",
]


@runtime_checkable
class Posterior(Protocol):
    """What every model returns: per-draw masses of the three regions."""

    @property
    def counting(self) -> Counting:
        """How the probabilities are read off the masses (:mod:`isbetter.inference.decisions`)."""
        ...

    def region_masses(self, rope: float) -> np.ndarray:
        """Return the masses of (A better, ROPE, B better), shape ``(n_draws, 3)``."""
        ...


def _indicator_masses(d: np.ndarray, rope: float) -> np.ndarray:
    """One-hot region membership of each value of ``d``, shape ``(len(d), 3)``."""
    out = np.empty((d.shape[0], 3))
    out[:, 0] = d > rope
    out[:, 2] = d < -rope
    out[:, 1] = 1.0 - out[:, 0] - out[:, 2]
    return out


@dataclass(frozen=True)
class StudentTPosterior:
    """A Student-t posterior of the mean difference, known in closed form.

    Attributes
    ----------
    df, loc, scale : float
        Degrees of freedom, location and scale of the Student-t. ``scale == 0``
        is a point mass at ``loc`` (all differences equal).
    counting : {"mean"}
        The probabilities are exact integrals, so the one row of masses *is*
        the answer.
    """

    df: float
    loc: float
    scale: float
    counting: Counting = field(default="mean", init=False)

    @property
    def dist(self) -> Any:
        """The frozen :func:`scipy.stats.t` distribution (requires ``scale > 0``)."""
        from scipy import stats

        return stats.t(self.df, loc=self.loc, scale=self.scale)

    def region_masses(self, rope: float) -> np.ndarray:
        """Exact masses from the Student-t CDF, shape ``(1, 3)``."""
        rope = check_rope(rope)
        if self.scale == 0:
            if self.loc == 0 and rope == 0:
                # differences all 0 (identical systems): no spread, so no posterior width
                # to speak of, and a zero-width ROPE concludes no equivalence; neither
                # side is favoured, as the other routes share such draws
                return np.array([[0.5, 0.0, 0.5]])
            return _indicator_masses(np.array([self.loc]), rope)
        # sf for the upper tail keeps precision where the mass is tiny
        above, below = _t_tails(rope, self.df, self.loc, self.scale)
        return np.array([[above, 1.0 - above - below, below]])

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """Draw `size` values of the mean difference."""
        if self.scale == 0:
            return np.full(size, self.loc)
        return self.loc + self.scale * rng.standard_t(self.df, size)

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """Central (= highest-density, the t being symmetric) credible interval."""
        if self.scale == 0:
            return (self.loc, self.loc)
        # as scipy.stats.t(df, loc, scale).interval(level), without importing scipy.stats
        lo, hi = special.stdtrit(self.df, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
        return float(self.loc + self.scale * lo), float(self.loc + self.scale * hi)


@dataclass(frozen=True)
class DrawsPosterior:
    """Posterior draws of the difference itself (e.g. the F1 difference).

    Attributes
    ----------
    draws : numpy.ndarray
        1-D array of posterior draws of ``d`` (positive: A better).
    counting : {"mean"}
        Each draw lies in exactly one region; the probability of a region is
        the fraction of draws in it (argmax counting gives the same).
    symmetric : bool, default: False
        The posterior is symmetric about 0 (two identical systems, a prior that
        treats them alike): each draw's masses are averaged with their mirror image,
        so that P(A better) equals P(B better) exactly, as for
        :class:`HierarchicalPosterior`.
    """

    draws: np.ndarray = field(repr=False)
    symmetric: bool = False
    counting: Counting = field(default="mean", init=False)

    def region_masses(self, rope: float) -> np.ndarray:
        """One-hot masses of every draw (halved with their mirror if symmetric), ``(n, 3)``."""
        masses = _indicator_masses(np.asarray(self.draws, dtype=float), check_rope(rope))
        return (masses + masses[:, ::-1]) / 2 if self.symmetric else masses


@dataclass(frozen=True)
class DirichletProcessPosterior:
    """Dirichlet-process posterior of the Bayesian sign and signed-rank tests.

    Benavoli et al. (2014, 2017) put a Dirichlet process prior on the
    distribution of the per-data-set differences ``z``. Its posterior is
    represented by Dirichlet weights over the observations plus one prior
    pseudo-observation. Keeping the weights (rather than only the region
    masses) lets the masses be recomputed exactly for any ROPE, with the same
    random draws.

    Attributes
    ----------
    values : numpy.ndarray
        Shape ``(q + 1,)``: the pseudo-observation first, then the ``q``
        per-data-set differences. The sign test places its pseudo-observation
        in a region by value (0 for the ROPE, ``+inf`` for A, ``-inf`` for B).
    weights : numpy.ndarray
        Shape ``(n_draws, q + 1)``: Dirichlet draws with parameters
        ``(prior, 1, ..., 1)``.
    kind : {"sign", "signed_rank"}
        The sign test counts single observations; the signed-rank test counts
        Walsh averages ``(z_i + z_j) / 2`` of all pairs (half a count on ties).
    counting : {"argmax"}
        Probabilities are the fraction of draws in which a region holds the
        largest mass (Benavoli et al. 2017; baycomp).
    """

    values: np.ndarray = field(repr=False)
    weights: np.ndarray = field(repr=False)
    kind: Literal["sign", "signed_rank"]
    counting: Counting = field(default="argmax", init=False)

    def region_masses(self, rope: float) -> np.ndarray:
        """Masses of (A better, ROPE, B better) for every draw, shape ``(n_draws, 3)``."""
        rope = check_rope(rope)
        z = self.values
        w = self.weights
        out = np.empty((w.shape[0], 3))
        if self.kind == "sign":
            out[:, 0] = w @ (z > rope).astype(float)
            out[:, 2] = w @ (z < -rope).astype(float)
            if rope == 0:
                # no ROPE: the prior pseudo-observation (and any zero difference) would sit
                # in a region of width 0; as baycomp, drop it and renormalise the two sides
                total = out[:, 0] + out[:, 2]
                both = total > 0
                out[both, 0] /= total[both]
                out[both, 2] /= total[both]
                out[~both, 0] = out[~both, 2] = 0.5
                out[:, 1] = 0.0
                return out
        else:
            # Walsh sums z_i + z_j against +-2 rope; a tie counts one half
            sums = np.add.outer(z, z)
            above = (sums > 2 * rope) + 0.5 * (sums == 2 * rope)
            below = (sums < -2 * rope) + 0.5 * (sums == -2 * rope)
            out[:, 0] = np.einsum("si,si->s", w @ above, w)
            out[:, 2] = np.einsum("si,si->s", w @ below, w)
        out[:, 1] = np.clip(1.0 - out[:, 0] - out[:, 2], 0.0, 1.0)
        return out


@dataclass(frozen=True)
class HierarchicalPosterior:
    r"""Posterior of the next data set's difference, :math:`t_\nu(\delta_0, \sigma_0)`.

    Attributes
    ----------
    delta0, std0, nu : numpy.ndarray
        Posterior draws (score units for ``delta0`` and ``std0``), one per draw.
    counting : {"argmax"}
        Probabilities are the fraction of draws in which a region holds the
        largest mass of :math:`\delta_{next}` (Corani et al. 2017; baycomp).
    symmetric : bool, default: False
        The posterior is symmetric about 0: two identical systems, whose data do not
        change when A and B swap (nor do the priors, symmetric about 0). Each draw's
        masses are then averaged with their mirror image, so that P(A better) equals
        P(B better) exactly, not only up to Monte Carlo error (which decided a side
        of identical systems at ROPE 0: 0.52 / 0 / 0.48).
    """

    delta0: np.ndarray = field(repr=False)
    std0: np.ndarray = field(repr=False)
    nu: np.ndarray = field(repr=False)
    symmetric: bool = False
    counting: Counting = field(default="argmax", init=False)

    def region_masses(self, rope: float) -> np.ndarray:
        """Student-t masses of (A better, ROPE, B better) per draw, shape ``(n_draws, 3)``."""
        rope = check_rope(rope)
        above, below = _t_tails(rope, self.nu, self.delta0, self.std0)
        masses = np.column_stack([above, np.clip(1.0 - above - below, 0.0, 1.0), below])
        return (masses + masses[:, ::-1]) / 2 if self.symmetric else masses

    def next_pdf(self, grid: np.ndarray) -> np.ndarray:
        r"""Posterior predictive density of :math:`\delta_{next}` on `grid` (draw average)."""
        from scipy import stats

        grid = np.asarray(grid, dtype=float)
        dens = np.zeros_like(grid)
        for start in range(0, self.nu.size, 1000):  # chunks bound the memory use
            sl = slice(start, start + 1000)
            dens += stats.t.pdf(
                grid[:, None], self.nu[sl], loc=self.delta0[sl], scale=self.std0[sl]
            ).sum(axis=1)
        return dens / self.nu.size


def _t_tails(rope: float, df: Any, loc: Any, scale: Any) -> tuple[Any, Any]:
    """P(d > rope) and P(d < -rope) under Student-t(df, loc, scale).

    ``scipy.special.stdtr`` is what ``scipy.stats.t.sf`` / ``cdf`` evaluate (the upper
    tail as the lower tail of the mirrored value, which keeps precision where the mass
    is tiny), without importing :mod:`scipy.stats` (a second of start-up).
    """
    return special.stdtr(df, -(rope - loc) / scale), special.stdtr(df, (-rope - loc) / scale)
