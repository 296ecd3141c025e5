"""Graded items over several subtasks (issue 31 item 3): the correlated-t model with rho = 0.

compare_items / ``isbetter items`` without a task on a table of graded items (or items in
clusters) fits the hierarchical model of DESIGN §3.2 with each subtask a data set and each
item's paired difference one of its differences (isbetter.items.graded).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from isbetter import from_arrays
from isbetter.cli import main
from isbetter.core.errors import InputError
from isbetter.cv.hierarchical.model import hierarchical_test
from isbetter.items.compare import compare_items
from isbetter.items.graded import graded_scores
from isbetter.items.table import ItemTable
from isbetter.report import render
from isbetter.results.comparison import ComparisonResult
from isbetter.results.items import ItemsHierarchicalResult

DRAWS = 1000  # per chain, 4 chains (the route's default)


def _scores(
    rng: np.random.Generator, shifts: tuple[float, ...], items: int
) -> tuple[np.ndarray, np.ndarray]:
    """Graded scores in [0, 1] of x and y: x's items higher by `shifts[t]` on subtask t."""
    base = rng.uniform(0.2, 0.8, (len(shifts), items))
    x = np.clip(base + np.array(shifts)[:, None] + rng.normal(0, 0.1, base.shape), 0, 1)
    y = np.clip(base + rng.normal(0, 0.1, base.shape), 0, 1)
    return x, y


def _table(x: np.ndarray, y: np.ndarray, clusters: int | None = None) -> ItemTable:
    rows = []
    for t in range(x.shape[0]):
        for i in range(x.shape[1]):
            cluster = f"c{i % clusters}" if clusters else None
            rows += [
                (f"t{t}", str(i), "x", x[t, i], cluster),
                (f"t{t}", str(i), "y", y[t, i], cluster),
            ]
    frame = pd.DataFrame(rows, columns=["task", "item", "system", "score", "passage"])
    return ItemTable.from_frame(frame, cluster="passage" if clusters else None, metric="f1")


@pytest.fixture(scope="module")
def graded() -> tuple[np.ndarray, np.ndarray]:
    return _scores(np.random.default_rng(5), (0.06, 0.02, 0.05, 0.04, 0.08), 40)


@pytest.fixture(scope="module")
def fitted(graded: tuple[np.ndarray, np.ndarray]) -> ComparisonResult:
    return compare_items(_table(*graded), "x", "y", rope=0.01, draws=DRAWS, resamples=300, rng=3)


def test_graded_subtasks_go_to_the_correlated_t_model_with_rho_zero(
    graded: tuple[np.ndarray, np.ndarray], fitted: ComparisonResult
) -> None:
    assert isinstance(fitted, ItemsHierarchicalResult) and fitted.counts is None
    assert fitted.method == "items_hierarchical_graded" and fitted.metric == "f1"
    assert fitted.signature.startswith("method:items-hierarchical-graded|rope:0.01|draws:1000x4|")
    assert fitted.settings["rho"] == 0.0 and fitted.settings["unit"] == "item"
    assert fitted.dataset == "5 subtasks (t0, t1, t2, …)"
    # the cross-validation model called directly on the same table (subtasks = data sets,
    # items = folds of one run), same seed: the same numbers
    x, y = graded
    scores = from_arrays(x, y, names=("x", "y"), runs=1, datasets=[f"t{t}" for t in range(5)])
    direct = hierarchical_test(scores.paired("x", "y"), rope=0.01, rho=0.0, draws=DRAWS, rng=3)
    assert (fitted.p_a_better, fitted.p_rope, fitted.p_b_better) == (
        direct.p_a_better,
        direct.p_rope,
        direct.p_b_better,
    )
    assert fitted.predictive == direct.predictive
    np.testing.assert_array_equal(fitted.delta, direct.delta)
    np.testing.assert_array_equal(fitted.population_mean, direct.delta0)
    assert fitted.estimate is not None and fitted.estimate.mean == pytest.approx(
        float(np.mean(direct.delta0)), abs=1e-12
    )
    # each subtask: its observed mean difference and its shrunk one
    frame = fitted.subtask_frame()
    np.testing.assert_allclose(frame["observed"], (x - y).mean(axis=1))
    assert frame["n"].tolist() == [40] * 5
    rows = fitted.settings["subtasks"]
    assert [r["subtask"] for r in rows] == [f"t{t}" for t in range(5)]
    # the baselines: of the pooled graded items (no McNemar)
    names = {t.name for t in fitted.tests}
    assert "unpaired_z" in names and "mcnemar_midp" not in names


def test_report_and_plot(fitted: ComparisonResult, tmp_path: Path) -> None:
    from isbetter.plots.items import plot_subtasks

    text = render(fitted, "text")
    assert text.startswith(
        "hierarchical correlated-t model (rho = 0) of graded items over subtasks: x vs y on "
        "5 subtasks (t0, t1, t2, …), f1 (higher is better)"
    )
    assert "ROPE: -0.01 <= d <= 0.01" in text and "P (next subtask)" in text
    assert "per subtask (items independent, rho = 0)" in text and "  t3: observed" in text
    assert "(200 items on 5 subtasks)" in text
    assert "method:items-hierarchical-graded" in text.rstrip().splitlines()[-1]
    light = ComparisonResult.from_dict(json.loads(json.dumps(fitted.to_dict())))
    assert render(light, "text") == text
    ax = plot_subtasks(fitted)
    assert "d = f1(x) − f1(y), f1: higher is better" in ax.get_xlabel().replace("\n", " ")


