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
    "FORMAT_SUFFIXES",
    "ITEM_MODELS",
    "ITEM_POOLS",
    "ITEMS_HIERARCHICAL",
    "ITEM_RANKING_METHODS",
    "ONE_TASK",
    "JOINT_METHODS",
    "METHOD_NAMES",
    "ONE_MODEL_METHODS",
    "POWER_GOALS",
    "RANKING_METHODS",
    "RANKING_RULES",
    "RANK_QUANTITIES",
    "ROPELESS_METHODS",
    "dataset_text",
    "difference_text",
    "method_family",
    "pair_quantity",
    "place_text",
    "task_text",
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
    "f1_paired": "paired Bayesian F1 model",
    "f1_unpaired": "unpaired Bayesian F1 model",
    "f1_hierarchical": "hierarchical Bayesian F1 model",
    "items_exact": "exact paired model of binary items",
    "items_bootstrap": "Bayesian bootstrap of the paired mean difference over items",
    "items_joint": "posterior over items",
    "items_joint_subtasks": "posterior over subtasks and their items",
    "items_hierarchical": "hierarchical paired model of binary items over subtasks",
    "items_hierarchical_graded": "hierarchical correlated-t model (rho = 0) of graded items "
    "over subtasks",
}
#: the methods of a hierarchical comparison of items over subtasks (binary, graded)
ITEMS_HIERARCHICAL: tuple[str, ...] = ("items_hierarchical", "items_hierarchical_graded")
#: methods of :func:`isbetter.rank` that fit one model of all the systems (per metric)
JOINT_METHODS: tuple[str, ...] = ("joint", "plackett_luce")
#: how :func:`isbetter.rank` may compare scores: a method of :data:`CV_METHODS` for
#: every pair, or one model of all the systems (:data:`JOINT_METHODS`)
RANKING_METHODS: tuple[str, ...] = (*CV_METHODS, *JOINT_METHODS)
#: models of :func:`isbetter.compare_f1`: Zhang et al.'s (SIGIR 2016) paired and unpaired
#: models, and their hierarchical model of the confusion matrices (ICDM 2015)
F1_MODELS: tuple[str, ...] = ("paired", "unpaired", "hierarchical")
#: how :func:`isbetter.rank` may rank item scores (an ItemTable): every pair by a model of
#: :data:`ITEM_MODELS`, or one posterior over items of all the systems' scores
ITEM_RANKING_METHODS: tuple[str, ...] = ("auto", "exact", "bootstrap", "items_joint")
#: the methods of :func:`isbetter.rank` whose one model of all the systems gives every pair
ONE_MODEL_METHODS: tuple[str, ...] = (
    "joint",
    "plackett_luce",
    "items_joint",
    "items_joint_subtasks",
)
#: methods without a ROPE (they rank): their signatures and reports name none
ROPELESS_METHODS: tuple[str, ...] = ("plackett_luce",)
#: models of :func:`isbetter.compare_items`: the exact paired model of binary items, the
#: Bayesian bootstrap of the paired mean difference, or the one that suits the items
ITEM_MODELS: tuple[str, ...] = ("auto", "exact", "bootstrap")
#: how :func:`isbetter.compare_items` and :func:`isbetter.rank` treat several subtasks: the
#: hierarchical model over them (the one posterior of ``rank``: a two-level bootstrap, the
#: mean over the population of subtasks), or their items pooled (a micro average);
#: ``"auto"``: the hierarchical model for two or more subtasks
ITEM_POOLS: tuple[str, ...] = ("auto", "hierarchical", "micro")
#: goals of :func:`isbetter.power_analysis` (relation keys of the HDI + ROPE rule)
POWER_GOALS: tuple[str, ...] = ("a_better", "equivalent", "b_better")
#: report formats of :func:`isbetter.report.render`
FORMATS: tuple[str, ...] = ("text", "markdown", "latex", "html", "json", "csv")
#: the file-name endings of each report format (the first: the one to suggest)
FORMAT_SUFFIXES: dict[str, tuple[str, ...]] = {
    "text": (".txt",),
    "markdown": (".md", ".markdown"),
    "latex": (".tex",),
    "html": (".html", ".htm"),
    "json": (".json",),
    "csv": (".csv",),
}
#: how :func:`isbetter.rank` reads a pair's relation off its probabilities
RANKING_RULES: tuple[str, ...] = ("likelihood", "threshold")


