"""Studies with a known, fixed truth: decision error rates of the F1 and hierarchical models.

A *winner* is declared when ``p_a_better`` or ``p_b_better`` reaches the threshold
(0.95) and *equivalence* when ``p_rope`` does (``ComparisonResult.decision``). The
F1 rows also apply the HDI + ROPE rule of Zhang et al. (2016): the 95% HDI entirely
beyond the ROPE (``≫``/``≪``) or inside it (``≈``).
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import optimize

from validation.calibration import draw_scores, hierarchical_model


# --------------------------------------------------------------------------- F1
def f1_scenario(target: float, measure: Any, *, mu: float = 0.5) -> Any:
    """Return a joint distribution of (A, B) outcomes whose ``delta`` equals `target`.

    Starts from SIGIR 2016 scenario (b) (F1_A = F1_B = 0.5) and moves mass on the
    positive documents from "both wrong" to "only A right" until ``delta = target``.
    """
    from isbetter import JointDistribution

    def make(t: float) -> Any:
        return JointDistribution(
            mu, (0.3, 0.2 + t, 0.2, 0.3 - t), (0.3, 0.2, 0.2, 0.3), name=f"delta={target:g}"
        )

    if target == 0:
        return make(0.0)
    t = optimize.brentq(lambda t: make(t).true_delta(measure) - target, 0.0, 0.3, xtol=1e-14)
    return make(t)


def f1_decisions(
    distribution: Any,
    measure: Any,
    *,
    n_docs: int,
    sets: int,
    rope: float,
    draws: int,
    rng: np.random.Generator,
    threshold: float = 0.95,
) -> dict[str, Any]:
    """Simulate `sets` test sets from `distribution`; count the decisions of both rules."""
    from isbetter.f1.paired import sample_delta
    from isbetter.inference.decisions import hdi_rope_decision, threshold_decision
    from isbetter.inference.posterior import DrawsPosterior
    from isbetter.inference.summaries import hdi
    from isbetter.results import Probabilities

    counts = distribution.sample_counts(n_docs, sets, rng)
    d = sample_delta(counts, measure, draws=draws, rng=rng)
    intervals = hdi(d, 0.95)
    truth = distribution.true_delta(measure)
    by_probability: dict[str, int] = {}
    by_hdi: dict[str, int] = {}
    for row, (lo, hi) in zip(d, intervals, strict=True):
        p = DrawsPosterior(row).region_masses(rope).mean(axis=0)
        rel = threshold_decision(Probabilities(*map(float, p)), threshold)
        by_probability[rel] = by_probability.get(rel, 0) + 1
        rel = hdi_rope_decision(float(lo), float(hi), float(row.mean()), rope)
        by_hdi[rel] = by_hdi.get(rel, 0) + 1
    covered = (intervals[:, 0] <= truth) & (truth <= intervals[:, 1])
    return {
        "truth": truth,
        "sets": sets,
        "by_probability": by_probability,
        "by_hdi": by_hdi,
        "hdi95_coverage": float(covered.mean()),
    }


# --------------------------------------------------------------------------- hierarchical
@dataclass(frozen=True)
class HierarchicalScenario:
    """A fixed truth for the hierarchical model, fitted with the default priors.

    ``delta_i ~ N(delta0, std0)``, ``sigma_i ~ U(*sigma)``; ``n_scores`` correlated
    scores per data set (``rho``), the fit assumes the same ``rho``.
    """

    name: str
    delta0: float
    std0: float
    n_datasets: int = 10
    n_scores: int = 10
    rho: float = 0.1
    sigma: tuple[float, float] = (0.01, 0.03)
    rope: float = 0.01
    draws: int = 1000
    tune: int = 500
    chains: int = 2
    cores: int = 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe settings."""
        return asdict(self)


def hierarchical_decision_replication(
    sc: HierarchicalScenario, seed: np.random.SeedSequence, threshold: float = 0.95
) -> dict[str, Any]:
    """Simulate one study of scenario `sc`, fit it with default priors, return its decisions."""
    from isbetter import ConvergenceWarning, from_arrays
    from isbetter.inference.decisions import threshold_decision
    from isbetter.inference.summaries import hdi

    rng = np.random.default_rng(seed)
    delta = rng.normal(sc.delta0, sc.std0, size=sc.n_datasets)
    sigma = rng.uniform(*sc.sigma, size=sc.n_datasets)
    x = draw_scores(delta, sigma, sc.n_scores, sc.rho, rng)
    scores = from_arrays(x, np.zeros_like(x), runs=1).paired("A", "B")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # recorded, not raised
            res = hierarchical_model(sc.n_datasets).fit(
                scores,
                rope=sc.rope,
                rho=sc.rho,
                draws=sc.draws,
                tune=sc.tune,
                chains=sc.chains,
                cores=sc.cores,
                rng=int(rng.integers(2**31)),
            )
    except BaseException as exc:  # nutpie's Rust panics derive from BaseException
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        # a fit that cannot start: counted, left out
        study = seed.spawn_key[-1] if seed.spawn_key else None
        return {"failed": f"study {study}: {type(exc).__name__}: {str(exc).splitlines()[0]}"}
    lo, hi = hdi(res.delta0, 0.95)
    return {
        "argmax": res.decision(threshold),
        "predictive": threshold_decision(res.predictive, threshold),
        "delta0_covered": bool(lo <= sc.delta0 <= hi),
        "divergences": int(res.diagnostics.divergences),
        "r_hat_max": float(res.diagnostics.r_hat_max),
    }
