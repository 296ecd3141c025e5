"""The result of a power analysis of the F1 models (Zhang et al. 2016, Table 3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from isbetter.core.errors import InputError
from isbetter.core.provenance import signature
from isbetter.core.vocabulary import rope_text
from isbetter.inference.records import from_json_number, same_named, to_json_number

__all__ = ["PowerResult", "PowerSummary"]


@dataclass(frozen=True)
class _PowerHead:
    """What a power analysis and its summary both start with (see :class:`PowerResult`)."""

    goal: str
    measure: str
    scenario: str
    true_delta: float
    sizes: tuple[int, ...]
    models: tuple[str, ...]
    replicates: int
    rope: float
    hdi_prob: float


@dataclass(frozen=True)
class PowerSummary(_PowerHead):
    """The light record of a :class:`PowerResult` (it holds no draws either)."""

    rows: tuple[dict[str, Any], ...]
    settings: dict[str, Any]

    kind = "power"

    @property
    def signature(self) -> str:
        """The one-line reproducibility signature."""
        return signature({**self.settings, "rope": self.rope})

    def to_frame(self) -> pd.DataFrame:
        """Columns ``size, model, power, se, successes, replicates``."""
        return pd.DataFrame(list(self.rows))

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-safe nested data."""
        return {
            "kind": self.kind,
            "goal": self.goal,
            "measure": self.measure,
            "scenario": self.scenario,
            "true_delta": to_json_number(self.true_delta),
            "sizes": list(self.sizes),
            "models": list(self.models),
            "replicates": self.replicates,
            "rope": self.rope,
            "hdi_prob": self.hdi_prob,
            "rows": [dict(r) for r in self.rows],
            "seed": self.settings.get("seed"),
            "settings": self.settings,
            "signature": self.signature,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PowerSummary:
        """Rebuild from :meth:`to_dict`."""
        return cls(
            goal=data["goal"],
            measure=data["measure"],
            scenario=data["scenario"],
            true_delta=from_json_number(data["true_delta"]),
            sizes=tuple(int(n) for n in data["sizes"]),
            models=tuple(data["models"]),
            replicates=int(data["replicates"]),
            rope=float(data["rope"]),
            hdi_prob=float(data["hdi_prob"]),
            rows=tuple(dict(r) for r in data["rows"]),
            settings=dict(data["settings"]),
        )


@dataclass(frozen=True)
class PowerResult(_PowerHead):
    """Result of :func:`isbetter.power_analysis`.

    Attributes
    ----------
    goal : {"a_better", "equivalent", "b_better"}
        The decision counted as success (the HDI + ROPE rule).
    measure : str
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

    table: pd.DataFrame = field(repr=False, compare=False)
    settings: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def power(self, size: int, model: str = "paired") -> float:
        """Return the estimated power of `model` at test-set size `size`."""
        t = self.table
        sel = t[(t["size"] == size) & (t["model"] == model)]
        if sel.empty:
            raise InputError(f"No power for size={size!r}, model={model!r} in this result.")
        return float(sel["power"].iloc[0])

    def summary(self) -> PowerSummary:
        """Return the light record of this result."""
        rows = tuple(
            {k: (v.item() if hasattr(v, "item") else v) for k, v in rec.items()}
            for rec in self.table.to_dict(orient="records")
        )
        return same_named(self, PowerSummary, rows=rows)

    def to_frame(self) -> pd.DataFrame:
        """Columns ``size, model, power, se, successes, replicates``."""
        return self.table.copy()

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary of :meth:`summary`."""
        return self.summary().to_dict()

    def __str__(self) -> str:
        """One line per size; ``isbetter.report.render(result, "text")`` gives the table."""
        what = f"{self.measure} ({self.scenario}, {rope_text(self.rope)})"
        lines = [f"power of {self.goal} on {what}"]
        for n in self.sizes:
            parts = ", ".join(f"{m} {self.power(n, m):.3f}" for m in self.models)
            lines.append(f"  N = {n}: {parts}")
        return "\n".join(lines)
