"""The simulator of the independent-components SBC (``validation/joint_sbc.py``) against its law.

The Haar draw of Q (invariance: mean zero, E[Q Q^T] = I, a column's coordinate of the
uniform law on the sphere), the pair scales' half-t at K = 2, the same law for every
pair at K = 4 (the prior is invariant under permutations of the systems), the
components' nu hierarchy, and the deviations' law against
``isbetter.cv.joint.predictive.component_pair_masses``. Fast: no fit.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.joint_sbc import (  # noqa: E402
    TAILS_QUANTITIES,
    JointSetting,
    draw_truth,
    haar_orthogonal,
    parse_args,
)

from isbetter.cv.joint.predictive import component_pair_masses, component_weights  # noqa: E402
from isbetter.cv.joint.spec import contrast_basis  # noqa: E402

P_MIN = 1e-3


def _truths(n, k=4, q=1, seed=1):
    s = JointSetting(q, n_systems=k, tails="components", spread_prior="huang-wand")
    rng = np.random.default_rng(seed)
    return s, [draw_truth(s, rng) for _ in range(n)]


@pytest.mark.parametrize("d", [3, 4])
def test_the_haar_draw_is_invariant(d):
    """A column of a Haar Q is uniform on the sphere: at d = 3 a coordinate is U(-1, 1)
    (Archimedes), at d = 4 its square is Beta(1/2, 3/2); E[Q] = 0, E[Q Q^T] = I. The
    first fails without the sign fix (numpy's QR makes Q[0, 0] <= 0)."""
    rng = np.random.default_rng(7)
    n = 3000
    q = np.array([haar_orthogonal(d, rng) for _ in range(n)])
    np.testing.assert_allclose(
        q @ np.swapaxes(q, 1, 2), np.broadcast_to(np.eye(d), q.shape), atol=1e-12
    )
    assert np.all(np.abs(q.mean(axis=0)) < 4.5 / np.sqrt(d * n))  # sd of an entry: 1/sqrt(d)
    for i, j in [(0, 0), (d - 1, 0), (1, d - 1)]:
        x = q[:, i, j]
        if d == 3:
            assert stats.kstest(x, stats.uniform(-1, 2).cdf).pvalue > P_MIN, (i, j)
        else:
            assert stats.kstest(x**2, stats.beta(0.5, 1.5).cdf).pvalue > P_MIN, (i, j)
        assert abs(np.mean(x > 0) - 0.5) < 4.5 * 0.5 / np.sqrt(n), (i, j)


def test_the_pair_scale_at_two_systems_is_half_t():
    """K = 2: the pair's scale sqrt(2) s is half-t_2(0, sqrt(2) A) = half-t_2(0,
    spread_pair_scale), the Huang-Wand prior's pair scale."""
    s, truths = _truths(2000, k=2)
    x = np.array([t["scale01"] for t in truths])
    law = stats.t(s.half_t_df, scale=s.spread_pair_scale)
    assert stats.kstest(x, lambda v: 2.0 * law.cdf(v) - 1.0).pvalue > P_MIN
    loading = np.array([t["loading"] for t in truths])
    assert loading.shape == (2000, 1, 1)
    np.testing.assert_allclose(x, np.sqrt(2.0) * np.abs(loading[:, 0, 0]))


def test_every_pair_has_the_same_scale_law():
    """K = 4: the prior is invariant under permutations of the systems (Q Haar), so
    pairs (0, 1), (2, 3) and (0, 3) have one law of scales (two-sample KS)."""
    _, truths = _truths(3000, k=4, seed=2)
    loading = np.array([t["loading"] for t in truths])
    scales = {
        pair: np.sqrt((component_weights(loading, *pair) ** 2).sum(axis=1))
        for pair in [(0, 1), (2, 3), (0, 3)]
    }
    np.testing.assert_allclose(scales[(0, 1)], [t["scale01"] for t in truths])
    np.testing.assert_allclose(scales[(2, 3)], [t["scale23"] for t in truths])
    # independent halves, so that the samples compared are independent
    assert stats.ks_2samp(scales[(0, 1)][:1500], scales[(2, 3)][1500:]).pvalue > P_MIN
    assert stats.ks_2samp(scales[(0, 1)][:1500], scales[(0, 3)][1500:]).pvalue > P_MIN


def test_the_components_nu_follow_their_hierarchy():
    """(nu_j - 1) beta_j ~ Gamma(alpha_j, 1), one alpha_j ~ U(1, 2) and beta_j ~ U(0.01,
    0.1) per component: uniform probability integral transforms, independent components."""
    _, truths = _truths(1500, k=4, seed=3)
    alpha = np.array([t["alpha"] for t in truths])
    beta = np.array([t["beta"] for t in truths])
    nu = np.array([t["nu"] for t in truths])
    assert alpha.shape == beta.shape == nu.shape == (1500, 3)
    assert stats.kstest(alpha.ravel(), stats.uniform(1, 1).cdf).pvalue > P_MIN
    assert stats.kstest(beta.ravel(), stats.uniform(0.01, 0.09).cdf).pvalue > P_MIN
    pit = stats.gamma.cdf((nu - 1.0) * beta, alpha)
    assert stats.kstest(pit.ravel(), "uniform").pvalue > P_MIN
    r = np.corrcoef(pit.T)[np.triu_indices(3, 1)]
    assert np.all(np.abs(r) < 4.5 / np.sqrt(1500)), r


@pytest.mark.parametrize("seed", [3, 4])
def test_the_simulated_deviations_follow_the_model(seed):
    """Many data sets of one study: each pair's deviation falls in the three regions of
    a ROPE as often as component_pair_masses says (within 4.5 MCSE), and the spread is
    H L L^T H^T."""
    q = 100_000
    s = JointSetting(q, tails="components", spread_prior="huang-wand")
    truth = draw_truth(s, np.random.default_rng(seed))
    basis = contrast_basis(4)
    np.testing.assert_allclose(
        truth["spread"], basis @ truth["loading"] @ truth["loading"].T @ basis.T
    )
    u = truth["u"] @ basis.T
    for a, b in [(0, 1), (0, 3), (2, 3)]:
        d = u[:, a] - u[:, b]
        rope = 0.5 * np.std(d)
        seen = np.array([np.mean(d > rope), np.mean(np.abs(d) <= rope), np.mean(d < -rope)])
        w = component_weights(truth["loading"], a, b)
        law = component_pair_masses(
            np.zeros(4000), np.tile(w, (4000, 1)), np.tile(truth["nu"], (4000, 1)), rope, rng=1
        ).mean(axis=0)
        mcse = np.sqrt(seen * (1 - seen) / q + 0.03**2 / 4000)
        assert np.all(np.abs(law - seen) < 4.5 * mcse), (a, b, law, seen, truth["nu"])


def test_the_command_line_selects_the_components():
    args = parse_args(["--out", "x", "--tails", "components"])
    assert args.tails == "components" and args.spread_prior == "huang-wand"
    assert "nu min" in TAILS_QUANTITIES["components"]
    with pytest.raises(SystemExit):
        parse_args(["--out", "x", "--tails", "components", "--spread-prior", "inverse-wishart"])
    default = parse_args(["--out", "x"])  # JointPriors()'s form, and its rule when a
    named = parse_args(["--out", "x", "--spread-prior", "inverse-wishart"])  # prior is named
    assert (default.tails, default.spread_prior) == ("components", "huang-wand")
    assert (named.tails, named.spread_prior) == ("shared", "inverse-wishart")


def _prior_fit(s, n, rng):
    """A stand-in for the components fit whose 'posterior' draws are prior draws.

    The shape of the expected JointFit (effects, nu, loading in score units; the
    posterior's per-data-set ``deviations`` in model units, scale 1), so that
    ``replication``'s ranks of the truth among them are uniform whatever the data. The
    prior written out again here (an independent check of ``draw_components``).
    """
    from types import SimpleNamespace

    k, d = s.n_systems, s.n_systems - 1
    alpha, beta = rng.uniform(*s.alpha, size=(n, d)), rng.uniform(*s.beta, size=(n, d))
    nu = 1.0 + rng.gamma(alpha, 1.0 / beta)
    effects = rng.normal(0.0, s.effect_bound, size=(n, d)) @ contrast_basis(k).T  # N(0, tau^2)
    scale = s.spread_pair_scale / np.sqrt(2.0) * np.abs(rng.standard_t(s.half_t_df, (n, d)))
    loading = np.array([haar_orthogonal(d, rng) for _ in range(n)]) * scale[:, None, :]
    deviations = np.einsum("nij,nj->ni", loading, rng.standard_t(nu))[None, :, None, :]
    return SimpleNamespace(
        effects=effects[None],
        nu=nu[None],
        loading=loading[None],
        data=SimpleNamespace(scale=1.0),
        idata=SimpleNamespace(
            posterior={"deviations": SimpleNamespace(to_numpy=lambda: deviations)}
        ),
        diagnostics=SimpleNamespace(divergences=0, r_hat_max=1.0, ess_bulk_min=1000.0),
    )


def test_replication_ranks_are_uniform_when_the_posterior_is_the_prior(monkeypatch):
    """The components path of ``replication`` end to end with a stand-in fit that
    returns prior draws: every invariant quantity's rank is uniform (chi^2 p > 1e-3).
    This checks that each truth and its draws are defined alike (units, min/max nu,
    the next and the first data sets' differences); with the prior for a posterior it
    cannot see a truth paired with the wrong one of two quantities of one law (e.g. the
    scales of pairs 0-1 and 2-3); the SBC with the real fit does."""
    import validation.joint_sbc as sbc
    from validation.calibration import uniformity

    import isbetter.cv.joint.model as model

    fit_rng = np.random.default_rng(9)
    monkeypatch.setattr(sbc, "matched_priors", lambda table, s: None)
    monkeypatch.setattr(model, "joint_fit", lambda table, **kw: _prior_fit(s, 49, fit_rng))
    s = JointSetting(2, tails="components", spread_prior="huang-wand")
    n_ranks, studies = 10, 200
    seeds = np.random.SeedSequence(5).spawn(studies)
    out = [sbc.replication(s, seed, n_ranks) for seed in seeds]
    assert set(out[0]["ranks"]) == set(TAILS_QUANTITIES["components"])
    for name in TAILS_QUANTITIES["components"]:
        _, p = uniformity(np.array([o["ranks"][name] for o in out]), n_ranks, 5)
        assert p > P_MIN, (name, p)
