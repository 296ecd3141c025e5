"""The result of an F1 comparison on one test set: one comparison per row.

Zhang et al. (SIGIR 2016) report one row per class (Tables 4–6); a multi-class
comparison adds rows ``"macro"`` and ``"micro"``. Each row is a
:class:`~isbetter.results.comparison.ComparisonResult` (label = the row), so
ranking, reports and plots treat it like every other comparison; the
collection adds what concerns all rows: the across-class T- and S-tests, the
MCMC diagnostics of a hierarchical fit, the counts and the prior draws.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError
from isbetter.core.provenance import signature
from isbetter.core.validate import renamed_attribute
from isbetter.core.vocabulary import rope_text
from isbetter.inference.records import MCMCDiagnostics, TestResult
from isbetter.results.comparison import ComparisonResult

__all__ = ["F1Result"]


@dataclass(frozen=True)
class F1Result:
    """Bayesian comparison of two classifiers on one test set, one row per class.

    Attributes
    ----------
    system_a, system_b : str
        The systems; ``delta`` is positive when A is better.
    metric : str
        The measure compared (``"f1"``, ``"precision"``, ``"dcf(1,10,0.01)"``, ...).
    higher_is_better : bool
        Direction of the measure (for DCF, ``delta = DCF(B) - DCF(A)``).
    model : {"paired", "unpaired", "hierarchical"}
        The model: Zhang et al.'s (2016) paired or unpaired model, or their
        hierarchical model of the confusion matrices (ICDM 2015).
    rope, hdi_prob : float
        ROPE half-width and HDI mass used for the decisions.
    comparisons : dict of str to ComparisonResult
        Per row (class label, ``"macro"``, ``"micro"``), the comparison, with its
        ``observed`` scores, ``estimate`` (mean, sd, MC error, HDI, Bayes factors, decision)
        and frequentist ``tests``.
    counts : dict or None
        Per class, the joint outcome counts the models saw
        (:class:`~isbetter.f1.predictions.JointCounts`); None in the light form.
    prior_draws : dict of str to numpy.ndarray, or None
        Per row, prior draws of delta (for the Savage–Dickey plot); None in the
        light form.
    across_classes : tuple of TestResult
        Yang & Liu's T-test and S-test over the per-class scores (empty for a
        binary task or without baselines).
    diagnostics : MCMCDiagnostics or None
        Convergence diagnostics when the rows were sampled with MCMC.
    settings : dict
        Method, seed, measure, prior, draws, rope, versions.
    """

    system_a: str
    system_b: str
    metric: str
    higher_is_better: bool
    model: str
    rope: float
    hdi_prob: float
    comparisons: dict[str, ComparisonResult] = field(repr=False, compare=False)
    counts: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    prior_draws: dict[str, np.ndarray] | None = field(default=None, repr=False, compare=False)
    across_classes: tuple[TestResult, ...] = field(default=(), repr=False, compare=False)
    diagnostics: MCMCDiagnostics | None = field(default=None, compare=False)
    settings: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    kind = "f1"
    measure = renamed_attribute("measure", "metric")

    @property
    def classes(self) -> tuple[str, ...]:
        """Names of the rows: the classes, then ``"macro"`` and ``"micro"`` if present."""
        return tuple(self.comparisons)

    @property
    def rows(self) -> tuple[ComparisonResult, ...]:
        """The comparison of each row, in order."""
        return tuple(self.comparisons.values())

    @property
    def signature(self) -> str:
        """The one-line reproducibility signature."""
        return signature({**self.settings, "rope": self.rope})

    def comparison(self, label: Any = None) -> ComparisonResult:
        """Return the comparison of row `label` (default: the first row)."""
        key = self.classes[0] if label is None else str(label)
        if key not in self.comparisons:
            avail = ", ".join(repr(c) for c in self.classes)
            raise InputError(f"`label`: no class {label!r} in the result. Classes: {avail}.")
        return self.comparisons[key]

    def draws(self, label: Any = None) -> np.ndarray:
        """Posterior draws of delta for row `label` (default: the first row)."""
        return np.asarray(self.comparison(label)._posterior().draws)  # type: ignore[attr-defined]

    def row(self, label: Any = None) -> dict[str, Any]:
        """Return the flat table row of `label` (default: the first) as a dict."""
        return self.comparison(label).to_record()

    def summary(self) -> F1Result:
        """Return the light form: each row's summary and the across-class tests, no draws."""
        rows = {key: c.summary() for key, c in self.comparisons.items()}
        return replace(self, comparisons=rows, counts=None, prior_draws=None)

    def to_frame(self) -> pd.DataFrame:
        """One row per class (and macro / micro): observed scores, estimate, tests."""
        return pd.DataFrame([c.to_record() for c in self.comparisons.values()])

    @property
    def table(self) -> pd.DataFrame:
        """Same as :meth:`to_frame`."""
        return self.to_frame()

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-safe nested data, no draws."""
        return {
            "kind": self.kind,
            "system_a": self.system_a,
            "system_b": self.system_b,
            "metric": self.metric,
            "higher_is_better": self.higher_is_better,
            "model": self.model,
            "rope": self.rope,
            "hdi_prob": self.hdi_prob,
            "rows": [r.to_dict() for r in self.rows],
            "across_classes": [t.to_dict() for t in self.across_classes],
            "diagnostics": None if self.diagnostics is None else self.diagnostics.to_dict(),
            "seed": self.settings.get("seed"),
            "settings": self.settings,
            "signature": self.signature,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> F1Result:
        """Rebuild the light form from :meth:`to_dict`."""
        diag = data.get("diagnostics")
        rows = [ComparisonResult.from_dict(r) for r in data["rows"]]
        return cls(
            system_a=data["system_a"],
            system_b=data["system_b"],
            metric=data["metric"] if "metric" in data else data["measure"],  # older files
            higher_is_better=bool(data["higher_is_better"]),
            model=data["model"],
            rope=float(data["rope"]),
            hdi_prob=float(data["hdi_prob"]),
            comparisons={str(r.label): r for r in rows},
            across_classes=tuple(TestResult.from_dict(t) for t in data["across_classes"]),
            settings=dict(data["settings"]),
            diagnostics=None if diag is None else MCMCDiagnostics.from_dict(diag),
        )

    def __str__(self) -> str:
        """One line per row; ``isbetter.report.render(result, "text")`` gives the table."""
        head = (
            f"{self.model} comparison of {self.metric}: {self.system_a} (A) vs "
            f"{self.system_b} (B), {rope_text(self.rope)}"
        )
        return "\n".join([head, *(f"  {c}" for c in self.comparisons.values())])
