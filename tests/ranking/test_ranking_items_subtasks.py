"""Ranking language models on item scores of several subtasks (issue 31 item 4).

Graded items over subtasks: every pair by the hierarchical correlated-t model with rho = 0
(isbetter.items.graded), as ``compare_items`` compares one pair. The one posterior over
subtasks: a two-level Bayesian bootstrap, the mean over the population of subtasks.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from isbetter.cli import main
from isbetter.core.errors import InputError
from isbetter.core.vocabulary import place_text
from isbetter.inference.seeds import pair_seed
from isbetter.items.compare import compare_items
from isbetter.items.joint import item_matrix, sample_means, sample_subtask_means
from isbetter.items.table import ItemTable
from isbetter.ranking import rank
from isbetter.ranking.result import RankingResult
from isbetter.report import render
from isbetter.results.comparison import ComparisonResult

DRAWS = 1000  # per chain, 4 chains (the default): converged on these tables
#: the one posterior's P(best) and one pair's mean that the branch's base (594dc9f) printed,
#: seed 4, 3000 draws: one task, and the five tasks of `graded` pooled (pool="micro")
ONE_TASK = ({"x": 0.0013, "y": 0.952, "z": 0.0467}, ("x", "y"), -0.07306592558249343)
MICRO = ({"alpha": 0.9987, "mid": 0.0013, "zeta": 0.0}, ("alpha", "mid"), 0.038229984788349186)


def _graded(
    skills: dict[str, float], subtasks: int, items: int, seed: int, clusters: int | None = None
) -> ItemTable:
    """Graded scores in [0, 1]: each model's items higher by its skill, items' difficulty shared."""
    rng = np.random.default_rng(seed)
    rows = []
    for t in range(subtasks):
        base = rng.uniform(0.2, 0.7, items)
        for name, skill in skills.items():
            score = np.clip(base + skill + rng.normal(0, 0.1, items), 0, 1)
            rows += [
                (f"s{t}", str(i), name, float(v), f"p{i % clusters}" if clusters else None)
                for i, v in enumerate(score)
            ]
    frame = pd.DataFrame(rows, columns=["task", "item", "system", "score", "passage"])
    return ItemTable.from_frame(frame, cluster="passage" if clusters else None, metric="f1")


def _alone(table: ItemTable, a: str, b: str, metric: str) -> ComparisonResult:
    """The pair alone, as a ranking at seed 5 fits it: ``compare_items`` at the pair's seed."""
    seed = pair_seed(5, metric, a, b)
    return compare_items(table, a, b, rope=0.01, draws=DRAWS, baselines=False, rng=seed)


@pytest.fixture(scope="module")
def graded() -> ItemTable:
    return _graded({"zeta": 0.0, "alpha": 0.08, "mid": 0.04}, subtasks=5, items=30, seed=11)


@pytest.fixture(scope="module")
def ranked(graded: ItemTable) -> RankingResult:
    return rank(graded, rope=0.01, rng=5, draws=DRAWS, systems=["zeta", "mid", "alpha"])


def test_graded_pairs_go_to_the_correlated_t_model_over_subtasks(
    graded: ItemTable, ranked: RankingResult
) -> None:
    r = ranked
    assert r.pair_method() == "items_hierarchical_graded"
    assert r.signature.startswith("method:pairwise-items-hierarchical-graded|")
    assert r.about()["pairs"] == "the mean difference on the next subtask"
    assert r.chain() == "zeta < mid < alpha"
    assert r.baselines["f1"].n_datasets == 5
    # the pair table's numbers: compare_items of the pair (names sorted), the pair's seed
    p = r.pair("alpha", "mid")
    alone = _alone(graded, "alpha", "mid", "f1")
    assert alone.method == p.method == "items_hierarchical_graded"
    assert (p.p_a_better, p.p_rope, p.p_b_better) == (
        alone.p_a_better,
        alone.p_rope,
        alone.p_b_better,
    )
    assert p.estimate.mean == alone.estimate.mean and p.dataset == alone.dataset
    # reported as the ranking orders the systems: zeta vs alpha is alpha vs zeta swapped
    assert [(x.system_a, x.system_b) for x in r.pairs] == [
        ("zeta", "mid"),
        ("zeta", "alpha"),
        ("mid", "alpha"),
    ]
    q = r.pair("zeta", "alpha")
    other = _alone(graded, "alpha", "zeta", "f1")
    assert (q.p_a_better, q.p_b_better) == (other.p_b_better, other.p_a_better)


