"""Load the published reference values (tests/reference/reference_values.csv).

Provenance: one row per published number (see data/README.md for the data);
each row names where its number was published (column ``source``) and how it
was verified (``verified_here``).
Orientation is always d = score(a) - score(b), p_a_better = P(d > rope).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

REFERENCE = Path(__file__).resolve().parent / "reference" / "reference_values.csv"
DATA = Path(__file__).resolve().parents[1] / "data" / "uci_benavoli2017"


def reference(case_id: str) -> pd.Series:
    table = pd.read_csv(REFERENCE)
    row = table[table["case_id"] == case_id]
    assert len(row) == 1, case_id
    return row.iloc[0]


def expected_probabilities(case_id: str) -> tuple[float, float, float]:
    row = reference(case_id)
    values = [float(row[c]) for c in ("p_a_better", "p_rope", "p_b_better")]
    # rope = 0 rows publish two numbers; the ROPE probability is then 0
    return tuple(0.0 if math.isnan(v) else v for v in values)  # type: ignore[return-value]


def uci_long() -> pd.DataFrame:
    return pd.read_csv(DATA / "uci_cv_accuracy_long.csv")


def baycomp_long() -> pd.DataFrame:
    return pd.read_csv(DATA / "baycomp_docs_accuracies_long.csv")
