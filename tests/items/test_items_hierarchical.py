"""The hierarchical paired model of binary items over subtasks (DESIGN §4.3)."""

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special, stats

from isbetter.core.errors import ConvergenceWarning, InputError, InputTypeError
from isbetter.inference.nu_prior import NuPrior
from isbetter.inference.sampling import Sampling
from isbetter.items.hierarchical import density, population
from isbetter.items.hierarchical.model import hierarchical_items
from isbetter.items.hierarchical.priors import ItemsHierarchicalPriors
from isbetter.results import ComparisonResult

PRIORS = ItemsHierarchicalPriors()


# --------------------------------------------------------------------------- the density
def _counts(rng, q):
    n = rng.integers(20, 200, size=q).astype(float)
    d = np.floor(n * rng.uniform(0.05, 0.6, size=q))
    k = np.floor(d * rng.uniform(0.0, 1.0, size=q))
    return n, d, k


def _scipy_logp(x, n, d, k, pooled, centred_s):
    """The model's log density in the sampler's coordinates, from SciPy's densities."""
    q = n.size
    if not pooled:
        xs, y = x[:q], x[q:]
        s, phi = special.expit(xs), special.expit(y)
        logp = stats.binom.logpmf(d, n, phi).sum() + stats.binom.logpmf(k, d, s).sum()
        # s ~ U(0, 1), phi ~ Beta(2, 2), with the logit transforms' Jacobians
        logp += np.sum(np.log(s) + np.log1p(-s))
        logp += np.sum(stats.beta.logpdf(phi, 2, 2) + np.log(phi) + np.log1p(-phi))
        return logp
    nu = 1.0 + math.exp(x[0])
    mu, sigma, mu_phi, tau = x[1], math.exp(x[2]), x[3], math.exp(x[4])
    a_mu, a_sigma, a_phi, a_tau = PRIORS.scales
    logp = NuPrior(PRIORS.nu_bounds)(nu - 1.0)[0] + x[0]
    logp += stats.norm.logpdf(mu, 0, a_mu) + stats.halfnorm.logpdf(sigma, scale=a_sigma) + x[2]
    logp += stats.norm.logpdf(mu_phi, 0, a_phi) + stats.halfnorm.logpdf(tau, scale=a_tau) + x[4]
    u, y = x[5 : 5 + q], x[5 + q :]
    if centred_s:
        xs = u
        logp += stats.t.logpdf(u, nu, mu, sigma).sum()
    else:
        xs = mu + sigma * u
        logp += stats.t.logpdf(u, nu).sum()
    logp += stats.norm.logpdf(y, mu_phi, tau).sum()
    logp += stats.binom.logpmf(d, n, special.expit(y)).sum()
    logp += stats.binom.logpmf(k, d, special.expit(xs)).sum()
    return logp


@pytest.mark.parametrize(("pooled", "centred_s"), [(True, False), (True, True), (False, False)])
def test_density_matches_scipy_and_its_gradient_finite_differences(pooled, centred_s):
    rng = np.random.default_rng(3)
    n, d, k = _counts(rng, 4)
    buffer = density.model_buffer(
        n, d, k, scales=PRIORS.scales, pooled=pooled, centred=(centred_s, True)
    )
    dim = 2 * 4 + (5 if pooled else 0)
    for _ in range(3):
        x = rng.normal(0, 0.8, size=dim)
        if pooled:
            x[5 + 4 :] += -1.0  # rates near the data's
        value, grad = density.log_density(x, buffer)
        assert value == pytest.approx(_scipy_logp(x, n, d, k, pooled, centred_s), abs=1e-7)
        h = 1e-6
        numeric = [
            (density.log_density(x + h * e, buffer)[0] - density.log_density(x - h * e, buffer)[0])
            / (2 * h)
            for e in np.eye(dim)
        ]
        np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------------------- quadratures
HYPER = [
    (1.3, 0.4, 0.8, -1.2, 0.6),
    (8.0, -0.3, 0.2, -2.5, 1.5),
    (40.0, 0.0, 2.0, 0.5, 0.1),
    (3.0, 0.4, 0.3, -3.5, 0.3),  # phi mostly below the widest ROPE: the kink in the bulk
]


