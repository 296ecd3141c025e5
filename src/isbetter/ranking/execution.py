"""Run the tasks of a ranking: in this process, local processes, any executor or Dask.

:func:`run_tasks` is the one code path: every task is submitted to a
:class:`concurrent.futures.Executor` — an in-process one for ``jobs=1`` (one task after
the other, or `threads` at a time in threads), a local spawn-based
:class:`~concurrent.futures.ProcessPoolExecutor` by default, the
user's executor, or the executor of a ``dask.distributed.Client`` — with at most
about twice as many tasks in flight as there are workers, so memory stays flat in
the number of tasks; each outcome is put in its task's slot as it arrives.

With a `cache_dir`, each finished task is stored as checksummed JSON under its
key (:meth:`PairTask.key <isbetter.ranking.tasks.PairTask.key>`), written
atomically by this process as outcomes arrive, so a killed run keeps every pair
finished so far and the next run resumes. An entry is used only when its format,
key and checksum match and its summaries parse; anything else is recomputed and
overwritten, never trusted. Nothing is written without a `cache_dir`.

Ctrl-C is for this process alone. Tasks in threads of this process are stopped
through the event their fits' samplers watch (:data:`isbetter.inference.sampling.STOP`):
no Ctrl-C reaches a thread other than the main one. The local worker processes start
with SIGINT blocked and ignore it (:func:`_start_worker`), so no sampler in a worker is
cut short and no worker prints a traceback; when the run stops — Ctrl-C, SIGTERM
(the command line handles it as Ctrl-C) or a failed task — this process kills its
workers instead of waiting for their fits, and cancels what a Dask cluster has not
finished. A Ctrl-C (or that SIGTERM) is held while a worker is started or a cache
entry written (:func:`_interrupts_held`), so neither is left half done, and the pairs
that finished before it are kept in the cache. A worker ends as soon as this process
does, however it ends (SIGKILL, a crash: :func:`_end_with_parent`), so no worker, and
no resource tracker of multiprocessing waiting for them, is left running.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import contextvars
import hashlib
import json
import multiprocessing
import os
import re
import shutil
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from types import FrameType
from typing import Any

from isbetter.core.errors import CacheWarning, InputTypeError, IsbetterError
from isbetter.core.progress import progress_bar
from isbetter.core.validate import check_positive_int, counted
from isbetter.core.writable import atomic_file, check_writable_folder, write_bytes
from isbetter.inference.sampling import STOP
from isbetter.ranking.tasks import PairTask, prepare, run_task

__all__ = ["CACHE_FORMAT", "run_tasks"]

#: the ``format`` field of a cache entry; a change of layout changes it
CACHE_FORMAT = "isbetter-pair/1"

_KEY = re.compile(r"[0-9a-f]{16,128}")

Outcome = list[dict[str, Any]]


def run_tasks(
    tasks: Sequence[PairTask],
    *,
    executor: Any = None,
    jobs: int | None = None,
    threads: int = 1,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
) -> tuple[list[Outcome], dict[str, Any]]:
    """Run every task (or take it from the cache); return the outcomes in order and stats.

    Parameters
    ----------
    tasks : sequence of PairTask
        The tasks; each runs with :func:`~isbetter.ranking.tasks.run_task`.
    executor : concurrent.futures.Executor, dask.distributed.Client or str, optional
        Where the tasks run: an executor (used as given, not shut down), a Dask
        client (its :meth:`get_executor`), or the address of a Dask scheduler (a
        client is opened and closed here). Default: local processes.
    jobs : int, optional
        Without `executor`: 1 runs the tasks in this process, one after the other;
        more (default: the number of CPUs) starts that many ``spawn`` worker
        processes, never more than there are tasks to compute, and shuts them down
        at the end. With `executor`: how many workers to assume when the executor
        does not tell.
    threads : int, default: 1
        With ``jobs=1``: how many tasks run at once in this process, in threads (each
        fit's sampler runs outside the GIL, so one fit samples while another's draws
        are summarised). The first task's imports and compiled code are loaded first,
        in this thread (:func:`~isbetter.ranking.tasks.prepare`).
    cache_dir : path, optional
        Directory of the cache: each finished task is stored as
        ``cache_dir/<key[:2]>/<key>.json`` and reused by later runs. Nothing is
        written without it.
    progress : bool, optional
        A progress bar (``tqdm``) on stderr; default: when stderr is a terminal.

    Returns
    -------
    outcomes : list
        ``run_task(tasks[i])`` at index ``i``, as it reads after a JSON round trip.
    stats : dict
        ``computed`` (tasks run), ``cached`` (taken from the cache),
        ``recomputed_corrupt`` (cache entries found invalid, run again and
        rewritten; also counted in ``computed``), ``executor`` (``"serial"``,
        ``"threads"``, ``"processes"``, ``"dask"`` or the executor's class name) and
        ``workers``.

    Raises
    ------
    InputError
        `cache_dir` cannot be written (checked before any task runs), or a task's
        own input error, its message prefixed with the pair; any other
        exception of a task is re-raised as :class:`RuntimeError` naming the
        pair, with the original as its cause. The remaining tasks are cancelled.
    InputTypeError
        `executor` is not an executor, a Dask client or an address.
    """
    tasks = list(tasks)
    if jobs is not None:
        jobs = check_positive_int(jobs, "jobs")
    threads = check_positive_int(threads, "threads")
    cache = _Cache(Path(cache_dir)) if cache_dir is not None else None
    outcomes: list[Outcome | None] = [None] * len(tasks)
    stats: dict[str, Any] = {"computed": 0, "cached": 0, "recomputed_corrupt": 0}
    keys: list[str] = [t.key() for t in tasks] if cache is not None else []
    todo: list[int] = []
    for i in range(len(tasks)):
        status, payload = cache.load(keys[i]) if cache is not None else ("missing", None)
        if status == "valid":
            outcomes[i] = payload
            stats["cached"] += 1
            continue
        stats["recomputed_corrupt"] += int(status == "corrupt")
        todo.append(i)
    if cache is not None and todo:  # before any work, not after the first fit
        check_writable_folder(cache.root, "`cache_dir`")
    if stats["recomputed_corrupt"]:
        warnings.warn(
            f"isbetter's ranking cache {str(cache_dir)!r}: "
            f"{counted(stats['recomputed_corrupt'], 'entry', 'entries')} damaged (not a "
            "whole entry of this pair, or not a file); computed again and replaced.",
            CacheWarning,
            stacklevel=2,
        )

    bar = progress_bar(len(tasks), progress, desc="pairs", unit="pair", leave=True)

    def keep(i: int, outcome: Outcome) -> None:
        with _interrupts_held():  # an entry is written whole, and counted
            outcomes[i] = outcome
            if cache is not None:
                cache.store(keys[i], outcome)
            stats["computed"] += 1
            bar.update(1)

    try:
        bar.update(stats["cached"])
        with _resolve_executor(executor, jobs, len(todo), threads) as (pool, kind, workers):
            if kind == "threads":  # before any thread starts (they start on submit)
                prepare(tasks[todo[0]])
            stats.update(executor=kind, workers=workers)
            window = 1 if kind == "serial" else 2 * max(workers, 1)
            local = isinstance(pool, cf.ProcessPoolExecutor) and kind == "processes"
            _run_all(pool, tasks, todo, window=window, keep=keep, local_pool=local)
    finally:
        bar.close()
    return [o if o is not None else [] for o in outcomes], stats


# ----------------------------------------------------------------------------- executors


class _SerialExecutor(cf.Executor):
    """Run each submitted call at once in this process (the ``jobs=1`` executor)."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        future: cf.Future[Any] = cf.Future()
        future.set_running_or_notify_cancel()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # delivered like a worker's exception
            future.set_exception(exc)
        return future


class _ThreadsExecutor(cf.Executor):
    """Run the tasks in this process, `workers` at a time in threads (the ``threads`` kind).

    Each task runs in a context whose :data:`~isbetter.inference.sampling.STOP` is this
    executor's event: :meth:`stop` sets it, and the samplers of the running fits end
    within :data:`~isbetter.inference.sampling.STOP_POLL_SECONDS`.
    """

    def __init__(self, workers: int) -> None:
        self._pool = cf.ThreadPoolExecutor(workers, thread_name_prefix="isbetter-pair")
        self._event = threading.Event()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        context = contextvars.copy_context()  # one per task: a context runs in one thread
        context.run(STOP.set, self._event)
        return self._pool.submit(context.run, fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)

    def stop(self) -> None:
        """Stop the running tasks' fits, drop the queued ones, wait for the threads."""
        self._event.set()
        self._pool.shutdown(wait=True, cancel_futures=True)


def _is_dask_client(obj: Any) -> bool:
    """Whether `obj` is a ``dask.distributed.Client``, without importing dask."""
    module = type(obj).__module__ or ""
    return module.split(".")[0] == "distributed" and hasattr(obj, "get_executor")


def _dask_workers(client: Any) -> int:
    """Return the number of worker threads of a Dask cluster (at least 1)."""
    with contextlib.suppress(Exception):
        return max(1, sum(int(n) for n in client.nthreads().values()))
    return 1


@contextlib.contextmanager
def _resolve_executor(
    executor: Any, jobs: int | None, n_todo: int, threads: int = 1
) -> Iterator[tuple[cf.Executor, str, int]]:
    """Yield ``(executor, kind, workers)``; shut down only what is created here."""
    if executor is None and jobs == 1 and threads > 1 and n_todo > 1:
        threaded = _ThreadsExecutor(min(threads, n_todo))
        try:
            yield threaded, "threads", min(threads, n_todo)
        except BaseException:
            with _interrupts_held():  # a second Ctrl-C does not leave fits running
                threaded.stop()
            raise
        threaded.shutdown(wait=True)
    elif executor is None and jobs == 1:
        yield _SerialExecutor(), "serial", 1
    elif executor is None:
        workers = min(jobs or os.cpu_count() or 1, n_todo)
        if workers == 0:  # everything cached: no processes started
            yield _SerialExecutor(), "processes", 0
            return
        ctx = multiprocessing.get_context("spawn")  # not fork: sampler and compiler threads
        pool = cf.ProcessPoolExecutor(
            max_workers=workers, mp_context=ctx, initializer=_start_worker, initargs=(os.getpid(),)
        )
        try:
            yield pool, "processes", workers
        except BaseException:
            with _interrupts_held():  # a second Ctrl-C does not leave workers running
                _kill_workers(pool)
            raise
        pool.shutdown(wait=True)  # every task has finished: the workers are idle
    elif isinstance(executor, str):
        from distributed import Client

        with Client(executor) as client:
            with _resolve_executor(client, jobs, n_todo) as resolved:
                yield resolved
    elif _is_dask_client(executor):
        pool = executor.get_executor(pure=False)
        try:
            yield pool, "dask", _dask_workers(executor)
        finally:
            pool.shutdown(wait=False)  # cancels only this wrapper's leftover futures
    elif isinstance(executor, cf.Executor):
        workers = getattr(executor, "_max_workers", None) or jobs or os.cpu_count() or 1
        yield executor, type(executor).__name__, int(workers)
    else:
        raise InputTypeError(
            "`executor` must be a concurrent.futures.Executor, a dask.distributed.Client "
            f"or a Dask scheduler address, got {type(executor).__name__}."
        )


def _run_all(
    pool: cf.Executor,
    tasks: list[PairTask],
    todo: list[int],
    *,
    window: int,
    keep: Callable[[int, Outcome], None],
    local_pool: bool,
) -> None:
    """Run the tasks `todo`, at most `window` in flight; `keep` each outcome as it arrives.

    When the run stops early (Ctrl-C, a failed task), the outcomes that had already
    arrived are kept too, and the tasks not yet finished are cancelled — except on
    the `local_pool` started here, which is stopped by killing its workers: that fails
    their futures, and cancelling them as well races with it (Python < 3.12 breaks).
    A submit to the local pool may start a worker process: Ctrl-C is held meanwhile,
    so the worker is started whole and begins with SIGINT blocked. (Not elsewhere:
    the serial executor runs the task itself in its submit.)
    """
    pending: dict[cf.Future[Any], int] = {}
    queue = iter(todo)
    try:
        while True:
            with _interrupts_held() if local_pool else contextlib.nullcontext():
                for i in queue:
                    pending[pool.submit(run_task, tasks[i])] = i
                    if len(pending) >= window:
                        break
            if not pending:
                return
            done, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for future in done:
                i = pending.pop(future)
                keep(i, _normalise(_result(future, tasks[i])))
    except BaseException:
        for future, i in list(pending.items()):
            if future.done() and not future.cancelled() and future.exception() is None:
                keep(i, _normalise(future.result()))
        raise
    finally:
        for future in () if local_pool else pending:
            future.cancel()


# ----------------------------------------------------------------------------- Ctrl-C


def _start_worker(parent: int) -> None:
    """Begin a local worker (its initializer): Ctrl-C ignored, and it ends with `parent`.

    The parent stops the workers. A worker starts with SIGINT blocked (it is started
    under :func:`_interrupts_held`), so not even its start-up imports see a Ctrl-C; here
    it is ignored for good.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _end_with_parent(parent)


#: prctl's option that asks the kernel for a signal when the parent ends (linux/prctl.h)
_PR_SET_PDEATHSIG = 1


def _end_with_parent(parent: int, *, kernel: bool = True) -> None:
    """End this process as soon as `parent`, the process that started it, has ended.

    A worker blocked on its queue, or in a fit, would otherwise run for good once
    its parent is killed (SIGKILL cannot be caught, so the parent cannot stop it),
    and keep multiprocessing's resource tracker alive as well. On Linux (`kernel`)
    the kernel sends SIGKILL when the parent ends (``prctl(PR_SET_PDEATHSIG)``);
    elsewhere a daemon thread waits for multiprocessing's sentinel of the parent (a
    pipe whose other end only the parent holds, at its end-of-file when the parent is
    gone; polling :func:`os.getppid` where there is none) and ends the process. The
    worker writes nothing, so ending it at any moment loses nothing.
    """
    if kernel and sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):  # no libc to call: the thread below
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent:  # ended before the request: now
                    os._exit(1)
                return
    sentinel = getattr(multiprocessing.parent_process(), "sentinel", None)

    def wait_for_parent() -> None:
        if sentinel is not None:
            from multiprocessing.connection import wait

            wait([sentinel])
        else:
            while os.getppid() == parent:
                threading.Event().wait(0.5)
        os._exit(1)

    threading.Thread(target=wait_for_parent, name="isbetter-parent-watch", daemon=True).start()


def _kill_workers(pool: cf.ProcessPoolExecutor) -> None:
    """Stop the worker processes now: a running fit is lost anyway, and may take minutes.

    Killing is safe: the workers write nothing (this process keeps the cache). Waiting
    instead (``shutdown(wait=True)``) took seconds and could hang for good.
    """
    kill = getattr(pool, "kill_workers", None)  # Python 3.14
    if kill is not None:
        kill()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(OSError, ValueError):  # gone already, or closed
            process.kill()
    pool.shutdown(wait=False, cancel_futures=True)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold a Ctrl-C until the block has run, then deliver it (a no-op off the main thread).

    SIGINT is also blocked at the level of the operating system, so the worker
    processes the block starts begin with it blocked (see :func:`_start_worker`). A
    SIGTERM that a Python handler receives (the command line's, which stops as for
    Ctrl-C) is held as well; left to the system's default, it ends the process at once.
    """
    before = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or before is None:
        yield  # off the main thread, or a handler not set from Python: left alone
        return
    held: list[tuple[int, FrameType | None]] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        held.append((signum, frame))

    handlers: dict[int, Any] = {signal.SIGINT: signal.signal(signal.SIGINT, hold)}
    if callable(signal.getsignal(signal.SIGTERM)):
        handlers[signal.SIGTERM] = signal.signal(signal.SIGTERM, hold)
    blocked = hasattr(signal, "pthread_sigmask")
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if blocked else set()
    try:
        yield
    finally:
        if blocked:  # a Ctrl-C pending at the OS level now reaches `hold`
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        if held:
            _deliver(handlers[held[0][0]], *held[0])


