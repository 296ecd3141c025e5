"""``isbetter tagging split|score`` and ``isbetter rank MANIFEST --predictions``: end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
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
        # the flag, not the Python parameter (before: "`folds` must be ...")
        (["--folds", "0"], "--folds must be an integer >= 2, got 0."),
        (["--dev", "1"], "--dev: expected a share"),
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


# ---- gold -> perturbed predictions -> score -> rank -----------------------------------------

#: each system's share of words whose UPOS it gets wrong
ERRORS = {"good": 0.02, "fair": 0.08, "poor": 0.25}


def _perturb(gold: Path, out: Path, error: float, rng: np.random.Generator) -> None:
    lines = gold.read_text(encoding="utf-8").split("\n")
    for i, line in enumerate(lines):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit() and rng.random() < error:
            cols[3] = "X" if cols[3] != "X" else "NOUN"
            lines[i] = "\t".join(cols)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines), encoding="utf-8")


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One corpus, 2 x 3 folds by document, three systems' perturbed predictions."""
    root = tmp_path_factory.mktemp("study") / "splits"
    args = ["tagging", "split", CORPORA[0], "--runs", "2", "--folds", "3", "--seed", "1"]
    assert main([*args, "--by", "document", "--out", str(root)]) == 0
    rng = np.random.default_rng(0)
    manifest = pd.read_csv(root / "manifest.csv")
    for row in manifest.itertuples():
        for system, error in ERRORS.items():
            out = root / "preds" / system / row.corpus / str(row.run) / f"{row.fold}.conllu"
            _perturb(root / row.test, out, error, rng)
    return root


TEMPLATE = "preds/{system}/{corpus}/{run}/{fold}.conllu"


def test_score_writes_the_tidy_table_and_the_baselines(study: Path, tmp_path: Path) -> None:
    scores, base = tmp_path / "scores.csv", tmp_path / "baselines.csv"
    args = ["tagging", "score", str(study / "manifest.csv"), "--predictions", TEMPLATE]
    args += ["--systems", *ERRORS, "--output", str(scores), "--baselines", str(base)]
    assert main(args) == 0
    table = pd.read_csv(scores)
    assert len(table) == 3 * 6
    assert list(table.columns[:4]) == ["dataset", "system", "run", "fold"]
    mean = table.groupby("system")["token_accuracy"].mean()
    assert mean["good"] > mean["fair"] > mean["poor"]
    for system, error in ERRORS.items():  # about 1 - error of 1 719 words per run
        share = table[table.system == system].eval("correct_tokens / tokens").mean()
        assert abs(share - (1 - error)) < 0.03
    assert (table.groupby(["system", "run"])["tokens"].sum() == 1719).all()
    pairs = pd.read_csv(base)
    assert len(pairs) == 3 * 6 and {"p_value", "low_a", "high_b"} <= set(pairs.columns)
    assert (pairs[pairs.system_a == "good"]["better"] == "good").all()


def test_rank_from_the_manifest_equals_rank_from_the_scores(study: Path, tmp_path, capsys) -> None:
    scores = tmp_path / "scores.csv"
    args = ["tagging", "score", str(study), "--predictions", TEMPLATE, "--systems", *ERRORS]
    assert main([*args, "--output", str(scores)]) == 0
    common = ["--metric", "token_accuracy", "--rope", "0.01", "--seed", "1", "--format", "json"]
    common += ["--systems", *ERRORS]
    assert main(["rank", str(scores), *common]) == 0
    from_scores = json.loads(capsys.readouterr().out)
    assert main(["rank", str(study / "manifest.csv"), "--predictions", TEMPLATE, *common]) == 0
    from_manifest = json.loads(capsys.readouterr().out)
    assert from_manifest["metrics"]["token_accuracy"]["chain"] == "poor < fair < good"
    assert from_scores["metrics"] == from_manifest["metrics"]
    mcnemar = from_manifest["settings"]["mcnemar"]
    assert {(p["system_a"], p["system_b"]) for p in mcnemar["pairs"]} == {
        ("good", "fair"), ("good", "poor"), ("fair", "poor"),
    }  # fmt: skip


