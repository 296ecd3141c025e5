"""Plots of a ranking, on a RankingResult built by hand (no model is fitted)."""

import dataclasses
import itertools
from dataclasses import replace

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch

from isbetter.core.errors import InputError
from isbetter.plots.hasse import hasse_size
from isbetter.plots.ranking import (
    plot_hasse,
    plot_pairwise_heatmap,
    plot_triangle_grid,
    save_ranking_plot,
)
from isbetter.ranking.order import partial_order
from isbetter.ranking.result import RankingResult
from isbetter.results.comparison import ComparisonResult

SYSTEMS = ("TnT", "Collins", "LAPOS", "NLP4J", "Flair")

# relation of A to B (A before B in SYSTEMS) and its probabilities (A better, ROPE, B better)
PROBS = {
    "a_better": (0.96, 0.03, 0.01),
    "b_better": (0.02, 0.05, 0.93),
    "equivalent": (0.08, 0.83, 0.09),
    "b_at_least": (0.07, 0.45, 0.48),
}
ACCURACY = {  # likelihood rule: TnT < Collins ≈ LAPOS < {NLP4J, Flair}, NLP4J ≲ Flair
    ("TnT", "Collins"): "b_better",
    ("TnT", "LAPOS"): "b_better",
    ("TnT", "NLP4J"): "b_better",
    ("TnT", "Flair"): "b_better",
    ("Collins", "LAPOS"): "equivalent",
    ("Collins", "NLP4J"): "b_better",
    ("Collins", "Flair"): "b_better",
    ("LAPOS", "NLP4J"): "b_better",
    ("LAPOS", "Flair"): "b_better",
    ("NLP4J", "Flair"): "b_at_least",
}
CYCLE = {  # a second metric with a cycle TnT < Collins < LAPOS < TnT
    **ACCURACY,
    ("TnT", "Collins"): "b_better",
    ("Collins", "LAPOS"): "b_better",
    ("TnT", "LAPOS"): "a_better",
}


def _summary(a, b, metric, rel, tweak):
    pa, pr, pb = PROBS[rel]
    pa, pb = pa - tweak, pb + tweak  # every pair its own numbers
    return ComparisonResult(
        method="hierarchical",
        system_a=a,
        system_b=b,
        metric=metric,
        higher_is_better=True,
        rope=0.01,
        p_a_better=pa,
        p_rope=pr,
        p_b_better=pb,
        counting="argmax",
        ranking_metric=metric,
    )


def make_result(rule="likelihood"):
    rng = np.random.default_rng(3)
    pairs, relations, orders, simplex = [], {}, {}, {}
    for metric, rels in (("accuracy", ACCURACY), ("cycle", CYCLE)):
        relations[metric], simplex[metric] = {}, {}
        for n, (a, b) in enumerate(itertools.combinations(SYSTEMS, 2)):
            rel = rels[(a, b)]
            s = _summary(a, b, metric, rel, 0.001 * n)
            pairs.append(s)
            relations[metric][(a, b)] = rel
            alpha = 40 * np.array([s.p_a_better, s.p_rope, s.p_b_better]) + 0.5
            simplex[metric][(a, b)] = rng.dirichlet(alpha, size=200).round(4).tolist()
        orders[metric] = partial_order(SYSTEMS, relations[metric])
    return RankingResult(
        systems=SYSTEMS,
        metrics=("accuracy", "cycle"),
        rule=rule,
        threshold=0.95,
        margin=0.05,
        pairs=tuple(pairs),
        relations=relations,
        orders=orders,
        simplex=simplex,
        settings={"seed": 1},
    )


@pytest.fixture(scope="module")
def result():
    return make_result()


@pytest.fixture(autouse=True)
def _no_leaks():
    """Every test leaves rcParams as they were and closes its figures."""
    before, figs = dict(matplotlib.rcParams), set(plt.get_fignums())
    yield
    assert dict(matplotlib.rcParams) == before
    assert set(plt.get_fignums()) == figs


def _arrows(ax):
    return [p for p in ax.patches if isinstance(p, FancyArrowPatch)] + [
        c.arrow_patch for c in ax.texts if getattr(c, "arrow_patch", None) is not None
    ]