def test_recovers_a_known_difference() -> None:
    # 12 subtasks of 150 items; each subtask's true difference 0.05 (no spread), so the
    # population mean difference is 0.05 up to the clipping of the scores at 0 and 1
    rng = np.random.default_rng(11)
    base = rng.uniform(0.25, 0.65, (12, 150))
    noise = rng.normal(0, 0.05, base.shape)
    x, y = base + 0.05 + noise, base  # no clipping needed: scores stay in [0, 1]
    assert x.min() >= 0 and x.max() <= 1
    res = compare_items(_table(x, y), "x", "y", rope=0.01, draws=DRAWS, baselines=False, rng=1)
    e = res.estimate
    assert e is not None
    # the posterior of delta0 around the truth: the difference within its posterior sd
    # (statistical error, ~0.002) and Monte Carlo error, at 4 standard errors
    assert abs(e.mean - 0.05) < 4 * np.hypot(e.sd, e.mcse)
    assert e.interval.low < 0.05 < e.interval.high and e.decision == "a_better"
    assert res.p_a_better > 0.9


def test_each_subtask_agrees_in_direction_with_the_one_task_bootstrap(
    fitted: ComparisonResult, graded: tuple[np.ndarray, np.ndarray]
) -> None:
    table = _table(*graded)
    frame = fitted.subtask_frame()
    for t in ("t0", "t2", "t4"):
        one = compare_items(table, "x", "y", task=t, rope=0.01, rng=2, baselines=False)
        assert one.method == "items_bootstrap"
        shrunk = float(frame.loc[frame["subtask"] == t, "mean"].iloc[0])
        assert one.estimate is not None and np.sign(shrunk) == np.sign(one.estimate.mean) == 1
        assert one.p_a_better > 0.5 and fitted.p_a_better > 0.5
    # a table of one subtask is the one-task route (the hierarchical model needs two)
    single = ItemTable.from_frame(table.frame.loc[lambda f: f.task == "t0"], metric="f1")
    assert compare_items(single, "x", "y", rng=2, baselines=False).method == "items_bootstrap"


def test_clusters_are_the_units() -> None:
    x, y = _scores(np.random.default_rng(2), (0.05, 0.03, 0.06), 30)
    table = _table(x, y, clusters=6)
    parts = table.subtasks("x", "y")
    scores = graded_scores(parts, "f1")
    assert scores.n_folds.tolist() == [6, 6, 6]  # 30 items in 6 clusters per subtask
    clusters = np.arange(30) % 6
    expected = [(x[0] - y[0])[clusters == c].mean() for c in range(6)]
    np.testing.assert_allclose(scores.differences[0], expected)
    res = compare_items(table, "x", "y", rope=0.01, draws=DRAWS, resamples=300, rng=4)
    assert res.method == "items_hierarchical_graded"
    assert res.settings["unit"] == "cluster" and res.settings["clusters"] == 18
    assert res.signature.startswith("method:items-hierarchical-graded-clusters|")
    text = render(res, "text")
    assert "(90 items in 18 clusters" in text and "per subtask (clusters independent" in text
    # binary items in clusters go this way too (the exact paired model takes no clusters)
    binary = _table((x > 0.5).astype(float), (y > 0.5).astype(float), clusters=6)
    assert graded_scores(binary.subtasks("x", "y"), "acc").n_folds.tolist() == [6, 6, 6]


def test_identical_subtask_gets_the_models_zero_variance_rule() -> None:
    # five subtasks: with three (one of them pinned by its zero variance) nu and std0 are
    # barely identified (tail ESS 188-275 of 4 x 1000 draws at seeds 1-2; 1102-1395 with five)
    x, y = _scores(np.random.default_rng(4), (0.05, 0.03, 0.04, 0.06, 0.02), 30)
    y[1] = x[1]  # both models score alike on every item of t1
    res = compare_items(_table(x, y), "x", "y", rope=0.01, draws=DRAWS, baselines=False, rng=1)
    assert res.settings["zero_variance_subtasks"] == ["t1"]
    assert res.settings["zero_variance_sd"] == pytest.approx(0.01 / np.sqrt(3))
    assert res.subtask_frame()["observed"][1] == 0.0


def test_what_stays_unsupported(graded: tuple[np.ndarray, np.ndarray]) -> None:
    table = _table(*graded)
    with pytest.raises(InputError, match="`model='exact'` .* task 't0' are not binary"):
        compare_items(table, "x", "y", model="exact")
    with pytest.raises(InputError, match="`model='bootstrap'` .* `pool='micro'`"):
        compare_items(table, "x", "y", model="bootstrap")
    x, y = graded
    one_item = _table(x[:, :1], y[:, :1])
    with pytest.raises(InputError, match="single item, .* at least 2 items per subtask"):
        compare_items(one_item, "x", "y")
    one_cluster = _table(x[:, :4], y[:, :4], clusters=1)
    with pytest.raises(InputError, match="single cluster"):
        compare_items(one_cluster, "x", "y")


def test_cli_graded_subtasks(
    graded: tuple[np.ndarray, np.ndarray], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = tmp_path / "graded.csv"
    _table(*graded).frame.to_csv(csv, index=False)
    plot, report = tmp_path / "forest.png", tmp_path / "report.html"
    args = ["items", str(csv), "--a", "x", "--b", "y", "--seed", "3", "--rope", "0.01"]
    fast = ["--draws", str(DRAWS), "--resamples", "300"]
    assert main([*args, *fast, "--plot", str(plot), "--report", str(report)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("hierarchical correlated-t model (rho = 0) of graded items over subtasks")
    assert "score (higher is better)" in out and "ROPE: -0.01 <= d <= 0.01" in out
    assert "method:items-hierarchical-graded|rope:0.01" in out
    assert plot.stat().st_size > 10_000
    written = report.read_text()
    assert "graded items over subtasks" in written and "method:items-hierarchical-graded" in written
    assert main([*args, "--model", "exact"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--model exact" in err
