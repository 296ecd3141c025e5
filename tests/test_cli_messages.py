"""CLI error messages name the flags the user typed, never Python arguments or NumPy reprs.

One test per message fixed (issue 11); each ran into the Python wording before
:mod:`isbetter.cli.messages`. The last test audits a list of bad commands at once.
"""

from __future__ import annotations

import argparse
import json
import re

import numpy as np
import pandas as pd
import pytest

from isbetter.cli import main
from isbetter.cli.messages import cli_message


def _scores(n_datasets: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(20240917)
    rows = [
        (f"d{i}", s, 1, f, round(0.8 + shift + rng.normal(0, 0.01), 6))
        for i in range(n_datasets)
        for s, shift in (("a", 0.02), ("b", 0.0), ("c", -0.01))
        for f in range(1, 6)
    ]
    return pd.DataFrame(rows, columns=["dataset", "system", "run", "fold", "score"])


@pytest.fixture
def one(tmp_path):
    path = tmp_path / "one.csv"
    _scores().to_csv(path, index=False)
    return str(path)


@pytest.fixture
def three(tmp_path):
    path = tmp_path / "three.csv"
    _scores(3).to_csv(path, index=False)
    return str(path)


@pytest.fixture
def multiclass(tmp_path):
    rng = np.random.default_rng(3)
    gold = rng.choice(["x", "y", "z"], 90)
    df = pd.DataFrame({"doc": np.arange(90), "gold": gold, "svm": gold, "nb": np.roll(gold, 1)})
    path = tmp_path / "pred.csv"
    df.to_csv(path, index=False)
    return str(path)


def _error(capsys, argv: list[str]) -> str:
    """Run a bad command: exit 2 and one line on stderr; return that line."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


def test_default_columns_name_their_flags(capsys, uci_long_path):
    err = _error(capsys, ["cv", str(uci_long_path), "--a", "nbc", "--b", "aode"])
    assert "'dataset' (--dataset-col), 'system' (--system-col), 'score' (--metric)" in err
    assert "name the right ones with --dataset-col, --system-col, --metric." in err


def test_unknown_system_names_the_flag(capsys, one):
    err = _error(capsys, ["cv", one, "--a", "a", "--b", "zz", "--dataset-col", ""])
    assert "error: --b: unknown system 'zz'" in err and "system_b" not in err


def test_same_system_twice_names_the_flags(capsys, one):
    err = _error(capsys, ["cv", one, "--a", "a", "--b", "a"])
    assert "--a and --b are both 'a'" in err


def test_missing_scores_name_the_file_lines_and_the_flag(capsys, tmp_path):
    df = _scores()
    df.loc[4, "score"] = np.nan
    path = tmp_path / "nan.csv"
    df.to_csv(path, index=False)
    err = _error(capsys, ["cv", str(path), "--a", "a", "--b", "b"])
    assert "(lines 6)" in err
    assert "pass --drop-incomplete to drop" in err and "drop_incomplete" not in err


def test_duplicated_keys_show_plain_values_and_the_column_flags(capsys, one):
    # the run column read as the folds: keys repeat; the example key is plain Python values
    err = _error(capsys, ["cv", one, "--a", "a", "--b", "b", "--fold-col", "run"])
    assert "e.g. ('a', 'd0', 1, 1)" in err and "np.int64" not in err
    assert "name it with --run-col or --dataset-col" in err


def test_rope_example_is_a_flag(capsys, one):
    err = _error(capsys, ["cv", one, "--a", "a", "--b", "b", "--rope", "-1"])
    assert err.startswith("isbetter cv: error: --rope must be a non-negative number")
    assert "pass e.g. --rope 0.01 (a 1-point ROPE on a 0-1 scale) or --rope 0." in err


def test_option_of_another_method_names_flags(capsys, three):
    err = _error(capsys, ["cv", three, "--a", "a", "--b", "b", "--method", "sign", "--rho", ".1"])
    assert "--rho does not apply to --method sign; it takes --prior, --draws." in err


def test_correlated_t_on_several_datasets_offers_dataset_flag(capsys, three):
    argv = ["cv", three, "--a", "a", "--b", "b", "--method", "correlated-t"]
    assert "pass --dataset NAME to pick one" in _error(capsys, argv)
    # and the flag exists: one data set of several, the correlated t-test
    assert main(["cv", three, "--a", "a", "--b", "b", "--dataset", "d1", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "correlated_t" and out["dataset"] == "d1"
    err = _error(capsys, ["cv", three, "--a", "a", "--b", "b", "--dataset", "nope"])
    assert "--dataset: unknown data set 'nope'" in err


def test_positive_on_a_multiclass_task(capsys, multiclass):
    argv = ["f1", multiclass, "--a", "svm", "--b", "nb", "--positive", "x"]
    err = _error(capsys, argv)
    assert "--positive is for binary tasks" in err and "`classes`" not in err


def test_f1_unknown_prediction_column_names_the_flag(capsys, multiclass):
    err = _error(capsys, ["f1", multiclass, "--a", "svm", "--b", "xgb"])
    assert "Column 'xgb' (--b) not found" in err and "name the right ones with --b." in err


def test_f1_measure_parameter_names_the_flag(capsys, multiclass):
    argv = ["f1", multiclass, "--a", "svm", "--b", "nb", "--measure", "dcf", "--p-positive", "2"]
    assert "--p-positive must be a probability in [0, 1], got 2.0." in _error(capsys, argv)


def test_power_unknown_measure(capsys):
    err = _error(capsys, ["power", "--scenario", "sigir-a", "--measure", "f2"])
    assert "--measure: unknown measure 'f2'" in err and "f(tp, fp, fn, tn)" not in err


def test_power_theta_names_the_flag(capsys):
    argv = ["power", "--mu", ".5", "--theta-pos", "1", "1", "0", "0"]
    err = _error(capsys, [*argv, "--theta-neg", "1", "0", "0", "0"])
    assert err.startswith("isbetter power: error: --theta-pos must be 4 probabilities")


def test_rank_unknown_method_lists_cli_spellings(capsys, three):
    err = _error(capsys, ["rank", three, "--method", "bayes", "--jobs", "1"])
    assert "--method: unknown method 'bayes'" in err
    assert "'correlated-t'" in err and "'signed-rank'" in err


def test_rank_rope_for_an_unknown_metric_is_an_error(capsys, three):
    err = _error(capsys, ["rank", three, "--rope", "acc=0.1", "--jobs", "1"])
    assert "--rope acc=...: 'acc' is not a metric of this ranking; metrics: score" in err


def test_rank_predictions_with_an_id_column_points_to_systems(capsys, multiclass):
    err = _error(capsys, ["rank", multiclass, "--gold", "gold", "--jobs", "1"])
    assert "name the systems' columns with --systems" in err


def test_rank_drop_incomplete_flag(capsys, tmp_path):
    df = _scores(3)
    df.loc[2, "score"] = np.nan
    path = tmp_path / "nan.csv"
    df.to_csv(path, index=False)
    argv = ["rank", str(path), "--method", "sign", "--jobs", "1", "--quiet", "--seed", "1"]
    assert "pass --drop-incomplete" in _error(capsys, argv)
    assert main([*argv, "--drop-incomplete", "--format", "json"]) == 0


def test_numpy_reprs_become_plain_values():
    args = argparse.Namespace(command="cv")
    msg = "got np.int64(1), np.float64(0.5), np.str_('x') and np.True_"
    assert cli_message(msg, args) == "got 1, 0.5, 'x' and True"


BAD = [
    ["cv", "{one}", "--a", "a", "--b", "b", "--draws", "0", "--method", "sign"],
    ["cv", "{one}", "--a", "a", "--b", "b", "--prior", "-1", "--method", "sign"],
    ["cv", "{one}", "--a", "a", "--b", "b", "--rho", "1.5"],
    ["cv", "{three}", "--a", "a", "--b", "b", "--chains", "0", "--method", "hierarchical"],
    ["f1", "{multiclass}", "--a", "svm", "--b", "nb", "--rope", "-0.1"],
    ["f1", "{multiclass}", "--a", "svm", "--b", "nb", "--draws", "1"],
    ["f1", "{multiclass}", "--a", "svm", "--b", "nb", "--measure", "fbeta", "--beta", "-1"],
    ["f1", "{multiclass}", "--a", "svm", "--b", "nb", "--resamples", "0"],
    ["power", "--scenario", "sigir-a", "--sizes", "0"],
    ["power", "--scenario", "sigir-a", "--replicates", "0"],
    ["power", "--scenario", "sigir-a", "--rope", "-1"],
    ["rank", "{three}", "--systems", "a", "zz", "--jobs", "1"],
    ["rank", "{three}", "--threshold", "2", "--jobs", "1"],
    ["rank", "{three}", "--margin", "2", "--jobs", "1"],
    ["rank", "{three}", "--jobs", "0"],
]


@pytest.mark.parametrize("argv", BAD, ids=[" ".join(a[:1] + a[-4:]) for a in BAD])
def test_no_python_words_in_cli_errors(capsys, argv, one, three, multiclass):
    files = {"{one}": one, "{three}": three, "{multiclass}": multiclass}
    err = _error(capsys, [files.get(a, a) for a in argv])
    assert not re.search(r"`\w+`|\w+=True|np\.\w+\(", err), err
    flags = re.findall(r"--[a-z][a-z-]*", err)
    assert flags, f"the message names no flag: {err}"
