"""Rank probabilities and P(best) of a ranking from one model (issue 19, item 4).

On a RankingResult built by hand (no model is fitted): its ``joint`` block comes from
:func:`~isbetter.inference.ranks.rank_summary` on simulated effects.
"""

import dataclasses
import itertools

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.patches import Rectangle

from isbetter.core.errors import InputError
from isbetter.inference.ranks import MONTE_CARLO_INTERVAL, rank_summary
from isbetter.plots._ranking_common import contrast
from isbetter.plots.ranking import plot_pairwise_heatmap, save_ranking_plot
from isbetter.plots.ranks import SHOWN, plot_p_best, plot_rank_probabilities
from isbetter.ranking.result import RankingResult, orders_of, relations_of
from isbetter.results.comparison import ComparisonResult

#: given in an order that is not the rank order; true effects: zeta best, alpha worst
SYSTEMS = ("beta", "alpha", "zeta", "gamma")
EFFECTS = {"beta": 0.5, "alpha": 0.0, "zeta": 1.0, "gamma": 0.55}


def make_result():
    g = np.random.default_rng(4)
    draws = g.normal([EFFECTS[s] for s in SYSTEMS], 0.06, size=(4000, len(SYSTEMS)))
    joint = {"score": rank_summary(draws, SYSTEMS, rope=0.1, chains=4)}
    pairs = []
    for (i, a), (j, b) in itertools.combinations(enumerate(SYSTEMS), 2):
        d = draws[:, i] - draws[:, j]
        pa, pb = float(np.mean(d > 0.1)), float(np.mean(d < -0.1))
        pairs.append(
            ComparisonResult(
                method="joint",
                system_a=a,
                system_b=b,
                metric="score",
                higher_is_better=True,
                rope=0.1,
                p_a_better=pa,
                p_rope=1.0 - pa - pb,
                p_b_better=pb,
                counting="argmax",
                ranking_metric="score",
            )
        )
    relations = relations_of(pairs, "likelihood", 0.95, 0.05)
    return RankingResult(
        systems=SYSTEMS,
        metrics=("score",),
        rule="likelihood",
        threshold=0.95,
        margin=0.05,
        pairs=tuple(pairs),
        relations=relations,
        orders=orders_of(SYSTEMS, pairs, relations, joint),
        settings={"seed": 1},
        joint=joint,
    )


@pytest.fixture(scope="module")
def result():
    return make_result()


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_rank_probabilities_rows_in_expected_rank_order(result):
    j = result.joint["score"]
    ax = plot_rank_probabilities(result)
    order = ["zeta", "gamma", "beta", "alpha"]
    assert list(j.by_expected_rank()) == order
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [f"{s} ({j.expected_rank[s]:.2f})" for s in order]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3", "4"]
    image = np.asarray(ax.images[0].get_array())
    assert image.shape == (4, 4)
    for i, s in enumerate(order):
        assert image[i] == pytest.approx(j.rank_probabilities[s])
    assert image.sum(axis=1) == pytest.approx(1.0)  # each system has some rank
    written = {(round(t.get_position()[1]), round(t.get_position()[0])): t for t in ax.texts}
    for (i, r), t in written.items():
        assert t.get_text() == f"{image[i, r]:.2f}"
    assert len(written) == int((image >= SHOWN).sum())  # blank below 0.005
    assert ax.get_title().replace("\n", " ") == (
        "score: P(rank), Joint correlated model, mean effects"
    )
    assert "95% rank interval" in ax.get_xlabel() and "effects" in ax.get_xlabel()


def test_rank_intervals_are_outlined(result):
    j = result.joint["score"]
    ax = plot_rank_probabilities(result)
    boxes = [p for p in ax.patches if isinstance(p, Rectangle) and not p.get_fill()]
    assert len(boxes) == 4
    for i, (s, box) in enumerate(zip(j.by_expected_rank(), boxes, strict=True)):
        lo, hi = j.rank_interval[s]
        assert box.get_xy() == (lo - 1.5, i - 0.5) and box.get_width() == hi - lo + 1


def test_rank_probabilities_numbers_are_legible(result):
    """Every number at least 9 pt and 4.5:1 (WCAG AA) against its cell, as the pairwise
    heatmap's; a ranking of 12 systems too."""
    many = tuple(f"s{i}" for i in range(12))
    draws = np.random.default_rng(1).normal(np.linspace(0, 1, 12), 0.15, size=(2000, 12))
    big = dataclasses.replace(result, joint={"score": rank_summary(draws, many)})
    for res in (result, big):
        ax = plot_rank_probabilities(res)
        cmap = ax.images[0].get_cmap()
        image = np.asarray(ax.images[0].get_array())
        for t in ax.texts:
            x, y = t.get_position()
            assert t.get_fontsize() >= 9
            assert contrast(t.get_color(), cmap(image[round(y), round(x)])) >= 4.5, t.get_text()
        plt.close(ax.figure)


