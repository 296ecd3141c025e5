"""isbetter's cache of compiled code: where it is, integrity, concurrency, reproducibility."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from isbetter import CacheWarning
from isbetter.cli import main
from isbetter.core import cache


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_directory_is_the_environment_variable_or_the_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv(cache.ENV_VAR, str(tmp_path / "x"))
    assert cache.directory() == (tmp_path / "x").resolve()
    monkeypatch.delenv(cache.ENV_VAR)
    import platformdirs

    default = Path(platformdirs.user_cache_dir("isbetter", appauthor=False))
    assert cache.directory() == default
    assert Path.cwd() not in default.parents  # never the working directory


def _fake_entry(root: Path, content: bytes = b"compiled") -> Path:
    entry = root / f"compiled-{cache._build_key()[0]}"
    module = entry / "numba" / "isbetter_models_x"
    module.mkdir(parents=True)
    (module / "f-1.py311.nbi").write_bytes(b"index")
    (module / "f-1.py311.1.nbc").write_bytes(content)
    cache._write_manifest(entry, {"x"})
    return entry


def test_verify_keeps_intact_files_and_removes_altered_ones(cache_dir):
    entry = _fake_entry(cache_dir)
    assert cache._verify(entry) == []
    assert cache.info().entries[0]["valid"]
    data = entry / "numba" / "isbetter_models_x" / "f-1.py311.1.nbc"
    data.write_bytes(b"compi")  # truncated
    assert not cache.info().entries[0]["valid"]
    removed = cache._verify(entry)
    assert removed == ["isbetter_models_x/f-1.py311.1.nbc"]
    # the index goes with its data: the module's folder is rebuilt as a whole
    assert not (entry / "numba" / "isbetter_models_x").exists()


def test_files_outside_a_recorded_compilation_are_not_trusted(cache_dir):
    entry = _fake_entry(cache_dir)
    stray = entry / "numba" / "isbetter_models_y" / "g-3.py311.nbi"
    stray.parent.mkdir()
    stray.write_bytes(b"planted")
    assert cache._verify(entry) == ["isbetter_models_y/g-3.py311.nbi"]
    assert not stray.exists()
    assert (entry / "numba" / "isbetter_models_x" / "f-1.py311.nbi").exists()


def test_cache_info_and_clear_on_the_command_line(cache_dir, capsys):
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(cache_dir.resolve()) in out and "empty" in out and cache.ENV_VAR in out
    _fake_entry(cache_dir)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "(current): x; 3 files" in out and "valid" in out
    assert main(["cache", "clear"]) == 0
    assert "cleared" in capsys.readouterr().out
    assert not list(cache_dir.glob("compiled-*"))
    assert main(["cache", "nonsense"]) == 2


# --------------------------------------------------------------------------- processes
_FIT = textwrap.dedent(
    """
    import json, sys, time, warnings
    import numpy as np
    import isbetter
    from isbetter import ConvergenceWarning
    from isbetter.cv.hierarchical.model import HierarchicalModel
    warnings.simplefilter("ignore", ConvergenceWarning)
    q = int(sys.argv[1])
    rng = np.random.default_rng(q)
    a = rng.normal(0.8, 0.03, size=(q, 10))
    b = a + rng.normal(0.01, 0.02, size=(q, 10)) + rng.normal(0, 0.01, size=(q, 1))
    scores = isbetter.from_arrays(a, b, names=("A", "B"), folds=10).paired("A", "B")
    start = time.perf_counter()
    model = HierarchicalModel(q).compile()
    loaded = time.perf_counter() - start
    res = model.fit(scores, rope=0.01, draws=200, tune=200, chains=2, rng=5)
    print(json.dumps({"p": res.probabilities().as_tuple(), "delta0": res.delta0.tolist(),
                      "parameterization": model.parameterization, "load": loaded}))
    """
)


def _run_fit(cache_dir: Path, q: int) -> subprocess.Popen:
    env = {**os.environ, cache.ENV_VAR: str(cache_dir), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", _FIT, str(q)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _result(process: subprocess.Popen) -> dict:
    out, err = process.communicate(timeout=900)
    assert process.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def cold_runs(tmp_path_factory):
    """Two processes started at once on an empty cache (centred model, 25 data sets)."""
    directory = tmp_path_factory.mktemp("cold") / "cache"
    first, second = _run_fit(directory, 25), _run_fit(directory, 25)
    return directory, _result(first), _result(second)


@pytest.mark.slow
def test_two_cold_processes_both_succeed_and_leave_one_valid_entry(cold_runs, monkeypatch):
    directory, first, second = cold_runs
    assert first["parameterization"] == "centred"
    assert first == {**second, "load": first["load"]}  # same seed, same numbers
    monkeypatch.setenv(cache.ENV_VAR, str(directory))
    info = cache.info()
    assert len(info.entries) == 1 and info.entries[0]["valid"]
    assert {"hierarchical_density", "hierarchical_quadrature"} <= set(info.entries[0]["groups"])


def _stamps(directory: Path) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in directory.rglob("*") if p.is_file()}


@pytest.mark.slow
def test_warm_cache_gives_the_cold_numbers_and_compiles_nothing(cold_runs):
    directory, first, _ = cold_runs
    before = _stamps(directory)
    warm = _result(_run_fit(directory, 25))
    assert warm["p"] == first["p"] and warm["delta0"] == first["delta0"]
    # another number of data sets (and the integrated model) compiles nothing new either
    other = _result(_run_fit(directory, 6))
    assert other["parameterization"] == "integrated"
    after = _stamps(directory)
    kernels = {k: v for k, v in after.items() if "/numba/" in k}
    assert kernels and kernels == {k: before[k] for k in kernels}  # loaded, none rewritten


@pytest.mark.slow
def test_a_tampered_entry_is_detected_and_rebuilt(cold_runs, monkeypatch):
    directory, first, _ = cold_runs
    monkeypatch.setenv(cache.ENV_VAR, str(directory))
    entry = Path(cache.info().path) / f"compiled-{cache.info().entries[0]['key']}"
    victim = next((entry / "numba").rglob("*_centred_logp_cfunc*.nbc"))
    size = victim.stat().st_size
    victim.write_bytes(victim.read_bytes()[:100])  # truncated
    assert not cache.info().entries[0]["valid"]
    again = _result(_run_fit(directory, 25))
    assert again["p"] == first["p"] and again["delta0"] == first["delta0"]
    assert cache.info().entries[0]["valid"]
    assert victim.stat().st_size == size  # compiled again, whole


# --------------------------------------------------------------------------- damaged / unusable
# (issue 29) Each case as a user met it; the Plackett-Luce density is the compiled group:
# one small kernel, compiled once here (seconds), then loaded or compiled per test.
def _kernel(monkeypatch):
    """Return the Plackett-Luce density's dispatcher as a fresh process would get it."""
    from isbetter.cv import plackett_luce_density

    monkeypatch.setattr(cache, "_READY", {})
    dispatcher = plackett_luce_density._kernels()["logp"]
    assert len(dispatcher.overloads) == 1  # compiled or loaded: usable
    return dispatcher