#: what a pair's three probabilities are about, per method: (short name, in words)
_PAIR_QUANTITIES: dict[str, tuple[str, str]] = {
    "hierarchical": ("next data set", "the difference on the next data set"),
    "joint": ("next data set", "the difference on the next data set"),
    "sign": ("next data set", "the difference on the next data set"),
    "signed_rank": ("next data set", "the difference on the next data set"),
    "correlated_t": ("this data set", "the mean difference on this data set"),
    "f1": ("this test set", "the difference in the measure on the population of this test set"),
    "plackett_luce": ("weights", "the Plackett–Luce weights w (no ROPE)"),
    "items_exact": ("this task", "the accuracy difference on the population of the task's items"),
    "items_bootstrap": ("this task", "the mean difference on the population of the task's items"),
    "items_joint": ("these items", "the difference in mean score on the population of the items"),
    "items_joint_subtasks": (
        "mean over subtasks",
        "the difference in mean score over the population of subtasks (the mean of the "
        "subtasks' mean scores, each subtask weighted equally)",
    ),
    "items_hierarchical": ("next subtask", "the accuracy difference on the next subtask"),
    "items_hierarchical_graded": ("next subtask", "the mean difference on the next subtask"),
}
#: what the ranks and orders of a model of all the systems are about: (short name, in words)
RANK_QUANTITIES: dict[str, tuple[str, str]] = {
    "joint": ("mean effects", "the systems' mean effects b_k (over data sets), not one data set"),
    "plackett_luce": ("weights", "the Plackett–Luce weights w"),
    "items_joint": ("mean scores", "the systems' mean scores on the population of the items"),
    "items_joint_subtasks": (
        "mean over subtasks",
        "the systems' mean scores over the population of subtasks (the mean of the "
        "subtasks' mean scores, each subtask weighted equally)",
    ),
}


def method_family(method: str) -> str:
    """Return the model of a comparison's method: ``"f1_paired_macro"`` -> ``"f1_paired"``.

    An F1 comparison's macro- and micro-averaged rows name their average in the
    method; everything else is its own family.
    """
    if method.startswith("f1_"):
        return "_".join(method.split("_")[:2])
    return method


def pair_quantity(method: str) -> tuple[str, str]:
    """Return what a ranking's pairwise probabilities are about: a short name, in words.

    Examples
    --------
    >>> pair_quantity("joint")
    ('next data set', 'the difference on the next data set')
    >>> pair_quantity("correlated_t")[0]
    'this data set'
    """
    if method in _PAIR_QUANTITIES:
        return _PAIR_QUANTITIES[method]
    if method.startswith("f1_"):  # a comparison of per-document predictions
        return _PAIR_QUANTITIES["f1"]
    return ("the difference", "the difference of the two systems")


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
    >>> ranking_text("f1_paired")
    'every pair by the paired Bayesian F1 model'
    """
    name = METHOD_NAMES.get(method, method)
    if method in ONE_MODEL_METHODS:
        return f"one {name} of all the systems"
    return f"every pair by the {name}"


def difference_text(metric: str, a: str, b: str, higher_is_better: bool = True) -> str:
    """Name the difference d as the plots' axes do: the metric, which way round, its direction.

    As the reports' metric line says it: d is positive when `a` is better, so for a
    lower-is-better metric it is B's score minus A's.

    Examples
    --------
    >>> difference_text("accuracy", "nbc", "aode")
    'd = accuracy(nbc) − accuracy(aode), accuracy: higher is better'
    >>> difference_text("error", "nbc", "aode", higher_is_better=False)
    'd = error(aode) − error(nbc), error: lower is better'
    """
    first, second = (a, b) if higher_is_better else (b, a)
    direction = "higher" if higher_is_better else "lower"
    return f"d = {metric}({first}) − {metric}({second}), {metric}: {direction} is better"


def rope_text(rope: float) -> str:
    """How reports name a ROPE half-width: ``ROPE ±0.01``, or ``no ROPE`` (never ``±0``)."""
    return f"ROPE ±{rope:g}" if rope else "no ROPE"


#: the task's name when a table of items has no task column (the evaluation names none)
ONE_TASK = "all"


def task_text(task: str, *, quoted: bool = False) -> str:
    """Name a task of items as reports and messages do: ``task arc``, or ``all items``.

    An evaluation without named subtasks has one task, :data:`ONE_TASK`, which is no name
    a reader knows ("on task all"): it is said to be all the items. `quoted` gives the
    form that starts a message: ``task 'arc'``, or ``the items``.

    Examples
    --------
    >>> task_text("arc"), task_text(ONE_TASK), task_text("arc", quoted=True)
    ('task arc', 'all items', "task 'arc'")
    >>> task_text("2 tasks pooled (t1, t2)")
    'the items of 2 tasks pooled (t1, t2)'
    """
    if task == ONE_TASK:
        return "the items" if quoted else "all items"
    if " pooled (" in task:  # items.subtasks.pooled_task: "2 tasks pooled (t1, t2)"
        return f"the items of {task}"
    return f"task {task!r}" if quoted else f"task {task}"


def place_text(method: str, dataset: str, name: str | None = None) -> str:
    """Where a one-data-set comparison was made, as reports and plots say it.

    The task of a comparison of item scores (``task arc``), else :func:`dataset_text`.

    Examples
    --------
    >>> place_text("items_exact", "arc"), place_text("correlated_t", "1", "anneal")
    ('task arc', 'data set anneal (1)')
    >>> place_text("items_bootstrap", ONE_TASK)  # an evaluation without named subtasks
    'all items'
    """
    if method in (*ITEMS_HIERARCHICAL, "items_joint_subtasks"):  # "57 subtasks (a, b, c, …)"
        return dataset
    if method.startswith("items_"):
        return task_text(dataset)
    return dataset_text(dataset, name)


def dataset_text(dataset: str, name: str | None = None) -> str:
    """Name a data set as reports and plots do: ``data set anneal (1)``, or ``data set 1``.

    With a display `name` (other than the key), the name and then the key.
    """
    return f"data set {name} ({dataset})" if name and name != dataset else f"data set {dataset}"