def test_rank_text_report_shows_the_single_split_answer(study: Path, capsys) -> None:
    args = ["rank", str(study), "--predictions", TEMPLATE, "--systems", *ERRORS]
    assert main([*args, "--metric", "token_accuracy", "--rope", "0.01", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "one split (answers, run 1, fold 1): token accuracy [Wilson 95%]: good 0." in out
    assert "mid-p McNemar on each fold (α 0.05), good vs poor: good better on 6 of 6 folds" in out


@pytest.mark.parametrize(
    ("template", "systems", "message"),
    [
        ("preds/{system}/{corpus}/{run}.conllu", ERRORS, "has no {fold}"),
        ("preds/{system}/{split}/{fold}.conllu", ERRORS, "unknown placeholder {split}"),
        ("preds/good/{corpus}/{run}/{fold}.conllu", ERRORS, "it gives every system the same files"),
        (TEMPLATE, ["good", "great"], "no predictions of system 'great' for corpus 'answers'"),
    ],
)
def test_score_bad_templates(study: Path, tmp_path, capsys, template, systems, message) -> None:
    out = tmp_path / "scores.csv"
    args = ["tagging", "score", str(study), "--predictions", template, "--systems", *systems]
    assert main([*args, "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_bad_tag_column_names_the_flag(study: Path, capsys) -> None:
    args = ["rank", str(study), "--predictions", TEMPLATE, "--systems", *ERRORS]
    assert main([*args, "--tag-column", "form"]) == 2
    err = capsys.readouterr().err
    assert "--tag-column 'form': unknown CoNLL-U tag column 'form'" in err and "`" not in err


def test_score_a_dropped_sentence_names_file_sentence_and_line(study: Path, tmp_path, capsys):
    bad = tmp_path / "bad"
    for path in (study / "preds" / "fair").rglob("*.conllu"):
        target = bad / path.relative_to(study / "preds")
        target.parent.mkdir(parents=True, exist_ok=True)
        text = path.read_text(encoding="utf-8")
        if path.name == "2.conllu" and path.parent.name == "1":  # run 1, fold 2: drop one
            text = text.split("\n\n", 1)[1]
        target.write_text(text, encoding="utf-8")
    template = str(bad / "{system}/{corpus}/{run}/{fold}.conllu")  # absolute
    out = tmp_path / "scores.csv"
    args = ["tagging", "score", str(study), "--predictions", template, "--systems", "fair"]
    assert main([*args, "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert re.search(r"fair/answers/1/2.conllu: sentence \S+ of the gold file \(line 1\) is", err)
    assert not out.exists()


@pytest.mark.parametrize(
    ("extra", "flag"),
    [
        (["--system-col", "tagger"], "--system-col names a column of a score table"),
        (["--dataset-col", "corpus"], "--dataset-col names a column of a score table"),
        (["--run-col", ""], "--run-col names a column of a score table"),
        (["--fold-col", "split"], "--fold-col names a column of a score table"),
        (["--lower-is-better"], "--lower-is-better: a tagger study's metrics are accuracies"),
        (["--lower-is-better", "oov_accuracy"], "--lower-is-better: a tagger study's metrics"),
    ],
)
def test_rank_predictions_refuses_the_score_table_flags(study: Path, capsys, extra, flag) -> None:
    # before: these were silently ignored (the study's table has its own columns and
    # directions), so --lower-is-better ranked accuracies as if higher were better anyway
    args = ["rank", str(study), "--predictions", TEMPLATE, "--systems", "good", "fair"]
    assert main([*args, "--metric", "token_accuracy", "--rope", "0.01", *extra]) == 2
    err = capsys.readouterr().err
    assert flag in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.fixture(scope="module")
def study_without_oov(study: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study, but run 1, fold 2 trains on its test sentences too: no test word is OOV."""
    import shutil

    root = tmp_path_factory.mktemp("no_oov") / "splits"
    shutil.copytree(study, root)
    row = pd.read_csv(root / "manifest.csv").query("run == 1 and fold == 2").iloc[0]
    train = root / row["train"]
    train.write_text(train.read_text("utf-8") + (root / row["test"]).read_text("utf-8"), "utf-8")
    return root


def test_a_fold_without_oov_words_is_named_not_a_nan_error(study_without_oov: Path, capsys):
    # before: "3 scores are missing (NaN) or infinite (index labels 3, 4, 5)", from
    # `tagging score` too, which only writes the table
    args = ["rank", str(study_without_oov), "--predictions", TEMPLATE, "--systems", *ERRORS]
    args += ["--rope", "0.01", "--seed", "1", "--quiet"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert (
        "OOV accuracy is undefined on 1 of 6 folds: corpus 'answers', run 1, fold 2 has no OOV "
        "word (every test word occurs in its training file). Leave that fold out with "
        "--drop-incomplete" in err
    )
    assert "(--metric)" in err and "`" not in err
    # token accuracy alone is defined on every fold: no error, nothing dropped
    assert main([*args, "--metric", "token_accuracy", "--format", "json"]) == 0
    assert "dropped" not in json.loads(capsys.readouterr().out)["settings"]


def test_drop_incomplete_leaves_a_fold_without_oov_out_and_says_so(study_without_oov: Path, capsys):
    args = ["rank", str(study_without_oov), "--predictions", TEMPLATE, "--systems", *ERRORS]
    args += ["--rope", "0.01", "--seed", "1", "--quiet", "--metric", "oov_accuracy"]
    assert main([*args, "--drop-incomplete", "--format", "json"]) == 0
    settings = json.loads(capsys.readouterr().out)["settings"]
    assert settings["dropped"].startswith(
        "3 rows, no OOV word in the test file, OOV accuracy undefined (3): system 'good', "
        "data set 'answers', run 1, fold 2;"
    )


def test_score_writes_a_fold_without_oov_words_with_a_note(study_without_oov, tmp_path, capsys):
    out = tmp_path / "scores.csv"
    args = ["tagging", "score", str(study_without_oov), "--predictions", TEMPLATE]
    assert main([*args, "--systems", *ERRORS, "--output", str(out)]) == 0
    table = pd.read_csv(out)
    empty = table[table["oov_accuracy"].isna()]
    assert len(table) == 18 and len(empty) == 3 and (empty["oov_tokens"] == 0).all()
    assert set(zip(empty["run"], empty["fold"], strict=True)) == {(1, 2)}
    err = capsys.readouterr().err
    assert "note: 1 fold without any OOV word ('answers' run 1 fold 2): oov_accuracy is left" in err


def test_score_study_metrics_and_drop_incomplete(study_without_oov: Path) -> None:
    from isbetter.core.errors import InputError
    from isbetter.tagging import score_study

    systems = list(ERRORS)
    table = score_study(study_without_oov, TEMPLATE, systems=systems, metrics=["token_accuracy"])
    assert table.metrics == ("token_accuracy",) and len(table.data) == 18
    with pytest.raises(InputError, match="run 1, fold 2 has no OOV word"):
        score_study(study_without_oov, TEMPLATE, systems=systems)
    kept = score_study(study_without_oov, TEMPLATE, systems=systems, drop_incomplete=True)
    assert len(kept.data) == 15 and set(kept.dropped["fold"]) == {2}
    with pytest.raises(InputError, match="`metrics`: expected some of token_accuracy"):
        score_study(study_without_oov, TEMPLATE, systems=systems, metrics=["f1"])
