"""Splits: determinism, disjointness, coverage, document integrity, the manifest, bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from isbetter import __version__
from isbetter.core.errors import InputError
from isbetter.tagging import read_conllu, read_manifest, split
from isbetter.tagging.manifest import MANIFEST_COLUMNS

DATA = Path(__file__).parent / "data"
CORPORA = [DATA / "answers.conllu.gz", DATA / "reviews.conllu.gz"]


def _ids(path: Path) -> list[str]:
    return list(read_conllu(path, column=None).ids)


@pytest.fixture(scope="module")
def by_document(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("splits") / "doc"
    return split(CORPORA, runs=2, folds=5, by="document", seed=7, out=out)


def test_manifest_columns_paths_and_counts(by_document) -> None:
    table = by_document.table
    assert list(table.columns) == list(MANIFEST_COLUMNS)
    assert len(table) == 2 * 2 * 5
    assert set(table["corpus"]) == {"answers", "reviews"}
    assert (table["seed"] == 7).all() and (table["isbetter_version"] == __version__).all()
    row = table.iloc[0]
    assert row["test"] == "answers/1/1/test.conllu"  # relative to the manifest's folder
    for fold in by_document.folds():
        for part in ("train", "dev", "test"):
            path = getattr(fold, part)
            assert path.is_absolute() and path.is_file()
        r = table[(table.corpus == fold.corpus) & (table.run == fold.run)]
        r = r[r.fold == fold.fold].iloc[0]
        assert len(_ids(fold.test)) == r["test_sentences"]
        assert len(_ids(fold.train)) == r["train_sentences"]
        assert len(_ids(fold.dev)) == r["dev_sentences"]
    again = read_manifest(by_document.path)  # the file, or its folder
    pd.testing.assert_frame_equal(again.table, by_document.table)
    assert read_manifest(by_document.path.parent).root == by_document.root


def test_disjoint_covering_and_tested_once_per_run(by_document) -> None:
    for corpus in CORPORA:
        everything = set(_ids(corpus))
        for run in (1, 2):
            tested: list[str] = []
            for fold in by_document.folds():
                if fold.run != run or fold.corpus != corpus.name.split(".")[0]:
                    continue
                train, dev, test = (set(_ids(p)) for p in (fold.train, fold.dev, fold.test))
                assert not train & dev and not train & test and not dev & test
                assert train | dev | test == everything
                tested += test
            assert sorted(tested) == sorted(everything)  # each sentence tested exactly once


def test_documents_stay_whole(by_document) -> None:
    documents = {}
    for corpus in CORPORA:
        s = read_conllu(corpus, column=None)
        documents.update(zip(s.ids, s.documents, strict=True))
    for fold in by_document.folds():
        parts = [read_conllu(p, column=None).ids for p in (fold.train, fold.dev, fold.test)]
        docs = [{documents[i] for i in ids} for ids in parts]
        assert not docs[0] & docs[1] and not docs[0] & docs[2] and not docs[1] & docs[2]


def test_document_of_a_sentence_from_newdoc_or_the_id_prefix(tmp_path: Path) -> None:
    s = read_conllu(CORPORA[0], column=None)
    assert s.documents[0] == "answers-20070404104007AAY1Chs_ans"
    text = "".join(
        f"# sent_id = doc{d}-{i:04d}\n1\tw\tw\tX\tX\t_\t0\troot\t_\t_\n\n"
        for d in range(3)
        for i in range(2)
    )
    (tmp_path / "c.conllu").write_text(text)
    assert read_conllu(tmp_path / "c.conllu", column=None).documents == (
        "doc0", "doc0", "doc1", "doc1", "doc2", "doc2",
    )  # fmt: skip


def test_deterministic_and_seed_dependent(tmp_path: Path) -> None:
    a = split(CORPORA[:1], runs=2, folds=3, seed=11, out=tmp_path / "a")
    b = split(CORPORA[:1], runs=2, folds=3, seed=11, out=tmp_path / "b")
    c = split(CORPORA[:1], runs=2, folds=3, seed=12, out=tmp_path / "c")
    for rel in a.table["test"]:
        assert (a.root / rel).read_bytes() == (b.root / rel).read_bytes()
    assert any((a.root / r).read_bytes() != (c.root / r).read_bytes() for r in a.table["test"])
    runs = [set(_ids(a.root / r)) for r in a.table["test"]]
    assert runs[0] != runs[3]  # run 2 shuffles differently from run 1


def test_sizes_by_sentence_and_no_dev(tmp_path: Path) -> None:
    m = split(CORPORA[:1], runs=1, folds=10, dev=0, seed=0, out=tmp_path / "s")
    t = m.table
    assert t["test_sentences"].sum() == 153
    assert set(t["test_sentences"]) <= {15, 16}  # 153 sentences in 10 folds: 15 or 16
    assert (t["dev_sentences"] == 0).all() and (t["dev"] == "").all()
    assert (t["train_sentences"] + t["test_sentences"] == 153).all()
    assert all(f.dev is None for f in read_manifest(m.path).folds())
    assert not list(m.root.glob("*/*/*/dev.conllu"))
    d = split(CORPORA[:1], runs=1, folds=10, dev=0.1, seed=0, out=tmp_path / "d")
    assert set(d.table["dev_sentences"]) <= {13, 14}  # a tenth of 137 or 138


def test_names_from_a_mapping(tmp_path: Path) -> None:
    m = split({"qa": CORPORA[0]}, runs=1, folds=2, seed=0, out=tmp_path / "m")
    assert m.corpora == ("qa",) and (m.root / "qa/1/2/test.conllu").is_file()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"folds": 200}, "has 153 sentences, fewer than the 200 folds asked for"),
        ({"folds": 30, "by": "document"}, "has 27 documents, fewer than the 30 folds"),
        ({"dev": 1.0}, "`dev`: expected a share"),
        ({"by": "word"}, "Unknown by .word.. Available: .sentence., .document."),
        ({"seed": -1}, "`seed`: expected a non-negative integer"),
    ],
)
def test_bad_arguments_write_nothing(tmp_path: Path, kwargs: dict, message: str) -> None:
    args = {"runs": 1, "folds": 5, "seed": 0, "out": tmp_path / "x", **kwargs}
    with pytest.raises(InputError, match=message):
        split(CORPORA[:1], **args)
    assert not (tmp_path / "x").exists()


def test_not_conllu_and_a_used_folder(tmp_path: Path) -> None:
    (tmp_path / "ner.conll").write_text("EU\tNNP\tB-NP\tB-ORG\nrejects\tVBZ\tB-VP\tO\n\n")
    with pytest.raises(InputError, match=r"line 1: expected CoNLL-U's 10 .* found 4 \(CoNLL-2003"):
        split([tmp_path / "ner.conll"], runs=1, folds=2, seed=0, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "file").write_text("")
    with pytest.raises(InputError, match="exists and is not an empty folder"):
        split(CORPORA[:1], runs=1, folds=2, seed=0, out=tmp_path / "used")


def test_the_generator_depends_on_corpus_and_run() -> None:
    from isbetter.tagging.splits import _rng

    draws = {(c, r): _rng(3, c, r).permutation(50).tolist() for c in ("a", "b") for r in (1, 2)}
    assert len({tuple(v) for v in draws.values()}) == 4
    assert np.array_equal(_rng(3, "a", 1).permutation(50), draws["a", 1])


def test_a_document_larger_than_a_fold_leaves_no_fold_empty(tmp_path: Path) -> None:
    # found on the EWT weblog genre (run 3 of seed 1: fold 2 had no test sentence): by
    # midpoints alone, a document of more than two folds' share pushes the next fold past
    # an empty one; now every fold tests on at least one document
    sizes = [40, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]  # one document of 40 sentences, ten of 1
    text = "".join(
        f"# sent_id = doc{d}-{i:04d}\n1\tw\tw\tX\tX\t_\t0\troot\t_\t_\n\n"
        for d, n in enumerate(sizes)
        for i in range(n)
    )
    (tmp_path / "c.conllu").write_text(text)
    m = split([tmp_path / "c.conllu"], runs=20, folds=10, seed=1, by="document", out=tmp_path / "s")
    assert (m.table["test_sentences"] > 0).all()
    assert (m.table.groupby("run")["test_sentences"].sum() == sum(sizes)).all()
    assert (m.table["test_sentences"] == 40).sum() == 20  # the big document, once per run


def test_the_cut_keeps_folds_that_were_never_empty() -> None:
    from isbetter.tagging.splits import _cut

    rng = np.random.default_rng(0)
    for _ in range(2000):
        parts = int(rng.integers(2, 12))
        sizes = rng.pareto(0.8, int(rng.integers(parts, 40))).astype(int) + 1
        cum = np.cumsum(sizes)
        plain = np.minimum(((cum - sizes / 2) / cum[-1] * parts).astype(int), parts - 1)
        cut = _cut(sizes, parts)
        assert set(cut) == set(range(parts)) and set(np.diff(cut)) <= {0, 1}
        if len(set(plain)) == parts:  # what the midpoints alone gave, where it was whole
            assert np.array_equal(cut, plain)
