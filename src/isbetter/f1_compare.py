"""Compare two classifiers on one test set: the paired Bayesian F1 comparison.

:func:`compare_f1` takes per-document gold labels and predictions, and for each
class (one class against the rest; one row for a binary task) draws the exact
posterior of the difference ``delta`` of a measure (F1 by default) under the
paired model of Zhang et al. (SIGIR 2016), summarises it as in the paper's
Tables 4–6 (mean, sd, Monte Carlo error, % below / above 0, % in the ROPE, 95%
HDI, Savage–Dickey BF01, five-way decision) and adds the frequentist baselines
on the same counts. Each per-class comparison is also a
:class:`~isbetter.decision.ComparisonResult`, so ranking, reports and plots
treat it like every other comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from isbetter._errors import InputError
from isbetter._provenance import make_settings
from isbetter._validate import (
    RNGLike,
    check_choice,
    check_positive_int,
    check_probability,
    check_rope,
    resolve_seed,
)
from isbetter.baselines import (
    bootstrap_test,
    dcf_proportion_test,
    macro_s_test,
    macro_t_test,
    mcnemar_test,
    p_test,
    randomization_test,
    s_test,
)
from isbetter.decision import ComparisonResult
from isbetter.f1_result import F1ComparisonResult, summarise_delta
from isbetter.measures import Measure, get_measure
from isbetter.models.f1 import F1Prior, Model, sample_delta
from isbetter.posterior import DrawsPosterior
from isbetter.predictions import JointCounts, PredictionTable, read_predictions

__all__ = ["AVERAGE_MAX_DRAWS", "F1ComparisonResult", "compare_f1", "summarise_delta"]

#: draws (and bootstrap resamples) of the macro / micro rows: M^3 Gamma variates per draw
AVERAGE_MAX_DRAWS = 10_000


def _average_rows(
    table: PredictionTable,
    system_a: str,
    system_b: str,
    m: Measure,
    *,
    rope: float,
    hdi_prob: float,
    draws: int,
    baselines: bool,
    resamples: int,
    seed_seq: np.random.SeedSequence,
) -> list[tuple[str, dict[str, Any], np.ndarray, np.ndarray]]:
    """Rows "macro" and "micro" of a multi-class comparison (paired joint model)."""
    from isbetter.baselines import bootstrap_average_test
    from isbetter.models.f1_multiclass import joint_cells, observed_averages, sample_average_delta

    k = len(table.labels)
    index = {lab: i for i, lab in enumerate(table.labels)}
    gi = np.array([index[x] for x in table.gold])
    ai = np.array([index[x] for x in table.predictions[system_a]])
    bi = np.array([index[x] for x in table.predictions[system_b]])
    cells = joint_cells(gi, ai, bi, k)
    post_ss, prior_ss, base_ss = seed_seq.spawn(3)
    same = bool(np.all(ai == bi))
    if same:
        macro_d = micro_d = np.zeros(draws)
    else:
        macro_d, micro_d = sample_average_delta(
            cells, m, draws=draws, rng=np.random.default_rng(post_ss)
        )
    macro_p, micro_p = sample_average_delta(
        np.zeros_like(cells), m, draws=draws, rng=np.random.default_rng(prior_ss)
    )
    observed = observed_averages(cells, m)
    right_a, right_b = gi == ai, gi == bi
    correctness = JointCounts(
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
    boot = (
        bootstrap_average_test(cells, m, resamples=resamples, rng=np.random.default_rng(base_ss))
        if baselines
        else {}
    )
    out = []
    for key, delta, prior in (("macro", macro_d, macro_p), ("micro", micro_d, micro_p)):
        prior = np.concatenate([prior, -prior])  # the prior is symmetric in A and B
        score_a, score_b = observed[key]
        row: dict[str, Any] = {
            "class": key,
            "n": int(table.n_documents),
            "n_pos": int(table.n_documents),
            "score_a": score_a,
            "score_b": score_b,
            "observed": float(m.difference(score_a, score_b)),
        }
        row.update(summarise_delta(delta, prior, rope=rope, hdi_prob=hdi_prob))
        if baselines:
            b = boot[key]
            row.update(
                sign_p=s_test(correctness),
                ptest_p=p_test(correctness),
                mcnemar_p=mcnemar_test(correctness, exact=True),
                mcnemar_chi2_p=mcnemar_test(correctness, exact=False),
                bootstrap_p=b.p_value,
                bootstrap_low=b.low,
                bootstrap_high=b.high,
                randomization_p=float("nan"),
            )
        out.append((key, row, delta, prior))
    return out


def _identical(c: JointCounts) -> bool:
    """Return True when A and B never disagree (no (1,0) or (0,1) outcome)."""
    return not (c.pos[1] or c.pos[2] or c.neg[1] or c.neg[2])


def _resolve_table(data: Any, gold: str, systems: Sequence[str] | None) -> PredictionTable:
    if isinstance(data, PredictionTable):
        return data
    return read_predictions(data, gold=gold, systems=systems)


def compare_f1(
    data: Any,
    *,
    system_a: str | None = None,
    system_b: str | None = None,
    gold: str = "gold",
    measure: str | Measure | Any = "f1",
    beta: float = 1.0,
    cost_fn: float = 1.0,
    cost_fp: float = 1.0,
    p_positive: float = 0.5,
    rope: float = 0.05,
    model: Model = "paired",
    prior: F1Prior | None = None,
    draws: int = 50_000,
    hdi_prob: float = 0.95,
    positive: Any = None,
    classes: Sequence[Any] | None = None,
    baselines: bool = True,
    resamples: int = 10_000,
    averages: bool = True,
    rng: RNGLike = None,
) -> F1ComparisonResult:
    """Compare two classifiers' F1 (or another measure) on the same test set.

    Answers, per class: how much better is A than B on this measure, how sure
    can we be, and are the two practically the same (inside the ROPE)? Uses the
    exact posterior of Zhang et al.'s (2016) paired model (no MCMC).

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
    measure : str, Measure or callable, default: "f1"
        See :func:`isbetter.measures.get_measure`; ``beta``, ``cost_fn``,
        ``cost_fp``, ``p_positive`` parametrise F-beta and DCF.
    rope : float, default: 0.05
        ROPE half-width on the measure's scale.
    model : {"paired", "unpaired"}, default: "paired"
        The unpaired model ignores that A and B saw the same documents.
    prior : F1Prior, optional
        Hyper-parameters; default: uniform (Beta(1, 1), Dir(1, 1, 1, 1)).
    draws : int, default: 50000
        Posterior draws per class (the paper's default).
    hdi_prob : float, default: 0.95
        Mass of the HDI used for the decision.
    positive : label, optional
        For a binary task, the positive class (default: the larger label, e.g. 1).
    classes : sequence of labels, optional
        For a multi-class task, the classes to report (default: all).
    averages : bool, default: True
        For a multi-class task with every class reported and the paired model, add
        rows ``"macro"`` and ``"micro"``: the macro- and micro-averaged measure under
        the joint model of (true class, prediction of A, prediction of B)
        (:mod:`isbetter.models.f1_multiclass`; prior mass 1/M^2 per cell). Their
        baselines are the s-test / McNemar on multi-class correctness and a
        bootstrap of the documents. The joint model costs M^3 Gamma variates per draw,
        so these rows use at most :data:`AVERAGE_MAX_DRAWS` draws and resamples.
    baselines : bool, default: True
        Also run the frequentist tests (s-test, p-test, McNemar, bootstrap,
        approximate randomization; T- and S-test across classes).
    resamples : int, default: 10000
        Resamples of the bootstrap and randomization tests.
    rng : int, numpy.random.Generator or None
        Seed; recorded in ``settings["seed"]``.

    Returns
    -------
    F1ComparisonResult

    Raises
    ------
    InputError
        Bad input (see :func:`read_predictions`), unknown systems or classes,
        negative ROPE.

    Notes
    -----
    Each class is one binary problem: its documents are positive, all others
    negative. The i-th reported class gets the i-th random stream spawned from
    the seed, and the baselines draw from streams of their own, so switching the
    baselines on or off leaves the posterior draws unchanged.

    When A and B make the same prediction on every document, they are the same
    classifier as far as this test set can tell, and delta is exactly 0 (decision
    "≈", BF01 infinite). Sampling the model there would only show the spread of
    the prior pseudo-counts of the two discordant outcomes, for which no
    document gives evidence.

    Orientation: ``delta`` is positive when A is better. For a cost such as DCF
    (lower is better) that is ``DCF(B) - DCF(A)``; ``score_a`` and ``score_b`` in
    the table are the raw measures.

    Swapping `system_a` and `system_b` (same seed) negates every draw exactly,
    and so mirrors every number of the table, unless the joint counts are
    themselves symmetric (then the mirror holds in distribution).

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"gold": [1, 0] * 300,
    ...                    "a": [1, 0] * 250 + [1, 1] * 50, "b": [1, 0] * 200 + [0, 0] * 100})
    >>> res = compare_f1(df, rng=1, draws=10_000)
    >>> row = res.row()
    >>> round(row["score_a"], 3), round(row["score_b"], 3), row["decision"], row["sign_p"] < 1e-3
    (0.923, 0.8, '≫', True)
    """
    named = [system_a, system_b] if system_a is not None and system_b is not None else None
    table = _resolve_table(data, gold, named)
    if system_a is None or system_b is None:
        if len(table.systems) != 2:
            raise InputError(
                f"Name the two systems with `system_a` and `system_b`; the table has "
                f"{len(table.systems)}: {', '.join(repr(s) for s in table.systems)}."
            )
        system_a, system_b = table.systems
    table.check_system(system_a, "system_a")
    table.check_system(system_b, "system_b")
    m = get_measure(measure, beta=beta, cost_fn=cost_fn, cost_fp=cost_fp, p_positive=p_positive)
    rope = check_rope(rope)
    model = check_choice(model, "model", ("paired", "unpaired"))  # type: ignore[assignment]
    draws = check_positive_int(draws, "draws", minimum=2)
    hdi_prob = check_probability(hdi_prob, "hdi_prob", open_interval=True)
    resamples = check_positive_int(resamples, "resamples")
    prior = prior or F1Prior()
    if table.is_binary:
        if classes is not None:
            raise InputError("`classes` is for multi-class tasks; use `positive` for a binary one.")
        labels = [table.default_positive() if positive is None else table.check_label(positive)]
    else:
        if positive is not None:
            raise InputError("`positive` is for binary tasks; use `classes` for a multi-class one.")
        labels = (
            list(table.labels)
            if classes is None
            else [table.check_label(c, "classes") for c in classes]
        )
    seed = resolve_seed(rng)
    root = np.random.SeedSequence(seed)
    streams = root.spawn(len(labels))

    rows, comparisons, counts_by, priors_by = [], {}, {}, {}
    method = f"f1_{model}"
    settings = make_settings(
        method,
        seed,
        rope=rope,
        draws=draws,
        measure=m.name,
        hdi_prob=hdi_prob,
        prior=prior.to_dict(),
        system_a=system_a,
        system_b=system_b,
        positive=None if not table.is_binary else str(labels[0]),
        resamples=resamples if baselines else None,
        average_draws=min(draws, AVERAGE_MAX_DRAWS) if not table.is_binary else None,
    )
    # the prior of delta does not depend on the data: one set of prior draws serves every class
    zero = JointCounts(np.zeros(4, np.int64), np.zeros(4, np.int64))
    prior_delta = sample_delta(
        zero, m, model=model, prior=prior, draws=draws, rng=np.random.default_rng(root.spawn(1)[0])
    )
    if model == "unpaired" or prior.symmetric:
        # the prior of delta is then symmetric about 0: symmetrising halves the KDE
        # noise and keeps BF01 identical when A and B are exchanged
        prior_delta = np.concatenate([prior_delta, -prior_delta])
    for label, stream in zip(labels, streams, strict=True):
        post_ss, base_ss = stream.spawn(2)
        c = table.joint_counts(system_a, system_b, label)
        if _identical(c):
            # A and B are the same function on this test set: delta is exactly 0 (see Notes)
            delta = np.zeros(draws)
        else:
            delta = sample_delta(
                c, m, model=model, prior=prior, draws=draws, rng=np.random.default_rng(post_ss)
            )
        (cells_a, cells_b) = c.cells()
        score_a, score_b = float(m(*cells_a)), float(m(*cells_b))
        row: dict[str, Any] = {
            "class": str(label),
            "n": int(c.n),
            "n_pos": int(np.sum(c.pos)),
            "score_a": score_a,
            "score_b": score_b,
            "observed": float(m.difference(np.float64(score_a), np.float64(score_b))),
        }
        row.update(summarise_delta(delta, prior_delta, rope=rope, hdi_prob=hdi_prob))
        if baselines:
            b_rng = np.random.default_rng(base_ss)
            boot = bootstrap_test(c, m, resamples=resamples, rng=b_rng)
            ar = randomization_test(c, m, resamples=resamples, rng=b_rng)
            row.update(
                sign_p=s_test(c),
                ptest_p=p_test(c),
                mcnemar_p=mcnemar_test(c, exact=True),
                mcnemar_chi2_p=mcnemar_test(c, exact=False),
                bootstrap_p=boot.p_value,
                bootstrap_low=boot.low,
                bootstrap_high=boot.high,
                randomization_p=ar.p_value,
            )
            if isinstance(measure, str) and measure.lower() == "dcf":
                # Keller et al.'s adapted (paired) proportion test, eq. (9)
                row["dcf_ptest_p"] = dcf_proportion_test(
                    c, cost_fn=cost_fn, cost_fp=cost_fp, p_positive=p_positive
                )
        key = str(label)
        rows.append(row)
        counts_by[key] = c
        priors_by[key] = prior_delta
        comparisons[key] = ComparisonResult.from_posterior(
            DrawsPosterior(delta),
            system_a=system_a,
            system_b=system_b,
            rope=rope,
            method=method,
            settings={**settings, "class": key},
        )
    frame = pd.DataFrame(rows)
    macro_tests: dict[str, float] = {}
    if baselines and not table.is_binary:
        macro_tests = {
            "t_test_p": macro_t_test(frame["score_a"], frame["score_b"]),
            "s_test_p": macro_s_test(frame["score_a"], frame["score_b"]),
        }
    if averages and not table.is_binary and classes is None and model == "paired":
        for key, row, delta, avg_prior in _average_rows(
            table,
            system_a,
            system_b,
            m,
            rope=rope,
            hdi_prob=hdi_prob,
            draws=min(draws, AVERAGE_MAX_DRAWS),
            baselines=baselines,
            resamples=min(resamples, AVERAGE_MAX_DRAWS),
            seed_seq=root.spawn(1)[0],
        ):
            comparisons[key] = ComparisonResult.from_posterior(
                DrawsPosterior(delta),
                system_a=system_a,
                system_b=system_b,
                rope=rope,
                method=f"{method}_{key}",
                settings={**settings, "class": key},
            )
            priors_by[key] = avg_prior
            frame = pd.concat([frame, pd.DataFrame([row])], ignore_index=True)
    return F1ComparisonResult(
        system_a=system_a,
        system_b=system_b,
        measure=m.name,
        higher_is_better=m.higher_is_better,
        model=model,
        rope=rope,
        hdi_prob=hdi_prob,
        table=frame,
        comparisons=comparisons,
        counts=counts_by,
        prior_draws=priors_by,
        macro_tests=macro_tests,
        settings=settings,
    )
