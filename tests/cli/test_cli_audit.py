"""Issue 11's defects that had no test of their own, each run through the command line.

Flags given twice, a zero ROPE printed as "-0", ``f1`` with one of ``--a/--b``, help
texts, the one-data-set report, a system with missing folds blocking another pair,
what ``--drop-incomplete`` dropped, fold labels offset by one, and Ctrl-C swallowed
by a sampler. Every test here failed before its fix (or pins a behaviour the issue
asked for that no test named). All fast: no hierarchical fits.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from isbetter import read_scores
from isbetter.cli import _build_parser, main
from isbetter.core.errors import InputError
from isbetter.core.vocabulary import FORMATS

F1_EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "f1_example" / "predictions.csv"


def _scores(missing: bool = False, offset: bool = False) -> pd.DataFrame:
    """Systems a > b > c on one data set, 2 runs x 5 folds; c may lack run 1 fold 5."""
    rng = np.random.default_rng(1)
    rows = [
        (s, r, f, round(0.8 + shift + rng.normal(0, 0.01), 5))
        for s, shift in (("a", 0.02), ("b", 0.0), ("c", -0.01))
        for r in (1, 2)
        for f in range(1, 6)
    ]
    df = pd.DataFrame(rows, columns=["system", "run", "fold", "score"])
    if missing:
        df = df[~((df["system"] == "c") & (df["run"] == 1) & (df["fold"] == 5))]
    if offset:  # b's folds labelled 0-4, a's and c's 1-5
        df.loc[df["system"] == "b", "fold"] -= 1
    return df


@pytest.fixture
def full(tmp_path):
    path = tmp_path / "full.csv"
    _scores().to_csv(path, index=False)
    return str(path)


@pytest.fixture
def cmiss(tmp_path):
    path = tmp_path / "cmiss.csv"
    _scores(missing=True).to_csv(path, index=False)
    return str(path)


def _error(capsys, argv: list[str]) -> str:
    """Run a bad command: exit 2 and one line on stderr; return that line."""
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    return err


def _cv(path: str, *extra: str) -> list[str]:
    return ["cv", path, "--dataset-col", "", "--seed", "1", *extra]


# ------------------------------------------------------------------ flags given twice
TWICE = [
    (["cv", "{full}", "--a", "a", "--b", "b", "--metric", "score", "--metric", "x"], "--metric"),
    (["cv", "{full}", "--a", "a", "--b", "b", "--b", "c"], "--b"),
    (["cv", "{full}", "--a", "a", "--b", "b", "--rope", "0.01", "--rope=0.02"], "--rope"),
    (["cv", "{full}", "--a", "a", "--b", "b", "--format", "json", "--format", "csv"], "--format"),
    (["f1", "{f1}", "--a", "svm", "--b", "nb", "--gold", "gold", "--gold", "x"], "--gold"),
    (["power", "--scenario", "sigir-a", "--sizes", "100", "--sizes", "200"], "--sizes"),
    (["rank", "{full}", "--method", "sign", "--method", "signed-rank"], "--method"),
    (["rank", "{full}", "--lower-is-better", "--lower-is-better", "score"], "--lower-is-better"),
]


@pytest.mark.parametrize(("argv", "flag"), TWICE, ids=[f for _, f in TWICE])
def test_a_flag_given_twice_is_an_error_naming_it(capsys, full, argv, flag):
    """argparse would keep the last value silently; the user meant one of the two."""
    argv = [{"{full}": full, "{f1}": str(F1_EXAMPLE)}.get(a, a) for a in argv]
    err = _error(capsys, argv)
    assert re.match(rf"isbetter \w+: error: argument {flag}: given twice \(.+, then .+\); ", err)


def test_flags_meant_to_repeat_still_repeat():
    parser = _build_parser()
    args = parser.parse_args(["f1", "p.csv", "--class", "x", "--class", "macro"])
    assert args.classes == ["x", "macro"]
    args = parser.parse_args(["rank", "s.csv", "--metric", "m1", "--metric", "m2"])
    assert args.metric == ["m1", "m2"]
    again = parser.parse_args(["cv", "s.csv", "--a", "x", "--b", "y", "--metric", "m"])
    assert again.metric == "m"  # a new parse starts with no flag given


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--metric", "score", "--metric", "score"], "--metric 'score' is given twice"),
        (["--rope", "0.01", "--rope", "0.02"], "a ROPE for every metric is given twice"),
        (["--rope", "score=0.01", "--rope", "score=0.02"], "the ROPE of 'score' is given twice"),
    ],
)
def test_rank_repeatable_flags_refuse_the_same_thing_twice(capsys, full, extra, message):
    err = _error(capsys, ["rank", full, "--dataset-col", "", "--jobs", "1", *extra])
    assert message in err


# ------------------------------------------------------------------ a zero ROPE
_MINUS_ZERO = re.compile(r"-0(?![.\d])")


def _zero_rope_runs(full: str) -> dict[str, list[str]]:
    return {
        "cv": _cv(full, "--a", "a", "--b", "b"),
        "cv-sign": _cv(full, "--a", "a", "--b", "b", "--method", "sign", "--draws", "2000"),
        "f1": ["f1", str(F1_EXAMPLE), "--a", "svm", "--b", "nb", "--draws", "2000"]
        + ["--resamples", "100", "--seed", "1"],
        "power": ["power", "--scenario", "sigir-a", "--sizes", "60", "--replicates", "4"]
        + ["--draws", "200", "--seed", "1", "--quiet"],
        "rank": ["rank", full, "--dataset-col", "", "--method", "sign", "--draws", "2000"]
        + ["--jobs", "1", "--quiet", "--seed", "1"],
    }


@pytest.mark.parametrize("command", ["cv", "cv-sign", "f1", "power", "rank"])
def test_a_zero_rope_is_never_printed_as_minus_zero(capsys, full, command):
    argv = _zero_rope_runs(full)[command]
    for rope in ("0", "-0"):
        for fmt in FORMATS:
            assert main([*argv, "--rope", rope, "--format", fmt]) == 0
            out = capsys.readouterr().out
            assert not _MINUS_ZERO.search(out), (rope, fmt, _MINUS_ZERO.findall(out))
            if fmt == "text":
                assert "no region of practical equivalence" in out or "no ROPE" in out


def test_a_zero_rope_says_so_in_the_region_names(capsys, full):
    assert main([*_cv(full, "--a", "a", "--b", "b"), "--rope", "-0"]) == 0
    out = capsys.readouterr().out
    assert "practically equivalent (d = 0)" in out and "b better (d < 0)" in out
    assert "ROPE: zero width, no region of practical equivalence" in out
    assert main([*_cv(full, "--a", "a", "--b", "b"), "--rope", "0.01"]) == 0
    assert "practically equivalent (-0.01 <= d <= 0.01)" in capsys.readouterr().out


def test_the_triangle_of_a_zero_rope_says_d_equals_0():
    from matplotlib.figure import Figure

    from isbetter import compare
    from isbetter.plots import plot_simplex

    table = read_scores(_scores(), dataset=None)
    res = compare(table, "a", "b", method="sign", rope=0.0, rng=1, draws=2000)
    ax = plot_simplex(res, ax=Figure().add_subplot())
    texts = " ".join(t.get_text() for t in ax.texts)
    assert "ROPE (d = 0)" in texts and "<= 0" not in texts


# ------------------------------------------------------------------ f1 and its two systems
@pytest.mark.parametrize(
    ("given", "message"),
    [
        (["--a", "svm"], "--a svm is given without --b"),
        (["--b", "nb"], "--b nb is given without --a"),
    ],
)
def test_f1_with_one_system_names_the_missing_flag(capsys, given, message):
    # before: "Name the two systems with --a and --b; the table has 1: 'svm'"
    err = _error(capsys, ["f1", str(F1_EXAMPLE), *given])
    assert message in err and "the table has" not in err


def test_f1_same_system_twice_is_rejected(capsys):
    # before: ran and printed BF01 inf on every row
    err = _error(capsys, ["f1", str(F1_EXAMPLE), "--a", "svm", "--b", "svm"])
    assert "--a and --b are both 'svm'; compare two different systems." in err


def test_f1_without_systems_is_one_short_line(capsys):
    # before: 11 101 characters, every one of the 2 000 ids of the id column listed
    err = _error(capsys, ["f1", str(F1_EXAMPLE)])
    assert len(err) < 400, len(err)
    assert "'doc_id': 1, 10, 100, 1000, 1001 and 1995 more" in err
    assert "name the systems' columns with --a and --b (is an id column taken" in err


# ------------------------------------------------------------------ help texts
def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = _build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


@pytest.mark.parametrize("command", ["cv", "f1", "power", "rank", "demo"])
def test_help_shows_each_default_once_and_every_option_has_help(command):
    parser = _subparsers()[command]
    formatter = parser._get_formatter()
    for action in parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        assert action.help, f"{command} {action.option_strings[0]} has no help"
        text = formatter._expand_help(action)
        assert text.count("(default:") <= 1, text  # not "(default: 1/folds) (default: None)"
        assert "None" not in text, text
    if command != "demo":
        assert "report format" in parser.format_help()  # --format has help


def test_help_shows_a_zero_default():
    """A default of 0 is shown: 0.0 == False once hid it (cv --rope now says its own)."""
    help_text = " ".join(_subparsers()["cv"].format_help().split())
    assert "(default 0: no practical equivalence can be concluded" in help_text


# ------------------------------------------------------------------ one data set
def test_one_data_set_report_names_what_it_compares(capsys, uci_long_path):
    argv = ["cv", str(uci_long_path), "--dataset-col", "dataset_id"]
    argv += ["--system-col", "classifier", "--metric", "accuracy", "--a", "nbc", "--b", "aode"]
    argv += ["--rope", "0.01", "--dataset", "1", "--seed", "1"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    for part in (
        "Bayesian correlated t-test: nbc vs aode on data set 1, accuracy (higher is better)",
        "observed: mean accuracy nbc 0.9595, aode 0.9788, mean difference -0.0194 (100 scores)",
        "posterior mean difference: -0.0194 (sd 0.0056), 95% HDI [-0.0303, -0.0085]",
        "correlation of the fold differences rho = 0.1",
        "corrected resampled t-test (Nadeau & Bengio 2003), two-sided: statistic -3.520, "
        "p = 0.0006536",
    ):
        assert part in text, part
    assert main([*argv, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dataset"] == "1" and out["observed"]["n"] == 100
    assert out["settings"]["rho"] == pytest.approx(0.1)
    assert out["tests"][0]["name"] == "corrected_t"


# ------------------------------------------------------------------ missing folds
def test_another_systems_missing_fold_does_not_concern_the_pair(capsys, full, cmiss):
    # before: "Folds differ between systems ... c (9)" for a vs b, or with
    # --drop-incomplete a vs b lost run 1 fold 5 and its answer moved, silently
    assert main([*_cv(full, "--a", "a", "--b", "b"), "--format", "json"]) == 0
    expected = json.loads(capsys.readouterr().out)
    for extra in ([], ["--drop-incomplete"]):
        assert main([*_cv(cmiss, "--a", "a", "--b", "b"), "--format", "json", *extra]) == 0
        got = json.loads(capsys.readouterr().out)
        assert got["observed"]["n"] == 10 and "dropped" not in got["settings"]
        assert got["p_a_better"] == expected["p_a_better"]
    err = _error(capsys, _cv(cmiss, "--a", "a", "--b", "c"))  # the pair itself is incomplete
    assert "e.g. run 1 fold 5 has no score of c" in err and "--drop-incomplete" in err


def test_drop_incomplete_says_what_was_dropped(capsys, cmiss):
    assert main([*_cv(cmiss, "--a", "a", "--b", "c"), "--drop-incomplete"]) == 0
    text = capsys.readouterr().out
    assert "(9 scores)" in text
    assert (
        "dropped as incomplete: 1 row, key not present for every system (1): "
        "system 'a', run 1, fold 5"  # --dataset-col '': no data set column to name
    ) in text
    argv = ["rank", cmiss, "--dataset-col", "", "--method", "sign", "--draws", "2000"]
    assert main([*argv, "--jobs", "1", "--quiet", "--drop-incomplete", "--format", "json"]) == 0
    dropped = json.loads(capsys.readouterr().out)["settings"]["dropped"]
    assert dropped.startswith("2 rows, key not present for every system (2): system 'a'")
    # a system left out of the ranking drops nothing from the others
    assert main([*argv, "--jobs", "1", "--quiet", "--systems", "a", "b"]) == 0
    assert "dropped" not in capsys.readouterr().out


def test_fold_labels_offset_by_one_are_not_paired(capsys, tmp_path):
    path = tmp_path / "offset.csv"
    _scores(offset=True).to_csv(path, index=False)
    err = _error(capsys, _cv(str(path), "--a", "a", "--b", "b"))
    assert "a (10), b (10); e.g. run 1 fold 5 has no score of b" in err
    assert "needs the same fold labels" in err


def test_read_scores_keeps_the_systems_asked_for():
    df = _scores(missing=True)
    table = read_scores(df, dataset=None, systems=["b", "a"])
    assert table.systems == ("a", "b")
    with pytest.raises(InputError, match=r"`systems`: unknown system 'zz'\. Available"):
        read_scores(df, dataset=None, systems=["a", "zz"])
    with pytest.raises(InputError, match="`systems` names 'a' twice"):
        read_scores(df, dataset=None, systems=["a", "a"])


# ------------------------------------------------------------------ Ctrl-C
def _interrupted_fit(then: str):
    """A compare() whose sampler catches the Ctrl-C it receives, as PyMC and nutpie do."""
    import isbetter.cv.compare as cv

    real = cv.compare

    def compare(*args, **kwargs):
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            if then == "raise":  # nutpie's abort: "Sampler has no results to take"
                raise ValueError("Sampler has no results to take") from None
        return real(*args, **kwargs)  # a cut-short fit, reported as if complete

    return compare


@pytest.mark.parametrize("then", ["return", "raise"])
def test_ctrl_c_caught_by_a_sampler_still_stops_the_command(
    capsys, full, monkeypatch, then, python_sigint
):
    import isbetter.cv.compare as cv

    real = cv.compare
    monkeypatch.setattr(cv, "compare", _interrupted_fit(then))
    assert main(_cv(full, "--a", "a", "--b", "b")) == 130  # before: 0, or 1 with a traceback
    out, err = capsys.readouterr()
    assert out == "" and err == "isbetter cv: interrupted\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
    monkeypatch.setattr(cv, "compare", real)
    assert main(_cv(full, "--a", "a", "--b", "b")) == 0  # the next command is not affected


# ------------------------------------------------------------------ the guide's first example
@pytest.mark.slow
def test_readme_tour_prints_no_blas_warning(tmp_path):
    """The cross-validation guide's example, as a script in a fresh process: no BLAS notice."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "guide" / "cross_validation.md").read_text(encoding="utf-8")
    block = re.findall(r"```python\n(.*?)```", text, flags=re.S)[0]
    (tmp_path / "data").symlink_to(root / "data")
    (tmp_path / "tour.py").write_text(block, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-W", "default", "tour.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "BLAS" not in run.stderr, run.stderr[-2000:]
    assert (tmp_path / "triangle.png").stat().st_size > 1000  # the script saves its plot
