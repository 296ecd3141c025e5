"""The exact paired model of two systems' binary item scores (one task).

Two models A and B answer the same N items, each right (1) or wrong (0). The
counts over items are ``n11`` (both right), ``n10`` (only A), ``n01`` (only B) and
``n00`` (neither); the model (DESIGN §4.3) is::

    theta ~ Dir(alpha, alpha, alpha, alpha)        (alpha = 1)
    (n11, n10, n01, n00) ~ Mult(N, theta)
    delta = theta10 - theta01 = acc_A - acc_B

The prior is conjugate, so the posterior ``Dir(alpha + n)`` is exact and sampled
directly (Gamma variates, numpy), no MCMC. A check anyone can do: given the data,
``theta10 / (theta10 + theta01) ~ Beta(alpha + n10, alpha + n01)``, so
``P(delta > 0) = P(Beta(alpha + n10, alpha + n01) > 1/2)``
(:func:`p_a_better_exact`).

It is the positives' part (``theta+``) of the paired model of Zhang et al. (SIGIR
2016, :mod:`isbetter.f1.paired`) with every item a positive and "right" as the
prediction; that model's accuracy also carries ``mu``'s prior weight on negatives,
which do not exist here.

The sampler is built so that exchanging A and B negates the draws exactly (same
seed): the Gamma variates of the two discordant cells are drawn in the order of
their shapes, so the random stream does not depend on which model is called A.
When ``n10 == n01`` the posterior of delta is symmetric about 0 and half of the
draws are the mirror images of the other half, so ``P(A better) == P(B better)``
exactly (identical systems never lean to a side by Monte Carlo error).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from isbetter.core.errors import InputError
from isbetter.core.validate import check_positive_int

__all__ = ["ALPHA", "ItemCounts", "p_a_better_exact", "prior_delta", "sample_delta"]

#: the Dirichlet concentration of each of the four cells (a uniform prior on the 2 x 2 table)
ALPHA = 1.0


@dataclass(frozen=True)
class ItemCounts:
    """The 2 x 2 table of two systems' binary scores on the same items.

    Attributes
    ----------
    n11, n10, n01, n00 : int
        Items both get right, only A, only B, neither.

    Examples
    --------
    >>> c = ItemCounts.from_scores([1, 1, 0, 0, 1], [1, 0, 1, 0, 0])
    >>> c.as_tuple(), c.n, c.accuracy_a, c.accuracy_b
    ((1, 2, 1, 1), 5, 0.6, 0.4)
    """

    n11: int
    n10: int
    n01: int
    n00: int

    def __post_init__(self) -> None:
        for name in ("n11", "n10", "n01", "n00"):
            value = getattr(self, name)
            if int(value) != value or value < 0:
                raise InputError(f"`{name}` must be a count (an integer >= 0), got {value!r}.")
            object.__setattr__(self, name, int(value))

    @classmethod
    def from_scores(cls, a: Any, b: Any) -> ItemCounts:
        """Count the four joint outcomes of two 0/1 score arrays (one entry per item)."""
        x = np.asarray(a, dtype=float)
        y = np.asarray(b, dtype=float)
        if x.shape != y.shape or x.ndim != 1:
            raise InputError(
                f"`a` and `b` must be two 1-D arrays of one score per item, got shapes "
                f"{x.shape} and {y.shape}."
            )
        bad = ~(np.isin(x, (0.0, 1.0)) & np.isin(y, (0.0, 1.0)))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"the exact paired model needs binary scores (0 or 1), found {x[i]!r} and "
                f"{y[i]!r} at item {i}; graded scores go to the Bayesian bootstrap."
            )
        ra, rb = x == 1, y == 1
        return cls(
            int(np.sum(ra & rb)),
            int(np.sum(ra & ~rb)),
            int(np.sum(~ra & rb)),
            int(np.sum(~ra & ~rb)),
        )

    def as_tuple(self) -> tuple[int, int, int, int]:
        """Return ``(n11, n10, n01, n00)``."""
        return (self.n11, self.n10, self.n01, self.n00)

    def swapped(self) -> ItemCounts:
        """Return the table with the roles of A and B exchanged."""
        return ItemCounts(self.n11, self.n01, self.n10, self.n00)

    @property
    def n(self) -> int:
        """Number of items."""
        return self.n11 + self.n10 + self.n01 + self.n00

    @property
    def accuracy_a(self) -> float:
        """A's observed accuracy (NaN without items)."""
        return (self.n11 + self.n10) / self.n if self.n else float("nan")

    @property
    def accuracy_b(self) -> float:
        """B's observed accuracy (NaN without items)."""
        return (self.n11 + self.n01) / self.n if self.n else float("nan")

    def to_dict(self) -> dict[str, int]:
        """JSON-safe counts."""
        return {"n11": self.n11, "n10": self.n10, "n01": self.n01, "n00": self.n00}


