"""Summaries saved as JSON by an earlier isbetter still read, and report exactly as they did.

``old_json/`` holds the ``to_dict()`` JSON of each kind of result written by isbetter at
commit 3751cb5 (before the summaries were folded into the results; the rankings' simplex
points cut to two per pair), and each report format rendered from it by that code. One
word has changed since, on purpose: the metric is called "metric" everywhere, where the
JSON of F1 and power results and the LaTeX F1 table's heading said "measure" (:data:`NOW`).
"""

import json
import re
from pathlib import Path

import pytest

from isbetter.report import FORMATS, render, summary_from_dict

OLD = Path(__file__).parent / "old_json"
NAMES = ("correlated_t", "sign", "f1", "f1_binary_dcf", "power", "rank_cv", "rank_f1")


#: the report formats' deliberate changes since 3751cb5: (pattern, replacement); the
#: JSON's top-level key only (the settings an old file recorded are kept as they were)
NOW = {"json": (r'(?m)^  "measure": ', '  "metric": '), "latex": (r"\{measure\}", "{metric}")}


def _read(name):
    return summary_from_dict(json.loads((OLD / f"{name}.json").read_text()))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_an_old_summary_reports_as_it_did(name, fmt):
    then = (OLD / f"{name}.{fmt}").read_text()
    pattern, replacement = NOW.get(fmt, ("^$", ""))
    assert render(_read(name), fmt) == re.sub(pattern, replacement, then, count=1)


@pytest.mark.parametrize("name", NAMES)
def test_an_old_summary_round_trips(name):
    summary = _read(name)
    again = summary_from_dict(json.loads(json.dumps(summary.to_dict(), allow_nan=False)))
    assert again.to_dict() == summary.to_dict()
    for fmt in FORMATS:
        assert render(again, fmt) == render(summary, fmt)


def test_an_old_rankings_rows_carry_their_metric_label():
    """The label ("f1 macro") was kept in each row's settings; it is now a field of the row."""
    ranking = _read("rank_f1")
    assert ranking.metrics == ("f1 macro", "f1 micro")
    labels = [(p.ranking_metric, p.metric, p.label) for p in ranking.pairs]
    assert set(labels) == {("f1 macro", "f1", "macro"), ("f1 micro", "f1", "micro")}
    assert all("ranking_metric" not in p.settings for p in ranking.pairs)
    assert ranking.pair("a", "c", "f1 micro").p_a_better == pytest.approx(0.991)


def test_an_old_f1_and_power_summary_read_as_results_with_a_metric():
    f1, power = _read("f1_binary_dcf"), _read("power")
    assert f1.metric.startswith("dcf") and not f1.higher_is_better
    assert power.metric == "f1" and power.power(200, "paired") == power.rows[2]["power"]
    assert f1.rows[0].summary() == f1.rows[0] and power.summary() is power
