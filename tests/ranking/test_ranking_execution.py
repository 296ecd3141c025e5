"""run_tasks: serial, processes, executors and Dask agree; the cache resumes, never trusted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from _tasks import SEED, _gone, make_tasks  # noqa: F401 (SEED used by the tests below)
from isbetter import CacheWarning, InputError, InputTypeError
from isbetter.ranking import execution
from isbetter.ranking.execution import CACHE_FORMAT, run_tasks
from isbetter.ranking.tasks import PairTask


def as_json(outcomes) -> str:
    return json.dumps(outcomes, sort_keys=True)


def cache_files(root: Path) -> list[Path]:
    return sorted(root.glob("*/*.json"))


@pytest.fixture(scope="module")
def serial_run():
    tasks = make_tasks()
    outcomes, stats = run_tasks(tasks, jobs=1, progress=False)
    return tasks, outcomes, stats


# ----------------------------------------------------------------------------- executors


def test_serial_processes_and_threads_agree(serial_run):
    tasks, serial, stats = serial_run
    assert stats == {
        "computed": 10,
        "cached": 0,
        "recomputed_corrupt": 0,
        "executor": "serial",
        "workers": 1,
    }
    assert [o[0]["summary"]["system_b"] for o in serial] == [t.system_b for t in tasks]
    procs, pstats = run_tasks(tasks, jobs=2, progress=False)
    assert (pstats["executor"], pstats["workers"], pstats["computed"]) == ("processes", 2, 10)
    with ThreadPoolExecutor(max_workers=3) as pool:
        threads, tstats = run_tasks(tasks, executor=pool, progress=False)
        assert pool.submit(int, "7").result() == 7  # not shut down by run_tasks
    assert (tstats["executor"], tstats["workers"]) == ("ThreadPoolExecutor", 3)
    in_process, istats = run_tasks(tasks, jobs=1, threads=2, progress=False)
    assert (istats["executor"], istats["workers"], istats["computed"]) == ("threads", 2, 10)
    assert as_json(procs) == as_json(serial)
    assert as_json(threads) == as_json(serial)
    assert as_json(in_process) == as_json(serial)


def test_threads_in_this_process_only_for_two_or_more_tasks(monkeypatch):
    """jobs=1, threads=2: two tasks at a time after the first one's imports (prepare, in
    this thread); one task, or threads=1: one after the other."""
    prepared = []
    monkeypatch.setattr(execution, "prepare", lambda task: prepared.append(task))
    tasks = make_tasks(n_systems=3)
    assert run_tasks(tasks, jobs=1, threads=2, progress=False)[1]["executor"] == "threads"
    assert prepared == [tasks[0]]
    assert run_tasks(tasks[:1], jobs=1, threads=2, progress=False)[1]["executor"] == "serial"
    assert run_tasks(tasks, jobs=1, threads=1, progress=False)[1]["executor"] == "serial"
    assert run_tasks(tasks, jobs=2, threads=2, progress=False)[1]["executor"] == "processes"
    assert len(prepared) == 1
    with pytest.raises(InputError, match="threads"):
        run_tasks(tasks, jobs=1, threads=0, progress=False)


def test_stopping_the_threads_stops_their_samplers_and_drops_queued_tasks():
    """A task of the threads executor sees the executor's STOP event: stop() sets it,
    the queued tasks never start, and it returns once the running ones have ended."""
    from isbetter.inference.sampling import STOP

    assert STOP.get() is None  # not in this thread's context
    started, stopped = threading.Semaphore(0), []

    def fit(i: int) -> int:
        started.release()
        event = STOP.get()
        assert event is not None
        event.wait(20)
        stopped.append(i)
        return i

    pool = execution._ThreadsExecutor(2)
    futures = [pool.submit(fit, i) for i in range(6)]
    assert started.acquire(timeout=10) and started.acquire(timeout=10)  # both running
    start = time.monotonic()
    pool.stop()
    assert time.monotonic() - start < 1  # not the 20 s the fits would wait
    assert sorted(stopped) == [0, 1]
    assert all(f.cancelled() for f in futures[2:])


def test_never_more_processes_than_tasks():
    with execution._resolve_executor(None, 4, 1) as (pool, kind, workers):
        assert (kind, workers, pool._max_workers) == ("processes", 1, 1)
    with execution._resolve_executor(None, None, 0) as (pool, kind, workers):
        assert (kind, workers) == ("processes", 0)  # all cached: no pool at all


def test_bad_arguments():
    tasks = make_tasks(n_systems=2, method="correlated_t", n_datasets=1)
    with pytest.raises(InputTypeError, match="executor"):
        run_tasks(tasks, executor=42, progress=False)
    with pytest.raises(InputError, match="jobs"):
        run_tasks(tasks, jobs=0, progress=False)


# ----------------------------------------------------------------------------- dask


@pytest.fixture(scope="module")
def dask_client():
    import logging

    distributed = pytest.importorskip("distributed")
    for name in ("distributed", "distributed.nanny", "distributed.scheduler", "tornado"):
        logging.getLogger(name).setLevel(logging.ERROR)
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",  # any free port: 8787 may be taken
        silence_logs=logging.ERROR,
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def test_dask_matches_serial(dask_client):
    tasks = make_tasks(n_systems=6, metrics=("acc", "f1"))  # 2 x 15 pairs
    serial, _ = run_tasks(tasks, jobs=1, progress=False)
    dask_out, stats = run_tasks(tasks, executor=dask_client, progress=False)
    assert (stats["executor"], stats["workers"], stats["computed"]) == ("dask", 2, 30)
    assert as_json(dask_out) == as_json(serial)
    # the scheduler's address works too (a client is opened and closed for the run)
    by_address, stats = run_tasks(tasks[:4], executor=dask_client.scheduler.address, progress=False)
    assert stats["executor"] == "dask"
    assert as_json(by_address) == as_json(serial[:4])


# ----------------------------------------------------------------------------- errors


def test_input_error_names_the_pair(dask_client):
    tasks = make_tasks(n_systems=3, method="correlated_t", n_datasets=1)
    bad = PairTask("cv", "acc", "good", "bad", -1.0, "correlated_t", 1, tasks[0].data)
    tasks.insert(1, bad)
    with ThreadPoolExecutor(2) as pool:
        for executor, jobs in [(None, 1), (pool, None), (dask_client, None)]:
            with pytest.raises(InputError, match="pair 'good' vs 'bad' on 'acc'") as info:
                run_tasks(tasks, executor=executor, jobs=jobs, progress=False)
            assert "rope" in str(info.value)  # the original message follows


def test_other_errors_name_the_pair(monkeypatch):
    def boom(task):
        raise ZeroDivisionError("kaput")

    monkeypatch.setattr(execution, "run_task", boom)
    tasks = make_tasks(n_systems=2, method="correlated_t", n_datasets=1)
    with pytest.raises(RuntimeError, match="pair 's0' vs 's1'.*ZeroDivisionError: kaput") as info:
        run_tasks(tasks, jobs=1, progress=False)
    assert isinstance(info.value.__cause__, ZeroDivisionError)


# ----------------------------------------------------------------------------- cache

N_SLOW = 20
_KILLED_RUN = """
import sys
sys.path[:0] = [{tests!r}, {helpers!r}]
from test_ranking_execution import slow_tasks
from isbetter.ranking.execution import run_tasks
run_tasks(slow_tasks(), jobs=1, cache_dir={cache!r}, progress=False)
"""


def slow_tasks() -> list[PairTask]:
    """N_SLOW signed-rank tasks of about 0.25 s each."""
    tasks = make_tasks(n_systems=5, metrics=("acc", "f1"), options={"draws": 150_000})
    return tasks[:N_SLOW]


def _kill_after(proc: subprocess.Popen, cache: Path, n_files: int, out: dict) -> None:
    """SIGKILL `proc` once `cache` holds `n_files` entries; record how many it left."""
    deadline = time.monotonic() + 180
    try:
        while len(cache_files(cache)) < n_files and proc.poll() is None:
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        out["returncode"] = proc.wait()
        out["done"] = len(cache_files(cache))


def test_killed_run_resumes(tmp_path):
    cache = tmp_path / "cache"
    here = Path(__file__).parent
    script = _KILLED_RUN.format(tests=str(here), helpers=str(here.parent), cache=str(cache))
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)])
    killed: dict = {}
    watcher = threading.Thread(target=_kill_after, args=(proc, cache, 3, killed))
    watcher.start()
    tasks = slow_tasks()
    try:
        fresh, _ = run_tasks(tasks, jobs=1, progress=False)  # meanwhile: uninterrupted run
    finally:
        watcher.join()
    done = killed["done"]
    assert killed["returncode"] == -signal.SIGKILL, "the run ended before it was killed"
    assert 0 < done < N_SLOW, f"kill came too late or too early ({done} entries)"

    resumed, stats = run_tasks(tasks, jobs=1, cache_dir=cache, progress=False)
    assert (stats["cached"], stats["computed"]) == (done, N_SLOW - done)
    assert stats["recomputed_corrupt"] == 0
    assert len(cache_files(cache)) == N_SLOW
    assert as_json(resumed) == as_json(fresh)


def _tamper(path: Path, other: Path) -> None:
    entry = json.loads(path.read_bytes())
    entry["payload"][0]["summary"]["p_a_better"] += 0.125  # checksum kept
    path.write_text(json.dumps(entry, sort_keys=True))


DAMAGE = {
    "tampered": _tamper,
    "truncated": lambda path, other: path.write_bytes(
        path.read_bytes()[: path.stat().st_size // 2]
    ),
    "foreign": lambda path, other: path.write_bytes(other.read_bytes()),
    "garbage": lambda path, other: path.write_bytes(os.urandom(300)),
    "empty": lambda path, other: path.write_bytes(b""),
    "wrong format": lambda path, other: path.write_text(
        path.read_text().replace(CACHE_FORMAT, "isbetter-pair/0")
    ),
    "a folder": lambda path, other: _folder(path),
}


def _folder(path: Path) -> None:
    """The entry replaced by a folder (before: exit 1 after recomputing, the ranking lost)."""
    path.unlink()
    path.mkdir()
    (path / "inside").write_text("not an entry")


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_corrupt_entry_is_recomputed_and_repaired(tmp_path, damage):
    tasks = make_tasks(n_systems=3, method="correlated_t", n_datasets=1)
    first, _ = run_tasks(tasks, jobs=1, cache_dir=tmp_path, progress=False)
    files = [tmp_path / t.key()[:2] / f"{t.key()}.json" for t in tasks]
    original = files[0].read_bytes()
    DAMAGE[damage](files[0], files[1])
    assert not files[0].is_file() or files[0].read_bytes() != original

    with pytest.warns(CacheWarning, match=r"ranking cache .*: 1 entry damaged .*computed again"):
        again, stats = run_tasks(tasks, jobs=1, cache_dir=tmp_path, progress=False)
    assert (stats["recomputed_corrupt"], stats["computed"], stats["cached"]) == (1, 1, 2)
    assert as_json(again) == as_json(first)
    assert files[0].read_bytes() == original  # repaired
    _, stats = run_tasks(tasks, jobs=1, cache_dir=tmp_path, progress=False)
    assert stats["cached"] == 3


def test_an_entry_that_cannot_be_written_loses_only_itself(tmp_path, monkeypatch):
    """A full disk while a pair is kept: a warning naming the entry, and the ranking goes on."""
    import errno

    tasks = make_tasks(n_systems=3, method="correlated_t", n_datasets=1)
    first, _ = run_tasks(tasks, jobs=1, progress=False)
    real = execution.write_bytes
    calls = []

    def full_disk(path, data):
        calls.append(path)
        if len(calls) == 2:  # the second entry: half written, then no space left
            real(path, data[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(path, data)

    monkeypatch.setattr(execution, "write_bytes", full_disk)
    with pytest.warns(CacheWarning, match=r"cannot keep a pair in .*No space left on device"):
        outcomes, stats = run_tasks(tasks, jobs=1, cache_dir=tmp_path, progress=False)
    assert as_json(outcomes) == as_json(first) and stats["computed"] == 3
    assert len(cache_files(tmp_path)) == 2  # the two entries written, no partial third
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and p.name.startswith(".")]


def test_cache_entry_layout(tmp_path):
    tasks = make_tasks(n_systems=2, method="correlated_t", n_datasets=1)
    outcomes, _ = run_tasks(tasks, jobs=1, cache_dir=tmp_path, progress=False)
    key = tasks[0].key()
    (path,) = cache_files(tmp_path)
    assert path == tmp_path / key[:2] / f"{key}.json"
    entry = json.loads(path.read_text())
    assert set(entry) == {"format", "key", "checksum", "payload"}
    assert (entry["format"], entry["key"], entry["payload"]) == (CACHE_FORMAT, key, outcomes[0])
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary left


def test_no_cache_dir_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tasks = make_tasks(n_systems=3, method="correlated_t", n_datasets=1)
    run_tasks(tasks, jobs=1, progress=False)
    with ThreadPoolExecutor(2) as pool:
        run_tasks(tasks, executor=pool, progress=False)
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------- progress


def test_progress_bar(tmp_path, capsys):
    tasks = make_tasks(n_systems=3, method="correlated_t", n_datasets=1)
    run_tasks(tasks[:1], jobs=1, cache_dir=tmp_path, progress=False)
    assert capsys.readouterr().err == ""
    run_tasks(tasks, jobs=1, cache_dir=tmp_path, progress=True)
    err = capsys.readouterr().err
    assert "pairs" in err and "3/3" in err
    run_tasks(tasks, jobs=1, progress=None)  # stderr is not a terminal under capsys
    assert capsys.readouterr().err == ""


# ----------------------------------------------------------------------------- Ctrl-C
CHILD_SIGINT_BLOCKED = (
    "import signal; print(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []))"
)


def test_a_held_ctrl_c_comes_after_the_block(python_sigint):
    """Held, not lost: delivered once the block is done; processes started in it block it."""
    reached = False
    with pytest.raises(KeyboardInterrupt):
        with execution._interrupts_held():
            signal.raise_signal(signal.SIGINT)
            reached = True
            child = subprocess.run(
                [sys.executable, "-c", CHILD_SIGINT_BLOCKED], capture_output=True, text=True
            )
    assert reached and child.stdout == "True\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])


def test_local_workers_ignore_ctrl_c():
    """Ctrl-C reaches every process of the terminal's group: a worker carries on."""
    with execution._resolve_executor(None, 2, 1) as (pool, kind, workers):
        assert (kind, workers) == ("processes", 1)
        assert pool.submit(signal.getsignal, signal.SIGINT).result() == signal.SIG_IGN
        blocked = pool.submit(signal.pthread_sigmask, signal.SIG_BLOCK, []).result()
        assert signal.SIGINT not in blocked  # ignored, not left blocked
        (pid,) = pool._processes
        os.kill(pid, signal.SIGINT)  # before: KeyboardInterrupt in the worker
        assert pool.submit(int, "7").result() == 7


