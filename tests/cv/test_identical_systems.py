"""Two identical systems are undecided without a ROPE, in every route (issue 29 item 4).

Without a ROPE no practical equivalence can be concluded, and identical systems favour
neither side. Before: the correlated t-test called them "equivalent" at ROPE 0 (its
point mass at d = 0 fell in the zero-width ROPE) and the hierarchical model's Monte
Carlo error gave 0.52 / 0 / 0.48, which the likelihood rule of a ranking can turn into
a side. With a ROPE they are equivalent.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import isbetter
from isbetter import ConvergenceWarning, from_arrays
from isbetter.inference.decisions import hdi_rope_decision

X = np.random.default_rng(20240917).uniform(0.6, 0.9, size=(6, 10))


def _same(rows: np.ndarray):
    return from_arrays(rows, rows.copy(), runs=1, names=("a", "b"))


ROUTES = {
    "correlated_t": (X[:1], {}),
    "sign": (X[:, :1], {}),
    "signed_rank": (X[:, :1], {}),
    "hierarchical": (X, {"draws": 200, "chains": 2}),
}


@pytest.mark.parametrize("method", sorted(ROUTES))
@pytest.mark.parametrize("rope", [0.0, 0.01])
def test_identical_systems_in_every_comparison_route(method, rope):
    rows, options = ROUTES[method]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 2 x 200 draws
        res = isbetter.compare(_same(rows), "a", "b", rope=rope, method=method, rng=1, **options)
    p = res.probabilities().as_tuple()
    if rope == 0:
        assert p == (0.5, 0.0, 0.5)  # exactly: neither side, no equivalence
        assert res.decision() == "undecided" and res.decision(threshold=0.5) == "undecided"
        if res.estimate is not None:
            assert res.estimate.decision == "undecided"
    else:
        assert res.decision() == "equivalent"


@pytest.mark.parametrize("method", ["correlated_t", "signed_rank", "sign"])
def test_identical_systems_in_a_ranking(method):
    rows = X[:1] if method == "correlated_t" else X[:, :1]
    table = _same(rows)
    for rope, line in ((0.0, "{a, b}"), (0.01, "a ≈ b")):
        ranking = isbetter.rank(table, rope=rope, method=method, rng=1)
        assert str(ranking.order("score")) == line


def test_identical_predictions_in_the_f1_routes():
    g = np.random.default_rng(3)
    gold = g.integers(0, 2, 200)
    x = np.where(g.random(200) < 0.8, gold, 1 - gold)
    preds = isbetter.read_predictions(pd.DataFrame({"gold": gold, "x": x, "y": x}), gold="gold")
    res = isbetter.compare_f1(preds, rope=0.0, rng=1, draws=5000, baselines=False)
    assert res.row()["decision"] == "undecided"
    assert str(isbetter.rank(preds, rope=0.0, rng=1).order("f1")) == "{x, y}"


def test_a_zero_width_rope_holds_no_equivalence():
    assert hdi_rope_decision(0.0, 0.0, 0.0) == "undecided"
    assert hdi_rope_decision(0.0, 0.0, 0.01) == "equivalent"


@pytest.mark.parametrize("model", ["paired", "unpaired"])
def test_identical_predictions_favour_neither_side_exactly(model):
    """The F1 models' posterior of identical predictions is symmetric: each draw's masses
    are averaged with their mirror, so P(A better) = P(B better) exactly. Before, with 200
    draws at ROPE 0 the Monte Carlo error ordered them in 10 of 30 seeds (x < y at seed 2:
    0.47 / 0 / 0.53, the likelihood rule's margin 0.05 exceeded)."""
    g = np.random.default_rng(3)
    gold = g.integers(0, 2, 200)
    x = np.where(g.random(200) < 0.8, gold, 1 - gold)
    preds = isbetter.read_predictions(pd.DataFrame({"gold": gold, "x": x, "y": x}), gold="gold")
    for seed in range(12):
        ranking = isbetter.rank(preds, rope=0.0, rng=seed, draws=200, method=model)
        (pair,) = ranking.pairs
        assert pair.p_a_better == pair.p_b_better and pair.p_rope == 0.0, seed
        assert str(ranking.order("f1")) == "{x, y}", seed
    # a single different prediction: no longer symmetric, the draws as they fall
    z = x.copy()
    z[0] = 1 - z[0]
    other = isbetter.read_predictions(pd.DataFrame({"gold": gold, "x": x, "z": z}), gold="gold")
    res = isbetter.compare_f1(other, rope=0.0, rng=2, draws=200, model=model, baselines=False)
    p = res.comparisons[res.classes[0]]
    assert p.p_a_better != p.p_b_better
