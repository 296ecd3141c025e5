"""The Bayesian bootstrap of the paired mean difference: Rubin's moments, clusters, seeds."""

import numpy as np
import pytest

from isbetter.core.errors import InputError
from isbetter.items import bootstrap
from isbetter.items.bootstrap import sample_delta, units

DRAWS = 200_000


def _check_moments(draws: np.ndarray, mean: float, var: float) -> None:
    assert abs(draws.mean() - mean) <= 4 * np.sqrt(var / draws.size)
    # the sd of a sample variance: sqrt((mu4 - var^2) / n), mu4 estimated from the draws
    mu4 = np.mean((draws - draws.mean()) ** 4)
    assert abs(draws.var() - var) <= 4 * np.sqrt((mu4 - var**2) / draws.size)


@pytest.mark.parametrize("kind", ["graded", "runs", "binary"])
def test_mean_and_variance_are_rubins(kind: str) -> None:
    """E = mean(d), Var = sum (d - mean)^2 / (N (N + 1)) for w ~ Dir(1, ..., 1)."""
    gen = np.random.default_rng(0)
    if kind == "graded":
        d = gen.normal(0.05, 0.3, 40)
    elif kind == "runs":  # means over 4 runs: few distinct values
        d = (gen.integers(0, 5, 60) - gen.integers(0, 5, 60)) / 4
    else:
        d = gen.choice([-1.0, 0.0, 1.0], 80, p=[0.2, 0.5, 0.3])
    n = d.size
    var = np.sum((d - d.mean()) ** 2) / (n * (n + 1))
    _check_moments(sample_delta(d, draws=DRAWS, rng=np.random.default_rng(1)), d.mean(), var)


def test_agrees_with_the_naive_per_item_dirichlet() -> None:
    """Grouping equal differences (Dirichlet aggregation) changes nothing in distribution."""
    d = np.array([1.0] * 7 + [0.0] * 10 + [-1.0] * 3 + [0.5] * 4)
    naive = np.random.default_rng(2).dirichlet(np.ones(d.size), 100_000) @ d
    ours = sample_delta(d, draws=100_000, rng=np.random.default_rng(3))
    for q in (0.025, 0.25, 0.5, 0.75, 0.975):
        a, b = np.quantile(naive, q), np.quantile(ours, q)
        assert abs(a - b) <= 0.01, q


def test_clusters_of_equal_size_have_the_cluster_means_moments() -> None:
    """Equal sizes m: delta = sum_c w_c S_c / m, Rubin's moments over the cluster means."""
    gen = np.random.default_rng(4)
    m, c = 5, 30
    d = gen.normal(0.1, 0.5, m * c) + np.repeat(gen.normal(0, 0.4, c), m)
    clusters = np.repeat([f"p{i}" for i in range(c)], m)
    means = d.reshape(c, m).mean(axis=1)
    var = np.sum((means - means.mean()) ** 2) / (c * (c + 1))
    draws = sample_delta(d, clusters, draws=DRAWS, rng=np.random.default_rng(5))
    _check_moments(draws, d.mean(), var)
    # clustering matters here (design effect 1 + (m - 1) ICC ~ 2.6): the naive variance is smaller
    assert var > 2 * np.sum((d - d.mean()) ** 2) / (d.size * (d.size + 1))


def test_unequal_clusters_weight_by_size() -> None:
    # one cluster of 3 items all +1, three single items at 0: the ratio estimator
    d = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    clusters = np.array(["a", "a", "a", "b", "c", "e"])
    u = units(d, clusters)
    assert u.n_units == 4 and u.n_items == 6 and u.mean == 0.5
    draws = sample_delta(u, draws=50_000, rng=np.random.default_rng(6))
    # w_a ~ Beta(1, 3): delta = 3 w_a / (3 w_a + (1 - w_a)), E by numerical integration
    w = np.linspace(0, 1, 200_001)
    expected = np.trapezoid(3 * (1 - w) ** 2 * 3 * w / (2 * w + 1), w)
    assert abs(draws.mean() - expected) <= 4 * draws.std() / np.sqrt(draws.size)


def test_singleton_clusters_are_items() -> None:
    d = np.random.default_rng(7).normal(size=25)
    a = sample_delta(d, draws=500, rng=np.random.default_rng(8))
    b = sample_delta(d, np.arange(25), draws=500, rng=np.random.default_rng(8))
    assert np.allclose(a, b, rtol=0, atol=1e-15)


def test_same_seed_same_draws_and_exchange_negates() -> None:
    d = np.round(np.random.default_rng(9).normal(0.1, 0.4, 50), 1)
    a = sample_delta(d, draws=1000, rng=np.random.default_rng(10))
    assert np.array_equal(a, sample_delta(d, draws=1000, rng=np.random.default_rng(10)))
    assert np.array_equal(a, -sample_delta(-d, draws=1000, rng=np.random.default_rng(10)))
    clusters = np.repeat(np.arange(10), 5)
    c = sample_delta(d, clusters, draws=1000, rng=np.random.default_rng(11))
    assert np.array_equal(c, -sample_delta(-d, clusters, draws=1000, rng=np.random.default_rng(11)))


def test_blocks_do_not_change_the_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    d = np.random.default_rng(12).normal(size=30)
    whole = sample_delta(d, draws=100, rng=np.random.default_rng(13))
    monkeypatch.setattr(bootstrap, "_BLOCK", 30 * 7)
    blocked = sample_delta(d, draws=100, rng=np.random.default_rng(13))
    # row-major blocks consume the random stream in the same order as one block (the single
    # precision matrix products may round differently by block size)
    assert np.allclose(whole, blocked, rtol=1e-5, atol=0)
    assert not np.allclose(whole, sample_delta(d, draws=100, rng=np.random.default_rng(14)))


def test_bad_differences_are_refused() -> None:
    with pytest.raises(InputError, match="finite"):
        units([0.1, np.nan])
    with pytest.raises(InputError, match="one label per item"):
        units([0.1, 0.2], clusters=["a"])
    with pytest.raises(InputError, match="non-empty"):
        units([])
