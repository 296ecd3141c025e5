"""Turn a result (or its summary) into the :class:`~isbetter.report.table.ReportTable`.

One builder per kind of summary; they only read summaries, so a report can be
made from a stored JSON summary as well as from a fresh result. Every title
names the method, the systems, the metric and its direction; every report says
what the ROPE is.
"""

from __future__ import annotations

from typing import Any

from isbetter.core.errors import InputTypeError
from isbetter.core.vocabulary import (
    ITEMS_HIERARCHICAL,
    METHOD_NAMES,
    RANK_QUANTITIES,
    pair_quantity,
    place_text,
    ranking_text,
    rope_text,
)
from isbetter.inference.decisions import HDI_ROPE_RULE, RELATIONS, symbol
from isbetter.inference.records import Estimate, Observed, TestResult
from isbetter.ranking.result import metric_of
from isbetter.report.table import Column, ReportTable
from isbetter.results import ComparisonResult, F1Result, PowerResult, Summary

__all__ = ["as_summary", "default_rope", "to_table"]


def as_summary(result: Any) -> Summary:
    """Return the light form of a result (that of a light form is the same)."""
    if hasattr(result, "summary") and callable(result.summary):
        return result.summary()
    raise InputTypeError(
        f"Cannot report a {type(result).__name__}; pass a result of isbetter or its summary()."
    )


def to_table(result: Any) -> ReportTable:
    """Build the report table of any result of isbetter (or of its summary)."""
    summary = as_summary(result)
    if getattr(summary, "kind", None) == "ranking":
        return _ranking_table(summary)
    if isinstance(summary, F1Result):
        return _f1_table(summary)
    if isinstance(summary, PowerResult):
        return _power_table(summary)
    return _comparison_table(summary)


def default_rope(settings: dict[str, Any], inside: bool = False, metric: str | None = None) -> str:
    """Return ``" (the default: no --rope given)"`` for a ROPE left at its default, else "".

    `inside`: to go inside a parenthesis already open, ``"; the default: ..."``. The
    command line records ``rope_default`` in the settings: true when every ROPE is
    the default, or, in a ranking given ``--rope`` for some of its metrics, the list
    of the others (then `metric`'s ROPE, a ranking name such as ``"f1 macro"`` by its
    first word, is the default when it is listed); the Python API, whose default is
    its argument's documented value, records nothing (:mod:`isbetter.core.rope`).
    """
    default = settings.get("rope_default")
    if isinstance(default, list):
        default = metric is not None and (metric in default or metric.split(" ")[0] in default)
    if default is not True:
        return ""
    said = "the default: no --rope given"
    return f"; {said}" if inside else f" ({said})"


def _direction(higher_is_better: bool) -> str:
    return "higher is better" if higher_is_better else "lower is better"


def _metric_note(s: ComparisonResult | F1Result, metric: str) -> str:
    a, b = s.system_a, s.system_b
    d = f"{metric}({a}) - {metric}({b})" if s.higher_is_better else f"{metric}({b}) - {metric}({a})"
    rope = (
        "zero width, no region of practical equivalence (only d = 0 counts as equivalent)"
        if s.rope == 0
        else _regions(s.rope)[1]
    )
    rope += default_rope(s.settings)
    return (
        f"metric: {metric} ({_direction(s.higher_is_better)}); d = {d}, positive when {a} "
        f"is better; ROPE: {rope}"
    )


def _regions(rope: float) -> tuple[str, str, str]:
    """Return the three regions of d for a ROPE half-width: A better, equivalent, B better."""
    if rope == 0:  # never "-0 <= d <= 0"
        return "d > 0", "d = 0", "d < 0"
    r = f"{rope:g}"
    return f"d > {r}", f"-{r} <= d <= {r}", f"d < -{r}"


def _test_line(t: TestResult) -> str:
    what = t.description or t.name
    parts = [f"p = {t.p_value:.4g}"]
    if t.statistic == t.statistic:  # not NaN
        parts.insert(0, f"statistic {t.statistic:.3f}")
    if t.interval is not None:
        i = t.interval
        parts.append(f"{i.prob:.0%} {i.kind} interval [{i.low:+.4g}, {i.high:+.4g}]")
    return f"{what}: " + ", ".join(parts)


