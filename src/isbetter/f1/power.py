"""Power analysis of the paired and unpaired F1 models by simulation (Zhang et al. 2016).

How many test documents does it take to *show* that A is better than B (or that
the two are practically equivalent), if the truth is a given joint distribution
of the two classifiers' outcomes? :func:`power_analysis` simulates test sets of
each size from that distribution, runs the paired and the unpaired model of
Zhang et al. (2016) on every simulated test set, and reports the fraction in
which the HDI + ROPE decision reaches the goal: the statistical power.

With the exact conjugate posterior each replicate costs a few milliseconds, and
the replicates are vectorised (the sampler takes a stack of count tables). The
same simulated test sets are used for every model (common random numbers), so
the difference between the models is estimated more precisely than either power.

Simulation, as in section 4.1 of the paper: for each size N and replicate,
``n+ ~ Bin(N, mu)``, ``c+ ~ Mult(n+, theta+)``, ``c- ~ Mult(N - n+, theta-)``;
then `draws` exact posterior draws of delta, their ``hdi_prob`` HDI, and the
decision of section 3.2 (goal "≫": HDI entirely above +rope; "≈": HDI entirely
inside the ROPE; "≪": entirely below -rope).

References
----------
.. [1] Zhang, Wang, Yilmaz, Wang, Zhou (2016). Bayesian performance comparison of
   text classifiers. SIGIR. Section 4.1, Table 3, Figure 5.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError
from isbetter.core.progress import progress_bar
from isbetter.core.provenance import make_settings
from isbetter.core.validate import (
    check_positive_int,
    check_probability,
    check_rope,
    legacy_keywords,
)
from isbetter.core.vocabulary import POWER_GOALS
from isbetter.f1.legacy import POWER, power_keywords
from isbetter.f1.measures import Measure, get_measure
from isbetter.f1.paired import F1Prior, sample_delta
from isbetter.f1.predictions import JointCounts
from isbetter.inference.decisions import relation_key
from isbetter.inference.seeds import RNGLike, resolve_seed
from isbetter.inference.summaries import hdi
from isbetter.results.power import PowerResult

__all__ = [
    "SIGIR_SCENARIO_A",
    "SIGIR_SCENARIO_B",
    "GOALS",
    "JointDistribution",
    "PowerResult",
    "power_analysis",
]

GOALS = POWER_GOALS


def _simplex(values: Any, name: str) -> tuple[float, ...]:
    arr = np.asarray(values, dtype=float).ravel()
    if (
        arr.shape != (4,)
        or np.any(~np.isfinite(arr))
        or np.any(arr < 0)
        or abs(arr.sum() - 1) > 1e-9
    ):
        raise InputError(
            f"`{name}` must be 4 probabilities of the outcomes (1,1), (1,0), (0,1), (0,0) "
            f"that sum to 1, got {values!r}."
        )
    return tuple(float(x) for x in arr)


@dataclass(frozen=True)
class JointDistribution:
    """A generating distribution of two classifiers' joint outcomes (the "truth").

    Attributes
    ----------
    mu : float
        Probability that a document is positive.
    theta_pos, theta_neg : tuple of 4 floats
        Probabilities of the outcomes (A, B) = (1,1), (1,0), (0,1), (0,0) on a
        positive / negative document.
    name : str, default: "custom"
        A name for reports.

    Examples
    --------
    >>> from isbetter.f1.measures import f1
    >>> round(SIGIR_SCENARIO_A.true_delta(f1), 6), round(SIGIR_SCENARIO_B.true_delta(f1), 6)
    (0.1, 0.0)
    """

    mu: float
    theta_pos: tuple[float, ...]
    theta_neg: tuple[float, ...]
    name: str = "custom"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_probability(self.mu, "mu"))
        object.__setattr__(self, "theta_pos", _simplex(self.theta_pos, "theta_pos"))
        object.__setattr__(self, "theta_neg", _simplex(self.theta_neg, "theta_neg"))

    def to_dict(self) -> dict[str, Any]:
        """Return the distribution as JSON-ready values (for a result's settings)."""
        return {
            "mu": self.mu,
            "theta_pos": list(self.theta_pos),
            "theta_neg": list(self.theta_neg),
            "name": self.name,
        }

    def true_delta(self, measure: Measure) -> float:
        """Return the population difference of `measure` (positive: A better)."""
        c = JointCounts(
            np.asarray(self.theta_pos) * self.mu, np.asarray(self.theta_neg) * (1 - self.mu)
        )
        cells_a, cells_b = c.cells()
        return float(measure.difference(measure(*cells_a), measure(*cells_b)))

    def sample_counts(self, n: int, replicates: int, rng: np.random.Generator) -> JointCounts:
        """Simulate `replicates` test sets of `n` documents; counts of shape (replicates, 4)."""
        n_pos = rng.binomial(n, self.mu, size=replicates)
        pos = rng.multinomial(n_pos, self.theta_pos)
        neg = rng.multinomial(n - n_pos, self.theta_neg)
        return JointCounts(pos.astype(np.int64), neg.astype(np.int64))


#: SIGIR 2016 section 4.1, scenario (a): F1_A = 0.6, F1_B = 0.5; goal "A ≫ B"
SIGIR_SCENARIO_A = JointDistribution(
    0.5, (0.3, 0.3, 0.2, 0.2), (0.2, 0.2, 0.3, 0.3), name="SIGIR 2016 scenario (a)"
)
#: SIGIR 2016 section 4.1, scenario (b): F1_A = F1_B = 0.5; goal "A ≈ B"
SIGIR_SCENARIO_B = JointDistribution(
    0.5, (0.3, 0.2, 0.2, 0.3), (0.3, 0.2, 0.2, 0.3), name="SIGIR 2016 scenario (b)"
)


@legacy_keywords(POWER, power_keywords)
def power_analysis(
    distribution: JointDistribution,
    *,
    sizes: Sequence[int],
    goal: str = "a_better",
    replicates: int = 1000,
    rope: float = 0.05,
    hdi_prob: float = 0.95,
    draws: int = 5000,
    models: Sequence[str] = ("paired", "unpaired"),
    metric: str | Measure = "f1",
    prior: F1Prior | None = None,
    rng: RNGLike = None,
    progress: bool | None = None,
) -> PowerResult:
    """Estimate the power of the paired and unpaired models to reach a decision.

    Parameters
    ----------
    distribution : JointDistribution
        The generating joint distribution, e.g. :data:`SIGIR_SCENARIO_A`.
    sizes : sequence of int
        Test-set sizes N to simulate.
    goal : {"a_better", "equivalent", "b_better"}, default: "a_better"
        The decision of the HDI + ROPE rule to reach (the symbols ``"≫"``,
        ``"≈"``, ``"≪"`` and ASCII ``">>"``, ``"~"``, ``"<<"`` are accepted too).
    replicates : int, default: 1000
        Simulated test sets per size; the standard error of a power p is
        ``sqrt(p (1 - p) / replicates)``.
    rope : float, default: 0.05
        ROPE half-width.
    hdi_prob : float, default: 0.95
        HDI mass of the decision rule.
    draws : int, default: 5000
        Posterior draws per simulated test set (the HDI bounds' Monte Carlo
        error is then about 0.1 posterior sd).
    models : sequence of {"paired", "unpaired"}
        Models to evaluate, on the same simulated test sets.
    metric : str or Measure, default: "f1"
        The measure of the contingency table compared: a name or a measure object
        such as ``fbeta(2)`` (:func:`isbetter.f1.measures.get_measure`).
    prior : F1Prior, optional
        Hyper-parameters of the models.
    rng : int, numpy.random.Generator or None
        Seed; recorded in ``settings["seed"]``.
    progress : bool, optional
        A progress bar of the simulated test sets on stderr (default: when stderr is
        a terminal).

    The old name of `metric`, ``measure``, still works for this release, with a
    :class:`~isbetter.RenamedArgumentWarning`.

    Returns
    -------
    PowerResult

    Examples
    --------
    >>> res = power_analysis(SIGIR_SCENARIO_A, sizes=[500], replicates=50, draws=1000, rng=0)
    >>> res.table[["size", "model", "replicates"]].to_dict(orient="records")
    [{'size': 500, 'model': 'paired', 'replicates': 50},
     {'size': 500, 'model': 'unpaired', 'replicates': 50}]
    """
    goal, sizes, models = _checked_design(distribution, goal, sizes, models)
    replicates = check_positive_int(replicates, "replicates")
    rule = _Rule(
        goal,
        check_rope(rope),
        check_probability(hdi_prob, "hdi_prob", open_interval=True),
        check_positive_int(draws, "draws", minimum=2),
        get_measure(metric),
        prior,
    )
    seed = resolve_seed(rng)
    rows = []
    bar = progress_bar(len(sizes) * replicates, progress, desc="test sets", unit="set")
    for n, size_ss in zip(sizes, np.random.SeedSequence(seed).spawn(len(sizes)), strict=True):
        hits = _simulate_size(distribution, n, replicates, size_ss, models, rule)
        bar.update(replicates)
        rows += [_power_row(n, mod, hits[mod], replicates) for mod in models]
    bar.close()
    settings = make_settings(
        "f1_power",
        seed,
        rope=rule.rope,
        draws=rule.draws,
        hdi_prob=rule.hdi_prob,
        goal=goal,
        replicates=replicates,
        measure=rule.measure.name,
        distribution=distribution.to_dict(),
        prior=(prior or F1Prior()).to_dict(),
    )
    return PowerResult(
        goal=goal,
        metric=rule.measure.name,
        scenario=distribution.name,
        sizes=sizes,
        models=models,
        replicates=replicates,
        rope=rule.rope,
        hdi_prob=rule.hdi_prob,
        true_delta=distribution.true_delta(rule.measure),
        table=pd.DataFrame(rows),
        settings=settings,
    )


@dataclass(frozen=True)
class _Rule:
    """What each simulated test set is judged by: the decision goal and the posterior."""

    goal: str
    rope: float
    hdi_prob: float
    draws: int
    measure: Measure
    prior: F1Prior | None


def _power_row(n: int, model: str, successes: int, replicates: int) -> dict[str, Any]:
    p = successes / replicates
    return {
        "size": n,
        "model": model,
        "power": p,
        "se": float(np.sqrt(p * (1 - p) / replicates)),
        "successes": successes,
        "replicates": replicates,
    }


def _checked_design(
    distribution: Any, goal: str, sizes: Sequence[int], models: Sequence[str]
) -> tuple[str, tuple[int, ...], tuple[str, ...]]:
    """Check what :func:`power_analysis` simulates: distribution, goal, sizes and models."""
    if not isinstance(distribution, JointDistribution):
        raise InputError(
            "`distribution` must be a JointDistribution(mu, theta_pos, theta_neg), got "
            f"{type(distribution).__name__}."
        )
    goal = relation_key(goal, "goal")
    if goal not in GOALS:
        raise InputError(f"Unknown goal {goal!r}. Available: {', '.join(map(repr, GOALS))}.")
    checked = tuple(check_positive_int(n, "sizes") for n in sizes)
    if not checked:
        raise InputError("`sizes` is empty; give at least one test-set size, e.g. [500, 1000].")
    for mod in models:
        if mod not in ("paired", "unpaired"):
            raise InputError(f"Unknown model {mod!r}. Available: 'paired', 'unpaired'.")
    return goal, checked, tuple(models)


def _reaches(goal: str, lo: np.ndarray, hi: np.ndarray, rope: float) -> np.ndarray:
    """Which HDIs reach `goal` under the HDI + ROPE rule (vectorised)."""
    if goal == "a_better":
        return lo > rope
    if goal == "b_better":
        return hi < -rope
    return (lo >= -rope) & (hi <= rope)


def _simulate_size(
    distribution: JointDistribution,
    n: int,
    replicates: int,
    size_ss: np.random.SeedSequence,
    models: tuple[str, ...],
    rule: _Rule,
) -> dict[str, int]:
    """Simulate `replicates` test sets of `n` documents; count the successes per model.

    Every model sees the same simulated test sets (common random numbers); the
    replicates are processed in chunks of at most a million posterior draws.
    """
    data_ss, *model_ss = size_ss.spawn(1 + len(models))
    data_rng = np.random.default_rng(data_ss)
    model_rngs = [np.random.default_rng(s) for s in model_ss]
    hits = dict.fromkeys(models, 0)
    chunk = max(1, min(replicates, 1_000_000 // rule.draws))
    for start in range(0, replicates, chunk):
        counts = distribution.sample_counts(n, min(chunk, replicates - start), data_rng)
        for mod, g in zip(models, model_rngs, strict=True):
            delta = sample_delta(
                counts,
                rule.measure,
                model=mod,  # type: ignore[arg-type]
                prior=rule.prior,
                draws=rule.draws,
                rng=g,
            )
            bounds = hdi(delta, rule.hdi_prob)
            hits[mod] += int(_reaches(rule.goal, bounds[:, 0], bounds[:, 1], rule.rope).sum())
    return hits
