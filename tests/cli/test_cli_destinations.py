"""Every output path is checked by a real test write before any work (issue 20, item 3).

Before, only the existence of the folder was checked: a read-only or immutable folder
passed, the whole fit ran, and the write failed with exit 1 and a raw ``[Errno 30]
Read-only file system``. Now each destination flag of each subcommand is a one-line
error naming the flag, exit 2, before the subcommand starts, and the check leaves
nothing behind.

A folder that really refuses writes, for root too: permission bits (``chmod 0o555``)
stop an ordinary user but not root, which the tests may run as; an immutable folder
(``chattr +i``, ext4/xfs/btrfs) stops root as well (EPERM). The exact error of the
report, EROFS, comes from a read-only tmpfs mounted in a private user and mount
namespace (``unshare``), where the command runs in a subprocess.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import isbetter
from _tasks import make_tasks
from _uci import UCI, UCI_COLUMNS
from isbetter import InputError
from isbetter.cli import _build_parser, main
from isbetter.ranking.execution import run_tasks

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(isbetter.__file__).resolve().parents[1]
F1_EXAMPLE = ROOT / "data" / "f1_example" / "predictions.csv"
#: a command line of each subcommand that would run (and fit) as given
COMMANDS = {
    "cv": ["cv", str(UCI), *UCI_COLUMNS, "--a", "nbc", "--b", "aode", "--dataset", "1"],
    "f1": ["f1", str(F1_EXAMPLE), "--a", "svm", "--b", "nb"],
    "items": [
        "items",
        str(ROOT / "tests" / "items" / "data" / "lm_eval" / "ko_winogrande"),
        "--a",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--b",
        "upstage/SOLAR-10.7B-Instruct-v1.0",
    ],
    "power": ["power", "--scenario", "sigir-a", "--sizes", "100", "--replicates", "20"],
    "rank": ["rank", str(UCI), *UCI_COLUMNS, "--systems", "nbc", "aode"],
    "demo": ["demo"],
    "cache": ["cache", "info"],
}
#: path options that are read, not written
INPUTS = {("demo", "--data")}
SUFFIX = {"--plot": "plot.png", "--report": "report.html", "--output": "report.txt"}


def _destinations() -> list[tuple[str, str, bool]]:
    """(subcommand, flag, is a folder) of every path option a subcommand writes to."""
    parser = _build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = []
    for name, command in sub.choices.items():
        for action in command._actions:
            flag = max(action.option_strings, key=len, default=None)
            if action.type is Path and flag is not None and (name, flag) not in INPUTS:
                found.append((name, flag, action.metavar == "DIR"))
    return sorted(found)


DESTINATIONS = _destinations()


def _refuses_writes(path: Path) -> bool:
    """Whether writing really fails: a new file in a folder, or opening a file to write."""
    try:
        if path.is_dir():
            (path / "probe").write_bytes(b"")
            (path / "probe").unlink()
        else:
            os.close(os.open(path, os.O_WRONLY))
    except OSError:
        return True
    return False


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[Path]:
    """`path` (a folder or a file) made unwritable, for root too; restored afterwards."""
    mode = path.stat().st_mode
    path.chmod(0o555 if path.is_dir() else 0o444)
    immutable = False
    if not _refuses_writes(path) and shutil.which("chattr"):  # root: the bits do not stop it
        immutable = subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
    try:
        if not _refuses_writes(path):
            pytest.skip("no way to make a path unwritable here (root, and chattr +i refused)")
        yield path
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(mode)


@pytest.fixture
def locked(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    with _locked(folder):
        yield folder


@pytest.fixture
def nothing_runs(monkeypatch):
    """Make every subcommand fail the test if it starts: the check must come first."""
    ran = []

    def run(args):
        ran.append(args.command)
        return 0

    for name in COMMANDS:
        monkeypatch.setattr(f"isbetter.cli.{name}.run", run)
    return ran


def _one_line_error(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_every_destination_flag_is_known():
    """The table the tests below run through: each subcommand's output paths."""
    assert DESTINATIONS == sorted(
        [(c, f, False) for c in ("cv", "f1", "items", "power", "rank") for f in SUFFIX]
        + [("rank", "--cache-dir", True), ("demo", "--plot-dir", True)]
    )


