"""The result of a power analysis of the F1 models (Zhang et al. 2016, Table 3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from isbetter.core.errors import InputError
from isbetter.core.provenance import signature
from isbetter.core.validate import renamed_attribute
from isbetter.core.vocabulary import rope_text
from isbetter.inference.records import from_json_number, to_json_number

__all__ = ["PowerResult"]


@dataclass(frozen=True)
class PowerResult:
    """Result of :func:`isbetter.power_analysis`; it holds no draws, so it is its own summary.

    Attributes
    ----------
    goal : {"a_better", "equivalent", "b_better"}
        The decision counted as success (the HDI + ROPE rule).
    metric : str
        The measure compared.
    scenario : str
        Name of the generating distribution (``"custom"`` when given by hand).
    true_delta : float
        The generating distribution's difference of the measure.
    sizes : tuple of int
        Test-set sizes N.
    models : tuple of str
        Models compared.
    replicates : int
        Simulated test sets per size.
    rope, hdi_prob : float
        ROPE half-width and HDI mass of the decision rule.
    table : pandas.DataFrame
        Columns ``size, model, power, se, successes, replicates``; ``se`` is the
        binomial standard error ``sqrt(p (1 - p) / replicates)``.
    settings : dict
        Method, seed, draws, distribution, versions.
    """

    goal: str
    metric: str
    scenario: str
    true_delta: float
    sizes: tuple[int, ...]
    models: tuple[str, ...]
    replicates: int
    rope: float
    hdi_prob: float
    table: pd.DataFrame = field(repr=False, compare=False)
    settings: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    kind = "power"
    measure = renamed_attribute("measure", "metric")

    @property
    def signature(self) -> str:
        """The one-line reproducibility signature."""
        return signature({**self.settings, "rope": self.rope})

    @property
    def rows(self) -> tuple[dict[str, Any], ...]:
        """The rows of :attr:`table` as dictionaries of plain Python numbers."""
        return tuple(
            {k: (v.item() if hasattr(v, "item") else v) for k, v in rec.items()}
            for rec in self.table.to_dict(orient="records")
        )

    def power(self, size: int, model: str = "paired") -> float:
        """Return the estimated power of `model` at test-set size `size`."""
        t = self.table
        sel = t[(t["size"] == size) & (t["model"] == model)]
        if sel.empty:
            raise InputError(f"No power for size={size!r}, model={model!r} in this result.")
        return float(sel["power"].iloc[0])

    def summary(self) -> PowerResult:
        """Return the result itself: it is already light."""
        return self

    def to_frame(self) -> pd.DataFrame:
        """Columns ``size, model, power, se, successes, replicates``."""
        return self.table.copy()

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-safe nested data."""
        return {
            "kind": self.kind,
            "goal": self.goal,
            "metric": self.metric,
            "scenario": self.scenario,
            "true_delta": to_json_number(self.true_delta),
            "sizes": list(self.sizes),
            "models": list(self.models),
            "replicates": self.replicates,
            "rope": self.rope,
            "hdi_prob": self.hdi_prob,
            "rows": list(self.rows),
            "seed": self.settings.get("seed"),
            "settings": self.settings,
            "signature": self.signature,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PowerResult:
        """Rebuild from :meth:`to_dict`."""
        return cls(
            goal=data["goal"],
            metric=data["metric"] if "metric" in data else data["measure"],  # older files
            scenario=data["scenario"],
            true_delta=from_json_number(data["true_delta"]),
            sizes=tuple(int(n) for n in data["sizes"]),
            models=tuple(data["models"]),
            replicates=int(data["replicates"]),
            rope=float(data["rope"]),
            hdi_prob=float(data["hdi_prob"]),
            table=pd.DataFrame(list(data["rows"])),
            settings=dict(data["settings"]),
        )

    def __str__(self) -> str:
        """One line per size; ``isbetter.report.render(result, "text")`` gives the table."""
        what = f"{self.metric} ({self.scenario}, {rope_text(self.rope)})"
        lines = [f"power of {self.goal} on {what}"]
        for n in self.sizes:
            parts = ", ".join(f"{m} {self.power(n, m):.3f}" for m in self.models)
            lines.append(f"  N = {n}: {parts}")
        return "\n".join(lines)
