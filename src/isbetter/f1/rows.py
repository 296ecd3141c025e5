"""The rows of an F1 comparison: observed scores, posterior summary and baselines.

Step 4 of :func:`isbetter.f1.compare.compare_f1`, the same for every model
(:func:`assemble`): the frequentist tests of one class (:func:`class_tests`), of the
macro / micro averages (:func:`average_tests`) and across classes
(:func:`across_class_tests`), each as :class:`~isbetter.inference.records.TestResult`;
the assembly of one row, a :class:`~isbetter.results.comparison.ComparisonResult`,
from posterior and prior draws (:func:`make_row`); and all rows of the classes
(:func:`class_rows`) and of the averages (:func:`average_rows`), in an
:class:`~isbetter.results.f1.F1Result`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from isbetter.f1.averages import AVERAGE_MAX_RESAMPLES, AveragedDraws
from isbetter.f1.baselines import (
    bootstrap_average_test,
    bootstrap_test,
    dcf_proportion_test,
    macro_s_test,
    macro_t_test,
    mcnemar_test,
    p_test,
    randomization_test,
    s_test,
)
from isbetter.f1.draws import Cells, ClassDraws, Counts, Draws
from isbetter.f1.measures import Measure
from isbetter.f1.plan import Plan
from isbetter.f1.predictions import JointCounts
from isbetter.inference.posterior import DrawsPosterior
from isbetter.inference.records import MCMCDiagnostics, Observed, TestResult
from isbetter.inference.seeds import child
from isbetter.inference.summaries import estimate_from_draws
from isbetter.results.comparison import ComparisonResult
from isbetter.results.f1 import F1Result

__all__ = [
    "across_class_tests",
    "assemble",
    "average_rows",
    "average_tests",
    "class_rows",
    "class_tests",
    "correctness_counts",
    "make_row",
]

DESCRIPTIONS = {
    "sign": "sign test on the documents exactly one system gets right (Yang & Liu's s-test)",
    "ptest": "two-proportion z-test of the accuracies, unpaired (Yang & Liu's p-test)",
    "mcnemar": "McNemar's test of the correctness table, exact binomial",
    "mcnemar_chi2": "McNemar's test of the correctness table, chi-squared with continuity "
    "correction",
    "dcf_ptest": "Keller et al.'s adapted (paired) proportion test of the DCF difference, eq. 9",
    "t_test": "paired t-test over the per-class scores (Yang & Liu's T-test)",
    "s_test": "sign test over the per-class scores, ties dropped (Yang & Liu's S-test)",
}


def _test(name: str, p_value: float, estimate: float = float("nan")) -> TestResult:
    return TestResult(
        name=name, p_value=float(p_value), estimate=float(estimate), description=DESCRIPTIONS[name]
    )


def correctness_counts(right_a: np.ndarray, right_b: np.ndarray) -> JointCounts:
    """Correctness of A and B per document as joint counts (all "positive").

    Rows ``(both right, only A, only B, neither)``: the table of the s-test and McNemar.
    """
    return JointCounts(
        pos=np.array(
            [
                np.sum(right_a & right_b),
                np.sum(right_a & ~right_b),
                np.sum(~right_a & right_b),
                np.sum(~right_a & ~right_b),
            ]
        ),
        neg=np.zeros(4, np.int64),
    )


def _correctness_tests(counts: JointCounts) -> list[TestResult]:
    """s-test, p-test and McNemar (exact and chi-squared) on the correctness of A and B."""
    _, only_a, only_b, _ = counts.correctness()
    accuracy_diff = (only_a - only_b) / float(counts.n) if counts.n else float("nan")
    return [
        _test("sign", s_test(counts), accuracy_diff),
        _test("ptest", p_test(counts), accuracy_diff),
        _test("mcnemar", mcnemar_test(counts, exact=True), accuracy_diff),
        _test("mcnemar_chi2", mcnemar_test(counts, exact=False), accuracy_diff),
    ]


def class_tests(
    counts: JointCounts,
    measure: Measure,
    *,
    observed: float,
    resamples: int,
    seed_seq: np.random.SeedSequence,
) -> tuple[TestResult, ...]:
    """Run the frequentist tests of one class (one binary problem).

    ``sign, ptest, mcnemar, mcnemar_chi2`` (accuracy difference as estimate),
    ``bootstrap`` and ``randomization`` (drawn in that order from one generator
    seeded by `seed_seq`), and ``dcf_ptest`` when `measure` is a DCF.
    """
    rng = np.random.default_rng(seed_seq)
    tests = _correctness_tests(counts)
    tests.append(bootstrap_test(counts, measure, resamples=resamples, rng=rng))
    tests.append(randomization_test(counts, measure, resamples=resamples, rng=rng))
    costs = measure.dcf_costs
    if costs is not None:
        p = dcf_proportion_test(
            counts, cost_fn=costs.cost_fn, cost_fp=costs.cost_fp, p_positive=costs.p_positive
        )
        tests.append(_test("dcf_ptest", p, observed))
    return tuple(tests)


def average_tests(correctness: JointCounts, bootstrap: TestResult) -> tuple[TestResult, ...]:
    """Return the tests of a macro / micro row: correctness tests, then the bootstrap."""
    return (*_correctness_tests(correctness), bootstrap)


def across_class_tests(scores_a: Any, scores_b: Any) -> tuple[TestResult, ...]:
    """Yang & Liu's T-test and S-test over per-class scores (estimate: mean difference)."""
    a, b = np.asarray(scores_a, dtype=float), np.asarray(scores_b, dtype=float)
    mean_diff = float(np.mean(a - b)) if a.size else float("nan")
    return (
        _test("t_test", macro_t_test(a, b), mean_diff),
        _test("s_test", macro_s_test(a, b), mean_diff),
    )


