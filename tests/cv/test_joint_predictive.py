"""The next data set's masses under the joint model (``isbetter.cv.joint.predictive``).

One shared nu: exactly HierarchicalPosterior's Student-t masses (what the ranking
printed before the per-system model). Per-system nu (the grouped t): against the closed
forms where they exist (one system without deviation: a t; both nu large: the normal),
against a large Monte Carlo of the model's law (tolerance in Monte Carlo standard
errors) and against a dense two-dimensional quadrature over the two weights.
"""

import numpy as np
import pytest
from scipy import special, stats

from isbetter.core.errors import InputError
from isbetter.cv.joint.model import _pair_scales
from isbetter.cv.joint.predictive import pair_masses
from isbetter.inference.posterior import HierarchicalPosterior


def _spreads(rng, n, k=4):
    """Random covariances V = H Omega H^T of K systems (n draws)."""
    from isbetter.cv.joint.spec import contrast_basis

    h = contrast_basis(k)
    g = rng.normal(size=(n, k - 1, k - 1)) * rng.uniform(0.005, 0.05, size=(n, 1, 1))
    omega = g @ np.swapaxes(g, 1, 2) + 1e-6 * np.eye(k - 1)
    return h @ omega @ h.T


def _pair(sd_a, sd_b, r):
    """(n, 2, 2) covariances of two systems from their sds and correlation."""
    sd_a, sd_b, r = np.broadcast_arrays(*map(np.atleast_1d, (sd_a, sd_b, r)))
    v = np.empty((sd_a.size, 2, 2))
    v[:, 0, 0], v[:, 1, 1] = sd_a**2, sd_b**2
    v[:, 0, 1] = v[:, 1, 0] = r * sd_a * sd_b
    return v


@pytest.mark.parametrize("symmetric", [False, True])
def test_one_shared_nu_gives_the_student_t_masses_exactly(rng, symmetric):
    """nu of shape (n,): the masses the ranking computed before, bit for bit."""
    n, k = 500, 4
    spread = _spreads(rng, n, k)
    effects = rng.normal(0, 0.02, size=(n, k))
    nu = 1.0 + rng.gamma(1.5, 20.0, size=n)
    scales = _pair_scales(spread)
    for column, (a, b) in enumerate(zip(*np.triu_indices(k, 1), strict=True)):
        loc = effects[:, a] - effects[:, b]
        old = HierarchicalPosterior(
            delta0=loc, std0=scales[:, column], nu=nu, symmetric=symmetric
        ).region_masses(0.01)
        new = pair_masses(loc, spread, nu, int(a), int(b), 0.01, symmetric=symmetric)
        np.testing.assert_array_equal(new, old)


@pytest.mark.parametrize("nu_a", [1.0, 1.5, 3.0, 30.0, 1e4])
def test_one_system_without_deviation_gives_its_t(rng, nu_a):
    """V_bb = V_ab = 0: the difference is system a's deviation alone, t_{nu_a}(loc, sd_a)."""
    n = 200
    loc = rng.normal(0, 0.03, n)
    sd = rng.uniform(0.005, 0.05, n)
    spread = _pair(sd, 0.0, 0.0)
    nu = np.column_stack([np.full(n, nu_a), rng.choice([1.0, 2.0, 50.0], n)])
    got = pair_masses(loc, spread, nu, 0, 1, 0.01)
    above = stats.t.sf(0.01, nu_a, loc=loc, scale=sd)
    below = stats.t.cdf(-0.01, nu_a, loc=loc, scale=sd)
    np.testing.assert_allclose(got[:, 0], above, rtol=0, atol=1e-5)
    np.testing.assert_allclose(got[:, 2], below, rtol=0, atol=1e-5)


def test_both_nu_large_give_the_normal_masses(rng):
    n = 300
    loc = rng.normal(0, 0.03, n)
    spread = _pair(rng.uniform(0.005, 0.05, n), rng.uniform(0.005, 0.05, n), rng.uniform(-1, 1, n))
    scale = np.sqrt(spread[:, 0, 0] + spread[:, 1, 1] - 2 * spread[:, 0, 1])
    got = pair_masses(loc, spread, np.full((n, 2), 1e7), 0, 1, 0.01)
    np.testing.assert_allclose(got[:, 0], special.ndtr((loc - 0.01) / scale), atol=1e-5)
    np.testing.assert_allclose(got[:, 2], special.ndtr((-0.01 - loc) / scale), atol=1e-5)


#: (nu_a, nu_b, sd_a, sd_b, correlation, loc) of the Monte Carlo checks
CASES = [
    (1.0, 1.0, 0.01, 0.02, 0.6, -0.05),
    (1.0, 80.0, 0.02, 0.02, 0.9, 0.005),
    (1.5, 4.0, 0.03, 0.01, -0.5, 0.02),
    (3.0, 3.0, 0.02, 0.02, 0.99, 0.001),
    (30.0, 2.0, 0.01, 0.04, 0.0, -0.02),
    (300.0, 1.2, 0.02, 0.015, 0.95, 0.012),
    (5.0, 5.0, 0.03, 0.03, 0.999, 0.004),  # two nearly identical systems
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"nu={c[0]:g},{c[1]:g} r={c[4]:g}")
def test_the_grouped_t_masses_match_a_monte_carlo_of_the_model(case):
    """Draw the weights and the core from the model's law: every mass within 4.5 MCSE."""
    nu_a, nu_b, sd_a, sd_b, r, loc = case
    rope, m = 0.01, 1_000_000
    rng = np.random.default_rng(abs(hash(case)) % 2**32)
    lam_a = rng.gamma(nu_a / 2, 2 / nu_a, m)
    lam_b = rng.gamma(nu_b / 2, 2 / nu_b, m)
    z = rng.multivariate_normal([0, 0], _pair(sd_a, sd_b, r)[0], size=m)
    d = loc + z[:, 0] / np.sqrt(lam_a) - z[:, 1] / np.sqrt(lam_b)
    observed = np.array([np.mean(d > rope), np.mean(np.abs(d) <= rope), np.mean(d < -rope)])
    got = pair_masses([loc], _pair(sd_a, sd_b, r), [[nu_a, nu_b]], 0, 1, rope)[0]
    mcse = np.sqrt(observed * (1 - observed) / m)
    assert np.all(np.abs(got - observed) < 4.5 * mcse + 1e-6), (got, observed, mcse)


