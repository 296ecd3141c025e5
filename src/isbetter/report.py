"""Render results as text, markdown or JSON, with a signature to paste into papers.

Nothing here computes statistics: results carry raw numbers, this module only
formats them. Every report ends with a signature line such as
``method:correlated_t|rope:0.01|seed:1|isbetter:0.1.0|pymc:5.28.5`` that says
how the numbers were made.
"""

from __future__ import annotations

import json
from typing import Any

from isbetter.decision import ComparisonResult

__all__ = [
    "f1_to_json",
    "f1_to_markdown",
    "f1_to_text",
    "power_to_json",
    "power_to_markdown",
    "power_to_text",
    "signature",
    "to_dict",
    "to_json",
    "to_markdown",
    "to_text",
]


def signature(settings: dict[str, Any]) -> str:
    """Return the one-line reproducibility signature of a settings record.

    Examples
    --------
    >>> signature({"method": "sign", "rope": 0.01, "seed": 3, "draws": 50000,
    ...            "versions": {"isbetter": "0.1.0", "pymc": "5.28.5"}})
    'method:sign|rope:0.01|draws:50000|seed:3|isbetter:0.1.0|pymc:5.28.5'
    """
    parts = [f"method:{settings.get('method')}"]
    if "rope" in settings:
        parts.append(f"rope:{settings['rope']:g}")
    if "draws" in settings:
        draws = settings["draws"]
        chains = settings.get("chains")
        parts.append(f"draws:{draws}x{chains}" if chains else f"draws:{draws}")
    parts.append(f"seed:{settings.get('seed')}")
    versions = settings.get("versions", {})
    for name in ("isbetter", "pymc"):
        if name in versions:
            parts.append(f"{name}:{versions[name]}")
    return "|".join(parts)


def to_dict(result: ComparisonResult) -> dict[str, Any]:
    """Return the JSON-safe dictionary of a result, with seed and signature on top."""
    out = result.to_dict()
    out["seed"] = result.settings.get("seed")
    out["signature"] = signature({**result.settings, "rope": result.rope})
    return out


def to_json(result: ComparisonResult, *, indent: int | None = 2) -> str:
    """Return the result as one JSON object."""
    return json.dumps(to_dict(result), indent=indent, default=_json_default)


def _json_default(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _rows(result: ComparisonResult) -> list[tuple[str, str]]:
    a, b = result.system_a, result.system_b
    return [
        (f"P({a} better)", f"{result.p_a_better:.4f}"),
        (f"P(practically equivalent, |d| <= {result.rope:g})", f"{result.p_rope:.4f}"),
        (f"P({b} better)", f"{result.p_b_better:.4f}"),
    ]


def to_text(result: ComparisonResult) -> str:
    """Return a small plain-text table of the result."""
    rows = _rows(result)
    width = max(len(k) for k, _ in rows)
    title = f"{result.method}: {result.system_a} vs {result.system_b}"
    lines = [f"{title} (counting: {result.counting})"]
    lines += [f"  {k:<{width}}  {v}" for k, v in rows]
    lines += [f"  {line}" for line in _mcmc_lines(result)]
    lines.append(signature({**result.settings, "rope": result.rope}))
    return "\n".join(lines)


def _mcmc_lines(result: ComparisonResult) -> list[str]:
    """Predictive probabilities and MCMC diagnostics of results that have them."""
    out = []
    predictive = getattr(result, "predictive", None)
    if predictive is not None:
        out.append(
            f"predictive P(next data set: {result.system_a} better / equivalent / "
            f"{result.system_b} better) = {predictive.p_a_better:.4f} / "
            f"{predictive.p_rope:.4f} / {predictive.p_b_better:.4f}"
        )
    diagnostics = getattr(result, "diagnostics", None)
    if diagnostics is not None and hasattr(diagnostics, "r_hat_max"):
        flag = "" if diagnostics.converged else " -- POOR CONVERGENCE, see the warning"
        out.append(
            f"MCMC: R-hat max {diagnostics.r_hat_max:.3f}, ESS bulk min "
            f"{diagnostics.ess_bulk_min:.0f}, ESS tail min {diagnostics.ess_tail_min:.0f}, "
            f"divergences {diagnostics.divergences}{flag}"
        )
    return out


def to_markdown(result: ComparisonResult) -> str:
    """Return the result as a markdown table followed by the signature."""
    lines = ["| quantity | probability |", "|---|---:|"]
    lines += [f"| {k} | {v} |" for k, v in _rows(result)]
    mcmc = _mcmc_lines(result)
    lines += ["", *mcmc] if mcmc else []
    lines += ["", "`" + signature({**result.settings, "rope": result.rope}) + "`"]
    return "\n".join(lines)


# ------------------------------------------------------------ F1 comparison (Zhang et al. 2016)
# These take an isbetter.f1_compare.F1ComparisonResult / isbetter.power.PowerResult; typed
# as Any so that this module does not import them.

#: (column, header, format) of the F1 tables, in the order of Zhang et al.'s Tables 4-6
_F1_COLUMNS = (
    ("class", "class", "{}"),
    ("score_a", "A", "{:.3f}"),
    ("score_b", "B", "{:.3f}"),
    ("sign_p", "sign p", "{:.3f}"),
    ("mcnemar_p", "McNemar p", "{:.3f}"),
    ("bootstrap_p", "boot p", "{:.3f}"),
    ("mean", "mean", "{:+.3f}"),
    ("sd", "sd", "{:.3f}"),
    ("mcse", "MC err", "{:.4f}"),
    ("bf01", "BF01", "{:.3f}"),
    ("p_below_0", "P(<0)", "{:.1%}"),
    ("p_above_0", "P(>0)", "{:.1%}"),
    ("pct_rope", "ROPE %", "{:.1f}"),
    ("hdi", "HDI", "[{:+.3f}, {:+.3f}]"),
    ("decision", "decision", "{}"),
)


def _f1_cells(result: Any) -> tuple[list[str], list[list[str]]]:
    header, body = [], []
    cols = [c for c in _F1_COLUMNS if c[0] == "hdi" or c[0] in result.table.columns]
    header = [h for _, h, _ in cols]
    for row in result.to_rows():
        cells = []
        for key, _, fmt in cols:
            if key == "hdi":
                cells.append(fmt.format(row["hdi_low"], row["hdi_high"]))
            elif row.get(key) is None:
                cells.append("inf" if key == "bf01" else "nan")
            else:
                cells.append(fmt.format(row[key]))
        body.append(cells)
    return header, body


def _f1_title(result: Any) -> str:
    return (
        f"{result.model} Bayesian comparison of {result.measure}: {result.system_a} (A) vs "
        f"{result.system_b} (B); delta = A - B"
        + ("" if result.higher_is_better else " in 'better' units (B - A for a cost)")
        + f", ROPE +-{result.rope:g}, {result.hdi_prob:.0%} HDI"
    )


def _f1_macro(result: Any) -> list[str]:
    macro = getattr(result, "macro_tests", {}) or {}
    if not macro:
        return []
    return [
        "across classes: T-test p = {:.3f}, S-test p = {:.3f}".format(
            macro.get("t_test_p", float("nan")), macro.get("s_test_p", float("nan"))
        )
    ]


def f1_to_text(result: Any) -> str:
    """Render an F1 comparison as a plain-text per-class table with the signature line."""
    header, body = _f1_cells(result)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    lines = [_f1_title(result), fmt.format(*header)]
    lines += [fmt.format(*r) for r in body]
    lines += _f1_macro(result)
    lines.append(signature({**result.settings, "rope": result.rope}))
    return "\n".join(lines)


def f1_to_markdown(result: Any) -> str:
    """Render an F1 comparison as a markdown table followed by the signature."""
    header, body = _f1_cells(result)
    lines = [
        f"**{_f1_title(result)}**",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(header) - 2) + [":---:"]) + "|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    macro = _f1_macro(result)
    if macro:
        lines += ["", *macro]
    lines += ["", "`" + signature({**result.settings, "rope": result.rope}) + "`"]
    return "\n".join(lines)