def _hits(dispatcher) -> int:
    return sum(dispatcher.stats.cache_hits.values())


def _compiled_files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc")}


#: where numba's own fallback would put isbetter's compiled code: beside its source
PACKAGE = Path(cache.__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A cache holding the Plackett-Luce density (made once for the module)."""
    directory = tmp_path_factory.mktemp("filled") / "cache"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(cache.ENV_VAR, str(directory))
        assert _hits(_kernel(mp)) == 0  # compiled, and saved
        assert _hits(_kernel(mp)) == 1  # loaded
    return directory


@pytest.fixture
def copy(filled, tmp_path, monkeypatch):
    """A copy of the filled cache, made the cache of the test; returns its entry folder."""
    directory = tmp_path / "cache"
    shutil.copytree(filled, directory)
    monkeypatch.setenv(cache.ENV_VAR, str(directory))
    return directory / f"compiled-{cache._build_key()[0]}"


@pytest.fixture
def nothing_in_the_package():
    """Fail if any compiled file appears beside isbetter's source (site-packages)."""
    before = _compiled_files(PACKAGE)
    yield
    assert _compiled_files(PACKAGE) == before


def _read_only(monkeypatch):
    """Refuse, as a read-only mount does, every write into the cache (the lock first)."""
    import errno

    from filelock import FileLock

    def refuse(self, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), self.lock_file)

    monkeypatch.setattr(FileLock, "acquire", refuse)