def _comparison_table(s: ComparisonResult) -> ReportTable:
    a, b = s.system_a, s.system_b
    counted = "argmax count" if s.counting == "argmax" else "posterior probability"
    columns = [Column("region", "region"), Column("p", f"P ({counted})", "probability")]
    above, within, below = _regions(s.rope)
    rows: list[dict[str, Any]] = [
        {"region": f"{a} better ({above})", "p": s.p_a_better},
        {"region": f"practically equivalent ({within})", "p": s.p_rope},
        {"region": f"{b} better ({below})", "p": s.p_b_better},
    ]
    next_one = "next subtask" if s.method in ITEMS_HIERARCHICAL else "next data set"
    if s.predictive is not None:
        columns.append(Column("predictive", f"P ({next_one})", "probability"))
        for row, p in zip(rows, s.predictive.as_tuple(), strict=True):
            row["predictive"] = p
    where = (
        f" on {place_text(s.method, s.dataset, s.settings.get('dataset_name'))}"
        if s.dataset
        else ""
    )
    where += f", class {s.label}" if s.label else ""
    title = (
        f"{METHOD_NAMES.get(s.method, s.method)}: {a} vs {b}{where}, {s.metric} "
        f"({_direction(s.higher_is_better)})"
    )
    notes = [_metric_note(s, s.metric)]
    if s.settings.get("dropped"):
        notes.append(f"dropped as incomplete: {s.settings['dropped']}")
    notes += [f"read: {note}" for note in s.settings.get("reading", ())]
    if s.observed is not None:
        notes.append(_observed_note(s, s.observed))
    if "counts" in s.settings:
        notes.append(_counts_note(s, s.settings["counts"]))
    if s.estimate is not None:
        notes.append(_estimate_note(s, s.estimate))
    notes += _subtask_notes(s, s.settings.get("subtasks", ()))
    if "rho" in s.settings and s.method == "correlated_t":
        notes.append(f"correlation of the fold differences rho = {s.settings['rho']:g}")
    notes += [_test_line(t) for t in s.tests]
    if s.counting == "argmax":
        notes.append(
            "P: fraction of posterior draws in which the region holds the largest mass "
            "(argmax counting, as published)"
            + (f"; P ({next_one}): posterior predictive probability" if s.predictive else "")
        )
    if s.diagnostics is not None:
        notes.append(s.diagnostics.line())
    return ReportTable(
        title=title,
        columns=tuple(columns),
        rows=tuple(rows),
        notes=tuple(notes),
        signature=s.signature,
        records=(s.to_record(),),
        data=s.to_dict(),
    )


def _counts_note(s: ComparisonResult, c: dict[str, int]) -> str:
    """Return the note of the 2 x 2 counts of binary items."""
    a, b = s.system_a, s.system_b
    return (
        f"counts: both right n11 = {c['n11']}, only {a} n10 = {c['n10']}, only {b} n01 = "
        f"{c['n01']}, neither n00 = {c['n00']}"
    )


def _subtask_notes(s: ComparisonResult, rows: Any) -> list[str]:
    """Return one note per subtask of the hierarchical model: counts, observed and shrunk d."""
    if not rows:
        return []
    a, b = s.system_a, s.system_b
    prob = s.estimate.interval.prob if s.estimate is not None else 0.95
    shrunk = f"the shrunk difference, posterior mean [{prob:.0%} HDI]"
    if "n11" not in rows[0]:  # graded items: the correlated-t model with rho = 0
        unit = s.settings.get("unit", "item")
        notes = [
            f"per subtask ({unit}s independent, rho = {s.settings.get('rho', 0):g}): "
            f"observed mean difference (of n {unit}s) and {shrunk}:"
        ]
        return notes + [
            f"  {r['subtask']}: observed {r['observed']:+.4f} (of {r['n']}), shrunk "
            f"{r['mean']:+.4f} [{r['interval_low']:+.4f}, {r['interval_high']:+.4f}]"
            for r in rows
        ]
    notes = [
        f"per subtask: observed difference (n10 only {a}, n01 only {b}, of n items) and {shrunk}:"
    ]
    for r in rows:
        n = r["n11"] + r["n10"] + r["n01"] + r["n00"]
        notes.append(
            f"  {r['subtask']}: observed {r['observed']:+.4f} (n10 {r['n10']}, n01 {r['n01']} "
            f"of {n}), shrunk {r['mean']:+.4f} [{r['interval_low']:+.4f}, "
            f"{r['interval_high']:+.4f}]"
        )
    return notes