def test_p_best_bars_and_their_intervals(result):
    j = result.joint["score"]
    ax = plot_p_best(result)
    order = list(j.by_expected_rank())
    assert [t.get_text() for t in ax.get_yticklabels()] == order
    bars = ax.patches
    assert [b.get_width() for b in bars] == pytest.approx([j.p_best[s] for s in order])
    segments = ax.collections[0].get_segments()
    for s, seg in zip(order, segments, strict=True):
        (x0, _), (x1, _) = seg
        assert (x0, x1) == pytest.approx(j.p_best_interval[s])
    values = [t.get_text() for t in ax.texts]
    assert values == [f"{j.p_best[s]:.3f}" for s in order]
    assert MONTE_CARLO_INTERVAL in " ".join(ax.get_xlabel().split())
    assert "P(largest effect)" in ax.get_xlabel()
    assert ax.xaxis.label.get_fontsize() >= 9 and all(t.get_fontsize() >= 9 for t in ax.texts)


def test_p_best_of_a_summary_saved_without_intervals(result):
    j = dataclasses.replace(result.joint["score"], p_best_interval={}, p_best_interval_kind="")
    ax = plot_p_best(dataclasses.replace(result, joint={"score": j}))
    assert not ax.collections  # no error bars
    assert "no interval saved" in ax.get_xlabel()


def test_plackett_luce_labels_say_what_p_best_is(result):
    """P(best) is P(largest weight), the bars; P(wins next data set) = E[w] is its own
    quantity, a diamond per system with its credible interval (issue 29)."""
    base = result.joint["score"]
    wins = {s: 0.1 + 0.2 * i for i, s in enumerate(base.systems)}
    j = dataclasses.replace(
        base,
        method="plackett_luce",
        p_wins_next=wins,
        p_wins_next_interval={s: (w - 0.05, w + 0.05) for s, w in wins.items()},
        p_wins_next_interval_kind="95% credible interval of w_k",
    )
    res = dataclasses.replace(result, joint={"score": j})
    ax = plot_p_best(res)
    label = " ".join(ax.get_xlabel().split())
    assert "P(best): P(largest weight)" in label and "P(wins next data set) = E[w]" in label
    assert "credible interval of w_k" in label
    order = list(j.by_expected_rank())
    assert [b.get_width() for b in ax.patches] == pytest.approx([j.p_best[s] for s in order])
    (diamonds,) = [line for line in ax.lines if line.get_marker() == "D"]
    assert list(diamonds.get_xdata()) == pytest.approx([wins[s] for s in order])
    assert "of the weights" in plot_rank_probabilities(res).get_xlabel()


def test_a_pairwise_ranking_has_no_rank_pictures(result):
    pairwise = dataclasses.replace(result, joint={})
    for plot in (plot_rank_probabilities, plot_p_best):
        with pytest.raises(InputError, match="method='plackett-luce'"):
            plot(pairwise)
    with pytest.raises(InputError, match="No metric 'f1'"):
        plot_p_best(result, "f1")


def test_pairwise_heatmap_rows_in_rank_order(result):
    """The pairwise heatmap beside them has its rows in the same (rank) order."""
    ax = plot_pairwise_heatmap(result)
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert rows == list(result.joint["score"].by_expected_rank())
    assert result.order() == "alpha < beta ≈ gamma < zeta"


def test_save_ranking_plot_draws_the_rank_pictures(result, tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    saved = []
    monkeypatch.setattr(Figure, "savefig", lambda fig, *a, **k: saved.append(fig))
    save_ranking_plot(result, tmp_path / "r.png")
    titles = [ax.get_title() for ax in saved[0].axes]
    assert any(t.startswith("score: P(rank)") for t in titles)
    assert any(t.startswith("score: P(best)") for t in titles)
    saved.clear()
    save_ranking_plot(dataclasses.replace(result, joint={}), tmp_path / "p.png")
    assert not any("P(best)" in ax.get_title() for ax in saved[0].axes)


def test_rcparams_untouched(result):
    before = dict(matplotlib.rcParams)
    plot_p_best(result)
    plot_rank_probabilities(result)
    assert dict(matplotlib.rcParams) == before
