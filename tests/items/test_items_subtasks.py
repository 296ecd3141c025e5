"""Two models over several subtasks (issue 31 item 3): compare_items, isbetter items, rank."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from isbetter.cli import main
from isbetter.core.errors import ConvergenceWarning, InputError
from isbetter.inference.seeds import pair_seed
from isbetter.items.compare import compare_items, compare_paired_items
from isbetter.items.hierarchical.model import hierarchical_items
from isbetter.items.joint import item_matrix
from isbetter.items.subtasks import pooled_pair
from isbetter.items.table import ItemTable
from isbetter.ranking import rank
from isbetter.ranking.items import RANK_CHAINS, hierarchical_tasks
from isbetter.report import render
from isbetter.results.comparison import ComparisonResult
from isbetter.results.items import ItemsHierarchicalResult

SIX = (0.5,) * 6
DRAWS = 1000  # per chain (the default): 300 left 3 subtasks of 60 items with tail ESS 68


def _frame(
    accuracies: dict[str, tuple[float, ...]], items: int = 60, seed: int = 0
) -> pd.DataFrame:
    """Binary scores of each system on len(accuracies) tasks of `items` items."""
    rng = np.random.default_rng(seed)
    rows = []
    for system, per_task in accuracies.items():
        for t, p in enumerate(per_task):
            for i in range(items):
                rows.append((f"t{t}", str(i), system, float(rng.random() < p)))
    return pd.DataFrame(rows, columns=["task", "item", "system", "score"])


@pytest.fixture(scope="module")
def three() -> ItemTable:
    # six subtasks: with three, nu and sigma are barely identified (R-hat 1.012 once)
    frame = _frame(
        {"x": (0.8, 0.7, 0.75, 0.7, 0.8, 0.72), "y": (0.5, 0.55, 0.45, 0.5, 0.6, 0.5), "z": SIX},
        items=50,
    )
    return ItemTable.from_frame(frame, metric="acc")


@pytest.fixture(scope="module")
def fitted(three: ItemTable) -> ComparisonResult:
    return compare_items(three, "x", "y", rope=0.01, draws=DRAWS, resamples=500, rng=3)


def test_several_tasks_go_to_the_hierarchical_model(
    three: ItemTable, fitted: ComparisonResult
) -> None:
    assert isinstance(fitted, ItemsHierarchicalResult)
    assert fitted.method == "items_hierarchical" and fitted.metric == "acc"
    assert fitted.dataset == "6 subtasks (t0, t1, t2, …)" and fitted.subtasks == tuple(
        f"t{i}" for i in range(6)
    )
    assert fitted.signature.startswith("method:items-hierarchical|rope:0.01|draws:1000x4|")
    assert fitted.predictive is not None and fitted.estimate is not None
    # the posterior: the model's own on the table's counts, with the same seed
    counts = three.subtask_counts("x", "y").drop(columns="n")
    alone = hierarchical_items(counts, rope=0.01, system_a="x", system_b="y", draws=DRAWS, rng=3)
    assert (fitted.p_a_better, fitted.p_rope, fitted.p_b_better) == (
        alone.p_a_better,
        alone.p_rope,
        alone.p_b_better,
    )
    rows = fitted.settings["subtasks"]
    assert [r["subtask"] for r in rows] == [f"t{i}" for i in range(6)]
    assert [[r[k] for k in ("n11", "n10", "n01", "n00")] for r in rows] == counts.iloc[
        :, 1:
    ].to_numpy().tolist()
    frame = fitted.subtask_frame()
    assert rows[1]["mean"] == pytest.approx(frame["mean"][1], abs=1e-6)
    # the baselines: of the subtasks' items pooled
    assert {t.name for t in fitted.tests} >= {"mcnemar_midp", "unpaired_z"}
    assert fitted.settings["resamples"] == 500 and "input" in fitted.settings


def test_report_names_the_model_and_lists_every_subtask(fitted: ComparisonResult) -> None:
    text = render(fitted, "text")
    assert text.startswith(
        "hierarchical paired model of binary items over subtasks: x vs y on 6 subtasks "
        "(t0, t1, t2, …), acc (higher is better)"
    )
    assert "P (next subtask)" in text and "posterior population mean difference" in text
    assert "d = acc(x) - acc(y), positive when x is better; ROPE: -0.01 <= d <= 0.01" in text
    assert "(300 items on 6 subtasks)" in text
    for row in fitted.settings["subtasks"]:
        assert f"  {row['subtask']}: observed {row['observed']:+.4f}" in text
    assert "method:items-hierarchical" in text.rstrip().splitlines()[-1]
    # the light form (a saved JSON) reports the same
    light = ComparisonResult.from_dict(json.loads(json.dumps(fitted.to_dict())))
    assert render(light, "text") == text
    markdown = render(fitted, "markdown")
    assert "t2: observed" in markdown and "next subtask" in markdown


def test_micro_pool_on_request(three: ItemTable) -> None:
    micro = compare_items(three, "x", "y", pool="micro", rng=2, baselines=False)
    pooled = compare_paired_items(
        pooled_pair(three, "x", "y"), metric="acc", rng=2, baselines=False
    )
    assert micro.method == "items_exact" and micro.dataset == "6 tasks pooled (t0, t1, t2, …)"
    assert micro.p_a_better == pooled.p_a_better and micro.settings["items"] == 300
    one = compare_items(three, "x", "y", task="t1", rng=2, baselines=False)
    assert one.method == "items_exact" and one.dataset == "t1"


def test_bad_requests(three: ItemTable) -> None:
    with pytest.raises(
        InputError, match="`pool='hierarchical'` pools several subtasks, and `task`"
    ):
        compare_items(three, "x", "y", task="t0", pool="hierarchical")
    with pytest.raises(InputError, match="pool"):
        compare_items(three, "x", "y", pool="macro")
    with pytest.raises(InputError, match="model='bootstrap'"):
        compare_items(three, "x", "y", model="bootstrap")
    one = ItemTable.from_frame(_frame({"x": (0.8,), "y": (0.5,)}))
    with pytest.raises(InputError, match="the input has one task"):
        compare_items(one, "x", "y", pool="hierarchical")
    graded = _frame({"x": (0.8, 0.7), "y": (0.5, 0.5)}).assign(score=lambda f: f.score * 0.5)
    # graded items over subtasks: the correlated-t model (tests/items/test_items_subtasks_graded.py)
    with pytest.raises(InputError, match="`model='exact'` is the model of independent binary"):
        compare_items(ItemTable.from_frame(graded), "x", "y", model="exact")
    micro = compare_items(ItemTable.from_frame(graded), "x", "y", pool="micro", rng=1)
    assert micro.method == "items_bootstrap"


def test_cli_several_tasks(
    three: ItemTable, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = tmp_path / "three.csv"
    three.frame.to_csv(csv, index=False)
    plot = tmp_path / "forest.png"
    args = ["items", str(csv), "--a", "x", "--b", "y", "--seed", "3", "--rope", "0.01"]
    fast = ["--draws", str(DRAWS), "--resamples", "500"]
    assert main([*args, *fast, "--plot", str(plot)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("hierarchical paired model of binary items over subtasks: x vs y")
    assert "  t0: observed" in out and f"wrote plot to {plot}" in err
    assert plot.stat().st_size > 10_000
    assert main([*args, "--pool", "micro", "--draws", "5000"]) == 0
    pooled = "exact paired model of binary items: x vs y on the items of 6 tasks pooled (t0,"
    assert capsys.readouterr().out.startswith(pooled)
    out_file = tmp_path / "out.json"
    for extra, message in [
        (["--task", "t0", "--pool", "hierarchical"], "--pool hierarchical pools several subtasks"),
        (["--model", "bootstrap"], "--model bootstrap pools the items"),
    ]:
        assert main([*args, *extra, "--output", str(out_file)]) == 2
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert captured.out == "" and len(lines) == 1 and message in lines[0], captured.err
        assert not out_file.exists()


def test_cli_graded_subtasks_exact_model_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = tmp_path / "graded.csv"
    _frame({"x": (0.8, 0.7), "y": (0.5, 0.5)}).assign(score=lambda f: f.score * 0.5).to_csv(
        csv, index=False
    )
    assert main(["items", str(csv), "--a", "x", "--b", "y", "--model", "exact"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--model exact" in err and "not binary" in err


def test_rank_pairs_by_the_hierarchical_model(three: ItemTable, tmp_path: Path) -> None:
    r = rank(three, rope=0.01, draws=DRAWS, rng=2, cache_dir=tmp_path, progress=False)
    assert r.pair_method() == "items_hierarchical"
    assert r.signature.startswith("method:pairwise-items-hierarchical|rope:0.01|draws:1000x4|")
    assert "hierarchical paired model" in r.settings["pooled"]
    assert r.baselines["acc"].n_datasets == 6  # Friedman over the subtasks
    x_y = r.pair("x", "y")
    alone = compare_items(
        three, "x", "y", rope=0.01, draws=DRAWS, baselines=False, rng=pair_seed(2, "acc", "x", "y")
    )
    assert (x_y.p_a_better, x_y.p_rope, x_y.p_b_better) == (
        alone.p_a_better,
        alone.p_rope,
        alone.p_b_better,
    )
    assert x_y.dataset == "6 subtasks (t0, t1, t2, …)" and "subtasks" not in x_y.settings
    assert r.chain("acc").endswith("< x")  # x is far above y and z on every subtask
    again = rank(three, rope=0.01, draws=DRAWS, rng=2, cache_dir=tmp_path, progress=False)
    assert again.settings["execution"]["cached"] == 3
    assert [p.p_a_better for p in again.pairs] == [p.p_a_better for p in r.pairs]


def test_rank_fits_many_subtasks_with_rank_chains_unless_told(three: ItemTable) -> None:
    # more than LOW_RANK_MAX_SUBTASKS subtasks: each pair's fit runs RANK_CHAINS chains
    many = ItemTable.from_frame(_frame({"x": (0.8,) * 21, "y": (0.5,) * 21}, items=20))
    matrix = item_matrix(many)
    (task,) = hierarchical_tasks(many, matrix, "acc", 0.01, 2, {})
    assert RANK_CHAINS == 2 and task.options == {"chains": RANK_CHAINS}
    (task,) = hierarchical_tasks(many, matrix, "acc", 0.01, 2, {"chains": 4, "draws": 300})
    assert task.options == {"chains": 4, "draws": 300}
    # six subtasks: the model's 4 chains, as compare_items (a pair equals it: above)
    tasks = hierarchical_tasks(three, item_matrix(three), "acc", 0.01, 2, {})
    assert all(t.options == {} for t in tasks)
    with pytest.raises(InputError, match="`chains` sets the MCMC chains"):
        rank(three, pool="micro", chains=2)


def test_rank_micro_pool_and_bad_pools(three: ItemTable) -> None:
    micro = rank(three, pool="micro", rng=2)
    assert micro.pair_method() == "items_exact" and "micro average" in micro.settings["pooled"]
    # the one posterior over subtasks: "hierarchical" is its default, the population of them
    joint = rank(three, method="items_joint", pool="hierarchical", rng=2, draws=2000)
    assert joint.joint["acc"].method == "items_joint_subtasks"
    with pytest.raises(InputError, match="jobs"):
        rank(three, pool="micro", jobs=2)
    with pytest.raises(InputError, match="pool='micro'"):
        rank(three, method="bootstrap")
    graded = _frame({"x": (0.8, 0.7), "y": (0.5, 0.5)}).assign(score=lambda f: f.score * 0.5)
    runs = pd.concat([_frame({"x": (0.8, 0.7), "y": (0.5, 0.5)}).assign(run=r) for r in (0, 1)])
    # graded items, or means over runs: every pair by the correlated-t model with rho = 0
    # (fitted in tests/ranking/test_ranking_items_subtasks.py)
    for table in (ItemTable.from_frame(graded), ItemTable.from_frame(runs, run="run")):
        tasks = hierarchical_tasks(table, item_matrix(table), "acc", 0.0, 1, {})
        assert [t.method for t in tasks] == ["hierarchical_graded"]
        assert set(tasks[0].data) == {"t0", "t1"}
    assert rank(ItemTable.from_frame(runs, run="run"), pool="micro", rng=1).pair_method() == (
        "items_bootstrap"
    )


def test_cli_rank_pool(
    three: ItemTable, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = tmp_path / "three.csv"
    three.frame.to_csv(csv, index=False)
    assert main(["rank", str(csv), "--items", "--pool", "micro", "--seed", "1", "--quiet"]) == 0
    assert "micro average" in capsys.readouterr().out
    assert main(["rank", str(csv), "--pool", "micro"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--pool" in err and "--items" in err


def test_a_poor_fit_warns_at_the_users_call(three: ItemTable) -> None:
    """Before: the warning named a line of the package (the items model's own module for
    compare_items, ranking/__init__.py for rank), not the user's; now the caller's file."""
    with pytest.warns(ConvergenceWarning) as record:
        compare_items(three, "x", "y", rope=0.01, draws=40, baselines=False, rng=3)
    assert [w.filename for w in record] == [__file__]
    with pytest.warns(ConvergenceWarning) as record:
        rank(three, rope=0.01, draws=40, rng=2, progress=False)
    assert [w.filename for w in record] == [__file__]


def test_the_three_forms_of_subtask_counts_agree(three: ItemTable) -> None:
    # one computation (items.hierarchical.counts.count_subtasks) behind the table's counts,
    # the subtasks' route and the ranking's item matrix
    from isbetter.items.joint import item_matrix
    from isbetter.items.subtasks import binary_counts, matrix_counts

    table = three.subtask_counts("x", "z")
    route = binary_counts(three.subtasks("x", "z"))
    matrix = item_matrix(three)
    ranked = matrix_counts(matrix, matrix.systems.index("x"), matrix.systems.index("z"))
    assert table.drop(columns="n").equals(route) and route.equals(ranked)
    assert (table["n"] == route.iloc[:, 1:].sum(axis=1)).all() and set(table["n"]) == {50}
    per_pair = [three.paired("x", "z", t).counts() for t in three.tasks]
    assert route.iloc[:, 1:].to_numpy().tolist() == [list(c) for c in per_pair]
