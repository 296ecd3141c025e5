"""The EWT tagger study's script runs end to end on a small sample, and resumes.

``studies/ewt_taggers/run_study.py`` regenerates ``data/ud_ewt_taggers/`` from the whole
treebank in about an hour; here it runs on the two-genre test sample of
``tests/tagging/data`` (1 run x 2 folds by document, the two cheap taggers) so that the
script cannot rot: splits, training, tagging, scoring, resuming.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("nltk")

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "studies" / "ewt_taggers" / "run_study.py"
SAMPLE = ROOT / "tests" / "tagging" / "data"


def _run(out: Path, *extra: str) -> str:
    argv = [sys.executable, str(SCRIPT), "--corpus-dir", str(SAMPLE), "--out", str(out)]
    argv += ["--runs", "1", "--folds", "2", "--seed", "3", "--jobs", "1", "--taggers", "mft,tnt"]
    done = subprocess.run([*argv, *extra], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _columns_but_upos(path: Path) -> list[list[str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        lines = [line.rstrip("\n").split("\t") for line in handle]
    return [cols[:3] + cols[4:] if len(cols) == 10 else cols for cols in lines]


def test_study_script_end_to_end_and_resumes(tmp_path):
    out = tmp_path / "study"
    shipped = tmp_path / "data" / "scores.csv"
    first = _run(out, "--scores", str(shipped))
    assert "0 of 8 predictions done; 8 to make" in first
    scores = pd.read_csv(shipped)
    assert len(scores) == 8  # 2 genres x 1 run x 2 folds x 2 taggers
    assert set(scores["dataset"]) == {"answers", "reviews"}
    assert set(scores["system"]) == {"mft", "tnt"}
    for metric in ("token_accuracy", "sentence_accuracy", "oov_accuracy"):
        assert scores[metric].between(0, 1).all()
    # every word of every test file is tagged exactly once per run
    words = scores[scores["system"] == "mft"].groupby("dataset")["tokens"].sum()
    assert words.to_dict() == {"answers": 1719, "reviews": 2043}
    # TnT (a second-order HMM) beats the most-frequent-tag baseline on the tokens
    totals = scores.groupby("system")[["correct_tokens", "tokens"]].sum()
    accuracy = totals["correct_tokens"] / totals["tokens"]
    assert accuracy["tnt"] > accuracy["mft"] > 0.5
    mcnemar = pd.read_csv(shipped.with_name("mcnemar.csv"))
    assert len(mcnemar) == 4 and mcnemar["p_value"].between(0, 1).all()
    # a prediction is the gold test file with only the UPOS column changed
    manifest = pd.read_csv(out / "splits" / "manifest.csv")
    row = manifest.iloc[0]
    pred = out / "preds" / "tnt" / row["corpus"] / str(row["run"]) / f"{row['fold']}.conllu"
    assert _columns_but_upos(pred) == _columns_but_upos(out / "splits" / row["test"])
    # resumable: only a missing or truncated prediction is made again
    pred.unlink()
    truncated = out / "preds" / "mft" / row["corpus"] / str(row["run"]) / f"{row['fold']}.conllu"
    truncated.write_text(truncated.read_text(encoding="utf-8")[:2000], encoding="utf-8")
    assert "6 of 8 predictions done; 2 to make" in _run(out)
    assert pd.read_csv(out / "scores.csv").equals(scores)
    assert not list(out.rglob("*.part"))


def _study_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("run_study", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_more_runs_keep_the_runs_already_drawn(tmp_path, capsys):
    """--runs 2 on a study drawn with --runs 1 keeps run 1's files (and so its predictions)."""
    import argparse

    study = _study_module()
    corpora = study.find_corpora(SAMPLE)
    args = argparse.Namespace(out=tmp_path, runs=1, folds=2, dev=0.1, seed=3)
    first = study.make_splits(corpora, args)
    before = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.rglob("*.conllu")}
    args.runs = 2
    second = study.make_splits(corpora, args)
    assert "splits: runs 1-1 redrawn identically" in capsys.readouterr().out
    assert len(second) == 2 * len(first) and set(second["run"]) == {1, 2}
    assert second[second["run"] == 1].reset_index(drop=True).equals(first)
    for rel, data in before.items():
        assert (tmp_path / rel).read_bytes() == data, rel
    assert sorted(p.name for p in tmp_path.iterdir()) == ["splits"]  # no splits.new/.old left
    assert study.make_splits(corpora, args).equals(second)  # same --runs: reused as it is
    # a run 1 that would come out otherwise (here: a file edited since) is refused, and
    # the splits in place are kept
    edited = tmp_path / "splits" / second.iloc[0]["test"]
    edited.write_text(edited.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    args.runs = 3
    with pytest.raises(SystemExit, match="redrawing the splits changed"):
        study.make_splits(corpora, args)
    assert pd.read_csv(tmp_path / "splits" / "manifest.csv").equals(second)
