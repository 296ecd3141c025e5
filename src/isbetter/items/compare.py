"""Compare two language models on the same items of one task: :func:`compare_items`.

A table of several tasks compared without a task goes to :mod:`isbetter.items.subtasks`
(the hierarchical paired model over the subtasks, the correlated-t model with rho = 0 for
graded items, or their items pooled).

Binary items (one run, scores 0 or 1) go to the exact paired model
(:mod:`isbetter.items.paired`); graded items, means over several runs and items
in clusters go to the Bayesian bootstrap of the paired mean difference
(:mod:`isbetter.items.bootstrap`), over clusters when given. The result is the
:class:`~isbetter.results.comparison.ComparisonResult` of every pairwise
comparison (three probabilities, HDI + ROPE decision, Bayes factor, signature
``method:items-exact|...`` or ``method:items-bootstrap|...``), with the 2 x 2
counts (binary items) in its settings and the frequentist baselines of
:mod:`isbetter.items.baselines` beside it.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.provenance import input_record, make_settings
from isbetter.core.validate import check_choice, check_positive_int, check_probability, check_rope
from isbetter.core.vocabulary import ITEM_MODELS, task_text
from isbetter.inference.posterior import DrawsPosterior
from isbetter.inference.records import Observed, TestResult
from isbetter.inference.seeds import RNGLike, child, resolve_seed
from isbetter.inference.summaries import estimate_from_draws
from isbetter.items import bootstrap, paired, subtasks
from isbetter.items.baselines import item_baselines
from isbetter.results.comparison import ComparisonResult

__all__ = [
    "BOOTSTRAP_BUDGET",
    "DEFAULT_DRAWS",
    "DEFAULT_ROPE",
    "ITEM_MODELS",
    "MIN_BOOTSTRAP_DRAWS",
    "bootstrap_draws",
    "compare_items",
    "compare_paired_items",
]

#: the ROPE half-width of :func:`compare_items` by default (as :func:`isbetter.compare`: 0,
#: no practical equivalence can be concluded; the command line says so and suggests one)
DEFAULT_ROPE = 0.0
#: posterior draws by default (the exact model; the bootstrap of few distinct units)
DEFAULT_DRAWS = 50_000
#: the Bayesian bootstrap's draws by default keep draws x distinct units below this
BOOTSTRAP_BUDGET = 50_000_000
#: ... but are never fewer than this
MIN_BOOTSTRAP_DRAWS = 10_000


def bootstrap_draws(units: int) -> int:
    """Return the Bayesian bootstrap's draws by default for this many distinct units.

    :data:`DEFAULT_DRAWS`, but its cost is draws x distinct units (every item of
    continuous scores is one): above :data:`BOOTSTRAP_BUDGET` variates, as many draws
    as the budget allows, and at least :data:`MIN_BOOTSTRAP_DRAWS` (Monte Carlo error of
    a probability at most 0.005).

    Examples
    --------
    >>> bootstrap_draws(3), bootstrap_draws(2_000), bootstrap_draws(14_000)
    (50000, 25000, 10000)
    """
    return int(min(DEFAULT_DRAWS, max(MIN_BOOTSTRAP_DRAWS, BOOTSTRAP_BUDGET // units)))


def _model(model: str, binary: bool, clustered: bool) -> str:
    """Resolve ``"auto"``; refuse the exact model where its assumptions fail."""
    model = check_choice(model, "model", ITEM_MODELS)
    if model == "auto":
        return "exact" if binary and not clustered else "bootstrap"
    if model == "exact" and not binary:
        raise InputError(
            "`model='exact'` needs binary items (one run per item, scores 0 or 1), and these "
            "are graded or averaged over runs; use `model='bootstrap'` (or 'auto')."
        )
    if model == "exact" and clustered:
        raise InputError(
            "`model='exact'` treats the items as independent, and these are in clusters; "
            "use `model='bootstrap'` (or 'auto'), which resamples the clusters."
        )
    return model


def _scores(items: Any) -> tuple[np.ndarray, np.ndarray]:
    """Return the per-item scores of A and B of a PairedItems, checked."""
    for name in ("a", "b", "task", "system_a", "system_b", "binary"):
        if not hasattr(items, name):
            raise InputTypeError(
                f"`items` must be a PairedItems (ItemTable.paired(a, b, task)), got "
                f"{type(items).__name__} without `{name}`."
            )
    a = np.asarray(items.a, dtype=float)
    b = np.asarray(items.b, dtype=float)
    if a.size == 0:
        raise InputError(f"{task_text(items.task, quoted=True)}: no items to compare.")
    bad = ~(np.isfinite(a) & np.isfinite(b))
    if bad.any():
        item = np.asarray(items.items)[np.flatnonzero(bad)[0]] if hasattr(items, "items") else ""
        raise InputError(
            f"{task_text(items.task, quoted=True)}: item {item!r} has a score that is not a number."
        )
    return a, b


#: what a model's sampler returns: posterior draws, prior draws, their effective sizes
_Drawn = tuple[np.ndarray, np.ndarray | None, int | None, int | None]


def _settings(items: Any) -> dict[str, Any]:
    """Return the settings a pair's data give: the task, the number of items, their runs."""
    settings: dict[str, Any] = {"task": items.task, "items": int(np.size(items.a))}
    runs = getattr(items, "runs", None)
    if runs is not None and np.size(runs):
        settings["runs"] = sorted({int(r) for r in np.unique(runs)})
    return settings


