"""Ctrl-C stops the command line at any moment: exit 130, one line, no traceback (issue 20).

Before: ``isbetter rank`` hung in 2 of 11 trials (the parent waiting on workers that
had themselves been interrupted), the exits that worked took 4–19 s, tracebacks
leaked (a Ctrl-C during the imports before the handler was installed; ``Process
SpawnProcess-1: Traceback``), and workers' samplers warned about their cut-short
chains. The slow test presses Ctrl-C, as a terminal does (SIGINT to the whole
process group), at 3, 6, 9 and 12 s into a two-worker hierarchical ranking.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import isbetter.cli
from _tasks import _gone
from _uci import UCI, UCI_RANK_ARGS
from isbetter.cli import main
from isbetter.ranking.execution import _Cache

ROOT = Path(__file__).resolve().parents[2]
SRC = Path(isbetter.cli.__file__).resolve().parents[2]


def test_ctrl_c_while_the_command_line_is_built(capsys, monkeypatch, python_sigint):
    """The handler comes first: before, a Ctrl-C here (imports) printed a traceback."""

    def add(sub):
        raise KeyboardInterrupt

    monkeypatch.setattr("isbetter.cli.cv.add", add)
    try:
        code = main(["cv", "scores.csv"])
    except KeyboardInterrupt:
        pytest.fail("the Ctrl-C left main() (a traceback)")
    assert code == 130
    assert capsys.readouterr() == ("", "isbetter: interrupted\n")


def test_once_stopping_a_second_ctrl_c_changes_nothing(python_sigint):
    """Pressed twice, Ctrl-C must not cut the one-line message with a traceback."""
    from isbetter.cli import interrupt

    with interrupt.watch():
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        interrupt.stopping()
        signal.raise_signal(signal.SIGINT)  # ignored: the command is already stopping
    assert interrupt.seen()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


_INTERRUPTED_IN_EXEC = """
import sys
import isbetter.cli
import isbetter.cli.cv

def run(args):  # a Ctrl-C while a dataclass is made (exec of a string), as on import
    exec("raise KeyboardInterrupt")

isbetter.cli.cv.run = run
sys.argv = ["isbetter", "cv", "scores.csv", "--a", "a", "--b", "b"]
isbetter.cli.program()
"""


def test_python_m_exits_130_after_a_ctrl_c_inside_exec(tmp_path):
    """``python -m`` killed itself with SIGINT (-2) when the Ctrl-C had left an exec()."""
    (tmp_path / "interrupted_in_exec.py").write_text(_INTERRUPTED_IN_EXEC)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(tmp_path)])}
    run = subprocess.run(
        [sys.executable, "-m", "interrupted_in_exec"], capture_output=True, text=True, env=env
    )
    assert (run.returncode, run.stdout, run.stderr) == (130, "", "isbetter cv: interrupted\n")


# Ctrl-C (or SIGTERM) pressed while the command line is imported: a finder that sends the
# signal when `isbetter.cli` is first looked for, before main() has installed its handler
_PRESSED_DURING_IMPORTS = """
import importlib.abc, runpy, signal, sys

class Press(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "isbetter.cli":
            sys.meta_path.remove(self)
            signal.raise_signal(signal.{signal})
        return None

sys.meta_path.insert(0, Press())
sys.argv = ["isbetter", "--version"]  # exit 0 if the signal changed nothing
{start}
"""


def _entry_point() -> str:
    """The ``isbetter`` console script, as pip writes it from pyproject.toml."""
    import tomllib

    target = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, function = target["isbetter"].partition(":")
    return f"from {module} import {function}\nsys.exit({function}())"


@pytest.mark.parametrize("start", ["script", "python -m"])
@pytest.mark.parametrize(("signum", "code", "said"), [("SIGINT", 130, "interrupted"),
                                                      ("SIGTERM", 143, "terminated")])  # fmt: skip
def test_a_signal_while_the_command_line_is_imported_is_one_line(start, signum, code, said):
    """Before, the script imported isbetter.cli before main() ran: a Ctrl-C in those ~50 ms
    printed Python's KeyboardInterrupt traceback."""
    if start == "script":
        start = _entry_point()
    else:
        start = 'runpy.run_module("isbetter", run_name="__main__", alter_sys=True)'
    script = _PRESSED_DURING_IMPORTS.format(signal=signum, start=start)
    run = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        preexec_fn=_default_sigint,
    )
    assert (run.returncode, run.stdout, run.stderr) == (code, "", f"isbetter: {said}\n")


