"""The result of a paired F1 comparison and the summary of one row (Zhang et al. 2016).

:class:`F1ComparisonResult` holds one row per class (the paper's Tables 4-6) and
the per-class :class:`~isbetter.decision.ComparisonResult` objects;
:func:`summarise_delta` turns draws of a difference into one such row. Built by
:func:`isbetter.f1_compare.compare_f1`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from isbetter._errors import InputError
from isbetter.decision import ComparisonResult
from isbetter.predictions import JointCounts
from isbetter.summary import decide, hdi, mcse_mean, savage_dickey_bf01

__all__ = ["BASELINE_COLUMNS", "SUMMARY_COLUMNS", "F1ComparisonResult", "summarise_delta"]

#: columns of :attr:`F1ComparisonResult.table` from the Bayesian summary
SUMMARY_COLUMNS = (
    "mean",
    "sd",
    "mcse",
    "hdi_low",
    "hdi_high",
    "p_below_0",
    "p_above_0",
    "p_a_better",
    "p_rope",
    "p_b_better",
    "pct_rope",
    "bf01",
    "decision",
)
#: baseline p-value columns
BASELINE_COLUMNS = (
    "sign_p",
    "ptest_p",
    "mcnemar_p",
    "mcnemar_chi2_p",
    "bootstrap_p",
    "bootstrap_low",
    "bootstrap_high",
    "randomization_p",
)


def summarise_delta(
    delta: np.ndarray,
    prior_delta: np.ndarray | None,
    *,
    rope: float,
    hdi_prob: float = 0.95,
    ess: float | None = None,
) -> dict[str, Any]:
    """Summarise posterior draws of a difference as one row of Zhang et al.'s tables.

    Parameters
    ----------
    delta : numpy.ndarray
        Posterior draws (positive: A better).
    prior_delta : numpy.ndarray or None
        Prior draws for the Savage–Dickey Bayes factor (NaN when None).
    rope : float
        ROPE half-width.
    hdi_prob : float, default: 0.95
        Mass of the highest-density interval.
    ess : float, optional
        Effective sample size for the Monte Carlo error (default: independent draws).

    Returns
    -------
    dict
        Keys :data:`SUMMARY_COLUMNS`; probabilities as fractions, ``pct_rope`` in percent.

    Examples
    --------
    >>> import numpy as np
    >>> row = summarise_delta(np.zeros(100), None, rope=0.05)
    >>> row["decision"], row["pct_rope"], row["hdi_low"], row["hdi_high"]
    ('≈', 100.0, 0.0, 0.0)
    """
    d = np.asarray(delta, dtype=float)
    lo, hi = hdi(d, hdi_prob)
    mean = float(d.mean())
    p_rope = float(np.mean((d >= -rope) & (d <= rope)))
    return {
        "mean": mean,
        "sd": float(d.std(ddof=1)) if d.size > 1 else 0.0,
        "mcse": mcse_mean(d, ess),
        "hdi_low": float(lo),
        "hdi_high": float(hi),
        "p_below_0": float(np.mean(d < 0)),
        "p_above_0": float(np.mean(d > 0)),
        "p_a_better": float(np.mean(d > rope)),
        "p_rope": p_rope,
        "p_b_better": float(np.mean(d < -rope)),
        "pct_rope": 100.0 * p_rope,
        "bf01": float("nan") if prior_delta is None else savage_dickey_bf01(d, prior_delta),
        "decision": decide(float(lo), float(hi), mean, rope),
    }


@dataclass(frozen=True)
class F1ComparisonResult:
    """Paired Bayesian comparison of two classifiers on one test set, per class.

    Attributes
    ----------
    system_a, system_b : str
        The systems; ``delta`` is positive when A is better.
    measure : str
        The measure compared (``"f1"``, ``"precision"``, ``"dcf(1,10,0.01)"``, ...).
    higher_is_better : bool
        Direction of the measure (for DCF, ``delta = DCF(B) - DCF(A)``).
    model : {"paired", "unpaired"}
        The model of Zhang et al. (2016).
    rope, hdi_prob : float
        ROPE half-width and HDI mass used for the decisions.
    table : pandas.DataFrame
        One row per class: ``class, n, n_pos, score_a, score_b, observed`` (the
        observed measures and their difference), the Bayesian summary
        (:data:`SUMMARY_COLUMNS`) and, if computed, the baseline p-values
        (:data:`BASELINE_COLUMNS`). Raw floats; ``pct_rope`` is in percent.
    comparisons : dict of str to ComparisonResult
        Per class, the comparison as a generic result (draws of delta inside).
    counts : dict of str to JointCounts
        Per class, the joint outcome counts the models saw.
    prior_draws : dict of str to numpy.ndarray
        Per class, prior draws of delta (for the Savage–Dickey plot).
    macro_tests : dict
        Yang & Liu's T-test and S-test over the per-class scores
        (``t_test_p``, ``s_test_p``; empty for a binary task or without baselines).
    settings : dict
        Method, seed, measure, prior, draws, rope, versions.
    """

    system_a: str
    system_b: str
    measure: str
    higher_is_better: bool
    model: str
    rope: float
    hdi_prob: float
    table: pd.DataFrame = field(repr=False, compare=False)
    comparisons: dict[str, ComparisonResult] = field(repr=False, compare=False)
    counts: dict[str, JointCounts] = field(repr=False, compare=False)
    prior_draws: dict[str, np.ndarray] = field(repr=False, compare=False)
    macro_tests: dict[str, float] = field(default_factory=dict, repr=False, compare=False)
    settings: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def classes(self) -> tuple[str, ...]:
        """Class names of the rows."""
        return tuple(self.comparisons)

    def draws(self, label: Any = None) -> np.ndarray:
        """Posterior draws of delta for class `label` (default: the first row)."""
        return np.asarray(self._comparison(label).posterior.draws)  # type: ignore[attr-defined]

    def _comparison(self, label: Any) -> ComparisonResult:
        key = self.classes[0] if label is None else str(label)
        if key not in self.comparisons:
            avail = ", ".join(repr(c) for c in self.classes)
            raise InputError(f"`label`: no class {label!r} in the result. Classes: {avail}.")
        return self.comparisons[key]

    def row(self, label: Any = None) -> dict[str, Any]:
        """Return the table row of class `label` (default: the first) as a dict."""
        key = self._comparison(label)  # validates
        del key
        name = self.classes[0] if label is None else str(label)
        return self.to_rows()[self.classes.index(name)]

    def to_rows(self) -> list[dict[str, Any]]:
        """JSON-safe rows of :attr:`table` (non-finite numbers become None)."""
        rows = []
        for rec in self.table.to_dict(orient="records"):
            out = {}
            for k, v in rec.items():
                if isinstance(v, np.generic):
                    v = v.item()
                if isinstance(v, float) and not np.isfinite(v):
                    v = None
                out[str(k)] = v
            rows.append(out)
        return rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dictionary: the fields, the rows and the macro tests."""
        return {
            "method": self.settings.get("method"),
            "system_a": self.system_a,
            "system_b": self.system_b,
            "measure": self.measure,
            "higher_is_better": self.higher_is_better,
            "model": self.model,
            "rope": self.rope,
            "hdi_prob": self.hdi_prob,
            "rows": self.to_rows(),
            "macro_tests": {
                k: (v if np.isfinite(v) else None) for k, v in self.macro_tests.items()
            },
            "settings": self.settings,
        }

    def __str__(self) -> str:
        from isbetter.report import f1_to_text

        return f1_to_text(self)
