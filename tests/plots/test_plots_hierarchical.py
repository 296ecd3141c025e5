"""Headless (Agg) tests of the simplex, next-difference and shrinkage plots.

The plots consume results; here the results are built from known draws (no MCMC),
so the numbers on the labels are checked exactly.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from _figures import legend_hides_nothing, x_tick_overlaps  # noqa: E402
from isbetter.inference.posterior import DrawsPosterior, HierarchicalPosterior, StudentTPosterior  # noqa: E402
from isbetter.plots import (  # noqa: E402
    plot_difference_posterior,
    plot_next_posterior,
    plot_shrinkage,
    plot_simplex,
    project_simplex,
    save_comparison_plot,
)
from isbetter.results import (  # noqa: E402
    ComparisonResult,
    HierarchicalResult,  # noqa: E402
    probabilities_from_masses,
)

N_DRAWS = 500


def _hierarchical(post, delta, observed, datasets, **extra):
    return HierarchicalResult.from_posterior(
        post,
        system_a="nbc",
        system_b="aode",
        rope=0.01,
        method="hierarchical",
        settings={"method": "hierarchical"},
        predictive=probabilities_from_masses(post.region_masses(0.01), "mean"),
        datasets=datasets,
        delta=delta,
        observed_means=observed,
        delta0=post.delta0,
        std0=post.std0,
        nu=post.nu,
        **extra,
    )


@pytest.fixture
def result(rng):
    post = HierarchicalPosterior(
        delta0=rng.normal(0.01, 0.004, N_DRAWS),
        std0=rng.uniform(0.005, 0.02, N_DRAWS),
        nu=rng.uniform(1, 20, N_DRAWS),
    )
    q = 6
    delta = rng.normal(0.01, 0.01, size=(N_DRAWS, q))
    return _hierarchical(post, delta, delta.mean(axis=0) + 0.005, tuple(f"ds{i}" for i in range(q)))


@pytest.fixture(autouse=True)
def _rc_unchanged():
    before = dict(matplotlib.rcParams)
    yield
    after = dict(matplotlib.rcParams)
    assert before == after, "a plot changed matplotlib.rcParams"
    plt.close("all")


def _texts(ax):
    return [t.get_text() for t in ax.texts]


def test_project_simplex_corners_and_centroid():
    pts = project_simplex(np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1 / 3, 1 / 3, 1 / 3]]))
    np.testing.assert_allclose(pts[:3], [[0, 0], [0.5, np.sqrt(3) / 2], [1, 0]])
    np.testing.assert_allclose(pts[3], [0.5, np.sqrt(3) / 6])


def test_plot_simplex_labels_points_and_boundaries(result):
    fig, ax = plt.subplots()
    out = plot_simplex(result, ax=ax)
    assert out is ax
    texts = _texts(ax)
    assert texts[0] == f"nbc better\np = {result.p_a_better:.3f}"
    assert texts[1] == f"aode better\np = {result.p_b_better:.3f}"
    assert texts[2] == f"ROPE (|d| <= 0.01)\np = {result.p_rope:.3f}"
    assert "500 draws (argmax count)" in ax.get_title()
    hexbin = ax.collections[0]
    assert hexbin.get_array().sum() == N_DRAWS  # every draw is in the density
    assert len(ax.lines) == 4  # outline + three region boundaries


def test_plot_simplex_title_names_the_method(result):
    """The triangle's title used to give only the systems and the number of draws."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5, 5))  # as save_comparison_plot draws it
    ax = plot_simplex(result, ax=fig.add_subplot())
    title = ax.get_title()
    assert title.startswith("Hierarchical correlated-t model\n")
    assert "nbc vs aode on score" in title
    fig.canvas.draw()
    box = ax.title.get_window_extent()
    assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1 and box.y1 <= fig.bbox.y1


def test_plot_simplex_new_figure_and_other_rope(result):
    ax = plot_simplex(result, rope=0.05)
    p = result.probabilities(rope=0.05)
    assert f"p = {p.p_rope:.3f}" in _texts(ax)[2]
    assert "0.05" in _texts(ax)[2]


def test_plot_next_posterior(result):
    fig, ax = plt.subplots()
    assert plot_next_posterior(result, ax=ax) is ax
    p = result.predictive
    assert f"P(nbc better) = {p.p_a_better:.3f}" in ax.get_title()
    assert "(predictive)" in ax.get_title()
    labels = ax.get_legend_handles_labels()[1]
    assert "ROPE ±0.01" in labels and "predictive density" in labels
    assert "score(nbc) − score(aode)" in ax.get_xlabel().replace("\n", " ")
    x, y = ax.lines[0].get_data()
    assert len(x) == 400 and np.all(y >= 0)


def test_plot_shrinkage(result):
    fig, ax = plt.subplots()
    assert plot_shrinkage(result, ax=ax) is ax
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"ds{i}" for i in range(6)]
    labels = ax.get_legend_handles_labels()[1]
    assert "observed mean" in labels and "posterior median, 95%" in labels
    ax2 = plot_shrinkage(result, max_datasets=3)
    assert len(ax2.get_yticklabels()) == 3


def _draws(rng, a, b):
    """A posterior given by draws of the difference, with no ROPE."""
    return ComparisonResult.from_posterior(
        DrawsPosterior(rng.normal(0, 0.02, 1000)),
        system_a=a,
        system_b=b,
        rope=0.0,
        method="f1",
        settings={},
    )


