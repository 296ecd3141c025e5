"""Four part-of-speech taggers trained from CoNLL-U, for the EWT tagger study (issue 30).

Each tagger is trained on the words of a fold's ``train.conllu`` (forms and UPOS) and tags
the words of its ``test.conllu``; :func:`tag_file` writes the test file back with the
predicted UPOS in column 4 and every other line and column unchanged (comments,
multiword-token lines ``1-2`` and empty nodes ``8.1`` included), so the prediction keeps
the gold tokenisation and ``isbetter.tagging.score`` aligns it word by word.

=========== ===============================================================================
name        tagger
=========== ===============================================================================
mft         most frequent tag of the word form in training (falling back to the lower-cased
            form); an unknown word gets the most frequent tag of the training words overall
tnt         NLTK's TnT (Brants 2000): second-order HMM, beam search; unknown words tagged by
            a suffix tagger trained on the same fold (last 3, then 2, then 1 letters, then
            the most frequent tag), as Brants's TnT guesses them from suffixes
perceptron  NLTK's averaged perceptron (``PerceptronTagger(load=False)``, its own feature set)
crf         a linear-chain CRF (python-crfsuite, L-BFGS with L1 + L2 penalties) with the usual
            word features: the form lower-cased, its suffixes and prefixes up to 3 letters,
            shape flags, and the neighbouring words
=========== ===============================================================================

Nothing is downloaded: every model is trained here from the fold's training file. Only
the first ``nltk``/``pycrfsuite`` import happens in a worker, so the study script's
process pool pays it once per worker.
"""

from __future__ import annotations

import gzip
import os
import random
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

#: a sentence: its lines as read (no trailing newline), and for each word the index of
#: its line, its form and its UPOS
Sentence = tuple[list[str], list[tuple[int, str, str]]]

#: the taggers of the study, in the order of the paper's chain (weakest first)
TAGGERS = ("mft", "tnt", "perceptron", "crf")

# settings chosen from the timings (studies/ewt_taggers/README.md); one place
TNT_BEAM = 1000  # NLTK's default; with 17 UPOS tags N = 10, 50, 1000 cost the same
PERCEPTRON_ITERATIONS = 1  # NLTK's default is 5: the study's budget (data/ud_ewt_taggers)
CRF_ITERATIONS = 20
CRF_C1, CRF_C2 = 0.05, 0.01


def read_conllu(path: str | Path) -> list[Sentence]:
    """Return the sentences of a CoNLL-U file (``.gz`` read transparently)."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    sentences: list[Sentence] = []
    lines: list[str] = []
    words: list[tuple[int, str, str]] = []
    with opener(path, "rt", encoding="utf-8") as handle:
        for raw in handle:
            line = raw.rstrip("\n")
            if not line.strip():
                if lines:
                    sentences.append((lines, words))
                lines, words = [], []
                continue
            if not line.startswith("#"):
                cols = line.split("\t")
                if cols[0].isdigit():  # a word: not a multiword token (1-2), not an empty node
                    words.append((len(lines), cols[1], cols[3]))
            lines.append(line)
    if lines:
        sentences.append((lines, words))
    return sentences


def tagged(sentences: Sequence[Sentence]) -> list[list[tuple[str, str]]]:
    """Return the (form, UPOS) pairs of each sentence."""
    return [[(form, tag) for _, form, tag in words] for _, words in sentences]


def write_predictions(sentences: Sequence[Sentence], tags: Sequence[Sequence[str]], out: Path):
    """Write `sentences` with their UPOS replaced by `tags`, atomically (temp file + rename)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for (lines, words), sentence_tags in zip(sentences, tags, strict=True):
                if len(sentence_tags) != len(words):
                    raise ValueError(f"{len(sentence_tags)} tags for {len(words)} words")
                lines = list(lines)
                for (index, _, _), tag in zip(words, sentence_tags, strict=True):
                    cols = lines[index].split("\t")
                    cols[3] = tag
                    lines[index] = "\t".join(cols)
                handle.write("\n".join(lines) + "\n\n")
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------- the taggers

Tagger = Callable[[list[list[str]]], list[list[str]]]


def train_mft(train: list[list[tuple[str, str]]], seed: int) -> Tagger:
    """Train the most frequent tag per form (then lower-cased); unknown: the commonest tag."""
    by_form: dict[str, Counter[str]] = defaultdict(Counter)
    by_lower: dict[str, Counter[str]] = defaultdict(Counter)
    overall: Counter[str] = Counter()
    for sentence in train:
        for form, tag in sentence:
            by_form[form][tag] += 1
            by_lower[form.lower()][tag] += 1
            overall[tag] += 1
    # ties broken by tag name, so the result does not depend on the order of the data
    best = {f: min(c, key=lambda t: (-c[t], t)) for f, c in by_form.items()}
    best_lower = {f: min(c, key=lambda t: (-c[t], t)) for f, c in by_lower.items()}
    default = min(overall, key=lambda t: (-overall[t], t))

    def tag(sentences: list[list[str]]) -> list[list[str]]:
        return [
            [best.get(w) or best_lower.get(w.lower()) or default for w in words]
            for words in sentences
        ]

    return tag


