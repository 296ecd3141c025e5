"""Reports: every result as text, Markdown, LaTeX, HTML, JSON or CSV.

One pipeline: a result (or its summary) becomes one intermediate
:class:`~isbetter.report.table.ReportTable` (:func:`to_table`), and one renderer
per format turns that into a string (:func:`render`). Every report names the
method, the systems, the metric and its direction and the ROPE, and ends with a
signature line such as
``method:hierarchical|rope:0.01|draws:2000x4|seed:1|isbetter:0.1.0|pymc:5.28.5``
to paste into a paper. :func:`html_report` puts the table, the plots, the
settings and the diagnostics on one self-contained HTML page. Nothing here
computes statistics.
"""

from __future__ import annotations

from typing import Any

from isbetter.core.errors import InputError, InputTypeError, IsbetterError
from isbetter.core.provenance import signature
from isbetter.core.validate import check_choice
from isbetter.core.vocabulary import FORMATS
from isbetter.ranking.result import RankingResult
from isbetter.report.build import as_summary, to_table
from isbetter.report.html import html_report
from isbetter.report.render import RENDERERS
from isbetter.report.table import Column, ReportTable
from isbetter.results import ComparisonResult, F1Result, PowerResult

__all__ = [
    "FORMATS",
    "Column",
    "ReportTable",
    "as_summary",
    "html_report",
    "render",
    "signature",
    "summary_from_dict",
    "to_table",
]


def render(result: Any, fmt: str = "text") -> str:
    """Render any result of isbetter (or its summary) in format `fmt`.

    Parameters
    ----------
    result : ComparisonResult, F1Result, PowerResult or a summary of one
        What to report.
    fmt : {"text", "markdown", "latex", "html", "json", "csv"}, default: "text"
        The format.

    Returns
    -------
    str
        The report, ending with a newline.
    """
    fmt = check_choice(fmt, "format", FORMATS)
    return RENDERERS[fmt](to_table(result))


_KINDS: dict[str, Any] = {
    cls.kind: cls for cls in (ComparisonResult, F1Result, PowerResult, RankingResult)
}


def summary_from_dict(data: dict[str, Any]) -> Any:
    """Rebuild any summary from its ``to_dict()`` data (its JSON report), dispatching on ``kind``.

    ``kind == "ranking"`` gives a :class:`~isbetter.ranking.result.RankingResult` (a ranking
    holds summaries only, so it is its own summary).
    """
    if not isinstance(data, dict):
        raise InputTypeError(
            "`data` must be the dict of a result's to_dict() (its JSON report, read with "
            f"json.load), got {type(data).__name__}."
        )
    kind = data.get("kind")
    if kind not in _KINDS:
        found = f"'kind' is {kind!r}" if "kind" in data else "it has no 'kind'"
        raise InputError(
            f"`data` is not the dict of a result's to_dict(): {found}, expected one of "
            f"{', '.join(map(repr, _KINDS))}; give the whole JSON report of a result "
            "(e.g. `isbetter cv ... --format json`)."
        )
    try:
        return _KINDS[kind].from_dict(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        if isinstance(exc, IsbetterError):
            raise
        what = f"no field {exc.args[0]!r}" if isinstance(exc, KeyError) else str(exc)
        raise InputError(
            f"`data` is not a whole {kind} summary ({what}); give the dict of its to_dict() "
            "(its JSON report) unchanged."
        ) from exc