def test_a_ctrl_c_ignored_by_the_shell_stays_ignored():
    """A background job has Ctrl-C ignored: the entry point leaves it so (the run goes on)."""
    script = _PRESSED_DURING_IMPORTS.format(signal="SIGINT", start=_entry_point())
    run = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout.startswith("isbetter ")


def test_a_ctrl_c_just_before_main_is_one_line(monkeypatch, capsys, python_sigint):
    """Between the imports and main()'s handler: still one line and 130."""
    import isbetter.__main__

    def program():
        raise KeyboardInterrupt

    monkeypatch.setattr("isbetter.cli.program", program)
    monkeypatch.setattr("isbetter.cli.interrupt.exiting", lambda: None)
    with pytest.raises(SystemExit) as stop:
        isbetter.__main__.program()
    assert stop.value.code == 130
    assert capsys.readouterr() == ("", "isbetter: interrupted\n")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


# ------------------------------------------------------------------ a real ranking, Ctrl-C
RANK = [
    sys.executable, "-m", "isbetter", "rank", str(UCI), *UCI_RANK_ARGS, "--jobs", "2",
    "--draws", "4000",  # twice the default: still running at 12 s on an idle machine
]  # fmt: skip


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _default_sigint() -> None:
    """In the child before exec: SIGINT as a terminal's foreground job has it.

    A process started in the background by a non-interactive shell inherits SIGINT
    ignored (see tests/conftest.py, python_sigint); the command must see a real one.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def press_ctrl_c(after: float, cache: Path, kept: int = 0, jobs: str = "2") -> dict:
    """Start the ranking in its own process group; Ctrl-C it after `after` seconds.

    With `kept`, wait also until the cache holds that many pairs.
    """
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    command = [*RANK, "--cache-dir", str(cache)]
    command[command.index("--jobs") + 1] = jobs
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        process_group=0,
        preexec_fn=_default_sigint,
    )
    time.sleep(after)
    deadline = time.monotonic() + 600
    while len(list(cache.glob("*/*.json"))) < kept and proc.poll() is None:
        assert time.monotonic() < deadline, "no pair finished in 10 minutes"
        time.sleep(0.05)
    workers = [p for p in _children(proc.pid) if b"spawn_main" in _cmdline(p)]
    pressed = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # as the terminal does: the whole group
    try:
        out, err = proc.communicate(timeout=30)
        seconds = time.monotonic() - pressed
    except subprocess.TimeoutExpired:  # a hang: do not leave it behind
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        seconds = float("inf")
    return {
        "code": proc.returncode,
        "seconds": seconds,
        "out": out.decode(),
        "err": err.decode(),
        "workers": workers,
        "alive": [p for p in workers if not _gone(p)],
    }


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize(
    ("jobs", "after", "kept"),
    [("2", 3, 0), ("2", 6, 0), ("2", 9, 0), ("2", 12, 0), ("2", 0, 2)]
    # in this process: the default on 2 CPUs
    + [("1", 3, 0), ("1", 7, 0), ("1", 0, 2)],
)
def test_ctrl_c_stops_a_ranking(tmp_path, jobs, after, kept):
    """Ctrl-C at 3 to 12 s, and once two pairs are kept (under load, none by 12 s), with
    two workers and in this process."""
    cache = tmp_path / "cache"
    run = press_ctrl_c(after, cache, kept, jobs)
    print(
        f"--jobs {jobs}, Ctrl-C at {after} s ({kept} pairs kept): exit {run['code']} after "
        f"{run['seconds']:.2f} s, {len(list(cache.glob('*/*.json')))} pairs in the cache"
    )
    assert run["code"] == 130, run["err"]
    # before: 4-19 s, and 2 hangs in 11 trials; the bound proves the stop, not its speed
    # (printed above: 0.1-1 s), which a loaded 2-core machine may slow (issue 33)
    assert run["seconds"] < 20
    assert run["err"] == (  # one line, no traceback: what was kept and how to resume
        f"isbetter rank: interrupted; the pairs finished so far are kept in {cache}: run the "
        "same command again to resume from them\n"
    )
    assert run["out"] == ""
    assert run["alive"] == []  # no worker left running
    entries = sorted(cache.glob("*/*.json"))
    assert len(entries) >= kept and not list(cache.glob("*/.*.tmp"))
    for path in entries:  # every pair kept is whole and is used by the next run
        assert _Cache(cache).load(path.stem)[0] == "valid", path


_DASK_SCHEDULER = """
import logging, sys, time
from distributed import LocalCluster
cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                       dashboard_address=":0", silence_logs=logging.ERROR)
print(cluster.scheduler_address, flush=True)
sys.stdin.read()  # until the test closes stdin
cluster.close()
"""


def _scheduler_tasks(address: str) -> int:
    from distributed import Client

    with Client(address, timeout=30) as client:
        return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))


@pytest.mark.slow
def test_ctrl_c_stops_a_ranking_on_a_dask_scheduler(tmp_path):
    """--scheduler: the command stops within 2 s and leaves no task on the cluster."""
    pytest.importorskip("distributed")
    cluster = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(_DASK_SCHEDULER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        address = cluster.stdout.readline().strip()
        jobs = RANK.index("--jobs")
        command = [*RANK[:jobs], *RANK[jobs + 2 :], "--scheduler", address]
        proc = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(SRC)}, process_group=0,
            preexec_fn=_default_sigint,
        )  # fmt: skip
        time.sleep(8)
        pressed = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        seconds = time.monotonic() - pressed
        deadline = time.monotonic() + 10
        while (left := _scheduler_tasks(address)) and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        cluster.communicate(timeout=60)  # closes its stdin: the cluster shuts down
    print(f"Dask: exit {proc.returncode} after {seconds:.2f} s")
    assert (proc.returncode, out.decode(), err.decode()) == (
        130,
        "",
        "isbetter rank: interrupted; nothing was kept (with --cache-dir DIR each finished "
        "pair is kept, and the same command run again resumes from them)\n",
    )
    assert seconds < 20  # a stop, not a speed (printed above)
    assert left == 0


# ------------------------------------------------------------------ SIGTERM and SIGKILL
def test_sigterm_stops_a_command_as_ctrl_c_does(capsys, monkeypatch, python_sigint):
    """SIGTERM (kill, a scheduler, a container stopped): the clean stop of Ctrl-C, exit 143."""

    def run(args):
        signal.raise_signal(signal.SIGTERM)
        pytest.fail("SIGTERM did not stop the command")

    monkeypatch.setattr("isbetter.cli.cv.run", run)
    before = signal.getsignal(signal.SIGTERM)
    assert main(["cv", "scores.csv", "--a", "a", "--b", "b"]) == 143
    assert capsys.readouterr() == ("", "isbetter cv: terminated\n")
    assert signal.getsignal(signal.SIGTERM) == before  # restored


_TERMINATED = """
import os, signal, sys, time
import isbetter.cli
import isbetter.cli.cv