def make_row(
    plan: Plan,
    key: str,
    delta: np.ndarray,
    prior: np.ndarray,
    *,
    method: str,
    observed: Observed,
    tests: tuple[TestResult, ...] = (),
    ess: float | None = None,
    prior_ess: float | None = None,
    diagnostics: MCMCDiagnostics | None = None,
) -> ComparisonResult:
    """One row: the comparison of `key` (a class, ``"macro"`` or ``"micro"``).

    ``estimate`` summarises the posterior draws `delta` (Bayes factors against the
    prior draws `prior`; Monte Carlo errors from `ess` and `prior_ess`, default
    independent draws).
    """
    finite = np.isfinite(prior)
    if prior_ess is not None:  # the independent draws among the finite ones
        prior_ess = prior_ess * float(np.mean(finite))
    estimate = estimate_from_draws(
        delta,
        rope=plan.rope,
        prior_delta=prior[finite],
        hdi_prob=plan.hdi_prob,
        ess=ess,
        prior_ess=prior_ess,
    )
    return ComparisonResult.from_posterior(
        DrawsPosterior(delta, symmetric=plan.symmetric),
        system_a=plan.system_a,
        system_b=plan.system_b,
        rope=plan.rope,
        method=method,
        settings={**plan.settings, "label": key},
        metric=plan.measure.name,
        higher_is_better=plan.measure.higher_is_better,
        label=key,
        estimate=estimate,
        tests=tests,
        diagnostics=diagnostics,
        observed=observed,
    )


def class_rows(
    plan: Plan, counts: dict[str, JointCounts], class_draws: ClassDraws
) -> dict[str, ComparisonResult]:
    """Step 4 per class: summary and baselines (class i: child 1 of stream i)."""
    m = plan.measure
    rows = {}
    for i, (key, c) in enumerate(counts.items()):
        (cells_a, cells_b) = c.cells()
        score_a, score_b = float(m(*cells_a)), float(m(*cells_b))
        diff = float(m.difference(np.float64(score_a), np.float64(score_b)))
        tests: tuple[TestResult, ...] = ()
        if plan.baselines:
            resamples, seed_seq = plan.baselines.resamples, child(plan.stream(i), 1)
            tests = class_tests(c, m, observed=diff, resamples=resamples, seed_seq=seed_seq)
        rows[key] = make_row(
            plan,
            key,
            class_draws.draws[key],
            class_draws.priors[key],
            method=f"f1_{plan.model}",
            observed=Observed(int(c.n), score_a, score_b, diff, int(np.sum(c.pos))),
            tests=tests,
            ess=class_draws.ess[key],
            prior_ess=class_draws.prior_ess,
            diagnostics=class_draws.diagnostics,
        )
    return rows


def average_rows(
    plan: Plan, cells: Cells, averaged: AveragedDraws
) -> tuple[dict[str, ComparisonResult], dict[str, np.ndarray]]:
    """Step 4 for rows "macro" and "micro": summary, baselines (average stream's child 2)."""
    from isbetter.f1.multiclass import observed_averages

    m, n = plan.measure, int(plan.table.n_documents)
    observed = observed_averages(cells.cells, m)
    boot = {}
    if plan.baselines:
        boot = bootstrap_average_test(
            cells.cells,
            m,
            resamples=min(plan.baselines.resamples, AVERAGE_MAX_RESAMPLES),
            rng=np.random.default_rng(child(plan.average_stream, 2)),
        )
    correctness = correctness_counts(cells.right_a, cells.right_b)
    rows, priors = {}, {}
    for key, delta, prior in (
        ("macro", averaged.macro, averaged.prior_macro),
        ("micro", averaged.micro, averaged.prior_micro),
    ):
        score_a, score_b = observed[key]
        rows[key] = make_row(
            plan,
            key,
            delta,
            prior,
            method=f"f1_{plan.model}_{key}",
            observed=Observed(n, score_a, score_b, float(m.difference(score_a, score_b)), n),
            tests=average_tests(correctness, boot[key]) if plan.baselines else (),
            ess=None if averaged.ess is None else averaged.ess[key],
            prior_ess=averaged.prior_ess,
            diagnostics=averaged.diagnostics,
        )
        priors[key] = prior
    return rows, priors


def assemble(plan: Plan, counts: Counts, draws: Draws) -> F1Result:
    """Step 4: every row and the tests across classes, in one F1Result."""
    rows = class_rows(plan, counts.per_class, draws.per_class)
    priors = dict(draws.per_class.priors)
    across: tuple[TestResult, ...] = ()
    if plan.baselines and plan.multiclass:
        observed = [r.observed for r in rows.values() if r.observed is not None]
        across = across_class_tests([o.score_a for o in observed], [o.score_b for o in observed])
    averaged = draws.averaged
    if plan.averages and averaged is not None and counts.cells is not None:
        avg_rows, avg_priors = average_rows(plan, counts.cells, averaged)
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
        counts=counts.per_class,
        prior_draws=priors,
        across_classes=across,
        diagnostics=None if averaged is None else averaged.diagnostics,
        settings=plan.settings,
    )
