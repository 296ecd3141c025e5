r"""Generative processes and rank statistics for simulation-based calibration.

Simulation-based calibration (SBC, Talts et al. 2018 [1]_): draw parameters
from the prior, data from the model given them, fit the model to the data and
record the rank of the true value among ``L`` (thinned) posterior draws. When the
fit computes the posterior of the same model, every rank ``0 .. L`` is equally
likely; a chi-squared test of the binned ranks checks that. Here the fits use
isbetter's public model code: :func:`isbetter.f1.paired.sample_delta` for the
paired F1 model of Zhang et al. (2016) [2]_ and
:class:`isbetter.HierarchicalModel` for the hierarchical correlated-t model of
Corani et al. (2017) [3]_.

The hierarchical model's prior bounds are *data dependent* (Corani et al.
2017, §3): ``delta0 ~ U(-b_d max|x|, b_d max|x|)``, ``std0 ~ U(0, b_0
sd(means))``, ``sigma_i ~ U(0, b_s mean(sd_i))`` on the scaled differences. Data
drawn from a fixed prior do not in general reproduce those bounds, so the
posterior would belong to another model and SBC would (rightly) fail. The
factors ``b`` are settable (:class:`isbetter.HierarchicalPriors`), so for every
simulated study :func:`matched_priors` chooses them such that the bounds the
model computes from the data are exactly the fixed bounds ``B`` the parameters
were drawn with (in score units; the model's scaling by the mean standard
deviation is an exact change of units). With data drawn from its own proper
prior ``sigma_i ~ U(0, B_sigma)`` the bound of ``sigma_i`` always matters, so the
model (correctly) keeps the bound's factor of the likelihood: these fits use the
exact likelihood (``settings["sigma_bound_term"] == "kept"``), not the variant
that drops the factor when it is 1 to double precision.

References
----------
.. [1] S. Talts, M. Betancourt, D. Simpson, A. Vehtari, A. Gelman (2018).
   Validating Bayesian inference algorithms with simulation-based calibration.
   arXiv:1804.06788.
.. [2] D. Zhang, J. Wang, E. Yilmaz, X. Wang, Y. Zhou (2016). Bayesian
   performance comparison of text classifiers. SIGIR.
.. [3] G. Corani, A. Benavoli, J. Demšar, F. Mangili, M. Zaffalon (2017).
   Statistical comparison of classifiers through Bayesian hierarchical modelling.
   *Machine Learning* 106(11), 1817-1837.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats

#: parameters of the hierarchical model whose ranks are recorded (delta_1: the first data set)
HIERARCHICAL_PARAMETERS = ("delta0", "std0", "nu", "delta_1")


# --------------------------------------------------------------------------- rank statistics
def thin(draws: np.ndarray, n_keep: int) -> np.ndarray:
    """Keep `n_keep` draws equally spaced along the last axis (chains concatenated)."""
    n = draws.shape[-1]
    if n_keep > n:
        raise ValueError(f"cannot keep {n_keep} of {n} draws")
    idx = np.linspace(0, n - 1, n_keep).round().astype(int)
    return draws[..., idx]


def ranks(draws: np.ndarray, truth: np.ndarray | float, n_keep: int) -> np.ndarray:
    """Rank of the true value among `n_keep` thinned draws: ``0 .. n_keep`` (last axis)."""
    kept = thin(np.asarray(draws, dtype=float), n_keep)
    return (kept < np.asarray(truth, dtype=float)[..., None]).sum(axis=-1)


def uniformity(rank_values: np.ndarray, n_ranks: int, bins: int) -> tuple[np.ndarray, float]:
    """Bin counts of ranks ``0 .. n_ranks - 1`` and the chi-squared p-value of uniformity.

    `n_ranks` must be a multiple of `bins`, so every bin holds as many rank values.
    """
    if n_ranks % bins:
        raise ValueError(f"n_ranks = {n_ranks} is not a multiple of bins = {bins}")
    counts = np.bincount(np.asarray(rank_values) // (n_ranks // bins), minlength=bins)
    return counts, float(stats.chisquare(counts).pvalue)


def smooth_uniformity(values: np.ndarray, n_ranks: int | None = None) -> float:
    """P-value of Neyman's smooth test of uniformity of order 2 (location and spread).

    The first two orthonormal polynomials of the uniform distribution score a shift
    of the ranks (component 1: the truth mostly above or below the draws, a biased
    posterior) and a ∪ or ∩ histogram (component 2: a posterior too narrow or too
    wide); their sum of squares is chi-squared with 2 degrees of freedom for uniform
    values. More powerful against these departures than the binned chi-squared test
    (:func:`uniformity`), which spreads its degrees of freedom over every shape.
    With `n_ranks` the values are ranks ``0 .. n_ranks - 1`` and the polynomials are
    orthonormal on those points (exact for discrete ranks); without, values in (0, 1).
    """
    v = np.asarray(values, dtype=float)
    if n_ranks is None:
        phi = np.column_stack([np.sqrt(3) * (2 * v - 1), np.sqrt(5) * (6 * v * v - 6 * v + 1)])
    else:
        x = (np.arange(n_ranks) + 0.5) / n_ranks
        q, _ = np.linalg.qr(np.column_stack([np.ones(n_ranks), x, x * x]))
        basis = q[:, 1:] * np.sqrt(n_ranks)  # orthonormal under the uniform weights 1/n
        phi = basis[v.astype(int)]
    components = phi.sum(axis=0) / np.sqrt(v.size)
    return float(stats.chi2.sf(float(components @ components), 2))


def hdi_covers(draws: np.ndarray, truth: np.ndarray | float, prob: float = 0.95) -> np.ndarray:
    """Whether each posterior's highest-density interval (isbetter's ``hdi``) holds the truth."""
    from isbetter.inference.summaries import hdi

    interval = hdi(draws, prob)
    truth = np.asarray(truth, dtype=float)
    return (interval[..., 0] <= truth) & (truth <= interval[..., 1])


# --------------------------------------------------------------------------- paired F1 model
def draw_f1_truth(reps: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Draw ``mu ~ Beta(1, 1)`` and ``theta+/- ~ Dir(1, 1, 1, 1)``: the default ``F1Prior``."""
    return {
        "mu": rng.beta(1.0, 1.0, size=reps),
        "theta_pos": rng.dirichlet(np.ones(4), size=reps),
        "theta_neg": rng.dirichlet(np.ones(4), size=reps),
    }