def test_a_complete_read_only_cache_is_used_as_it_is(copy, monkeypatch, nothing_in_the_package):
    """Before: refused with `[Errno 30] ... compile.lock` though nothing needed writing."""
    stamps = _stamps(copy.parent)
    _read_only(monkeypatch)
    assert _hits(_kernel(monkeypatch)) == 1  # loaded, no warning (warnings are errors here)
    assert _stamps(copy.parent) == stamps


def test_an_incomplete_read_only_cache_compiles_in_memory(
    cache_dir, monkeypatch, nothing_in_the_package
):
    _read_only(monkeypatch)
    with pytest.warns(CacheWarning, match=r"cannot write to it \(OSError: Read-only file sys"):
        assert _hits(_kernel(monkeypatch)) == 0
    assert not _compiled_files(cache_dir)


def test_an_unusable_folder_compiles_in_memory_never_beside_the_source(
    tmp_path, monkeypatch, nothing_in_the_package
):
    """Before: numba's fallback wrote isbetter's code into site-packages/isbetter/**/__pycache__
    (which no checksum covers), silently."""
    afile = tmp_path / "a file"
    afile.write_text("")
    monkeypatch.setenv(cache.ENV_VAR, str(afile / "cache"))
    entry = f"{str(afile / 'cache')}/compiled-"
    with pytest.warns(CacheWarning, match=f"code '{entry}.*': cannot write to it"):
        assert _hits(_kernel(monkeypatch)) == 0


def test_a_full_disk_compiles_in_memory_and_names_the_folder(
    cache_dir, monkeypatch, nothing_in_the_package
):
    """Before: every hierarchical run failed with numba's `[Errno 28]`, naming no path."""
    import errno

    from numba.core.caching import IndexDataCacheFile

    def full(self, name, data):  # as numba's own write fails: no file name in the error
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(IndexDataCacheFile, "_save_data", full)
    entry = cache_dir.resolve() / f"compiled-{cache._build_key()[0]}"
    with pytest.warns(CacheWarning) as caught:
        assert _hits(_kernel(monkeypatch)) == 0
    (message,) = [str(w.message) for w in caught]
    assert message.startswith(f"isbetter's cache of compiled code {str(entry)!r}: could not use")
    assert "No space left on device" in message
    assert not _compiled_files(cache_dir)  # nothing half written is left to load


@pytest.mark.parametrize(
    "manifest",
    ['{"files": null}', '{"files": {}, "groups": 5}', '{"files": {"x": 1}, "groups": []}', "[1]"],
)
def test_a_malformed_manifest_is_an_absent_cache(copy, monkeypatch, capsys, manifest):
    """Before: `{"files": null}` gave a traceback on every run, and in `isbetter cache info`
    and `clear`."""
    (copy / "manifest.json").write_text(manifest)
    assert main(["cache", "info"]) == 0
    assert "INVALID, rebuilt on next use" in capsys.readouterr().out
    with pytest.warns(CacheWarning, match="manifest is unreadable or malformed; treated as absent"):
        assert _hits(_kernel(monkeypatch)) == 0  # compiled again, into the cache
    assert cache.info().entries[0]["valid"]
    (copy / "manifest.json").write_text(manifest)
    assert main(["cache", "clear"]) == 0
    assert not copy.exists()


def test_a_corrupt_file_the_manifest_vouches_for_is_not_loaded(copy, monkeypatch):
    """Before: numba's UnpicklingError traceback on every run."""
    (data,) = (copy / "numba").rglob("*.nbc")
    data.write_bytes(b"not a pickle" + data.read_bytes()[12:])
    cache._write_manifest(copy, set())  # the manifest records the damaged file
    assert cache.info().entries[0]["valid"]
    with pytest.warns(CacheWarning, match=r"could not use it \(UnpicklingError: .*deleted"):
        assert _hits(_kernel(monkeypatch)) == 0
    assert not _compiled_files(copy)  # out of the cache: the next run compiles afresh
    assert _hits(_kernel(monkeypatch)) == 0  # compiled into the cache, no warning
    assert _hits(_kernel(monkeypatch)) == 1  # and loaded from it


