"""Cross-validate scikit-learn estimators into the score table that isbetter compares.

:func:`cross_val_scores` runs repeated k-fold cross-validation of several
estimators on several data sets with scikit-learn's own splitters
(:class:`~sklearn.model_selection.RepeatedStratifiedKFold` for classification
targets, :class:`~sklearn.model_selection.RepeatedKFold` otherwise), scorers and
:func:`~sklearn.model_selection.cross_validate` (folds fitted in parallel through
joblib), and returns the per-fold scores as a :class:`~isbetter.ScoreTable` —
the input of :func:`isbetter.compare` and :func:`isbetter.rank`.

The comparison is paired: on a data set every estimator is fitted and scored on
the *same* folds (the splits are drawn once per data set and handed to every
estimator), so the per-fold differences the models take are meaningful.

Needs the optional extra: ``pip install isbetter[sklearn]``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.validate import check_positive_int, counted, plural
from isbetter.cv.scores import ScoreTable, read_scores
from isbetter.inference.seeds import RNGLike, resolve_seed, sampler_seed

__all__ = ["cross_val_scores"]

#: target types (sklearn.utils.multiclass.type_of_target) that stratified splitting handles
_CLASSIFICATION_TARGETS = ("binary", "multiclass")


def _sklearn() -> Any:
    try:
        import sklearn
        import sklearn.model_selection  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "isbetter.sklearn needs scikit-learn: pip install 'isbetter[sklearn]'"
        ) from exc
    return sklearn


def _named(items: Any, argument: str, what: str) -> dict[str, Any]:
    """Return a name -> item dict from a mapping or a sequence of (name, item) pairs."""
    if isinstance(items, Mapping):
        pairs = list(items.items())
    elif isinstance(items, Sequence) and not isinstance(items, str):
        pairs = list(items)
        if not all(isinstance(p, tuple) and len(p) == 2 for p in pairs):
            raise InputTypeError(
                f"`{argument}` must be a mapping name -> {what} or a list of (name, {what}) pairs."
            )
    else:
        raise InputTypeError(
            f"`{argument}` must be a mapping name -> {what}, got {type(items).__name__}."
        )
    names = [str(name) for name, _ in pairs]
    if len(set(names)) != len(names):
        raise InputError(f"`{argument}` has duplicated names: {', '.join(map(repr, names))}.")
    return dict(zip(names, (item for _, item in pairs), strict=True))


def _xy(name: str, value: Any) -> tuple[Any, np.ndarray]:
    """Return (X, y) of a data set given as a pair or a scikit-learn Bunch."""
    if hasattr(value, "data") and hasattr(value, "target"):
        X, y = value.data, value.target
    elif isinstance(value, tuple | list) and len(value) == 2:
        X, y = value
    else:
        raise InputTypeError(
            f"`datasets`[{name!r}] must be a pair (X, y) or a scikit-learn Bunch with "
            f"`data` and `target`, got {type(value).__name__}."
        )
    y = np.asarray(y)
    if y.ndim != 1 or len(X) != y.shape[0]:
        raise InputError(
            f"`datasets`[{name!r}]: X has {len(X)} rows and y has shape {y.shape}; give one "
            "target value per row of X."
        )
    return X, y


def _scoring(scoring: Any, estimators: dict[str, Any]) -> dict[str, Any]:
    """Return the scorers as a name -> scorer dict; the names become the metric columns."""
    from sklearn.base import is_classifier, is_regressor

    if scoring is None:
        if all(is_classifier(e) for e in estimators.values()):
            return {"accuracy": "accuracy"}
        if all(is_regressor(e) for e in estimators.values()):
            return {"r2": "r2"}
        raise InputError(
            "`scoring` is needed: the estimators are not all classifiers nor all regressors; "
            "name a scikit-learn scorer, e.g. scoring='accuracy'."
        )
    if isinstance(scoring, str):
        return {scoring: scoring}
    if callable(scoring):
        return {"score": scoring}
    if isinstance(scoring, Mapping):
        return {str(k): v for k, v in scoring.items()}
    if isinstance(scoring, Sequence) and all(isinstance(s, str) for s in scoring):
        if not scoring:
            raise InputError("`scoring` is empty; name at least one scorer.")
        return {s: s for s in scoring}
    raise InputTypeError(
        "`scoring` must be a scorer name, a list of names, a callable or a mapping "
        f"name -> scorer, got {type(scoring).__name__}."
    )


def _check_scorers(scorers: dict[str, Any]) -> None:
    """Reject unknown scorer names before any fit, listing the valid ones."""
    from sklearn.metrics import get_scorer_names

    valid = set(get_scorer_names())
    unknown = [v for v in scorers.values() if isinstance(v, str) and v not in valid]
    if unknown:
        raise InputError(
            f"`scoring`: unknown {plural(len(unknown), 'scorer')} {', '.join(map(repr, unknown))}; "
            "see "
            "sklearn.metrics.get_scorer_names() for the names (e.g. 'accuracy', 'f1_macro', "
            "'neg_log_loss', 'r2')."
        )


def _seeded(estimator: Any, seed: int) -> Any:
    """Clone `estimator`, giving every ``random_state`` left at None the integer `seed`."""
    from sklearn.base import clone

    est = clone(estimator)
    unset = {
        key: seed
        for key, value in est.get_params(deep=True).items()
        if (key == "random_state" or key.endswith("__random_state")) and value is None
    }
    return est.set_params(**unset) if unset else est


def _splitter(
    y: np.ndarray, folds: int, runs: int, seed: int, stratify: bool | None, classifiers: bool
) -> Any:
    from sklearn.model_selection import RepeatedKFold, RepeatedStratifiedKFold
    from sklearn.utils.multiclass import type_of_target

    if stratify is None:  # as sklearn's check_cv decides: classifiers on class labels
        stratify = classifiers and type_of_target(y) in _CLASSIFICATION_TARGETS
    kind = RepeatedStratifiedKFold if stratify else RepeatedKFold
    return kind(n_splits=folds, n_repeats=runs, random_state=seed)


def cross_val_scores(
    estimators: Mapping[str, Any] | Sequence[tuple[str, Any]],
    datasets: Mapping[str, Any] | Sequence[tuple[str, Any]],
    *,
    scoring: str | Sequence[str] | Mapping[str, Any] | Callable[..., float] | None = None,
    folds: int = 10,
    runs: int = 10,
    stratify: bool | None = None,
    n_jobs: int | None = None,
    rng: RNGLike = None,
) -> ScoreTable:
    """Run repeated k-fold cross-validation of estimators on data sets; return the scores.

    Every estimator is fitted and scored on the same `runs` x `folds` splits of
    each data set (drawn once per data set), so that the scores are paired as
    :func:`isbetter.compare` and :func:`isbetter.rank` need them.

    Parameters
    ----------
    estimators : mapping or sequence of (name, estimator)
        The systems: unfitted scikit-learn estimators (or pipelines), at least two.
        Each is cloned; a ``random_state`` left at None (also inside pipelines) is
        set to an integer derived from `rng`, so the scores are reproducible.
    datasets : mapping or sequence of (name, data)
        Each data set as a pair ``(X, y)`` or a scikit-learn ``Bunch`` (as
        :func:`sklearn.datasets.load_iris` returns it).
    scoring : str, list of str, mapping or callable, optional
        scikit-learn scorer name(s) (e.g. ``"accuracy"``, ``["accuracy", "f1_macro"]``),
        a mapping name -> scorer, or one scorer callable (column ``"score"``). The
        names become the metric columns. Default: ``"accuracy"`` when every estimator
        is a classifier, ``"r2"`` when every one is a regressor. scikit-learn's scorers
        are all "greater is better" (losses are negated, as ``neg_log_loss``), so every
        metric is read with ``higher_is_better=True``.
    folds : int, default: 10
        Folds per run (k of k-fold, at least 2).
    runs : int, default: 10
        Repetitions of k-fold cross-validation with different shuffles.
    stratify : bool, optional
        Stratified folds (:class:`~sklearn.model_selection.RepeatedStratifiedKFold`)
        or not (:class:`~sklearn.model_selection.RepeatedKFold`). Default, as
        scikit-learn's ``check_cv``: stratified when every estimator is a classifier
        and the data set's target is binary or multi-class.
    n_jobs : int, optional
        Folds fitted in parallel by :func:`sklearn.model_selection.cross_validate`
        through joblib (-1: every CPU; default: joblib's, one unless a
        ``joblib.parallel_backend`` context says otherwise).
    rng : int, numpy.random.Generator or None
        The one seed: the splits of each data set and the estimators' unset
        ``random_state`` are derived from it. It is recorded in
        ``table.data.attrs["cross_validation"]["seed"]``.

    Returns
    -------
    ScoreTable
        Columns ``dataset, system, run, fold`` (runs and folds numbered from 1)
        and one column per scorer; ``table.data.attrs["cross_validation"]`` records
        the seed, splitter, folds, runs and the scikit-learn version.

    Raises
    ------
    InputError
        Fewer than two estimators, no data set, duplicated names, `folds` < 2,
        unknown scorer names, X and y of different lengths.

    Notes
    -----
    The scores of k-fold cross-validation are correlated (their training sets
    overlap); the Bayesian correlated t-test and the hierarchical model account
    for it with ``rho = 1 / folds`` (Nadeau & Bengio 2003; Corani et al. 2017).

    Examples
    --------
    >>> from sklearn.datasets import load_iris, load_wine
    >>> from sklearn.naive_bayes import GaussianNB
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> import isbetter
    >>> table = cross_val_scores(
    ...     {"tree": DecisionTreeClassifier(max_depth=2), "nb": GaussianNB()},
    ...     {"iris": load_iris(), "wine": load_wine()}, folds=5, runs=2, rng=0)
    >>> table.data.columns.tolist(), len(table.data)
    (['dataset', 'system', 'run', 'fold', 'accuracy'], 40)
    >>> res = isbetter.compare(table, "nb", "tree", method="signed_rank", rope=0.01, rng=0)
    """
    sklearn = _sklearn()
    from sklearn.base import is_classifier

    systems = _named(estimators, "estimators", "estimator")
    if len(systems) < 2:
        raise InputError(
            f"`estimators` has {counted(len(systems), 'estimator')}; a comparison needs at "
            "least two."
        )
    data = {
        name: _xy(name, value) for name, value in _named(datasets, "datasets", "(X, y)").items()
    }
    if not data:
        raise InputError("`datasets` is empty; give at least one data set (X, y).")
    folds = check_positive_int(folds, "folds", minimum=2)
    runs = check_positive_int(runs, "runs")
    if stratify is not None and not isinstance(stratify, bool):
        raise InputTypeError(f"`stratify` must be True, False or None, got {stratify!r}.")
    scorers = _scoring(scoring, systems)
    _check_scorers(scorers)
    seed = resolve_seed(rng)
    classifiers = all(is_classifier(e) for e in systems.values())
    # one child seed per data set (its splits) and per (data set, system) (random_state)
    children = np.random.SeedSequence(seed).spawn(len(data))
    design = _Design(systems, scorers, folds, runs, stratify, classifiers, n_jobs)
    frames = [
        frame
        for (name, (X, y)), child in zip(data.items(), children, strict=True)
        for frame in _cross_validate(design, name, X, y, child)
    ]
    table = read_scores(
        pd.concat(frames, ignore_index=True), score=list(scorers), higher_is_better=True
    )
    table.data.attrs["cross_validation"] = {
        "seed": seed,
        "folds": folds,
        "runs": runs,
        "stratify": stratify,
        "scoring": list(scorers),
        "sklearn": sklearn.__version__,
    }
    return table


@dataclass(frozen=True)
class _Design:
    """What every data set's cross-validation shares: systems, scorers and splits."""

    systems: dict[str, Any]
    scorers: Any
    folds: int
    runs: int
    stratify: bool | None
    classifiers: bool
    n_jobs: int | None


def _cross_validate(
    design: _Design, name: str, X: Any, y: Any, seeds: np.random.SeedSequence
) -> list[pd.DataFrame]:
    """Score every system on the same splits of one data set; one frame per system."""
    from sklearn.model_selection import cross_validate

    split_ss, *est_ss = seeds.spawn(1 + len(design.systems))
    splitter = _splitter(
        y, design.folds, design.runs, sampler_seed(split_ss), design.stratify, design.classifiers
    )
    # the splits are drawn once and handed to every estimator: the same folds for all
    splits = list(splitter.split(X, y))
    frames = []
    for (system, estimator), ss in zip(design.systems.items(), est_ss, strict=True):
        out = cross_validate(
            _seeded(estimator, sampler_seed(ss)),
            X,
            y,
            cv=splits,
            scoring=design.scorers,
            n_jobs=design.n_jobs,
            error_score="raise",
        )
        frame = pd.DataFrame(
            {
                "dataset": name,
                "system": system,
                "run": np.repeat(np.arange(1, design.runs + 1), design.folds),
                "fold": np.tile(np.arange(1, design.folds + 1), design.runs),
            }
        )
        for metric in design.scorers:
            frame[metric] = out[f"test_{metric}"]
        frames.append(frame)
    return frames
