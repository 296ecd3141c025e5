"""isbetter's cache of compiled code: where it is, integrity, concurrency, reproducibility."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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
