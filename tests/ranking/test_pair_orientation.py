"""A pairwise ranking's numbers do not depend on the order of the systems (issue 29).

Each pair was seeded and fitted in the orientation of its place in ``systems``: the
same UCI data with the systems in another order gave other probabilities for the same
pair (another seed, and the data mirrored). Now each pair is seeded and fitted with its
names sorted and reported as ``systems`` orders it, so two orders give the same pair
probabilities, mirrored, to the last bit.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from _joint_data import SMALL
from isbetter import ConvergenceWarning, rank, read_scores
from isbetter.inference.decisions import mirror
from isbetter.items.table import ItemTable

SORTED = ("aode", "hnb", "j48", "j48gr", "nbc")
#: another order of the five UCI classifiers: every pair's place and orientation changes
SHUFFLED = ("nbc", "j48gr", "aode", "j48", "hnb")
#: three language models, sorted and in another order
SORTED_ITEMS, ORDER = ("m1", "m2", "m3"), ("m3", "m1", "m2")


@pytest.fixture(scope="module")
def uci(uci_long_path):
    return read_scores(uci_long_path, dataset="dataset_id", system="classifier", score="accuracy")


def _numbers(p):
    """Everything a pair reports about its difference, as a plain dictionary."""
    data = p.to_dict()
    for key in ("settings", "signature"):
        data.pop(key)
    return data


def _same_pairs(first, second):
    """Every pair of `second` is `first`'s, seen from the side `second` orders it."""
    (metric,) = first.metrics
    assert len(first.pairs) == len(second.pairs)
    for p in second.pairs:
        a, b = p.system_a, p.system_b
        assert second.systems.index(a) < second.systems.index(b)  # oriented as asked
        assert _numbers(p) == _numbers(first.pair(a, b)), (a, b)
        assert p.settings["seed"] == first.pair(a, b).settings["seed"]
        mine, theirs = second.simplex[metric][(a, b)], first.simplex[metric].get((a, b))
        if theirs is None:
            theirs = [point[::-1] for point in first.simplex[metric][(b, a)]]
        assert mine == theirs
        theirs = first.relations[metric].get((a, b)) or mirror(first.relations[metric][(b, a)])
        assert second.relations[metric][(a, b)] == theirs


@pytest.mark.parametrize("method", ["signed_rank", "sign"])
def test_the_order_of_the_systems_does_not_change_a_pair(uci, method):
    """All ten UCI pairs, sorted and shuffled: the same numbers, mirrored (failed before:
    e.g. nbc vs aode's P(rope) moved by the other seed)."""
    runs = [
        rank(uci, systems=names, rope=0.01, method=method, rng=1, jobs=1, progress=False)
        for names in (SORTED, SHUFFLED)
    ]
    _same_pairs(*runs)
    assert runs[0].orders["accuracy"].groups and runs[1].systems == SHUFFLED


def test_the_hierarchical_model_fits_a_pair_one_way(uci):
    """The hierarchical fit of nbc and aode from either order: bit-identical, mirrored."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a small run: the numbers only
        runs = [
            rank(uci, systems=names, rope=0.01, rng=1, jobs=1, progress=False, **SMALL)
            for names in (("aode", "nbc"), ("nbc", "aode"))
        ]
    _same_pairs(*runs)
    (p,) = runs[1].pairs
    assert (p.system_a, p.system_b) == ("nbc", "aode") and p.p_b_better > p.p_a_better
    assert p.estimate.mean < 0 and p.observed.score_a < p.observed.score_b


def test_f1_pairs_do_not_depend_on_the_order_of_the_columns():
    """Per-document predictions with the systems in two orders: the same F1 pairs."""
    g = np.random.default_rng(4)
    gold = g.integers(0, 2, 300)
    guess = {
        s: np.where(g.random(300) < p, gold, 1 - gold)
        for s, p in zip(("c", "a", "b"), (0.9, 0.85, 0.7), strict=True)
    }
    frame = pd.DataFrame({"gold": gold, **guess})
    runs = [
        rank(frame, systems=names, rope=0.02, draws=1000, rng=2, progress=False)
        for names in (("a", "b", "c"), ("c", "b", "a"))
    ]
    _same_pairs(*runs)
    for p in runs[1].pairs:  # the frequentist tests beside them mirror too
        q = runs[0].pair(p.system_a, p.system_b)
        assert [t.to_dict() for t in p.tests] == [t.to_dict() for t in q.tests]
        assert any(t.estimate == t.estimate and t.estimate != 0 for t in p.tests)


def test_a_swapped_comparison_swapped_back_is_the_comparison(hierarchical_fit):
    """:meth:`ComparisonResult.swapped`: every signed number negated, the rest kept."""
    light = hierarchical_fit.summary()
    s = light.swapped()
    assert s.swapped().to_dict() == light.to_dict()
    assert (s.system_a, s.system_b) == (light.system_b, light.system_a)
    assert s.probabilities().as_tuple() == light.probabilities().as_tuple()[::-1]
    assert s.predictive.as_tuple() == light.predictive.as_tuple()[::-1]
    e, f = light.estimate, s.estimate
    assert (f.mean, f.sd, f.mcse) == (-e.mean, e.sd, e.mcse)
    assert (f.interval.low, f.interval.high) == (-e.interval.high, -e.interval.low)
    assert (f.p_below_0, f.p_above_0, f.bf_rope) == (e.p_above_0, e.p_below_0, e.bf_rope)
    assert s.diagnostics == light.diagnostics and s.posterior is None


def _items(tasks: int) -> ItemTable:
    """Binary scores of three models on 4 x 40 items (`tasks` subtasks), models paired."""
    rng = np.random.default_rng(5)
    hard = rng.random(160)
    rows = [
        {"task": f"t{i % tasks}", "item": str(i), "system": s, "score": float(hard[i] < p)}
        for s, p in (("m1", 0.8), ("m2", 0.6), ("m3", 0.5))
        for i in range(160)
    ]
    frame = pd.DataFrame(rows)
    flip = rng.random(len(frame)) < 0.1  # each model's own errors, so no pair is identical
    frame.loc[flip, "score"] = 1.0 - frame.loc[flip, "score"]
    return ItemTable.from_frame(frame, metric="acc")


def test_item_pairs_are_fitted_one_way():
    """Item scores, exact paired model: (m3, m1, m2) gives (m1, m2, m3)'s numbers, mirrored
    (failed before: each pair was seeded and counted in the order of `systems`)."""
    table = _items(1)
    runs = [rank(table, systems=names, rope=0.01, rng=4) for names in (SORTED_ITEMS, ORDER)]
    _same_pairs(*runs)
    assert runs[1].pair_method() == "items_exact"


def test_item_pairs_over_subtasks_are_fitted_one_way():
    """The hierarchical model over subtasks (MCMC, one pair): either order, bit-identical."""
    table = _items(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a small run: the numbers only
        runs = [
            rank(table, systems=names, rope=0.01, rng=4, draws=200, jobs=1, progress=False)
            for names in (("m1", "m3"), ("m3", "m1"))
        ]
    _same_pairs(*runs)
    (p,) = runs[1].pairs
    assert runs[1].pair_method() == "items_hierarchical"
    assert (p.system_a, p.system_b) == ("m3", "m1") and p.p_b_better > p.p_a_better
