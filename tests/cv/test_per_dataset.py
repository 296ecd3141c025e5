"""One score per data set and system: the table of autorank, scmamp and Demšar (2006).

Read long (data set, system, score; no run or fold columns) or wide (one column per
system, one row per data set), through the API and the command line, wherever only
per-data-set scores are needed (the sign and signed-rank tests); the correlated
t-test and the hierarchical model refuse such scores and say why. Before issue 20,
`isbetter rank` on such a table stopped at "Columns 'run' (--run-col), 'fold'
(--fold-col) not found" and `--fold-col ''` was refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata

from isbetter import InputError, compare, rank, read_scores
from isbetter.cli import main

DEMSAR = Path(__file__).resolve().parents[2] / "data" / "demsar2006" / "table6_auc.csv"
CLASSIFIERS = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]


@pytest.fixture
def long_path(tmp_path):
    """Demšar's table in long form: dataset, classifier, auc (no run or fold column)."""
    wide = pd.read_csv(DEMSAR)
    path = tmp_path / "demsar_long.csv"
    wide.melt(id_vars="dataset", var_name="classifier", value_name="auc").to_csv(path, index=False)
    return path


def _error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return err


def _json(capsys, argv: list[str]) -> dict:
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


# ------------------------------------------------------------------ reading
def test_wide_and_long_read_the_same_table(long_path):
    wide = read_scores(DEMSAR, wide=True, score="auc")
    long = read_scores(long_path, system="classifier", score="auc")
    assert wide.per_dataset and long.per_dataset
    assert wide.keys == long.keys == ("dataset", "system")
    assert wide.systems == tuple(sorted(CLASSIFIERS))
    assert wide.datasets[:2] == ("adult (sample)", "breast cancer") and len(wide.datasets) == 14
    pd.testing.assert_frame_equal(wide.data, long.data)
    # fold=None says the same explicitly
    explicit = read_scores(long_path, system="classifier", score="auc", run=None, fold=None)
    pd.testing.assert_frame_equal(explicit.data, long.data)


def test_wide_rows_line_up_with_demsar_wilcoxon_ranks():
    """Demšar (2006), section 3.1.3: C4.5+m vs C4.5 has R+ = 93 and R- = 12."""
    d = read_scores(DEMSAR, wide=True, score="auc").paired("C4.5+m", "C4.5").mean_differences()
    ranks = rankdata(np.abs(d))
    ties = ranks[d == 0].sum() / 2  # zero differences' ranks split evenly, as Demšar does
    assert (ranks[d > 0].sum() + ties, ranks[d < 0].sum() + ties) == (93.0, 12.0)


def test_wide_dataframe_as_autorank_takes_it():
    """A DataFrame of system columns only: the rows are the data sets, named by the index."""
    frame = pd.read_csv(DEMSAR).set_index("dataset")
    table = read_scores(frame, wide=True, dataset=None, score="auc", systems=["C4.5", "C4.5+m"])
    assert table.systems == ("C4.5", "C4.5+m") and table.datasets[0] == "adult (sample)"
    unnamed = read_scores(frame.reset_index(drop=True), wide=True, dataset=None, score="auc")
    assert unnamed.datasets[:3] == ("0", "1", "2")


def test_several_dataset_columns_make_one_key():
    """CEC'17 style: 'function' and 'dimension' together name a problem."""
    rows = [
        (f, dim, alg, float(i + f * dim))
        for f in (1, 2)
        for dim in (10, 30)
        for i, alg in enumerate(("de", "pso"))
    ]
    df = pd.DataFrame(rows, columns=["function", "dimension", "algorithm", "error"])
    table = read_scores(
        df, dataset=["function", "dimension"], system="algorithm", score="error",
        higher_is_better=False,
    )  # fmt: skip
    assert table.datasets == ("1/10", "1/30", "2/10", "2/30") and table.per_dataset
    with pytest.raises(InputError, match="Duplicated \\(system, dataset\\) keys"):
        read_scores(df, dataset="function", system="algorithm", score="error")


# ------------------------------------------------------------------ methods
def test_auto_is_the_signed_rank_test_for_per_dataset_scores():
    table = read_scores(DEMSAR, wide=True, score="auc")
    auto = compare(table, "C4.5+m", "C4.5", rope=0.01, rng=1)
    explicit = compare(table, "C4.5+m", "C4.5", rope=0.01, rng=1, method="signed_rank")
    assert auto.method == "signed_rank"
    assert (auto.p_a_better, auto.p_rope, auto.p_b_better) == (
        explicit.p_a_better,
        explicit.p_rope,
        explicit.p_b_better,
    )
    assert compare(table, "C4.5+m", "C4.5", rng=1, method="sign").method == "sign"
    ranking = rank(table, rope=0.01, jobs=1, rng=1)
    assert ranking.settings["comparison_method"] == "signed_rank"


@pytest.mark.parametrize(
    ("method", "why"),
    [
        ("hierarchical", "the hierarchical model needs per-fold scores on every data set"),
        ("correlated_t", "the correlated t-test needs the per-fold scores of a data set"),
    ],
)
def test_methods_that_need_folds_say_why(method, why):
    table = read_scores(DEMSAR, wide=True, score="auc")
    pattern = f"^`method='{method}'`: {why}: .* Use `method='signed_rank'` or `method='sign'`"
    with pytest.raises(InputError, match=pattern):
        compare(table, "C4.5+m", "C4.5", method=method)
    with pytest.raises(InputError, match=pattern):
        rank(table, method=method, jobs=1)  # before any pair runs


