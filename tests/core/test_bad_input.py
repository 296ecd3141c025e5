"""Malformed input: a specific error naming what is wrong, through the API and the CLI.

Every case raises an InputError / InputTypeError whose message is checked; through
the command line the same mistakes print exactly one line on stderr and exit with 2,
before any computation starts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import isbetter
import isbetter.report
from isbetter import (
    InputError,
    InputTypeError,
    compare,
    correlated_ttest,
    from_arrays,
    hierarchical_test,
    predictions_from_arrays,
    rank,
    read_predictions,
    read_scores,
)
from isbetter.cli import main
from isbetter.f1.baselines import Baselines
from isbetter.f1.power import JointDistribution, power_analysis


def _scores(**change):
    df = pd.DataFrame(
        {
            "dataset": ["d"] * 4 + ["e"] * 4,
            "system": ["a", "a", "b", "b"] * 2,
            "fold": [1, 2] * 4,
            "score": [0.8, 0.7, 0.6, 0.65, 0.9, 0.85, 0.7, 0.75],
        }
    )
    for col, (row, value) in change.items():
        df.loc[row, col] = value
    return df


@pytest.fixture
def good(tmp_path):
    path = tmp_path / "scores.csv"
    _scores().to_csv(path, index=False)
    return path


def _text(df):
    return df["score"].where(df.index != 3, "0.95x")


# (callable, exception type, message pattern)
API_CASES = {
    "wrong type of source": (
        lambda: read_scores(123),
        InputTypeError,
        "must be a pandas DataFrame",
    ),
    "missing column": (
        lambda: read_scores(_scores(), run=None, score="acc"),
        InputError,
        "Column 'acc' not found",
    ),
    "NaN score": (
        lambda: read_scores(_scores(score=(2, np.nan)), run=None),
        InputError,
        r"^1 score is missing \(NaN\) or infinite \(index label 2\); .* Fix it, or pass "
        r"`drop_incomplete=True` to drop that row\.$",
    ),
    "infinite score": (
        lambda: read_scores(_scores(score=(2, np.inf)), run=None),
        InputError,
        "missing \\(NaN\\) or infinite",
    ),
    "duplicated keys": (
        lambda: read_scores(_scores(fold=(1, 1)), run=None),
        InputError,
        "Duplicated \\(system, dataset, fold\\) keys",  # run=None: no run to name
    ),
    "string scores": (
        lambda: read_scores(_scores().astype({"score": str}), run=None),
        InputTypeError,
        "must hold numbers",
    ),
    "text in the score column": (
        lambda: read_scores(_scores().astype({"score": object}).assign(score=_text), run=None),
        InputTypeError,
        r"^Metric column 'score' must hold numbers \(index label 3: '0\.95x'\); fix that value",
    ),
    "no run column": (
        lambda: read_scores(_scores()),
        InputError,
        r"Column 'run' not found\. .*; for a single run of cross-validation, pass `run=None`\.$",
    ),
    "an option of another method": (
        lambda: compare(read_scores(_scores(), run=None), "a", "b", method="sign", rho=0.1),
        InputError,
        r"^Option 'rho' does not apply to method 'sign'; it takes: prior, prior_place, draws\.$",
    ),
    "a wide table of two metrics": (
        lambda: read_scores(_scores(), wide=True, score=["auc", "acc"]),
        InputError,
        "`score` names the one metric of a wide table, got 2",
    ),
    "per-fold options of a ranking of predictions": (
        lambda: rank(
            predictions_from_arrays([0, 1, 1, 0], a=[0, 1, 0, 0], b=[1, 1, 1, 0]), rho=0.1
        ),
        InputError,
        "^Option 'rho' does not apply to method 'paired'; it takes: hdi_prob, draws, sampling, ",
    ),
    "a metric by its old and its new name": (
        lambda: isbetter.compare_f1(
            predictions_from_arrays([0, 1, 1, 0], a=[0, 1, 0, 0], b=[1, 1, 1, 0]),
            metric="f1",
            measure="precision",
        ),
        InputError,
        "`measure` is the old name of `metric`; give `metric` only",
    ),
    "direction missing for a metric": (
        lambda: read_scores(_scores(), run=None, higher_is_better={"other": True}),
        InputError,
        "no direction for metric",
    ),
    "one system": (
        lambda: read_scores(_scores()[lambda d: d.system == "a"], run=None),
        InputError,
        "a comparison needs at least two",
    ),
    "unknown system": (
        lambda: read_scores(_scores(), run=None).paired("a", "zz"),
        InputError,
        "unknown system 'zz'",
    ),
    "same system twice": (
        lambda: read_scores(_scores(), run=None).paired("a", "a"),
        InputError,
        "are both 'a'",
    ),
    "unequal array shapes": (
        lambda: from_arrays(np.zeros(3), np.zeros(4)),
        InputError,
        "same shape",
    ),
    "negative ROPE": (
        lambda: compare(read_scores(_scores(), run=None), "a", "b", rope=-1.0),
        InputError,
        "`rope` must be a non-negative",
    ),
    "NaN ROPE": (
        lambda: compare(read_scores(_scores(), run=None), "a", "b", rope=float("nan")),
        InputError,
        "`rope` must be a non-negative",
    ),
    "string ROPE": (
        lambda: compare(read_scores(_scores(), run=None), "a", "b", rope="0.01"),
        InputTypeError,
        "`rope` must be a non-negative number",
    ),
    "non-integer seed": (
        lambda: isbetter.sign_test(read_scores(_scores(), run=None).paired("a", "b"), rng=1.5),
        InputTypeError,
        "`rng` must be None, a non-negative int",
    ),
    "negative seed": (
        lambda: isbetter.sign_test(read_scores(_scores(), run=None).paired("a", "b"), rng=-3),
        InputError,
        "non-negative integer seed",
    ),
    "threshold above 1": (
        lambda: correlated_ttest(
            read_scores(_scores()[lambda d: d.dataset == "d"], run=None).paired("a", "b")
        ).decision(threshold=1.5),
        InputError,
        "`threshold` must be a probability",
    ),
    "one data set for the hierarchical model": (
        lambda: hierarchical_test(
            read_scores(_scores()[lambda d: d.dataset == "d"], run=None).paired("a", "b")
        ),
        InputError,
        "at least 2 data sets",
    ),
    "rho = 1": (
        lambda: correlated_ttest(
            read_scores(_scores()[lambda d: d.dataset == "d"], run=None).paired("a", "b"), rho=1.0
        ),
        InputError,
        "rho = 1",
    ),
    "unknown method": (
        lambda: compare(read_scores(_scores(), run=None), "a", "b", method="x"),
        InputError,
        "Unknown method 'x'",
    ),
    "labels absent from gold": (
        lambda: predictions_from_arrays([0, 1, 1], a=[0, 2, 1]),
        InputError,
        "Predicted labels absent from the gold labels",
    ),
    "predictions of unequal length": (
        lambda: predictions_from_arrays([0, 1, 1], a=[0, 1]),
        InputError,
        "unequal lengths",
    ),
    "a single gold class": (
        lambda: predictions_from_arrays([1, 1], a=[1, 0]),
        InputError,
        "single class",
    ),
    "probabilities not summing to 1": (
        lambda: JointDistribution(0.5, (0.5,) * 4, (0.25,) * 4),
        InputError,
        "sum to 1",
    ),
    "empty power sizes": (
        lambda: power_analysis(isbetter.f1.power.SIGIR_SCENARIO_A, sizes=[]),
        InputError,
        "`sizes` is empty",
    ),
    "ranking threshold 0": (
        lambda: rank(read_scores(_scores(), run=None), threshold=0.0),
        InputError,
        "`threshold` must be in \\(0, 1\\]",
    ),
    "ranking unknown rule": (
        lambda: rank(read_scores(_scores(), run=None), rule="vote"),
        InputError,
        "Unknown rule 'vote'",
    ),
    # issue 29 item 6: each of these was a Python error (AttributeError, TypeError,
    # ValueError, KeyError) or silently wrong (complex made real)
    "correlated t-test given a ScoreTable": (
        lambda: correlated_ttest(read_scores(_scores(), run=None)),
        InputTypeError,
        r"^`scores` must be PairedScores .* got ScoreTable; pair two of its systems with "
        r"`table.paired\(system_a, system_b\)` \(systems: 'a', 'b'\), or call "
        r"`isbetter.compare\(table, system_a, system_b, method='correlated_t'\)`\.$",
    ),
    "sign test given an array": (
        lambda: isbetter.sign_test(np.zeros((3, 2))),
        InputTypeError,
        r"^`scores` must be PairedScores .* got ndarray; build them with `read_scores",
    ),
    "signed-rank test given a ScoreTable": (
        lambda: isbetter.signed_rank_test(read_scores(_scores(), run=None)),
        InputTypeError,
        "method='signed_rank'",
    ),
    "score given as a number": (
        lambda: read_scores(_scores(), run=None, score=5),
        InputTypeError,
        r"^`score` must name the metric column \(a str, e.g. score='accuracy'\) or several "
        r"\(a list of str\), got int 5\.$",
    ),
    "a system name missing": (
        lambda: read_scores(_scores(system=(2, np.nan)), run=None),
        InputError,
        r"^Column 'system' \(system\) has missing values \(index label 2\); every score "
        r"needs a system: fill it in\.$",
    ),
    "a data set name missing": (
        lambda: read_scores(_scores(dataset=(0, None)), run=None),
        InputError,
        r"^Column 'dataset' \(data set\) has missing values \(index label 0\)",
    ),
    "a ranking's cache_dir given as a number": (
        lambda: rank(read_scores(_scores(), run=None), cache_dir=123),
        InputTypeError,
        r"^`cache_dir` must be a path \(a str or a pathlib.Path\), got int 123",
    ),
    "ragged arrays": (
        lambda: from_arrays([[0.8, 0.7], [0.9]], [[0.8, 0.7], [0.9]], runs=1),
        InputError,
        r"^`x` has rows of different lengths; every data set \(row\) needs the same number",
    ),
    "complex arrays": (
        lambda: from_arrays(np.array([0.8 + 0.1j, 0.7]), np.array([0.6, 0.5]), runs=1),
        InputTypeError,
        r"^`x` holds complex numbers; scores must be real numbers",
    ),
    "a complex score column": (
        lambda: read_scores(_scores().astype({"score": complex}), run=None),
        InputTypeError,
        r"^Metric column 'score' holds complex numbers",
    ),
    "decimal commas": (
        lambda: read_scores(
            _scores().astype({"score": object}).assign(score=lambda d: ["0,944444444444"] * 8),
            run=None,
        ),
        InputTypeError,
        r"^Metric column 'score' is written with a decimal comma \(index label 0: "
        r"'0,944444444444', .*\); write decimal points \('0.944444444444'\)",
    ),
    "an empty summary": (
        lambda: isbetter.report.summary_from_dict({}),
        InputError,
        r"^`data` is not the dict of a result's to_dict\(\): it has no 'kind', expected one "
        r"of 'comparison', 'f1', 'power', 'ranking'",
    ),
    "a summary missing a field": (
        lambda: isbetter.report.summary_from_dict({"kind": "comparison"}),
        InputError,
        r"^`data` is not a whole comparison summary \(no field 'settings'\)",
    ),
    "a summary that is no dict": (
        lambda: isbetter.report.summary_from_dict([1]),
        InputTypeError,
        r"^`data` must be the dict of a result's to_dict\(\)",
    ),
}


@pytest.mark.parametrize("case", sorted(API_CASES))
def test_api_bad_input(case):
    call, kind, pattern = API_CASES[case]
    with pytest.raises(kind, match=pattern):
        call()


def test_unreadable_file(tmp_path, monkeypatch):
    path = tmp_path / "s.csv"
    _scores().to_csv(path, index=False)

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(pd, "read_csv", denied)
    with pytest.raises(InputError, match="permission denied"):
        read_scores(path, run=None)


FILES = {
    "empty.csv": b"",
    "utf16.csv": "dataset,system,fold,score\nd,a,1,0.8\n".encode("utf-16"),
    "truncated.csv": b'dataset,system,fold,score\nd,a,1,0.8\nd,b,1,"0.6\n',
    "onecol.csv": b"x\n1\n2\n",
}
FILE_MESSAGES = {
    "empty.csv": "Cannot read .* as a table",
    "utf16.csv": "not UTF-8 text",
    "truncated.csv": "Cannot read .* as a table",
    "onecol.csv": "not found. Available columns: 'x'",
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_bad_files_through_api_and_cli(tmp_path, capsys, name):
    path = tmp_path / name
    path.write_bytes(FILES[name])
    with pytest.raises(InputError, match=FILE_MESSAGES[name]):
        read_scores(path, run=None)
    assert main(["cv", str(path), "--a", "a", "--b", "b", "--run-col", ""]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_directory_and_missing_file(tmp_path, capsys):
    assert main(["cv", str(tmp_path), "--a", "a", "--b", "b"]) == 2
    assert "is a directory" in capsys.readouterr().err
    with pytest.raises(InputError, match="No such file"):
        read_predictions(tmp_path / "nope.csv")


CLI_CASES = {
    "output folder missing": (["--output", "{tmp}/no/such/dir/r.txt"], "the folder"),
    "plot folder missing": (["--plot", "{tmp}/no/such/dir/p.png"], "the folder"),
    "plot format unknown": (["--plot", "{tmp}/p.xyz"], "cannot write 'xyz' plots"),
    "non-integer seed": (["--seed", "1.5"], "invalid int value: '1.5'"),
    "string ROPE": (["--rope", "abc"], "invalid float value: 'abc'"),
    "negative ROPE": (["--rope", "-0.1"], "--rope must be a non-negative"),
    "flag given twice": (["--b", "a"], "argument --b: given twice (b, then a); give it once"),
}


@pytest.mark.parametrize("case", sorted(CLI_CASES))
def test_cli_bad_input_is_one_line_exit_2_before_any_work(
    good, tmp_path, capsys, monkeypatch, case
):
    import isbetter.cv.compare as cv

    calls = []
    real = cv.compare
    monkeypatch.setattr(cv, "compare", lambda *a, **k: calls.append(1) or real(*a, **k))
    extra, pattern = CLI_CASES[case]
    argv = ["cv", str(good), "--a", "a", "--b", "b", "--run-col", ""]
    argv += [x.format(tmp=tmp_path) for x in extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert pattern in err
    if case.startswith(("output", "plot")):
        assert calls == []  # checked before any work started


def test_old_keyword_measure_still_works_and_says_the_current_name():
    """`metric` is the word of compare, rank, compare_f1 and power_analysis; `measure` its alias."""
    table = predictions_from_arrays([0, 1, 1, 0, 1, 0] * 10, a=[0, 1, 0, 0, 1, 1] * 10,
                                    b=[1, 1, 1, 0, 0, 0] * 10)  # fmt: skip
    current = isbetter.compare_f1(
        table, metric="precision", draws=500, baselines=Baselines(resamples=50), rng=1
    )
    with pytest.warns(isbetter.RenamedArgumentWarning, match="`measure` is an alias of `metric`"):
        old = isbetter.compare_f1(
            table, measure="precision", draws=500, baselines=Baselines(resamples=50), rng=1
        )
    assert old.table.equals(current.table) and current.metric == "precision"
    args = {"sizes": [100], "replicates": 3, "draws": 200, "rng": 1}
    new = power_analysis(isbetter.f1.power.SIGIR_SCENARIO_A, metric="accuracy", **args)
    with pytest.warns(FutureWarning, match="write metric='accuracy'"):
        again = power_analysis(isbetter.f1.power.SIGIR_SCENARIO_A, measure="accuracy", **args)
    assert again.table.equals(new.table) and new.metric == "accuracy"


def test_compare_and_rank_take_tables_dataframes_and_paths(tmp_path):
    """One front door: compare() given a DataFrame raised AttributeError ('DataFrame' object
    has no attribute 'n_datasets'); rank() refused it. Both now read it like read_scores."""
    g = np.random.default_rng(0)
    df = pd.DataFrame(
        [
            (f"d{d}", s, 1, f, 0.8 + 0.01 * (s == "a") + g.normal(0, 0.01))
            for d in range(6)
            for s in ("a", "b", "c")
            for f in range(1, 6)
        ],
        columns=["dataset", "system", "run", "fold", "score"],
    )
    path = tmp_path / "scores.csv"
    df.to_csv(path, index=False)
    table = isbetter.read_scores(df)
    expected = isbetter.compare(table, "a", "b", method="signed_rank", rng=1)
    for given in (df, path, str(path)):
        res = isbetter.compare(given, "a", "b", method="signed_rank", rng=1)
        assert res.p_a_better == expected.p_a_better
        ranking = isbetter.rank(given, method="signed_rank", rng=1)
        assert ranking.order("score") == isbetter.rank(table, method="signed_rank", rng=1).order(
            "score"
        )
    with pytest.raises(isbetter.InputTypeError, match="`scores` must be a ScoreTable"):
        isbetter.compare(42, "a", "b")
    preds = pd.DataFrame({"gold": [0, 1] * 50, "x": [0, 1] * 50, "y": [1, 1] * 50})
    assert isbetter.rank(preds, rng=1).metrics == ("f1",)