def _observed_note(s: ComparisonResult, o: Observed) -> str:
    """Return the note of the observed mean scores and their difference."""
    a, b = s.system_a, s.system_b
    size = f"{o.n} data sets" if s.method in ("sign", "signed_rank") else f"{o.n} scores"
    if s.method.startswith("items_"):
        size = f"{o.n} items" + (
            f" in {s.settings['clusters']} clusters" if "clusters" in s.settings else ""
        )
        runs = [r for r in s.settings.get("runs", ()) if r != 1]
        if runs:
            size += f", each the mean of its {'/'.join(map(str, runs))} runs"
    if "n_datasets" in s.settings and s.method == "hierarchical":
        size += f" on {s.settings['n_datasets']} data sets"
    if "n_subtasks" in s.settings and s.method in ITEMS_HIERARCHICAL:
        size += f" on {s.settings['n_subtasks']} subtasks"
    return (
        f"observed: mean {s.metric} {a} {o.score_a:.4f}, {b} {o.score_b:.4f}, mean "
        f"difference {o.difference:+.4f} ({size})"
    )


def _estimate_note(s: ComparisonResult, e: Estimate) -> str:
    """Return the note of the posterior mean difference, its HDI, decision and BF(ROPE)."""
    i = e.interval
    what = "mean difference" + (" delta0" if s.method == "hierarchical" else "")
    if s.method in ITEMS_HIERARCHICAL:
        what = "population mean difference (over subtasks)"
    bf = _bayes_factor(e.bf_rope, e.bf_rope_bound, e.bf_rope_mcse)
    return (
        f"posterior {what}: {e.mean:+.4f} (sd {e.sd:.4f}), {i.prob:.0%} HDI "
        f"[{i.low:+.4f}, {i.high:+.4f}]; HDI + ROPE decision: {symbol(e.decision)} "
        f"({RELATIONS[e.decision][2]})" + ("" if bf is None else f"; BF(ROPE) {bf}")
    )


#: display columns of the F1 tables, in the order of Zhang et al.'s Tables 4-6
_F1_COLUMNS = (
    Column("label", "class"),
    Column("score_a", "A", "number", group="metric"),
    Column("score_b", "B", "number", group="metric"),
    Column("sign_p_value", "sign p", "number", group="p-value", short="sign"),
    Column("mcnemar_p_value", "McNemar p", "number", group="p-value", short="McNemar"),
    Column("bootstrap_p_value", "boot p", "number", group="p-value", short="boot"),
    Column("mean", "mean", "signed", group="posterior of δ"),
    Column("sd", "sd", "number", group="posterior of δ"),
    Column("mcse", "MC err", "number", 4, group="posterior of δ"),
    Column("bf_rope_text", "BF(ROPE)", "formatted", group="Bayes factor"),
    Column("bf01_text", "BF01", "formatted", group="Bayes factor"),
    Column("p_below_0", "P(<0)", "percent", group="probability", short="δ < 0"),
    Column("p_above_0", "P(>0)", "percent", group="probability", short="δ > 0"),
    Column("p_rope", "ROPE", "percent", group="probability"),
    Column("hdi", "HDI", "interval"),
    Column("decision", "decision", "relation"),
)


def _bayes_factor(value: Any, bound: str, mcse: Any = None) -> str | None:
    """Format a Bayes factor: ``13.7 ± 0.2``, ``< 0.0012``, ``inf``; None when missing."""
    if value is None or value != value:  # None or NaN: the cell formatter's missing token
        return None
    if value == float("inf"):
        return "inf"
    error = f" ± {mcse:.2g}" if mcse is not None and mcse == mcse and not bound else ""
    return f"{bound + ' ' if bound else ''}{value:.3g}{error}"


