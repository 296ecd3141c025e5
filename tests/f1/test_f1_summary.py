import arviz as az
import numpy as np
import pytest
from scipy import stats

from isbetter import InputError
from isbetter.inference.decisions import hdi_rope_decision, mirror
from isbetter.inference.summaries import (
    bandwidth,
    estimate_from_draws,
    hdi,
    mcse_mean,
    rope_bayes_factor,
    savage_dickey_bf01,
)


def test_hdi_matches_arviz(rng):
    for draws in (rng.gamma(2.0, size=10_001), rng.normal(size=4000), rng.beta(2, 9, 777)):
        np.testing.assert_allclose(hdi(draws, 0.95), az.hdi(draws, hdi_prob=0.95), rtol=1e-12)
        np.testing.assert_allclose(hdi(draws, 0.5), az.hdi(draws, hdi_prob=0.5), rtol=1e-12)


def test_hdi_is_shortest_and_vectorised(rng):
    x = rng.exponential(size=(3, 20_000))
    b = hdi(x, 0.9)
    assert b.shape == (3, 2)
    # for an exponential the 90 % HDI is [0, -log(0.1)] = [0, 2.303]
    np.testing.assert_allclose(b[:, 0], 0.0, atol=1e-3)
    np.testing.assert_allclose(b[:, 1], np.log(10), atol=0.06)  # ~4 MC sd of the quantile
    with pytest.raises(InputError, match="`prob` must be a probability strictly between"):
        hdi(x, 1.0)


def test_mcse_mean():
    x = np.arange(10.0)
    assert mcse_mean(x) == pytest.approx(x.std(ddof=1) / np.sqrt(10))
    assert mcse_mean(x, ess=2.5) == pytest.approx(x.std(ddof=1) / np.sqrt(2.5))
    assert mcse_mean([1.0]) == 0.0


def test_kde_density_is_scipys_gaussian_kde_with_the_stated_bandwidth(rng):
    from isbetter.inference.summaries import REFERENCE_DRAWS, _kde_density_at

    x = rng.gamma(3.0, size=5000)
    # scipy's factor multiplies the sd: Scott's rule at REFERENCE_DRAWS, whatever len(x)
    kde = stats.gaussian_kde(x, bw_method=REFERENCE_DRAWS ** (-0.2))
    for at in (0.5, 3.0, 9.0):
        assert _kde_density_at(x, at) == pytest.approx(kde(at)[0], rel=1e-10)


def test_savage_dickey_against_closed_form(rng):
    # prior N(0, 1), posterior N(0.1, 0.05): BF01 = N(0; 0.1, 0.05) / N(0; 0, 1)
    prior = rng.normal(0, 1, 200_000)
    post = rng.normal(0.1, 0.05, 200_000)
    exact = stats.norm.pdf(0, 0.1, 0.05) / stats.norm.pdf(0)
    # KDE bias (the stated bandwidth) plus noise: a few percent at this sample size
    value, bound, mcse = savage_dickey_bf01(post, prior)
    assert value == pytest.approx(exact, rel=0.06) and bound == ""
    assert 0 < mcse < 0.05 * value
    point = savage_dickey_bf01(np.zeros(10), prior)
    assert (point.value, point.bound) == (np.inf, "") and np.isnan(point.mcse)
    # no posterior draw near 0: an upper bound, never a noise value such as 2.5e-319
    value, bound, mcse = savage_dickey_bf01(np.ones(10) + rng.normal(0, 1e-3, 10), prior)
    assert bound == "<" and 0 < value < np.inf and np.isnan(mcse)
    assert np.isnan(savage_dickey_bf01(post, np.ones(10)).value)


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [
        (-0.03, 0.04, "equivalent"),  # HDI inside the ROPE
        (-0.05, 0.05, "equivalent"),  # ... its bounds included
        (0.06, 0.2, "a_better"),  # entirely above
        (-0.2, -0.06, "b_better"),  # entirely below
        (0.04, 0.1, "a_leaning"),  # across the upper bound only, above 0
        (-0.01, 0.06, "a_leaning"),  # across the upper bound only, around 0
        (0.05, 0.1, "a_leaning"),  # from the upper bound up
        (-0.06, 0.01, "b_leaning"),  # across the lower bound only
        (-0.1, -0.04, "b_leaning"),
        (-0.1, 0.1, "undecided"),  # across both bounds
        (-0.06, 0.3, "undecided"),  # across both, mostly above: still no side
    ],
)
def test_hdi_rope_rule_every_case(lo, hi, expected):
    assert hdi_rope_decision(lo, hi, 0.05) == expected
    assert hdi_rope_decision(-hi, -lo, 0.05) == mirror(expected)


def test_hdi_across_both_rope_bounds_is_undecided_whatever_the_mean(rng):
    """Regression (statistical review): an HDI reaching past both ROPE bounds was labelled
    "leaning" by the sign of the Monte Carlo mean, and "equivalent" at a mean of exactly 0.

    Kruschke's rule decides nothing there; the label is "undecided" whichever side the
    draws happen to lean, and a mean of exactly 0 is not evidence of equivalence.
    """
    d = rng.normal(0.0, 0.1, 20_000)
    for draws in (d - d.mean() + 1e-4, d - d.mean() - 1e-4, np.r_[d, -d]):
        e = estimate_from_draws(draws, rope=0.05)
        assert e.interval.low < -0.05 and e.interval.high > 0.05
        assert e.decision == "undecided"
    assert estimate_from_draws(np.r_[d, -d], rope=0.05).mean == 0.0
    # rope 0: the HDI straddling 0 decides nothing, one touching it from above leans
    assert hdi_rope_decision(-0.01, 0.02, 0.0) == "undecided"
    assert hdi_rope_decision(0.0, 0.02, 0.0) == "a_leaning"
    assert hdi_rope_decision(0.0, 0.0, 0.0) == "undecided"  # identical systems, no ROPE (issue 29)


def test_estimate_from_draws_puts_the_summary_together(rng):
    d = rng.normal(0.1, 0.02, 20_000)
    prior = rng.uniform(-1, 1, 40_000)
    e = estimate_from_draws(d, rope=0.05, prior_delta=prior, hdi_prob=0.9, ess=5000)
    np.testing.assert_allclose([e.interval.low, e.interval.high], hdi(d, 0.9))
    assert (e.interval.prob, e.interval.kind) == (0.9, "hdi")
    assert e.mean == pytest.approx(d.mean()) and e.sd == pytest.approx(d.std(ddof=1))
    assert e.mcse == pytest.approx(mcse_mean(d, 5000))
    assert e.p_above_0 == pytest.approx(np.mean(d > 0)) and e.p_below_0 == np.mean(d < 0)
    bf01 = savage_dickey_bf01(d, prior, ess=5000)
    assert (e.bf01, e.bf01_bound, e.bf01_mcse) == (bf01.value, bf01.bound, bf01.mcse)
    bf_rope = rope_bayes_factor(d, prior, rope=0.05, ess=5000)
    assert (e.bf_rope, e.bf_rope_bound, e.bf_rope_mcse) == tuple(bf_rope)
    assert (e.bf01_bandwidth, e.bf01_prior_bandwidth) == (bandwidth(d), bandwidth(prior))
    assert e.decision == "a_better"
    assert np.isnan(estimate_from_draws(d, rope=0.05).bf01)
