r"""A report table as LaTeX: a booktabs table that fits a column and compiles as it is.

The output's first line names the packages it needs
(``% requires: \usepackage{booktabs,amssymb}``); a plain ``article`` with exactly
those compiles it, in the default (OT1) font encoding too: every symbol outside
ASCII letters and digits is set in math (``$\le$``, ``$\pm$``, ``$|$``, ``$<$``) or
escaped, and the signature is set in typewriter type, where ``|`` prints as itself,
with a line break allowed after each ``|``.

Width: every table fits :data:`COLUMN_WIDTH_PT`, the ``\columnwidth`` of a default
one-column ``article`` (345 pt). Cells are set in ``\small`` with 4 pt between
columns and none at the edges. Their widths are estimated from the widths of the
characters of that font (:data:`CHAR_PT`, measured with pdflatex); a table wider
than the column is set as panels, one under the other, each repeating the leading
label columns (the region, the class, the pair) and never splitting a group of
columns (a metric's ``>``, ``≈``, ``<``); a label column still too wide is wrapped.
A header wider than its column's cells breaks onto two lines. The notes under the
table are left-aligned paragraphs in ``\footnotesize``.
"""

from __future__ import annotations

import re

import numpy as np

from isbetter.report.table import Column, ReportTable, display_cells

__all__ = ["COLUMN_WIDTH_PT", "PACKAGES", "latex_escape", "render_latex", "text_width"]

#: the packages the output needs: booktabs (rules), amssymb (``\gtrsim``, ``\lesssim``)
PACKAGES = ("booktabs", "amssymb")
#: ``\columnwidth`` of a default ``article`` (10 pt, one column), in TeX points
COLUMN_WIDTH_PT = 345.0
_COLSEP_PT = 4.0  # \tabcolsep: 8 pt between two columns
_SLACK = 0.97  # the estimates ignore kerning: keep 3% in hand
_MIN_WRAP_PT = 60.0  # narrowest a wrapped label column gets
_HEADER_SLACK_PT = 8.0  # a header at most this much wider than its cells stays on one line

#: width in pt of each printable ASCII character in ``\small`` (cmr9 at 9 pt; ``<``, ``>``,
#: ``|`` as set in math), measured with pdflatex's ``\settowidth``
CHAR_PT: dict[str, float] = {
    ch: width
    for width, chars in {
        2.57: "!',.:;[]`il|",
        2.83: "fj",
        3.08: " -",
        3.34: "I_",
        3.6: "()t",
        3.62: "r",
        3.65: "s",
        4.11: "cez",
        4.37: "?",
        4.44: "δ",
        4.62: '"$*/0123456789\\^ago{}~–',
        4.75: "J",
        4.88: "kqvxy",
        5.14: "Sbdhnpu",
        5.65: "Z",
        5.78: "L",
        6.04: "F",
        6.29: "EP",
        6.55: "B",
        6.68: "CTw",
        6.81: "R",
        6.94: "AHNUVXY",
        7.07: "D",
        7.2: "&+<=>@KOQ≈≳≲≤≥±×−",
        7.26: "G",
        7.71: "#%m",
        8.48: "M",
        9.25: "≫≪→",
        9.51: "W",
        12.33: "…",
    }.items()
    for ch in chars
}
_OTHER_PT = 9.51  # any other character: as wide as the widest letter


# a hyphen that is a minus sign: before a number, not inside a word or after ")"
_MINUS_RE = re.compile(r"(?<![\w)])-(?=\.?\d)")


def text_width(text: str) -> float:
    r"""Estimated width in pt of `text` (plain, before escaping) set in ``\small``."""
    return sum(CHAR_PT.get(ch, _OTHER_PT) for ch in _MINUS_RE.sub("−", text))


_SPECIAL = {
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
    "−": "$-$",
    "→": r"$\rightarrow$",
    "…": r"\ldots{}",
    "<=": r"$\le$",
    ">=": r"$\ge$",
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
    "|": r"$|$",
}
# longest first, so that "<=" is one symbol and not "<" then "="
_SPECIAL_RE = re.compile("|".join(re.escape(k) for k in sorted(_SPECIAL, key=len, reverse=True)))