def test_plot_difference_posterior_for_closed_form_and_draws(rng):
    t = ComparisonResult.from_posterior(
        StudentTPosterior(df=9, loc=0.01, scale=0.01),
        system_a="a",
        system_b="b",
        rope=0.01,
        method="correlated_t",
        settings={},
    )
    ax = plot_difference_posterior(t)
    assert "P(a better)" in ax.get_title() and "ROPE ±0.01" in ax.get_legend_handles_labels()[1]
    d = _draws(rng, "a", "b")
    ax = plot_difference_posterior(d)
    assert sum(p.get_height() > 0 for p in ax.patches) > 5


@pytest.mark.parametrize("kind", ["hierarchical", "student"])
def test_save_comparison_plot_writes_png(result, tmp_path, kind):
    if kind == "student":
        result = ComparisonResult.from_posterior(
            StudentTPosterior(df=9, loc=0.01, scale=0.01),
            system_a="a",
            system_b="b",
            rope=0.01,
            method="correlated_t",
            settings={},
        )
    n_figs = len(plt.get_fignums())
    path = tmp_path / "plot.png"
    save_comparison_plot(result, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(plt.get_fignums()) == n_figs  # no pyplot figure left open


def _nbc_vs_aode_one_data_set(**extra):
    """The correlated t-test's posterior of nbc vs aode on one data set (closed form)."""
    return ComparisonResult.from_posterior(
        StudentTPosterior(df=9, loc=-0.019, scale=0.0056),
        system_a="nbc",
        system_b="aode",
        rope=0.01,
        method="correlated_t",
        settings={},
        **extra,
    )


def test_legends_sit_beside_the_data(result):
    """The legends sat on the ROPE's shading ("upper right" over a ROPE to the right)."""
    t = _nbc_vs_aode_one_data_set()
    for ax in (plot_next_posterior(result), plot_shrinkage(result), plot_difference_posterior(t)):
        assert legend_hides_nothing(ax), ax.get_title()
        plt.close(ax.figure)


def test_triangle_is_readable_at_print_size(result, tmp_path):
    """Issue 29: the triangle was saved 480-500 pixels wide, blurred at print size; the
    figures the plots make and save are 200 dpi: at least 1000 pixels across."""
    import struct

    def width_height(path):
        head = path.read_bytes()[:24]
        return struct.unpack(">II", head[16:24])

    ax = plot_simplex(result)  # as the README saves it: ax.figure.savefig("triangle.png")
    ax.figure.savefig(tmp_path / "readme.png")
    plt.close(ax.figure)
    save_comparison_plot(result, tmp_path / "cli.png")  # isbetter cv --plot
    for name in ("readme.png", "cli.png"):
        width, height = width_height(tmp_path / name)
        assert width >= 1000 and height >= 900, (name, width, height)


def _long_forest(q=54):
    """A forest from -0.13 to +0.04 (ticks every 0.025 by default: -0.125, -0.100, ...)."""
    rng = np.random.default_rng(0)
    post = HierarchicalPosterior(
        delta0=rng.normal(-0.01, 0.004, N_DRAWS),
        std0=rng.uniform(0.02, 0.03, N_DRAWS),
        nu=rng.uniform(1, 20, N_DRAWS),
    )
    centres = np.linspace(-0.13, 0.04, q)
    delta = centres + rng.normal(0, 0.007, size=(N_DRAWS, q))
    names = tuple(f"high_school_european_history_{i}" for i in range(q))
    return _hierarchical(post, delta, centres, names, metric="accuracy")


@pytest.mark.parametrize("width", [6.0, 5.0, 4.0, 3.5])
def test_forest_x_tick_labels_do_not_overlap(width):
    """The forest's x tick labels ran into each other (−0.150−0.125−0.100...) in its own
    6-inch figure beside long data set or subtask names; now there are as many as fit."""
    from matplotlib.figure import Figure

    res = _long_forest()
    fig = Figure(figsize=(width, 13), layout="constrained")
    ax = plot_shrinkage(res, ax=fig.add_subplot())
    assert not x_tick_overlaps(ax)
    assert len([t for t in ax.get_xticklabels() if t.get_text()]) >= 2
    ax = plot_shrinkage(res)  # its own figure, sized to the data sets
    assert not x_tick_overlaps(ax)


def test_every_plot_of_one_comparison_names_the_metric_its_direction_and_the_rope(result, rng):
    """The posterior's axis said "mean difference, nbc − aode": of which metric, which
    way round, and was higher better? Now as the reports' metric line says it."""
    d = "d = score(nbc) − score(aode), score: higher is better"
    t = _nbc_vs_aode_one_data_set(metric="error", higher_is_better=False)
    draws = _draws(rng, "nbc", "aode")
    axes = {
        "closed form": (plot_difference_posterior(t), "d = error(aode) − error(nbc), error: lower"),
        "draws": (plot_difference_posterior(draws), d),
        "masses": (plot_difference_posterior(result), d),
        "next": (plot_next_posterior(result), d),
        "forest": (plot_shrinkage(result), d),
    }
    for name, (ax, text) in axes.items():
        label = ax.get_xlabel().replace("\n", " ")
        assert text in label, (name, label)
        rope = "no ROPE" if name == "draws" else "ROPE ±0.01"
        legend = " ".join(ax.get_legend_handles_labels()[1]) if name != "masses" else label
        assert rope in legend or "d > 0.01" in legend, (name, legend)
    assert "on score (higher is better)" in plot_simplex(result).get_title()