def _bandwidths(records: tuple[dict[str, Any], ...]) -> str:
    """Return BF01's prior bandwidths over the rows, e.g. ``0.0284 (4 rows), 0.0221 (macro)``."""
    groups: dict[str, list[str]] = {}
    for r in records:
        h0 = r.get("bf01_prior_bandwidth")
        if h0 is not None and h0 == h0:
            groups.setdefault(f"{h0:.3g}", []).append(str(r.get("label")))
    if len(groups) == 1:
        return next(iter(groups))
    if len(groups) > 3:
        shown = sorted(groups, key=float)
        return f"{shown[0]} to {shown[-1]} by row"
    return ", ".join(
        f"{h0} ({', '.join(rows) if len(rows) <= 2 else f'{len(rows)} rows'})"
        for h0, rows in groups.items()
    )


def _bayes_factor_notes(records: tuple[dict[str, Any], ...], rope: float) -> list[str]:
    """Return the notes on the Bayes-factor columns: BF(ROPE) first, BF01's bandwidths named."""
    from isbetter.inference.summaries import REFERENCE_DRAWS

    h0 = _bandwidths(records)
    if not h0:
        return []
    return [
        f"BF(ROPE), the headline Bayes factor: posterior over prior odds of |delta| <= "
        f"{rope:g} (> 1 favours practical equivalence, < 1 a practical difference), "
        "counted from the draws",
        "BF01: Savage–Dickey ratio of posterior to prior density at delta = 0 (> 1 favours "
        f"delta = 0), Gaussian kernels of bandwidth h0 = {h0} on the prior "
        f"draws and {REFERENCE_DRAWS**-0.2:.3f} x sd on the posterior's (each row's in "
        "the JSON and CSV: bf01_prior_bandwidth, bf01_bandwidth); the prior density of "
        "delta diverges at 0, so BF01 falls as h0 shrinks: it weighs delta within about h0 "
        "of 0, not delta = 0 exactly",
        "Bayes factors: ± one Monte Carlo standard error (delta method); '<' / '>' an "
        "upper / lower bound where too few draws fall near 0, or inside / outside the ROPE",
    ]


def _f1_table(s: F1Result) -> ReportTable:
    records = tuple(r.to_record() for r in s.rows)
    keys = set().union(*(r.keys() for r in records)) if records else set()
    shown = {"hdi", "bf01_text", "bf_rope_text"}
    columns = tuple(c for c in _F1_COLUMNS if c.key in shown or c.key in keys)
    rows = tuple(
        {
            **r,
            "hdi": (r.get("interval_low"), r.get("interval_high")),
            "bf_rope_text": _bayes_factor(
                r.get("bf_rope"), r.get("bf_rope_bound", ""), r.get("bf_rope_mcse")
            ),
            "bf01_text": _bayes_factor(r.get("bf01"), r.get("bf01_bound", ""), r.get("bf01_mcse")),
        }
        for r in records
    )
    direction = "" if s.higher_is_better else " (a cost: delta = B - A, positive = A better)"
    title = (
        f"{s.model} Bayesian comparison of {s.metric} ({_direction(s.higher_is_better)}): "
        f"{s.system_a} (A) vs {s.system_b} (B); delta = A - B{direction}, {rope_text(s.rope)}"
        f"{default_rope(s.settings)}, {s.hdi_prob:.0%} HDI"
    )
    notes = [_test_line(t) for t in s.across_classes]
    notes += _bayes_factor_notes(records, s.rope)
    notes.append(
        "decision (HDI + ROPE): "
        + ", ".join(f"{symbol(k)} {where}" for k, where in HDI_ROPE_RULE.items())
    )
    if s.diagnostics is not None:
        notes.append(s.diagnostics.line())
    data = s.to_dict()
    return ReportTable(
        title=title,
        columns=columns,
        rows=rows,
        notes=tuple(notes),
        signature=s.signature,
        records=records,
        data=data,
    )