def latex_escape(text: str) -> str:
    r"""Escape LaTeX's specials (``_ & % $ # { } ~ ^ \``) and typeset symbols.

    ``<=`` is set as ``$\le$``, a minus sign before a number as ``$-$``, ``|`` as ``$|$``.
    """
    return _SPECIAL_RE.sub(lambda m: _SPECIAL[m.group()], _MINUS_RE.sub("−", text))


def _align(column: Column) -> str:
    return "r" if column.numeric else ("c" if column.kind == "relation" else "l")


def _header_lines(label: str, cells_width: float) -> list[str]:
    """Set a header on one line, or on two (at the most even space) if much wider than its cells."""
    words = label.split(" ")
    if len(words) < 2 or text_width(label) <= cells_width + _HEADER_SLACK_PT:
        return [label]
    splits = [[" ".join(words[:i]), " ".join(words[i:])] for i in range(1, len(words))]
    return min(splits, key=lambda lines: max(text_width(line) for line in lines))


class _Layout:
    """Widths, header lines and panels of one table."""

    def __init__(self, table: ReportTable) -> None:
        cols = table.columns
        plain = display_cells(table, "text")
        self.headers = [
            _header_lines(c.short or c.header, max((text_width(r[i]) for r in plain), default=0))
            for i, c in enumerate(cols)
        ]
        self.widths = [
            max([text_width(r[i]) for r in plain] + [text_width(h) for h in self.headers[i]])
            for i in range(len(cols))
        ]
        n_keys = 0
        while n_keys < len(cols) - 1 and cols[n_keys].kind == "text":
            n_keys += 1
        self.keys = list(range(n_keys))
        self.units: list[list[int]] = []  # consecutive columns of one group stay together
        for i in range(n_keys, len(cols)):
            if self.units and cols[i].group and cols[self.units[-1][-1]].group == cols[i].group:
                self.units[-1].append(i)
            else:
                self.units.append([i])
        self.group_width = {
            tuple(u): text_width(cols[u[0]].group) for u in self.units if cols[u[0]].group
        }
        self.wrap: dict[int, float] = {}

    def width(self, columns: list[int]) -> float:
        """Estimated width of a tabular of these columns (no space at its edges)."""
        total = sum(self.wrap.get(i, self.widths[i]) for i in columns)
        return total + 2 * _COLSEP_PT * (len(columns) - 1)

    def _unit_width(self, unit: list[int]) -> float:
        return max(self.width(unit), self.group_width.get(tuple(unit), 0.0))

    def panels(self, budget: float) -> list[list[int]]:
        """Split the columns into as few panels as fit `budget`, as even in width as can be.

        Label columns too wide to leave room for the widest group are wrapped first.
        """
        sep = 2 * _COLSEP_PT
        widest_unit = max(self._unit_width(u) for u in self.units)
        if self.keys and self.width(self.keys) + sep + widest_unit > budget:
            room = budget - widest_unit - sep * len(self.keys)
            natural = sum(self.widths[i] for i in self.keys)
            for i in self.keys:
                self.wrap[i] = max(_MIN_WRAP_PT, room * self.widths[i] / natural)
        lead = self.width(self.keys) if self.keys else -sep
        steps = np.cumsum([0.0] + [self._unit_width(u) + sep for u in self.units])

        def cost(i: int, j: int) -> float:  # width of the panel of units i .. j-1
            return lead + float(steps[j] - steps[i])

        m = len(self.units)
        n, start = 1, 0  # fewest panels: fill each as far as it goes
        for j in range(1, m + 1):
            if j - 1 > start and cost(start, j) > budget:
                n, start = n + 1, j - 1
        # then the split into n panels whose widest panel is narrowest (linear partition)
        best = {(0, 0): (0.0, 0)}  # (panels, units) -> (widest panel, where the last starts)
        for k in range(1, n + 1):
            for j in range(k, m + 1):
                best[k, j] = min(
                    (max(best[k - 1, i][0], cost(i, j)), i)
                    for i in range(k - 1, j)
                    if (k - 1, i) in best
                )
        cuts, j = [], m
        for k in range(n, 0, -1):
            i = best[k, j][1]
            cuts.append((i, j))
            j = i
        return [self.keys + [c for u in self.units[i:j] for c in u] for i, j in reversed(cuts)]