def test_hasse_nodes_arrows_and_title(result):
    order = result.orders["accuracy"]
    assert order.line == "TnT < Collins ≈ LAPOS < {NLP4J, Flair}"
    fig, ax = plt.subplots()
    assert plot_hasse(result, ax=ax) is ax
    fig.canvas.draw()  # the arrows are placed at draw time
    boxes = [t for t in ax.texts if t.get_bbox_patch() is not None]
    assert sorted(t.get_text() for t in boxes) == ["Collins ≈ LAPOS", "Flair", "NLP4J", "TnT"]
    arrows = _arrows(ax)
    assert len(arrows) == len(order.hasse_edges) + 1  # + the dashed NLP4J ≲ Flair
    dashed = [a for a in arrows if a.get_linestyle() not in ("-", "solid")]
    assert len(dashed) == 1
    assert "accuracy" in ax.get_title() and "likelihood" in ax.get_title()
    assert "inconsisten" not in ax.get_title()
    # worst at the bottom, best on top: NLP4J and Flair side by side in the top layer
    y = {t.get_text(): t.get_position()[1] for t in boxes}
    x = {t.get_text(): t.get_position()[0] for t in boxes}
    assert y["TnT"] < y["Collins ≈ LAPOS"] < y["NLP4J"] == y["Flair"]
    assert x["NLP4J"] != x["Flair"]
    # arrows from the worse to the better: up, or sideways for NLP4J ≲ Flair
    anns = [t for t in ax.texts if getattr(t, "arrow_patch", None) is not None]
    ends = {(a.anncoords.get_text(), a.xycoords.get_text()) for a in anns}
    assert ends == {*order.hasse_edges, ("NLP4J", "Flair")}
    for a in anns:
        assert a.xycoords.get_position()[1] >= a.anncoords.get_position()[1]
    plt.close(fig)


def test_hasse_reports_inconsistencies_in_red():
    res = make_result(rule="threshold")
    order = res.orders["cycle"]
    assert order.inconsistencies
    ax = plot_hasse(res, "cycle")
    assert "inconsistenc" in ax.get_title() and "threshold rule (P ≥ 0.95)" in ax.get_title()
    note = ax.xaxis.label
    assert "cycle" in note.get_text() and matplotlib.colors.to_hex(note.get_color()) == "#c0392b"
    assert plot_hasse(res, "accuracy").get_xlabel() == ""
    plt.close("all")
    with pytest.raises(InputError, match="metric"):
        plot_hasse(res, "bleu")


def test_triangle_grid(result):
    fig = plot_triangle_grid(result)
    k = len(SYSTEMS)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == k * (k - 1) // 2
    assert all(len(ax.collections) == 1 for ax in fig.axes)  # the points of each pair
    assert all(len(ax.collections[0].get_offsets()) == 200 for ax in fig.axes)
    texts = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    titles = " ".join(ax.get_title() for ax in fig.axes)
    for s in SYSTEMS[1:]:
        assert s in texts  # row names
    for s in SYSTEMS[:-1]:
        assert s in titles  # column names
    plt.close(fig)


def test_triangle_grid_mirrors_points(result):
    """The cell Flair (row) vs TnT (column) shows the stored (TnT, Flair) points mirrored."""
    fig = plot_triangle_grid(result, systems=("TnT", "Flair"))
    (ax,) = fig.axes
    stored = np.asarray(result.simplex["accuracy"][("TnT", "Flair")])
    corners = np.array([[0.0, 0.0], [0.5, np.sqrt(3) / 2], [1.0, 0.0]])
    np.testing.assert_allclose(ax.collections[0].get_offsets(), stored[:, ::-1] @ corners)
    # Flair better is the bottom-left corner, with P(Flair better)
    p = result.pair("Flair", "TnT")
    assert any(f"{p.p_a_better:.2f}" in t.get_text() and "Flair" in t.get_text() for t in ax.texts)
    plt.close(fig)
    with pytest.raises(InputError):
        plot_triangle_grid(result, systems=("Flair", "GPT"))


def test_pairwise_heatmap_values(result):
    fig, ax = plt.subplots()
    assert plot_pairwise_heatmap(result, "accuracy", ax=ax, by_rank=False) is ax
    values = np.ma.getdata(ax.collections[0].get_array()).reshape(len(SYSTEMS), -1)
    mask = np.ma.getmaskarray(ax.collections[0].get_array()).reshape(len(SYSTEMS), -1)
    assert mask.diagonal().all() and mask.sum() == len(SYSTEMS)
    for i, a in enumerate(SYSTEMS):
        for j, b in enumerate(SYSTEMS):
            if i != j:
                assert values[i, j] == pytest.approx(result.pair(a, b).p_a_better)
    texts = [t.get_text() for t in ax.texts]
    p = result.pair("Collins", "LAPOS")
    assert f"{p.p_a_better:.2f}" in texts and f"(≈{p.p_rope:.2f})" in texts
    assert len(texts) == 2 * len(SYSTEMS) * (len(SYSTEMS) - 1)
    assert [t.get_text() for t in ax.get_yticklabels()] == list(SYSTEMS)
    cbar = fig.axes[-1]
    assert "better" in cbar.get_ylabel()
    plt.close(fig)