def run(args):
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)

isbetter.cli.cv.run = run
sys.argv = ["isbetter", "cv", "scores.csv", "--a", "a", "--b", "b"]
isbetter.cli.program()
"""


def test_the_program_exits_143_after_sigterm(tmp_path):
    """Before: killed by the signal at once (-15), the workers of a ranking left running."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    run = subprocess.run(
        [sys.executable, "-c", _TERMINATED], capture_output=True, text=True, env=env, timeout=60
    )
    assert (run.returncode, run.stdout, run.stderr) == (143, "", "isbetter cv: terminated\n")


_ORPHAN = """
import multiprocessing, os, sys, time

def child(parent, kernel):
    from isbetter.ranking.execution import _end_with_parent
    _end_with_parent(parent, kernel=kernel)
    print(os.getpid(), flush=True)
    time.sleep(120)  # as a worker waiting for its next task, for good

if __name__ == "__main__":
    ctx = multiprocessing.get_context("spawn")
    ctx.Process(target=child, args=(os.getpid(), sys.argv[1] == "kernel")).start()
    time.sleep(120)
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("kernel", ["kernel", "thread"])
def test_a_worker_ends_when_its_parent_is_killed(tmp_path, kernel):
    """Linux's parent-death signal, and the portable thread (the parent's sentinel)."""
    script = tmp_path / "orphan.py"
    script.write_text(_ORPHAN)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    parent = subprocess.Popen(
        [sys.executable, str(script), kernel], stdout=subprocess.PIPE, text=True, env=env
    )
    child = None
    try:
        child = int(parent.stdout.readline())  # the child watches its parent by now
        assert not _gone(child, within=0.5)
        parent.kill()
        parent.wait()
        assert _gone(child, within=5)
    finally:
        parent.kill()
        parent.communicate()
        if child is not None and not _gone(child, within=0):
            os.kill(child, signal.SIGKILL)


def _run_of_ranking(proc: subprocess.Popen) -> list[int]:
    """Wait until the ranking's two workers and the resource tracker run; return their pids."""
    deadline = time.monotonic() + 300
    while True:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no workers started in 5 minutes"
        children = _children(proc.pid)
        workers = [p for p in children if b"spawn_main" in _cmdline(p)]
        tracker = [p for p in children if b"resource_tracker" in _cmdline(p)]
        if len(workers) == 2 and tracker:
            return workers + tracker
        time.sleep(0.1)


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_no_worker_is_left_behind_when_the_ranking_is_killed(signum):
    """Before: the two workers and the resource tracker (~810 MB) ran for good, both signals."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    command = [*RANK[: RANK.index("--jobs")], "--systems", "nbc", "aode", "hnb", "--jobs", "2"]
    proc = subprocess.Popen(
        [*command, "--draws", "4000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=_default_sigint,
    )
    left: list[int] = []
    try:
        left = _run_of_ranking(proc)
        time.sleep(1)  # into their first fits
        os.kill(proc.pid, signum)  # the command alone, as `kill` does
        out, err = proc.communicate(timeout=60)
        if signum == signal.SIGTERM:
            assert proc.returncode == 143 and out == b""
            assert err.startswith(b"isbetter rank: terminated; nothing was kept (with --cache-dir")
        left = [p for p in left if not _gone(p, within=5)]
        assert left == []
    finally:
        proc.kill()
        for pid in left:  # this run's own processes, by pid
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


# ------------------------------------------------------------------ Ctrl-C during an import
_SLOW_MODULE = """
import os, signal, time
os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C lands while this module is being imported
time.sleep(0.5)
"""

_INTERRUPTED_IN_AN_IMPORT = """
import os, sys, time, weakref
import isbetter.cli
import isbetter.cli.cv