def draw_f1_counts(truth: dict[str, np.ndarray], n_docs: int, rng: np.random.Generator) -> Any:
    """Draw one test set of `n_docs` documents per truth: ``n+ ~ Bin``, ``c+/- ~ Mult``."""
    from isbetter import JointCounts

    n_pos = rng.binomial(n_docs, truth["mu"])
    pos = rng.multinomial(n_pos, truth["theta_pos"])
    neg = rng.multinomial(n_docs - n_pos, truth["theta_neg"])
    return JointCounts(pos.astype(np.int64), neg.astype(np.int64))


def true_f1_delta(truth: dict[str, np.ndarray], measure: Any) -> np.ndarray:
    """Return the population difference ``psi(A) - psi(B)`` of each truth (+: A better)."""
    from isbetter import JointCounts

    mu = truth["mu"][..., None]
    rates = JointCounts(truth["theta_pos"] * mu, truth["theta_neg"] * (1 - mu))
    cells_a, cells_b = rates.cells()
    return np.asarray(measure.difference(measure(*cells_a), measure(*cells_b)), dtype=float)


def f1_sbc(
    measures: tuple[str, ...],
    *,
    reps: int,
    n_docs: int,
    n_ranks: int,
    rng: np.random.Generator,
    model: str = "paired",
    coverage_draws: int = 0,
) -> dict[str, dict[str, Any]]:
    """SBC of the F1 model's delta for each measure; the same simulated test sets for all.

    The posterior is exact (conjugate), so its draws are independent: ``n_ranks - 1``
    draws per test set give the ranks. With ``coverage_draws > 0`` the 95% HDI of
    that many further draws is checked too. ``model="unpaired"`` fits the model that
    ignores the pairing (and has another prior): a deliberately wrong fit.
    """
    from isbetter import get_measure
    from isbetter.f1.paired import sample_delta

    truth = draw_f1_truth(reps, rng)
    counts = draw_f1_counts(truth, n_docs, rng)
    out: dict[str, dict[str, Any]] = {}
    for name in measures:
        measure = get_measure(name)
        true = true_f1_delta(truth, measure)
        draws = sample_delta(counts, measure, model=model, draws=n_ranks - 1, rng=rng)  # type: ignore[arg-type]
        entry: dict[str, Any] = {"ranks": ranks(draws, true, n_ranks - 1), "truth": true}
        if coverage_draws:
            more = sample_delta(counts, measure, model=model, draws=coverage_draws, rng=rng)  # type: ignore[arg-type]
            entry["covered"] = hdi_covers(more, true)
        out[name] = entry
    return out


