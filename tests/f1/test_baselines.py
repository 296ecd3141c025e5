import itertools

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from isbetter.f1.baselines import (
    bootstrap_test,
    dcf_proportion_test,
    macro_s_test,
    macro_t_test,
    mcnemar_test,
    p_test,
    randomization_test,
    s_test,
)
from isbetter.f1.measures import dcf, f1
from isbetter.f1.predictions import JointCounts

C = JointCounts(pos=np.array([50, 12, 3, 5]), neg=np.array([2, 4, 6, 40]))


def test_s_test_and_mcnemar_agree_with_reference_implementations():
    # 18 documents only A gets right, 7 only B
    assert s_test(C) == pytest.approx(stats.binomtest(18, 25, 0.5).pvalue, rel=1e-12)
    table = [[50 + 40, 18], [7, 5 + 2]]
    assert mcnemar_test(C, exact=True) == pytest.approx(mcnemar(table, exact=True).pvalue)
    chi2 = (abs(18 - 7) - 1) ** 2 / 25  # continuity-corrected McNemar statistic
    assert mcnemar_test(C, exact=False) == pytest.approx(stats.chi2.sf(chi2, 1), rel=1e-12)


def test_p_test_is_the_pooled_two_proportion_z_test():
    n = 122
    ka, kb = 50 + 40 + 18, 50 + 40 + 7
    pbar = (ka + kb) / (2 * n)
    z = (ka / n - kb / n) / np.sqrt(pbar * (1 - pbar) * 2 / n)
    assert p_test(C) == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-10)


def test_no_disagreement_gives_p_one(rng):
    same = JointCounts(pos=np.array([10, 0, 0, 5]), neg=np.array([3, 0, 0, 20]))
    assert s_test(same) == 1.0 and mcnemar_test(same) == 1.0 and p_test(same) == 1.0
    b = bootstrap_test(same, f1, resamples=500, rng=rng)
    assert b.p_value == 1.0 and b.interval.low == b.interval.high == 0.0
    assert randomization_test(same, f1, resamples=500, rng=rng).p_value == 1.0


def test_randomization_matches_exact_permutation_test(rng):
    c = JointCounts(pos=np.array([30, 3, 1, 10]), neg=np.array([5, 1, 2, 48]))
    # exact: enumerate every way of exchanging the 7 discordant documents' predictions
    docs = [(0, 1)] * 3 + [(0, 2)] * 1 + [(1, 1)] * 1 + [(1, 2)] * 2  # (neg?, event)

    def delta(pos, neg):
        ta, fa, na = pos[0] + pos[1], neg[0] + neg[1], pos[2] + pos[3]
        tb, fb, nb = pos[0] + pos[2], neg[0] + neg[2], pos[1] + pos[3]
        return 2 * ta / (2 * ta + fa + na) - 2 * tb / (2 * tb + fb + nb)

    obs = delta(c.pos, c.neg)
    hits = 0
    for flips in itertools.product([0, 1], repeat=len(docs)):
        pos, neg = c.pos.copy(), c.neg.copy()
        for (is_neg, ev), f in zip(docs, flips, strict=True):
            if f:
                arr = neg if is_neg else pos
                arr[ev] -= 1
                arr[3 - ev] += 1
        hits += abs(delta(pos, neg)) >= abs(obs) - 1e-12
    exact = hits / 2 ** len(docs)
    r = randomization_test(c, f1, resamples=20_000, rng=rng)
    assert r.estimate == pytest.approx(obs) and r.name == "randomization"
    # 4 Monte Carlo standard errors of a proportion estimated from 20 000 resamples
    assert abs(r.p_value - exact) < 4 * np.sqrt(exact * (1 - exact) / 20_000) + 1e-4


