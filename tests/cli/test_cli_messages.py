"""CLI error messages name the flags the user typed, never Python arguments or NumPy reprs.

One test per message fixed (issue 11); each ran into the Python wording before
:mod:`isbetter.cli.messages`. The last test audits a list of bad commands at once.
"""

from __future__ import annotations

import argparse
import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from isbetter import ConvergenceWarning
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
    assert "name the right ones with --dataset-col, --system-col, --metric;" in err


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
    assert "1 score is missing (NaN) or infinite (line 6)" in err
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
    argv = ["f1", multiclass, "--a", "svm", "--b", "nb", "--metric", "dcf", "--p-positive", "2"]
    assert "--p-positive must be a probability in [0, 1], got 2.0." in _error(capsys, argv)


def test_power_unknown_measure(capsys):
    err = _error(capsys, ["power", "--scenario", "sigir-a", "--metric", "f2"])
    assert "--metric: unknown measure 'f2'" in err and "f(tp, fp, fn, tn)" not in err


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
    ["f1", "{multiclass}", "--a", "svm", "--b", "nb", "--metric", "fbeta", "--beta", "-1"],
    ["f1", "{multiclass}", "--a", "svm", "--b", "nb", "--resamples", "0"],
    ["power", "--scenario", "sigir-a", "--sizes", "0"],
    ["power", "--scenario", "sigir-a", "--replicates", "0"],
    ["power", "--scenario", "sigir-a", "--rope", "-1"],
    ["rank", "{three}", "--systems", "a", "zz", "--jobs", "1"],
    ["rank", "{three}", "--threshold", "2", "--jobs", "1"],
    ["rank", "{three}", "--margin", "2", "--jobs", "1"],
    ["rank", "{three}", "--jobs", "0"],
    ["rank", "{three}", "--rho", "0.3", "--method", "sign", "--jobs", "1"],
    ["rank", "{multiclass}", "--gold", "gold", "--systems", "svm", "nb", "--rho", "0.3"],
    ["cv", "{one}", "--a", "a", "--b", "b", "--fold-col", ""],
]


@pytest.mark.parametrize("argv", BAD, ids=[" ".join(a[:1] + a[-4:]) for a in BAD])
def test_no_python_words_in_cli_errors(capsys, argv, one, three, multiclass):
    files = {"{one}": one, "{three}": three, "{multiclass}": multiclass}
    err = _error(capsys, [files.get(a, a) for a in argv])
    assert not re.search(r"`\w+`|\w+=True|np\.\w+\(", err), err
    flags = re.findall(r"--[a-z][a-z-]*", err)
    assert flags, f"the message names no flag: {err}"


# ------------------------------------------------------------------ issue 20, item 9
def test_counts_and_lines_take_the_right_number(capsys, tmp_path):
    # before: "1 scores are missing (NaN) or infinite (lines 6)"
    df = _scores()
    df.loc[[4, 7], "score"] = np.nan
    path = tmp_path / "two.csv"
    df.to_csv(path, index=False)
    err = _error(capsys, ["cv", str(path), "--a", "a", "--b", "b"])
    assert "2 scores are missing (NaN) or infinite (lines 6, 9); scores must be finite. Fix " in err
    assert "them, or pass --drop-incomplete to drop those rows." in err


def test_missing_fold_names_only_the_keys_the_table_has(capsys, tmp_path):
    # before: "e.g. run 1 fold 5 has no score of b" of a table without a run column
    df = _scores().drop(columns="run")
    df = df.drop(index=df.index[(df.system == "b") & (df.fold == 5)])
    path = tmp_path / "gap.csv"
    df.to_csv(path, index=False)
    err = _error(capsys, ["cv", str(path), "--a", "a", "--b", "b", "--run-col", ""])
    assert "a (5), b (4); e.g. fold 5 has no score of b." in err and "run" not in err


def test_text_in_the_score_column_names_the_line_and_the_value(capsys, tmp_path):
    # before: "Metric column 'score' must hold numbers, found dtype str."
    df = _scores().astype({"score": object})
    df.loc[10, "score"] = "0.95x"
    path = tmp_path / "text.csv"
    df.to_csv(path, index=False)
    err = _error(capsys, ["cv", str(path), "--a", "a", "--b", "c"])
    assert (
        "Metric column 'score' must hold numbers (line 12: '0.95x'); fix that value, or name "
        "the metric column with --metric." in err
    )
    # another system's text does not concern the pair, as its missing folds do not
    assert main(["cv", str(path), "--a", "a", "--b", "b", "--seed", "1"]) == 0