# --------------------------------------------------------------------------- hierarchical model
@dataclass(frozen=True)
class HierarchicalSetting:
    """One hierarchical SBC setting: fixed prior bounds (score units) and the data's shape.

    ``rho_data`` is the correlation the scores are drawn with, ``rho_fit`` the one the
    fit assumes; they differ only in a deliberately broken setting.
    """

    n_datasets: int
    n_scores: int = 10
    rho_data: float = 0.1
    rho_fit: float = 0.1
    delta0_bound: float = 1.0
    std0_bound: float = 1.0
    sigma_bound: float = 1.0
    alpha: tuple[float, float] = (1.0, 2.0)
    beta: tuple[float, float] = (0.01, 0.1)
    parameterization: str = "auto"
    draws: int = 500
    tune: int = 500
    chains: int = 2
    cores: int = 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe settings."""
        return asdict(self)


def draw_hierarchical_truth(s: HierarchicalSetting, rng: np.random.Generator) -> dict[str, Any]:
    """Draw the parameters from the model's prior with the fixed bounds of `s`."""
    alpha = rng.uniform(*s.alpha)
    beta = rng.uniform(*s.beta)
    nu = 1.0 + rng.gamma(alpha, 1.0 / beta)  # nu - 1 ~ Gamma(alpha, rate beta)
    delta0 = rng.uniform(-s.delta0_bound, s.delta0_bound)
    std0 = rng.uniform(0.0, s.std0_bound)
    delta = delta0 + std0 * rng.standard_t(nu, size=s.n_datasets)
    sigma = rng.uniform(0.0, s.sigma_bound, size=s.n_datasets)
    return {"delta0": delta0, "std0": std0, "nu": nu, "delta": delta, "sigma": sigma}


def draw_scores(
    delta: np.ndarray, sigma: np.ndarray, n_scores: int, rho: float, rng: np.random.Generator
) -> np.ndarray:
    """Differences ``x_i ~ MVN(delta_i 1, sigma_i^2 ((1 - rho) I + rho 11^T))``, ``(q, n)``."""
    q = delta.size
    shared = rng.standard_normal((q, 1))  # compound symmetry: one common term per data set
    own = rng.standard_normal((q, n_scores))
    noise = np.sqrt(rho) * shared + np.sqrt(1.0 - rho) * own
    return delta[:, None] + sigma[:, None] * noise


def matched_priors(x: np.ndarray, s: HierarchicalSetting) -> Any:
    """Prior factors that make the bounds the model computes from `x` equal those of `s`.

    Mirrors the model's data preparation (``hierarchical_likelihood.prepare``; the
    calibration test checks the bounds against it): scale = mean per-data-set
    population sd; on scaled data, the bound of ``delta0`` is ``b_d max(max|x|,
    max sd)``, that of ``std0`` is ``b_0 sd(means)`` and that of ``sigma_i`` is
    ``b_s mean(sd)``.
    """
    from isbetter import HierarchicalPriors

    sd = x.std(axis=1)
    scale = float(sd.mean())
    max_abs = max(float(np.abs(x).max()), float(sd.max())) / scale
    sd_means = float(np.std(x.mean(axis=1) / scale))
    return HierarchicalPriors(
        alpha_lower=s.alpha[0],
        alpha_upper=s.alpha[1],
        beta_lower=s.beta[0],
        beta_upper=s.beta[1],
        delta0_bound=s.delta0_bound / scale / max_abs,
        std0_upper=s.std0_bound / scale / sd_means,
        std_upper=s.sigma_bound / scale / float((sd / scale).mean()),
    )


_MODELS: dict[tuple[int, str], Any] = {}


def hierarchical_model(n_datasets: int, parameterization: str = "auto") -> Any:
    """One compiled :class:`isbetter.HierarchicalModel` per process and shape (reused)."""
    from isbetter import HierarchicalModel

    key = (n_datasets, parameterization)
    if key not in _MODELS:
        _MODELS[key] = HierarchicalModel(n_datasets, parameterization=parameterization)  # type: ignore[arg-type]
    return _MODELS[key]


