"""``isbetter demo``: the tour runs on the shipped data; each printed command gives its report."""

from __future__ import annotations

import io
import re
import shlex
import sys

import pytest

from isbetter.cli import main


@pytest.fixture(scope="module")
def tour(tmp_path_factory):
    plots = tmp_path_factory.mktemp("plots")
    capture = pytest.MonkeyPatch()  # module scope: capsys is per test
    out, err = io.StringIO(), io.StringIO()
    capture.setattr(sys, "stdout", out)
    capture.setattr(sys, "stderr", err)
    try:
        code = main(["demo", "--plot-dir", str(plots), "--seed", "7"])
    finally:
        capture.undo()
    return code, out.getvalue(), err.getvalue(), plots


def _steps(text: str) -> list[tuple[str, str]]:
    """(report, command) of each step of the tour."""
    steps = []
    for block in re.split(r"\n== \d\. ", text)[1:]:
        body, _, shell = block.partition("\n  same from the shell:\n  $ ")
        report = body.split("\n\n", 1)[1]
        steps.append((report.strip(), shell.strip()))
    return steps


def test_tour_runs_with_four_steps_and_plots(tour):
    code, out, err, plots = tour
    assert code == 0
    steps = _steps(out)
    assert [c.split()[1] for _, c in steps] == ["cv", "cv", "f1", "rank"]
    assert "Bayesian correlated t-test: nbc vs aode on data set anneal (1)" in steps[0][0]
    assert "Bayesian signed-rank test: nbc vs aode" in steps[1][0]
    assert "paired Bayesian comparison of f1" in steps[2][0]
    assert "accuracy (ROPE ±0.01): nbc < j48 ≈ j48gr" in steps[3][0]
    names = sorted(p.name for p in plots.iterdir())
    assert names == ["1_correlated_t.png", "2_signed_rank.png", "3_f1.png", "4_ranking.png"]
    assert all((plots / n).stat().st_size > 1000 for n in names)
    assert err.count("wrote plot to") == 4


@pytest.mark.parametrize("step", [0, 1, 2, 3])
def test_each_printed_command_gives_the_same_report(tour, capsys, step):
    report, command = _steps(tour[1])[step]
    argv = shlex.split(command)
    assert argv[0] == "isbetter"
    assert main(argv[1:]) == 0
    assert capsys.readouterr().out.strip() == report


def test_missing_data_folder_is_a_one_line_error(tmp_path, capsys):
    assert main(["demo", "--data", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--data" in err and "pass --data DIR" in err