def test_missing_run_column_says_how_to_say_there_is_none(capsys, tmp_path):
    path = tmp_path / "norun.csv"
    _scores().drop(columns="run").to_csv(path, index=False)
    err = _error(capsys, ["cv", str(path), "--a", "a", "--b", "b"])
    assert "Column 'run' (--run-col) not found." in err
    assert err.rstrip().endswith(
        "name the right ones with --run-col; for a single run of cross-validation, pass "
        "--run-col ''."
    )
    assert main(["cv", str(path), "--a", "a", "--b", "b", "--run-col", "", "--seed", "1"]) == 0


@pytest.mark.filterwarnings("ignore::isbetter.ConvergenceWarning")  # 2 chains x 200 draws
def test_rank_rho_reaches_every_pair(capsys, one, three):
    # before: "unrecognized arguments: --rho"
    argv = ["rank", one, "--jobs", "1", "--seed", "1", "--format", "json"]
    for extra, rho in (([], 0.2), (["--rho", "0.25"], 0.25)):  # 5 folds: 1/5 by default
        assert main([*argv, *extra]) == 0
        pairs = json.loads(capsys.readouterr().out)["metrics"]["score"]["pairs"]
        assert len(pairs) == 3
        assert {p["comparison"]["settings"]["rho"] for p in pairs} == {rho}
    hier = ["rank", three, "--rho", "0.25", "--method", "hierarchical", "--systems", "a", "b"]
    small = ["--draws", "200", "--tune", "200", "--chains", "2", "--jobs", "1", "--quiet"]
    assert main([*hier, *small, "--seed", "1", "--format", "json"]) == 0
    pair = json.loads(capsys.readouterr().out)["metrics"]["score"]["pairs"][0]
    assert pair["comparison"]["method"] == "hierarchical"
    assert pair["comparison"]["settings"]["rho"] == 0.25


def test_rank_rho_with_predictions_is_refused_before_any_work(capsys, multiclass):
    argv = ["rank", multiclass, "--gold", "gold", "--systems", "svm", "nb", "--rho", "0.3"]
    err = _error(capsys, argv)
    assert "--rho does not apply to --method paired; it takes " in err


@pytest.mark.parametrize("command", ["f1", "power"])
def test_measure_is_an_alias_of_metric(capsys, multiclass, command):
    # before: `f1 --measure f1` but `rank --gold ... --metric f1`: one thing, two words
    if command == "f1":
        argv = ["f1", multiclass, "--a", "svm", "--b", "nb", "--draws", "2000", "--no-baselines"]
        argv += ["--rope", "0.05"]  # without it, a note on the default ROPE
    else:
        argv = ["power", "--scenario", "sigir-a", "--sizes", "200", "--replicates", "5"]
    argv += ["--draws", "500"] if command == "power" else []
    argv += ["--seed", "1", "--format", "json"]
    assert main([*argv, "--metric", "precision"]) == 0
    current, err = capsys.readouterr()
    assert err == "" and '"precision"' in current
    assert main([*argv, "--measure", "precision"]) == 0
    old, err = capsys.readouterr()
    assert old == current
    assert err == (
        f"isbetter {command}: note: --measure is an alias of --metric, the current name; "
        "write --metric.\n"
    )
    err = _error(capsys, [*argv, "--metric", "f1", "--measure", "precision"])
    assert "argument --metric/--measure: given twice (f1, then precision)" in err


# issue 29 items 6 and 7: messages that were tracebacks or said too little


def test_scheduler_without_dask_says_how_to_install_it(capsys, three, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "dask.distributed", None)  # as if not installed
    err = _error(capsys, ["rank", three, "--scheduler", "tcp://127.0.0.1:1"])
    assert err == (
        "isbetter rank: error: --scheduler runs the pairs on Dask, which is not installed: pip "
        'install "isbetter[dask]" (or leave --scheduler out to run them here).\n'
    )


def test_decimal_commas_are_named(capsys, tmp_path):
    path = tmp_path / "comma.csv"
    df = _scores().astype({"score": object})
    df["score"] = [f"{v:.12f}".replace(".", ",") for v in _scores()["score"]]
    df.to_csv(path, index=False, sep=";")
    err = _error(capsys, ["cv", str(path), "--a", "a", "--b", "b"])
    assert "is written with a decimal comma (line 2: '0," in err
    assert "write decimal points ('0." in err


