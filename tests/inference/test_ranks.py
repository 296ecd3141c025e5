"""Tests of the ranks read off draws of K systems' effects (:mod:`isbetter.inference.ranks`)."""

from __future__ import annotations

import json

import numpy as np

from isbetter.inference.ranks import RankSummary, rank_summary


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