def test_a_stopped_pool_kills_its_workers_instead_of_waiting(python_sigint):
    """Ctrl-C (or a failed task) ends the run now, not when the running fits end."""
    with pytest.raises(KeyboardInterrupt):
        with execution._resolve_executor(None, 2, 2) as (pool, kind, workers):
            running = [pool.submit(time.sleep, 20) for _ in range(workers)]
            while len(pool._processes) < workers or not all(f.running() for f in running):
                time.sleep(0.01)
            pids = list(pool._processes)
            time.sleep(0.5)  # the workers are asleep in their tasks
            start = time.monotonic()
            raise KeyboardInterrupt
    assert time.monotonic() - start < 2  # before: 20 s, shutdown(wait=True)
    assert all(_gone(pid) for pid in pids)
    assert all(isinstance(f.exception(), BrokenProcessPool) for f in running)


def test_ctrl_c_stops_a_task_running_in_this_process(monkeypatch, python_sigint):
    """jobs=1 runs each task inside its submit: Ctrl-C must reach it there, at once."""
    monkeypatch.setattr(execution, "run_task", lambda task: time.sleep(20))
    timer = threading.Timer(
        0.5, signal.pthread_kill, (threading.main_thread().ident, signal.SIGINT)
    )
    timer.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_tasks(make_tasks(n_systems=2), jobs=1, progress=False)
    timer.join()
    assert time.monotonic() - start < 2.5


