"""Light records shared by every result: probabilities, intervals, tests, diagnostics.

These are small frozen dataclasses of plain Python numbers and strings. They hold
no posterior draws, pickle as they are and turn into JSON with ``to_dict`` and
back with ``from_dict``; reports, plots, the command line and a ranking can
work from them alone. Non-finite numbers are written to JSON as ``null`` (NaN)
or the strings ``"inf"`` / ``"-inf"``, and read back as floats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Literal

__all__ = [
    "Estimate",
    "Interval",
    "MCMCDiagnostics",
    "Observed",
    "Probabilities",
    "TestResult",
    "from_json_number",
    "to_json_number",
]

IntervalKind = Literal["hdi", "central", "percentile", "confidence"]


def to_json_number(value: Any) -> Any:
    """Return `value` as a JSON-safe number: NaN -> None, +-inf -> "inf" / "-inf"."""
    if value is None:
        return None
    x = float(value)
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def from_json_number(value: Any) -> float:
    """Inverse of :func:`to_json_number`."""
    if value is None:
        return math.nan
    return float(value)


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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Probabilities:
        """Rebuild from :meth:`to_dict`."""
        return cls(float(data["p_a_better"]), float(data["p_rope"]), float(data["p_b_better"]))


@dataclass(frozen=True)
class Interval:
    """An interval estimate of the difference (positive: A better).

    The one interval type of the package: credible intervals of posteriors and
    confidence or percentile intervals of the frequentist tests alike.

    Attributes
    ----------
    low, high : float
        Bounds.
    prob : float
        Probability mass (credible) or confidence level.
    kind : {"hdi", "central", "percentile", "confidence"}
        Highest-density (shortest) credible interval, central (equal-tailed)
        credible interval, bootstrap percentile interval or confidence interval.
    """

    low: float
    high: float
    prob: float = 0.95
    kind: IntervalKind = "hdi"

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dictionary."""
        return {
            "low": to_json_number(self.low),
            "high": to_json_number(self.high),
            "prob": self.prob,
            "kind": self.kind,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Interval:
        """Rebuild from :meth:`to_dict`."""
        return cls(
            from_json_number(data["low"]),
            from_json_number(data["high"]),
            float(data["prob"]),
            data["kind"],
        )


@dataclass(frozen=True)
class TestResult:
    """A frequentist test reported beside a Bayesian comparison.

    Attributes
    ----------
    name : str
        Short name, e.g. ``"mcnemar"`` or ``"corrected_t"``; table columns are
        ``<name>_p_value``.
    p_value : float
        Two-sided p-value (NaN when the test does not apply).
    statistic : float
        Test statistic (NaN when the test has none).
    estimate : float
        The observed difference the test is about (positive: A better; NaN if none).
    interval : Interval or None
        Confidence or percentile interval of the difference, when the test gives one.
    description : str
        What the test is, in words, with its reference.
    """

    __test__ = False  # not a pytest test class

    name: str
    p_value: float
    statistic: float = math.nan
    estimate: float = math.nan
    interval: Interval | None = None
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dictionary."""
        return {
            "name": self.name,
            "p_value": to_json_number(self.p_value),
            "statistic": to_json_number(self.statistic),
            "estimate": to_json_number(self.estimate),
            "interval": None if self.interval is None else self.interval.to_dict(),
            "description": self.description,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TestResult:
        """Rebuild from :meth:`to_dict`."""
        interval = data.get("interval")
        return cls(
            name=data["name"],
            p_value=from_json_number(data["p_value"]),
            statistic=from_json_number(data.get("statistic")),
            estimate=from_json_number(data.get("estimate")),
            interval=None if interval is None else Interval.from_dict(interval),
            description=data.get("description", ""),
        )


@dataclass(frozen=True)
class MCMCDiagnostics:
    """Convergence diagnostics of an MCMC fit (one rule set for every PyMC model).

    Attributes
    ----------
    r_hat_max : float
        Largest rank-normalised split R-hat over the diagnosed variables (NaN
        with a single chain).
    ess_bulk_min, ess_tail_min : float
        Smallest bulk / tail effective sample size over the same variables.
    divergences : int
        Divergent transitions after tuning.
    chains, draws : int
        Chains and draws per chain.
    variables : tuple of str
        The variables diagnosed.
    backend : str
        The sampler (``"nutpie"`` or ``"pymc"``).
    converged : bool
        ``r_hat_max <= 1.01``, bulk and tail ESS at least 100 per chain and no
        divergences (Vehtari et al. 2021).
    """

    r_hat_max: float
    ess_bulk_min: float
    ess_tail_min: float
    divergences: int
    chains: int
    draws: int
    variables: tuple[str, ...]
    backend: str
    converged: bool

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dictionary."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("r_hat_max", "ess_bulk_min", "ess_tail_min"):
                value = to_json_number(value)
            elif f.name == "variables":
                value = list(value)
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MCMCDiagnostics:
        """Rebuild from :meth:`to_dict`."""
        return cls(
            r_hat_max=from_json_number(data["r_hat_max"]),
            ess_bulk_min=from_json_number(data["ess_bulk_min"]),
            ess_tail_min=from_json_number(data["ess_tail_min"]),
            divergences=int(data["divergences"]),
            chains=int(data["chains"]),
            draws=int(data["draws"]),
            variables=tuple(data["variables"]),
            backend=str(data["backend"]),
            converged=bool(data["converged"]),
        )

    def line(self) -> str:
        """One line for reports, e.g. ``R-hat max 1.002, ESS bulk min 1821, ...``."""
        flag = "" if self.converged else " -- POOR CONVERGENCE"
        return (
            f"MCMC ({self.backend}, {self.chains} x {self.draws} draws): R-hat max "
            f"{self.r_hat_max:.3f}, ESS bulk min {self.ess_bulk_min:.0f}, ESS tail min "
            f"{self.ess_tail_min:.0f}, divergences {self.divergences}{flag}"
        )


#: the Bayes-factor fields of an :class:`Estimate`, in the order reports show them
_BAYES_FACTOR_FIELDS = (
    "bf_rope",
    "bf_rope_bound",
    "bf_rope_mcse",
    "bf01",
    "bf01_bound",
    "bf01_mcse",
    "bf01_bandwidth",
    "bf01_prior_bandwidth",
)


@dataclass(frozen=True)
class Estimate:
    """Posterior summary of the difference ``d`` (positive: A better).

    Attributes
    ----------
    mean, sd : float
        Posterior mean and standard deviation.
    mcse : float
        Monte Carlo standard error of the mean (0 for a closed form).
    interval : Interval
        Credible interval (the HDI, or the central interval of a symmetric closed form).
    p_below_0, p_above_0 : float
        Posterior probabilities that ``d < 0`` and ``d > 0``.
    bf_rope : float
        ROPE (interval) Bayes factor, the headline Bayes factor: posterior over prior
        odds of ``|d| <= rope`` (NaN when not computed).
    bf_rope_bound : {"", "<", ">"}
        Whether `bf_rope` is an upper or lower bound.
    bf_rope_mcse : float
        Monte Carlo standard error of `bf_rope` (NaN for a bound).
    bf01 : float
        Savage–Dickey Bayes factor of ``d = 0`` against the model (NaN when not
        computed), or its upper bound when ``bf01_bound == "<"``: a ratio of kernel
        density estimates, which depends on their bandwidths (see
        :func:`isbetter.inference.summaries.savage_dickey_bf01`).
    bf01_bound : {"", "<"}
        ``"<"`` when 0 lies so far in the posterior's tail that only a bound is known.
    bf01_mcse : float
        Monte Carlo standard error of `bf01` at the stated bandwidths (NaN for a bound).
    bf01_bandwidth, bf01_prior_bandwidth : float
        Kernel bandwidths of the posterior and prior densities of BF01.
    decision : str
        The HDI + ROPE decision (a key of :data:`isbetter.inference.decisions.RELATIONS`).
    """

    mean: float
    sd: float
    mcse: float
    interval: Interval
    p_below_0: float
    p_above_0: float
    bf01: float = math.nan
    decision: str = "undecided"
    bf01_bound: str = ""
    bf_rope: float = math.nan
    bf_rope_bound: str = ""
    bf_rope_mcse: float = math.nan
    bf01_mcse: float = math.nan
    bf01_bandwidth: float = math.nan
    bf01_prior_bandwidth: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dictionary."""
        return {
            "mean": to_json_number(self.mean),
            "sd": to_json_number(self.sd),
            "mcse": to_json_number(self.mcse),
            "interval": self.interval.to_dict(),
            "p_below_0": self.p_below_0,
            "p_above_0": self.p_above_0,
            **{
                k: v if isinstance(v, str) else to_json_number(v)
                for k, v in self.bayes_factors().items()
            },
            "decision": self.decision,
        }

    def bayes_factors(self) -> dict[str, Any]:
        """Return the Bayes factors, headline (ROPE) first, with their errors and bandwidths."""
        return {name: getattr(self, name) for name in _BAYES_FACTOR_FIELDS}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Estimate:
        """Rebuild from :meth:`to_dict`."""
        return cls(
            mean=from_json_number(data["mean"]),
            sd=from_json_number(data["sd"]),
            mcse=from_json_number(data["mcse"]),
            interval=Interval.from_dict(data["interval"]),
            p_below_0=float(data["p_below_0"]),
            p_above_0=float(data["p_above_0"]),
            bf01=from_json_number(data["bf01"]),
            decision=data["decision"],
            bf01_bound=data.get("bf01_bound", ""),
            bf_rope=from_json_number(data.get("bf_rope")),
            bf_rope_bound=data.get("bf_rope_bound", ""),
            bf_rope_mcse=from_json_number(data.get("bf_rope_mcse")),
            bf01_mcse=from_json_number(data.get("bf01_mcse")),
            bf01_bandwidth=from_json_number(data.get("bf01_bandwidth")),
            bf01_prior_bandwidth=from_json_number(data.get("bf01_prior_bandwidth")),
        )


@dataclass(frozen=True)
class Observed:
    """What the data show before any model: sizes and the observed scores.

    Attributes
    ----------
    n : int
        Number of scores (cross-validation) or of test documents (F1).
    score_a, score_b : float
        Observed score of each system (mean over folds; or the measure on the test set).
    difference : float
        Observed difference, oriented so that positive means A better.
    n_positive : int or None
        Documents of the class (F1 rows); None for cross-validation scores.
    """

    n: int
    score_a: float
    score_b: float
    difference: float
    n_positive: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-safe dictionary."""
        return {
            "n": self.n,
            "score_a": to_json_number(self.score_a),
            "score_b": to_json_number(self.score_b),
            "difference": to_json_number(self.difference),
            "n_positive": self.n_positive,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Observed:
        """Rebuild from :meth:`to_dict`."""
        return cls(
            n=int(data["n"]),
            score_a=from_json_number(data["score_a"]),
            score_b=from_json_number(data["score_b"]),
            difference=from_json_number(data["difference"]),
            n_positive=data.get("n_positive"),
        )
