"""Every report states the ROPE and whether it was the default (issue 29, item 4).

The command line records ``rope_default`` in a result's settings when no ``--rope``
was given; every format (text, Markdown, LaTeX, HTML fragment and page, JSON) then
says so beside the ROPE, for every kind of result that has a ROPE: a comparison (the
correlated t-test, the hierarchical model), an F1 comparison, a pairwise ranking (of
scores, of predictions); the joint model's ranking and Plackett–Luce (which has no
ROPE, so nothing is said of one) are checked beside their identical-systems tests
(``tests/ranking/test_one_model_identical_systems.py``).
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import pytest

from isbetter.report import render, summary_from_dict
from isbetter.report.html import html_report

OLD = Path(__file__).parent / "old_json"
SAID = "the default: no --rope given"
FORMATS = ("text", "markdown", "latex", "html", "json")


def _old(name):
    return summary_from_dict(json.loads((OLD / f"{name}.json").read_text()))


@pytest.fixture(scope="module")
def results(hierarchical_fit):
    """One result of each kind with a ROPE (a session's hierarchical fit; the others read)."""
    return {
        "correlated_t": _old("correlated_t"),
        "hierarchical": hierarchical_fit.summary(),
        "f1": _old("f1"),
        "rank_cv": _old("rank_cv"),
        "rank_f1": _old("rank_f1"),
    }


def _defaulted(result):
    return dataclasses.replace(result, settings={**result.settings, "rope_default": True})


def _page(result):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no plots asked for; nothing to warn of
        return html_report(result, plots=[])


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["correlated_t", "hierarchical", "f1", "rank_cv", "rank_f1"])
def test_every_format_says_the_rope_was_the_default(results, name, fmt):
    result = results[name]
    assert SAID not in render(result, fmt)  # a ROPE given: nothing said of a default
    text = render(_defaulted(result), fmt)
    assert SAID in text
    if fmt == "json":
        assert json.loads(text)["settings"]["rope_default"] is True


@pytest.mark.parametrize("name", ["correlated_t", "hierarchical", "f1", "rank_cv", "rank_f1"])
def test_the_html_page_says_it_beside_the_rope(results, name):
    page = _page(_defaulted(results[name]))
    facts = page[page.index('<dl class="facts">') : page.index("</dl>")]
    assert SAID in facts and "ROPE" in facts
    assert SAID not in _page(results[name])
