"""Turn a result (or its summary) into the :class:`~isbetter.report.table.ReportTable`.

One builder per kind of summary; they only read summaries, so a report can be
made from a stored JSON summary as well as from a fresh result. Every title
names the method, the systems, the metric and its direction; every report says
what the ROPE is.
"""

from __future__ import annotations

from typing import Any

from isbetter.core.errors import InputTypeError
from isbetter.core.vocabulary import METHOD_NAMES, rope_text
from isbetter.inference.decisions import HDI_ROPE_RELATIONS, RELATIONS, symbol
from isbetter.inference.records import TestResult
from isbetter.report.table import Column, ReportTable
from isbetter.results import ComparisonSummary, F1Summary, PowerSummary, Summary

__all__ = ["as_summary", "to_table"]


def as_summary(result: Any) -> Summary:
    """Return the summary of a result (a summary is returned as it is)."""
    if isinstance(result, ComparisonSummary | F1Summary | PowerSummary):
        return result
    if getattr(result, "kind", None) == "ranking":  # a ranking is its own summary
        return result
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
    if isinstance(summary, F1Summary):
        return _f1_table(summary)
    if isinstance(summary, PowerSummary):
        return _power_table(summary)
    return _comparison_table(summary)


def _direction(higher_is_better: bool) -> str:
    return "higher is better" if higher_is_better else "lower is better"


def _metric_note(s: ComparisonSummary | F1Summary, metric: str) -> str:
    a, b = s.system_a, s.system_b
    d = f"{metric}({a}) - {metric}({b})" if s.higher_is_better else f"{metric}({b}) - {metric}({a})"
    rope = (
        "zero width, no region of practical equivalence (only d = 0 counts as equivalent)"
        if s.rope == 0
        else _regions(s.rope)[1]
    )
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


