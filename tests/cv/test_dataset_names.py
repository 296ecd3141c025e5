"""A data set keyed by an id is shown by its name: in the report, the plot and the demo."""

from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from isbetter import InputError, compare, read_scores
from isbetter.cli import main
from isbetter.plots import plot_difference_posterior
from isbetter.report import render

UCI = Path(__file__).resolve().parents[2] / "data" / "uci_benavoli2017" / "uci_cv_accuracy_long.csv"
COLUMNS = {"dataset": "dataset_id", "system": "classifier", "score": "accuracy"}


@pytest.fixture(scope="module")
def uci():
    return pd.read_csv(UCI)


def test_the_name_travels_to_the_report_and_the_plot(uci):
    """The demo's text said 'anneal' while its correlated t-test said 'data set 1'."""
    table = read_scores(uci, **COLUMNS, dataset_name="dataset_name")
    assert table.dataset_names["1"] == "anneal" and table.dataset_names["48"] == "credit"
    res = compare(table, "nbc", "aode", rope=0.01, method="correlated_t", dataset="1")
    assert res.dataset == "1" and res.settings["dataset_name"] == "anneal"
    assert "nbc vs aode on data set anneal (1), accuracy" in render(res)
    ax = plot_difference_posterior(res)
    assert "nbc vs aode on data set anneal (1)" in ax.get_title()
    plt.close(ax.figure)
    # the names are not keys: 'credit' names two data sets, each compared on its own
    six = compare(table, "nbc", "aode", rope=0.01, method="correlated_t", dataset="6")
    assert "data set credit (6)" in render(six) and "data set credit (48)" not in render(six)
    # without names, the key as before
    plain = compare(read_scores(uci, **COLUMNS), "nbc", "aode", method="correlated_t", dataset="1")
    assert "dataset_name" not in plain.settings and "on data set 1," in render(plain)


def test_one_name_per_data_set(uci):
    bad = uci.copy()
    bad.loc[bad.index[0], "dataset_name"] = "annealing"
    with pytest.raises(
        InputError, match="^`dataset_name`: column 'dataset_name' gives data set '1'"
    ):
        read_scores(bad, **COLUMNS, dataset_name="dataset_name")
    with pytest.raises(InputError, match="dataset_label"):
        read_scores(uci, **COLUMNS, dataset_name="dataset_label")


def test_cli_names_the_data_set(capsys):
    argv = ["cv", str(UCI), "--dataset-col", "dataset_id", "--system-col", "classifier"]
    argv += ["--metric", "accuracy", "--a", "nbc", "--b", "aode", "--dataset", "1"]
    assert main([*argv, "--dataset-name-col", "dataset_name"]) == 0
    assert "nbc vs aode on data set anneal (1)" in capsys.readouterr().out
