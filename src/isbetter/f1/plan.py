"""Step 1 of :func:`isbetter.f1.compare.compare_f1`: the predictions and options, validated.

Also a small helper shared by the steps: the seed streams (:func:`child`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from isbetter.core.errors import InputError
from isbetter.core.validate import check_choice, check_positive_int, check_probability, check_rope
from isbetter.core.vocabulary import F1_MODELS
from isbetter.f1.measures import Measure, get_measure
from isbetter.f1.paired import F1Prior
from isbetter.f1.predictions import PredictionTable, read_predictions
from isbetter.inference.seeds import resolve_seed

__all__ = [
    "Plan",
    "plan_comparison",
]


@dataclass(frozen=True)
class Plan:
    """The validated input and options of one comparison."""

    table: PredictionTable
    system_a: str
    system_b: str
    measure: Measure
    labels: tuple[Any, ...]
    model: str
    prior: F1Prior
    rope: float
    draws: int
    hdi_prob: float
    baselines: bool
    resamples: int
    averages: bool
    seed: int

    @property
    def multiclass(self) -> bool:
        """Whether the labels have more than two classes."""
        return not self.table.is_binary


def _resolve_table(data: Any, gold: str, systems: Sequence[str] | None) -> PredictionTable:
    if isinstance(data, PredictionTable):
        return data
    return read_predictions(data, gold=gold, systems=systems)


def _systems(table: PredictionTable, system_a: str | None, system_b: str | None) -> tuple[str, str]:
    if system_a is None or system_b is None:
        if len(table.systems) != 2:
            raise InputError(
                f"Name the two systems with `system_a` and `system_b`; the table has "
                f"{len(table.systems)}: {', '.join(repr(s) for s in table.systems)}."
            )
        system_a, system_b = table.systems
    if system_a == system_b:
        raise InputError(
            f"`system_a` and `system_b` are both {system_a!r}; compare two different systems."
        )
    return table.check_system(system_a, "system_a"), table.check_system(system_b, "system_b")


def _labels(table: PredictionTable, positive: Any, classes: Sequence[Any] | None) -> tuple:
    if table.is_binary:
        if classes is not None:
            raise InputError("`classes` is for multi-class tasks; use `positive` for a binary one.")
        return (table.default_positive() if positive is None else table.check_label(positive),)
    if positive is not None:
        raise InputError("`positive` is for binary tasks; use `classes` for a multi-class one.")
    if classes is None:
        return tuple(table.labels)
    return tuple(table.check_label(c, "classes") for c in classes)


def plan_comparison(
    data: Any, gold: str, system_a: str | None, system_b: str | None, **opt: Any
) -> Plan:
    """Step 1: read the predictions, resolve the systems, classes and options."""
    named = [system_a, system_b] if system_a is not None and system_b is not None else None
    table = _resolve_table(data, gold, named)
    system_a, system_b = _systems(table, system_a, system_b)
    model = check_choice(opt["model"], "model", F1_MODELS)
    if model == "hierarchical" and opt["prior"] is not None:
        raise InputError(
            "`prior` sets the paired and unpaired models' hyper-parameters; the hierarchical "
            "model has its own (see isbetter.f1.icdm). Leave `prior` unset."
        )
    labels = _labels(table, opt["positive"], opt["classes"])
    return Plan(
        table=table,
        system_a=system_a,
        system_b=system_b,
        measure=get_measure(opt["measure"], **opt["measure_args"]),
        labels=labels,
        model=model,
        prior=opt["prior"] or F1Prior(),
        rope=check_rope(opt["rope"]),
        draws=check_positive_int(opt["draws"], "draws", minimum=2),
        hdi_prob=check_probability(opt["hdi_prob"], "hdi_prob", open_interval=True),
        baselines=bool(opt["baselines"]),
        resamples=check_positive_int(opt["resamples"], "resamples"),
        # macro / micro rows: multi-class, every class reported
        averages=bool(opt["averages"]) and not table.is_binary and opt["classes"] is None,
        seed=resolve_seed(opt["rng"]),
    )
