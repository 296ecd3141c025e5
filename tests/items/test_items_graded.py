"""Graded items over subtasks: the hierarchical model of DESIGN §3.2 with rho = 0 (§4.3).

Items are independent test cases, not overlapping folds: each item is one observation
(a "fold" of one run), each subtask a data set, and rho = 0. The model of per-fold scores
takes that as it is, subtasks of different sizes included; nothing new is needed.
"""

import numpy as np
import pandas as pd
import pytest

import isbetter
from isbetter.cv.hierarchical.model import hierarchical_test


def _graded(rng, sizes, shift):
    rows = []
    for t, n in enumerate(sizes):
        base = rng.uniform(0, 1, n)
        a = np.clip(base + rng.normal(shift, 0.2, n), 0, 1)
        b = np.clip(base + rng.normal(0.0, 0.2, n), 0, 1)
        for i in range(n):
            for system, score in (("A", a[i]), ("B", b[i])):
                rows.append(
                    {
                        "dataset": f"task{t}",
                        "system": system,
                        "run": 1,
                        "fold": i + 1,
                        "score": score,
                    }
                )
    return isbetter.read_scores(pd.DataFrame(rows)).paired("A", "B")


@pytest.mark.filterwarnings("ignore::isbetter.core.errors.ConvergenceWarning")
def test_graded_items_fit_the_hierarchical_model_with_rho_zero():
    scores = _graded(np.random.default_rng(0), [40, 55, 70, 35], shift=0.1)
    res = hierarchical_test(scores, rope=0.01, rho=0.0, draws=500, rng=1)
    assert res.settings["rho_used"] == [0.0]
    assert list(scores.n_folds) == [40, 55, 70, 35]  # one observation per item, ragged
    assert res.p_a_better > 0.9  # A's items score 0.1 higher