def test_cache_clear_removes_whatever_is_there(cache_dir, capsys):
    _fake_entry(cache_dir)
    (cache_dir / "compiled-0123456789abcdef").write_text("a stray file")
    (cache_dir / "compiled-fedcba9876543210").mkdir()
    (cache_dir / "compiled-fedcba9876543210" / "manifest.json").write_text('{"groups": 1}')
    assert main(["cache", "info"]) == 0
    assert main(["cache", "clear"]) == 0
    assert "cleared" in capsys.readouterr().out
    assert not list(cache_dir.iterdir())


def test_cache_clear_that_cannot_delete_says_so_in_one_line(cache_dir, capsys, monkeypatch):
    import errno

    entry = _fake_entry(cache_dir)

    def refuse(path, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    monkeypatch.setattr(os, "unlink", refuse)
    monkeypatch.setattr(os, "rmdir", refuse)
    assert main(["cache", "clear"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("isbetter cache: error: cannot delete ") and err.count("\n") == 1, err
    assert "Read-only file system" in err and "is not cleared" in err
    assert entry.exists()


# --------------------------------------------------------------------------- real mounts
def _in_private_mounts(
    setup: str, command: list[str], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """Run `command` after the shell lines `setup` in a private mount namespace (or skip)."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare here")
    script = f"{setup} || exit 99\nexec {shlex.join(command)}"
    run = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=900,
    )
    if run.returncode == 99 or run.stderr.startswith("unshare:"):
        pytest.skip(f"no private mounts here: {run.stderr.strip()}")
    return run


@pytest.mark.slow
def test_a_filled_cache_on_a_read_only_mount_as_the_report_met_it(cold_runs, tmp_path):
    """A read-only bind mount of a filled cache: the fit loads it, writes nothing, warns not."""
    directory, first, _ = cold_runs
    mount = tmp_path / "ro"
    mount.mkdir()
    setup = (
        f"mount --bind {shlex.quote(str(directory))} {shlex.quote(str(mount))} && "
        f"mount -o remount,bind,ro {shlex.quote(str(mount))}"
    )
    before = _compiled_files(PACKAGE)
    env = {cache.ENV_VAR: str(mount), "OMP_NUM_THREADS": "1"}
    run = _in_private_mounts(setup, [sys.executable, "-c", _FIT, "25"], env)
    assert run.returncode == 0, run.stderr[-3000:]  # before: [Errno 30] ... compile.lock
    assert "Warning" not in run.stderr, run.stderr
    assert json.loads(run.stdout.splitlines()[-1])["p"] == first["p"]
    assert _compiled_files(PACKAGE) == before
    clear = [sys.executable, "-m", "isbetter", "cache", "clear"]
    run = _in_private_mounts(setup, clear, env)
    assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr
    assert "Read-only file system" in run.stderr and "is not cleared" in run.stderr


@pytest.mark.slow
def test_a_full_disk_as_the_report_met_it(tmp_path):
    """A full tmpfs: compiled in memory with a warning naming the folder (before: numba's
    `[Errno 28] No space left on device` traceback, naming no path)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    setup = (
        f"mount -t tmpfs -o size=64k tmpfs {shlex.quote(str(disk))} && "
        f"{{ head -c 1000000 /dev/zero > {shlex.quote(str(disk / 'filler'))} 2>/dev/null; true; }}"
    )
    load = "from isbetter.cv import plackett_luce_density as m; m._kernels(); print('loaded')"
    before = _compiled_files(PACKAGE)
    run = _in_private_mounts(setup, [sys.executable, "-c", load], {cache.ENV_VAR: str(disk)})
    assert (run.returncode, run.stdout) == (0, "loaded\n"), run.stderr[-3000:]
    entry = disk / f"compiled-{cache._build_key()[0]}"
    assert f"CacheWarning: isbetter's cache of compiled code {str(entry)!r}: could not" in (
        run.stderr
    )
    assert "No space left on device" in run.stderr
    assert _compiled_files(PACKAGE) == before
