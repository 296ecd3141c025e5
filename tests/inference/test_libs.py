"""PyMC, nutpie and ArviZ are imported by isbetter.inference.libs only, and quietly.

ArviZ's once-a-day "major refactor" notice never reaches isbetter's output (issue 29).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import isbetter
from isbetter.core.cache import directory

SRC = Path(isbetter.__file__).resolve().parent
#: the libraries that import ArviZ (or are it): only isbetter.inference.libs imports them
LIBS = {"pymc", "nutpie", "arviz"}


def direct_imports(source: str) -> list[int]:
    """Return the lines of `source` that import one of LIBS, outside ``if TYPE_CHECKING:``."""
    found: list[int] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and ast.unparse(node.test) in {
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        }:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            names = []
        if any(name.split(".")[0] in LIBS for name in names):
            found.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


def test_direct_imports_finds_lazy_and_submodule_imports_but_not_type_checking_ones():
    """The check below has teeth: each import form it must catch, it catches."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import pymc\n"
        "import arviz as az\n"  # line 4
        "def f():\n"
        "    import pymc as pm\n"  # line 6
        "    from nutpie.compile_pymc import CompiledPyMCModel\n"  # line 7
        "    import pytensor.tensor as pt\n"
        "    from isbetter.inference import libs\n"
        "class C:\n"
        "    def g(self):\n"
        "        if True:\n"
        "            import nutpie, numpy\n"  # line 13
    )
    assert direct_imports(source) == [4, 6, 7, 13]


def test_no_module_but_libs_imports_pymc_nutpie_or_arviz():
    """A direct import of PyMC or nutpie, before ArviZ was imported quietly, would bring the
    notice back: every one goes through isbetter.inference.libs."""
    found = [
        f"{path.relative_to(SRC)}:{line}"
        for path in sorted(SRC.rglob("*.py"))
        if path != SRC / "inference" / "libs.py"
        for line in direct_imports(path.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_importing_libs_imports_none_of_them():
    """The libraries are imported when asked for: ``import isbetter`` stays fast."""
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, isbetter.inference.libs; "
            "print(sorted(m for m in ('pymc', 'nutpie', 'arviz') if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC.parent)},
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_the_first_command_of_the_day_prints_no_arviz_notice(tmp_path):
    """Before: with a fresh user cache, `isbetter cv` (the hierarchical model: nutpie, which
    imports ArviZ) printed ArviZ's FutureWarning, six lines, before its result."""
    rng = np.random.default_rng(0)
    rows = [
        (f"d{d}", system, 1, fold, float(0.8 + 0.02 * d + (system == "a") * 0.01 + e))
        for d in range(4)
        for system in ("a", "b")
        for fold, e in enumerate(rng.normal(0, 0.01, 5), start=1)
    ]
    scores = tmp_path / "scores.csv"
    pd.DataFrame(rows, columns=["dataset", "system", "run", "fold", "score"]).to_csv(
        scores, index=False
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC.parent),
        "XDG_CACHE_HOME": str(tmp_path / "fresh-cache"),  # where ArviZ keeps its daily stamp
        "ISBETTER_CACHE_DIR": str(directory()),  # isbetter's compiled models, as they are
        "PYTHONWARNINGS": "default",  # every warning shown: ArviZ's would be
    }
    run = subprocess.run(
        [sys.executable, "-m", "isbetter", "cv", str(scores), "--a", "a", "--b", "b"]
        + ["--rope", "0.01", "--draws", "200", "--seed", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert "ArviZ" not in run.stderr and "refactor" not in run.stderr
    assert (tmp_path / "fresh-cache" / "arviz").is_dir()  # ArviZ was imported, and quiet
