"""The forest plot of the items' hierarchical model (a result built by hand: no fit)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from _figures import legend_hides_nothing, x_tick_overlaps  # noqa: E402
from isbetter.items.hierarchical.population import NextSubtaskPosterior  # noqa: E402
from isbetter.plots.items import plot_subtasks  # noqa: E402
from isbetter.results.items import ItemsHierarchicalResult  # noqa: E402


def _result(q=5, draws=400):
    rng = np.random.default_rng(0)
    counts = rng.integers(5, 60, size=(q, 4))
    observed = (counts[:, 1] - counts[:, 2]) / counts.sum(axis=1)
    delta = observed + 0.02 * rng.standard_normal((draws, q))
    hyper = {
        "nu": np.full(draws, 5.0),
        "mu": rng.normal(0.2, 0.05, draws),
        "sigma": np.full(draws, 0.3),
        "mu_phi": np.full(draws, -1.0),
        "tau_phi": np.full(draws, 0.2),
    }
    return ItemsHierarchicalResult(
        system_a="big",
        system_b="small",
        rope=0.01,
        p_a_better=0.6,
        p_rope=0.1,
        p_b_better=0.3,
        method="items_hierarchical",
        posterior=NextSubtaskPosterior(**hyper),
        counting="argmax",
        metric="accuracy",
        subtasks=tuple(f"subject {i}" for i in range(q)),
        counts=counts,
        delta=delta,
        population_mean=delta.mean(axis=1),
        hyper=hyper,
    )


def test_plot_subtasks_draws_every_subtask_with_its_hdi_and_observed_difference():
    res = _result()
    fig, ax = plt.subplots()
    assert plot_subtasks(res, ax=ax) is ax
    assert [t.get_text() for t in ax.get_yticklabels()] == list(res.subtasks)
    frame = res.subtask_frame()
    lines = ax.collections[-1].get_segments()  # the HDIs, top to bottom
    np.testing.assert_allclose([s[0][0] for s in lines], frame["interval_low"])
    np.testing.assert_allclose([s[1][0] for s in lines], frame["interval_high"])
    crosses = [line for line in ax.get_lines() if line.get_marker() == "x"][0]
    np.testing.assert_allclose(crosses.get_xdata(), res.observed_differences)
    plt.close(fig)
    ax = plot_subtasks(res)  # a figure of its own, sized to the subtasks
    assert legend_hides_nothing(ax)
    plt.close(ax.figure)


def test_plot_subtasks_limits_the_subtasks_shown():
    ax = plot_subtasks(_result(q=8), max_subtasks=3)
    assert len(ax.get_yticklabels()) == 3
    plt.close(ax.figure)


def test_plot_subtasks_names_the_metric_and_its_ticks_do_not_overlap():
    """The forest's axis said "difference in accuracy, big − small": now d as the reports
    say it, the metric's direction; its x tick labels never run into each other."""
    ax = plot_subtasks(_result(q=40))
    label = ax.get_xlabel().replace("\n", " ")
    assert "d = accuracy(big) − accuracy(small), accuracy: higher is better" in label
    assert "ROPE ±0.01" in ax.get_legend_handles_labels()[1]
    assert not x_tick_overlaps(ax)
    plt.close(ax.figure)