def _interrupt_after(cache: Path, n_files: int, out: dict) -> None:
    """Ctrl-C this process's main thread once `cache` holds `n_files` entries."""
    deadline = time.monotonic() + 120
    while len(cache_files(cache)) < n_files and time.monotonic() < deadline:
        time.sleep(0.01)
    out["at"] = time.monotonic()
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)


@pytest.mark.parametrize("where", ["serial", "threads", "processes", "dask"])
def test_ctrl_c_stops_a_run_and_keeps_every_finished_pair(request, tmp_path, python_sigint, where):
    tasks, cache = slow_tasks(), tmp_path / "cache"
    executor = request.getfixturevalue("dask_client") if where == "dask" else None
    jobs = 1 if where in ("serial", "threads") else 2
    threads = 2 if where == "threads" else 1
    pressed: dict = {}
    watcher = threading.Thread(target=_interrupt_after, args=(cache, 3, pressed))
    watcher.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_tasks(
                tasks,
                executor=executor,
                jobs=jobs,
                threads=threads,
                cache_dir=cache,
                progress=False,
            )
        stopped = time.monotonic() - pressed["at"]
    finally:
        watcher.join()
    assert stopped < 2
    if where == "dask":  # cancelled on the cluster, not left to run there
        deadline = time.monotonic() + 10
        while executor.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)):
            assert time.monotonic() < deadline, "tasks left on the Dask scheduler"
            time.sleep(0.05)
    done = len(cache_files(cache))
    assert 3 <= done < N_SLOW
    assert not list(cache.glob("*/.*.tmp"))  # no half-written entry
    _, stats = run_tasks(tasks, executor=executor, jobs=jobs, cache_dir=cache, progress=False)
    assert (stats["cached"], stats["computed"], stats["recomputed_corrupt"]) == (
        done,
        N_SLOW - done,
        0,
    )


_UNGUARDED = """
import numpy as np
import pandas as pd
import isbetter

g = np.random.default_rng(0)
rows = [(f"d{i}", s, g.normal(0.8, 0.02)) for i in range(8) for s in ("a", "b", "c")]
table = isbetter.read_scores(pd.DataFrame(rows, columns=["dataset", "system", "score"]))
isbetter.rank(table, method="signed_rank", jobs=2, progress=False)
"""


def test_a_script_without_a_main_guard_is_told_why_the_workers_died(tmp_path):
    """Spawned workers run the calling script's top level again; without the guard they die
    at start-up and the error says what to write (not a bare BrokenProcessPool)."""
    script = tmp_path / "unguarded.py"
    script.write_text(_UNGUARDED)
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert "a local worker process died" in last and 'if __name__ == "__main__":' in last, last
