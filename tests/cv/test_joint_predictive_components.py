"""The next data set's masses under independent-component tails (``component_pair_masses``).

delta = diff + sum_j w_j z_j, z_j ~ t_{nu_j} independent. One non-zero weight: the t's
masses exactly (against scipy.stats.t); two: the grouped t's deterministic integral
(against a 10^6-draw Monte Carlo of the law, within 4 standard errors); three or more:
the Rao-Blackwellised Dirichlet Monte Carlo (its mean over many rows against the same
brute force, within 4 standard errors of both).
"""

import numpy as np
import pytest
from scipy import stats

from isbetter.core.errors import InputError
from isbetter.cv.joint.predictive import component_pair_masses, component_weights, pair_masses
from isbetter.cv.joint.spec import contrast_basis

BRUTE = 10**6


def _brute(diff, w, nu, rope, rng):
    """Masses of diff + sum_j w_j z_j from BRUTE draws, and their standard errors."""
    z = rng.standard_t(np.asarray(nu, float), size=(BRUTE, len(w)))
    delta = diff + z @ np.asarray(w, float)
    p = np.array([(delta > rope).mean(), (np.abs(delta) <= rope).mean(), (delta < -rope).mean()])
    return p, np.sqrt(p * (1.0 - p) / BRUTE)


@pytest.mark.parametrize("nu", [1.0, 1.3, 2.5, 7.0, 60.0, 1e5])
@pytest.mark.parametrize("rope", [0.0, 0.01])
def test_one_component_gives_the_t_masses_exactly(rng, nu, rope):
    n = 300
    diff = rng.normal(0, 0.03, n)
    scale = rng.uniform(0.001, 0.05, n)
    masses = component_pair_masses(
        diff, scale[:, None] * rng.choice([-1, 1], n)[:, None], np.full((n, 1), nu), rope, rng=1
    )
    t = stats.t(nu, loc=diff, scale=scale)
    expected = np.column_stack([t.sf(rope), t.cdf(rope) - t.cdf(-rope), t.cdf(-rope)])
    np.testing.assert_allclose(masses, expected, rtol=0, atol=1e-12)


def test_zero_weights_drop_out(rng):
    """Components the pair does not see change nothing; all zero: the effect itself."""
    n = 200
    diff = rng.normal(0, 0.02, n)
    w = rng.normal(0, 0.02, (n, 3))
    nu = 1.0 + rng.gamma(1.5, 10.0, (n, 3))
    for keep in ([0], [1, 2]):  # one or two components seen, others with w = 0
        padded = np.zeros_like(w)
        padded[:, keep] = w[:, keep]
        np.testing.assert_array_equal(
            component_pair_masses(diff, padded, nu, 0.01, rng=1),
            component_pair_masses(diff, w[:, keep], nu[:, keep], 0.01, rng=1),
        )
    none = component_pair_masses(
        np.array([0.02, 0.005, -0.02, 0.01]), np.zeros((4, 3)), np.ones((4, 3)), 0.01, rng=1
    )
    np.testing.assert_array_equal(none, [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 1, 0]])


def test_two_components_are_the_grouped_t_with_independent_cores(rng):
    """d = 2 is pair_masses's grouped t with V = diag(w^2): the same law, the same numbers."""
    n = 100
    diff = rng.normal(0, 0.02, n)
    w = rng.normal(0, 0.02, (n, 2))
    nu = 1.0 + rng.gamma(1.5, 10.0, (n, 2))
    spread = np.zeros((n, 2, 2))
    spread[:, 0, 0], spread[:, 1, 1] = w[:, 0] ** 2, w[:, 1] ** 2
    np.testing.assert_allclose(
        component_pair_masses(diff, w, nu, 0.01, rng=1),
        pair_masses(diff, spread, nu, 0, 1, 0.01),
        rtol=0,
        atol=1e-14,
    )


CASES = [  # diff, weights, nu, rope: heavy and light tails, equal and unequal weights
    (0.0, [1.0, 1.0], [1.05, 1.05], 1.0),
    (2.0, [1.0, 0.3], [1.5, 30.0], 1.0),
    (0.5, [1.0, 0.9], [2.0, 1.1], 0.1),
    (0.0, [1.0, 1.0], [1.5, 30.0], 20.0),
    (30.0, [1.0, 0.9], [2.0, 1.1], 1.0),
    (0.3, [0.2, 1.0], [100.0, 4.0], 0.0),
]


