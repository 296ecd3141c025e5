"""Build the notebooks in this folder from their sources in ``src/`` (no outputs).

Each source is a Python file in the "percent" format: a line ``# %%`` starts a
code cell, ``# %% [markdown]`` a Markdown cell (its lines start with ``# ``), and
``# %% tags=results`` a code cell tagged ``results`` (the cell whose printed JSON
``tests/test_notebooks.py`` checks). Run from anywhere::

    python notebooks/build.py          # rewrite notebooks/*.ipynb
    python notebooks/build.py --check  # exit 1 if a notebook differs from its source

The notebooks are committed without outputs; execute them with Jupyter, or with
``ISBETTER_NOTEBOOK_QUICK=1`` for the small settings CI uses.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "src"


def _cell(kind: str, tags: list[str], lines: list[str]) -> nbformat.NotebookNode:
    while lines and not lines[-1].strip():
        lines.pop()
    while lines and not lines[0].strip():
        lines.pop(0)
    if kind == "markdown":
        text = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in lines)
        return nbformat.v4.new_markdown_cell(text)
    cell = nbformat.v4.new_code_cell("\n".join(lines))
    if tags:
        cell.metadata["tags"] = tags
    return cell


def notebook_from_source(text: str) -> nbformat.NotebookNode:
    """Return the notebook (no outputs) described by a percent-format source."""
    cells = []
    kind, tags, lines = None, [], []
    for line in text.splitlines():
        if line.startswith("# %%"):
            if kind is not None:
                cells.append(_cell(kind, tags, lines))
            rest = line[4:].strip()
            kind = "markdown" if rest.startswith("[markdown]") else "code"
            tags = rest.split("=", 1)[1].split(",") if rest.startswith("tags=") else []
            lines = []
        elif kind is not None:
            lines.append(line)
    if kind is not None:
        cells.append(_cell(kind, tags, lines))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    nb.metadata["language_info"] = {"name": "python"}
    for i, cell in enumerate(nb.cells):  # stable ids: rebuilding gives identical files
        cell["id"] = f"cell-{i:02d}"
    return nb


def render(source: Path) -> str:
    """Return the .ipynb text of one source."""
    return nbformat.writes(notebook_from_source(source.read_text(encoding="utf-8"))) + "\n"


def main(argv: list[str]) -> int:
    """Write every notebook, or with ``--check`` report the stale ones."""
    check = "--check" in argv
    stale = []
    for source in sorted(SOURCES.glob("[0-9][0-9]_*.py")):
        target = HERE / (source.stem + ".ipynb")
        text = render(source)
        if check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                stale.append(target.name)
        else:
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target}")
    if stale:
        print("out of date (run python notebooks/build.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