def train_tnt(train: list[list[tuple[str, str]]], seed: int) -> Tagger:
    """Train NLTK's TnT with a suffix tagger for unknown words (beam :data:`TNT_BEAM`)."""
    from nltk.tag import AffixTagger, DefaultTagger
    from nltk.tag.tnt import TnT

    overall = Counter(t for s in train for _, t in s)
    unk = DefaultTagger(min(overall, key=lambda t: (-overall[t], t)))
    for length in (1, 2, 3):  # the longest suffix is tried first
        unk = AffixTagger(train, affix_length=-length, min_stem_length=1, backoff=unk)
    model = TnT(unk=unk, Trained=True, N=TNT_BEAM, C=True)
    model.train(train)

    def tag(sentences: list[list[str]]) -> list[list[str]]:
        out = []
        for words in sentences:
            tags = [t for _, t in model.tag(list(words))]
            # NLTK's TnT writes "Unk" when no handler knows a word; ours always answers
            out.append(tags)
        return out

    return tag


def train_perceptron(train: list[list[tuple[str, str]]], seed: int) -> Tagger:
    """Train NLTK's averaged perceptron here (``load=False``), seeded shuffles."""
    from nltk.tag.perceptron import PerceptronTagger

    model = PerceptronTagger(load=False)
    # NLTK shuffles the sentences with the random module's global generator: seed it here,
    # in the worker that trains this fold only
    random.seed(seed)
    model.train([list(s) for s in train], nr_iter=PERCEPTRON_ITERATIONS)

    def tag(sentences: list[list[str]]) -> list[list[str]]:
        return [[t for _, t in model.tag(list(words))] if words else [] for words in sentences]

    return tag


def _word_features(words: Sequence[str], i: int) -> list[str]:
    w = words[i]
    low = w.lower()
    feats = [
        "bias",
        "w=" + low,
        "s1=" + low[-1:],
        "s2=" + low[-2:],
        "s3=" + low[-3:],
        "p1=" + low[:1],
        "p2=" + low[:2],
        "p3=" + low[:3],
    ]
    if w.isupper():
        feats.append("upper")
    if w.istitle():
        feats.append("title")
    if any(c.isdigit() for c in w):
        feats.append("digit")
    if "-" in w:
        feats.append("hyphen")
    if not any(c.isalnum() for c in w):
        feats.append("punct")
    if i == 0:
        feats.append("BOS")
    else:
        feats += ["-1w=" + words[i - 1].lower(), "-1s3=" + words[i - 1].lower()[-3:]]
        if i > 1:
            feats.append("-2w=" + words[i - 2].lower())
    if i == len(words) - 1:
        feats.append("EOS")
    else:
        feats += ["+1w=" + words[i + 1].lower(), "+1s3=" + words[i + 1].lower()[-3:]]
        if i < len(words) - 2:
            feats.append("+2w=" + words[i + 2].lower())
    return feats


def _sentence_features(words: Sequence[str]) -> list[list[str]]:
    return [_word_features(words, i) for i in range(len(words))]


def train_crf(train: list[list[tuple[str, str]]], seed: int) -> Tagger:
    """Train a linear-chain CRF (python-crfsuite, L-BFGS, :data:`CRF_ITERATIONS` iterations)."""
    import pycrfsuite

    trainer = pycrfsuite.Trainer(verbose=False)
    for sentence in train:
        if sentence:
            words = [w for w, _ in sentence]
            trainer.append(_sentence_features(words), [t for _, t in sentence])
    trainer.set_params(
        {
            "c1": CRF_C1,
            "c2": CRF_C2,
            "max_iterations": CRF_ITERATIONS,
            "feature.possible_transitions": True,
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        model_path = str(Path(tmp) / "model.crfsuite")
        trainer.train(model_path)
        model = Path(model_path).read_bytes()
    tagger = pycrfsuite.Tagger()
    tagger.open_inmemory(model)

    def tag(sentences: list[list[str]], _model: bytes = model) -> list[list[str]]:
        # crfsuite reads the model in place: its bytes must live as long as the tagger (the
        # default argument keeps them; without it a freed buffer crashed a worker)
        return [list(tagger.tag(_sentence_features(words))) if words else [] for words in sentences]

    return tag


TRAINERS: dict[str, Callable[[list[list[tuple[str, str]]], int], Tagger]] = {
    "mft": train_mft,
    "tnt": train_tnt,
    "perceptron": train_perceptron,
    "crf": train_crf,
}


def run_tagger(name: str, train_file: Path, test_file: Path, out: Path, seed: int) -> dict:
    """Train tagger `name` on `train_file`, tag `test_file`, write `out`; return timings."""
    import time

    start = time.perf_counter()
    train = [s for s in tagged(read_conllu(train_file)) if s]
    tagger = TRAINERS[name](train, seed)
    trained = time.perf_counter()
    test = read_conllu(test_file)
    tags = tagger([[form for _, form, _ in words] for _, words in test])
    write_predictions(test, tags, out)
    done = time.perf_counter()
    return {"train_s": trained - start, "tag_s": done - trained}