@pytest.mark.parametrize(("command", "flag", "folder"), DESTINATIONS)
def test_an_unwritable_destination_stops_the_command_before_any_work(
    capsys, locked, nothing_runs, command, flag, folder
):
    target = locked / "made-here" if folder else locked / SUFFIX[flag]
    err = _one_line_error(capsys, [*COMMANDS[command], flag, str(target)])
    assert err.startswith(f"isbetter {command}: error: {flag} {str(target)!r}: cannot write")
    assert nothing_runs == []  # before: the command ran, and failed only when writing
    assert list(locked.iterdir()) == []


@pytest.mark.parametrize(("command", "flag", "folder"), DESTINATIONS)
def test_a_writable_destination_is_left_as_it_was(tmp_path, nothing_runs, command, flag, folder):
    target = tmp_path / "out" if folder else tmp_path / SUFFIX[flag]
    assert main([*COMMANDS[command], flag, str(target)]) == 0
    assert nothing_runs == [command]
    assert list(tmp_path.iterdir()) == []  # the test write is gone; no folder was made


def test_an_existing_file_that_cannot_be_written(tmp_path, capsys, nothing_runs):
    report = tmp_path / "report.txt"
    report.write_text("an earlier report\n")
    before = report.stat().st_mtime_ns
    assert main([*COMMANDS["cv"], "--output", str(report)]) == 0  # writable: opened, unchanged
    assert report.read_text() == "an earlier report\n" and report.stat().st_mtime_ns == before
    with _locked(report):
        err = _one_line_error(capsys, [*COMMANDS["cv"], "--output", str(report)])
    assert "--output" in err and "cannot write to this file" in err
    assert nothing_runs == ["cv"]  # only the first, writable run started


def test_a_folder_that_is_a_file(tmp_path, capsys, nothing_runs):
    afile = tmp_path / "scores.csv"
    afile.write_text("x\n")
    err = _one_line_error(capsys, [*COMMANDS["rank"], "--cache-dir", str(afile / "cache")])
    assert f"--cache-dir {str(afile / 'cache')!r}: {str(afile)!r} is a file, not a folder." in err
    err = _one_line_error(capsys, [*COMMANDS["cv"], "--plot", str(afile / "p.png")])
    assert f"the folder {str(afile)!r} is a file, not a folder." in err
    assert nothing_runs == []


def test_run_tasks_checks_its_cache_before_any_task(locked, monkeypatch):
    """The API too: a cache that cannot be written stops the ranking before the first fit."""
    from isbetter.ranking import execution

    def never(task):
        raise AssertionError("a task ran")

    monkeypatch.setattr(execution, "run_task", never)
    with pytest.raises(InputError, match=r"^`cache_dir` .*: cannot write to the folder"):
        run_tasks(make_tasks(n_systems=2), jobs=1, cache_dir=locked / "cache", progress=False)


def test_a_read_only_file_system_as_the_report_met_it(tmp_path):
    """EROFS itself: a read-only tmpfs in a private mount namespace, the command inside it."""
    mount, out = tmp_path / "ro", tmp_path / "ro" / "report.txt"
    mount.mkdir()
    command = [sys.executable, "-m", "isbetter", *COMMANDS["cv"], "--output", str(out)]
    script = f"mount -t tmpfs -o ro,size=64k tmpfs {shlex.quote(str(mount))} || exit 99\n"
    script += f"exec {shlex.join(command)}"
    if shutil.which("unshare") is None:
        pytest.skip("no unshare here")
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    run = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, env=env
    )
    if run.returncode == 99 or run.stderr.startswith("unshare:"):
        pytest.skip(f"no private read-only mount here: {run.stderr.strip()}")
    assert run.returncode == 2, run.stderr  # before: 1, after the fit
    assert run.stdout == ""
    assert run.stderr == (
        f"isbetter cv: error: --output {str(out)!r}: cannot write to the folder "
        f"{str(mount)!r} (Read-only file system).\n"
    )