def _exact(
    a: np.ndarray,
    b: np.ndarray,
    draws: int,
    stream: np.random.SeedSequence,
    settings: dict[str, Any],
) -> _Drawn:
    """Posterior and prior draws of the exact model, their effective sizes; counts to settings."""
    counts = paired.ItemCounts.from_scores(a, b)
    delta = paired.sample_delta(counts, draws=draws, rng=np.random.default_rng(child(stream, 0)))
    prior = paired.prior_delta(draws=draws, rng=np.random.default_rng(child(stream, 1)))
    half = (draws + 1) // 2  # mirrored draws: the prior's, and a symmetric posterior's
    settings.update(alpha=paired.ALPHA, counts=counts.to_dict())
    return delta, prior, half if counts.n10 == counts.n01 else None, half


def _bootstrap(
    d: np.ndarray,
    clusters: Any,
    draws: int | None,
    stream: np.random.SeedSequence,
    settings: dict[str, Any],
) -> _Drawn:
    """Draws of the Bayesian bootstrap (no prior: no Bayes factor); clusters to settings."""
    u = bootstrap.units(d, clusters)
    draws = draws or bootstrap_draws(u.counts.size)
    delta = bootstrap.sample_delta(u, draws=draws, rng=np.random.default_rng(child(stream, 0)))
    if clusters is not None:
        settings["clusters"] = u.n_units
    settings["bayes_factor"] = "none: the Bayesian bootstrap has no proper prior"
    return delta, None, None, None


def compare_paired_items(
    items: Any,
    *,
    metric: str = "score",
    rope: float = DEFAULT_ROPE,
    model: str = "auto",
    hdi_prob: float = 0.95,
    draws: int | None = None,
    resamples: int = 10_000,
    baselines: bool = True,
    rng: RNGLike = None,
    source: Any = None,
) -> ComparisonResult:
    """Compare the two systems of a :class:`~isbetter.items.table.PairedItems` (one task).

    The work of :func:`compare_items` once the pair is chosen; its parameters are the
    same (`source`: the settings of what the table was read from).
    """
    rope = check_rope(rope)
    hdi_prob = check_probability(hdi_prob, "hdi_prob", open_interval=True)
    if draws is not None:
        draws = check_positive_int(draws, "draws")
    resamples = check_positive_int(resamples, "resamples")
    a, b = _scores(items)
    clusters = getattr(items, "clusters", None)
    chosen = _model(model, bool(items.binary), clusters is not None)
    seed = resolve_seed(rng)
    stream = np.random.SeedSequence(seed)
    d = a - b
    settings = _settings(items)
    if chosen == "exact":
        delta, prior, ess, prior_ess = _exact(a, b, draws or DEFAULT_DRAWS, stream, settings)
    else:
        delta, prior, ess, prior_ess = _bootstrap(d, clusters, draws, stream, settings)
    draws = delta.size
    settings["draws"] = draws
    tests: tuple[TestResult, ...] = ()
    if baselines:
        settings["resamples"] = resamples
        tests = item_baselines(
            a,
            b,
            clusters,
            binary=bool(items.binary),
            resamples=resamples,
            rng=np.random.default_rng(child(stream, 2)),
        )
    estimate = estimate_from_draws(
        delta, rope=rope, prior_delta=prior, hdi_prob=hdi_prob, ess=ess, prior_ess=prior_ess
    )
    method = f"items_{chosen}"
    return ComparisonResult.from_posterior(
        DrawsPosterior(delta),
        system_a=str(items.system_a),
        system_b=str(items.system_b),
        rope=rope,
        method=method,
        settings=make_settings(method, seed, **settings, **(source or {})),
        metric=metric,
        dataset=str(items.task),
        estimate=estimate,
        tests=tests,
        observed=Observed(int(a.size), float(a.mean()), float(b.mean()), float(d.mean())),
    )


