"""The old keywords of :func:`~isbetter.compare_f1` and :func:`~isbetter.power_analysis`.

They work for one release, each with a :class:`~isbetter.RenamedArgumentWarning`
that says what to write instead (:func:`~isbetter.core.validate.legacy_keywords`),
and are mapped here, in one place, to the typed options: ``measure`` to ``metric``;
``beta``, ``cost_fn``, ``cost_fp``, ``p_positive`` to a measure object
(``metric=fbeta(2)``, ``metric=dcf(...)``); ``tune``, ``chains`` to
``sampling=Sampling(...)``; ``prior`` to ``model=F1Model(..., prior=...)``;
``positive`` and ``averages=False`` to ``classes``; ``resamples`` to
``baselines=Baselines(...)``; ``gold`` to reading the table with
:func:`~isbetter.read_predictions`.
"""

from __future__ import annotations

from typing import Any

from isbetter.core.errors import InputError
from isbetter.f1.baselines import Baselines
from isbetter.f1.measures import get_measure
from isbetter.f1.paired import F1Model
from isbetter.f1.plan import EVERY_CLASS
from isbetter.f1.predictions import PredictionTable, read_predictions
from isbetter.inference.sampling import Sampling

__all__ = ["COMPARE_F1", "POWER", "compare_f1_keywords", "power_keywords"]

_MEASURE_ARGS = ("beta", "cost_fn", "cost_fp", "p_positive")
#: the old keywords of compare_f1 and of power_analysis
COMPARE_F1 = (
    *("measure", *_MEASURE_ARGS),
    *("tune", "chains", "prior", "positive", "averages", "resamples", "gold"),
)
POWER = ("measure",)


def _once(new: str, arguments: dict[str, Any], value: Any, old: str) -> None:
    """Set `arguments[new]` from the old keyword `old`, unless the call gives `new` too."""
    if arguments.get(new) is not None:
        raise InputError(f"`{old}` is the old name of `{new}`; give `{new}` only.")
    arguments[new] = value


def _metric(old: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    advice = []
    if "measure" in old:
        _once("metric", arguments, old["measure"], "measure")
        advice.append(
            f"`measure` is an alias of `metric`, the current name; write metric={old['measure']!r}."
        )
    params = {k: old[k] for k in _MEASURE_ARGS if k in old}
    if params:
        measure = get_measure(arguments.get("metric") or "f1", **params)
        arguments["metric"] = measure
        costs = measure.dcf_costs
        call = f"fbeta({params.get('beta', 1.0)!r})"
        if costs is not None:
            call = f"dcf(cost_fn={costs.cost_fn:g}, cost_fp={costs.cost_fp:g}, "
            call += f"p_positive={costs.p_positive:g})"
        advice.append(f"`{'`, `'.join(params)}` parametrise the metric: write metric={call}.")
    return advice


def _options(old: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    advice = []
    mcmc = {k: old[k] for k in ("tune", "chains") if k in old}
    if mcmc:
        _once("sampling", arguments, Sampling(**mcmc), "/".join(mcmc))
        advice.append("Write sampling=Sampling(tune=..., chains=...) for `tune` and `chains`.")
    if "prior" in old:
        model = arguments.get("model", "paired")
        if isinstance(model, F1Model):
            raise InputError("`prior` is the old name of `model`; give `model` only.")
        arguments["model"] = F1Model(model, prior=old["prior"])
        advice.append(f"Write model=F1Model({model!r}, prior=...) for `prior`.")
    if "resamples" in old:
        if isinstance(arguments.get("baselines"), Baselines):
            raise InputError("`resamples` is the old name of `baselines`; give `baselines` only.")
        if arguments.get("baselines", True):
            arguments["baselines"] = Baselines(resamples=old["resamples"])
        advice.append(f"Write baselines=Baselines(resamples={old['resamples']!r}).")
    return advice


def _classes(old: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    advice = []
    if old.get("positive") is not None:
        _once("classes", arguments, old["positive"], "positive")
        advice.append(f"Write classes={old['positive']!r} for `positive`.")
    if "averages" in old:
        if not old["averages"] and arguments.get("classes") is None:
            arguments["classes"] = EVERY_CLASS
        advice.append("`averages=False`: name every class in `classes` instead.")
    return advice


def _gold(old: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    if "gold" not in old:
        return []
    data = arguments.get("data")
    if not isinstance(data, PredictionTable):
        a, b = arguments.get("system_a"), arguments.get("system_b")
        named = [a, b] if a is not None and b is not None else None
        arguments["data"] = read_predictions(data, gold=old["gold"], systems=named)
    return [f"Read the table with isbetter.read_predictions(data, gold={old['gold']!r})."]


def compare_f1_keywords(old: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Map the old keywords of compare_f1 into `arguments`; return what to write instead."""
    return [
        *_metric(old, arguments),
        *_options(old, arguments),
        *_classes(old, arguments),
        *_gold(old, arguments),
    ]


def power_keywords(old: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Map the old keyword of power_analysis (`measure`) into `arguments`."""
    return _metric(old, arguments)