def _share_quad(nu, mu, sigma):
    f = lambda t: special.expit(mu + sigma * t) * stats.t.pdf(t, nu)  # noqa: E731
    return integrate.quad(f, -np.inf, np.inf, epsabs=1e-12, limit=400)[0]


def _rate_quad(mu_phi, tau):
    f = lambda z: special.expit(mu_phi + tau * z) * stats.norm.pdf(z)  # noqa: E731
    return integrate.quad(f, -np.inf, np.inf, epsabs=1e-12)[0]


@pytest.mark.parametrize("hyper", HYPER)
def test_population_mean_agrees_with_adaptive_quadrature(hyper):
    nu, mu, sigma, mu_phi, tau = hyper
    expected = _rate_quad(mu_phi, tau) * (2 * _share_quad(nu, mu, sigma) - 1)
    got = population.population_mean(*(np.array([v]) for v in hyper))[0]
    assert got == pytest.approx(expected, abs=2e-5)


@pytest.mark.parametrize("hyper", HYPER)
@pytest.mark.parametrize("rope", [0.0, 0.01, 0.05])
def test_next_subtask_masses_agree_with_adaptive_quadrature(hyper, rope):
    nu, mu, sigma, mu_phi, tau = hyper

    def above(z):
        phi = special.expit(mu_phi + tau * z)
        if rope >= phi:
            return 0.0
        u = special.logit((1 + rope / phi) / 2)
        return stats.t.sf((u - mu) / sigma, nu) * stats.norm.pdf(z)

    def below(z):
        phi = special.expit(mu_phi + tau * z)
        if rope >= phi:
            return 0.0
        u = special.logit((1 - rope / phi) / 2)
        return stats.t.cdf((u - mu) / sigma, nu) * stats.norm.pdf(z)

    expected_a = integrate.quad(above, -12, 12, limit=400, epsabs=1e-10)[0]
    expected_b = integrate.quad(below, -12, 12, limit=400, epsabs=1e-10)[0]
    post = population.NextSubtaskPosterior(*(np.array([v]) for v in hyper))
    masses = post.region_masses(rope)[0]
    assert masses[0] == pytest.approx(expected_a, abs=1e-4)
    assert masses[2] == pytest.approx(expected_b, abs=1e-4)
    assert masses.sum() == pytest.approx(1.0)


def test_next_subtask_masses_agree_with_sampling_delta_next():
    hyper = [np.full(1, v) for v in HYPER[0]]
    post = population.NextSubtaskPosterior(*hyper)
    rng = np.random.default_rng(0)
    draws = np.concatenate([population.NextSubtaskPosterior(*hyper).sample(rng) for _ in range(1)])
    big = population.NextSubtaskPosterior(*(np.full(200_000, v[0]) for v in hyper))
    draws = big.sample(rng)
    rope = 0.02
    p = post.region_masses(rope)[0]
    freq = [np.mean(draws > rope), np.mean(np.abs(draws) <= rope), np.mean(draws < -rope)]
    np.testing.assert_allclose(p, freq, atol=4 * np.sqrt(0.25 / draws.size))


# --------------------------------------------------------------------------- fits
def _table(n11, n10, n01, n00):
    return pd.DataFrame(
        {"task": [f"t{i}" for i in range(len(n11))], "n11": n11, "n10": n10, "n01": n01, "n00": n00}
    )


def _simulate(rng, q, n_items, mu, sigma, mu_phi, tau, nu=30.0):
    s = special.expit(mu + sigma * rng.standard_t(nu, q))
    phi = special.expit(mu_phi + tau * rng.standard_normal(q))
    n = np.full(q, n_items) if np.isscalar(n_items) else np.asarray(n_items)
    d = rng.binomial(n, phi)
    n10 = rng.binomial(d, s)
    # split the concordant items at random into both right / both wrong
    n11 = rng.binomial(n - d, 0.7)
    table = _table(n11, n10, d - n10, n - d - n11)
    return table, phi * (2 * s - 1)


