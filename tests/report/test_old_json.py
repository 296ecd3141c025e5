"""Summaries saved as JSON by an earlier isbetter still read, and report exactly as they did.

``old_json/`` holds the ``to_dict()`` JSON of each kind of result written by isbetter at
commit 3751cb5 (before the summaries were folded into the results; the rankings' simplex
points cut to two per pair), and each report format rendered from it by that code. One
word has changed since, on purpose: the metric is called "metric" everywhere, where the
JSON of F1 and power results and the LaTeX F1 table's heading said "measure" (:data:`NOW`);
and a ranking's report names what its relations are about (:func:`_ranking_now`).
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

#: what a ranking's pairs (so its order and chain) are about, short and in words (issue 29)
ABOUT = {
    "rank_cv": ("next data set", "the difference on the next data set"),
    "rank_f1": (
        "this test set",
        "the difference in the measure on the population of this test set",
    ),
}
#: the F1 model's name in a ranking's title, where it read "every pair by the paired;"
F1_NAME = "paired Bayesian F1 model"


def _ranking_now(name, text):
    """A ranking's report as it reads since issue 29: every relation says what it is about.

    The title and each metric's order and chain name the pairs' quantity, the key of the
    columns says it in words, the JSON has ``pairs_about``, and the F1 model is named.
    """
    short, words = ABOUT[name]
    text = text.replace("every pair by the paired;", f"every pair by the {F1_NAME};")
    text = re.sub(
        r"(every pair by the [^;]+); rule: ", rf"\1; pairs and order: {short}; rule: ", text
    )
    text = re.sub(r"(^|\* |<br>|    \")([\w ]+?) \(ROPE", rf"\1\2, {short} (ROPE", text, flags=re.M)
    text = re.sub(r"(\w) chain: ", rf"\1 chain, {short}: ", text)
    text = re.sub(
        r"P\(B better\)(?=\\par|\n|<br>|\"|$)",
        f"P(B better), about {words}, as are the order, groups and chain of each metric",
        text,
    )
    return re.sub(
        r'(?m)^(      \],\n)(      "systems": \[)', rf'\1      "pairs_about": "{words}",\n\2', text
    )


def _read(name):
    return summary_from_dict(json.loads((OLD / f"{name}.json").read_text()))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("fmt", FORMATS)
def test_an_old_summary_reports_as_it_did(name, fmt):
    then = (OLD / f"{name}.{fmt}").read_text()
    pattern, replacement = NOW.get(fmt, ("^$", ""))
    now = re.sub(pattern, replacement, then, count=1)
    if name in ABOUT and fmt != "csv":
        now = _ranking_now(name, now)
    assert render(_read(name), fmt) == now


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
