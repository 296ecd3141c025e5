"""Progress on stderr: shown on a terminal (hierarchical cv fit, power), never when redirected."""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from isbetter.cli import main
from isbetter.core.progress import activity, progress_bar, shows_progress

POWER = ["power", "--scenario", "sigir-a", "--sizes", "100", "200", "--replicates", "20"]
POWER += ["--draws", "200", "--seed", "1", "--format", "json"]


def _terminal(monkeypatch):
    """Make the captured stderr claim to be a terminal (call in the test: capture is on)."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)


def _three(tmp_path) -> str:
    rng = np.random.default_rng(1)
    rows = [
        (f"d{i}", s, 1, f, 0.8 + (0.02 if s == "a" else 0) + rng.normal(0, 0.01))
        for i in range(3)
        for s in ("a", "b")
        for f in range(1, 6)
    ]
    path = tmp_path / "s.csv"
    pd.DataFrame(rows, columns=["dataset", "system", "run", "fold", "score"]).to_csv(path)
    return str(path)


def test_power_is_silent_when_stderr_is_not_a_terminal(capsys):
    assert main(POWER) == 0
    assert capsys.readouterr().err == ""


def test_power_shows_a_bar_on_a_terminal_and_quiet_silences_it(capsys, monkeypatch):
    _terminal(monkeypatch)
    assert main(POWER) == 0
    err = capsys.readouterr().err
    assert "test sets:" in err and "/40 [" in err  # 2 sizes x 20 replicates
    assert main([*POWER, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def _fake_hierarchical(monkeypatch):
    """Replace the fit by the (fast) sign test, after a pause long enough for a tick."""
    import isbetter.cv.compare as cv

    real = cv.compare

    def slow(table, **kw):
        time.sleep(0.3)
        kw = {k: v for k, v in kw.items() if k in ("system_a", "system_b", "rope", "rng", "draws")}
        return real(table, method="sign", **kw)

    monkeypatch.setattr(cv, "compare", slow)


def test_hierarchical_fit_shows_a_clock_on_a_terminal(capsys, monkeypatch, tmp_path):
    _terminal(monkeypatch)
    _fake_hierarchical(monkeypatch)
    argv = ["cv", _three(tmp_path), "--a", "a", "--b", "b", "--seed", "1", "--draws", "2000"]
    argv += ["--rope", "0.01"]  # without it, stderr also holds the note on the ROPE default
    assert main(argv) == 0
    assert "hierarchical model of 3 data sets: compiling and sampling: 00:0" in (
        capsys.readouterr().err
    )
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert main([*argv, "--method", "sign"]) == 0  # not hierarchical: no clock
    assert capsys.readouterr().err == ""


def test_hierarchical_fit_is_silent_when_redirected(capsys, monkeypatch, tmp_path):
    _fake_hierarchical(monkeypatch)
    assert main(["cv", _three(tmp_path), "--a", "a", "--b", "b", "--rope", "0.01"]) == 0
    assert capsys.readouterr().err == ""


def test_helpers_follow_the_request(capsys):
    assert shows_progress(True) and not shows_progress(False)
    assert not shows_progress(None)  # captured stderr is not a terminal
    bar = progress_bar(3, None, desc="x", unit="y")
    bar.update(3)
    bar.close()
    with activity("busy", None):
        pass
    assert capsys.readouterr().err == ""
    with activity("busy", True, interval=0.01):
        time.sleep(0.05)
    assert "busy: 00:00" in capsys.readouterr().err
