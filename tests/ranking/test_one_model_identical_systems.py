"""Identical systems are never ordered by the joint model or Plackett–Luce (issue 29, item 4).

Two systems with the same score on every fold have a posterior symmetric in the two:
P(A better) = P(B better) exactly, so at ROPE 0 the pair is undecided ("?"), and with a
ROPE it is equivalent or undecided, never "<", "≫". The joint model and Plackett–Luce
read their pairs off per-draw masses, where Monte Carlo error alone wrote a direction
between identical systems (joint, ROPE 0: b_better at P 0.525; Plackett–Luce: ">" at
P 0.57) before each draw's masses were averaged with their mirror image, as the
pairwise hierarchical model's are. Here three identical systems (three identical pairs)
and a fourth, better one; the pairwise routes are in ``tests/cv/test_identical_systems.py``.

The same fits show how the joint ranking and Plackett–Luce report a ROPE left at its
default (the command line's ``rope_default``): the joint one says so, Plackett–Luce,
which has no ROPE, says nothing of a default.
"""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest
from tests._joint_data import SMALL, score_table, study_scores

from isbetter import ConvergenceWarning, rank
from isbetter.report import render

SAME = ("s0", "s1", "s2")
SAID = "the default: no --rope given"


@pytest.fixture(scope="module")
def table():
    """s0, s1, s2 identical on every fold of 6 data sets; s3 better by 0.03."""
    scores = study_scores(np.random.default_rng(12), [0.0, 0.0, 0.0, 0.03], q=6)
    scores[:, 1] = scores[:, 2] = scores[:, 0]
    return score_table(scores)


def _rank(table, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # small runs
        return rank(table, rng=2, **{**SMALL, **kwargs})


@pytest.fixture(scope="module")
def joint0(table):
    return _rank(table, method="joint")


@pytest.fixture(scope="module")
def plackett_luce(table):
    return _rank(table, method="plackett_luce")


def _identical_pairs(ranking):
    return [p for p in ranking.pairs if p.system_a in SAME and p.system_b in SAME]


@pytest.mark.parametrize("route", ["joint0", "plackett_luce"])
def test_identical_systems_are_undecided_without_a_rope(request, route):
    ranking = request.getfixturevalue(route)
    pairs = _identical_pairs(ranking)
    assert len(pairs) == 3
    for p in pairs:
        assert p.p_a_better == p.p_b_better == 0.5 and p.p_rope == 0.0
        assert p.predictive.p_a_better == p.predictive.p_b_better
        assert ranking.relations["acc"][(p.system_a, p.system_b)] == "undecided"
    for s in SAME:  # the better system is still found
        assert ranking.relations["acc"][(s, "s3")] == "b_better"


def test_identical_systems_are_never_ordered_by_the_joint_model_with_a_rope(table):
    ranking = _rank(table, method="joint", rope=0.01)
    for p in _identical_pairs(ranking):
        assert p.p_a_better == p.p_b_better
        assert ranking.relations["acc"][(p.system_a, p.system_b)] in ("equivalent", "undecided")


def _defaulted(result):
    return dataclasses.replace(result, settings={**result.settings, "rope_default": True})


@pytest.mark.parametrize("fmt", ["text", "markdown", "latex", "html", "json"])
def test_the_joint_ranking_says_its_rope_was_the_default(joint0, fmt):
    assert SAID not in render(joint0, fmt)
    text = render(_defaulted(joint0), fmt)
    assert SAID in text and "no ROPE" in text
    if fmt == "json":
        assert json.loads(text)["settings"]["rope_default"] is True


@pytest.mark.parametrize("fmt", ["text", "markdown", "latex", "html", "json"])
def test_plackett_luce_says_nothing_of_a_default_rope(plackett_luce, fmt):
    text = render(plackett_luce, fmt)
    assert SAID not in text and "rope_default" not in text
    # nor of a ROPE beside its order, nor in its settings and signature (it wrote
    # "score, weights (no ROPE): ..." and "rope:0")
    assert "weights (no ROPE):" not in text and "rope:" not in text
    assert not {"rope", "ropes"} & set(plackett_luce.settings)