def _power_table(s: PowerResult) -> ReportTable:
    columns = [Column("size", "N")]
    by_size: dict[int, dict[str, Any]] = {n: {"size": n} for n in s.sizes}
    for m in s.models:
        columns += [
            Column(f"{m}", f"power {m}", "number", group=m, short="power"),
            Column(f"{m}_se", "± se", "number", group=m),
        ]
    for r in s.rows:
        by_size[int(r["size"])][r["model"]] = r["power"]
        by_size[int(r["size"])][f"{r['model']}_se"] = r["se"]
    title = (
        f"Power of the F1 models to reach {symbol(s.goal)} ({RELATIONS[s.goal][2]}) on "
        f"{s.metric}: {s.scenario}, true difference {s.true_delta:+.3f}, {rope_text(s.rope)}"
    )
    notes = (
        f"{s.replicates} simulated test sets per N; power = fraction whose {s.hdi_prob:.0%} HDI "
        "reaches the goal; se = binomial standard error",
    )
    return ReportTable(
        title=title,
        columns=tuple(columns),
        rows=tuple(by_size[n] for n in s.sizes),
        notes=notes,
        signature=s.signature,
        records=tuple(dict(r) for r in s.rows),
        data=s.to_dict(),
    )


def _ranking_table(r: Any) -> ReportTable:
    """Szymański & Gorman's Table 2: pairs x metrics x (A better, equivalent, B better)."""
    rule = (
        f"likelihood (most probable relation; ≳/≲ when within {r.margin:g} of the ROPE)"
        if r.rule == "likelihood"
        else f"threshold (probability >= {r.threshold:g}, else ?)"
    )
    if r.settings.get("comparison_method") == "plackett_luce" and r.rule == "likelihood":
        rule = (
            f"likelihood without a ROPE (≫/≪ where P(w_A > w_B) or P(w_B > w_A) is at least "
            f"{r.threshold:g}; below it >/< for the side the pair leans to, ? when the two "
            f"are within {r.margin:g})"
        )
    about = "; ".join(dict.fromkeys(pair_quantity(r.pair_method(m))[0] for m in r.metrics))
    title = (
        f"Ranking of {len(r.systems)} systems on {', '.join(r.metrics)}: "
        f"{ranking_text(r.pair_method())}; pairs and order: {about}; rule: {r.rule}"
    )
    notes = [f"relation rule: {rule}"]
    for m in r.metrics:
        notes += _ranking_metric_notes(r, m)
    notes += _ranking_key_notes(r)
    if r.settings.get("dropped"):
        notes.append(f"dropped as incomplete: {r.settings['dropped']}")
    if r.settings.get("pooled"):  # item scores of several tasks (isbetter.ranking.items)
        notes.append(str(r.settings["pooled"]))
    notes += [f"read: {n}" for n in r.settings.get("reading", ())]
    if r.settings.get("mcnemar"):
        notes += _mcnemar_notes(r.settings["mcnemar"])
    return ReportTable(
        title=title,
        columns=_ranking_columns(r),
        rows=_ranking_rows(r),
        notes=tuple(notes),
        signature=r.signature,
        records=tuple(r.to_frame().to_dict(orient="records")),
        data=r.to_dict(),
    )


def _mcnemar_notes(m: dict[str, Any]) -> list[str]:
    """Return a tagger study's frequentist answer on single splits (Gorman & Bedrick 2019)."""
    s = m["split"]
    where = f"{s['dataset']}, run {s['run']}, fold {s['fold']}"
    level = f"{1 - m['alpha']:.0%}"
    notes = [
        f"one split ({where}): token accuracy [Wilson {level}]: "
        + ", ".join(
            f"{k} {a:.4f} [{lo:.4f}, {hi:.4f}]" for k, (a, lo, hi) in s["intervals"].items()
        ),
        f"one split ({where}): mid-p McNemar on tokens: "
        + ", ".join(f"{a} vs {b} p = {p:.3g}" for a, b, p in s["p_values"]),
    ]
    notes += [
        f"mid-p McNemar on each fold (α {m['alpha']:g}), {c['system_a']} vs {c['system_b']}: "
        f"{c['system_a']} better on {c['a_better']} of {c['folds']} folds, {c['system_b']} "
        f"better on {c['b_better']}, no difference on {c['no_difference']}"
        for c in m["pairs"]
    ]
    return notes


