"""Which public names the API reference documents, and on which page (used by conf.py and tests)."""

from __future__ import annotations

import importlib

#: the public modules of the API reference: every name in each one's ``__all__``, each
#: object documented once (under ``isbetter`` when the top level exports it too)
API_MODULES = {
    "isbetter": "The top level: read, compare, rank",
    "isbetter.results": "Result types",
    "isbetter.report": "Reports",
    "isbetter.plots": "Plots",
    "isbetter.tagging": "Tagger studies",
    "isbetter.items": "Language-model evaluations",
    "isbetter.sklearn": "From scikit-learn",
    "isbetter.example_data": "Example data",
}


def public_names() -> dict[str, list[str]]:
    """Map each module to the names its page documents: ``__all__`` less those above."""
    seen: set[str] = {"__version__"}
    pages = {}
    for module in API_MODULES:
        names = list(importlib.import_module(module).__all__)
        pages[module] = [name for name in names if name not in seen]
        seen.update(names)
    return pages