def test_a_missing_system_name_names_the_line(capsys, tmp_path):
    path = tmp_path / "nan.csv"
    df = _scores().astype({"system": object})
    df.loc[3, "system"] = None
    df.to_csv(path, index=False)
    err = _error(capsys, ["cv", str(path), "--a", "a", "--b", "b"])
    assert err == (
        "isbetter cv: error: Column 'system' (system) has missing values (line 5); every score "
        "needs a system: fill it in.\n"
    )


@pytest.mark.parametrize("cache", [False, True])
def test_an_interrupted_ranking_says_what_was_kept_and_how_to_resume(
    capsys, three, tmp_path, monkeypatch, cache
):
    import isbetter.ranking

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(isbetter.ranking, "rank", interrupted)
    folder = tmp_path / "cache"
    argv = ["rank", three, "--method", "signed-rank"] + (["--cache-dir", str(folder)] * cache)
    assert main(argv) == 130
    err = capsys.readouterr().err
    if cache:
        assert err == (
            f"isbetter rank: interrupted; the pairs finished so far are kept in {folder}: run "
            "the same command again to resume from them\n"
        )
    else:
        assert err == (
            "isbetter rank: interrupted; nothing was kept (with --cache-dir DIR each finished "
            "pair is kept, and the same command run again resumes from them)\n"
        )


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (
            "cv",
            "ROPE: zero width, no region of practical equivalence (only d = 0 counts as "
            "equivalent) (the default: no --rope given)",
        ),
        ("rank", "score, this data set (no ROPE; the default: no --rope given):"),
    ],
)
def test_cv_and_rank_without_rope_say_so_and_suggest_one(capsys, one, command, said):
    argv = [command, one] + (["--a", "a", "--b", "b"] if command == "cv" else [])
    assert main([*argv, "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert err == (
        f"isbetter {command}: note: no --rope given, so the ROPE is 0 and no practical "
        "equivalence can be concluded; give --rope in the units of score, e.g. --rope 0.01 "
        "(one point of the scores' scale; see 'How to choose a ROPE', docs/guide/rope.md).\n"
    )
    assert json.loads(out)["settings"]["rope_default"] is True
    assert main(argv) == 0
    assert said in capsys.readouterr().out
    assert main([*argv, "--rope", "0.01", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["settings"]["rope_default"] is False


@pytest.mark.parametrize(
    ("rope", "said"), [("0.5", "as wide as the spread"), ("0.0001", "below a tenth")]
)
def test_cv_warns_of_a_rope_that_does_not_fit_the_scores(capsys, one, rope, said):
    assert main(["cv", one, "--a", "a", "--b", "b", "--rope", rope]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"isbetter cv: warning: --rope {float(rope):g}: the ROPE") and said in err


def _two_metrics(tmp_path):
    """One data set, three systems: accuracy in [0, 1] and the same in percent."""
    df = _scores().assign(percent=lambda d: 100 * d.score)
    path = tmp_path / "two_metrics.csv"
    df.to_csv(path, index=False)
    return [str(path), "--metric", "score", "--metric", "percent"]


def test_rank_suggests_a_rope_per_metric_in_its_units(capsys, tmp_path):
    argv = ["rank", *_two_metrics(tmp_path)]
    assert main(argv) == 0
    assert capsys.readouterr().err == (
        "isbetter rank: note: no --rope given, so the ROPE is 0 and no practical equivalence "
        "can be concluded; give --rope in the units of each metric, e.g. --rope score=0.01 "
        "--rope percent=1 (one point of each metric's scale; see 'How to choose a ROPE', "
        "docs/guide/rope.md).\n"
    )
    assert main([*argv, "--rope", "score=0.01"]) == 0
    out, err = capsys.readouterr()
    assert err == (
        "isbetter rank: note: no --rope given for percent, so its ROPE is 0 and no practical "
        "equivalence can be concluded; give --rope in the units of percent, e.g. --rope "
        "percent=1 (one point of the scores' scale; see 'How to choose a ROPE', "
        "docs/guide/rope.md).\n"
    )
    # the report and the JSON mark the metric left at the default, and it alone
    assert "percent, this data set (no ROPE; the default: no --rope given):" in out
    assert "score, this data set (ROPE ±0.01):" in out
    assert main([*argv, "--rope", "score=0.01", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["settings"]["rope_default"] == ["percent"]
    assert main([*argv, "--rope", "score=0.01", "--rope", "percent=1", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["settings"]["rope_default"] is False


@pytest.mark.parametrize(
    ("rope", "said"),
    [
        ("percent=0.01", "--rope percent=0.01: the ROPE ±0.01 is below a tenth of one point"),
        ("score=0.5", "--rope score=0.5: the ROPE ±0.5 is as wide as the spread of all"),
    ],
)
def test_rank_warns_of_a_rope_that_does_not_fit_the_scores(capsys, tmp_path, rope, said):
    other = "score=0.01" if rope.startswith("percent") else "percent=1"
    assert main(["rank", *_two_metrics(tmp_path), "--rope", rope, "--rope", other]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"isbetter rank: warning: {said}") and err.count("\n") == 1


def _f1_note(command):
    """The note of a command without --rope whose default ROPE is F1's, 0.05."""
    return (
        f"isbetter {command}: note: no --rope given: using the default ROPE ±0.05 in the units "
        "of f1 (differences within it count as practically equivalent); give --rope for your "
        "application (see 'How to choose a ROPE', docs/guide/rope.md).\n"
    )


def test_rank_of_predictions_names_its_default_rope(capsys, multiclass):
    argv = ["rank", multiclass, "--gold", "gold", "--systems", "svm", "nb", "--draws", "2000"]
    assert main([*argv, "--seed", "1", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert err == _f1_note("rank")
    assert json.loads(out)["settings"]["rope_default"] is True
    assert main([*argv, "--rope", "5"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("isbetter rank: warning: --rope 5: the ROPE ±5 is as wide as")


def test_f1_without_rope_names_its_default(capsys, multiclass):
    argv = ["f1", multiclass, "--a", "svm", "--b", "nb", "--draws", "2000", "--no-baselines"]
    assert main([*argv, "--seed", "1", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert err == _f1_note("f1")
    data = json.loads(out)
    assert data["settings"]["rope_default"] is True and data["rope"] == 0.05
    assert main([*argv, "--seed", "1"]) == 0
    assert "ROPE ±0.05 (the default: no --rope given)" in capsys.readouterr().out
    assert main([*argv, "--seed", "1", "--rope", "0.05"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "the default" not in out


@pytest.mark.parametrize(
    ("rope", "said"), [("5", "as wide as the spread"), ("0.0001", "below a tenth")]
)
def test_f1_warns_of_a_rope_that_does_not_fit_the_measure(capsys, multiclass, rope, said):
    argv = ["f1", multiclass, "--a", "svm", "--b", "nb", "--draws", "2000", "--no-baselines"]
    assert main([*argv, "--rope", rope]) == 0
    err = capsys.readouterr().err
    assert err.startswith(f"isbetter f1: warning: --rope {float(rope):g}: the ROPE") and said in err


def test_plackett_luce_has_no_rope_to_speak_of(capsys, three):
    argv = ["rank", three, "--method", "plackett-luce", "--draws", "200", "--tune", "200"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a small run: not the point
        assert main([*argv, "--chains", "2", "--seed", "1", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert "rope" not in err.lower() and "rope_default" not in json.loads(out)["settings"]
    # nor in its settings and signature (it printed rope:0)
    assert not {"rope", "ropes"} & set(json.loads(out)["settings"])
    assert "rope" not in json.loads(out)["signature"]


def test_warnings_are_one_line_each_in_the_command_lines_words(capsys, monkeypatch):
    """Before: Python's ``/path/rank.py:445: ConvergenceWarning: ... Increase `tune` ...`` and
    the source line below it; another library's warning over several lines."""

    def run(args):
        warnings.simplefilter("always")  # whatever the filters of the test run say
        warnings.warn(
            "The hierarchical model's MCMC did not converge well: R-hat max 1.02. Increase "
            "`tune` and `draws`, or check the data.",
            ConvergenceWarning,
            stacklevel=2,
        )
        warnings.warn("\nA library's notice\nover two lines.", FutureWarning, stacklevel=2)
        return 0

    monkeypatch.setattr("isbetter.cli.cv.run", run)
    shown = warnings.showwarning
    assert main(["cv", "scores.csv", "--a", "a", "--b", "b"]) == 0
    assert capsys.readouterr().err == (
        "isbetter cv: warning: The hierarchical model's MCMC did not converge well: R-hat max "
        "1.02. Increase --tune and --draws, or check the data.\n"
        "isbetter cv: warning: FutureWarning: A library's notice over two lines.\n"
    )
    assert warnings.showwarning is shown  # the library's users keep Python's own