def test_bootstrap_matches_normal_theory_for_accuracy_difference(rng):
    # for accuracy, delta is a mean over documents: its bootstrap sd is sd(d_i)/sqrt(N)
    big = JointCounts(pos=np.array([2000, 400, 250, 350]), neg=np.array([300, 200, 300, 2200]))
    from isbetter.f1.measures import accuracy

    r = bootstrap_test(big, accuracy, resamples=10_000, rng=rng)
    n = big.n
    d_i = np.repeat([0, 1, -1, 0], [2000 + 2200, 400 + 300, 250 + 200, 350 + 300])
    se = d_i.std() / np.sqrt(n)
    low, high = r.interval.low, r.interval.high
    mid = (low + high) / 2
    assert r.estimate == pytest.approx(d_i.mean())
    # interval half-width 1.96 se; the 2.5 % quantile's MC sd is ~0.012 se at M = 10 000
    assert (high - low) / 2 == pytest.approx(1.96 * se, rel=0.05)
    assert mid == pytest.approx(d_i.mean(), abs=0.1 * se)


@pytest.mark.parametrize(
    "counts",
    [C, JointCounts(pos=np.array([50, 6, 6, 5]), neg=np.array([2, 4, 9, 40]))],  # 2nd: a tie
)
def test_bootstrap_and_randomization_mirror_under_swap(counts):
    seed = 7
    for test in (bootstrap_test, randomization_test):
        r1 = test(counts, f1, resamples=2000, rng=np.random.default_rng(seed))
        r2 = test(counts.swapped(), f1, resamples=2000, rng=np.random.default_rng(seed))
        assert r1.estimate == pytest.approx(-r2.estimate)
        assert r1.p_value == pytest.approx(r2.p_value)
    b1 = bootstrap_test(counts, f1, resamples=2000, rng=np.random.default_rng(seed))
    b2 = bootstrap_test(counts.swapped(), f1, resamples=2000, rng=np.random.default_rng(seed))
    assert (b1.interval.low, b1.interval.high) == pytest.approx(
        (-b2.interval.high, -b2.interval.low)
    )


def test_dcf_proportion_test_by_hand():
    c = JointCounts(pos=np.array([80, 10, 4, 6]), neg=np.array([5, 20, 10, 865]))
    m = dcf(1.0, 10.0, 0.01)
    (ca, cb) = c.cells()
    d = float(m(*cb) - m(*ca))
    var = (1 * 0.01) ** 2 * 14 / 100**2 + (10 * 0.99) ** 2 * 30 / 900**2
    expected = 2 * stats.norm.sf(abs(d) / np.sqrt(var))
    assert dcf_proportion_test(c, cost_fn=1.0, cost_fp=10.0, p_positive=0.01) == pytest.approx(
        expected
    )


def test_macro_tests():
    a = [0.8, 0.7, 0.9, 0.6]
    b = [0.7, 0.65, 0.8, 0.62]
    assert macro_t_test(a, b) == pytest.approx(stats.ttest_rel(a, b).pvalue)
    assert macro_s_test(a, b) == pytest.approx(stats.binomtest(3, 4).pvalue)
    assert np.isnan(macro_t_test([0.5], [0.4]))
    assert macro_s_test(a, a) == 1.0 and macro_t_test(a, a) == 1.0


def test_resampling_tests_return_test_results(rng):
    from isbetter.inference.records import TestResult

    b = bootstrap_test(C, f1, resamples=1000, level=0.9, rng=rng)
    r = randomization_test(C, f1, resamples=1000, rng=rng)
    assert isinstance(b, TestResult) and isinstance(r, TestResult)
    assert b.name == "bootstrap" and b.interval.kind == "percentile" and b.interval.prob == 0.9
    assert b.interval.low < b.estimate < b.interval.high
    assert r.interval is None and 0 < r.p_value <= 1
    assert b.description and r.description
    assert b.to_dict()["p_value"] == b.p_value


def test_bootstrap_average_test_returns_macro_and_micro(rng):
    from isbetter.f1.baselines import bootstrap_average_test
    from isbetter.f1.multiclass import joint_cells

    gold = rng.integers(0, 3, 600)
    a = np.where(rng.random(600) < 0.8, gold, (gold + 1) % 3)
    b = np.where(rng.random(600) < 0.7, gold, (gold + 2) % 3)
    out = bootstrap_average_test(joint_cells(gold, a, b, 3), f1, resamples=2000, rng=rng)
    assert set(out) == {"macro", "micro"}
    micro = out["micro"]
    # micro F1 of single-label classification is the accuracy
    assert micro.estimate == pytest.approx(np.mean(a == gold) - np.mean(b == gold))
    assert micro.interval.low < micro.estimate < micro.interval.high
    assert micro.p_value < 0.01