def f1_to_json(result: Any, *, indent: int | None = 2) -> str:
    """Render an F1 comparison as a JSON list of per-class rows.

    Each row has ``class``, ``mean``, ``sd``, ``mcse``, ``hdi_low``, ``hdi_high``,
    ``pct_rope`` (percent), ``p_below_0``, ``p_above_0``, ``p_a_better``, ``p_rope``,
    ``p_b_better``, ``bf01`` (null when infinite: a point-mass posterior), ``decision``,
    the baseline p-values (``sign_p``, ``ptest_p``, ``mcnemar_p``, ``mcnemar_chi2_p``,
    ``bootstrap_p``, ``randomization_p``), and the run's ``system_a``, ``system_b``,
    ``measure``, ``rope``, ``seed`` and ``signature``.
    """
    sig = signature({**result.settings, "rope": result.rope})
    common = {
        "system_a": result.system_a,
        "system_b": result.system_b,
        "measure": result.measure,
        "model": result.model,
        "rope": result.rope,
        "seed": result.settings.get("seed"),
        "signature": sig,
    }
    rows = [{**row, **common} for row in result.to_rows()]
    return json.dumps(rows, indent=indent, default=_json_default, ensure_ascii=False)


# ------------------------------------------------------------------------- power analysis
def _power_lines(result: Any) -> tuple[list[str], list[list[str]]]:
    models = list(result.models)
    header = ["N", *[f"power {m}" for m in models]]
    body = []
    for n in result.sizes:
        cells = [str(n)]
        for m in models:
            r = result.table[(result.table["size"] == n) & (result.table["model"] == m)].iloc[0]
            cells.append(f"{r['power']:.3f} +- {r['se']:.3f}")
        body.append(cells)
    return header, body


def power_to_text(result: Any) -> str:
    """Render a power analysis as a plain-text table (power +- its standard error)."""
    header, body = _power_lines(result)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    fmt = "  ".join(f"{{:>{w}}}" for w in widths)
    lines = [
        f"power of the goal {result.goal!r} ({result.replicates} simulated test sets per N)",
        fmt.format(*header),
        *[fmt.format(*r) for r in body],
        signature({**result.settings, "rope": result.rope}),
    ]
    return "\n".join(lines)


def power_to_markdown(result: Any) -> str:
    """Render a power analysis as a markdown table followed by the signature."""
    header, body = _power_lines(result)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---:"] * len(header)) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in body]
    lines += ["", "`" + signature({**result.settings, "rope": result.rope}) + "`"]
    return "\n".join(lines)


def power_to_json(result: Any, *, indent: int | None = 2) -> str:
    """Render a power analysis as a JSON list of rows (size, model, power, se, replicates)."""
    sig = signature({**result.settings, "rope": result.rope})
    rows = [
        {
            **{k: (v.item() if hasattr(v, "item") else v) for k, v in rec.items()},
            "goal": result.goal,
            "seed": result.settings.get("seed"),
            "signature": sig,
        }
        for rec in result.table.to_dict(orient="records")
    ]
    return json.dumps(rows, indent=indent, default=_json_default, ensure_ascii=False)