# ------------------------------------------------------------------ command line
def test_the_issues_command_ranks_a_long_per_dataset_table(capsys, long_path):
    argv = ["rank", str(long_path), "--system-col", "classifier", "--metric", "auc"]
    out = _json(capsys, [*argv, "--method", "signed-rank", "--jobs", "1", "--seed", "1"])
    assert out["settings"]["comparison_method"] == "signed_rank"
    assert len(out["metrics"]["auc"]["pairs"]) == 6
    # --fold-col '' says it explicitly; --method auto picks the signed-rank test
    again = _json(capsys, [*argv, "--fold-col", "", "--run-col", "", "--jobs", "1", "--seed", "1"])
    assert again["metrics"] == out["metrics"]


def test_readme_wide_example_equals_the_long_table(capsys, long_path):
    wide = _json(
        capsys,
        ["rank", str(DEMSAR), "--wide", "--metric", "auc", "--rope", "0.01", "--seed", "1"],
    )
    long = _json(
        capsys,
        ["rank", str(long_path), "--system-col", "classifier", "--metric", "auc", "--rope",
         "0.01", "--seed", "1"],
    )  # fmt: skip
    assert wide["metrics"] == long["metrics"]
    pair = wide["metrics"]["auc"]["pairs"][0]["comparison"]
    assert pair["method"] == "signed_rank" and pair["observed"]["n"] == 14


def test_cv_on_a_wide_table(capsys):
    out = _json(
        capsys,
        ["cv", str(DEMSAR), "--wide", "--metric", "auc", "--a", "C4.5+m", "--b", "C4.5",
         "--rope", "0.01", "--seed", "1"],
    )  # fmt: skip
    assert out["method"] == "signed_rank" and out["observed"]["n"] == 14


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (
            ["--method", "hierarchical"],
            "--method hierarchical: the hierarchical model needs per-fold scores on every data "
            "set: it weighs each data set's mean difference by the spread and the correlation "
            "of its folds",
        ),
        (["--method", "correlated-t"], "--method correlated-t: the correlated t-test needs"),
        (["--dataset", "cmc"], "--dataset cmc: one data set is compared by the correlated t-test"),
        (["--rho", "0.1"], "--rho does not apply to --method signed-rank"),
        (["--system-col", "x"], "--system-col names a column of a long table"),
        (["--metric", "auc", "--metric", "x"], "--metric: given twice"),
    ],
)
def test_cv_refusals_name_the_flag(capsys, extra, expected):
    argv = ["cv", str(DEMSAR), "--wide", "--a", "C4.5+m", "--b", "C4.5", *extra]
    err = _error(capsys, argv if "--metric" in extra else [*argv, "--metric", "auc"])
    assert expected in err
    if "--method" in extra:
        assert "Use --method signed-rank or --method sign" in err


def test_wide_table_messages(capsys, tmp_path):
    text = (
        DEMSAR.read_text(encoding="utf-8")
        .replace("cmc,0.628", "cmc,")
        .replace("iris,0.936", "iris,0.93x")
    )
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    err = _error(capsys, ["rank", str(path), "--wide", "--metric", "auc"])
    assert (
        "The scores must hold numbers (line 7, column 'C4.5': '0.93x'); fix that value, or "
        "choose the system columns with --systems." in err
    )
    path.write_text(text.replace("0.93x", "0.936"), encoding="utf-8")
    err = _error(capsys, ["rank", str(path), "--wide", "--metric", "auc"])
    assert "1 score is missing (NaN) or infinite (line 5, column 'C4.5')" in err
    err = _error(capsys, ["rank", str(DEMSAR), "--metric", "auc"])  # --wide forgotten
    assert "'system' (--system-col), 'auc' (--metric) not found" in err
    assert err.rstrip().endswith("for a wide table (one column per system), pass --wide.")
    err = _error(capsys, ["rank", str(DEMSAR), "--wide", "--dataset-col", "name"])
    assert "when the rows are not named, pass --dataset-col ''." in err
    err = _error(capsys, ["rank", str(DEMSAR), "--wide", "--gold", "g"])
    assert "--wide reads a table of scores, --gold a table of predictions" in err


def test_missing_system_on_a_data_set_names_no_fold(capsys, long_path):
    df = pd.read_csv(long_path)
    path = long_path.with_name("gap.csv")
    df.drop(index=df.index[(df.dataset == "iris") & (df.classifier == "C4.5+m")]).to_csv(
        path, index=False
    )
    err = _error(capsys, ["rank", str(path), "--system-col", "classifier", "--metric", "auc"])
    assert "Data set 'iris' has no score of C4.5+m (C4.5 (1), C4.5+cf (1), C4.5+m (0)" in err
    assert "fold" not in err and "run" not in err
    out = _json(
        capsys,
        ["rank", str(path), "--system-col", "classifier", "--metric", "auc", "--drop-incomplete",
         "--seed", "1"],
    )  # fmt: skip
    assert out["settings"]["dropped"] == (
        "3 rows, key not present for every system (3): system 'C4.5', data set 'iris'; "
        "system 'C4.5+cf', data set 'iris'; system 'C4.5+m+cf', data set 'iris'"
    )


def test_fold_none_with_a_run_column_says_what_to_do(capsys, tmp_path):
    df = pd.DataFrame(
        {"dataset": "d", "system": ["a", "b"] * 3, "run": [1, 1, 2, 2, 3, 3], "score": 0.5}
    )
    with pytest.raises(InputError, match="^`fold=None` reads one score per data set and system"):
        read_scores(df, fold=None)
    path = tmp_path / "runs.csv"
    df.to_csv(path, index=False)
    err = _error(capsys, ["cv", str(path), "--a", "a", "--b", "b", "--fold-col", ""])
    assert "--fold-col '' reads one score per data set and system" in err
    assert "pass --run-col '' as well" in err
