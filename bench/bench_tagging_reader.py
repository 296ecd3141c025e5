"""How fast isbetter reads CoNLL-U and scores a tagger study, beside the ``conllu`` package.

Two parts:

1. **Readers**, side by side on the whole UD English Web Treebank (254 818 words, the
   five genre files of ``../shared/data/ud_english_ewt/`` concatenated): words a second
   of isbetter's vectorised reader (``tagging.columns.read_columns``, what scoring
   uses), of its line-by-line reader (``tagging.read_conllu``, the reference that names
   the line of an error), and of the ``conllu`` package (``conllu.parse_incr``, words
   only). Best of ``--repeats``.
2. **A study the size of Szymański & Gorman's**: ``--systems`` taggers x ``--corpora``
   corpora x ``--folds`` folds (default 6 x 2 x 200), each test file about
   ``--test-words`` words (default 25 000) and each training file about eight times
   that; predictions simulated by perturbing the gold UPOS of 2-10 % of the words.
   The files are cut from EWT once; the manifest's 400 folds point at them through
   symbolic links, so the disk holds one fold's worth per corpus and system (the
   page cache holds them, as it would hold a real study's 4 GB on most machines).
   Reported: wall and CPU time of ``isbetter.tagging.read_study`` (scores, counts and
   the per-fold McNemar tests; it runs on one core, so its CPU time is its wall time
   on an idle machine), words a second, peak memory (max RSS).

The issue's target: 60 M predicted words in under 2 minutes on this 2-core machine,
under 2 GB. Run it alone, under nice::

    nice -n 10 python bench/bench_tagging_reader.py            # the full study
    nice -n 10 python bench/bench_tagging_reader.py --folds 20 # a tenth of it

Needs ``pip install isbetter[bench]`` (the ``conllu`` package).
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from isbetter.tagging import read_conllu, read_study
from isbetter.tagging.columns import read_columns

#: the shared corpus beside the repository (../shared/data/ud_english_ewt), from a checkout
#: or from a worktree one folder deeper
EWT = next(
    (
        up / "shared" / "data" / "ud_english_ewt"
        for up in Path(__file__).resolve().parents[2:4]
        if (up / "shared" / "data" / "ud_english_ewt").is_dir()
    ),
    Path("../shared/data/ud_english_ewt"),
)


def _ewt(folder: Path) -> str:
    files = sorted(folder.glob("*.conllu.gz"))
    if not files:
        raise SystemExit(f"no EWT files in {folder}; pass --ewt")
    return "".join(gzip.decompress(f.read_bytes()).decode("utf-8") for f in files)


def _best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench_readers(text: str, repeats: int, tmp: Path) -> None:
    """Part 1: words a second of the three readers on the same file."""
    import conllu

    path = tmp / "ewt.conllu"
    path.write_text(text, encoding="utf-8")
    words = read_conllu(path).n_words

    def ours_fast() -> None:
        if read_columns(path.read_bytes(), 3) is None:
            raise SystemExit("the vectorised reader refused EWT")

    def package() -> None:
        n = 0
        for sentence in conllu.parse_incr(io.StringIO(text)):
            n += sum(1 for token in sentence if isinstance(token["id"], int))
        if n != words:
            raise SystemExit(f"conllu counted {n} words, we {words}")

    print(f"readers on EWT ({words} words, {len(text.encode()) / 1e6:.1f} MB), best of {repeats}:")
    for name, fn in (
        ("isbetter, vectorised (scoring)", ours_fast),
        ("isbetter, line by line (reference)", lambda: read_conllu(path)),
        ("conllu package (parse_incr)", package),
    ):
        seconds = _best(fn, repeats)
        print(f"  {name:36s} {words / seconds / 1e6:7.3f} M words/s  ({seconds:.3f} s)")


def _cut(text: str, n_words: int, offset: int) -> str:
    """About `n_words` words of whole sentences, starting at sentence `offset` (cyclic)."""
    blocks = [b for b in text.split("\n\n") if b.strip()]
    out, count, i = [], 0, offset
    while count < n_words:
        block = blocks[i % len(blocks)]
        out.append(block.replace("# sent_id = ", f"# sent_id = {i // len(blocks)}-"))
        count += sum(1 for line in block.split("\n") if line.split("\t", 1)[0].isdigit())
        i += 1
    return "\n\n".join(out) + "\n\n"


def _perturb(text: str, share: float, rng: np.random.Generator) -> str:
    lines = text.split("\n")
    for i, line in enumerate(lines):
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit() and rng.random() < share:
            cols[3] = "X" if cols[3] != "X" else "NOUN"
            lines[i] = "\t".join(cols)
    return "\n".join(lines)


def build_study(text: str, args: argparse.Namespace, root: Path) -> list[str]:
    """Write one fold per corpus and system, and link the study's folds to them."""
    rng = np.random.default_rng(0)
    systems = [f"tagger{i + 1}" for i in range(args.systems)]
    rows = []
    n_blocks = text.count("\n\n")
    for c in range(args.corpora):
        corpus = f"corpus{c + 1}"
        base = root / "files" / corpus
        base.mkdir(parents=True)
        test = _cut(text, args.test_words, offset=c * n_blocks // args.corpora)
        train = _cut(text, 8 * args.test_words, offset=c * n_blocks // args.corpora + 2000)
        (base / "test.conllu").write_text(test, encoding="utf-8")
        (base / "train.conllu").write_text(train, encoding="utf-8")
        for i, s in enumerate(systems):
            share = 0.02 + 0.08 * i / max(len(systems) - 1, 1)
            (base / f"{s}.conllu").write_text(_perturb(test, share, rng), encoding="utf-8")
        for run in range(1, args.folds // 10 + 1):
            for fold in range(1, 11):
                folder = root / corpus / str(run) / str(fold)
                folder.mkdir(parents=True)
                for part in ("train", "test"):
                    os.symlink(base / f"{part}.conllu", folder / f"{part}.conllu")
                for s in systems:
                    pred = root / "preds" / s / corpus / str(run)
                    pred.mkdir(parents=True, exist_ok=True)
                    os.symlink(base / f"{s}.conllu", pred / f"{fold}.conllu")
                rows.append(
                    {"corpus": corpus, "run": run, "fold": fold,
                     "train": f"{corpus}/{run}/{fold}/train.conllu", "dev": "",
                     "test": f"{corpus}/{run}/{fold}/test.conllu", "train_sentences": 0,
                     "dev_sentences": 0, "test_sentences": 0, "seed": 0,
                     "isbetter_version": "bench"}
                )  # fmt: skip
    pd.DataFrame(rows).to_csv(root / "manifest.csv", index=False)
    return systems


def bench_study(text: str, args: argparse.Namespace, tmp: Path) -> None:
    """Part 2: score a whole simulated study; time, words a second, peak memory."""
    root = tmp / "study"
    systems = build_study(text, args, root)
    template = "preds/{system}/{corpus}/{run}/{fold}.conllu"
    t, cpu = time.perf_counter(), time.process_time()
    study = read_study(root / "manifest.csv", template, systems=systems)
    seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
    words = int(study.frame["tokens"].sum())
    train_words = read_conllu(root / "files" / "corpus1" / "train.conllu", column=None).n_words
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    folds = args.corpora * (args.folds // 10) * 10
    print(
        f"study: {len(systems)} systems x {args.corpora} corpora x {folds // args.corpora} "
        f"folds = {len(study.frame)} predicted files, {words / 1e6:.1f} M predicted words "
        f"(+ {folds * train_words / 1e6:.1f} M training words read for the OOV vocabularies)"
    )
    print(
        f"  read_study: {seconds:.1f} s wall, {cpu:.1f} s CPU (one core: the wall time on an "
        f"idle machine), {words / seconds / 1e6:.2f} M predicted words/s wall, "
        f"{words / cpu / 1e6:.2f} M per CPU second; peak memory (max RSS) {rss:.0f} MB; load "
        f"average {os.getloadavg()[0]:.1f}"
    )


def main() -> None:
    """Parse the arguments and run both parts."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ewt", type=Path, default=EWT, help="folder of the EWT .conllu.gz files")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--systems", type=int, default=6)
    p.add_argument("--corpora", type=int, default=2)
    p.add_argument("--folds", type=int, default=200, help="per corpus (runs x 10)")
    p.add_argument("--test-words", type=int, default=25_000)
    p.add_argument("--skip-readers", action="store_true")
    args = p.parse_args()
    text = _ewt(args.ewt)
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_readers:
            bench_readers(text, args.repeats, Path(tmp))
        bench_study(text, args, Path(tmp))


if __name__ == "__main__":
    main()
