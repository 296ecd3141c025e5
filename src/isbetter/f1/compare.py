"""Compare two classifiers on one test set: the Bayesian F1 comparison.

:func:`compare_f1` takes per-document gold labels and predictions and, for each
class (one class against the rest; one row for a binary task), gives the
posterior of the difference ``delta`` of a measure (F1 by default), summarised
as in Zhang et al.'s (SIGIR 2016) Tables 4–6 (mean, sd, Monte Carlo error,
% below / above 0, % in the ROPE, 95% HDI, HDI + ROPE decision), with two Bayes
factors and their Monte Carlo errors: the ROPE Bayes factor (the headline) and
the paper's Savage–Dickey BF01, whose value depends on a stated kernel bandwidth
(:func:`isbetter.inference.summaries.savage_dickey_bf01`), and with the frequentist baselines
on the same documents. A multi-class
comparison adds rows ``"macro"`` and ``"micro"``.

The work runs in steps: the predictions and options (:mod:`isbetter.f1.plan`),
the joint counts of each class, the posterior draws (exact for the paired and
unpaired models; one MCMC fit for the hierarchical model:
:mod:`isbetter.f1.draws`), the summary and baselines of each row and the
across-class tests (:mod:`isbetter.f1.rows`). Every row is a
:class:`~isbetter.results.comparison.ComparisonResult` inside an
:class:`~isbetter.results.f1.F1Result`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from isbetter.core.provenance import input_settings, make_settings
from isbetter.core.validate import check_positive_int, renamed
from isbetter.core.vocabulary import F1_MODELS
from isbetter.f1.averages import (
    AVERAGE_MAX_RESAMPLES,
    HIERARCHICAL_MAX_DRAWS,
    AveragedModel,
    FlatCellModel,
    ICDMModel,
    UnpairedCellModel,
)
from isbetter.f1.draws import (
    averaged_draws,
    exact_class_draws,
    fitted_class_draws,
    joint_cells_of,
)
from isbetter.f1.measures import Measure
from isbetter.f1.paired import F1Prior
from isbetter.f1.plan import Plan, plan_comparison
from isbetter.f1.rows import RowContext, across_class_tests, average_rows, class_rows
from isbetter.inference.records import TestResult
from isbetter.inference.seeds import RNGLike, child
from isbetter.results.f1 import F1Result

__all__ = [
    "AVERAGE_MAX_RESAMPLES",
    "DEFAULT_ROPE",
    "F1_MODELS",
    "HIERARCHICAL_MAX_DRAWS",
    "compare_f1",
]

#: the ROPE half-width of :func:`compare_f1` (and of a ranking of predictions) by default
DEFAULT_ROPE = 0.05


def _averaged_model(plan: Plan, tune: int, chains: int) -> AveragedModel | None:
    """Choose the model of the averages (and, for "hierarchical", of every row)."""
    if plan.model == "hierarchical":
        return ICDMModel(
            tune=check_positive_int(tune, "tune", minimum=0),
            chains=check_positive_int(chains, "chains", minimum=1),
        )
    if not plan.averages:
        return None
    return FlatCellModel() if plan.model == "paired" else UnpairedCellModel()


def _settings(plan: Plan, averaged: AveragedModel | None) -> dict:
    """Record what reproduces the result (draws of the exact models, or of the MCMC)."""
    extra: dict[str, Any] = {}
    if isinstance(averaged, ICDMModel):
        # MCMC: draws per chain (x chains), as every MCMC result records them
        total = min(plan.draws, HIERARCHICAL_MAX_DRAWS)
        extra = {"draws": averaged.draws_per_chain(total), "prior": None, **averaged.settings()}
    elif averaged is not None:
        extra = averaged.settings()
    params: dict[str, Any] = {
        "rope": plan.rope,
        "draws": plan.draws,
        "measure": plan.measure.name,
        "hdi_prob": plan.hdi_prob,
        "prior": plan.prior.to_dict(),
        "system_a": plan.system_a,
        "system_b": plan.system_b,
        "positive": None if plan.multiclass else str(plan.labels[0]),
        "resamples": plan.resamples if plan.baselines else None,
    }
    return make_settings(
        f"f1_{plan.model}", plan.seed, **{**params, **extra, **input_settings(plan.table)}
    )


def compare_f1(
    data: Any,
    *,
    system_a: str | None = None,
    system_b: str | None = None,
    gold: str = "gold",
    metric: str | Measure | Any = None,
    beta: float = 1.0,
    cost_fn: float = 1.0,
    cost_fp: float = 1.0,
    p_positive: float = 0.5,
    rope: float = DEFAULT_ROPE,
    model: str = "paired",
    prior: F1Prior | None = None,
    draws: int = 50_000,
    tune: int = 1000,
    chains: int = 4,
    hdi_prob: float = 0.95,
    positive: Any = None,
    classes: Sequence[Any] | None = None,
    baselines: bool = True,
    resamples: int = 10_000,
    averages: bool = True,
    rng: RNGLike = None,
    measure: str | Measure | Any = None,
) -> F1Result:
    """Compare two classifiers' F1 (or another measure) on the same test set.

    Answers, per class: how much better is A than B on this measure, how sure
    can we be, and are the two practically the same (inside the ROPE)? By
    default uses the exact posterior of Zhang et al.'s (2016) paired model (no MCMC).

    Parameters
    ----------
    data : PredictionTable, pandas.DataFrame or path
        Per-document gold labels and predictions (see :func:`read_predictions`).
    system_a, system_b : str, optional
        The two systems (prediction columns of a table; other columns, such as a
        document id, are ignored); default: the two prediction columns when the
        table has exactly two besides `gold`.
    gold : str, default: "gold"
        Gold-label column (when `data` is a table).
    metric : str, Measure or callable, default: "f1"
        The measure of the contingency table to compare, as in :func:`~isbetter.rank`'s
        `metrics`: see :func:`isbetter.f1.measures.get_measure`; ``beta``, ``cost_fn``,
        ``cost_fp``, ``p_positive`` parametrise F-beta and DCF (given by name).
        A DCF, by name or made by :func:`isbetter.f1.measures.dcf`, also gets Keller et
        al.'s adapted proportion test (``dcf_ptest``).
    rope : float, default: 0.05
        ROPE half-width on the measure's scale.
    model : {"paired", "unpaired", "hierarchical"}, default: "paired"
        ``"paired"``: Zhang et al.'s (2016) paired model, exact, one binary problem
        per class; macro / micro rows from the exact flat-cell joint model
        (:class:`~isbetter.f1.averages.FlatCellModel`).
        ``"unpaired"``: the same ignoring that A and B saw the same documents;
        macro / micro rows from an exact flat Dirichlet per confusion matrix
        (:class:`~isbetter.f1.averages.UnpairedCellModel`).
        ``"hierarchical"``: Zhang et al.'s ICDM 2015 model of the two confusion
        matrices (:class:`~isbetter.f1.averages.ICDMModel`; unpaired, MCMC):
        the per-class rows and the macro / micro rows all come from one fit, with
        MCMC diagnostics.
    prior : F1Prior, optional
        Hyper-parameters of the paired / unpaired models; default: uniform
        (Beta(1, 1), Dir(1, 1, 1, 1)).
    draws : int, default: 50000
        Posterior draws per row, and as many prior draws (the paper's default): the
        classes and the macro / micro rows of the exact models alike. The hierarchical
        model draws at most :data:`HIERARCHICAL_MAX_DRAWS` in all, split over the
        chains (default: 4 chains x 2 000 draws).
    tune, chains : int, default: 1000, 4
        NUTS tuning steps per chain and number of chains of the hierarchical model
        (ignored by the exact models).
    hdi_prob : float, default: 0.95
        Mass of the HDI used for the decision.
    positive : label, optional
        For a binary task, the positive class (default: the larger label, e.g. 1).
    classes : sequence of labels, optional
        For a multi-class task, the classes to report (default: all).
    baselines : bool, default: True
        Also run the frequentist tests (s-test, p-test, McNemar, bootstrap,
        approximate randomization; T- and S-test across classes).
    resamples : int, default: 10000
        Resamples of the bootstrap and randomization tests (at most
        :data:`AVERAGE_MAX_RESAMPLES` for the macro / micro bootstrap).
    averages : bool, default: True
        For a multi-class task with every class reported, add rows ``"macro"`` and
        ``"micro"``. Their baselines are the s-test / McNemar on multi-class
        correctness and a bootstrap of the documents.
    rng : int, numpy.random.Generator or None
        Seed; recorded in ``settings["seed"]``.
    measure : str, Measure or callable, optional
        The old name of `metric`: still accepted, with a
        :class:`~isbetter.RenamedArgumentWarning`.

    Returns
    -------
    F1Result
        One :class:`~isbetter.results.comparison.ComparisonResult` per row: the
        classes, then ``"macro"`` and ``"micro"``.

    Raises
    ------
    InputError
        Bad input (see :func:`read_predictions`), unknown systems, classes or
        model, negative ROPE, a `prior` for the hierarchical model.

    Warns
    -----
    ConvergenceWarning
        The hierarchical model's MCMC converged poorly (see ``diagnostics``).

    Notes
    -----
    Each class is one binary problem: its documents are positive, all others
    negative. Seeds: the i-th reported class gets the i-th stream spawned from
    ``SeedSequence(seed)`` (its child 0 for the posterior, child 1 for the
    baselines), the prior of the exact models the next; the macro / micro rows
    (or the hierarchical fit) get stream M + 1 for M classes, whichever classes are
    reported (children 0 and 1 for the model, child 2 for the bootstrap).
    Switching the baselines on or off leaves the posterior draws unchanged.

    When A and B make the same prediction on every document, the model's posterior
    is sampled all the same: agreement on a few documents is weak evidence of
    equivalence (20 documents: an HDI across both ROPE bounds, ``undecided``),
    agreement on many strong evidence (``equivalent``).

    Orientation: ``delta`` is positive when A is better. For a cost such as DCF
    (lower is better) that is ``DCF(B) - DCF(A)``; ``score_a`` and ``score_b`` are
    the raw measures.

    Swapping `system_a` and `system_b` (same seed) negates every draw of the exact
    models exactly, and so mirrors every number of the table, unless the joint
    counts are themselves symmetric (then the mirror holds in distribution).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"gold": [1, 0] * 300,
    ...                    "a": [1, 0] * 250 + [1, 1] * 50, "b": [1, 0] * 200 + [0, 0] * 100})
    >>> res = compare_f1(df, rng=1, draws=10_000)
    >>> row = res.row()
    >>> round(row["score_a"], 3), round(row["score_b"], 3), row["decision"]
    (0.923, 0.8, 'a_better')
    >>> row["sign_p_value"] < 1e-3
    True
    """
    plan = plan_comparison(
        data,
        gold,
        system_a,
        system_b,
        measure=renamed("metric", metric, "measure", measure, "f1"),
        measure_args={
            "beta": beta,
            "cost_fn": cost_fn,
            "cost_fp": cost_fp,
            "p_positive": p_positive,
        },
        model=model,
        prior=prior,
        rope=rope,
        draws=draws,
        hdi_prob=hdi_prob,
        baselines=baselines,
        resamples=resamples,
        averages=averages,
        positive=positive,
        classes=classes,
        rng=rng,
    )
    return _compare(plan, _averaged_model(plan, tune, chains))


def _compare(plan: Plan, averaged_model: AveragedModel | None) -> F1Result:
    """Run steps 2 to 4 of :func:`compare_f1`: counts, draws, rows and baselines."""
    settings = _settings(plan, averaged_model)
    ctx = RowContext(plan.system_a, plan.system_b, plan.measure, plan.rope, plan.hdi_prob, settings)
    # step 2: the joint counts of each reported class
    counts = {
        str(lab): plan.table.joint_counts(plan.system_a, plan.system_b, lab) for lab in plan.labels
    }
    root = np.random.SeedSequence(plan.seed)
    # the fit of all classes does not depend on which are reported: stream M + 1
    average_ss = child(root, len(plan.table.labels) + 1)
    cells = averaged = None
    if averaged_model is not None:
        cells = joint_cells_of(plan)
        averaged = averaged_draws(plan, averaged_model, cells, average_ss)
    if plan.model == "hierarchical":
        assert averaged is not None
        class_draws = fitted_class_draws(plan, counts, averaged)
    else:
        class_draws = exact_class_draws(plan, counts, root)
    rows = class_rows(plan, ctx, counts, root, class_draws)
    priors = dict(class_draws.priors)
    across: tuple[TestResult, ...] = ()
    if plan.baselines and plan.multiclass:
        observed = [r.observed for r in rows.values() if r.observed is not None]
        across = across_class_tests([o.score_a for o in observed], [o.score_b for o in observed])
    if plan.averages and averaged is not None and cells is not None:
        avg_rows, avg_priors = average_rows(plan, ctx, cells, averaged, average_ss)
        rows.update(avg_rows)
        priors.update(avg_priors)
    return F1Result(
        system_a=plan.system_a,
        system_b=plan.system_b,
        metric=plan.measure.name,
        higher_is_better=plan.measure.higher_is_better,
        model=plan.model,
        rope=plan.rope,
        hdi_prob=plan.hdi_prob,
        comparisons=rows,
        counts=counts,
        prior_draws=priors,
        across_classes=across,
        diagnostics=None if averaged is None else averaged.diagnostics,
        settings=settings,
    )
