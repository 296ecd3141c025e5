"""The critical-difference diagram (Demšar 2006, Fig. 1) and its place in the ranking plot."""

from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from matplotlib.image import imread

from isbetter import InputError, friedman_nemenyi, predictions_from_arrays, rank, read_scores
from isbetter.plots import plot_cd_diagram
from isbetter.plots.cd import cd_size
from isbetter.plots.ranking import save_ranking_plot

TABLE6 = Path(__file__).resolve().parents[2] / "data" / "demsar2006" / "table6_auc.csv"
GROUP_WIDTH = 3.2  # the thick bars of the groups


@pytest.fixture(scope="module")
def demsar():
    auc = pd.read_csv(TABLE6, index_col="dataset")
    auc.loc["voting", "C4.5+cf"] += 1e-4  # Demšar's tie-break (tests/cv/test_friedman.py)
    return friedman_nemenyi(auc)


@pytest.fixture(scope="module")
def ranking():
    """Four systems on 12 data sets, ranked by the sign test (no MCMC)."""
    g = np.random.default_rng(4)
    rows = [
        (f"d{d}", s, f, 0.7 + 0.01 * i + g.normal(0, 0.02))
        for d in range(12)
        for i, s in enumerate(["w", "x", "y", "z"])
        for f in range(3)
    ]
    df = pd.DataFrame(rows, columns=["dataset", "system", "fold", "acc"])
    return rank(read_scores(df, run=None, score="acc"), rope=0.01, method="sign", jobs=1, rng=1)


@pytest.fixture(autouse=True)
def _no_leaks():
    before, figs = dict(matplotlib.rcParams), set(plt.get_fignums())
    yield
    assert dict(matplotlib.rcParams) == before
    assert set(plt.get_fignums()) == figs


def _draw(baselines, **kwargs):
    fig = Figure(figsize=cd_size(baselines, kwargs.get("alpha", 0.05)), layout="constrained")
    ax = plot_cd_diagram(baselines, ax=fig.add_subplot(), **kwargs)
    fig.canvas.draw()
    return ax


def _bars(ax):
    return [line for line in ax.lines if line.get_linewidth() == GROUP_WIDTH]


@pytest.mark.parametrize(
    ("alpha", "groups"),
    [
        (0.05, [(1.964, 3.143)]),
        (0.10, [(1.964, 2.893), (2.893, 3.143)]),
    ],
)
def test_demsar_diagram(demsar, alpha, groups):
    """Systems labelled with their mean ranks, best half on the right, one bar per group."""
    ax = _draw(demsar, alpha=alpha)
    texts = {t.get_text(): t for t in ax.texts}
    for label in ("C4.5 (3.14)", "C4.5+m (2.00)", "C4.5+cf (2.89)", "C4.5+m+cf (1.96)"):
        assert label in texts
    assert f"CD = {demsar.critical_difference(alpha).cd:.2f} (α = {alpha:g})" in texts
    assert {str(r) for r in range(1, 5)} <= set(texts)
    # rank 1 on the right: the best two are labelled right of the axis, the others left
    x = {s.split(" (")[0]: t.get_position()[0] for s, t in texts.items() if " (" in s}
    tick = {r: texts[str(r)].get_position()[0] for r in range(1, 5)}
    assert tick[4] < tick[3] < tick[2] < tick[1]
    assert min(x["C4.5+m"], x["C4.5+m+cf"]) > tick[1] > tick[4] > max(x["C4.5"], x["C4.5+cf"])
    # each bar spans its group's mean ranks (with a small overhang), to the axis' scale
    per_rank = (tick[1] - tick[4]) / 3
    spans = sorted(sorted(b.get_xdata()) for b in _bars(ax))
    assert len(spans) == len(groups)
    for (lo, hi), (best, worst) in zip(spans, sorted(groups, key=lambda g: -g[1]), strict=True):
        assert lo < tick[4] - (worst - 4) * per_rank + 1e-9 < hi
        assert hi - lo == pytest.approx((worst - best) * per_rank, abs=0.02)


def test_no_bar_when_every_pair_differs():
    base = friedman_nemenyi(np.tile([4.0, 3.0, 2.0, 1.0], (60, 1)))
    assert all(len(g) == 1 for g in base.critical_difference(0.05).groups)
    assert _bars(_draw(base)) == []


def test_ranking_diagram_and_errors(ranking):
    ax = _draw(ranking.baselines["acc"])
    assert any(t.get_text().startswith("Mean ranks on 12 data sets") for t in ax.texts)
    fig = Figure()
    titled = plot_cd_diagram(ranking, ax=fig.add_subplot())
    assert any(t.get_text().startswith("acc: mean ranks on 12") for t in titled.texts)
    with pytest.raises(InputError, match="No metric 'f1' in this ranking"):
        plot_cd_diagram(ranking, "f1")
    with pytest.raises(InputError, match="`metric` is for a ranking"):
        plot_cd_diagram(ranking.baselines["acc"], "acc")
    with pytest.raises(InputError, match="no critical difference at 0.01"):
        plot_cd_diagram(ranking, alpha=0.01)
    g = np.random.default_rng(0)
    gold = g.integers(0, 2, 200)
    flips = {s: np.where(g.random(200) < 0.2, 1 - gold, gold) for s in ("a", "b")}
    one_test_set = rank(predictions_from_arrays(gold, flips), jobs=1, rng=1, draws=1000)
    with pytest.raises(InputError, match="needs scores on several data sets"):
        plot_cd_diagram(one_test_set)


def test_ranking_plot_has_the_cd_diagram_below(ranking, tmp_path):
    """`rank --plot`: the Hasse diagram and the heatmap, and under them the CD diagram."""
    from dataclasses import replace

    with_cd = imread(save_ranking_plot(ranking, tmp_path / "with.png", dpi=50))
    without = imread(save_ranking_plot(replace(ranking, baselines={}), tmp_path / "no.png", dpi=50))
    extra = with_cd.shape[0] - without.shape[0]
    assert extra == pytest.approx(cd_size(ranking.baselines["acc"])[1] * 50, abs=15)
    np.testing.assert_array_equal(with_cd.shape[1:], without.shape[1:])
