"""Ranking language models on item-level scores: pairwise and one posterior (issue 31)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from isbetter.cli import main
from isbetter.core.errors import InputError
from isbetter.inference.ranks import _rope_orders, rope_groups
from isbetter.inference.seeds import pair_seed
from isbetter.items.compare import compare_items
from isbetter.items.joint import item_matrix, sample_means
from isbetter.items.table import ItemTable
from isbetter.ranking import rank

AIME = Path(__file__).parents[1] / "items" / "data" / "no_clt_paper" / "matharena_aime_II.csv"


def _table(scores: dict[str, np.ndarray], tasks: int = 1) -> ItemTable:
    n = len(next(iter(scores.values())))
    rows = [
        {"task": f"t{i % tasks}", "item": str(i), "system": s, "run": 0, "score": float(v[i])}
        for s, v in scores.items()
        for i in range(n)
    ]
    return ItemTable.from_frame(pd.DataFrame(rows), metric="acc")


@pytest.fixture(scope="module")
def planted() -> ItemTable:
    rng = np.random.default_rng(3)
    base = rng.random(120) < 0.5
    return _table(
        {
            "best": np.ones(120),  # right on every item
            "mid": base | (rng.random(120) < 0.2),
            "low": base,
            "twin": base,  # identical to "low"
        }
    )


def test_pairs_equal_compare_items_pair_by_pair(planted: ItemTable) -> None:
    r = rank(planted, rope=0.02, rng=7)
    assert r.pair_method() == "items_exact"
    for p in r.pairs:
        alone = compare_items(
            planted,
            p.system_a,
            p.system_b,
            rope=0.02,
            baselines=False,
            rng=pair_seed(7, "acc", p.system_a, p.system_b),
        )
        assert (p.p_a_better, p.p_rope, p.p_b_better) == (
            alone.p_a_better,
            alone.p_rope,
            alone.p_b_better,
        )
    assert r.signature.startswith("method:pairwise-items-exact|")


def test_one_posterior_p_best_and_pairs(planted: ItemTable) -> None:
    r = rank(planted, method="items-joint", rope=0.02, rng=7)
    j = r.joint["acc"]
    assert sum(j.p_best.values()) == pytest.approx(1.0)
    assert j.p_best["best"] > 0.999
    assert j.rank_interval["best"] == (1, 1)
    # identical binary systems: the DP prior lets them differ on unseen items, symmetrically
    # (the exact pair's posterior of the difference is symmetric about 0), never decided
    twin = r.pair("low", "twin")
    mc = 4.5 * np.sqrt((twin.p_a_better + twin.p_b_better) / 10_000)
    assert abs(twin.p_a_better - twin.p_b_better) < mc
    assert r.relations["acc"][("low", "twin")] in ("equivalent", "undecided")
    assert abs(j.expected_rank["low"] - j.expected_rank["twin"]) < 0.05
    assert r.signature.startswith("method:items-joint|")
    assert r.about()["joint"] == "the systems' mean scores on the population of the items"
    # the pairs are the same draws' differences
    again = rank(planted, method="items-joint", rope=0.02, rng=7)
    assert again.pairs == r.pairs and again.joint == r.joint
    other = rank(planted, method="items-joint", rope=0.02, rng=8).joint["acc"]
    assert other.expected_rank != j.expected_rank


def test_identical_graded_systems_are_equal_in_every_bootstrap_draw() -> None:
    """Graded scores: the Bayesian bootstrap; identical systems share a column, never apart."""
    rng = np.random.default_rng(3)
    base = rng.random(60)
    table = _table({"top": np.minimum(1, base + 0.3), "low": base, "twin": base.copy()})
    r = rank(table, method="items-joint", rope=0.02, rng=7)
    twin = r.pair("low", "twin")
    assert twin.p_rope == 1.0 and r.relations["acc"][("low", "twin")] == "equivalent"
    j = r.joint["acc"]  # ties split their ranks evenly
    assert abs(j.expected_rank["low"] - j.expected_rank["twin"]) < 0.02


def test_identical_models_pairwise_are_not_decided(planted: ItemTable) -> None:
    r = rank(planted, rope=0.0, rng=1, rule="threshold")
    assert r.relations["acc"][("low", "twin")] in ("undecided", "equivalent")
    p = r.pair("low", "twin")
    assert p.p_a_better == p.p_b_better


def _rope_orders_one_by_one(e: np.ndarray, systems: tuple[str, ...], rope: float) -> list[str]:
    ascending = np.argsort(e, axis=1, kind="stable")
    out = []
    for row, values in zip(ascending, np.take_along_axis(e, ascending, axis=1), strict=True):
        groups = [sorted(int(row[i]) for i in g) for g in rope_groups(values, rope)]
        out.append(" < ".join(" ≈ ".join(systems[j] for j in g) for g in groups))
    return out


@pytest.mark.parametrize("rope", [0.0, 0.05, 0.2, 0.6, 1.0])
def test_rope_orders_written_from_runs_match_rope_groups(rope: float) -> None:
    """The ROPE-aware orders' shortcut (runs between gaps wider than the ROPE) changes no label."""
    rng = np.random.default_rng(0)
    e = rng.normal(size=(2000, 7)) * 0.3
    e[:, 3] = e[:, 1]  # identical systems: gaps of 0
    e[::7, 5] = np.round(e[::7, 5], 1)
    e[:4] = [0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]  # gaps equal to a ROPE of 0.5
    systems = tuple("abcdefg")
    ascending = np.argsort(e, axis=1, kind="stable")
    assert _rope_orders(e, ascending, systems, rope) == _rope_orders_one_by_one(e, systems, rope)
    half = _rope_orders(e[:4], ascending[:4], systems, 0.5)
    assert half == _rope_orders_one_by_one(e[:4], systems, 0.5)


