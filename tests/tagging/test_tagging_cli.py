"""``isbetter tagging split|score`` and ``isbetter rank MANIFEST --predictions``: end to end."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from isbetter.cli import main

DATA = Path(__file__).parent / "data"
CORPORA = [str(DATA / "answers.conllu.gz"), str(DATA / "reviews.conllu.gz")]


def _split(out: Path, *extra: str) -> int:
    return main(
        ["tagging", "split", *CORPORA, "--runs", "2", "--folds", "3", "--seed", "5", "--by",
         "document", "--out", str(out), *extra]
    )  # fmt: skip


def test_split_writes_the_manifest_and_says_so(tmp_path: Path, capsys) -> None:
    assert _split(tmp_path / "s") == 0
    manifest = pd.read_csv(tmp_path / "s" / "manifest.csv")
    assert len(manifest) == 2 * 2 * 3 and set(manifest["corpus"]) == {"answers", "reviews"}
    assert "wrote 12 splits of 2 corpora (2 x 3 folds by document)" in capsys.readouterr().err


def test_split_names(tmp_path: Path) -> None:
    assert _split(tmp_path / "n", "--names", "qa", "rev") == 0
    assert set(pd.read_csv(tmp_path / "n" / "manifest.csv")["corpus"]) == {"qa", "rev"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--folds", "200"], "has 153 sentences, fewer than the 200 folds asked for"),
        (["--names", "one"], "--names gives 1 name for 2 corpora"),
    ],
)
def test_split_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys, extra, message) -> None:
    args = ["tagging", "split", *CORPORA, "--runs", "1", "--folds", "3", "--seed", "0"]
    args += ["--out", str(tmp_path / "x")]
    if extra[0] == "--folds":
        args[args.index("--folds") + 1] = extra[1]
    else:
        args += extra
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "x").exists()