def test_graded_clusters_name_their_route_and_are_cached(tmp_path: Path) -> None:
    table = _graded({"x": 0.0, "y": 0.06, "z": 0.03}, subtasks=4, items=24, seed=2, clusters=6)
    fit = {"rope": 0.01, "rng": 1, "draws": DRAWS, "systems": ["x", "y"], "cache_dir": tmp_path}
    r = rank(table, **fit)
    assert r.signature.startswith("method:pairwise-items-hierarchical-graded-clusters|")
    assert r.pairs[0].settings["unit"] == "cluster" and r.settings["execution"]["cached"] == 0
    again = rank(table, **fit)  # the pair's items per subtask are the cache key's data
    assert again.settings["execution"]["cached"] == 1 and again.pairs == r.pairs
    moved = table.frame.assign(score=lambda f: np.where(f.index == 0, 0.0, f.score))
    other = rank(ItemTable.from_frame(moved, cluster="cluster", metric="f1"), **fit)
    assert other.settings["execution"]["cached"] == 0


def test_exact_refused_for_graded_subtasks(graded: ItemTable) -> None:
    with pytest.raises(InputError, match="`method='exact'` .* rho = 0"):
        rank(graded, method="exact", rng=1)


def test_cli_ranks_graded_subtasks(
    graded: ItemTable, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "graded.csv"
    graded.frame.to_csv(path, index=False)
    args = ["rank", str(path), "--items", "--rope", "0.01", "--seed", "5"]
    assert main([*args, "--draws", str(DRAWS), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["signature"].startswith("method:pairwise-items-hierarchical-graded|")
    pooled = json.dumps(out)
    assert "by the hierarchical correlated-t model (rho = 0) over them" in pooled
    assert "hierarchical paired model" not in pooled
    pairs = {(p["a"], p["b"]): p for p in out["metrics"]["score"]["pairs"]}
    assert set(pairs) == {("alpha", "mid"), ("alpha", "zeta"), ("mid", "zeta")}
    # a CSV's scores are "score": the pair's seed is of that metric
    alone = _alone(ItemTable.from_frame(graded.frame), "alpha", "mid", "score")
    got = pairs[("alpha", "mid")]
    assert (got["p_a_better"], got["p_rope"], got["p_b_better"]) == (
        alone.p_a_better,
        alone.p_rope,
        alone.p_b_better,
    )
    assert got["comparison"]["estimate"]["mean"] == alone.estimate.mean
    assert main([*args, "--method", "exact"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--method exact" in err


def _big_and_small(binary: bool = False) -> ItemTable:
    """One huge subtask where A leads by far, eight small ones where B leads."""
    rng = np.random.default_rng(4)
    rows = []
    for task, n, (pa, pb) in [("huge", 600, (0.8, 0.5))] + [
        (f"small{t}", 40 if binary else 15, (0.5, 0.7)) for t in range(8)
    ]:
        base = rng.normal(0, 0.1, n)
        for name, p in (("A", pa), ("B", pb)):
            if binary:
                score = (rng.random(n) < p).astype(float)
            else:
                score = np.clip(p + base + rng.normal(0, 0.05, n), 0, 1)
            rows += [(task, str(i), name, float(v)) for i, v in enumerate(score)]
    frame = pd.DataFrame(rows, columns=["task", "item", "system", "score"])
    return ItemTable.from_frame(frame, metric="acc")


def test_joint_route_over_subtasks_is_the_mean_over_the_population_of_subtasks() -> None:
    table = _big_and_small()
    table_means = item_matrix(table).task_means()
    means = table_means
    assert (means["A"] > means["B"]).tolist() == [True] + [False] * 8
    joint = rank(table, method="items-joint", rope=0.01, rng=3)
    j = joint.joint["acc"]
    assert j.method == "items_joint_subtasks" and j.p_best["B"] > 0.97
    # A leads by 0.3 on the huge subtask, trails by 0.2 on each small one: A is best when
    # the huge one's weight, Beta(1, 8) under Dir(1, ..., 1), exceeds 0.4: 0.6^8 = 0.0168
    # (the subtasks' own means vary a little about those values)
    assert j.p_best["A"] == pytest.approx(0.6**8, abs=0.008)
    assert joint.signature.startswith("method:items-joint-subtasks|")
    assert joint.about() == {
        "pairs": "the difference in mean score over the population of subtasks (the mean of "
        "the subtasks' mean scores, each subtask weighted equally)",
        "joint": "the systems' mean scores over the population of subtasks (the mean of the "
        "subtasks' mean scores, each subtask weighted equally)",
    }
    pair = joint.pair("A", "B")
    assert pair.dataset == "9 subtasks (huge, small0, small1, …)"
    assert place_text(pair.method, pair.dataset) == pair.dataset  # not "task 9 subtasks"
    assert pair.settings["n_subtasks"] == 9 and "bayes_factor" in pair.settings
    assert "posterior over subtasks and their items" in render(pair, "text")
    observed = table_means.mean()
    assert pair.observed.difference == pytest.approx(observed["A"] - observed["B"])
    assert "two-level Bayesian bootstrap" in joint.settings["pooled"]
    # the items pooled (a micro average) answer the other question: the huge subtask's A
    micro = rank(table, method="items-joint", rope=0.01, rng=3, pool="micro").joint["acc"]
    assert micro.method == "items_joint" and micro.p_best["A"] > 0.99
    # the pairwise route over subtasks agrees with the one posterior: B ahead
    pairwise = rank(table, rope=0.01, rng=3)  # 1000 draws per chain: converged
    p = pairwise.pair("A", "B")
    assert p.method == "items_hierarchical_graded" and p.estimate.mean < 0
    assert p.p_b_better > p.p_a_better and pairwise.chain() == "A < B"


def test_joint_route_over_binary_subtasks_follows_the_subtasks() -> None:
    table = _big_and_small(binary=True)
    j = rank(table, method="items-joint", rope=0.01, rng=3, draws=4000).joint["acc"]
    assert j.method == "items_joint_subtasks" and j.p_best["B"] > 0.9, j.p_best
    micro = rank(table, method="items-joint", rope=0.01, rng=3, draws=4000, pool="micro")
    assert micro.joint["acc"].p_best["A"] > 0.99


@pytest.mark.parametrize("clusters", [None, 5])
def test_two_level_bootstrap_mean_is_the_mean_of_subtask_means(clusters: int | None) -> None:
    """E = the mean of the subtasks' means (clusters of equal size: each cluster's mean's)."""
    table = _graded(
        {"x": 0.0, "y": 0.05, "z": 0.02}, subtasks=6, items=20, seed=8, clusters=clusters
    )
    m = item_matrix(table)
    assert (m.clusters is None) == (clusters is None)
    draws = 40_000
    means = sample_subtask_means(m, draws=draws, rng=np.random.default_rng(2))
    target = m.task_means().mean().to_numpy()
    se = means.std(axis=0) / np.sqrt(draws)
    assert np.all(np.abs(means.mean(axis=0) - target) < 4 * se)
    # the pooled bootstrap's mean is the items' mean, which differs with unequal subtasks
    again = sample_subtask_means(m, draws=draws, rng=np.random.default_rng(2))
    np.testing.assert_array_equal(means, again)  # the same seed, the same draws
    # its spread: subtasks' means vary, and the subtask weights add that to the items'
    pooled = sample_means(m, draws=draws, rng=np.random.default_rng(2))
    assert np.all(means.std(axis=0) > pooled.std(axis=0))


def test_joint_route_over_subtasks_is_reproducible_and_keeps_twins_equal() -> None:
    table = _graded({"x": 0.0, "y": 0.05, "z": 0.02}, subtasks=4, items=15, seed=9)
    frame = table.frame
    twin = frame.loc[frame["system"] == "x"].assign(system="w")
    table = ItemTable.from_frame(pd.concat([frame, twin]), metric="f1")
    r = rank(table, method="items-joint", rope=0.01, rng=4, draws=5000)
    again = rank(table, method="items-joint", rope=0.01, rng=4, draws=5000)
    assert again.pairs == r.pairs and again.joint == r.joint
    other = rank(table, method="items-joint", rope=0.01, rng=5, draws=5000)
    assert other.joint["f1"].p_best != r.joint["f1"].p_best
    w = r.pair("w", "x")  # identical on every item: equal in every draw
    assert w.p_rope == 1.0 and w.estimate.mean == 0.0


def test_one_subtask_and_micro_pooling_are_as_before(graded: ItemTable) -> None:
    """One task, and several tasks pooled: the draws of one bootstrap over the items."""
    one = _graded({"x": 0.0, "y": 0.05, "z": 0.02}, subtasks=1, items=40, seed=3)
    for table, pool in ((one, {}), (graded, {"pool": "micro"})):
        r = rank(table, method="items-joint", rope=0.01, rng=4, draws=3000, **pool)
        seq = np.random.SeedSequence(pair_seed(4, "items-joint", "f1")).spawn(3)[0]
        m = item_matrix(table)
        means = sample_means(m, draws=3000, rng=np.random.default_rng(seq))
        assert r.joint["f1"].method == "items_joint"
        for (ia, a), (ib, b) in [((0, m.systems[0]), (1, m.systems[1]))]:
            assert r.pair(a, b).estimate.mean == float(np.mean(means[:, ia] - means[:, ib]))
    # the numbers the code printed before the route over subtasks (seed 4, 3000 draws)
    for table, pool, (p_best, (a, b), mean) in (
        (one, {}, ONE_TASK),
        (graded, {"pool": "micro"}, MICRO),
    ):
        r = rank(table, method="items-joint", rope=0.01, rng=4, draws=3000, **pool)
        assert {s: round(p, 4) for s, p in r.joint["f1"].p_best.items()} == p_best
        assert r.pair(a, b).estimate.mean == mean