def _check_alpha(alpha: Any) -> float:
    value = float(alpha)
    if not np.isfinite(value) or value <= 0:
        raise InputError(
            f"`alpha` must be a positive number (Dirichlet concentration), got {alpha!r}."
        )
    return value


def _delta(counts: ItemCounts, alpha: float, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Draws of ``theta10 - theta01`` under ``Dir(alpha + counts)``, exchange-symmetric."""
    s11, s10, s01, s00 = (alpha + c for c in counts.as_tuple())
    symmetric = s10 == s01
    size = (draws + 1) // 2 if symmetric else draws
    g11 = rng.standard_gamma(s11, size)
    g00 = rng.standard_gamma(s00, size)
    g_lo = rng.standard_gamma(min(s10, s01), size)
    g_hi = rng.standard_gamma(max(s10, s01), size)
    g10, g01 = (g_lo, g_hi) if s10 <= s01 else (g_hi, g_lo)
    total = g11 + g00
    total += g_lo + g_hi  # in this order whichever is A's: exchanging A and B keeps the total
    d = g10 - g01
    d /= total
    if symmetric:  # the posterior of delta is symmetric: mirror half of the draws
        d = np.concatenate([d, -d])[:draws]
    return d


def sample_delta(
    counts: ItemCounts, *, alpha: float = ALPHA, draws: int = 50_000, rng: np.random.Generator
) -> np.ndarray:
    """Draw the exact posterior of ``delta = acc_A - acc_B`` (positive: A better).

    Parameters
    ----------
    counts : ItemCounts
        The 2 x 2 table.
    alpha : float, default: 1
        Dirichlet concentration of each cell.
    draws : int, default: 50000
        Independent posterior draws.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray
        Shape ``(draws,)``.

    Examples
    --------
    >>> d = sample_delta(ItemCounts(50, 30, 10, 10), rng=np.random.default_rng(0))
    >>> round(float(d.mean()), 3)   # (31 - 11) / 104
    0.192
    """
    draws = check_positive_int(draws, "draws")
    return _delta(counts, _check_alpha(alpha), draws, rng)


def prior_delta(
    *, alpha: float = ALPHA, draws: int = 50_000, rng: np.random.Generator
) -> np.ndarray:
    """Draws of delta under the prior ``Dir(alpha, alpha, alpha, alpha)`` (symmetric about 0)."""
    return sample_delta(ItemCounts(0, 0, 0, 0), alpha=alpha, draws=draws, rng=rng)


def p_a_better_exact(counts: ItemCounts, *, alpha: float = ALPHA) -> float:
    """Return ``P(delta > 0 | data) = P(Beta(alpha + n10, alpha + n01) > 1/2)``, in closed form.

    Given the data, the share of A among the discordant mass,
    ``theta10 / (theta10 + theta01)``, is ``Beta(alpha + n10, alpha + n01)``
    (aggregation property of the Dirichlet), and ``delta > 0`` exactly when it
    exceeds one half. The same number the exact Bayesian McNemar answer gives.

    Examples
    --------
    >>> p_a_better_exact(ItemCounts(10, 3, 3, 4))
    0.5
    >>> round(p_a_better_exact(ItemCounts(0, 1, 0, 0)), 4)  # Beta(2, 1) > 1/2
    0.75
    """
    alpha = _check_alpha(alpha)
    # the regularised incomplete beta: P(X <= 1/2) for X ~ Beta(a, b); P(X > 1/2) = I_{1/2}(b, a)
    return float(special.betainc(alpha + counts.n01, alpha + counts.n10, 0.5))