class Lazy:
    def __del__(self):  # run by C code (deallocation), which prints what it raises
        import slow_module

def interrupted():  # run by C code too (a weak reference's callback)
    import os, signal
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.5)

def run(args):
    if os.environ["WHERE"] == "statement":  # an import statement: the interrupt reaches main()
        import slow_module
    elif os.environ["WHERE"] == "finaliser":
        Lazy()
    else:
        class Thing:
            pass
        thing = Thing()
        ref = weakref.ref(thing, lambda ref: interrupted())
        del thing
    time.sleep(30)  # the command's work, which the Ctrl-C must stop

isbetter.cli.cv.run = run
isbetter.cli.program()
"""


@pytest.mark.parametrize("where", ["statement", "finaliser", "callback"])
def test_ctrl_c_during_an_import_or_a_callback_is_one_line(tmp_path, where):
    """Before: a Ctrl-C inside an import run by C code (numpy's ``import_array`` prints what
    the import raised, as a finaliser or a weak reference's callback does) printed a traceback
    ("Exception ignored in ...") and the command then ran on to its end."""
    (tmp_path / "slow_module.py").write_text(_SLOW_MODULE)
    (tmp_path / "interrupted.py").write_text(_INTERRUPTED_IN_AN_IMPORT)
    path = os.pathsep.join([str(SRC), str(tmp_path)])
    env = {**os.environ, "PYTHONPATH": path, "WHERE": where}
    command = [sys.executable, str(tmp_path / "interrupted.py"), "cv", "scores.csv"]
    started = time.monotonic()
    run = subprocess.run(
        [*command, "--a", "a", "--b", "b"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        preexec_fn=_default_sigint,
    )
    assert (run.returncode, run.stdout, run.stderr) == (130, "", "isbetter cv: interrupted\n")
    assert time.monotonic() - started < 20  # stopped, not run on to the end (30 s)


def test_only_imports_made_by_c_code_or_finalisers_hold_the_interrupt(
    tmp_path, monkeypatch, python_sigint
):
    """An import statement passes a Ctrl-C on (``import pymc``, seconds long, stops at once);
    an import that C code makes (here a call, as numpy's ``import_array`` makes it) holds it."""
    from isbetter.cli import interrupt

    probe = "import sys\nfrom isbetter.cli import interrupt\n"
    probe += "held = interrupt._unsafe(sys._getframe())\n"
    for name in ("probe_statement", "probe_call", "probe_del"):
        (tmp_path / f"{name}.py").write_text(probe)
    monkeypatch.syspath_prepend(str(tmp_path))

    class Finalised:
        def __del__(self):
            import probe_del  # noqa: F401

    with interrupt.watch():
        import probe_statement

        probe_call = __import__("probe_call")
        Finalised()
        import probe_del
    assert (probe_statement.held, probe_call.held, probe_del.held) == (False, True, True)
