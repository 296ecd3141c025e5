import arviz as az
import numpy as np
import pytest
from scipy import stats

from isbetter import InputError
from isbetter.summary import decide, hdi, mcse_mean, savage_dickey_bf01


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


def test_kde_density_is_scipys_gaussian_kde(rng):
    from isbetter.summary import _kde_density_at

    x = rng.gamma(3.0, size=5000)
    for at in (0.5, 3.0, 9.0):
        assert _kde_density_at(x, at) == pytest.approx(stats.gaussian_kde(x)(at)[0], rel=1e-10)


def test_savage_dickey_against_closed_form(rng):
    # prior N(0, 1), posterior N(0.1, 0.05): BF01 = N(0; 0.1, 0.05) / N(0; 0, 1)
    prior = rng.normal(0, 1, 200_000)
    post = rng.normal(0.1, 0.05, 200_000)
    exact = stats.norm.pdf(0, 0.1, 0.05) / stats.norm.pdf(0)
    # KDE bias (Scott's bandwidth) plus noise: a few percent at this sample size
    assert savage_dickey_bf01(post, prior) == pytest.approx(exact, rel=0.06)
    assert savage_dickey_bf01(np.zeros(10), prior) == np.inf
    assert savage_dickey_bf01(np.ones(10), prior) == 0.0
    assert np.isnan(savage_dickey_bf01(post, np.ones(10)))


@pytest.mark.parametrize(
    ("lo", "hi", "mean", "expected"),
    [
        (0.06, 0.2, 0.1, "≫"),
        (-0.2, -0.06, -0.1, "≪"),
        (-0.05, 0.05, 0.0, "≈"),
        (-0.01, 0.06, 0.02, ">"),
        (-0.06, 0.01, -0.02, "<"),
        (0.04, 0.1, 0.07, ">"),  # straddles the upper ROPE bound
        (-0.1, 0.1, 0.0, "≈"),  # mean exactly 0: the symmetric choice
    ],
)
def test_decide(lo, hi, mean, expected):
    assert decide(lo, hi, mean, 0.05) == expected
    mirror = {"≫": "≪", ">": "<", "≈": "≈", "<": ">", "≪": "≫"}
    assert decide(-hi, -lo, -mean, 0.05) == mirror[expected]
