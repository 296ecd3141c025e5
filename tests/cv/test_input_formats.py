"""Every subcommand that reads a file takes CSV, TSV, Parquet and JSON lines, with the same answer.

``isbetter power`` reads no file (it simulates from a distribution given by flags).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest

from isbetter import InputError, read_predictions, read_scores
from isbetter.cli import main


def _scores() -> pd.DataFrame:
    rng = np.random.default_rng(20240917)
    rows = []
    for d in ("d1", "d2", "d3"):
        for s, shift in (("a", 0.02), ("b", 0.0), ("c", -0.01)):
            for f in range(1, 6):
                rows.append((d, s, 1, f, round(0.8 + shift + rng.normal(0, 0.01), 6)))
    return pd.DataFrame(rows, columns=["dataset", "system", "run", "fold", "score"])


def _predictions() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    gold = rng.integers(0, 2, 120)
    a = np.where(rng.random(120) < 0.85, gold, 1 - gold)
    b = np.where(rng.random(120) < 0.75, gold, 1 - gold)
    return pd.DataFrame({"id": np.arange(120), "gold": gold, "svm": a, "nb": b})


def _write(df: pd.DataFrame, path) -> None:
    name = path.name
    if name.endswith(".parquet"):
        df.to_parquet(path)
    elif name.endswith((".jsonl", ".jsonl.gz")):
        df.to_json(path, orient="records", lines=True, double_precision=15)
    elif name.endswith(".json"):
        df.to_json(path, orient="records", double_precision=15)
    elif name.endswith((".tsv", ".tab.csv")):  # a tab-separated file, whatever its name
        df.to_csv(path, sep="\t", index=False)
    elif name.endswith(".semi.csv"):
        df.to_csv(path, sep=";", index=False)
    else:
        df.to_csv(path, index=False)


NAMES = [
    "t.csv",
    "t.tsv",
    "t.tab.csv",
    "t.semi.csv",
    "t.parquet",
    "t.jsonl",
    "t.json",
    "t.csv.gz",
    "t.jsonl.gz",
]


@pytest.mark.parametrize("name", NAMES)
def test_readers_agree(tmp_path, name):
    scores, preds = tmp_path / f"s_{name}", tmp_path / f"p_{name}"
    _write(_scores(), scores)
    _write(_predictions(), preds)
    got = read_scores(scores).data
    want = read_scores(_scores()).data
    pd.testing.assert_frame_equal(got, want, check_dtype=False)
    p = read_predictions(preds, id="id")
    assert p.systems == ("svm", "nb") and p.n_documents == 120


def _cv(path, capsys) -> dict:
    assert main(["cv", str(path), "--a", "a", "--b", "b", "--method", "sign",
                 "--seed", "1", "--format", "json"]) == 0  # fmt: skip
    return json.loads(capsys.readouterr().out)


def _rank(path, capsys) -> dict:
    args = ["rank", str(path), "--method", "sign", "--jobs", "1", "--quiet"]
    assert main([*args, "--seed", "1", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _f1(path, capsys) -> dict:
    args = ["f1", str(path), "--a", "svm", "--b", "nb", "--draws", "2000", "--no-baselines"]
    assert main([*args, "--seed", "1", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _strip(report: Any) -> Any:
    """The report without what names the input file (``settings["input"]``, at any depth)."""
    if isinstance(report, dict):
        return {k: _strip(v) for k, v in report.items() if k != "input"}
    if isinstance(report, list):
        return [_strip(v) for v in report]
    return report


@pytest.mark.parametrize("name", ["t.tsv", "t.tab.csv", "t.parquet", "t.jsonl"])
def test_every_subcommand_reads_every_format(tmp_path, capsys, name):
    s_csv, p_csv = tmp_path / "s.csv", tmp_path / "p.csv"
    _write(_scores(), s_csv)
    _write(_predictions().drop(columns="id"), p_csv)
    s_other, p_other = tmp_path / f"s_{name}", tmp_path / f"p_{name}"
    _write(_scores(), s_other)
    _write(_predictions().drop(columns="id"), p_other)
    assert _strip(_cv(s_other, capsys)) == _strip(_cv(s_csv, capsys))
    assert _strip(_rank(s_other, capsys)) == _strip(_rank(s_csv, capsys))
    assert _strip(_f1(p_other, capsys)) == _strip(_f1(p_csv, capsys))


def test_nan_rows_are_named_by_file_line(tmp_path):
    df = _scores()
    df.loc[[3, 7], "score"] = np.nan
    path = tmp_path / "s.csv"
    df.to_csv(path, index=False)
    # the header is line 1: the rows at positions 3 and 7 are lines 5 and 9
    with pytest.raises(InputError, match=r"\(lines 5, 9\)"):
        read_scores(path)
    jl = tmp_path / "s.jsonl"
    df.to_json(jl, orient="records", lines=True)
    with pytest.raises(InputError, match=r"\(lines 4, 8\)"):
        read_scores(jl)
    with pytest.raises(InputError, match=r"\(index labels 3, 7\)"):
        read_scores(df)


def test_json_that_is_neither_lines_nor_records(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"a": ', encoding="utf-8")
    with pytest.raises(InputError, match=r"Cannot read .*bad.json.* as a table"):
        read_scores(path)