def compare_items(
    table: Any,
    a: str,
    b: str,
    *,
    task: str | None = None,
    pool: str = "auto",
    rope: float = DEFAULT_ROPE,
    model: str = "auto",
    hdi_prob: float = 0.95,
    draws: int | None = None,
    resamples: int = 10_000,
    baselines: bool = True,
    rng: RNGLike = None,
) -> ComparisonResult:
    """Compare two language models on the same items of one task, or over several subtasks.

    Answers: how much more often is A right than B on this task's population of
    items, how sure can we be, and are the two practically the same (inside the
    ROPE)? Binary items get the exact paired model, graded ones the Bayesian
    bootstrap (DESIGN §4.3); no MCMC either way. Over several subtasks (a table of
    several tasks, no `task`): the hierarchical paired model of binary items
    (:mod:`isbetter.items.subtasks`), or for graded items (and items in clusters) the
    hierarchical correlated-t model with rho = 0 (:mod:`isbetter.items.graded`) — on
    the next subtask, is A better, practically the same or worse; the population mean
    difference; each subtask's shrunk difference.

    Parameters
    ----------
    table : ItemTable
        Item-level scores (:func:`isbetter.items.read`, ``ItemTable.from_frame``).
    a, b : str
        The two systems (models).
    task : str, optional
        The task; omitted, the table's one task, or all of its several tasks (`pool`).
    pool : {"auto", "hierarchical", "micro"}, default: "auto"
        A table of several tasks, compared without `task`: ``"hierarchical"`` (what
        ``"auto"`` picks) fits the hierarchical paired model of binary items over the
        subtasks (MCMC, nutpie; a few seconds for 57 subtasks once compiled), and
        graded items or items in clusters the hierarchical correlated-t model of
        per-fold scores with rho = 0 (each subtask a data set, each item's paired
        difference, or each cluster's mean difference, one observation);
        ``"micro"`` pools their items, each (task, item) one item, and compares them
        as one task (a micro average, weighting subtasks by their size).
    rope : float, default: 0
        ROPE half-width in score units (accuracy: 0.02 is two points).
    model : {"auto", "exact", "bootstrap"}, default: "auto"
        ``"exact"``: Dir(1, 1, 1, 1) on the 2 x 2 table of binary items, posterior
        sampled exactly (:mod:`isbetter.items.paired`). ``"bootstrap"``: the Bayesian
        bootstrap of the paired mean difference over items, or over clusters when
        the table has them (:mod:`isbetter.items.bootstrap`). ``"auto"``: the exact
        model for binary items (one run per item, scores 0 or 1) without clusters,
        the bootstrap otherwise.
    hdi_prob : float, default: 0.95
        Mass of the HDI of the HDI + ROPE decision.
    draws : int, optional
        Posterior draws (and as many prior draws for the Bayes factors of the exact
        model). Default: 50 000; for the bootstrap of many distinct item scores fewer,
        down to 10 000, since its cost is draws x distinct scores (:func:`bootstrap_draws`).
        The hierarchical model: draws per chain (4 chains), default 1000.
    resamples : int, default: 10000
        Resamples of the paired bootstrap baseline.
    baselines : bool, default: True
        Also run the frequentist baselines (:mod:`isbetter.items.baselines`): mid-p
        McNemar (binary items), Koehn's paired bootstrap, Miller's clustered standard
        error and the unpaired z-test lm-evaluation-harness prints.
    rng : int, numpy.random.Generator or None
        Seed; recorded in ``settings["seed"]``. Stream 0 of it draws the posterior,
        stream 1 the prior, stream 2 the baselines: switching the baselines off leaves
        the posterior unchanged.

    Returns
    -------
    ComparisonResult
        ``method`` ``"items_exact"`` or ``"items_bootstrap"``; ``dataset`` the task;
        ``settings["counts"]`` the 2 x 2 counts ``n11, n10, n01, n00`` of binary items.
        Over several subtasks by the hierarchical model, an
        :class:`~isbetter.results.items.ItemsHierarchicalResult` (``method``
        ``"items_hierarchical"``, graded items ``"items_hierarchical_graded"``):
        probabilities of the next subtask's difference (argmax
        counts; ``predictive`` the predictive ones), ``estimate`` of the population mean
        difference, ``subtask_frame()`` each subtask's shrunk difference (also in
        ``settings["subtasks"]``, which reports list).

    Notes
    -----
    Exchanging `a` and `b` (same seed) negates every posterior draw exactly.

    Two identical models never lean to a side: the exact model's posterior of
    ``delta`` is then symmetric and sampled as such (P(A better) = P(B better)
    exactly); few items leave the HDI across the ROPE (``undecided``), many put it
    inside (``equivalent``). The Bayesian bootstrap has no prior: identical graded
    scores give ``delta = 0`` exactly, and no Bayes factor is computed.

    Examples
    --------
    >>> import pandas as pd
    >>> from isbetter.items.table import ItemTable
    >>> df = pd.DataFrame({"task": "t", "item": list(range(100)) * 2,
    ...                    "system": ["x"] * 100 + ["y"] * 100,
    ...                    "score": [1] * 70 + [0] * 30 + [1] * 50 + [0] * 50})
    >>> res = compare_items(ItemTable.from_frame(df), "x", "y", rope=0.02, rng=1)
    >>> res.method, res.settings["counts"], res.estimate.decision
    ('items_exact', {'n11': 50, 'n10': 20, 'n01': 0, 'n00': 30}, 'a_better')
    """
    if not hasattr(table, "paired"):
        raise InputTypeError(
            f"`table` must be an ItemTable (isbetter.items.read), got {type(table).__name__}."
        )
    route = subtasks.resolve_pool(pool, tuple(table.tasks), task)
    common: dict[str, Any] = {
        "rope": rope,
        "model": model,
        "hdi_prob": hdi_prob,
        "draws": draws,
        "resamples": resamples,
        "baselines": baselines,
        "rng": rng,
        "source": _source(table, a, b),
    }
    if route == "hierarchical":
        _model(model, True, False)  # an unknown model: the error lists them
        return cast(ComparisonResult, subtasks.compare_subtasks(table, a, b, **common))
    pair = subtasks.pooled_pair(table, a, b) if route == "micro" else table.paired(a, b, task)
    return compare_paired_items(pair, metric=getattr(table, "metric", "score"), **common)


def _mentions(note: str, system: str) -> bool:
    """Whether a reader's note names `system` (or its folder: ``org/model`` as ``org__model``)."""
    return system in note or system.replace("/", "__") in note


def _source(table: Any, a: str, b: str) -> dict[str, Any]:
    """Return what the table says it was read from, and the choices made reading it.

    ``{"input": {"source", "rows", "sha256"}, "reading": [note, ...]}`` for the settings
    (:func:`~isbetter.core.provenance.input_record` of the table's rows); reports show
    the notes (a run left out, an all-zero run kept), so no choice goes unsaid. Notes
    that name only other systems of the table are left to them.
    """
    out: dict[str, Any] = {}
    data = getattr(table, "data", None)
    if isinstance(data, pd.DataFrame):
        out["input"] = input_record(data, what=str(getattr(table, "source", "") or "ItemTable"))
    others = [s for s in getattr(table, "systems", ()) if s not in (a, b)]
    notes = [
        str(n)
        for n in getattr(table, "notes", ())
        if _mentions(str(n), a)
        or _mentions(str(n), b)
        or not any(_mentions(str(n), s) for s in others)
    ]
    if notes:
        out["reading"] = notes
    return out