def _ranking_columns(r: Any) -> tuple[Column, ...]:
    """Return the columns: the two systems, then per metric >, ≈, <, relation (and Δ rank)."""
    columns = [Column("a", "A"), Column("b", "B")]
    for m in r.metrics:
        columns += [
            Column(f"{m}|a", f"{m} >", "probability", group=m, short=">"),
            Column(f"{m}|rope", f"{m} ≈", "probability", group=m, short="≈"),
            Column(f"{m}|b", f"{m} <", "probability", group=m, short="<"),
            Column(f"{m}|rel", "", "relation", group=m),
        ]
        if m in r.baselines:
            columns.append(Column(f"{m}|rank", f"{m} Δ rank", "text", group=m, short="Δ rank"))
    return tuple(columns)


def _ranking_rows(r: Any) -> tuple[dict[str, Any], ...]:
    """Return one row per pair of systems, with the cells of every metric."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for p in r.pairs:
        m = metric_of(p)
        row = rows.setdefault((p.system_a, p.system_b), {"a": p.system_a, "b": p.system_b})
        row.update(
            {
                f"{m}|a": p.p_a_better,
                f"{m}|rope": p.p_rope,
                f"{m}|b": p.p_b_better,
                f"{m}|rel": r.relations[m][(p.system_a, p.system_b)],
            }
        )
        if m in r.baselines:
            row[f"{m}|rank"] = _rank_cell(r.baselines[m], p.system_a, p.system_b)
    return tuple(rows.values())


def _ranking_metric_notes(r: Any, m: str) -> list[str]:
    """Return one metric's notes: order, inconsistencies, chain, joint ranks, baselines."""
    ropes = r.settings.get("ropes", {})
    order = r.orders[m]
    rope = ropes.get(m, ropes.get(m.split(" ")[0], r.settings.get("rope")))
    about = pair_quantity(r.pair_method(m))[0]
    said = default_rope(r.settings, inside=True, metric=m)
    where = f"{m}, {about}" + (f" ({rope_text(rope)}{said})" if rope is not None else "")
    notes = [f"{where}: {order.line}"]
    notes += [f"{m}: inconsistency: {x}" for x in order.inconsistencies]
    notes.append(f"{m} chain, {about}: {order.chain}")
    if m in r.joint:
        notes += _joint_notes(m, r.joint[m], r.settings)
    if m in r.baselines:
        notes += _baseline_notes(m, r.baselines[m])
    return notes


def _ranking_key_notes(r: Any) -> list[str]:
    """Return the key: what the chain's symbols, the columns >, ≈, < and Δ rank mean."""
    by = "; ".join(dict.fromkeys(r.orders[m].chain_by for m in r.metrics))
    about = {pair_quantity(r.pair_method(m))[1]: None for m in r.metrics}
    notes = [
        f"chain: Szymański & Gorman's notation, worst first by {by}; each symbol relates "
        "the two systems beside it (a < b: b better by more than the ROPE; ≈: equivalent; "
        "≲, ≳: too close to call; ?: undecided), so a ≈ b ≈ c with a < c is possible"
    ]
    if r.settings.get("comparison_method") == "plackett_luce":
        notes = [
            f"chain: Szymański & Gorman's notation, worst first by {by}; each symbol relates "
            f"the two systems beside it (a < b: P(w_b > w_a) at least {r.threshold:g}, b "
            "ranks above a more often than not; ?: not decided at that probability)",
            "columns >, ≈, <: P(w_A > w_B), 0, P(w_B > w_A) — the Plackett–Luce model ranks "
            "and has no ROPE, so no pair is practically equivalent",
        ]
    else:
        notes.append(
            "columns >, ≈, <: P(A better), P(practically equivalent), P(B better), about "
            + "; ".join(about)
            + ", as are the order, groups and chain of each metric"
        )
    if any(m in r.joint and r.joint[m].method == "joint" for m in r.metrics):
        notes.append(
            "P(best), expected ranks and most probable orders: about "
            f"{RANK_QUANTITIES['joint'][1]}; two systems can be practically equivalent in "
            "their mean effects and yet differ on the next data set (or the reverse)"
        )
    if r.baselines:
        levels = [c.alpha for c in next(iter(r.baselines.values())).nemenyi]
        stars = ", ".join(
            f"{'*' * (len(levels) - i)} at α {a:g}" + (" only" if i else "")
            for i, a in enumerate(levels)
        )
        notes.append(
            "Δ rank: mean rank of B minus mean rank of A (positive: A ranks better); "
            f"|Δ| at least Nemenyi's critical difference: {stars}"
        )
    else:
        notes.append(
            "no mean ranks, Friedman test or Nemenyi critical difference: they rank the "
            "systems on each of several data sets, and this ranking has one data set or test set"
        )
    return notes