def _comparison_table(s: ComparisonSummary) -> ReportTable:
    a, b = s.system_a, s.system_b
    counted = "argmax count" if s.counting == "argmax" else "posterior probability"
    columns = [Column("region", "region"), Column("p", f"P ({counted})", "probability")]
    above, within, below = _regions(s.rope)
    rows: list[dict[str, Any]] = [
        {"region": f"{a} better ({above})", "p": s.p_a_better},
        {"region": f"practically equivalent ({within})", "p": s.p_rope},
        {"region": f"{b} better ({below})", "p": s.p_b_better},
    ]
    if s.predictive is not None:
        columns.append(Column("predictive", "P (next data set)", "probability"))
        for row, p in zip(rows, s.predictive.as_tuple(), strict=True):
            row["predictive"] = p
    where = f" on data set {s.dataset}" if s.dataset else ""
    where += f", class {s.label}" if s.label else ""
    title = (
        f"{METHOD_NAMES.get(s.method, s.method)}: {a} vs {b}{where}, {s.metric} "
        f"({_direction(s.higher_is_better)})"
    )
    notes = [_metric_note(s, s.metric)]
    if s.settings.get("dropped"):
        notes.append(f"dropped as incomplete: {s.settings['dropped']}")
    if s.observed is not None:
        o = s.observed
        size = f"{o.n} data sets" if s.method in ("sign", "signed_rank") else f"{o.n} scores"
        if "n_datasets" in s.settings and s.method == "hierarchical":
            size += f" on {s.settings['n_datasets']} data sets"
        notes.append(
            f"observed: mean {s.metric} {a} {o.score_a:.4f}, {b} {o.score_b:.4f}, mean "
            f"difference {o.difference:+.4f} ({size})"
        )
    if s.estimate is not None:
        e, i = s.estimate, s.estimate.interval
        what = "mean difference" + (" delta0" if s.method == "hierarchical" else "")
        notes.append(
            f"posterior {what}: {e.mean:+.4f} (sd {e.sd:.4f}), {i.prob:.0%} HDI "
            f"[{i.low:+.4f}, {i.high:+.4f}]; HDI + ROPE decision: {symbol(e.decision)} "
            f"({RELATIONS[e.decision][2]})"
        )
    if "rho" in s.settings and s.method == "correlated_t":
        notes.append(f"correlation of the fold differences rho = {s.settings['rho']:g}")
    notes += [_test_line(t) for t in s.tests]
    if s.counting == "argmax":
        notes.append(
            "P: fraction of posterior draws in which the region holds the largest mass "
            "(argmax counting, as published)"
            + ("; P (next data set): posterior predictive probability" if s.predictive else "")
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


#: display columns of the F1 tables, in the order of Zhang et al.'s Tables 4-6
_F1_COLUMNS = (
    Column("label", "class"),
    Column("score_a", "A", "number"),
    Column("score_b", "B", "number"),
    Column("sign_p_value", "sign p", "number"),
    Column("mcnemar_p_value", "McNemar p", "number"),
    Column("bootstrap_p_value", "boot p", "number"),
    Column("mean", "mean", "signed"),
    Column("sd", "sd", "number"),
    Column("mcse", "MC err", "number", 4),
    Column("bf01_text", "BF01", "text"),
    Column("bf_rope_text", "BF(ROPE)", "text"),
    Column("p_below_0", "P(<0)", "percent"),
    Column("p_above_0", "P(>0)", "percent"),
    Column("p_rope", "ROPE", "percent"),
    Column("hdi", "HDI", "interval"),
    Column("decision", "decision", "relation"),
)


def _bayes_factor(value: Any, bound: str) -> str:
    """Format a Bayes factor for a table: ``13.7``, ``< 0.0012``, ``inf`` or ``–``."""
    if value is None or value != value:  # None or NaN
        return "–"
    if value == float("inf"):
        return "inf"
    return f"{bound + ' ' if bound else ''}{value:.3g}"


def _f1_table(s: F1Summary) -> ReportTable:
    records = tuple(r.to_record() for r in s.rows)
    keys = set().union(*(r.keys() for r in records)) if records else set()
    shown = {"hdi", "bf01_text", "bf_rope_text"}
    columns = tuple(c for c in _F1_COLUMNS if c.key in shown or c.key in keys)
    rows = tuple(
        {
            **r,
            "hdi": (r.get("interval_low"), r.get("interval_high")),
            "bf01_text": _bayes_factor(r.get("bf01"), r.get("bf01_bound", "")),
            "bf_rope_text": _bayes_factor(r.get("bf_rope"), r.get("bf_rope_bound", "")),
        }
        for r in records
    )
    direction = "" if s.higher_is_better else " (a cost: delta = B - A, positive = A better)"
    title = (
        f"{s.model} Bayesian comparison of {s.measure} ({_direction(s.higher_is_better)}): "
        f"{s.system_a} (A) vs {s.system_b} (B); delta = A - B{direction}, {rope_text(s.rope)}, "
        f"{s.hdi_prob:.0%} HDI"
    )
    notes = [_test_line(t) for t in s.across_classes]
    notes.append(
        "BF01: Savage–Dickey Bayes factor of delta = 0 (kernel densities, bandwidth "
        "sd x 50000^-1/5; '<' an upper bound where 0 is far in the tail); BF(ROPE): posterior "
        f"over prior odds of |delta| <= {s.rope:g}; both > 1 favour no practical difference"
    )
    notes.append(
        "decision (HDI + ROPE): "
        + ", ".join(f"{symbol(k)} {RELATIONS[k][2]}" for k in HDI_ROPE_RELATIONS)
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


def _power_table(s: PowerSummary) -> ReportTable:
    columns = [Column("size", "N")]
    by_size: dict[int, dict[str, Any]] = {n: {"size": n} for n in s.sizes}
    for m in s.models:
        columns += [Column(f"{m}", f"power {m}", "number"), Column(f"{m}_se", "+- se", "number")]
    for r in s.rows:
        by_size[int(r["size"])][r["model"]] = r["power"]
        by_size[int(r["size"])][f"{r['model']}_se"] = r["se"]
    title = (
        f"Power of the F1 models to reach {symbol(s.goal)} ({RELATIONS[s.goal][2]}) on "
        f"{s.measure}: {s.scenario}, true difference {s.true_delta:+.3f}, {rope_text(s.rope)}"
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


def _joint_notes(metric: str, j: Any) -> list[str]:
    """Return the notes of one metric's joint ranks: P(best), ranks, most probable orders."""
    by_rank = sorted(j.systems, key=lambda s: j.expected_rank[s])
    ranks = ", ".join(
        f"{s} {j.expected_rank[s]:.2f} [{j.rank_interval[s][0]}, {j.rank_interval[s][1]}]"
        for s in by_rank
    )
    orders = "; ".join(f"{o} ({p:.3f})" for o, p in j.top_orders)
    tied = "; ".join(f"{o} ({p:.3f})" for o, p in j.rope_orders)
    return [
        f"{metric}, {j.method} model, P(best): "
        + ", ".join(f"{s} {j.p_best[s]:.3f}" for s in by_rank),
        f"{metric}, expected rank [95% interval]: {ranks}",
        f"{metric}, most probable orders: {orders}",
        f"{metric}, most probable orders of the effects, neighbours within {rope_text(j.rope)} "
        f"tied: {tied}",
    ]


def _ranking_table(r: Any) -> ReportTable:
    """Szymański & Gorman's Table 2: pairs x metrics x (A better, equivalent, B better)."""
    columns = [Column("a", "A"), Column("b", "B")]
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for m in r.metrics:
        columns += [
            Column(f"{m}|a", f"{m} >", "probability"),
            Column(f"{m}|rope", f"{m} ≈", "probability"),
            Column(f"{m}|b", f"{m} <", "probability"),
            Column(f"{m}|rel", "", "relation"),
        ]
    for p in r.pairs:
        m = p.settings.get("ranking_metric", p.metric)
        row = rows.setdefault((p.system_a, p.system_b), {"a": p.system_a, "b": p.system_b})
        row.update(
            {
                f"{m}|a": p.p_a_better,
                f"{m}|rope": p.p_rope,
                f"{m}|b": p.p_b_better,
                f"{m}|rel": r.relations[m][(p.system_a, p.system_b)],
            }
        )
    ropes = r.settings.get("ropes", {})
    rule = (
        f"likelihood (most probable relation; ≳/≲ when within {r.margin:g} of the ROPE)"
        if r.rule == "likelihood"
        else f"threshold (probability >= {r.threshold:g}, else ?)"
    )
    title = (
        f"Ranking of {len(r.systems)} systems on {', '.join(r.metrics)}: every pair, "
        f"{r.settings.get('comparison_method', '')}; rule: {r.rule}"
    )
    notes = [f"relation rule: {rule}"]
    for m in r.metrics:
        order = r.orders[m]
        rope = ropes.get(m, ropes.get(m.split(" ")[0], r.settings.get("rope")))
        notes.append(
            f"{m} ({rope_text(rope)}): {order.line}" if rope is not None else f"{m}: {order.line}"
        )
        notes += [f"{m}: inconsistency: {x}" for x in order.inconsistencies]
        if m in r.joint:
            notes += _joint_notes(m, r.joint[m])
    notes.append("columns >, ≈, <: P(A better), P(practically equivalent), P(B better)")
    if r.settings.get("dropped"):
        notes.append(f"dropped as incomplete: {r.settings['dropped']}")
    return ReportTable(
        title=title,
        columns=tuple(columns),
        rows=tuple(rows.values()),
        notes=tuple(notes),
        signature=r.signature,
        records=tuple(r.to_frame().to_dict(orient="records")),
        data=r.to_dict(),
    )