def _header_cell(lines: list[str], align: str) -> str:
    if len(lines) == 1:
        return latex_escape(lines[0])
    inner = r" \\ ".join(latex_escape(line) for line in lines)
    return rf"\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}{inner}\end{{tabular}}"


def _tabular(
    table: ReportTable, layout: _Layout, columns: list[int], body: list[list[str]]
) -> list[str]:
    cols = table.columns
    spec = "".join(_align(cols[i]) for i in columns)
    out = [rf"\begin{{tabular}}{{@{{}}{spec}@{{}}}}", r"\toprule"]
    groups: list[tuple[str, int, int]] = []  # (group, first, last) positions in this panel
    for pos, i in enumerate(columns):
        g = cols[i].group
        if g and groups and groups[-1][0] == g and groups[-1][2] == pos - 1:
            groups[-1] = (g, groups[-1][1], pos)
        elif g:
            groups.append((g, pos, pos))
    if groups:
        cells, pos = [], 0
        for g, first, last in groups:
            cells += [""] * (first - pos)
            cells.append(rf"\multicolumn{{{last - first + 1}}}{{c}}{{{latex_escape(g)}}}")
            pos = last + 1
        cells += [""] * (len(columns) - pos)
        out.append(" & ".join(cells) + r" \\")
        out.append(" ".join(rf"\cmidrule(lr){{{f + 1}-{la + 1}}}" for _, f, la in groups))
    out.append(
        " & ".join(_header_cell(layout.headers[i], _align(cols[i])) for i in columns) + r" \\"
    )
    out.append(r"\midrule")
    for cells in body:
        row = []
        for i in columns:
            cell = cells[i] if cols[i].kind == "relation" else latex_escape(cells[i])
            if i in layout.wrap:
                cell = rf"\parbox[t]{{{layout.wrap[i]:.0f}pt}}{{\raggedright {cell}}}"
            row.append(cell)
        out.append(" & ".join(row) + r" \\")
    out += [r"\bottomrule", r"\end{tabular}"]
    return out


def _signature(signature: str) -> str:
    """Set the signature in typewriter type, breakable after each ``|``."""
    return r"\texttt{" + "|\\allowbreak ".join(latex_escape(p) for p in signature.split("|")) + "}"


def render_latex(table: ReportTable) -> str:
    r"""Return a ``table`` float: caption, booktabs tabular(s), notes and signature.

    The first line states the packages needed (:data:`PACKAGES`); the table fits
    :data:`COLUMN_WIDTH_PT` (see the module's description).
    """
    layout = _Layout(table)
    body = display_cells(table, "latex")
    out = [
        rf"% requires: \usepackage{{{','.join(PACKAGES)}}}",
        r"\begin{table}[ht]",
        r"\centering",
        r"\caption{" + latex_escape(table.title) + "}",
        r"\medskip",  # article's captions expect the table above them: room below this one
        r"\small",
        rf"\setlength{{\tabcolsep}}{{{_COLSEP_PT:g}pt}}",
    ]
    for n, columns in enumerate(layout.panels(_SLACK * COLUMN_WIDTH_PT)):
        if n:
            out.append(r"\par\medskip")
        out += _tabular(table, layout, columns, body)
    notes = [latex_escape(n) for n in table.notes] + [_signature(table.signature)]
    out.append(r"\par\smallskip")
    out.append(r"{\footnotesize\raggedright")
    out += [note + r"\par" for note in notes]
    out[-1] += "}"
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"
