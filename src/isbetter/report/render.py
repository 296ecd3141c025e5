"""One renderer per format: text, Markdown, LaTeX, HTML, JSON and CSV.

Each takes a :class:`~isbetter.report.table.ReportTable` and returns a string;
nothing here knows which kind of result the table came from.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from collections.abc import Callable
from typing import Any

from isbetter.report.table import ReportTable, format_cell

__all__ = [
    "RENDERERS",
    "render_csv",
    "render_html",
    "render_json",
    "render_latex",
    "render_markdown",
    "render_text",
]


def _display(table: ReportTable, target: Any = "text") -> tuple[list[str], list[list[str]]]:
    header = [c.header for c in table.columns]
    body = [[format_cell(c, row.get(c.key), target) for c in table.columns] for row in table.rows]
    return header, body


def render_text(table: ReportTable) -> str:
    """Plain text: title, aligned columns, notes, signature."""
    header, body = _display(table)
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    aligns = [">" if c.numeric else "<" for c in table.columns]

    def line(cells: list[str]) -> str:
        return "  ".join(f"{v:{a}{w}}" for v, a, w in zip(cells, aligns, widths, strict=True))

    out = [table.title, line(header).rstrip()]
    out += [line(r).rstrip() for r in body]
    out += table.notes
    out.append(table.signature)
    return "\n".join(out) + "\n"


def _md_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|")


def render_markdown(table: ReportTable) -> str:
    """Return a Markdown (GitHub) table with a bold title, notes as a list and the signature."""
    header, body = _display(table)
    seps = [
        "---:" if c.numeric else (":---:" if c.kind == "relation" else "---") for c in table.columns
    ]
    out = [f"**{_md_escape(table.title)}**", ""]
    out.append("| " + " | ".join(_md_escape(h) for h in header) + " |")
    out.append("|" + "|".join(seps) + "|")
    out += ["| " + " | ".join(_md_escape(c) for c in r) + " |" for r in body]
    if table.notes:
        out += ["", *(f"* {_md_escape(n)}" for n in table.notes)]
    out += ["", f"`{table.signature}`"]
    return "\n".join(out) + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "≫": r"$\gg$",
    "≪": r"$\ll$",
    "≈": r"$\approx$",
    "≳": r"$\gtrsim$",
    "≲": r"$\lesssim$",
    "×": r"$\times$",
    "−": "-",
    "→": r"$\rightarrow$",
    "…": r"\ldots{}",
    "≤": r"$\le$",
    "≥": r"$\ge$",
    "±": r"$\pm$",
    "–": "--",
    "δ": r"$\delta$",
    "α": r"$\alpha$",
    "χ²": r"$\chi^2$",
    "Δ": r"$\Delta$",
    "<": r"$<$",
    ">": r"$>$",
}
_LATEX_RE = re.compile("|".join(re.escape(k) for k in _LATEX_SPECIAL))


def latex_escape(text: str) -> str:
    r"""Escape LaTeX's special characters (``_ & % $ # { } ~ ^ \``) and typeset symbols."""
    return _LATEX_RE.sub(lambda m: _LATEX_SPECIAL[m.group()], text)


def render_latex(table: ReportTable) -> str:
    """Return a booktabs ``table`` environment: caption, tabular, notes; the signature as a note."""
    header, body = _display(table, "latex")
    spec = "".join(
        "r" if c.numeric else ("c" if c.kind == "relation" else "l") for c in table.columns
    )
    out = [
        r"\begin{table}[ht]",
        r"\centering",
        r"\caption{" + latex_escape(table.title) + "}",
        r"\begin{tabular}{" + spec + "}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in header) + r" \\",
        r"\midrule",
    ]
    for row, col_cells in zip(table.rows, body, strict=True):
        del row
        cells = [
            cell if col.kind == "relation" else latex_escape(cell)
            for col, cell in zip(table.columns, col_cells, strict=True)
        ]
        out.append(" & ".join(cells) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    notes = [*table.notes, table.signature]
    out.append(
        r"\par\smallskip{\footnotesize " + r" \\ ".join(latex_escape(n) for n in notes) + "}"
    )
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


def render_html(table: ReportTable) -> str:
    """Return an HTML fragment: a ``<table>`` with caption, header, body and a notes footer."""
    header, body = _display(table, "html")
    esc = html.escape

    def cls(c: Any) -> str:
        return ' class="num"' if c.numeric else ""

    out = [
        '<table class="isbetter-report">',
        f"<caption>{esc(table.title)}</caption>",
        "<thead><tr>",
    ]
    out += [f"<th{cls(c)}>{esc(h)}</th>" for c, h in zip(table.columns, header, strict=True)]
    out += ["</tr></thead>", "<tbody>"]
    for r in body:
        cells = "".join(f"<td{cls(c)}>{esc(v)}</td>" for c, v in zip(table.columns, r, strict=True))
        out.append(f"<tr>{cells}</tr>")
    out.append("</tbody>")
    notes = [*table.notes, table.signature]
    out.append(
        f'<tfoot><tr><td colspan="{len(table.columns)}">'
        + "<br>".join(esc(n) for n in notes)
        + "</td></tr></tfoot>"
    )
    out.append("</table>")
    return "\n".join(out) + "\n"


def render_json(table: ReportTable) -> str:
    """Return the result's summary as one JSON object, with the title and notes added."""
    data = {**table.data, "title": table.title, "notes": list(table.notes)}
    data.setdefault("signature", table.signature)
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render_csv(table: ReportTable) -> str:
    """Return the flat records (one row per comparison, class or size), with a signature column."""
    records = [{**r, "signature": table.signature} for r in table.records]
    keys: list[str] = []
    for r in records:
        keys += [k for k in r if k not in keys]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=keys, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return buf.getvalue()


#: format name -> renderer
RENDERERS: dict[str, Callable[[ReportTable], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "latex": render_latex,
    "html": render_html,
    "json": render_json,
    "csv": render_csv,
}
