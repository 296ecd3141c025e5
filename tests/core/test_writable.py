"""Outputs are written whole or not at all: a failed write keeps the earlier file (issue 29).

Before: on a full disk, ``--output`` over an existing good file left 12 KB of invalid
JSON (the earlier result lost) and ``--report`` a truncated HTML page: they were
written in place. Now each output is written into a temporary file beside it, flushed
and renamed (:func:`isbetter.core.writable.replacing`).
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import isbetter
from _uci import UCI, UCI_COLUMNS
from isbetter import InputError
from isbetter.cli import main
from isbetter.core import writable
from isbetter.core.writable import replacing, write_text

SRC = Path(isbetter.__file__).resolve().parents[1]
#: a correlated t-test on one data set: fast, and its JSON report is ~3 KB
CV = ["cv", str(UCI), *UCI_COLUMNS, "--a", "nbc", "--b", "aode", "--dataset", "1", "--seed", "1"]
CV += ["--rope", "0.01"]  # so that stderr holds the one line under test, not the ROPE note
GOOD = '{"an earlier": "result"}\n'


@pytest.fixture
def full_disk_midway(monkeypatch):
    """Writes fail as on a full disk: the first 1000-byte chunk goes in, the next cannot."""
    monkeypatch.setattr(writable, "CHUNK", 1000)
    real = os.write
    calls = []

    def write(fd, data):
        calls.append(len(data))
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    return calls


def _only(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_failed_write_keeps_the_earlier_file_and_leaves_nothing(tmp_path, full_disk_midway):
    out = tmp_path / "result.json"
    out.write_text(GOOD)
    with pytest.raises(InputError) as caught:
        write_text(out, "x" * 5000, "`path`")
    assert full_disk_midway == [1000, 1000]  # it failed midway, not at the start
    assert str(caught.value) == (
        f"`path` {str(out)!r}: cannot write it (No space left on device); the earlier file "
        "is left as it was."
    )
    assert out.read_text() == GOOD
    assert _only(tmp_path) == ["result.json"]  # no temporary file left


def test_a_failed_write_of_a_new_file_leaves_no_file(tmp_path, full_disk_midway):
    with pytest.raises(InputError, match="nothing was written"):
        write_text(tmp_path / "new.txt", "x" * 5000, "--output")
    assert _only(tmp_path) == []


def test_a_written_file_keeps_its_permissions_and_its_link(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_text(link, "new", "--output")
    assert link.is_symlink() and real.read_text() == "new"
    assert stat.S_IMODE(real.stat().st_mode) == 0o640
    assert _only(tmp_path) == ["link.txt", "real.txt"]


def test_a_device_is_written_in_place():
    with replacing("/dev/null", "--output") as path:
        assert path == Path("/dev/null")


def test_the_block_failing_keeps_the_earlier_file(tmp_path):
    out = tmp_path / "plot.png"
    out.write_bytes(b"earlier plot")
    with pytest.raises(RuntimeError), replacing(out, "--plot") as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".png"  # matplotlib's format
        tmp.write_bytes(b"half a")
        raise RuntimeError("drawing failed")
    assert out.read_bytes() == b"earlier plot" and _only(tmp_path) == ["plot.png"]


@pytest.mark.parametrize(
    ("flag", "name", "extra"),
    [("--output", "report.json", ["--format", "json"]), ("--report", "report.html", [])],
)
def test_the_command_line_keeps_the_earlier_output_on_a_full_disk(
    tmp_path, capsys, full_disk_midway, flag, name, extra
):
    out = tmp_path / name
    out.write_text(GOOD)
    assert main([*CV, *extra, flag, str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"isbetter cv: error: {flag} {str(out)!r}: cannot write it (No space left on "
        "device); the earlier file is left as it was.\n"
    )
    assert out.read_text() == GOOD and _only(tmp_path) == [name]


def test_the_command_line_keeps_the_earlier_plot_on_a_full_disk(tmp_path, capsys, monkeypatch):
    from matplotlib.figure import Figure

    def savefig(self, path, *args, **kwargs):  # half a PNG, then the disk is full
        Path(path).write_bytes(b"\x89PNG half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Figure, "savefig", savefig)
    plot = tmp_path / "plot.png"
    plot.write_bytes(b"earlier plot")
    assert main([*CV, "--plot", str(plot)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("isbetter cv: error: --plot ") and err.count("\n") == 1, err
    assert "the earlier file is left as it was" in err
    assert plot.read_bytes() == b"earlier plot" and _only(tmp_path) == ["plot.png"]


def test_a_full_disk_as_the_report_met_it(tmp_path):
    """ENOSPC itself: a full tmpfs in a private mount namespace, the command inside it.

    Before: exit 1 and the earlier page cut to its first 4096 bytes (written in place).
    """
    if shutil.which("unshare") is None:
        pytest.skip("no unshare here")
    disk = tmp_path / "disk"
    disk.mkdir()
    page = disk / "report.html"
    earlier = "<html>an earlier report</html>"
    command = [sys.executable, "-m", "isbetter", *CV, "--report", str(page)]
    script = "\n".join(
        [
            f"mount -t tmpfs -o size=64k tmpfs {shlex.quote(str(disk))} || exit 99",
            f"printf '%s' {shlex.quote(earlier)} > {shlex.quote(str(page))}",
            f"head -c 1000000 /dev/zero > {shlex.quote(str(disk / 'filler'))} 2>/dev/null",
            f'{shlex.join(command)} > /dev/null; echo "exit $?"',  # the page: 63 KB
            f"cat {shlex.quote(str(page))}; echo; ls -A {shlex.quote(str(disk))}",
        ]
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    run = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, env=env
    )
    if run.returncode == 99 or run.stderr.startswith("unshare:"):
        pytest.skip(f"no private tmpfs here: {run.stderr.strip()}")
    assert run.stderr == (
        f"isbetter cv: error: --report {str(page)!r}: cannot write it (No space left on "
        "device); the earlier file is left as it was.\n"
    )
    assert run.stdout == f"exit 2\n{earlier}\nfiller\nreport.html\n"


def test_an_existing_file_in_a_folder_that_takes_no_new_file_is_refused_up_front(
    tmp_path, monkeypatch
):
    """The new file is written beside the old one: the folder must take it (before any fit)."""
    out = tmp_path / "result.json"
    out.write_text(GOOD)

    def refuse(folder):
        raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))

    monkeypatch.setattr(writable, "_test_write", refuse)
    with pytest.raises(InputError) as caught:
        writable.check_writable_file(out, "--output")
    assert str(caught.value) == (
        f"--output {str(out)!r}: cannot write to the folder {str(tmp_path)!r} "
        "(Operation not permitted)."
    )
