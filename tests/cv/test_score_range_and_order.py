"""Scores the models cannot hold are refused up front; the order of the rows never matters.

Issue 29 item 6: one accuracy of the UCI table set to 1e15 ... 1e300 gave a
ZeroDivisionError traceback, a run of more than 600 s, or a segfault; the same rows
in another order gave P(rope) 0.2709 instead of 0.2850.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from tests._uci import UCI, UCI_COLUMNS

import isbetter
from isbetter import InputError, read_scores
from isbetter.cli import main
from isbetter.cv import scores as scores_module

COLUMNS = {"dataset": "dataset_id", "system": "classifier", "score": "accuracy"}


@pytest.fixture(scope="module")
def uci():
    return pd.read_csv(UCI)


@pytest.mark.parametrize("value", [1e15, 1e154, 1e300, -1e15])
def test_a_huge_score_is_refused_naming_its_row(uci, tmp_path, capsys, monkeypatch, value):
    df = uci.copy()
    df.loc[5, "accuracy"] = value
    with pytest.raises(InputError, match=r"^1 score of 'accuracy' is too far from the others.*"
                       r"\(index label 5: -?1e\+\d+\)"):  # fmt: skip
        read_scores(df, **COLUMNS)
    path = tmp_path / "huge.csv"
    df.to_csv(path, index=False)
    calls = []
    import isbetter.cv.compare as cv

    monkeypatch.setattr(cv, "compare", lambda *a, **k: calls.append(1))
    argv = ["cv", str(path), *UCI_COLUMNS, "--a", "nbc", "--b", "aode", "--rope", "0.01"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "line 7: " in err and "too far from the others" in err
    assert calls == []  # refused before any fit started


def test_the_limits_come_from_float64():
    eps, largest = np.finfo(float).eps, np.finfo(float).max
    assert scores_module.MAGNITUDE_LIMIT == pytest.approx(1 / np.sqrt(eps))
    # 1e8 squared differences of twice the largest score still sum below float64's maximum
    assert 1e8 * (2 * scores_module.LARGEST_SCORE) ** 2 == pytest.approx(largest)


def test_wide_spread_scores_within_the_limits_are_read(uci):
    """Scores of another scale (percent, a loss in thousands) are not refused."""
    df = uci.copy()
    df.loc[df["dataset_id"] == 1, "accuracy"] *= 1e6  # one data set on another scale
    read_scores(df, **COLUMNS)
    same = pd.DataFrame(
        {"dataset": ["d"] * 4, "system": ["a", "a", "b", "b"], "fold": [1, 2] * 2,
         "score": [1.0, 1.0, 1.0, 0.5]}
    )  # fmt: skip
    read_scores(same, run=None)  # most scores equal: the typical deviation is not 0


def _small_table(rng):
    rows = [
        (f"d{d}", s, f, 0.8 + 0.02 * (s == "a") + rng.normal(0, 0.03))
        for d in range(12)
        for s in ("a", "b")
        for f in range(1, 6)
    ]
    return pd.DataFrame(rows, columns=["dataset", "system", "fold", "score"])


#: the hierarchical model's options in the test below: a small run, the numbers only
HIER_SMALL = {"draws": 300, "tune": 300, "chains": 2}


@pytest.mark.parametrize("method", ["signed_rank", "sign", "hierarchical"])
def test_shuffled_rows_give_bit_identical_results(rng, method):
    """Every row shuffled, within and across data sets (the issue's case: the hierarchical
    model's P(rope) 0.2709 against 0.2850 on the UCI rows in another order)."""
    df = _small_table(rng)
    options = HIER_SMALL if method == "hierarchical" else {}

    def compare(frame):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", isbetter.ConvergenceWarning)  # a small run
            return isbetter.compare(read_scores(frame, run=None), "a", "b", method=method,
                                    rope=0.01, rng=1, **options)  # fmt: skip

    expected = compare(df)
    for seed in range(3):
        res = compare(df.sample(frac=1, random_state=seed))
        assert res.probabilities().as_tuple() == expected.probabilities().as_tuple()
        if method == "hierarchical":
            assert res.predictive == expected.predictive
            assert res.estimate.mean == expected.estimate.mean


def test_data_sets_are_in_the_order_of_their_keys():
    df = pd.DataFrame(
        {"dataset": ["10", "2", "b", "a", "1"] * 2, "system": ["x"] * 5 + ["y"] * 5,
         "score": np.linspace(0.5, 0.9, 10)}
    )  # fmt: skip
    table = read_scores(df, run=None, fold=None)
    assert table.datasets == ("1", "2", "10", "a", "b")


def test_from_arrays_names_the_cell_of_a_huge_score():
    """Before: "index label 13" (a row of the long table from_arrays builds inside); now the
    array, its position and the data set, system, run and fold that position stands for."""
    x = 0.8 + np.random.default_rng(0).normal(0, 0.01, (3, 10))
    y = x - 0.01
    y[1, 3] = 1e300
    with pytest.raises(InputError) as caught:
        isbetter.from_arrays(x, y, names=("bert", "gpt"), runs=2, folds=5, datasets=["a", "b", "c"])
    message = str(caught.value)
    assert "(`y`[1, 3] (data set 'b', system 'gpt', run 1, fold 4): 1e+300)" in message
    assert "index label" not in message
    with pytest.raises(InputError, match=r"\(`x`\[7\] \(data set '0', system 'A', run 2, fold 3\)"):
        isbetter.from_arrays(np.where(np.arange(10) == 7, -1e300, x[0]), y[0], runs=2, folds=5)


@pytest.mark.parametrize(
    ("x0", "near", "rest"),
    [(0.5, 0.5000000000000001, 0.75), (0.5, 0.5 + 1e-9, 0.75), (0.5000000000000001, 0.75, 0.5)],
)
def test_tied_scores_with_rounding_are_not_far_scores(x0, near, rest):
    """Before: with half the scores tied the median absolute deviation was a rounding error
    (5.55e-17 for ten scores 0.5, one 0.5000000000000001 and nine 0.75; Hypothesis found it
    in test_adding_a_constant_to_both_systems_changes_nothing) or 5e-10, and the nine 0.75s
    were refused as 'too far from the others'; the typical deviation is now the upper
    quartile of the deviations, which a far score must share with a quarter of the table,
    and deviations of a few units in the median's last place count as none (ten
    0.5000000000000001, one 0.75 and nine 0.5: an upper quartile of 1.1e-16)."""
    x = np.full(10, x0)
    y = np.array([near] + [rest] * 9)
    table = isbetter.from_arrays(x, y, runs=1)
    assert table.datasets == ("0",)
    y[4] = 1e15  # one far score among them is still refused
    with pytest.raises(InputError, match="too far from the others"):
        isbetter.from_arrays(x, y, runs=1)