@pytest.mark.parametrize(("diff", "w", "nu", "rope"), CASES)
def test_two_components_against_brute_force(diff, w, nu, rope):
    """Deterministic at d = 2: within 4 Monte Carlo standard errors of 10^6 draws."""
    p, se = _brute(diff, w, nu, rope, np.random.default_rng(11))
    masses = component_pair_masses([diff], [w], [nu], rope, rng=1)[0]
    assert np.all(np.abs(masses - p) <= 4 * np.maximum(se, 1e-6)), (masses, p, se)


@pytest.mark.parametrize(
    ("diff", "w", "nu", "rope"),
    [
        (0.0, [1.0, 1.0, 1.0], [1.05, 1.05, 1.05], 1.0),
        (2.0, [1.0, 0.3, 0.1], [1.5, 30.0, 3.0], 1.0),
        (0.0, [1.0, 0.9, 0.8], [2.0, 1.1, 50.0], 20.0),
        (30.0, [1.0, 1.0, 1.0], [1.5, 30.0, 3.0], 1.0),
        (0.5, [0.1, 1.0, 0.3, 0.5], [4.0, 1.1, 50.0, 2.0], 0.1),
        (0.3, [1.0, 0.9, 0.8], [100.0, 100.0, 100.0], 0.0),
    ],
)
def test_three_or_more_components_against_brute_force(diff, w, nu, rope):
    """Monte Carlo at d >= 3: the mean over rows within 4 standard errors (both estimates')."""
    p, se = _brute(diff, w, nu, rope, np.random.default_rng(12))
    rows = 2000
    masses = component_pair_masses(
        np.full(rows, diff), np.tile(w, (rows, 1)), np.tile(nu, (rows, 1)), rope, rng=5
    )
    own = masses.std(axis=0) / np.sqrt(rows)
    gap = np.abs(masses.mean(axis=0) - p)
    assert np.all(gap <= 4 * np.maximum(np.hypot(se, own), 1e-6)), (masses.mean(axis=0), p)
    assert masses.std(axis=0).max() < 0.05  # each row's own error (32 inner draws)


def test_reproducible_and_symmetric(rng):
    n = 50
    diff = rng.normal(0, 0.02, n)
    w = rng.normal(0, 0.02, (n, 4))
    nu = 1.0 + rng.gamma(1.5, 10.0, (n, 4))
    first = component_pair_masses(diff, w, nu, 0.01, rng=3)
    np.testing.assert_array_equal(first, component_pair_masses(diff, w, nu, 0.01, rng=3))
    np.testing.assert_allclose(first.sum(axis=1), 1.0)
    assert np.all(first >= 0)
    mirrored = component_pair_masses(-diff, -w, nu, 0.01, rng=3)
    np.testing.assert_allclose(mirrored, first[:, ::-1], rtol=0, atol=1e-15)
    sym = component_pair_masses(diff, w, nu, 0.01, rng=3, symmetric=True)
    np.testing.assert_array_equal(sym, (first + first[:, ::-1]) / 2)


def test_component_weights_give_the_pair_scales(rng):
    """|w|^2 = c_ab' L L' c_ab: the pair's variance under the loading."""
    k = 5
    loading = rng.normal(size=(7, k - 1, k - 1))
    h = contrast_basis(k)
    for a, b in [(0, 1), (2, 4), (3, 0)]:
        w = component_weights(loading, a, b)
        c = h[a] - h[b]
        expected = np.einsum("i,nij,j->n", c, loading @ np.swapaxes(loading, 1, 2), c)
        np.testing.assert_allclose((w**2).sum(axis=1), expected)


def test_bad_input_is_refused():
    with pytest.raises(InputError, match="weights"):
        component_pair_masses([0.0, 0.1], [[1.0, 1.0]], [[1.0, 1.0]], 0.01, rng=1)
    with pytest.raises(InputError, match="nu > 0"):
        component_pair_masses([0.0], [[1.0]], [[0.0]], 0.01, rng=1)
    with pytest.raises(InputError, match="inner"):
        component_pair_masses([0.0], [[1.0]], [[1.0]], 0.01, rng=1, inner=0)
    with pytest.raises(InputError, match="systems"):
        component_weights(np.eye(2), 0, 3)
