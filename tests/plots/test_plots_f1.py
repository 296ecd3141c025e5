from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from _figures import legend_hides_nothing, x_tick_overlaps
from isbetter import InputError
from isbetter.f1.compare import compare_f1
from isbetter.f1.power import SIGIR_SCENARIO_A, power_analysis
from isbetter.inference.decisions import symbol
from isbetter.plots.f1 import plot_f1_posterior, plot_f1_trace, plot_savage_dickey, save_f1_plot
from isbetter.plots.power import plot_power


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(1)
    gold = rng.integers(0, 2, 1500)
    a = np.where(rng.random(1500) < 0.85, gold, 1 - gold)
    b = np.where(rng.random(1500) < 0.8, gold, 1 - gold)
    df = pd.DataFrame({"gold": gold, "svm": a, "nb": b})
    return compare_f1(df, rng=1, draws=4000, baselines=False)


def test_posterior_plot(result):
    before = dict(matplotlib.rcParams)
    fig, ax = plt.subplots()
    out = plot_f1_posterior(result, ax=ax)
    assert out is ax
    assert "svm" in ax.get_xlabel() and "nb" in ax.get_xlabel()
    assert symbol(result.row()["decision"]) in ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("HDI" in t for t in labels) and any("ROPE" in t for t in labels)
    assert dict(matplotlib.rcParams) == before
    plt.close(fig)


def test_savage_dickey_and_trace_plots(result):
    ax = plot_savage_dickey(result)
    assert "BF01" in ax.get_title()
    assert len(ax.get_lines()) == 3  # prior, posterior, the two densities at 0
    plt.close(ax.figure)
    ax = plot_f1_trace(result, max_points=1000)
    assert len(ax.get_lines()[0].get_xdata()) == 1000
    plt.close(ax.figure)


def test_save_and_power_plot(result, tmp_path):
    assert save_f1_plot(result, tmp_path / "x.png").stat().st_size > 1000
    res = power_analysis(SIGIR_SCENARIO_A, sizes=[200, 400], replicates=20, draws=500, rng=0)
    ax = plot_power(res, reference={"paired": {500: 0.30}})
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {
        "paired",
        "paired (published)",
        "unpaired",
    }
    plt.close(ax.figure)


def _inside_figure(fig, artist):
    fig.canvas.draw()
    box, page = artist.get_window_extent(), fig.bbox
    return box.x0 >= page.x0 and box.x1 <= page.x1 and box.y0 >= page.y0 and box.y1 <= page.y1


@pytest.fixture(scope="module")
def three_classes():
    """A 3-class task whose class names are long, as real category names are."""
    rng = np.random.default_rng(2)
    names = np.array(["rec.sport.hockey-and-baseball", "comp.sys.ibm.pc.hardware", "sci.med"])
    gold = rng.integers(0, 3, 900)
    a = np.where(rng.random(900) < 0.85, gold, rng.integers(0, 3, 900))
    b = np.where(rng.random(900) < 0.75, gold, rng.integers(0, 3, 900))
    df = pd.DataFrame({"gold": names[gold], "svm": names[a], "nb": names[b]})
    return compare_f1(df, rng=1, draws=2000, baselines=False)


@pytest.mark.parametrize("label", ["rec.sport.hockey-and-baseball", "macro"])
def test_posterior_title_stays_inside_the_figure(three_classes, label):
    """The title used to be one line that ran off a 6-inch figure on both sides."""
    ax = plot_f1_posterior(three_classes, label)
    title = ax.title
    assert label in title.get_text().replace("\n", "")
    assert "P(ROPE)" in title.get_text() and "decision" in title.get_text()
    assert _inside_figure(ax.figure, title)
    plt.close(ax.figure)


def test_save_f1_plot_draws_the_chosen_classes(three_classes, tmp_path, monkeypatch):
    import isbetter.plots.f1 as f1_plots

    drawn = []
    original = f1_plots.plot_f1_posterior

    def spy(result, label=None, **kw):
        drawn.append(label)
        return original(result, label, **kw)

    monkeypatch.setattr(f1_plots, "plot_f1_posterior", spy)
    save_f1_plot(three_classes, tmp_path / "a.png", ["sci.med", "macro", "micro"])
    assert drawn == ["sci.med", "macro", "micro"]
    drawn.clear()
    save_f1_plot(three_classes, tmp_path / "b.png", "all")
    assert drawn == list(three_classes.classes)
    drawn.clear()
    save_f1_plot(three_classes, tmp_path / "c.png")
    assert drawn == [three_classes.classes[0]]
    with pytest.raises(InputError, match="no class 'nope'"):
        save_f1_plot(three_classes, tmp_path / "d.png", ["macro", "nope"])


def test_power_plot_names_measure_scenario_and_true_difference():
    res = power_analysis(SIGIR_SCENARIO_A, sizes=[200], replicates=10, draws=300, rng=0)
    ax = plot_power(res)
    title = ax.get_title()
    assert "measure f1" in title
    assert "scenario: SIGIR 2016 scenario (a)" in title
    assert "true difference δ = +0.100" in title
    assert _inside_figure(ax.figure, ax.title)
    plt.close(ax.figure)


def test_savage_dickey_plot_shows_the_ratio_it_names():
    """Regression: the plotted densities used scipy's bandwidth, not BF01's, so their ratio
    at 0 was not the BF01 in the title; the title names the prior bandwidth h0."""
    example = Path(__file__).resolve().parents[2] / "data" / "f1_example" / "predictions.csv"
    res = compare_f1(
        example,
        system_a="svm",
        system_b="logreg",
        classes=["politics"],
        draws=4000,
        rng=1,
        baselines=False,
    )
    row = res.row()
    assert row["bf01_bound"] == "" and row["bf01"] > 3
    ax = plot_savage_dickey(res)
    prior_at_0, post_at_0 = ax.get_lines()[2].get_ydata()
    assert post_at_0 / prior_at_0 == pytest.approx(row["bf01"], rel=1e-9)
    assert f"h0 = {row['bf01_prior_bandwidth']:.3g}" in ax.get_title().replace("\n", " ")
    plt.close(ax.figure)


def test_f1_and_power_legends_sit_beside_the_data(result):
    """The legend sat on the ROPE's shading (posterior) or on the curves ("best")."""
    res = power_analysis(SIGIR_SCENARIO_A, sizes=[200, 400], replicates=10, draws=300, rng=0)
    for ax in (plot_f1_posterior(result), plot_savage_dickey(result), plot_power(res)):
        assert legend_hides_nothing(ax), ax.get_title()
        plt.close(ax.figure)


def test_f1_plots_x_tick_labels_do_not_overlap():
    """Issue 29: on class "sport" of the shipped example, the Savage–Dickey panel of the
    CLI's figure labelled its x axis −0.075−0.050−0.025 0.000 ..., run together."""
    from matplotlib.figure import Figure

    data = Path(__file__).resolve().parents[2] / "data" / "f1_example" / "predictions.csv"
    res = compare_f1(data, system_a="svm", system_b="nb", rng=1, baselines=False)
    for label in res.classes:
        fig = Figure(figsize=(12, 4.2), layout="constrained")  # one row of save_f1_plot
        left, right = fig.subplots(1, 2)
        plot_f1_posterior(res, label, ax=left)
        plot_savage_dickey(res, label, ax=right)
        assert not x_tick_overlaps(left) and not x_tick_overlaps(right), label
