"""Steps 2 and 3 of :func:`isbetter.f1.compare.compare_f1`: the counts, and the draws of delta.

:func:`count` gives each reported class's joint counts and, where an averaged model
is fitted, the documents' joint outcomes (:class:`Counts`). :func:`draw` gives the
posterior and prior draws (:class:`Draws`): the paired and unpaired models draw each
class's exact posterior (:func:`exact_class_draws`, :mod:`isbetter.f1.paired`); the
macro / micro rows, and every row of the hierarchical model, come from one fit of an
:class:`~isbetter.f1.averages.AveragedModel` to the documents' joint outcomes
(:func:`averaged_draws`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from isbetter.f1.averages import AveragedDraws, AveragedModel
from isbetter.f1.paired import sample_delta
from isbetter.f1.plan import Plan
from isbetter.f1.predictions import JointCounts
from isbetter.inference.records import MCMCDiagnostics
from isbetter.inference.seeds import child
from isbetter.inference.summaries import symmetrised

__all__ = [
    "Cells",
    "ClassDraws",
    "Counts",
    "Draws",
    "averaged_draws",
    "count",
    "draw",
    "exact_class_draws",
    "fitted_class_draws",
    "joint_cells_of",
]


@dataclass(frozen=True)
class ClassDraws:
    """Posterior and prior draws of delta per class (keyed by the class label as str).

    Attributes
    ----------
    draws, priors : dict of str to numpy.ndarray
        Posterior and (symmetrised where the prior is symmetric) prior draws.
    ess : dict of str to float or None
        Effective sample sizes (None: independent draws).
    prior_ess : int
        Independent draws in each prior sample (a symmetrised sample holds half as
        many as its length), for the Monte Carlo errors of the Bayes factors.
    diagnostics : MCMCDiagnostics or None
        Of the MCMC fit the draws come from.
    """

    draws: dict[str, np.ndarray]
    priors: dict[str, np.ndarray]
    ess: dict[str, float | None]
    prior_ess: int
    diagnostics: MCMCDiagnostics | None = None


def exact_class_draws(plan: Plan, counts: dict[str, JointCounts]) -> ClassDraws:
    """Step 3 (paired, unpaired): exact posterior draws of each class, one set of prior draws.

    Class i draws from child 0 of stream i; the prior from stream ``len(labels)`` (it
    does not depend on the data: one set serves every class).
    """
    m, prior = plan.measure, plan.prior
    zero = JointCounts(np.zeros(4, np.int64), np.zeros(4, np.int64))
    prior_delta = sample_delta(
        zero,
        m,
        model=plan.model,  # type: ignore[arg-type]
        prior=prior,
        draws=plan.draws,
        rng=np.random.default_rng(plan.stream(len(plan.labels))),
    )
    if plan.model == "unpaired" or prior.symmetric:
        prior_delta = symmetrised(prior_delta)  # the prior of delta is symmetric about 0
    draws = {}
    for i, (key, c) in enumerate(counts.items()):
        # always the model's posterior, also where A and B never disagree: with few documents
        # agreement is weak evidence of equivalence (its HDI says how weak)
        draws[key] = sample_delta(
            c,
            m,
            model=plan.model,  # type: ignore[arg-type]
            prior=prior,
            draws=plan.draws,
            rng=np.random.default_rng(child(plan.stream(i), 0)),
        )
    return ClassDraws(
        draws, dict.fromkeys(counts, prior_delta), dict.fromkeys(counts), prior_ess=plan.draws
    )


def fitted_class_draws(
    plan: Plan, counts: dict[str, JointCounts], averaged: AveragedDraws
) -> ClassDraws:
    """Step 3 (hierarchical): each class's draws from the one fit."""
    if averaged.per_class is None or averaged.prior_per_class is None:
        raise ValueError("the averaged model gave no per-class draws")
    index = {str(lab): j for j, lab in enumerate(plan.table.labels)}
    draws, priors, ess = {}, {}, {}
    for key in counts:
        j = index[key]
        draws[key] = averaged.per_class[:, j]
        priors[key] = averaged.prior_per_class[:, j]
        ess[key] = None if averaged.ess is None else averaged.ess[str(j)]
    return ClassDraws(draws, priors, ess, averaged.prior_ess, averaged.diagnostics)


@dataclass(frozen=True)
class Cells:
    """The documents' joint outcomes (true class, A's prediction, B's prediction)."""

    cells: np.ndarray
    right_a: np.ndarray
    right_b: np.ndarray


def joint_cells_of(plan: Plan) -> Cells:
    """Count the documents' joint outcomes of the two systems (step 2 of the averages)."""
    from isbetter.f1.multiclass import joint_cells

    t = plan.table
    index = {lab: i for i, lab in enumerate(t.labels)}
    gi = np.array([index[x] for x in t.gold])
    ai = np.array([index[x] for x in t.predictions[plan.system_a]])
    bi = np.array([index[x] for x in t.predictions[plan.system_b]])
    cells = joint_cells(gi, ai, bi, len(t.labels))
    return Cells(cells, gi == ai, gi == bi)


def averaged_draws(plan: Plan, averaged: AveragedModel, cells: Cells) -> AveragedDraws:
    """Step 3 (averages; all rows of the hierarchical model): one fit of `averaged`.

    The exact models draw ``plan.draws``; an MCMC model at most its ``max_draws``.
    Seeded by the plan's :attr:`~isbetter.f1.plan.Plan.average_stream`.
    """
    draws = plan.draws if averaged.max_draws is None else min(plan.draws, averaged.max_draws)
    return averaged.sample(cells.cells, plan.measure, draws=draws, seed_seq=plan.average_stream)


@dataclass(frozen=True)
class Counts:
    """Step 2: each reported class's joint counts (keyed by the label as str), and `cells`.

    `cells` are the documents' joint outcomes, when an averaged model is fitted.
    """

    per_class: dict[str, JointCounts]
    cells: Cells | None


@dataclass(frozen=True)
class Draws:
    """Step 3: the draws of each class's row, and of the averaged model if one is fitted."""

    per_class: ClassDraws
    averaged: AveragedDraws | None


def count(plan: Plan) -> Counts:
    """Step 2: count the joint outcomes of the reported classes (and of all documents)."""
    t = plan.table
    per_class = {str(lab): t.joint_counts(plan.system_a, plan.system_b, lab) for lab in plan.labels}
    return Counts(per_class, None if plan.averaged_model is None else joint_cells_of(plan))


def draw(plan: Plan, counts: Counts) -> Draws:
    """Step 3: draw delta for every row: exact per class, or all from the one fit."""
    model = plan.averaged_model
    averaged = None
    if model is not None and counts.cells is not None:
        averaged = averaged_draws(plan, model, counts.cells)
    if averaged is not None and plan.model == "hierarchical":
        return Draws(fitted_class_draws(plan, counts.per_class, averaged), averaged)
    return Draws(exact_class_draws(plan, counts.per_class), averaged)
