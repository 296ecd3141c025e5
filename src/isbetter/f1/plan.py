"""Step 1 of :func:`isbetter.f1.compare.compare_f1`: the predictions and options, validated.

:func:`plan_comparison` reads the predictions and resolves the systems, the classes
and the typed options into a :class:`Plan`, which every later step reads: the
counts and draws (:mod:`isbetter.f1.draws`) and the rows (:mod:`isbetter.f1.rows`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from isbetter.core.errors import InputError
from isbetter.core.provenance import input_settings, make_settings
from isbetter.core.validate import check_positive_int, check_probability, check_rope
from isbetter.f1.averages import (
    HIERARCHICAL_MAX_DRAWS,
    AveragedModel,
    FlatCellModel,
    ICDMModel,
    UnpairedCellModel,
)
from isbetter.f1.baselines import Baselines
from isbetter.f1.measures import Measure, get_measure
from isbetter.f1.paired import F1Model, F1Prior
from isbetter.f1.predictions import PredictionTable, read_predictions
from isbetter.inference.sampling import Sampling
from isbetter.inference.seeds import RNGLike, child, resolve_seed

__all__ = [
    "EVERY_CLASS",
    "Plan",
    "plan_comparison",
]

#: `classes` of every class without the macro / micro rows (the old ``averages=False``)
EVERY_CLASS = "<every class>"


@dataclass(frozen=True)
class Plan:
    """The validated input and options of one comparison.

    Attributes
    ----------
    labels : tuple
        The reported classes (a binary task: its positive class).
    baselines : Baselines or None
        The frequentist tests' options; None: no baselines.
    averages : bool
        Whether the macro / micro rows are added (multi-class, every class, asked for).
    seed : int
        The seed; :meth:`stream` gives each step its seed sequence.
    """

    table: PredictionTable
    system_a: str
    system_b: str
    measure: Measure
    labels: tuple[Any, ...]
    model: str
    prior: F1Prior
    sampling: Sampling
    rope: float
    draws: int
    hdi_prob: float
    baselines: Baselines | None
    averages: bool
    seed: int

    @property
    def multiclass(self) -> bool:
        """Whether the labels have more than two classes."""
        return not self.table.is_binary

    @cached_property
    def symmetric(self) -> bool:
        """Whether A and B are interchangeable (every row's posterior symmetric about 0).

        True for the same prediction on every document and a prior that treats them alike.
        """
        a, b = (np.asarray(self.table.predictions[s]) for s in (self.system_a, self.system_b))
        return bool(np.array_equal(a, b)) and (self.model != "paired" or self.prior.symmetric)

    def stream(self, i: int) -> np.random.SeedSequence:
        """Return the i-th seed stream spawned from ``SeedSequence(seed)``.

        Stream i is the i-th reported class's (child 0: posterior, child 1: baselines),
        stream M (M reported classes) the exact models' prior, stream M' + 1 (M' classes
        of the task) the macro / micro rows or the hierarchical fit.
        """
        return child(np.random.SeedSequence(self.seed), i)

    @property
    def average_stream(self) -> np.random.SeedSequence:
        """The stream of the macro / micro rows or the hierarchical fit: M' + 1 for M' classes.

        It does not depend on which classes are reported.
        """
        return self.stream(len(self.table.labels) + 1)

    @cached_property
    def averaged_model(self) -> AveragedModel | None:
        """The model of the averages (and, for "hierarchical", of every row), if any."""
        if self.model == "hierarchical":
            return ICDMModel(sampling=self.sampling)
        if not self.averages:
            return None
        return FlatCellModel() if self.model == "paired" else UnpairedCellModel()

    @cached_property
    def settings(self) -> dict[str, Any]:
        """What reproduces the result (draws of the exact models, or of the MCMC)."""
        averaged = self.averaged_model
        extra: dict[str, Any] = {}
        if isinstance(averaged, ICDMModel):
            # MCMC: draws per chain (x chains), as every MCMC result records them
            total = min(self.draws, HIERARCHICAL_MAX_DRAWS)
            extra = {"draws": averaged.draws_per_chain(total), "prior": None, **averaged.settings()}
        elif averaged is not None:
            extra = averaged.settings()
        params: dict[str, Any] = {
            "rope": self.rope,
            "draws": self.draws,
            "metric": self.measure.name,
            "hdi_prob": self.hdi_prob,
            "prior": self.prior.to_dict(),
            "system_a": self.system_a,
            "system_b": self.system_b,
            "positive": None if self.multiclass else str(self.labels[0]),
            "resamples": self.baselines.resamples if self.baselines else None,
        }
        return make_settings(
            f"f1_{self.model}", self.seed, **{**params, **extra, **input_settings(self.table)}
        )


def _resolve_table(data: Any, systems: Sequence[str] | None) -> PredictionTable:
    if isinstance(data, PredictionTable):
        return data
    return read_predictions(data, systems=systems)


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


def _labels(table: PredictionTable, classes: Any) -> tuple[Any, ...]:
    """Return the reported classes: `classes` (one label or a sequence of them), or all."""
    if classes is None or classes is EVERY_CLASS:
        return (table.default_positive(),) if table.is_binary else tuple(table.labels)
    if isinstance(classes, str | bytes) or not isinstance(classes, Iterable):
        classes = (classes,)
    labels = tuple(table.check_label(c, "classes") for c in classes)
    if table.is_binary and len(labels) != 1:
        raise InputError(
            f"`classes` names {len(labels)} classes of a binary task, which has one row: its "
            "positive class, against the other; name one, e.g. classes=1."
        )
    return labels


def _baselines(baselines: bool | Baselines) -> Baselines | None:
    if isinstance(baselines, Baselines):
        return baselines
    return Baselines() if baselines else None


def plan_comparison(
    data: Any,
    system_a: str | None,
    system_b: str | None,
    *,
    metric: Any,
    model: str | F1Model,
    rope: float,
    hdi_prob: float,
    draws: int,
    sampling: Sampling | None,
    classes: Any,
    baselines: bool | Baselines,
    rng: RNGLike,
) -> Plan:
    """Step 1: read the predictions, resolve the systems, classes and options."""
    named = [system_a, system_b] if system_a is not None and system_b is not None else None
    table = _resolve_table(data, named)
    system_a, system_b = _systems(table, system_a, system_b)
    spec = model if isinstance(model, F1Model) else F1Model(model)
    return Plan(
        table=table,
        system_a=system_a,
        system_b=system_b,
        measure=get_measure(metric),
        labels=_labels(table, classes),
        model=spec.name,
        prior=spec.prior or F1Prior(),
        sampling=sampling or Sampling(),
        rope=check_rope(rope),
        draws=check_positive_int(draws, "draws", minimum=2),
        hdi_prob=check_probability(hdi_prob, "hdi_prob", open_interval=True),
        baselines=_baselines(baselines),
        # macro / micro rows: multi-class, every class reported
        averages=not table.is_binary and classes is None,
        seed=resolve_seed(rng),
    )