FAST = {"draws": 300, "sampling": Sampling(tune=300, chains=2)}
#: the fast fits check plumbing, not convergence (300 x 2 draws of a few subtasks need not
#: reach 100 effective draws per chain): their warning is expected, and ignored
ANY_CONVERGENCE = pytest.mark.filterwarnings("ignore::isbetter.core.errors.ConvergenceWarning")


def test_unpooled_fit_is_the_exact_one_task_model():
    """Pooling off, one subtask: s ~ Beta(1 + n10, 1 + n01) and delta as Dir(1, 1, 1, 1)."""
    n11, n10, n01, n00 = 120, 14, 7, 59
    res = hierarchical_items(
        _table([n11], [n10], [n01], [n00]), pooled=False, rope=0.02, draws=2000, rng=2
    )
    s = res.idata.posterior["s"].to_numpy().reshape(-1)
    delta = res.delta[:, 0]
    ess = res.diagnostics.ess_bulk_min
    exact = special.betainc(1 + n10, 1 + n01, 0.5)  # P(s < 1/2)
    above = np.mean(s > 0.5)
    assert abs(above - (1 - exact)) < 4 * math.sqrt(exact * (1 - exact) / ess)
    # the whole distribution of delta: the exact model's Dirichlet draws
    theta = np.random.default_rng(0).dirichlet(1 + np.array([n11, n10, n01, n00]), 400_000)
    exact_delta = theta[:, 1] - theta[:, 2]
    for q in (0.05, 0.25, 0.5, 0.75, 0.95):
        level = np.mean(exact_delta <= np.quantile(delta, q))
        assert abs(level - q) < 4 * math.sqrt(q * (1 - q) / ess), q
    p_exact = np.mean(exact_delta > 0.02)
    assert abs(res.p_a_better - p_exact) < 4 * math.sqrt(p_exact * (1 - p_exact) / ess)


@ANY_CONVERGENCE
def test_same_seed_same_result_and_a_signature():
    table, _ = _simulate(np.random.default_rng(1), 6, 80, 0.3, 0.3, -1.0, 0.3)
    a = hierarchical_items(table, rope=0.01, rng=5, **FAST)
    b = hierarchical_items(table, rope=0.01, rng=5, **FAST)
    np.testing.assert_array_equal(a.delta, b.delta)
    assert a == b
    assert a.signature.startswith("method:items-hierarchical|rope:0.01|draws:300x2|tune:300|seed:5")
    frame = a.subtask_frame()
    assert list(frame.columns[:5]) == ["subtask", "n11", "n10", "n01", "n00"]
    assert (frame["interval_low"] <= frame["mean"]).all()
    assert (frame["mean"] <= frame["interval_high"]).all()
    light = ComparisonResult.from_dict(json.loads(json.dumps(a.to_dict())))
    assert light == a.summary() and light.signature == a.signature
    assert a.predictive_probabilities(0.0).p_rope == 0.0
    assert sum(a.probabilities(0.05).as_tuple()) == pytest.approx(1.0)


def test_recovers_a_known_difference_and_shrinks_towards_it():
    """57 subtasks of MMLU's size: the population's difference inside the 95% HDI, and the
    shrunk per-subtask differences closer to the truths than the observed ones."""
    rng = np.random.default_rng(11)
    truth = (0.5, 0.35, -1.6, 0.3)  # mu, sigma, mu_phi, tau_phi
    sizes = rng.integers(100, 500, size=57)
    table, true_delta = _simulate(rng, 57, sizes, *truth)
    res = hierarchical_items(table, rope=0.01, rng=3)
    true_mean = population.population_mean(*(np.array([v]) for v in (30.0, *truth)))[0]
    low, high = res.estimate.interval.low, res.estimate.interval.high
    assert low < true_mean < high, (low, true_mean, high)
    assert res.diagnostics.converged
    shrunk = res.delta.mean(axis=0)
    observed = res.observed_differences
    assert np.sqrt(np.mean((shrunk - true_delta) ** 2)) < np.sqrt(
        np.mean((observed - true_delta) ** 2)
    )
    assert res.p_a_better > 0.5  # the next subtask: A better (delta about 0.03 > 0.01)


