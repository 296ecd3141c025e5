r"""Regenerate the EWT tagger study from the corpus: splits, training, tagging, scoring.

Four taggers (``taggers.py``: most frequent tag, NLTK's TnT, NLTK's averaged perceptron, a
CRF) are trained and run on every fold of repeated k-fold cross-validation by document
over the five genres of the UD English Web Treebank (five data sets), and every fold is
scored on token, sentence and OOV accuracy with ``isbetter.tagging.score_study``::

    nice -n 10 python studies/ewt_taggers/run_study.py \
        --corpus-dir /path/to/ud_english_ewt --out /tmp/ewt_study \
        --runs 3 --folds 10 --seed 1 --jobs 2 --scores data/ud_ewt_taggers/scores.csv

What it writes under ``--out`` (nothing in the working directory):

* ``splits/`` — ``isbetter.tagging.split``'s folds and its ``manifest.csv``;
* ``preds/{tagger}/{genre}/{run}/{fold}.conllu`` — each tagger's output: the test file
  with the predicted UPOS, every other column kept (written atomically);
* ``timings.csv`` — train and tag seconds of every (tagger, genre, run, fold) done;
* ``scores.csv`` — the per-fold score table, and ``mcnemar.csv``, the per-fold mid-p
  McNemar tests of every pair (both also written beside ``--scores`` if given).

Resumable: a prediction file that exists is complete (atomic write) and holds as many
sentences as the fold's test file, so a rerun with the same arguments trains only what is
missing, and the splits are reused when their manifest matches the arguments. A larger
``--runs`` on the same ``--out`` adds runs: the earlier ones are drawn again, checked byte
for byte, and their predictions kept (``add_runs``). Needs the ``study`` extra
(``pip install -e ".[study]"``: nltk, python-crfsuite).
"""

from __future__ import annotations

import argparse
import csv
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import pandas as pd
from tqdm import tqdm

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import taggers  # noqa: E402  (the study's own module, beside this script)

TEMPLATE = "preds/{system}/{corpus}/{run}/{fold}.conllu"


def find_corpora(corpus_dir: Path) -> dict[str, Path]:
    """Return ``{genre: file}`` of the ``en_ewt-{genre}.conllu(.gz)`` files in `corpus_dir`."""
    found = sorted(corpus_dir.glob("*.conllu.gz")) + sorted(corpus_dir.glob("*.conllu"))
    if not found:
        raise SystemExit(f"run_study: no *.conllu or *.conllu.gz file in {corpus_dir}")
    return {
        p.name.removesuffix(".gz").removesuffix(".conllu").removeprefix("en_ewt-"): p for p in found
    }


def make_splits(corpora: dict[str, Path], args: argparse.Namespace) -> pd.DataFrame:
    """Return the manifest of the splits, drawing them unless a matching one exists."""
    from isbetter.tagging import split

    splits = args.out / "splits"
    manifest_path = splits / "manifest.csv"
    if manifest_path.exists():
        manifest = pd.read_csv(manifest_path)
        same = (
            set(manifest["corpus"]) == set(corpora)
            and manifest["fold"].nunique() == args.folds
            and set(manifest["seed"]) == {args.seed}
        )
        drawn = manifest["run"].nunique()
        if not same or drawn > args.runs:
            raise SystemExit(
                f"run_study: {manifest_path} was drawn with other --runs/--folds/--seed or "
                "corpora; use another --out or delete it"
            )
        if drawn == args.runs:
            return manifest
        return add_runs(corpora, manifest, args)
    split(corpora, args.runs, args.folds, dev=args.dev, by="document", seed=args.seed, out=splits)
    return pd.read_csv(manifest_path)


def add_runs(corpora: dict[str, Path], old: pd.DataFrame, args: argparse.Namespace) -> pd.DataFrame:
    """Extend the splits of ``--out`` to ``--runs`` runs, keeping the runs already drawn.

    Each (seed, genre, run) has its own generator, so drawing all ``--runs`` runs anew
    gives the earlier runs again, file for file: they are drawn into a new folder, every
    earlier file is checked byte for byte (an error if one differs, and nothing is
    replaced), and only then does the new folder take the place of the old one, so the
    earlier runs' predictions are reused.
    """
    from isbetter.tagging import split

    splits = args.out / "splits"
    fresh = args.out / "splits.new"
    if fresh.exists():
        shutil.rmtree(fresh)
    split(corpora, args.runs, args.folds, dev=args.dev, by="document", seed=args.seed, out=fresh)
    new = pd.read_csv(fresh / "manifest.csv")
    for row in old.itertuples(index=False):
        for part in ("train", "dev", "test"):
            rel = getattr(row, part)
            if (
                isinstance(rel, str)
                and rel
                and (splits / rel).read_bytes() != (fresh / rel).read_bytes()
            ):
                raise SystemExit(
                    f"run_study: redrawing the splits changed {splits / rel} (another isbetter "
                    f"version?); use another --out; the new draw is in {fresh}"
                )
    print(f"splits: runs 1-{old['run'].max()} redrawn identically; adding the rest", flush=True)
    retired = args.out / "splits.old"
    if retired.exists():
        shutil.rmtree(retired)
    splits.rename(retired)
    fresh.rename(splits)
    shutil.rmtree(retired)
    return new


