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

The work runs in four steps, each a function of the :class:`~isbetter.f1.plan.Plan`
and what the steps before it gave: the predictions and typed options, validated
(:func:`~isbetter.f1.plan.plan_comparison`); the joint counts of each class
(:func:`~isbetter.f1.draws.count`); the posterior and prior draws, exact for the
paired and unpaired models, one MCMC fit for the hierarchical model
(:func:`~isbetter.f1.draws.draw`); the summary and baselines of each row and the
across-class tests (:func:`~isbetter.f1.rows.assemble`). Every row is a
:class:`~isbetter.results.comparison.ComparisonResult` inside an
:class:`~isbetter.results.f1.F1Result`. The old keywords are mapped to the typed
options in :mod:`isbetter.f1.legacy`.
"""

from __future__ import annotations

from typing import Any

from isbetter.core.rope import warn_rope_misfit
from isbetter.core.validate import legacy_keywords
from isbetter.core.vocabulary import F1_MODELS
from isbetter.f1.averages import AVERAGE_MAX_RESAMPLES, HIERARCHICAL_MAX_DRAWS
from isbetter.f1.baselines import Baselines
from isbetter.f1.draws import count, draw
from isbetter.f1.legacy import COMPARE_F1, compare_f1_keywords
from isbetter.f1.measures import Measure, measure_scale
from isbetter.f1.paired import F1Model
from isbetter.f1.plan import plan_comparison
from isbetter.f1.rows import assemble
from isbetter.inference.sampling import Sampling
from isbetter.inference.seeds import RNGLike
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


@legacy_keywords(COMPARE_F1, compare_f1_keywords)
def compare_f1(
    data: Any,
    system_a: str | None = None,
    system_b: str | None = None,
    *,
    metric: str | Measure | Any = "f1",
    model: str | F1Model = "paired",
    rope: float = DEFAULT_ROPE,
    hdi_prob: float = 0.95,
    draws: int = 50_000,
    sampling: Sampling | None = None,
    classes: Any = None,
    baselines: bool | Baselines = True,
    rng: RNGLike = None,
) -> F1Result:
    """Compare two classifiers' F1 (or another measure) on the same test set.

    Answers, per class: how much better is A than B on this measure, how sure
    can we be, and are the two practically the same (inside the ROPE)? By
    default uses the exact posterior of Zhang et al.'s (2016) paired model (no MCMC).

    Parameters
    ----------
    data : PredictionTable, pandas.DataFrame or path
        Per-document gold labels and predictions: a table from :func:`read_predictions`
        (which reads other column names), or a DataFrame or file with a ``gold`` column
        and one column per system (other columns, such as a document id, are ignored
        when the systems are named).
    system_a, system_b : str, optional
        The two systems (prediction columns); default: the two prediction columns when
        the table has exactly two.
    metric : str, Measure or callable, default: "f1"
        The measure of the contingency table to compare, as in :func:`~isbetter.rank`'s
        `metrics`: a name (see :func:`isbetter.f1.measures.get_measure`), or a measure
        object such as ``fbeta(2)`` or ``dcf(cost_fn=1, cost_fp=10, p_positive=0.01)``
        (:mod:`isbetter.f1.measures`). A DCF also gets Keller et al.'s adapted
        proportion test (``dcf_ptest``).
    model : {"paired", "unpaired", "hierarchical"} or F1Model, default: "paired"
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
        ``F1Model("paired", prior=F1Prior(...))`` (:class:`~isbetter.f1.paired.F1Model`)
        sets the paired or unpaired model's prior; default: uniform (Beta(1, 1),
        Dir(1, 1, 1, 1)).
    rope : float, default: 0.05
        ROPE half-width on the measure's scale. One that does not fit a measure in
        [0, 1] (below 0.001, or 1 and above: in percent?) warns; the default does not
        (:mod:`isbetter.core.rope` says why): the report states it.
    hdi_prob : float, default: 0.95
        Mass of the HDI used for the decision.
    draws : int, default: 50000
        Posterior draws per row, and as many prior draws (the paper's default): the
        classes and the macro / micro rows of the exact models alike. The hierarchical
        model draws at most :data:`HIERARCHICAL_MAX_DRAWS` in all, split over the
        chains (default: 4 chains x 2 000 draws).
    sampling : Sampling, optional
        The hierarchical model's MCMC: tuning steps per chain (default 1000), chains
        (default 4) and cores (:class:`~isbetter.inference.sampling.Sampling`; the exact
        models need none).
    classes : label or sequence of labels, optional
        The classes to compare, each against the rest. A binary task has one row, its
        positive class: default the larger label (e.g. 1), or the one named
        (``classes=0``). A multi-class task: default every class and the rows
        ``"macro"`` and ``"micro"``; named classes (all of them, for every class
        without the averages) give those rows only.
    baselines : bool or Baselines, default: True
        Also run the frequentist tests (s-test, p-test, McNemar, bootstrap,
        approximate randomization; T- and S-test across classes); the macro / micro
        rows get the s-test / McNemar on multi-class correctness and a bootstrap of the
        documents. ``Baselines(resamples=2000)`` (:class:`~isbetter.f1.baselines.Baselines`)
        sets the resamples of the bootstrap and randomization tests (default 10 000).
    rng : int, numpy.random.Generator or None
        Seed; recorded in ``settings["seed"]``.

    The old keywords ``measure``, ``beta``, ``cost_fn``, ``cost_fp``, ``p_positive``,
    ``tune``, ``chains``, ``prior``, ``positive``, ``averages``, ``resamples`` and
    ``gold`` still work for this release, with a :class:`~isbetter.RenamedArgumentWarning`
    that says what to write (:mod:`isbetter.f1.legacy`).

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
    RopeWarning
        `rope` does not fit the measure's scale [0, 1] (e.g. ``rope=5``, in percent).

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
        system_a,
        system_b,
        metric=metric,
        model=model,
        rope=rope,
        hdi_prob=hdi_prob,
        draws=draws,
        sampling=sampling,
        classes=classes,
        baselines=baselines,
        rng=rng,
    )
    # the caller of compare_f1 (through the legacy_keywords wrapper)
    warn_rope_misfit(plan.rope, measure_scale(plan.measure), stacklevel=4)
    counts = count(plan)
    return assemble(plan, counts, draw(plan, counts))
