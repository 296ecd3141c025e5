import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from isbetter.f1_compare import compare_f1
from isbetter.plots.f1 import plot_f1_posterior, plot_f1_trace, plot_savage_dickey, save_f1_plot
from isbetter.plots.power import plot_power
from isbetter.power import SIGIR_SCENARIO_A, power_analysis
from isbetter.results.decisions import symbol


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
