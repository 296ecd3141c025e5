"""Reference reproductions of the hierarchical model (slow: MCMC at default settings).

Provenance: ``tests/reference/reference_values.csv`` rows ``hier_R2016_*``: the
published results of Corani et al.'s R/Stan code
(BayesianTestsML/tutorial, hierarchical/analyze_uci_with_rope.R, results file
uciResults_StdUpper-1000-samplingType-student.xls, 8000 posterior draws), on the
54 UCI data sets x 10 runs x 10 folds shipped in ``data/uci_benavoli2017``
(full-precision accuracy, d = a - b), rope 0.01, rho 0.1. The same rows record
baycomp 1.0.3's numbers on the same data. Both are argmax counts.

Tolerance: +-0.03 absolute (the published tolerance hint). The Monte Carlo
standard error of an argmax count p with our default 4 x 2000 draws and an
effective sample size of the counts of at least ~800 is sqrt(p(1-p)/800) <= 0.018;
the reference's own MC error (8000 draws) adds about 0.005-0.01 more.
"""

from __future__ import annotations

import csv
import warnings

import numpy as np
import pytest

from isbetter import read_scores
from isbetter.models.hierarchical import HierarchicalModel

pytestmark = pytest.mark.slow

CASES = ["hier_R2016_nbc_aode", "hier_R2016_nbc_hnb", "hier_R2016_hnb_j48"]


@pytest.fixture(scope="module")
def reference(uci_long_path):
    from pathlib import Path

    path = Path(__file__).resolve().parent / "reference" / "reference_values.csv"
    with open(path, newline="", encoding="utf-8") as fh:
        return {row["case_id"]: row for row in csv.DictReader(fh)}


@pytest.fixture(scope="module")
def table(uci_long_path):
    return read_scores(uci_long_path, dataset="dataset_id", system="classifier", score="accuracy")


@pytest.fixture(scope="module")
def model():
    return HierarchicalModel(54).compile()


@pytest.mark.parametrize("case", CASES)
def test_uci_reference_probabilities(case, reference, table, model):
    row = reference[case]
    scores = table.paired(row["system_a"], row["system_b"])
    assert scores.n_datasets == 54 and set(scores.n_folds) == {10} and set(scores.n_runs) == {10}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # default settings must converge: no ConvergenceWarning
        res = model.fit(scores, rope=0.01, rng=20240917)
    expected = (float(row["p_a_better"]), float(row["p_rope"]), float(row["p_b_better"]))
    got = res.probabilities().as_tuple()
    np.testing.assert_allclose(got, expected, atol=0.03, err_msg=f"{case}: {got} vs {expected}")
    d = res.diagnostics
    assert d.divergences == 0 and d.r_hat_max <= 1.01 and d.converged


def test_uci_reference_is_reproducible(table, model):
    scores = table.paired("hnb", "j48")
    first = model.fit(scores, rope=0.01, rng=3)
    second = model.fit(scores, rope=0.01, rng=3)
    assert first.probabilities() == second.probabilities()
    assert first.predictive == second.predictive
