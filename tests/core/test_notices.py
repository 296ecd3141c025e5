"""ArviZ's once-a-day "major refactor" notice never reaches isbetter's output (issue 29)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import isbetter
from isbetter.core.cache import directory

SRC = Path(isbetter.__file__).resolve().parent
#: a lazy import of a package that imports ArviZ
_IMPORTS_ARVIZ = re.compile(r"^(\s+)(import (pymc|nutpie)|from (pymc|nutpie)[\s.])", re.M)


def test_every_import_of_pymc_or_nutpie_first_imports_arviz_quietly():
    """An import of PyMC or nutpie without quiet_arviz() before it would bring the notice back."""
    missing = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for match in _IMPORTS_ARVIZ.finditer(text):
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            if before.strip() != "quiet_arviz()":
                line = text[: match.start()].count("\n") + 1
                missing.append(f"{path.relative_to(SRC)}:{line}")
    assert missing == []


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
