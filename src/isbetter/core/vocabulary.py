"""The names users choose from: methods, models, goals and report formats.

One list per choice, used by the library to validate its arguments and by the
command line for its choices and help, so the two never disagree. This module
imports nothing, so ``isbetter --help`` stays fast. Measures are listed by
:data:`isbetter.f1.measures.MEASURE_NAMES`.
"""

from __future__ import annotations

__all__ = [
    "CV_METHODS",
    "F1_MODELS",
    "FORMATS",
    "JOINT_METHODS",
    "METHOD_NAMES",
    "POWER_GOALS",
    "RANKING_METHODS",
    "RANKING_RULES",
    "dataset_text",
    "ranking_text",
    "rope_text",
]

#: methods of :func:`isbetter.compare` (per-fold cross-validation scores)
CV_METHODS: tuple[str, ...] = ("auto", "correlated_t", "sign", "signed_rank", "hierarchical")
#: how reports and plot titles name the methods of :data:`CV_METHODS`
METHOD_NAMES: dict[str, str] = {
    "correlated_t": "Bayesian correlated t-test",
    "hierarchical": "Hierarchical correlated-t model",
    "sign": "Bayesian sign test",
    "signed_rank": "Bayesian signed-rank test",
    "plackett_luce": "Bayesian Plackett–Luce model",
    "joint": "Joint correlated model",
}
#: methods of :func:`isbetter.rank` that fit one model of all the systems (per metric)
JOINT_METHODS: tuple[str, ...] = ("joint", "plackett_luce")
#: how :func:`isbetter.rank` may compare scores: a method of :data:`CV_METHODS` for
#: every pair, or one model of all the systems (:data:`JOINT_METHODS`)
RANKING_METHODS: tuple[str, ...] = (*CV_METHODS, *JOINT_METHODS)
#: models of :func:`isbetter.compare_f1`: Zhang et al.'s (SIGIR 2016) paired and unpaired
#: models, and their hierarchical model of the confusion matrices (ICDM 2015)
F1_MODELS: tuple[str, ...] = ("paired", "unpaired", "hierarchical")
#: goals of :func:`isbetter.power_analysis` (relation keys of the HDI + ROPE rule)
POWER_GOALS: tuple[str, ...] = ("a_better", "equivalent", "b_better")
#: report formats of :func:`isbetter.report.render`
FORMATS: tuple[str, ...] = ("text", "markdown", "latex", "html", "json", "csv")
#: how :func:`isbetter.rank` reads a pair's relation off its probabilities
RANKING_RULES: tuple[str, ...] = ("likelihood", "threshold")


def ranking_text(method: str) -> str:
    """How reports say what a ranking ran: ``every pair by the <method>`` or one model.

    Examples
    --------
    >>> ranking_text("signed_rank")
    'every pair by the Bayesian signed-rank test'
    >>> ranking_text("plackett_luce")
    'one Bayesian Plackett–Luce model of all the systems'
    >>> ranking_text("joint")
    'one Joint correlated model of all the systems'
    """
    name = METHOD_NAMES.get(method, method)
    if method in JOINT_METHODS:
        return f"one {name} of all the systems"
    return f"every pair by the {name}"


def rope_text(rope: float) -> str:
    """How reports name a ROPE half-width: ``ROPE ±0.01``, or ``no ROPE`` (never ``±0``)."""
    return f"ROPE ±{rope:g}" if rope else "no ROPE"


def dataset_text(dataset: str, name: str | None = None) -> str:
    """Name a data set as reports and plots do: ``data set anneal (1)``, or ``data set 1``.

    With a display `name` (other than the key), the name and then the key.
    """
    return f"data set {name} ({dataset})" if name and name != dataset else f"data set {dataset}"