@ANY_CONVERGENCE
def test_identical_systems_are_symmetric():
    table = _table([50, 40, 30], [5, 0, 3], [5, 0, 3], [40, 60, 64])
    res = hierarchical_items(table, rope=0.0, rng=1, **FAST)
    assert res.p_a_better == pytest.approx(res.p_b_better)


def test_convergence_is_recorded_and_warned():
    table = _table([50, 40], [5, 2], [1, 3], [40, 60])
    with pytest.warns(ConvergenceWarning):
        res = hierarchical_items(table, rng=1, draws=5, sampling=Sampling(tune=5, chains=2))
    assert not res.diagnostics.converged
    assert res.to_dict()["diagnostics"]["converged"] is False


@pytest.mark.parametrize(
    ("counts", "error", "match"),
    [
        ([[1, 2, 3, 4]], InputTypeError, "DataFrame"),
        (pd.DataFrame({"task": ["a"], "n11": [1], "n10": [1], "n01": [1]}), InputError, "n00"),
        (_table([1], [-1], [1], [1]), InputError, "n10 = -1"),
        (_table([1], [1.5], [1], [1]), InputError, "n10 = 1.5"),
        (_table([1], [np.nan], [1], [1]), InputError, "n10 = nan"),
        (_table([0], [0], [0], [0]), InputError, "no items"),
        (pd.concat([_table([1], [1], [1], [1])] * 2), InputError, "more than once"),
    ],
)
def test_bad_counts_are_named(counts, error, match):
    with pytest.raises(error, match=match):
        hierarchical_items(counts)


def test_bad_settings_are_named():
    table = _table([1], [1], [1], [1])
    with pytest.raises(InputError, match="parameterization"):
        hierarchical_items(table, parameterization="sideways")  # type: ignore[arg-type]
    with pytest.raises(InputTypeError, match="priors"):
        hierarchical_items(table, priors={"mu_scale": 1})  # type: ignore[arg-type]
    with pytest.raises(InputError, match="rope"):
        hierarchical_items(table, rope=-1)
    with pytest.raises(InputError, match="mu_scale"):
        ItemsHierarchicalPriors(mu_scale=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ItemsHierarchicalPriors().scales == (1.5, 1.0, 2.5, 1.0)


def test_auto_chooses_the_parameterization_from_the_counts():
    from isbetter.items.hierarchical.counts import SubtaskCounts
    from isbetter.items.hierarchical.route import choose_parameterization

    rng = np.random.default_rng(0)
    agree, _ = _simulate(rng, 57, 300, 0.0, 0.02, -1.5, 0.3)
    differ, _ = _simulate(rng, 57, 300, 0.4, 0.8, -1.5, 0.3)

    def choice(table):
        counts = table[["n11", "n10", "n01", "n00"]].to_numpy()
        return choose_parameterization(SubtaskCounts(tuple(table["task"]), counts))

    assert choice(agree)["direction"] == "noncentred"
    assert choice(differ)["direction"] == "centred"
    assert choice(agree.iloc[:1])["direction"] == "noncentred"
    assert choice(agree)["rate"] == "centred"  # 300 items each: rates pinned, tau_phi 0.3
    assert choice(_simulate(rng, 6, 60, 0.0, 0.5, -1.5, 0.02)[0])["rate"] == "noncentred"


def test_a_flagged_centred_fit_is_refitted_non_centred(monkeypatch):
    from isbetter.items.hierarchical import model

    monkeypatch.setattr(
        model, "choose_parameterization", lambda data: {"direction": "centred", "rate": "centred"}
    )
    table = _table([50, 40], [5, 2], [1, 3], [40, 60])
    with pytest.warns(ConvergenceWarning):
        res = hierarchical_items(table, rng=1, draws=5, sampling=Sampling(tune=5, chains=2))
    assert res.settings["refit_of"]["parameterization"] == {
        "direction": "centred",
        "rate": "centred",
    }
    assert res.settings["refit_of"]["converged"] is False
    assert res.settings["parameterization"] == {"direction": "noncentred", "rate": "noncentred"}
