"""Scoring one file pair: hand-counted metrics, tag columns, alignment errors with lines."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np
import pytest

from isbetter.core.errors import InputError
from isbetter.tagging import read_conllu, score, write_tagged
from isbetter.tagging.columns import read_columns, unique_ids
from isbetter.tagging.reader import column_index, read_bytes
from isbetter.tagging.scoring import _Fold

DATA = Path(__file__).parent / "data"


def _line(wid: str, form: str, upos: str = "X", xpos: str = "XX") -> str:
    return f"{wid}\t{form}\t{form.lower()}\t{upos}\t{xpos}\t_\t0\tdep\t_\t_\n"


def _conllu(sentences: list[tuple[str, list[tuple]]]) -> str:
    out = []
    for sid, rows in sentences:
        out.append(f"# sent_id = {sid}\n")
        out += [_line(*r) for r in rows]
        out.append("\n")
    return "".join(out)


# s1: a multiword token; s2: an empty node; 9 words in all
GOLD = [
    (
        "s1",
        [
            ("1", "I", "PRON", "PRP"),
            ("2-3", "don't", "_", "_"),
            ("2", "do", "AUX", "VBP"),
            ("3", "n't", "PART", "RB"),
            ("4", "know", "VERB", "VB"),
        ],
    ),
    (
        "s2",
        [
            ("1", "Dogs", "NOUN", "NNS"),
            ("2", "bark", "VERB", "VBP"),
            ("2.1", "bark", "VERB", "VBP"),
            ("3", "loudly", "ADV", "RB"),
        ],
    ),
    ("s3", [("1", "Cats", "NOUN", "NNS"), ("2", "sleep", "VERB", "VBP")]),
]
# wrong: s2 'bark' (UPOS and XPOS), s3 'Cats' (UPOS only); the multiword token and the
# empty node carry wrong tags, which are not scored
RETAGGED = {
    ("s1", "2-3"): ("X", "XX"),
    ("s2", "2"): ("NOUN", "NN"),
    ("s2", "2.1"): ("ADJ", "JJ"),
    ("s3", "1"): ("PROPN", "NNS"),
}
PRED = [
    (sid, [(r[0], r[1], *RETAGGED.get((sid, r[0]), r[2:])) for r in rows]) for sid, rows in GOLD
]
# vocabulary: do, n't, I, Dogs, sleep, cats; "don't" (a multiword token) and "know"
# (an empty node) are not words
TRAIN = [
    (
        "t1",
        [
            ("1-2", "don't"),
            ("1", "do"),
            ("2", "n't"),
            ("3", "I"),
            ("3.1", "know"),
            ("4", "Dogs"),
            ("5", "sleep"),
            ("6", "cats"),
        ],
    )
]


def _write(path: Path, sentences: list) -> Path:
    path.write_text(_conllu(sentences), encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    return (
        _write(tmp_path / "gold.conllu", GOLD),
        _write(tmp_path / "pred.conllu", PRED),
        _write(tmp_path / "train.conllu", TRAIN),
    )


def test_hand_counted_upos(files) -> None:
    gold, pred, train = files
    s = score(gold, pred, train)
    # 9 words (not the multiword token, not the empty node), 2 wrong; only s1 all right
    assert (s.tokens, s.correct_tokens, s.sentences, s.correct_sentences) == (9, 7, 3, 1)
    # OOV: know (only an empty node in train), bark, loudly, Cats (train has 'cats'):
    # know and loudly right, bark and Cats wrong
    assert (s.oov_tokens, s.correct_oov_tokens) == (4, 2)
    assert s.token_accuracy == 7 / 9 and s.sentence_accuracy == 1 / 3 and s.oov_accuracy == 0.5
    assert s.correct.tolist() == [True] * 4 + [True, False, True] + [False, True]
    assert s.oov.tolist() == [False, False, False, True, False, True, True, True, False]


@pytest.mark.parametrize("column", ["xpos", "XPOS", 5, "5"])
def test_hand_counted_xpos_by_name_or_number(files, column) -> None:
    gold, pred, train = files
    s = score(gold, pred, train, column=column)
    assert (s.correct_tokens, s.correct_sentences, s.correct_oov_tokens) == (8, 2, 3)
    assert s.column == "xpos"


def test_without_train_no_oov_and_gzip_read(files, tmp_path: Path) -> None:
    gold, pred, _ = files
    zipped = tmp_path / "pred.conllu.gz"
    zipped.write_bytes(gzip.compress(pred.read_bytes()))
    s = score(gold, zipped)
    assert s.oov_tokens is None and s.correct_oov_tokens is None and s.oov is None
    assert math.isnan(s.oov_accuracy) and s.correct_tokens == 7
    assert "not computed" in str(s)


def test_reader_skips_multiword_tokens_and_empty_nodes(files) -> None:
    s = read_conllu(files[0])
    assert s.forms == ["I", "do", "n't", "know", "Dogs", "bark", "loudly", "Cats", "sleep"]
    assert s.starts.tolist() == [0, 4, 7, 9] and s.ids == ("s1", "s2", "s3")
    assert s.lines.tolist() == [1, 8, 14]


def _expect(tmp_path: Path, pred: list, message: str) -> None:
    gold = _write(tmp_path / "gold.conllu", GOLD)
    bad = _write(tmp_path / "bad.conllu", pred)
    with pytest.raises(InputError, match=message):
        score(gold, bad)


def test_missing_sentence(tmp_path: Path) -> None:
    _expect(tmp_path, [PRED[0], PRED[2]], r"bad.conllu: sentence s2 of the gold file \(line 8\)")


def test_extra_sentence(tmp_path: Path) -> None:
    extra = [*PRED, ("s4", [("1", "Hi", "INTJ", "UH")])]
    _expect(tmp_path, extra, r"bad.conllu, sentence s4, line 18: not in the gold file")


def test_reordered_sentences(tmp_path: Path) -> None:
    _expect(
        tmp_path,
        [PRED[0], PRED[2], PRED[1]],
        r"bad.conllu, sentence s3, line 8: the gold file has sentence s2 here",
    )


def test_other_tokenisation(tmp_path: Path) -> None:
    split = [PRED[0], ("s2", [*PRED[1][1][:1], ("2", "ba"), ("3", "rk"), ("4", "loudly")]), PRED[2]]
    _expect(tmp_path, split, r"bad.conllu, sentence s2, line 8: 4 words, the gold file has 3")


def test_changed_form(tmp_path: Path) -> None:
    rows = [("1", "Dogs", "NOUN"), ("2", "Bark", "VERB"), ("2.1", "bark"), ("3", "loudly", "ADV")]
    _expect(
        tmp_path,
        [PRED[0], ("s2", rows), PRED[2]],
        r"bad.conllu, sentence s2, line 10: word 'Bark', the gold file has 'bark'",
    )


def test_underscore_tag(tmp_path: Path) -> None:
    rows = [("1", "Cats", "_"), ("2", "sleep", "VERB")]
    _expect(tmp_path, [PRED[0], PRED[1], ("s3", rows)], r"bad.conllu, sentence s3, line 15: upos")


def test_duplicate_sentence_ids(tmp_path: Path) -> None:
    _expect(tmp_path, [PRED[0], PRED[0]], r"sentence s1, line 8: duplicate sentence id")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("EU\tNNP\tB-NP\tB-ORG\n\n", r"line 1: expected CoNLL-U's 10 .*found 4 \(CoNLL-2003"),
        ("1\ta\tb\tc\td\te\tf\tg\th\n\n", "found 9"),
        ("a\tb\tc\td\te\tf\tg\th\ti\tj\n\n", "'a' is not a CoNLL-U id"),
        ("1\ta\t_\tX\t_\t_\t0\t_\t_\t_\n3\tb\t_\tX\t_\t_\t0\t_\t_\t_\n\n", "word id 3, expected 2"),
        ("# just a comment\n\n", "no sentences"),
    ],
)
def test_not_conllu(tmp_path: Path, files, text: str, message: str) -> None:
    bad = tmp_path / "bad.conllu"
    bad.write_text(text)
    with pytest.raises(InputError, match=message):
        score(files[0], bad)


@pytest.mark.parametrize(
    ("column", "message"),
    [("form", "unknown CoNLL-U tag column 'form'"), (2, "numbered 3-10"), (11, "numbered 3-10")],
)
def test_bad_column(files, column, message: str) -> None:
    with pytest.raises(InputError, match=message):
        score(files[0], files[1], column=column)


def test_missing_file(files, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="predicted '.*nope.conllu': no such file"):
        score(files[0], tmp_path / "nope.conllu")


def _perturbed(gold: Path, out: Path, seed: int, column: int = 3) -> Path:
    rng = np.random.default_rng(seed)
    lines = read_bytes(gold, "gold").decode("utf-8").split("\n")
    for i, line in enumerate(lines):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit() and rng.random() < 0.1:
            cols[column] = cols[column] + "x" if rng.random() < 0.5 else "NOUN"
            lines[i] = "\t".join(cols)
    out.write_text("\n".join(lines), encoding="utf-8")
    return out


@pytest.mark.parametrize("column", ["upos", "xpos", 9])
def test_the_vectorised_scorer_agrees_with_the_line_by_line_one(tmp_path: Path, column) -> None:
    gold = DATA / "answers.conllu.gz"
    train = DATA / "reviews.conllu.gz"
    pred = _perturbed(gold, tmp_path / "pred.conllu", seed=1, column=column_index(column))
    scorer = _Fold(gold, train, column)
    assert scorer.fast_ok and read_columns(read_bytes(pred, "p"), column_index(column)) is not None
    fast, checked = scorer.score(pred), scorer.checked(pred)
    assert fast == checked and 0 < fast.correct_tokens < fast.tokens
    assert np.array_equal(fast.correct, checked.correct) and np.array_equal(fast.oov, checked.oov)
    assert 0 < fast.oov_tokens < fast.tokens


def test_the_vectorised_reader_finds_the_reference_words() -> None:
    gold = DATA / "reviews.conllu.gz"
    c = read_columns(read_bytes(gold, "gold"), 9)  # the last column: MISC
    s = read_conllu(gold, column=10)
    assert c is not None and np.array_equal(c.starts, s.starts)

    def text(spans):
        return [c.data[a : a + n].tobytes().decode() for a, n in zip(*spans, strict=True)]

    assert text(c.form) == s.forms and text(c.tag) == s.tags
    assert text(c.id_lines) == [f"# sent_id = {i}" for i in s.ids]


def test_long_forms_are_compared_exactly(tmp_path: Path) -> None:
    long_a, long_b = "x" * 40 + "a", "x" * 40 + "b"  # the same first 32 bytes
    gold = _write(tmp_path / "g.conllu", [("s1", [("1", long_a, "X"), ("2", long_b, "X")])])
    train = _write(tmp_path / "t.conllu", [("t1", [("1", long_a, "X")])])
    s = score(gold, gold, train)
    assert s.oov.tolist() == [False, True] and s.oov_tokens == 1


def test_the_vectorised_reader_reads_the_whole_treebank() -> None:
    # EWT has multiword tokens with three-digit ids (110-111) and empty nodes: none of
    # them may send a valid file to the line-by-line reader
    for genre in ("answers", "email"):
        path = Path("/work/shared/data/ud_english_ewt") / f"en_ewt-{genre}.conllu.gz"
        if not path.exists():
            pytest.skip("the shared EWT corpus is not on this machine")
        c = read_columns(read_bytes(path, "corpus"), 3)
        s = read_conllu(path)
        assert c is not None and np.array_equal(c.starts, s.starts) and unique_ids(c)


def test_write_tagged_round_trips_and_checks_counts(files, tmp_path: Path) -> None:
    gold = files[0]
    tags = [["PRON", "AUX", "PART", "VERB"], ["NOUN", "NOUN", "ADV"], ["PROPN", "VERB"]]
    pred = write_tagged(gold, tags, tmp_path / "out" / "pred.conllu")
    s = score(gold, pred)
    assert (s.correct_tokens, s.correct_sentences) == (7, 1)  # bark and Cats wrong, as PRED
    flat = write_tagged(gold, [t for sent in tags for t in sent], tmp_path / "flat.conllu")
    assert flat.read_text() == pred.read_text()
    assert read_conllu(pred, column="xpos").tags == read_conllu(gold, column="xpos").tags
    with pytest.raises(InputError, match="sentence 2 has 2 tags for its 3 words"):
        write_tagged(gold, [tags[0], tags[1][:2], tags[2]], tmp_path / "x.conllu")
    with pytest.raises(InputError, match="8 tags for the file's 9 words"):
        write_tagged(gold, ["X"] * 8, tmp_path / "x.conllu")
    with pytest.raises(InputError, match="'_' is not a tag"):
        write_tagged(gold, ["_"] * 9, tmp_path / "x.conllu")


def test_a_hash_collision_is_caught_and_scored_exactly(files, monkeypatch) -> None:
    from isbetter.tagging import columns

    gold, pred, train = files
    exact = score(gold, pred, train)
    # every form one hash: the byte comparison refuses the lookup, the reader scores
    monkeypatch.setattr(columns, "_hashes", lambda c: np.zeros(len(c.form[0]), np.uint64))
    scorer = _Fold(gold, train, "upos")
    assert not scorer.fast_ok
    assert scorer.score(pred) == exact and exact.oov_tokens == 4