def _reference(loc, vaa, vbb, vab, nu_a, nu_b, rope):
    """The masses by adaptive quadrature over phi (B = sin^2 phi), with breakpoints at the
    dip of sigma and about the density's mode (module docstring's one-dimensional form)."""
    from scipy import integrate

    a, b, n = nu_a / 2, nu_b / 2, nu_a + nu_b
    p, s, c = nu_a * vaa, nu_b * vbb, np.sqrt(nu_a * nu_b) * vab
    log_norm = special.betaln(a, b)

    def density(phi):
        return 2.0 * np.exp(
            (2 * a - 1) * np.log(np.sin(phi)) + (2 * b - 1) * np.log(np.cos(phi)) - log_norm
        )

    def h(phi):
        f = p * np.cos(phi) ** 2 + s * np.sin(phi) ** 2 - 2 * c * np.sin(phi) * np.cos(phi)
        return np.sin(phi) * np.cos(phi) / np.sqrt(max(f, 0.0))

    points = [(np.pi - np.arctan2(c, (p - s) / 2)) / 2]
    if a > 0.5 and b > 0.5:
        mode, width = np.arctan(np.sqrt((2 * a - 1) / (2 * b - 1))), 1 / np.sqrt(4 * (a + b - 1))
        points += [mode + k * width for k in (-30, -10, -5, -3, -1.5, 0, 1.5, 3, 5, 10, 30)]
    points = sorted({x for x in points if 0 < x < np.pi / 2})
    tails = [
        integrate.quad(
            lambda phi, shift=shift: density(phi) * special.stdtr(n, shift * np.sqrt(n) * h(phi)),
            0,
            np.pi / 2,
            points=points,
            epsabs=1e-11,
            epsrel=1e-11,
            limit=500,
        )[0]
        for shift in (loc - rope, -rope - loc)
    ]
    return np.array([tails[0], 1 - tails[0] - tails[1], tails[1]])


@pytest.mark.parametrize("rope", [0.01, 0.0])
@pytest.mark.parametrize("r", [0.0, 0.9, 0.999, 0.99999, 1.0])
def test_the_grouped_t_masses_match_an_adaptive_quadrature(r, rope):
    """Within 1e-4 per mass, from nu = 1 to 1e5 and up to cores that are collinear (the
    narrow feature at the ratio of weights where sigma vanishes)."""
    rng = np.random.default_rng(int(r * 1e5))
    n = 24
    nu = rng.choice([1.0, 1.2, 2.0, 5.0, 30.0, 1e3, 1e5], size=(n, 2))
    sd = rng.uniform(0.002, 0.05, size=(n, 2))
    sd[::2, 1] = sd[::2, 0]
    loc = rng.normal(0, 0.03, n) * rng.choice([0.03, 0.3, 1.0, 3.0], n)
    spread = _pair(sd[:, 0], sd[:, 1], r)
    got = pair_masses(loc, spread, nu, 0, 1, 0.01)
    with np.errstate(all="ignore"):
        want = np.array(
            [_reference(loc[i], *spread[i][[0, 1, 0], [0, 1, 1]], *nu[i], 0.01) for i in range(n)]
        )
    assert np.abs(got - want).max() < 1e-4, np.abs(got - want).max(axis=1)


def test_swapping_the_systems_mirrors_the_masses(rng):
    n = 200
    loc = rng.normal(0, 0.03, n)
    spread = _spreads(rng, n, 3)
    nu = 1.0 + rng.gamma(1.5, 20.0, size=(n, 3))
    ab = pair_masses(loc, spread, nu, 0, 2, 0.01)
    ba = pair_masses(-loc, spread, nu, 2, 0, 0.01)
    np.testing.assert_allclose(ab, ba[:, ::-1], rtol=0, atol=1e-12)
    sym = pair_masses(loc, spread, nu, 0, 2, 0.01, symmetric=True)
    np.testing.assert_allclose(sym, (ab + ab[:, ::-1]) / 2, rtol=0, atol=0)
    np.testing.assert_allclose(ab.sum(axis=1), 1.0, atol=1e-12)


def test_bad_shapes_are_refused():
    v = _pair([0.01, 0.02], 0.01, 0.5)
    with pytest.raises(InputError, match="nu"):
        pair_masses([0.0, 0.1], v, np.ones((2, 3)), 0, 1, 0.01)
    with pytest.raises(InputError, match="two different systems"):
        pair_masses([0.0, 0.1], v, np.ones(2), 1, 1, 0.01)
