"""What the command line writes where: --output follows its extension (issue 29)."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from isbetter.cli import main


@pytest.fixture(scope="module")
def anneal_csv(tmp_path_factory, uci_long_path):
    """The five UCI classifiers on one data set (anneal): the correlated t-test, exact."""
    df = pd.read_csv(uci_long_path)
    path = tmp_path_factory.mktemp("anneal") / "anneal.csv"
    df[df["dataset_id"] == 1].to_csv(path, index=False)
    return path


def _cv(path):
    cols = ["--dataset-col", "dataset_name", "--system-col", "classifier", "--metric", "accuracy"]
    return ["cv", str(path), *cols, "--a", "nbc", "--b", "aode", "--rope", "0.01", "--seed", "1"]


@pytest.mark.parametrize(
    ("name", "check"),
    [
        ("r.json", lambda t: json.loads(t)["method"] == "correlated_t"),
        ("r.md", lambda t: t.startswith("**Bayesian correlated t-test")),
        ("r.tex", lambda t: "\\begin{table}" in t),
        ("r.html", lambda t: t.startswith('<table class="isbetter-report">')),
        ("r.csv", lambda t: t.startswith("method,")),
        ("r.txt", lambda t: t.startswith("Bayesian correlated t-test: nbc vs aode")),
    ],
)
def test_output_follows_its_extension(anneal_csv, tmp_path, capsys, name, check):
    """Issue 29: ``--output x.json`` wrote the text report into a file named .json."""
    out = tmp_path / name
    assert main([*_cv(anneal_csv), "--output", str(out)]) == 0
    assert capsys.readouterr().out == ""
    assert check(out.read_text(encoding="utf-8")), out.read_text()[:200]


def test_format_given_writes_that_format_to_any_unknown_extension(anneal_csv, tmp_path):
    out = tmp_path / "r.out"
    assert main([*_cv(anneal_csv), "--format", "json", "--output", str(out)]) == 0
    assert json.loads(out.read_text())["method"] == "correlated_t"


@pytest.mark.parametrize(
    ("name", "fmt", "message"),
    [
        ("r.out", None, r"--output '.*r\.out': cannot tell the report format from '\.out'; "
         r"end the name in \.txt \(text\), \.md \(markdown\), .*, or give --format\."),
        ("report", None, "--output .*: cannot tell the report format from a name without an .*"),
        ("r.json", "markdown", r"--output '.*r\.json' names a json file, but --format is "
         r"markdown; give --format json, or a name ending in \.md\."),
    ],
)  # fmt: skip
def test_unknown_or_contradicting_output_is_one_line_exit_2(
    anneal_csv, tmp_path, capsys, name, fmt, message
):
    given = [] if fmt is None else ["--format", fmt]
    out = tmp_path / name
    assert main([*_cv(anneal_csv), *given, "--output", str(out)]) == 2
    std, err = capsys.readouterr()
    assert std == "" and err.count("\n") == 1 and not out.exists()
    assert re.fullmatch(f"isbetter cv: error: {message}\n", err), err


def test_joint_on_one_data_set_says_what_to_use_instead(anneal_csv, capsys):
    """Issue 29: the message said only that the scores are on 1 data set."""
    cols = ["--dataset-col", "dataset_name", "--system-col", "classifier", "--metric", "accuracy"]
    code = main(["rank", str(anneal_csv), *cols, "--method", "joint", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "these scores are on 1 data set" in err
    assert "rank them on it, compare every pair on its folds: --method auto" in err
    assert "correlated t-test" in err
