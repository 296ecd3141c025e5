"""Frequentist baselines of item-level pairs: McNemar mid-p, paired bootstrap, Miller, unpaired z.

(Named test_item_baselines.py: tests/f1/test_baselines.py has the plain name.)
"""

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.proportion import test_proportions_2indep as proportions_2indep

from isbetter.items import baselines
from isbetter.items.baselines import (
    clustered_se,
    clustered_se_test,
    item_baselines,
    mcnemar_midp,
    paired_bootstrap_test,
    unpaired_z_test,
)
from isbetter.tagging import mcnemar_midp as tagging_mcnemar_midp


def test_mcnemar_midp_is_the_exact_test_minus_the_point_probability() -> None:
    for b, c in [(1, 7), (3, 9), (10, 4), (0, 5), (25, 40)]:
        exact = mcnemar([[0, b], [c, 0]], exact=True).pvalue  # statsmodels: 2 P(X <= min)
        point = stats.binom.pmf(min(b, c), b + c, 0.5)
        assert mcnemar_midp(b, c) == pytest.approx(min(exact - point, 1.0), abs=1e-12)


def test_mcnemar_midp_has_one_home() -> None:
    assert tagging_mcnemar_midp is mcnemar_midp


def test_paired_bootstrap_of_binary_items_by_hand() -> None:
    # 30 items only A right, 10 only B, 60 ties: d* is (n10* - n01*) / 100 with multinomial counts
    d = np.array([1.0] * 30 + [-1.0] * 10 + [0.0] * 60)
    r = paired_bootstrap_test(d, resamples=20_000, rng=np.random.default_rng(0))
    assert r.estimate == pytest.approx(0.2)
    # the bootstrap sd of a mean: sd(d, ddof=0) / sqrt(N)
    sd = d.std() / 10
    lo, hi = r.interval.low, r.interval.high
    assert lo == pytest.approx(0.2 - 1.96 * sd, abs=0.012)
    assert hi == pytest.approx(0.2 + 1.96 * sd, abs=0.012)
    assert r.p_value < 0.01


def test_paired_bootstrap_matches_resampling_items_directly() -> None:
    gen = np.random.default_rng(1)
    d = np.round(gen.normal(0.02, 0.3, 200), 2)
    ours = paired_bootstrap_test(d, resamples=20_000, rng=np.random.default_rng(2))
    idx = np.random.default_rng(3).integers(0, d.size, (20_000, d.size))
    naive = d[idx].mean(axis=1)
    lo, hi = np.quantile(naive, [0.025, 0.975])
    assert ours.interval.low == pytest.approx(lo, abs=0.004)
    assert ours.interval.high == pytest.approx(hi, abs=0.004)
    p_naive = 2 * min(np.mean(naive <= 0), np.mean(naive >= 0))
    assert ours.p_value == pytest.approx(p_naive, abs=0.03)


def test_paired_bootstrap_by_counts_and_by_index_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    d = np.round(np.random.default_rng(8).normal(0.05, 0.3, 300), 1)  # ~20 distinct values
    by_counts = paired_bootstrap_test(d, resamples=20_000, rng=np.random.default_rng(9))
    monkeypatch.setattr(baselines, "MULTINOMIAL_UNITS", 0)
    by_index = paired_bootstrap_test(d, resamples=20_000, rng=np.random.default_rng(9))
    assert by_index.interval.low == pytest.approx(by_counts.interval.low, abs=0.003)
    assert by_index.interval.high == pytest.approx(by_counts.interval.high, abs=0.003)
    assert by_index.p_value == pytest.approx(by_counts.p_value, abs=0.01)


def test_paired_bootstrap_is_seeded() -> None:
    d = [1, 0, 0, -1, 1, 1, 0]
    a = paired_bootstrap_test(d, rng=np.random.default_rng(4))
    assert a == paired_bootstrap_test(d, rng=np.random.default_rng(4))