def kept_draws(
    posterior: dict[str, np.ndarray], true: dict[str, float], n_ranks: int
) -> dict[str, Any]:
    """Return what ``validation/teeth.py`` plants miscalibrations into.

    Per quantity: the ``n_ranks - 1`` thinned draws, the mean and sd of all draws,
    and the truth.
    """
    return {
        "draws": {k: thin(np.asarray(v, dtype=float), n_ranks - 1) for k, v in posterior.items()},
        "mean": {k: float(np.mean(v)) for k, v in posterior.items()},
        "sd": {k: float(np.std(v)) for k, v in posterior.items()},
        "truth": {k: float(true[k]) for k in posterior},
    }


def study_record(
    posterior: dict[str, np.ndarray],
    true: dict[str, float],
    diagnostics: Any,
    n_ranks: int,
    *,
    keep: bool = False,
    coverage: bool = True,
    ess: bool = False,
) -> dict[str, Any]:
    """Return the record of one simulated study: what every SBC replication returns.

    Parameters
    ----------
    posterior : dict of str to numpy.ndarray
        Posterior draws of each recorded quantity.
    true : dict of str to float
        The quantities' true values, drawn from the prior.
    diagnostics : object
        The fit's diagnostics (``divergences`` and ``r_hat_max`` are recorded).
    n_ranks : int
        Number of possible ranks: the truth is ranked among ``n_ranks - 1`` thinned draws.
    keep : bool, default False
        Also record the thinned draws, means, sds and truths (:func:`kept_draws`).
    coverage : bool, default True
        Record whether each 95% HDI covers its truth.
    ess : bool, default False
        Record the smallest bulk effective sample size (``ess_bulk_min``).

    Returns
    -------
    dict
        ``kept`` (with `keep`), ``ranks``, ``covered`` (with `coverage`), ``divergences``,
        ``r_hat_max`` and ``ess_bulk_min`` (with `ess`); a study adds its own entries
        (its index, the fit's settings, ...) with ``|``.
    """
    record: dict[str, Any] = {"kept": kept_draws(posterior, true, n_ranks)} if keep else {}
    record["ranks"] = {k: int(ranks(v, true[k], n_ranks - 1)) for k, v in posterior.items()}
    if coverage:
        record["covered"] = {k: bool(hdi_covers(v, true[k])) for k, v in posterior.items()}
    record["divergences"] = int(diagnostics.divergences)
    record["r_hat_max"] = float(diagnostics.r_hat_max)
    if ess:
        record["ess_bulk_min"] = float(diagnostics.ess_bulk_min)
    return record


def hierarchical_replication(
    s: HierarchicalSetting, seed: np.random.SeedSequence, n_ranks: int, keep: bool = False
) -> dict[str, Any]:
    """Simulate one study from the prior, fit it, return ranks, HDI coverage and diagnostics.

    With `keep`, also the thinned draws and truths (:func:`kept_draws`).
    """
    from isbetter import ConvergenceWarning, from_arrays

    study = seed.spawn_key[-1] if seed.spawn_key else None  # its index in the run
    rng = np.random.default_rng(seed)
    truth = draw_hierarchical_truth(s, rng)
    x = draw_scores(truth["delta"], truth["sigma"], s.n_scores, s.rho_data, rng)
    scores = from_arrays(x, np.zeros_like(x), runs=1).paired("A", "B")
    model = hierarchical_model(s.n_datasets, s.parameterization)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # recorded, not raised
            res = model.fit(
                scores,
                rho=s.rho_fit,
                priors=matched_priors(x, s),
                draws=s.draws,
                tune=s.tune,
                chains=s.chains,
                cores=s.cores,
                rng=int(rng.integers(2**31)),
            )
    except BaseException as exc:  # nutpie's Rust panics derive from BaseException
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        # e.g. nutpie's "All initialization points failed" (a non-finite gradient of the
        # exact-bound likelihood for some data; see validation/README.md). Leaving such a
        # study out conditions on the data and the sampler's seed only, which keeps the
        # ranks of the others uniform: given the data, the truth is a posterior draw.
        return {"failed": f"study {study}: {type(exc).__name__}: {str(exc).splitlines()[0]}"}
    posterior = {
        "delta0": res.delta0,
        "std0": res.std0,
        "nu": res.nu,
        "delta_1": res.delta[:, 0],
    }
    true = {"delta0": truth["delta0"], "std0": truth["std0"], "nu": truth["nu"]}
    true["delta_1"] = truth["delta"][0]
    return study_record(posterior, true, res.diagnostics, n_ranks, keep=keep, ess=True) | {
        "study": study,
        "bound_term": res.settings.get("sigma_bound_term"),
        "parameterization": res.settings.get("parameterization"),
        "refitted": res.settings.get("refit_of") is not None,
    }