def test_pairwise_heatmap_by_rank(result):
    """Rows and columns in rank order, not the ranking's (alphabetical) order: the top
    layer (NLP4J ≲ Flair: Flair first), then Collins ≈ LAPOS, the more often better first."""
    ax = plot_pairwise_heatmap(result)
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert rows == ["Flair", "NLP4J", "LAPOS", "Collins", "TnT"]
    assert [t.get_text() for t in ax.get_xticklabels()] == rows
    p = result.pair("LAPOS", "Collins")
    assert p.p_a_better > p.p_b_better  # what puts LAPOS first in its group
    plt.close(ax.figure)


def _wcag_contrast(a, b):
    def lum(rgb):
        c = np.asarray(matplotlib.colors.to_rgb(rgb))
        c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
        return float(c @ [0.2126, 0.7152, 0.0722])

    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_pairwise_heatmap_numbers_are_legible():
    """Both numbers of a cell are at least 9 pt and contrast 4.5:1 (WCAG AA) with the cell,
    the mid blues (0.6-0.75) included, where white text had 3.2:1."""
    res = make_result()
    probs = np.linspace(0.55, 0.8, len(res.pairs))
    pairs = tuple(
        dataclasses.replace(p, p_a_better=float(q), p_rope=0.9 - q, p_b_better=0.1)
        for p, q in zip(res.pairs, probs, strict=True)
    )
    res = dataclasses.replace(res, pairs=pairs)
    ax = plot_pairwise_heatmap(res, "accuracy")
    texts = ax.texts
    assert len(texts) == 2 * 5 * 4
    blues = matplotlib.colormaps["Blues"]
    for value, rope in zip(texts[::2], texts[1::2], strict=True):
        cell = blues(float(value.get_text()))
        for t in (value, rope):
            assert t.get_fontsize() >= 9, t.get_text()
            assert _wcag_contrast(t.get_color(), cell) >= 4.5, (value.get_text(), t.get_color())
    plt.close(ax.figure)


def test_hasse_lists_every_inconsistency_in_full():
    """Long messages are wrapped, never cut with '…', and the figure grows to hold them."""
    res = make_result()
    order = res.orders["accuracy"]
    long = tuple(
        f"≈ is not transitive: system-{i} ≈ system-{i + 1}, but system-{i} ≈ a-long-group and "
        f"system-{i + 1} cannot form one group (a strict relation between their members)"
        for i in range(6)
    )
    wordy = dataclasses.replace(
        res, orders={**res.orders, "accuracy": replace(order, inconsistencies=long)}
    )
    fig = Figure(figsize=hasse_size(wordy, "accuracy"), layout="constrained")
    ax = plot_hasse(wordy, "accuracy", ax=fig.add_subplot())
    text = ax.get_xlabel()
    assert "…" not in text and "more" not in text
    flat = " ".join(text.split())
    for message in long:
        assert " ".join(message.split()) in flat
    width_in = ax.get_position().width * fig.get_figwidth()
    assert max(len(line) for line in text.splitlines()) * 0.55 * 8.33 / 72 <= width_in
    assert hasse_size(wordy, "accuracy")[1] > hasse_size(res, "accuracy")[1] + 6 * 0.16


def test_save_ranking_plot(result, tmp_path):
    out = save_ranking_plot(result, tmp_path / "rank.png")
    assert out == tmp_path / "rank.png"
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    one = save_ranking_plot(result, str(tmp_path / "one.pdf"), metric="cycle")
    assert one.stat().st_size > 1000


def test_ranking_plots_name_what_their_relations_are_about(tmp_path):
    """Issue 29: every plot of a ranking says which quantity its relations are about."""
    from _joint_data import score_table, small_joint_rank, study_scores
    from isbetter.plots import plot_hasse, plot_pairwise_heatmap, plot_triangle_grid
    from isbetter.plots.ranks import plot_p_best

    table = score_table(study_scores(np.random.default_rng(5), [0.0, 0.001, 0.05], q=6))
    joint = small_joint_rank(table)
    assert "acc, next data set: partial order" in plot_hasse(joint).get_title()
    assert "acc, next data set: P(row better" in plot_pairwise_heatmap(joint).get_title()
    assert "pairwise posteriors, next data set" in plot_triangle_grid(joint)._suptitle.get_text()
    assert plot_p_best(joint).get_title().endswith("Joint correlated model, mean effects")
    plt.close("all")
