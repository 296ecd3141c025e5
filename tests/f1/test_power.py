"""Power analysis and the reproduction of SIGIR 2016 Table 3."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from isbetter import InputError
from isbetter.f1.measures import f1
from isbetter.f1.power import (
    SIGIR_SCENARIO_A,
    SIGIR_SCENARIO_B,
    JointDistribution,
    power_analysis,
)
from isbetter.report import render

# Zhang et al. (SIGIR 2016), Table 3: N -> (unpaired, paired)
TABLE3 = {
    "a": {
        500: (0.26, 0.30),
        1000: (0.41, 0.52),
        1500: (0.70, 0.76),
        2000: (0.79, 0.84),
        2500: (0.87, 0.90),
        3000: (0.92, 0.94),
        3500: (0.96, 0.97),
    },
    "b": {
        500: (0.00, 0.00),
        1000: (0.01, 0.22),
        1500: (0.26, 0.58),
        2000: (0.63, 0.81),
        2500: (0.72, 0.87),
        3000: (0.88, 0.96),
        3500: (0.92, 0.99),
    },
}
# The paper does not say how many simulated test sets stand behind each cell; its
# two-decimal numbers and its noise (e.g. unpaired (a) jumps 0.41 -> 0.70) suggest about
# 100. We assume 100 for the paper's binomial error.
PAPER_REPLICATES = 100
#: the same power computed once by an independent simulation (validation/f1_power_reference.py:
#: numpy's samplers, its own F1, HDI and decision; no code of isbetter); its header holds the
#: command and seed
REFERENCE = Path(__file__).resolve().parents[1] / "reference" / "sigir2016_power.csv"
#: per cell, |z| of the two simulations' difference below this many standard errors
Z_MAX = 4.0


def test_true_deltas_of_the_scenarios():
    assert SIGIR_SCENARIO_A.true_delta(f1) == pytest.approx(0.1)
    assert SIGIR_SCENARIO_B.true_delta(f1) == pytest.approx(0.0)


def test_simulated_counts_have_the_generating_distribution(rng):
    c = SIGIR_SCENARIO_A.sample_counts(1000, 400, rng)
    assert c.pos.shape == (400, 4)
    assert np.all(c.pos.sum(-1) + c.neg.sum(-1) == 1000)
    share = c.pos.sum(0) / c.pos.sum()
    # 400 x ~500 positives: each share has sd <= sqrt(0.25 / 200 000) ~ 0.0011
    np.testing.assert_allclose(share, SIGIR_SCENARIO_A.theta_pos, atol=0.005)


def test_power_analysis_small_run_and_reports():
    res = power_analysis(SIGIR_SCENARIO_A, sizes=[300, 3000], replicates=120, draws=1000, rng=4)
    assert list(res.table.columns) == ["size", "model", "power", "se", "successes", "replicates"]
    # power grows with N: at N=3000 Table 3 says ~0.93, at 300 far lower
    assert res.power(3000, "paired") > res.power(300, "paired") + 0.3
    assert res.true_delta == pytest.approx(0.1)
    same = power_analysis(SIGIR_SCENARIO_A, sizes=[300, 3000], replicates=120, draws=1000, rng=4)
    assert same.table.equals(res.table)
    text = render(res, "text")
    assert "power paired" in text and "seed:4" in text
    assert "f1" in text and "SIGIR 2016 scenario (a)" in text and "+0.100" in text
    assert "| N |" in render(res, "markdown")
    assert '"goal": "a_better"' in render(res, "json")


def test_power_analysis_iv():
    with pytest.raises(InputError, match="Unknown goal"):
        power_analysis(SIGIR_SCENARIO_A, sizes=[100], goal="better")
    with pytest.raises(InputError, match="`sizes` is empty"):
        power_analysis(SIGIR_SCENARIO_A, sizes=[])
    with pytest.raises(InputError, match="Unknown model"):
        power_analysis(SIGIR_SCENARIO_A, sizes=[100], models=["bayes"])
    with pytest.raises(InputError, match="sum to 1"):
        JointDistribution(0.5, (0.3, 0.3, 0.3, 0.3), (0.25,) * 4)
    with pytest.raises(InputError, match="must be a JointDistribution"):
        power_analysis({"mu": 0.5}, sizes=[100])


@pytest.mark.slow
@pytest.mark.parametrize(("scenario", "goal"), [("a", "a_better"), ("b", "equivalent")])
def test_reproduces_sigir_table3(scenario, goal):
    """Power of the paired and unpaired models against an independent simulation and Table 3.

    1 000 simulated test sets per cell (our se <= 0.016), 5 000 exact posterior draws
    each. Against the independent reference (REFERENCE: the same probability, 4 000 test
    sets per cell, se <= 0.008): per cell the difference within Z_MAX = 4 standard errors
    of the two binomial estimates (pooled p; at p = 0.5 that is +- 0.071, was +- 0.18
    against the paper alone), and over each model's 7 independent cells the sum of
    squared z-scores below the 99.9 % point of chi-square(7). Against the published
    Table 3, whose numbers carry their own error: per cell within 3.5 combined binomial
    standard errors (ours and the paper's, assumed 100 replicates; floor 0.01 for the
    zero cells); over the 14 cells of a scenario the sum of squared z-scores below the
    99.9 % point of chi-square(14). The paired model must beat the unpaired one.
    """
    dist = SIGIR_SCENARIO_A if scenario == "a" else SIGIR_SCENARIO_B
    sizes = sorted(TABLE3[scenario])
    res = power_analysis(dist, sizes=sizes, goal=goal, replicates=1000, draws=5000, rng=2016)
    ref = pd.read_csv(REFERENCE, comment="#").query("scenario == @scenario")
    assert sorted(ref["size"].unique()) == sizes and "--draws 5000 " in REFERENCE.read_text()
    for model, cells in ref.groupby("model"):
        ours = np.array([res.power(n, model) for n in cells["size"]])
        theirs, n_ref = cells["successes"] / cells["replicates"], cells["replicates"]
        pooled = (ours * 1000 + cells["successes"]) / (1000 + n_ref)
        se = np.sqrt(pooled * (1 - pooled) * (1 / 1000 + 1 / n_ref))
        z = np.divide(ours - theirs, se, out=np.zeros(len(se)), where=se > 0)
        assert np.all(np.abs(z) < Z_MAX), (scenario, model, list(zip(ours, theirs, z, strict=True)))
        assert (z**2).sum() < stats.chi2.ppf(0.999, len(z)), (scenario, model, z)
    chi2 = 0.0
    for n in sizes:
        for model, published in zip(("unpaired", "paired"), TABLE3[scenario][n], strict=True):
            ours = res.power(n, model)
            var = ours * (1 - ours) / 1000 + published * (1 - published) / PAPER_REPLICATES
            sd = max(np.sqrt(var), 0.01)
            z = (ours - published) / sd
            chi2 += z * z
            assert abs(z) < 3.5, (scenario, n, model, ours, published)
        assert res.power(n, "paired") >= res.power(n, "unpaired") - 0.03
    assert chi2 < stats.chi2.ppf(0.999, 2 * len(sizes)), chi2
