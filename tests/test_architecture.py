"""The floor plan holds: import-linter checks the contracts declared in pyproject.toml."""

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports(config: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which(
        "lint-imports"
    )
    assert exe, "lint-imports not found: install the test extra (pip install -e '.[test]')"
    return subprocess.run(
        [exe, "--no-cache", str(config)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_import_contracts_are_kept():
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert len(contracts["contracts"]) >= 3
    run = _lint_imports(ROOT / "pyproject.toml")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


def test_an_upward_import_would_be_caught(tmp_path):
    # the same package with the layers upside down: every real import now runs upward, so
    # the tool must report the contract broken (it reads isbetter, not an empty graph)
    config = tmp_path / "upside_down.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "isbetter"\n\n'
        "[[tool.importlinter.contracts]]\n"
        'name = "upside down"\ntype = "layers"\ncontainers = ["isbetter"]\n'
        'layers = ["core", "inference", "results", "cv | f1", "ranking", "report | plots", "cli"]\n'
    )
    run = _lint_imports(config)
    assert run.returncode != 0
    assert "upside down BROKEN" in run.stdout.replace("\n", " ")