def _deliver(handler: Any, signum: int, frame: FrameType | None) -> None:
    """Act on a held signal as `handler` (the one that was installed) would have."""
    if callable(handler):
        handler(signum, frame)
    elif handler == signal.SIG_DFL:
        signal.raise_signal(signum)


def _describe(task: PairTask) -> str:
    """Name a task in messages, e.g. ``pair 'a' vs 'b' on 'accuracy' (hierarchical)``."""
    return (
        f"pair {task.system_a!r} vs {task.system_b!r} on {task.metric!r} "
        f"({task.kind}, method {task.method!r})"
    )


def _result(future: cf.Future[Any], task: PairTask) -> Any:
    """Return the result of `future`; re-raise its exception with the task named."""
    try:
        return future.result()
    except IsbetterError as exc:
        renamed = None
        with contextlib.suppress(Exception):
            renamed = type(exc)(f"{_describe(task)}: {exc}")
        if renamed is None:
            raise
        raise renamed from exc
    except BrokenProcessPool as exc:
        raise RuntimeError(
            f"{_describe(task)} failed: a local worker process died ({exc}). Local workers "
            "are started by spawning, which runs the calling script's top level again: in a "
            'script, call rank under `if __name__ == "__main__":` (or pass jobs=1); otherwise '
            "the worker may have run out of memory"
        ) from exc
    except Exception as exc:
        raise RuntimeError(f"{_describe(task)} failed: {type(exc).__name__}: {exc}") from exc