def test_joint_pair_is_the_paired_bootstrap() -> None:
    """Each pair's difference of the joint draws has the paired bootstrap's moments (Rubin)."""
    rng = np.random.default_rng(0)
    x = rng.random((40, 3))
    table = _table({"a": x[:, 0], "b": x[:, 1], "c": x[:, 2]})
    m = item_matrix(table)
    means = sample_means(m, draws=40_000, rng=np.random.default_rng(1))
    d = x[:, 0] - x[:, 1]
    delta = means[:, 0] - means[:, 1]
    sd = np.sqrt(np.sum((d - d.mean()) ** 2) / (40 * 41))
    assert abs(delta.mean() - d.mean()) < 4 * sd / np.sqrt(40_000)
    assert delta.std() == pytest.approx(sd, rel=0.03)


def test_several_tasks_pool_and_friedman() -> None:
    rng = np.random.default_rng(5)
    table = _table({s: rng.random(60) < p for s, p in (("a", 0.8), ("b", 0.5), ("c", 0.2))}, 3)
    r = rank(table, method="items_joint", rng=2)
    assert "pooled" in r.settings and r.settings["items"] == 60
    assert r.baselines["acc"].n_datasets == 3
    assert rank(_table({"a": np.ones(5), "b": np.zeros(5)}), rng=1).baselines == {}


def test_bad_item_requests() -> None:
    table = _table({"a": np.ones(5), "b": np.zeros(5)})
    with pytest.raises(InputError, match="one metric"):
        rank(table, metrics=["f1"])
    with pytest.raises(InputError, match="method"):
        rank(table, method="hierarchical")
    with pytest.raises(InputError, match="jobs"):
        rank(table, jobs=2)
    frame = table.frame.iloc[:-1]
    with pytest.raises(InputError, match="common_items"):
        rank(ItemTable.from_frame(frame), method="items_joint")


def test_cli_ranks_aime(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "rank",
            str(AIME),
            "--items",
            "--run-suffix",
            "--method",
            "items-joint",
            "--rope",
            "0.02",
            "--seed",
            "1",
            "--draws",
            "4000",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "P(best)" in out and "expected rank [95% interval]" in out and "chain" in out
    best = out.split("P(best)")[1].split(":", 1)[1].strip()
    assert best.startswith("o3-mini (high) 0.99")


def test_cli_bad_item_input(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["rank", str(AIME), "--items", "--run-suffix", "--systems", "nope"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--systems 'nope'" in err
    code = main(["rank", str(AIME), str(AIME)])
    err = capsys.readouterr().err
    assert code == 2 and "--items" in err


def test_clusters_are_the_units_of_the_joint_bootstrap() -> None:
    """With clusters, each pair's joint difference is the clustered paired bootstrap's."""
    rng = np.random.default_rng(4)
    n = 60
    frame = pd.DataFrame(
        {
            "task": "t",
            "item": np.tile(np.arange(n).astype(str), 2),
            "system": np.repeat(["a", "b"], n),
            "run": 0,
            "score": (rng.random(2 * n) < np.repeat([0.7, 0.5], n)).astype(float),
            "cluster": np.tile((np.arange(n) // 6).astype(str), 2),
        }
    )
    table = ItemTable.from_frame(frame, cluster="cluster")
    joint = rank(table, method="items_joint", rng=3, draws=20_000).pair("a", "b")
    alone = compare_items(table, "a", "b", rng=3, draws=20_000, baselines=False)
    assert alone.method == "items_bootstrap" and joint.settings["clusters"] == 10
    se = alone.estimate.sd / np.sqrt(20_000)
    assert abs(joint.estimate.mean - alone.estimate.mean) < 6 * se
    assert joint.estimate.sd == pytest.approx(alone.estimate.sd, rel=0.05)


def test_several_tasks_pairwise_pools_binary_items_on_request() -> None:
    rng = np.random.default_rng(6)
    table = _table({s: rng.random(90) < p for s, p in (("a", 0.8), ("b", 0.5), ("c", 0.3))}, 3)
    r = rank(table, pool="micro", rng=2)
    p = r.pair("a", "b")
    assert p.method == "items_exact" and p.settings["items"] == 90
    assert p.dataset == "3 tasks pooled (t0, t1, t2)"
    assert r.baselines["acc"].n_datasets == 3 and "pooled" in r.settings


def test_cli_common_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [(i, s, float((i + k) % 3 > 0)) for k, s in enumerate("xyz") for i in range(30)]
    frame = pd.DataFrame(rows, columns=["item", "system", "score"]).iloc[:-2]  # z lacks 2
    path = tmp_path / "items.csv"
    frame.to_csv(path, index=False)
    assert main(["rank", str(path), "--items", "--seed", "1"]) == 2
    assert "--common-items" in capsys.readouterr().err
    assert main(["rank", str(path), "--items", "--common-items", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "read: all: kept the 28 items every system has" in out
