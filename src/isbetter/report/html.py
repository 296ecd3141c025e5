"""A self-contained HTML report of any result: one page to open, keep or send.

:func:`html_report` puts on one page what the command line prints and draws
for a result: what was compared (method, systems, metric and its direction,
ROPE), the report table of :func:`isbetter.report.render` (its HTML
fragment), the plots of :mod:`isbetter.plots` embedded as base64 PNG, the
settings, the MCMC diagnostics and the signature line. The page needs no
network: the style sheet is inline and the images are ``data:`` URIs.

Nothing here computes statistics; the plots are drawn by the same functions
as ``--plot`` draws with (:func:`default_plots`).
"""

from __future__ import annotations

import base64
import html
import importlib
import io
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from isbetter.core.errors import InputError
from isbetter.core.vocabulary import FORMAT_SUFFIXES, METHOD_NAMES, ranking_text, rope_text
from isbetter.core.writable import write_text
from isbetter.ranking.result import metric_of
from isbetter.report.build import as_summary, default_rope, to_table
from isbetter.report.render import render_html
from isbetter.report.table import Column, format_cell

__all__ = ["default_plots", "html_report"]

#: a plot: a matplotlib Figure, an image file, or a saver ``f(result, path)``
PlotItem = Any

_MIME = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}

_CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: #1b1b1b; max-width: 1200px; margin: 2em auto; padding: 0 1.2em; }
h1 { font-size: 1.35em; margin-bottom: .3em; }
h2 { font-size: 1.1em; margin-top: 1.8em; border-bottom: 1px solid #ddd; padding-bottom: .2em; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1.2em; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
dl.facts code { overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: .6em 0; font-size: .92em; }
caption { text-align: left; font-weight: 600; padding: .3em 0; }
th, td { padding: .25em .6em; border-bottom: 1px solid #e3e3e3; vertical-align: top; }
th { background: #f4f6f8; text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.isbetter-settings caption { white-space: nowrap; }
tfoot td { font-size: .9em; color: #444; border-bottom: none; padding-top: .6em; }
.scroll { overflow-x: auto; }
figure { margin: 1em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .9em; color: #444; }
code.signature { display: block; background: #f4f6f8; padding: .5em .7em;
                 overflow-wrap: anywhere; }
p.note { color: #555; }
"""


def html_report(
    result: Any,
    *,
    plots: str | Sequence[PlotItem] | None = "auto",
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
) -> str:
    """Return (and optionally write) a standalone HTML page reporting `result`.

    Parameters
    ----------
    result : ComparisonResult, F1Result, PowerResult, RankingResult or a summary of one
        What to report. A summary (e.g. read back from JSON) has no draws, so
        ``plots="auto"`` draws nothing for it.
    plots : "auto", sequence or None, default: "auto"
        ``"auto"``: the plots the command line draws for this kind of result
        (:func:`default_plots`); None or ``()``: no plots; or a sequence of
        matplotlib Figures, image files (``.png``, ``.svg``, ``.jpg``) or
        savers ``f(result, path)`` such as :func:`isbetter.plots.save_f1_plot`.
    path : str or os.PathLike, optional
        Also write the page here (a ``.html`` or ``.htm`` file).
    title : str, optional
        Heading of the page; default: the report table's title.

    Returns
    -------
    str
        The HTML document.

    Raises
    ------
    InputError
        If `path` is not an ``.html`` file in an existing folder, or `plots` is
        neither "auto", None nor a sequence of plots.

    Examples
    --------
    >>> import numpy as np
    >>> from isbetter import compare, from_arrays
    >>> x = np.random.default_rng(0).normal(0.85, 0.01, size=(1, 10))
    >>> y = x - 0.01 + np.random.default_rng(1).normal(0, 0.005, size=(1, 10))
    >>> scores = from_arrays(x, y, names=("svm", "nb"), runs=1)
    >>> res = compare(scores, system_a="svm", system_b="nb", rope=0.005)
    >>> page = html_report(res, plots=None)
    >>> page.startswith("<!DOCTYPE html>"), "svm vs nb" in page
    (True, True)
    """
    if path is not None:
        check_report_path(path, "path")
    table = to_table(result)
    summary = as_summary(result)
    images = [
        (*_embed(item, result), _caption(item, i))
        for i, item in enumerate(_plot_items(result, plots), start=1)
    ]
    heading = title or table.title
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="generator" content="isbetter">',
        f"<title>{html.escape(heading)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        f"<h1>{html.escape(heading)}</h1>",
        _facts(summary),
        "<h2>Results</h2>",
        '<div class="scroll">',
        render_html(table).strip(),
        "</div>",
        _figures(images, table.title),
        "<h2>MCMC diagnostics</h2>",
        _diagnostics(summary),
        "<h2>Settings</h2>",
        _settings(summary),
        "<h2>Signature</h2>",
        f'<code class="signature">{html.escape(table.signature)}</code>',
        '<p class="note">Paste the signature into a paper to say exactly how the numbers '
        "were made.</p>",
        "</body>",
        "</html>",
    ]
    page = "\n".join(p for p in parts if p) + "\n"
    if path is not None:  # whole or not at all: a failed write keeps the earlier page
        write_text(path, page, "path")
    return page


def check_report_path(path: str | os.PathLike[str], name: str) -> Path:
    """Check that `path` is an ``.html`` file that can be written; `name` is the flag."""
    from isbetter.core.writable import check_writable_file

    p = Path(path)
    if p.suffix.lower() not in FORMAT_SUFFIXES["html"]:
        suffix = p.suffix.lower()
        other = next((f for f, ends in FORMAT_SUFFIXES.items() if suffix in ends), None)
        instead = ""
        if other is not None and name.startswith("--"):  # the command line's way
            instead = (
                f"; for a {other} report, write the tables with --format {other} --output "
                f"{str(p)!r} (or --output {str(p)!r} alone: its extension sets the format)"
            )
        elif other is not None:
            instead = f"; for a {other} report, write isbetter.report.render(result, {other!r})"
        what = f"{name} writes" if name.startswith("--") else "the report is"
        raise InputError(
            f"{name} {str(p)!r}: {what} a whole HTML page (tables, plots, settings); give a "
            f"file name ending in .html{instead}."
        )
    return check_writable_file(p, name)


# ---------------------------------------------------------------- plots
#: result kind -> (module, saver) of the plot that ``--plot`` draws for it
_SAVERS = {
    "f1": ("isbetter.plots.f1", "save_f1_plot"),
    "power": ("isbetter.plots.power", "save_power_plot"),
    "ranking": ("isbetter.plots.ranking", "save_ranking_plot"),
    "comparison": ("isbetter.plots.hierarchical", "save_comparison_plot"),
}


def _kind(result: Any) -> str | None:
    """Which plot a result gets; None for a light form with no draws to plot."""
    if getattr(result, "kind", None) == "ranking":  # drawn from its relations: no draws needed
        return "ranking"
    if getattr(result, "prior_draws", None) is not None:
        return "f1"
    if hasattr(result, "table") and hasattr(result, "true_delta"):
        return "power"
    if getattr(result, "posterior", None) is not None:
        return "comparison"
    return None


def default_plots(result: Any) -> list[Callable[[Any, Path], Any]]:
    """Return the savers of the plots the command line draws for `result` (none without draws)."""
    kind = _kind(result)
    if kind is None:
        return []
    module, name = _SAVERS[kind]
    return [getattr(importlib.import_module(module), name)]


def _plot_items(result: Any, plots: Any) -> list[PlotItem]:
    if plots is None:
        return []
    if isinstance(plots, str):
        if plots != "auto":
            raise InputError(f"`plots` must be 'auto', None or a sequence of plots, got {plots!r}.")
        return list(default_plots(result))
    if not isinstance(plots, Sequence):
        raise InputError(
            "`plots` must be 'auto', None or a sequence of Figures, image files or savers, "
            f"got a {type(plots).__name__}."
        )
    return list(plots)


def _embed(item: PlotItem, result: Any) -> tuple[str, bytes]:
    """Return (mime type, bytes) of one plot."""
    if hasattr(item, "savefig"):  # a matplotlib Figure
        buf = io.BytesIO()
        item.savefig(buf, format="png", dpi=100)
        return "image/png", buf.getvalue()
    if isinstance(item, str | os.PathLike):
        p = Path(item)
        if p.suffix.lower() not in _MIME or not p.is_file():
            raise InputError(
                f"`plots`: {str(p)!r} is not an image file (.png, .svg, .jpg) that exists."
            )
        return _MIME[p.suffix.lower()], p.read_bytes()
    if callable(item):
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "plot.png"
            item(result, out)
            return "image/png", out.read_bytes()
    raise InputError(
        f"`plots`: cannot embed a {type(item).__name__}; give Figures, image files or savers."
    )


#: captions of the default plots, by saver name
_CAPTIONS = {
    "save_f1_plot": "Posterior density of δ with its HDI and the ROPE (left); prior and "
    "posterior densities near 0, whose ratio at 0 is the Savage–Dickey BF01 (right).",
    "save_power_plot": "Power against test-set size, one line per model, ±1 standard error.",
    "save_ranking_plot": "Hasse diagram of the partial order (left) and the pairwise "
    "probabilities (right), one row per metric; below each, for ranks from one model of all "
    "the systems (Plackett–Luce, joint), the probability of each rank position (each "
    "system's 95% rank interval outlined) and P(best) with the 95% interval the plot names "
    "(for Plackett–Luce also P(wins next data set) = E[w], diamonds); "
    "then, for a ranking over several data "
    "sets, the critical-difference diagram of the mean ranks (Demšar 2006): bars join systems "
    "whose mean ranks differ by less than Nemenyi's critical difference at α 0.05.",
    "save_comparison_plot": "Posterior of the difference with the ROPE shaded, or, for "
    "argmax-counted posteriors, the per-draw region masses in the triangle.",
}


def _caption(item: PlotItem, i: int) -> str:
    return f"Figure {i}. " + _CAPTIONS.get(getattr(item, "__name__", ""), "")


def _figures(images: list[tuple[str, bytes, str]], what: str) -> str:
    if not images:
        return ""
    out = ["<h2>Plots</h2>"]
    for i, (mime, data, caption) in enumerate(images, start=1):
        alt = html.escape(f"plot {i} of {len(images)}: {what}", quote=True)
        src = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        out.append(
            f'<figure><img src="{src}" alt="{alt}">'
            f"<figcaption>{html.escape(caption.strip())}</figcaption></figure>"
        )
    return "\n".join(out)


# ---------------------------------------------------------------- facts, settings, diagnostics
def _direction(higher: bool) -> str:
    return "higher is better" if higher else "lower is better"


def _measure_direction(name: str) -> str:
    from isbetter.f1.measures import get_measure

    try:
        return _direction(get_measure(name).higher_is_better)
    except InputError:
        return "see the table"


def _rope(rope: float) -> str:
    """Name the ROPE as every report does: ``±0.01``, or none."""
    return rope_text(rope).removeprefix("ROPE ") if rope else "none (zero width)"


def _facts(s: Any) -> str:
    """Describe what was compared: method, systems, metric and direction, ROPE."""
    rows: list[tuple[str, str]] = []
    if getattr(s, "kind", None) == "ranking":
        directions = {metric_of(p): p for p in s.pairs}
        ropes = s.settings.get("ropes", {})
        how = ranking_text(s.pair_method())
        rows.append(("method", f"ranking: {how}; rule: {s.rule}"))
        about = s.about()
        rows.append(("pairs, order and chain", f"about {about['pairs']}"))
        if "joint" in about:
            rows.append(("P(best), ranks, most probable orders", f"about {about['joint']}"))
        rows.append(("systems", ", ".join(s.systems)))
        for m in s.metrics:
            pair = directions.get(m)
            way = _direction(pair.higher_is_better) if pair is not None else ""
            rope = ropes.get(m, ropes.get(m.split(" ")[0], s.settings.get("rope")))
            said = default_rope(s.settings, metric=m)
            rope_said = f"{rope_text(rope)}{said}" if rope is not None else ""
            rows.append((f"metric {m}", f"{way}; {rope_said}" if rope_said else way))
    elif hasattr(s, "true_delta"):  # power
        rows += [
            ("method", "power of the F1 models by simulation"),
            ("metric", f"{s.metric} ({_measure_direction(s.metric)})"),
            ("scenario", f"{s.scenario}; true difference {s.true_delta:+.4g} (positive: A better)"),
            ("ROPE", _rope(s.rope)),
        ]
    else:
        metric = s.metric
        method = getattr(s, "method", None)
        method = (
            METHOD_NAMES.get(method, method) if method else f"{getattr(s, 'model', '')} F1 model"
        )
        rows += [
            ("method", str(method)),
            ("systems", f"A = {s.system_a}, B = {s.system_b}"),
            ("metric", f"{metric} ({_direction(s.higher_is_better)})"),
            ("ROPE", _rope(s.rope) + default_rope(s.settings)),
        ]
    items = "".join(f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>" for k, v in rows)
    record = (getattr(s, "settings", None) or {}).get("input")
    if record:  # what the result was computed from: a page meant to be kept says so
        items += (
            f"<dt>input</dt><dd>{html.escape(str(record['source']))}, {record['rows']} rows, "
            f"SHA-256 <code>{html.escape(str(record['sha256']))}</code></dd>"
        )
    return f'<dl class="facts">{items}</dl>'


def _flat(settings: dict[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for key, value in settings.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out += _flat(value, f"{name}.")
        else:
            out.append((name, str(value)))
    return out


def _kv_table(rows: list[tuple[str, str]], caption: str) -> str:
    body = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows)
    head = f'<table class="isbetter-settings"><caption>{html.escape(caption)}</caption>'
    return f"{head}{body}</table>"


def _settings(s: Any) -> str:
    settings = getattr(s, "settings", None) or {}
    if not settings:
        return '<p class="note">No settings recorded.</p>'
    return _kv_table(_flat(settings), "settings and versions that reproduce the result")


#: the columns of the diagnostics table: R-hat to 3 decimals, sample sizes as integers
_DIAGNOSTICS = (
    Column("r_hat_max", "R-hat max", "number", 3),
    Column("ess_bulk_min", "ESS bulk min", "number", 0),
    Column("ess_tail_min", "ESS tail min", "number", 0),
    Column("divergences", "divergences", "number", 0),
    Column("chains", "chains", "number", 0),
    Column("draws", "draws per chain", "number", 0),
    Column("backend", "sampler"),
    Column("converged", "converged"),
)


def _diagnostic(d: Any, key: str) -> Any:
    value = getattr(d, key)
    return ("yes" if value else "no") if key == "converged" else value


def _diagnostics(s: Any) -> str:
    diags = []
    if getattr(s, "kind", None) == "ranking":
        diags = [
            (f"{p.system_a} vs {p.system_b}", p.diagnostics)
            for p in s.pairs
            if p.diagnostics is not None
        ]
    elif getattr(s, "diagnostics", None) is not None:
        diags = [("fit", s.diagnostics)]
    if not diags:
        return (
            '<p class="note">No MCMC: the posterior is exact (closed form or independent '
            "draws), so there is nothing to diagnose.</p>"
        )
    head = "".join(
        f"<th>{html.escape(c.header)}</th>" for c in (Column("fit", "fit"), *_DIAGNOSTICS)
    )
    num = ' class="num"'
    body = "".join(
        f"<tr><th>{html.escape(name)}</th>"
        + "".join(
            f"<td{num if c.numeric else ''}>"
            f"{html.escape(format_cell(c, _diagnostic(d, c.key), 'html'))}</td>"
            for c in _DIAGNOSTICS
        )
        + "</tr>"
        for name, d in diags
    )
    variables = ", ".join(diags[0][1].variables)
    caption = f"R-hat, effective sample sizes and divergences of {variables}"
    poor = [f"{n}: {d.line()}" for n, d in diags if not d.converged]
    return (
        f'<div class="scroll"><table class="isbetter-diagnostics"><caption>'
        f"{html.escape(caption)}</caption><thead><tr>{head}</tr></thead><tbody>{body}"
        "</tbody></table></div>\n"
        + "".join(f'<p class="note">{html.escape(line)}</p>' for line in poor)
    )
