"""P(best)'s interval in a RankSummary, and the summary's JSON shape (issue 19, items 4-5)."""

import json

import numpy as np
import pytest
from scipy import stats

from isbetter.inference.ranks import (
    MONTE_CARLO_INTERVAL,
    RankSummary,
    monte_carlo_interval,
    rank_summary,
)

SYSTEMS = ("a", "b", "c")


def _effects(draws=4000, seed=0):
    """Independent draws of three effects: c usually best, b sometimes, a rarely."""
    g = np.random.default_rng(seed)
    return g.normal([0.0, 0.8, 1.0], 0.5, size=(draws, 3))


def test_p_best_interval_is_the_jeffreys_interval_on_independent_draws():
    import arviz as az

    effects = _effects()
    r = rank_summary(effects, SYSTEMS, chains=4)
    assert r.p_best_interval_kind == MONTE_CARLO_INTERVAL
    best = effects.argmax(axis=1)
    for i, s in enumerate(SYSTEMS):
        low, high = r.p_best_interval[s]
        assert low < r.p_best[s] < high
        # the Jeffreys interval with n = ArviZ's bulk ESS of the indicator (4 chains of
        # 1000; at most the 4000 draws) and x = n P(best): the same numbers (an interval
        # of the 4000 draws would differ by up to 8 %: these ESS are 3692-4080)
        ess = float(az.ess((best == i).astype(float).reshape(4, 1000), method="bulk"))
        n = min(ess, 4000.0)
        x = r.p_best[s] * n
        exact = stats.beta.ppf([0.025, 0.975], x + 0.5, n - x + 0.5)
        assert (low, high) == pytest.approx(tuple(exact), rel=1e-9)
        # independent draws: ESS near the number of draws, so the textbook interval; over
        # 200 seeds ESS / 4000 had mean 0.985 and sd 0.045: within 4 sd
        assert abs(ess / 4000 - 0.985) < 4 * 0.045
    width = r.p_best_interval["c"][1] - r.p_best_interval["c"][0]
    assert 0.02 < width < 0.04  # about 2 x 1.96 x sqrt(p (1 - p) / 4000)


def test_autocorrelated_draws_give_a_wider_interval():
    """The same draws in a sticky order (each repeated 20 times): 20 times fewer
    effective draws, an interval about sqrt(20) wider, not the naive binomial one."""
    e = _effects(draws=400)
    sticky = np.repeat(e, 20, axis=0)
    free = rank_summary(_effects(draws=8000, seed=1), SYSTEMS, chains=4)
    stuck = rank_summary(sticky, SYSTEMS, chains=4)
    w_free = np.subtract(*free.p_best_interval["c"][::-1])
    w_stuck = np.subtract(*stuck.p_best_interval["c"][::-1])
    assert w_stuck > 3 * w_free


def test_a_constant_indicator_counts_every_draw():
    best = np.column_stack([np.ones(200, bool), np.zeros(200, bool)])
    (lo1, hi1), (lo0, hi0) = monte_carlo_interval(best, chains=2)
    assert hi1 == 1.0 and lo0 == 0.0
    assert lo1 == pytest.approx(stats.beta.ppf(0.025, 200.5, 0.5))
    assert hi0 == pytest.approx(stats.beta.ppf(0.975, 0.5, 200.5))


def test_json_block_has_the_issue_shape_and_round_trips():
    r = rank_summary(_effects(), SYSTEMS)
    data = json.loads(json.dumps(r.to_dict()))
    assert list(data)[:5] == ["method", "p_best", "expected_rank", "rank_interval", "top_orders"]
    assert data["method"] == "joint"
    assert set(data["p_best"]) == set(SYSTEMS) and all(
        isinstance(v, float) for v in data["p_best"].values()
    )
    assert all(isinstance(v, float) for v in data["expected_rank"].values())
    for lo, hi in data["rank_interval"].values():
        assert isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi <= 3
    assert all(set(o) == {"order", "p"} for o in data["top_orders"])
    assert data["top_orders"][0] == {"order": r.top_orders[0][0], "p": r.top_orders[0][1]}
    assert set(data["p_best_interval"]) == set(SYSTEMS)
    assert data["p_best_interval_kind"] == MONTE_CARLO_INTERVAL
    assert RankSummary.from_dict(data) == r


def test_a_summary_saved_before_the_interval_still_reads():
    data = rank_summary(_effects(), SYSTEMS).to_dict()
    del data["p_best_interval"], data["p_best_interval_kind"]
    old = RankSummary.from_dict(data)
    assert old.p_best_interval == {} and old.p_best_interval_kind == ""
    assert old.p_best == rank_summary(_effects(), SYSTEMS).p_best
    assert RankSummary.from_dict(old.to_dict()) == old


def test_by_expected_rank_and_pair_record():
    r = rank_summary(_effects(), SYSTEMS)
    assert r.by_expected_rank() == ("c", "b", "a")
    row = r.pair_record("a", "c")
    assert row["p_best_a"] == r.p_best["a"] and row["p_best_b"] == r.p_best["c"]
    assert (row["p_best_b_low"], row["p_best_b_high"]) == r.p_best_interval["c"]
    assert (row["rank_interval_a_low"], row["rank_interval_a_high"]) == r.rank_interval["a"]
    assert row["expected_rank_b"] == r.expected_rank["c"]
    assert row["top_orders"].startswith(f"{r.top_orders[0][0]} (")
