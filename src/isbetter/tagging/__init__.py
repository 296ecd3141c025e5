"""Tagger studies from CoNLL-U files: splits, scores per fold, frequentist baselines.

The path Szymański & Gorman (2020) walk, from a treebank to a ranking of taggers:
:func:`split` draws repeated k-fold train/dev/test splits of each corpus and writes
a manifest; the taggers are trained and run outside isbetter (:func:`write_tagged`
writes their tags into a copy of the test file); :func:`score` scores
one predicted file against its gold file (token, sentence and OOV accuracy), and
:func:`score_study` scores a whole study into the :class:`~isbetter.ScoreTable` that
:func:`isbetter.rank` ranks; :func:`read_study` adds the counts and Gorman &
Bedrick's per-fold baselines (Wilson intervals, mid-p McNemar).
"""

from isbetter.tagging.baselines import fold_baselines, mcnemar_midp, wilson_interval
from isbetter.tagging.manifest import Fold, Manifest, read_manifest
from isbetter.tagging.predictions import write_tagged
from isbetter.tagging.reader import Sentences, read_conllu
from isbetter.tagging.results import METRICS, FoldBaselines, TaggingScores
from isbetter.tagging.scoring import TaggerStudy, read_study, score, score_folds, score_study
from isbetter.tagging.splits import split

__all__ = [
    "METRICS",
    "Fold",
    "FoldBaselines",
    "Manifest",
    "Sentences",
    "TaggerStudy",
    "TaggingScores",
    "fold_baselines",
    "mcnemar_midp",
    "read_conllu",
    "read_manifest",
    "read_study",
    "score",
    "score_folds",
    "score_study",
    "split",
    "wilson_interval",
    "write_tagged",
]
