r"""Hierarchical paired model of two models' binary item scores over many subtasks.

Answers: *on the next subtask of this benchmark, is model A more accurate than B by
more than the ROPE, practically as accurate, or less?* — and, on every subtask, how
large the difference is once the subtasks inform each other (DESIGN §4.3).

Per subtask :math:`t` with :math:`N_t` items, of which :math:`n_{10}` only A and
:math:`n_{01}` only B got right (:math:`D_t = n_{10} + n_{01}`), the exact likelihood is
the McNemar one,

.. math::
    D_t \sim \mathrm{Bin}(N_t, \phi_t), \qquad n_{10} \mid D_t \sim \mathrm{Bin}(D_t, s_t),

and the difference in accuracy is :math:`\delta_t = \phi_t (2 s_t - 1)`. The direction
is pooled robustly, :math:`\operatorname{logit} s_t \sim t_\nu(\mu, \sigma)`, the
discordance rate normally, :math:`\operatorname{logit}\phi_t \sim N(\mu_\phi, \tau_\phi)`,
with the weakly informative priors of :class:`.priors.ItemsHierarchicalPriors`.

The log density is compiled once per machine and cached (:mod:`.density`); nutpie
samples it. ``import isbetter`` imports none of this.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from isbetter.core.errors import InputTypeError
from isbetter.core.provenance import make_settings
from isbetter.core.validate import (
    check_choice,
    check_positive_int,
    check_probability,
    check_rope,
)
from isbetter.inference.decisions import probabilities_from_masses
from isbetter.inference.posterior import DrawsPosterior
from isbetter.inference.records import MCMCDiagnostics, Observed
from isbetter.inference.sampling import Sampling, diagnose, sample, warn_if_poor
from isbetter.inference.seeds import resolve_seed
from isbetter.inference.summaries import estimate_from_draws
from isbetter.items.hierarchical import density, population
from isbetter.items.hierarchical.counts import SubtaskCounts, subtask_counts
from isbetter.items.hierarchical.priors import ItemsHierarchicalPriors
from isbetter.items.hierarchical.route import LOW_RANK_MAX_SUBTASKS, choose_parameterization
from isbetter.results.items import ItemsHierarchicalResult

__all__ = ["PARAMETERIZATIONS", "hierarchical_items"]

Parameterization = Literal["auto", "noncentred", "centred"]
#: how the direction and rate coordinates are sampled (.route chooses for "auto")
PARAMETERIZATIONS = ("auto", "noncentred", "centred")
#: NUTS's target acceptance, and tuning steps per chain unless told. With few subtasks
#: (LOW_RANK_MAX_SUBTASKS or fewer) the hyper-parameters are prior-dominated and the
#: Student-t's heavy-tailed corner (nu near 1, sigma large) is reached: on 5 subtasks of
#: 100-300 items, 0.9 left 1-6 divergences in each of 6 fits, 0.95 in 1 of 6; 1000 tuning
#: steps. With more subtasks the data pin the hyper-parameters: on bench/bench_items_subtasks.py's
#: 57 subtasks (4 pairs of its models x 2 seeds, load ~10), 0.8 and 500 tuning steps took
#: 10-12.6 leapfrog steps a draw instead of 15 (0.9), no divergence in any of the 16 fits
#: either way, and bulk / tail ESS min 605-1181 / 483-1218 of 4000 draws against 313-1010
#: / 87-980 with 0.9 and 1000 steps (no fewer effective draws: the longer tuning only
#: cost time); sampler CPU 0.6-0.97 s a fit against 0.92-2.22 s (some of those refitted)
TARGET_ACCEPT = 0.8
FEW_TARGET_ACCEPT = 0.95
TUNE = 500
FEW_TUNE = 1000


def hierarchical_items(
    counts: Any,
    *,
    rope: float = 0.0,
    system_a: str = "A",
    system_b: str = "B",
    metric: str = "accuracy",
    hdi_prob: float = 0.95,
    priors: ItemsHierarchicalPriors | None = None,
    pooled: bool = True,
    parameterization: Parameterization = "auto",
    draws: int = 1000,
    sampling: Sampling | None = None,
    rng: int | np.random.Generator | None = None,
) -> ItemsHierarchicalResult:
    r"""Compare two models item by item over many subtasks (hierarchical, binary items).

    Parameters
    ----------
    counts : pandas.DataFrame
        One row per subtask: ``task, n11, n10, n01, n00`` (both right, only A right,
        only B right, neither).
    rope : float, default: 0.0
        Half-width of the region of practical equivalence, in accuracy (0-1) units.
    system_a, system_b : str, default: "A", "B"
        Names of the two models; the difference is positive when A is better.
    metric : str, default: "accuracy"
        What the 0/1 scores measure, as the result names it (e.g. ``"acc"``).
    hdi_prob : float, default: 0.95
        Mass of the population mean difference's HDI (the HDI + ROPE decision).
    priors : ItemsHierarchicalPriors, optional
        Prior settings; default: :class:`ItemsHierarchicalPriors`'s.
    pooled : bool, default: True
        False switches pooling off: each subtask alone, :math:`s_t \sim U(0, 1)` and
        :math:`\phi_t \sim \mathrm{Beta}(2, 2)`, so each :math:`\delta_t` has exactly the
        posterior of the one-task paired model (Dirichlet(1, 1, 1, 1) on the 2x2 table);
        the probabilities are then those of the mean of the :math:`\delta_t` over these
        subtasks (no next subtask without a population).
    parameterization : {"auto", "noncentred", "centred"}, default: "auto"
        How :math:`\operatorname{logit} s_t` and :math:`\operatorname{logit}\phi_t` are
        sampled: as :math:`\mu + \sigma z_t` (non-centred), or themselves (centred).
        The centred form mixes better when the subtasks differ more than their data are
        noisy, and meets its funnel when they agree (two near-identical models; rates of
        few items). ``"auto"`` chooses for each from the counts
        (:func:`.route.choose_parameterization`) and refits a flagged fit with a centred
        part non-centred; ``settings["parameterization"]`` records what was sampled,
        ``settings["parameterization_choice"]`` and ``settings["refit_of"]`` why.
    draws : int, default: 1000
        Posterior draws per chain.
    sampling : Sampling, optional
        Tuning steps (default 1000 with up to 20 subtasks, 500 with more), chains
        (default 4) and cores.
    rng : int, numpy.random.Generator or None
        Seed; the same seed gives the same result. Recorded in ``settings["seed"]``.

    Returns
    -------
    ItemsHierarchicalResult
        ``p_a_better, p_rope, p_b_better`` for the next subtask by argmax counting,
        ``predictive`` probabilities, ``estimate`` of the population mean difference,
        ``delta`` (each subtask's shrunk difference), ``diagnostics`` and ``settings``.

    Raises
    ------
    InputError
        Bad counts (:func:`.counts.subtask_counts`), `rope` or sampler settings.

    Warns
    -----
    ConvergenceWarning
        R-hat above 1.01, fewer than 100 effective draws per chain, or divergences.

    Notes
    -----
    The **population mean difference** is, for each posterior draw, the expectation
    of :math:`\delta` over the population of subtasks, :math:`E[\phi](2E[s] - 1)`
    (by quadrature: :func:`.population.population_mean`) — not :math:`\delta` at the
    means of the logits. The **next subtask's difference** is
    :math:`\delta_{next} = \phi_{new}(2 s_{new} - 1)`; each draw gives its masses in
    the three regions (:class:`.population.NextSubtaskPosterior`), counted by argmax
    (the reported probabilities) and averaged (``predictive``), as DESIGN §3.2.

    Examples
    --------
    >>> import pandas as pd
    >>> counts = pd.DataFrame({"task": ["x", "y", "z"], "n11": [50, 60, 40],
    ...                        "n10": [12, 9, 15], "n01": [5, 6, 4], "n00": [33, 25, 41]})
    >>> res = hierarchical_items(counts, rope=0.01, rng=1)  # doctest: +SKIP
    """
    data = subtask_counts(counts)
    rope = check_rope(rope)
    hdi_prob = check_probability(hdi_prob, "hdi_prob", open_interval=True)
    priors, sampling = _checked(priors, pooled, sampling)
    parameterization = check_choice(  # type: ignore[assignment]
        parameterization, "parameterization", PARAMETERIZATIONS
    )
    run: dict[str, Any] = {
        "draws": check_positive_int(draws, "draws", minimum=1),
        "chains": sampling.chains,
        "cores": sampling.cores,
        "seed": resolve_seed(rng),
    }
    few = len(data.tasks) <= LOW_RANK_MAX_SUBTASKS
    run["tune"] = sampling.tune_or(FEW_TUNE if few else TUNE)
    mass_matrix = "low_rank" if few else "diagonal"
    run["target_accept"] = FEW_TARGET_ACCEPT if few else TARGET_ACCEPT
    model = (data, priors, pooled, mass_matrix)
    chosen: dict[str, str] = {"direction": parameterization, "rate": parameterization}
    choice, refit_of = None, None
    if parameterization == "auto":
        choice = choose_parameterization(data)
        chosen = {"direction": choice["direction"], "rate": choice["rate"]}
    idata, diagnostics = _fit(model, chosen, run)
    if choice is not None and "centred" in chosen.values() and not diagnostics.converged:
        # the safety net: a flagged fit with a centred part is replaced by the non-centred one's
        refit_of = {"parameterization": chosen, **diagnostics.to_dict()}
        chosen = {"direction": "noncentred", "rate": "noncentred"}
        idata, diagnostics = _fit(model, chosen, run)
    warn_if_poor(diagnostics, "hierarchical items model")
    options = {
        "pooled": pooled,
        "parameterization": chosen if pooled else None,
        "parameterization_choice": choice,
        "refit_of": refit_of,
        "mass_matrix": mass_matrix,
    }
    settings = _settings(data, rope, priors, run, options)
    labels = (system_a, system_b, str(metric))
    return _result(data, idata, diagnostics, (rope, hdi_prob), settings, labels, pooled)


def _fit(
    model: tuple[Any, ...], parameterization: dict[str, str], run: dict[str, Any]
) -> tuple[Any, Any]:
    """Sample the model (data, priors, pooled, mass matrix); return its draws and diagnostics."""
    data, priors, pooled, mass_matrix = model
    buffer = density.model_buffer(
        data.items,
        data.discordant,
        data.a_only,
        scales=priors.scales,
        nu_bounds=priors.nu_bounds,
        pooled=pooled,
        centred=(parameterization["direction"] == "centred", parameterization["rate"] == "centred"),
    )
    idata = sample(
        None,
        **run,
        backend="nutpie",
        compiled=density.compiled_model(buffer),
        mass_matrix=mass_matrix,
    )
    idata.posterior = idata.posterior.assign_coords(subtask=list(data.tasks))
    names = (*density.HYPER, "delta") if pooled else ("s", "phi", "delta")
    return idata, diagnose(idata, names, backend="nutpie")


def _settings(
    data: SubtaskCounts,
    rope: float,
    priors: ItemsHierarchicalPriors,
    run: dict[str, Any],
    options: dict[str, Any],
) -> dict[str, Any]:
    """Return the result's settings: what reproduces the fit."""
    return make_settings(
        "items_hierarchical",
        run["seed"],
        rope=rope,
        priors=priors.to_dict(),
        **options,
        draws=run["draws"],
        tune=run["tune"],
        chains=run["chains"],
        backend="nutpie",
        target_accept=run["target_accept"],
        n_subtasks=len(data.tasks),
        n_items=int(data.items.sum()),
        quadrature_nodes={
            "hermite": population.HERMITE_NODES,
            "t": population.T_NODES,
            "phi": population.PHI_NODES,
        },
    )


def _checked(priors: Any, pooled: Any, sampling: Any) -> tuple[ItemsHierarchicalPriors, Sampling]:
    """Check the settings' types; return the priors and sampling settings, defaults filled."""
    if priors is None:
        priors = ItemsHierarchicalPriors()
    elif not isinstance(priors, ItemsHierarchicalPriors):
        raise InputTypeError(
            f"`priors` must be ItemsHierarchicalPriors or None, got {type(priors).__name__}."
        )
    if not isinstance(pooled, bool):
        raise InputTypeError(f"`pooled` must be True or False, got {pooled!r}.")
    sampling = Sampling() if sampling is None else sampling
    if not isinstance(sampling, Sampling):
        raise InputTypeError(f"`sampling` must be Sampling or None, got {type(sampling).__name__}.")
    return priors, sampling


def _draws(idata: Any, name: str) -> np.ndarray:
    x = idata.posterior[name].to_numpy()
    return x.reshape(x.shape[0] * x.shape[1], *x.shape[2:])


def _ess(x: np.ndarray, chains: int) -> float:
    from isbetter.inference import diagnostics as mcmc

    return float(mcmc.ess_bulk(x.reshape(chains, -1, 1))[0])


def _result(
    data: SubtaskCounts,
    idata: Any,
    diagnostics: MCMCDiagnostics,
    reading: tuple[float, float],
    settings: dict[str, Any],
    labels: tuple[str, str, str],
    pooled: bool,
) -> ItemsHierarchicalResult:
    rope, hdi_prob = reading
    delta = _draws(idata, "delta")
    hyper = {name: _draws(idata, name) for name in density.HYPER} if pooled else {}
    next_posterior: Any
    if pooled:
        mean = population.population_mean(*(hyper[name] for name in density.HYPER))
        next_posterior = population.NextSubtaskPosterior(
            **{name: hyper[name] for name in density.HYPER}, symmetric=data.symmetric
        )
    else:
        mean = delta.mean(axis=1)  # the mean difference over these subtasks
        next_posterior = DrawsPosterior(mean)
    masses = next_posterior.region_masses(rope)  # once: the quadrature costs ~0.3 s
    p = probabilities_from_masses(masses, next_posterior.counting)
    total = data.table.sum(axis=0)
    n = int(total.sum())
    return ItemsHierarchicalResult(
        system_a=labels[0],
        system_b=labels[1],
        rope=rope,
        p_a_better=p.p_a_better,
        p_rope=p.p_rope,
        p_b_better=p.p_b_better,
        method="items_hierarchical",
        posterior=next_posterior,
        settings=settings,
        counting=next_posterior.counting,
        metric=labels[2],
        predictive=probabilities_from_masses(masses, "mean"),
        estimate=estimate_from_draws(
            mean, rope=rope, hdi_prob=hdi_prob, ess=_ess(mean, diagnostics.chains)
        ),
        observed=Observed(
            n=n,
            score_a=float(total[0] + total[1]) / n,
            score_b=float(total[0] + total[2]) / n,
            difference=float(total[1] - total[2]) / n,
        ),
        diagnostics=diagnostics,
        subtasks=data.tasks,
        counts=data.table,
        delta=delta,
        population_mean=mean,
        hyper=hyper,
        idata=idata,
    )