def _canonical(obj: Any) -> bytes:
    """Canonical JSON bytes of `obj` (sorted keys, no spaces): what the checksum covers."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def _normalise(outcome: Any) -> Outcome:
    """`outcome` after a JSON round trip, so fresh and cached outcomes are alike."""
    return json.loads(_canonical(outcome))


# ----------------------------------------------------------------------------- cache


class _Cache:
    """Checksummed JSON entries ``root/<key[:2]>/<key>.json``, one per task."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a task key: {key!r}")
        return self.root / key[:2] / f"{key}.json"

    def load(self, key: str) -> tuple[str, Outcome | None]:
        """Return ``("valid", outcome)``, ``("missing", None)`` or ``("corrupt", None)``."""
        try:
            raw = self.path(key).read_bytes()
        except FileNotFoundError:
            return "missing", None
        except OSError:
            return "corrupt", None
        payload = _validated(raw, key)
        return ("corrupt", None) if payload is None else ("valid", payload)

    def store(self, key: str, outcome: Outcome) -> bool:
        """Write the entry atomically (:func:`~isbetter.core.writable.atomic_file`).

        Whatever is in the entry's place (a damaged file, a folder) is replaced. Return
        whether it was written: a failure (a full disk) loses only this entry, so the
        ranking goes on.
        """
        path = self.path(key)
        entry = {
            "format": CACHE_FORMAT,
            "key": key,
            "checksum": hashlib.sha256(_canonical(outcome)).hexdigest(),
            "payload": outcome,
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir() and not path.is_symlink():  # not an entry: out of the way
                shutil.rmtree(path)
            with atomic_file(path) as tmp:
                write_bytes(tmp, json.dumps(entry, sort_keys=True).encode())
        except OSError as exc:
            warnings.warn(
                f"isbetter's ranking cache: cannot keep a pair in {str(path)!r} "
                f"({exc.strerror or exc}); the ranking goes on, and that pair is computed "
                "again by the next run.",
                CacheWarning,
                stacklevel=2,
            )
            return False
        return True


def _validated(raw: bytes, key: str) -> Outcome | None:
    """Return the payload of a cache entry, or None unless every check passes."""
    from isbetter.results.comparison import ComparisonResult

    try:
        entry = json.loads(raw)
        payload = entry["payload"]
        if (
            entry.get("format") != CACHE_FORMAT
            or entry.get("key") != key
            or entry.get("checksum") != hashlib.sha256(_canonical(payload)).hexdigest()
            or not isinstance(payload, list)
            or not payload
        ):
            return None
        for item in payload:
            ComparisonResult.from_dict(item["summary"])
            if not isinstance(item["simplex"], list):
                return None
    except Exception:  # truncated, not JSON, wrong shape: not trusted
        return None
    return payload
