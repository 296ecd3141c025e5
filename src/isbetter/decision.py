"""From posterior region masses to probabilities and decisions; the result type.

This is the only place where posterior draws become the probabilities that
system A is better, that the two are practically equivalent, or that B is
better. Two ways of reading them off per-draw region masses exist in the
literature, and they are kept apart by name:

``"argmax"``
    the fraction of draws in which each region holds the largest mass
    (Corani et al. 2017; Benavoli et al. 2017; Szymański & Gorman 2020;
    baycomp). The published numbers use it.
``"mean"``
    the average mass, i.e. the posterior (predictive) probability of the region.
    For exact posteriors and for draws of the difference itself the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from isbetter._validate import check_choice, check_probability, check_rope
from isbetter.posterior import Counting, Posterior

__all__ = [
    "ComparisonResult",
    "Probabilities",
    "probabilities_from_masses",
]

Decision = Literal["a_better", "equivalent", "b_better", "undecided"]


@dataclass(frozen=True)
class Probabilities:
    """Probabilities of the three regions; they sum to 1.

    Attributes
    ----------
    p_a_better : float
        Probability that A is better by more than the ROPE.
    p_rope : float
        Probability that the two are practically equivalent.
    p_b_better : float
        Probability that B is better by more than the ROPE.
    """

    p_a_better: float
    p_rope: float
    p_b_better: float

    def as_tuple(self) -> tuple[float, float, float]:
        """Return ``(p_a_better, p_rope, p_b_better)``."""
        return (self.p_a_better, self.p_rope, self.p_b_better)

    def to_dict(self) -> dict[str, float]:
        """Return a JSON-safe dictionary with the three named probabilities."""
        return {"p_a_better": self.p_a_better, "p_rope": self.p_rope, "p_b_better": self.p_b_better}


def probabilities_from_masses(masses: np.ndarray, counting: Counting) -> Probabilities:
    """Read the three probabilities off per-draw region masses.

    Parameters
    ----------
    masses : numpy.ndarray
        Shape ``(n_draws, 3)``: masses of (A better, ROPE, B better) per draw.
    counting : {"argmax", "mean"}
        ``"argmax"``: fraction of draws in which each region is the largest;
        ``"mean"``: mean mass of each region.

    Returns
    -------
    Probabilities

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]])
    >>> probabilities_from_masses(m, "argmax").as_tuple()
    (0.5, 0.5, 0.0)
    >>> probabilities_from_masses(m, "mean").as_tuple()
    (0.4, 0.4, 0.2)
    """
    counting = check_choice(counting, "counting", ("argmax", "mean"))  # type: ignore[assignment]
    masses = np.asarray(masses, dtype=float)
    if counting == "argmax":
        counts = np.bincount(np.argmax(masses, axis=1), minlength=3)
        p = counts / masses.shape[0]
    else:
        p = masses.mean(axis=0)
        p = np.clip(p, 0.0, 1.0)
    return Probabilities(float(p[0]), float(p[1]), float(p[2]))


@dataclass(frozen=True)
class ComparisonResult:
    """Result of a Bayesian comparison of two systems.

    Attributes
    ----------
    system_a, system_b : str
        Names of the systems; the difference ``d`` is positive when A is better
        (``score(A) - score(B)`` for a higher-is-better metric).
    rope : float
        Half-width of the region of practical equivalence, in score units.
    p_a_better, p_rope, p_b_better : float
        Posterior probabilities of the three regions (they sum to 1), read off
        the posterior with :attr:`counting`.
    method : str
        Which model produced the result, e.g. ``"correlated_t"``.
    posterior : Posterior
        The posterior (draws or a closed form); see :mod:`isbetter.posterior`.
    settings : dict
        What reproduces the result: method, parameters, seed, versions.
    counting : {"argmax", "mean"}
        How the probabilities were read off the posterior.
    """

    system_a: str
    system_b: str
    rope: float
    p_a_better: float
    p_rope: float
    p_b_better: float
    method: str
    posterior: Posterior = field(repr=False, compare=False)
    settings: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    counting: Counting = "mean"

    @classmethod
    def from_posterior(
        cls,
        posterior: Posterior,
        *,
        system_a: str,
        system_b: str,
        rope: float,
        method: str,
        settings: dict[str, Any],
        **extra: Any,
    ) -> ComparisonResult:
        """Build a result, computing the probabilities from `posterior`."""
        rope = check_rope(rope)
        p = probabilities_from_masses(posterior.region_masses(rope), posterior.counting)
        return cls(
            system_a=system_a,
            system_b=system_b,
            rope=rope,
            p_a_better=p.p_a_better,
            p_rope=p.p_rope,
            p_b_better=p.p_b_better,
            method=method,
            posterior=posterior,
            settings=settings,
            counting=posterior.counting,
            **extra,
        )

    def probabilities(self, rope: float | None = None) -> Probabilities:
        """Return the probabilities for another ROPE without refitting.

        Parameters
        ----------
        rope : float, optional
            ROPE half-width in score units; default: the ROPE of the fit.
        """
        if rope is None:
            return Probabilities(self.p_a_better, self.p_rope, self.p_b_better)
        return probabilities_from_masses(self.posterior.region_masses(rope), self.counting)

    def decision(self, threshold: float = 0.95) -> Decision:
        """Name the region whose probability reaches `threshold`, else ``"undecided"``."""
        threshold = check_probability(threshold, "threshold")
        names: tuple[Decision, Decision, Decision] = ("a_better", "equivalent", "b_better")
        probs = (self.p_a_better, self.p_rope, self.p_b_better)
        best = int(np.argmax(probs))
        return names[best] if probs[best] >= threshold else "undecided"

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dictionary of the result (raw numbers, no draws)."""
        return {
            "method": self.method,
            "system_a": self.system_a,
            "system_b": self.system_b,
            "rope": self.rope,
            "p_a_better": self.p_a_better,
            "p_rope": self.p_rope,
            "p_b_better": self.p_b_better,
            "counting": self.counting,
            "settings": self.settings,
        }

    def __str__(self) -> str:
        from isbetter.report import to_text

        return to_text(self)
