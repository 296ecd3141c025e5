"""Tests of the ranks read off draws of K systems' effects (:mod:`isbetter.inference.ranks`)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from isbetter import ConvergenceWarning
from isbetter.inference.ranks import RankSummary, rank_summary, rope_groups


def test_rank_summary_counts_draws():
    effects = np.array(
        [[0.0, 1.0, 2.0], [0.0, 2.0, 1.0], [0.0, 1.0, 1.5], [3.0, 1.0, 2.0]]  # a < b < c ...
    )
    r = rank_summary(effects, ("a", "b", "c"), rope=0.6)
    assert r.p_best == {"a": 0.25, "b": 0.25, "c": 0.5}
    assert r.expected_rank == {"a": 2.5, "b": 2.0, "c": 1.5}
    assert r.rank_interval["a"] == (1, 3) and r.rank_interval["c"] == (1, 2)
    assert r.rank_probabilities["a"] == [0.25, 0.0, 0.75]
    assert r.top_orders[0] == ("a < b < c", 0.5)
    assert dict(r.rope_orders)["a < b ≈ c"] == 0.25  # draw 3: b and c within 0.6
    assert RankSummary.from_dict(json.loads(json.dumps(r.to_dict()))) == r


def test_rope_orders_tie_only_systems_within_the_rope_of_each_other():
    """Gaps of 0.8 under a ROPE of 1: a ≈ b and b ≈ c, but c − a = 1.6 is beyond it.

    Tying every neighbour within the ROPE would write one group "a ≈ b ≈ c ≈ d"; a
    group spans at most the ROPE, so the order is "a ≈ b < c ≈ d".
    """
    effects = np.array([[0.0, 0.8, 1.6, 2.4]] * 3)
    r = rank_summary(effects, ("a", "b", "c", "d"), rope=1.0)
    assert r.rope_orders == (("a ≈ b < c ≈ d", 1.0),)
    assert rank_summary(effects, ("a", "b", "c", "d"), rope=2.4).rope_orders[0][0] == (
        "a ≈ b ≈ c ≈ d"
    )
    assert rank_summary(effects, ("a", "b", "c", "d")).rope_orders[0][0] == "a < b < c < d"


def _mirror(orders):
    """Each order read from the other end: "a < b ≈ c" -> "b ≈ c < a" (groups kept)."""
    return {" < ".join(reversed(o.split(" < "))): p for o, p in orders}


def test_rope_groups_mirror_when_the_direction_is_reversed():
    """Issue 29: effects (0, 0.6, 1.0) under a ROPE of 0.6 read ``a ≈ b < c`` when grouped
    greedily from the worst system, and their mirror image (error = 1 − accuracy, lower is
    better, read the other way) ``b ≈ c < a``, which is not the same grouping. The groups
    are cut at the widest gap first: ``a < b ≈ c`` both ways.
    """
    accuracy = np.array([[0.0, 0.6, 1.0]])
    up = rank_summary(accuracy, ("a", "b", "c"), rope=0.6)
    down = rank_summary(1.0 - accuracy, ("a", "b", "c"), rope=0.6)  # the direction reversed
    assert up.rope_orders == (("a < b ≈ c", 1.0),)
    assert down.rope_orders == (("b ≈ c < a", 1.0),)
    assert _mirror(down.rope_orders) == dict(up.rope_orders)


def test_rope_groups_mirror_on_random_effects(rng):
    """Random effects and ROPEs: reversing the direction reverses every draw's grouping,
    and every group spans at most the ROPE."""
    systems = tuple("abcdef")
    effects = rng.normal(size=(300, 6))
    for rope in (0.2, 0.5, 1.0):
        up = rank_summary(effects, systems, rope=rope, top=300)
        down = rank_summary(-effects, systems, rope=rope, top=300)
        assert _mirror(down.rope_orders) == dict(up.rope_orders)
    values = np.sort(effects, axis=1)
    for row in values:
        for group in rope_groups(row, 0.5):
            assert row[group[-1]] - row[group[0]] <= 0.5


@pytest.mark.slow
def test_rope_orders_mirror_on_the_uci_ranking(uci_long_path):
    """The joint model's mean effects of the five UCI classifiers, ROPE 0.01: the ROPE-aware
    orders of error = 1 − accuracy read the other way are those of accuracy, mirrored (the
    greedy rule gave ``j48 ≈ j48gr ≈ nbc < aode ≈ hnb`` 0.42 one way and 0.16 the other).
    """
    from isbetter import read_scores
    from isbetter.cv.joint.model import joint_fit

    table = read_scores(uci_long_path, dataset="dataset_id", system="classifier", score="accuracy")
    systems = tuple(table.systems)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the orders' symmetry is exact
        fit = joint_fit(table, systems, metric="accuracy", rope=0.01, rng=1, draws=500, chains=2)
    effects = fit.effects.reshape(-1, len(systems))
    up = rank_summary(effects, systems, rope=0.01, top=50)
    down = rank_summary(-effects, systems, rope=0.01, top=50)
    assert _mirror(down.rope_orders) == dict(up.rope_orders)
    assert len(up.rope_orders) > 3