def test_clustered_se_without_clusters_is_the_standard_error_of_the_mean() -> None:
    d = np.random.default_rng(5).normal(0.1, 1, 50)
    assert clustered_se(d) == pytest.approx(stats.sem(d), rel=1e-12)


def test_clustered_se_is_statsmodels_cluster_robust_up_to_millers_n_minus_1() -> None:
    """Miller's eq. (4) = statsmodels' uncorrected cluster-robust variance of a mean, except
    that its within-item term divides by N (N - 1), as the CLT standard error, not N^2."""
    gen = np.random.default_rng(6)
    groups = np.repeat(np.arange(20), gen.integers(1, 8, 20))
    d = gen.normal(0.1, 1, groups.size) + gen.normal(0, 1, 20)[groups]
    n = d.size
    fit = sm.OLS(d, np.ones(n)).fit(
        cov_type="cluster", cov_kwds={"groups": groups, "use_correction": False}
    )
    e = d - d.mean()
    miller = fit.bse[0] ** 2 + (e @ e) * (1 / (n * (n - 1)) - 1 / n**2)
    assert clustered_se(d, groups) ** 2 == pytest.approx(miller, rel=1e-10)


def test_clustered_se_by_hand() -> None:
    # e = (.5, .5, -.5, -.5): CLT 1/(4*3) = 1/12; cross terms 2 * (2 * .25) / 16 = 1/16
    assert clustered_se([1.0, 1.0, 0.0, 0.0], [0, 0, 1, 1]) ** 2 == pytest.approx(1 / 12 + 1 / 16)
    r = clustered_se_test([1.0, 1.0, 0.0, 0.0], [0, 0, 1, 1])
    se = np.sqrt(1 / 12 + 1 / 16)
    assert r.statistic == pytest.approx(0.5 / se)
    assert r.p_value == pytest.approx(2 * stats.norm.sf(0.5 / se))
    assert r.interval.high - 0.5 == pytest.approx(stats.norm.ppf(0.975) * se)


def test_clustered_se_test_of_constant_differences_does_not_apply() -> None:
    r = clustered_se_test([0.0, 0.0, 0.0])
    assert np.isnan(r.p_value) and r.interval is None


def test_unpaired_z_is_lm_evaluation_harness_comparator() -> None:
    a = np.array([1] * 62 + [0] * 38, float)
    b = np.array([1] * 55 + [0] * 45, float)
    r = unpaired_z_test(a, b)
    se_a, se_b = stats.sem(a), stats.sem(b)  # lm-eval's mean_stderr: sample sd / sqrt(n)
    z = (0.62 - 0.55) / np.hypot(se_a, se_b)
    assert r.statistic == pytest.approx(z)
    assert r.p_value == pytest.approx(2 * stats.norm.sf(abs(z)))
    # statsmodels' Wald test of two independent proportions uses sd with ddof=0
    wald = proportions_2indep(62, 100, 55, 100, method="wald", compare="diff")
    ratio = np.sqrt(99 / 100)  # sample sd (ddof=1) against ddof=0
    assert r.statistic == pytest.approx(wald.statistic * ratio, rel=1e-10)


def test_pairing_shows_what_it_buys() -> None:
    # strongly correlated models: B is A with 8 items lost and 1 gained
    a = np.array([1] * 60 + [0] * 40, float)
    b = a.copy()
    b[:8] = 0
    b[70] = 1
    tests = {t.name: t for t in item_baselines(a, b, binary=True, rng=np.random.default_rng(7))}
    assert list(tests) == ["mcnemar_midp", "paired_bootstrap", "clustered_se", "unpaired_z"]
    assert tests["mcnemar_midp"].p_value < 0.05 < tests["unpaired_z"].p_value
    assert tests["clustered_se"].p_value < 0.05
    graded = item_baselines(a * 0.5, b, binary=False, rng=np.random.default_rng(7))
    assert [t.name for t in graded] == ["paired_bootstrap", "clustered_se", "unpaired_z"]