def _p_best_values(
    values: dict[str, float], intervals: dict[str, tuple[float, float]], by_rank: tuple[str, ...]
) -> str:
    """Return ``b 0.500 [0.410, 0.590], a 0.300 [...]``: a probability and its interval each."""
    return ", ".join(
        f"{s} {values[s]:.3f}"
        + (f" [{intervals[s][0]:.3f}, {intervals[s][1]:.3f}]" if s in intervals else "")
        for s in by_rank
    )


def _joint_notes(metric: str, j: Any, settings: dict[str, Any]) -> list[str]:
    """Return the notes of one metric's ranks from one model: P(best), ranks, likely orders."""
    by_rank = j.by_expected_rank()
    ranks = ", ".join(
        f"{s} {j.expected_rank[s]:.2f} [{j.rank_interval[s][0]}, {j.rank_interval[s][1]}]"
        for s in by_rank
    )
    orders = "; ".join(f"{o} ({p:.3f})" for o, p in j.top_orders)
    name = METHOD_NAMES.get(j.method, j.method)
    interval = f" [{j.p_best_interval_kind}]" if j.p_best_interval_kind else ""
    p_best = _p_best_values(j.p_best, j.p_best_interval, by_rank)
    if j.method != "plackett_luce":
        of = f"{metric}, {RANK_QUANTITIES.get(j.method, ('effects',))[0]}"
        return [
            f"{of}, {name}, P(best){interval}: {p_best}",
            f"{of}, expected rank [95% interval]: {ranks}",
            f"{of}, most probable orders: {orders}",
            f"{of}, most probable orders, groups within {rope_text(j.rope)} tied: "
            + "; ".join(f"{o} ({p:.3f})" for o, p in j.rope_orders),
        ]
    tied = settings.get("tied_datasets", {}).get(metric)
    wins = _p_best_values(j.p_wins_next, j.p_wins_next_interval, by_rank)
    return [
        f"{metric}, {name}, P(best) = P(w_k is the largest weight){interval}: {p_best}",
        f"{metric}, P(wins next data set) = E[w_k], the probability of ranking first on a "
        f"new data set [{j.p_wins_next_interval_kind}]: {wins}",
        f"{metric}, expected rank [95% interval] of the weights' order: {ranks}",
        f"{metric}, most probable orders of the weights: {orders}",
        f"{metric}: {tied if tied is not None else 'any'} data sets with tied scores, "
        f"{settings.get('ties', 'ties broken at random')}",
    ]


def _rank_cell(base: Any, a: str, b: str) -> str:
    """Return a pair's difference of mean ranks, e.g. ``+1.24 **`` (B's minus A's)."""
    diff = base.mean_ranks[b] - base.mean_ranks[a]
    stars = "*" * len(base.significant_levels(a, b))
    return f"{diff:+.2f}" + (f" {stars}" if stars else "")


def _baseline_notes(m: str, base: Any) -> list[str]:
    """Mean ranks, Friedman and Iman–Davenport, Nemenyi's groups: one line each (Demšar 2006)."""
    ranks = ", ".join(f"{s} {base.mean_ranks[s]:.3f}" for s in base.by_rank)
    f, i = base.friedman, base.iman_davenport
    lines = [
        f"{m}: mean ranks on {base.n_datasets} data sets (1 = best, ties averaged; each "
        f"system's mean score per data set): {ranks}",
        f"{m}: {f.text('Friedman', 'χ²')}; {i.text('Iman–Davenport', 'F')} "
        "(Demšar 2006, no tie correction)",
    ]
    for c in base.nemenyi:
        groups = ", ".join("{" + ", ".join(g) + "}" for g in c.groups)
        lines.append(
            f"{m}: Nemenyi CD = {c.cd:.3f} at α {c.alpha:g} (q = {c.q:.3f}); groups without "
            f"a significant difference: {groups}"
        )
    return lines
