"""``isbetter demo``: the tour runs on the shipped data; each printed command gives its report."""

from __future__ import annotations

import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import isbetter
from isbetter.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tour(tmp_path_factory):
    # run outside the repository, into a plot folder that does not exist yet (nor its parent)
    work = tmp_path_factory.mktemp("elsewhere")
    plots = work / "plots" / "tour"
    capture = pytest.MonkeyPatch()  # module scope: capsys is per test
    out, err = io.StringIO(), io.StringIO()
    capture.setattr(sys, "stdout", out)
    capture.setattr(sys, "stderr", err)
    capture.chdir(work)
    try:
        code = main(["demo", "--plot-dir", "plots/tour", "--seed", "7"])
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
    assert "accuracy, next data set (ROPE ±0.01): nbc < j48 ≈ j48gr" in steps[3][0]
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


def test_tour_reads_the_package_data_not_the_checkout(tour):
    """The data comes from the installed package (importlib.resources), not ``data/``."""
    from isbetter import example_data

    package = Path(example_data.__file__).parent
    files = [Path(shlex.split(c)[2]) for _, c in _steps(tour[1])]
    assert files == [package / f for f in ("uci_cv_accuracy_long.csv",) * 2] + [
        package / "f1_example_predictions.csv",
        package / "uci_cv_accuracy_long.csv",
    ]
    assert not any(f.is_relative_to(ROOT / "data") for f in files)


def test_plot_dir_that_is_a_file_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "taken").write_text("")
    assert main(["demo", "--plot-dir", str(tmp_path / "taken")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--plot-dir" in err and "is a file" in err


def test_checkout_data_links_to_the_package_files():
    """Each example file is kept once: the checkout's data/ entry is a link to it."""
    from isbetter import example_data

    links = {
        "uci": "uci_benavoli2017/uci_cv_accuracy_long.csv",
        "uci_means": "uci_benavoli2017/uci_mean_accuracy.csv",
        "f1_example": "f1_example/predictions.csv",
        "f1_20class": "f1_20class/predictions.csv",
    }
    assert set(links) == set(example_data.NAMES)
    for name, entry in links.items():
        link = ROOT / "data" / entry
        assert link.is_symlink() and link.resolve() == example_data.path(name).resolve()
    with pytest.raises(isbetter.InputError, match="Unknown name 'ucy'.*'uci'"):
        example_data.path("ucy")


def test_every_example_file_names_its_origin_and_licence():
    """NOTICE.md (shipped beside the data) has a row for each data file, with a licence."""
    from isbetter import example_data

    folder = example_data.path("uci").parent
    notice = (folder / "NOTICE.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(" `"): line for line in notice.splitlines()
            if line.startswith("| `")}  # fmt: skip
    assert set(rows) == {p.name for p in folder.glob("*.csv")} == set(example_data.NAMES.values())
    for name, line in rows.items():
        licence = line.rstrip(" |").rsplit("|", 1)[1]
        assert "GPL-3.0" in licence or "MIT" in licence, name
        if "GPL-3.0" in licence:
            gpl = (folder / "LICENSE-GPL-3.0.txt").read_text(encoding="utf-8").split()
            assert gpl[:5] == ["GNU", "GENERAL", "PUBLIC", "LICENSE", "Version"] and gpl[5] == "3,"


@pytest.mark.slow
def test_demo_runs_from_a_built_wheel_anywhere(tmp_path):
    """`pip install .` (a wheel, not editable) carries the data: the demo runs from /tmp."""
    tree = tmp_path / "tree"  # build from a copy: the checkout gets no build/ or egg-info
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, tree / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "-w", tmp_path / "dist", tree], check=True)
    (wheel,) = (tmp_path / "dist").glob("isbetter-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        shipped = {n for n in zf.namelist() if n.startswith("isbetter/example_data/")}
    assert {n.rsplit("/", 1)[1] for n in shipped} >= {
        "uci_cv_accuracy_long.csv", "uci_mean_accuracy.csv",
        "f1_example_predictions.csv", "f1_20class_predictions.csv",
        "NOTICE.md", "LICENSE-GPL-3.0.txt",
    }  # fmt: skip
    with zipfile.ZipFile(wheel) as zf:
        meta = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA")))
    assert b"License-File: LICENSE" in meta and b"LICENSE-GPL-3.0.txt" in meta
    assert wheel.stat().st_size < 1_000_000  # the data is deflated in the wheel
    site = tmp_path / "site"
    subprocess.run([*pip, "install", "--no-deps", "--target", site, wheel], check=True)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "MPLBACKEND": "Agg"}
    run = subprocess.run(
        [sys.executable, "-c", "import sys, isbetter.cli; print(isbetter.cli.__file__, "
         "file=sys.stderr); sys.exit(isbetter.cli.main(sys.argv[1:]))",
         "demo", "--plot-dir", "out/plots"],
        cwd=work, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stderr.startswith(str(site / "isbetter" / "cli"))  # the installed copy ran
    assert str(site / "isbetter" / "example_data" / "uci_cv_accuracy_long.csv") in run.stdout
    assert len(list((work / "out" / "plots").glob("*.png"))) == 4