def _complete(path: Path, sentences: int) -> bool:
    if not path.exists():
        return False
    with open(path, encoding="utf-8") as handle:
        return sum(1 for line in handle if line.startswith("# sent_id")) == sentences


def _task(name: str, train: str, test: str, out: str, seed: int) -> dict:
    return taggers.run_tagger(name, Path(train), Path(test), Path(out), seed)


def run_taggers(manifest: pd.DataFrame, args: argparse.Namespace) -> None:
    """Train and run every tagger on every fold whose prediction is missing."""
    splits = args.out / "splits"
    todo = []
    for row in manifest.itertuples(index=False):
        for name in args.taggers:
            out = args.out / TEMPLATE.format(
                system=name, corpus=row.corpus, run=row.run, fold=row.fold
            )
            if not _complete(out, int(row.test_sentences)):
                # one seed per fold: the study's seed and the fold's place, never the clock
                seed = args.seed * 1_000_003 + int(row.run) * 1_009 + int(row.fold)
                todo.append((name, row, out, seed))
    # run by run (an interrupted study has whole runs), the slow taggers first in each
    cost = {"perceptron": 0, "crf": 1, "tnt": 2, "mft": 3}
    todo.sort(key=lambda t: (t[1].run, cost.get(t[0], 0), t[1].corpus, t[1].fold))
    total = len(manifest) * len(args.taggers)
    print(f"{total - len(todo)} of {total} predictions done; {len(todo)} to make", flush=True)
    if not todo:
        return
    timings = args.out / "timings.csv"
    new_file = not timings.exists()
    with (
        open(timings, "a", newline="", encoding="utf-8") as log,
        ProcessPoolExecutor(max_workers=args.jobs) as pool,
    ):
        writer = csv.writer(log)
        if new_file:
            writer.writerow(["system", "corpus", "run", "fold", "train_s", "tag_s"])
        futures = {
            pool.submit(
                _task, name, str(splits / row.train), str(splits / row.test), str(out), seed
            ): (name, row)
            for name, row, out, seed in todo
        }
        for future in tqdm(as_completed(futures), total=len(futures), unit="fold", smoothing=0):
            name, row = futures[future]
            spent = future.result()
            writer.writerow(
                [
                    name,
                    row.corpus,
                    row.run,
                    row.fold,
                    f"{spent['train_s']:.3f}",
                    f"{spent['tag_s']:.3f}",
                ]
            )
            log.flush()


def score(args: argparse.Namespace) -> pd.DataFrame:
    """Score every prediction against its gold file (``isbetter.tagging.read_study``).

    Writes ``scores.csv`` (one row per corpus, tagger, run and fold: the three metrics
    and their counts) and ``mcnemar.csv`` (Gorman & Bedrick's mid-p McNemar test of
    every pair of taggers on every fold's tokens) to ``--out`` and beside ``--scores``.
    """
    from isbetter.tagging import read_study

    study = read_study(
        args.out / "splits" / "manifest.csv", str(args.out / TEMPLATE), systems=args.taggers
    )
    frame = study.frame
    mcnemar = study.baselines.mcnemar
    targets = [args.out / "scores.csv"] + ([args.scores] if args.scores is not None else [])
    for target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(target, index=False)
        mcnemar.to_csv(target.with_name("mcnemar.csv"), index=False)
    return frame


def main(argv: list[str] | None = None) -> int:
    """Run the whole study (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--dev", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--taggers", default=",".join(taggers.TAGGERS), help="comma-separated subset"
    )
    parser.add_argument("--scores", type=Path, default=None, help="also write the table here")
    args = parser.parse_args(argv)
    args.taggers = [t for t in args.taggers.split(",") if t]
    args.out = args.out.resolve()  # the template is read relative to the manifest otherwise
    unknown = set(args.taggers) - set(taggers.TAGGERS)
    if unknown:
        parser.error(f"--taggers: unknown {sorted(unknown)}; choose from {taggers.TAGGERS}")
    start = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    corpora = find_corpora(args.corpus_dir)
    manifest = make_splits(corpora, args)
    run_taggers(manifest, args)
    frame = score(args)
    print(f"{len(frame)} scores written; {time.perf_counter() - start:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
