"""Tests of the joint correlated model of K systems and the ranking read off it.

The likelihood is checked against dense densities (the matrix normal of the
contrasts; for K = 2 the pairwise model's), the integral over the noise covariance
by the identity p(Z) = p(Z | S) p(S) / p(S | Z), the compiled density against
PyMC's, and the ranking's shape, JSON, seeds and errors on small fits. The
recovery of a known order and the agreement with the pairwise ranking of the five
UCI classifiers are marked slow; the calibration is ``validation/joint_sbc.py``.
"""

from __future__ import annotations

import itertools
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from isbetter import ConvergenceWarning, InputError, InputTypeError, rank, read_scores
from isbetter.cli import main
from isbetter.cv.hierarchical.spec import conditional_loglik as pairwise_loglik
from isbetter.cv.joint.likelihood import (
    conditional_loglik,
    marginal_loglik,
    sufficient_statistics,
)
from isbetter.cv.joint.model import draw_spread
from isbetter.cv.joint.spec import JointPriors, contrast_basis, prepare
from isbetter.inference.ranks import RankSummary, rank_summary
from isbetter.report import render, summary_from_dict

SMALL = {"draws": 300, "tune": 300, "chains": 2}


def _compound_symmetry(n: int, rho: float) -> np.ndarray:
    return (1 - rho) * np.eye(n) + rho * np.ones((n, n))


def _table(scores: np.ndarray, *, lower: bool = False, names=None) -> object:
    """A ScoreTable of ``scores[i, k, f]``: data set i, system k, fold f (one run)."""
    q, k, n = scores.shape
    names = names or [f"s{m}" for m in range(k)]
    rows = [
        (f"d{i}", names[m], f + 1, scores[i, m, f])
        for i in range(q)
        for m in range(k)
        for f in range(n)
    ]
    frame = pd.DataFrame(rows, columns=["dataset", "system", "fold", "acc"])
    return read_scores(frame, run=None, score="acc", higher_is_better=not lower)


def _study(rng: np.random.Generator, effects, q: int = 8, n: int = 10, spread: float = 0.004):
    """Scores with fold effects, data-set deviations and noise around known effects."""
    effects = np.asarray(effects, dtype=float)
    k = effects.size
    level = rng.uniform(0.6, 0.9, size=(q, 1, 1))
    folds = rng.normal(0, 0.02, size=(q, 1, n))
    deviations = rng.normal(0, spread, size=(q, k, 1))
    noise = rng.normal(0, 0.005, size=(q, k, n))
    return level + folds + effects[None, :, None] + deviations + noise


# --------------------------------------------------------------------------- likelihood
@pytest.mark.parametrize(("k", "n", "rho"), [(4, 10, 0.1), (3, 7, 0.0), (5, 20, 0.2), (2, 5, 0.5)])
def test_conditional_loglik_equals_dense_matrix_normal(rng, k, n, rho):
    """The sufficient-statistic density is the dense density of the contrast vectors."""
    d = k - 1
    basis = contrast_basis(k)
    x = rng.normal(size=(k, n)) + 3.0 * rng.normal(size=n)  # a large shared fold effect
    nn, mean, cross = sufficient_statistics(basis.T @ x)
    for _ in range(3):
        theta = rng.normal(size=k)
        a = rng.normal(size=(d, d))
        cov = a @ a.T + 0.5 * np.eye(d)
        z = basis.T @ x  # (d, n): column f is fold f's contrasts
        dense = stats.multivariate_normal(
            mean=np.tile(basis.T @ theta, n), cov=np.kron(_compound_symmetry(n, rho), cov)
        ).logpdf(z.T.reshape(-1))
        ours = conditional_loglik(
            nn, mean[None], cross[None], np.array([rho]), (basis.T @ theta)[None], cov[None]
        )[0]
        assert ours == pytest.approx(dense, rel=1e-10, abs=1e-10)


def test_diagonal_noise_is_the_designs_formula_and_the_pairwise_likelihood(rng):
    """With per-system noise sigma_k, DESIGN §4.2's formula; for K = 2 the Corani likelihood."""
    k, n, rho = 4, 10, 0.1
    basis = contrast_basis(k)
    x = rng.normal(size=(k, n)) + rng.normal(size=n)
    theta, sigma = rng.normal(size=k), rng.uniform(0.5, 2.0, size=k)
    nn, mean, cross = sufficient_statistics(basis.T @ x)
    ours = conditional_loglik(
        nn,
        mean[None],
        cross[None],
        np.array([rho]),
        (basis.T @ theta)[None],
        (basis.T @ np.diag(sigma**2) @ basis)[None],
    )[0]
    # the design's formula, for the reference contrasts x_k - x_K (|det| of the change of
    # contrasts: the orthonormal ones have det(C C^T) = K times smaller a volume)
    _, xbar, r = sufficient_statistics(x)
    w = sigma**-2
    p = np.diag(w) - np.outer(w, w) / w.sum()
    v = xbar - theta
    design = (
        -0.5 * n * (np.log(sigma**2).sum() + np.log(w.sum()))
        - np.trace(p @ r) / (2 * (1 - rho))
        - n * v @ p @ v / (2 * (1 + (n - 1) * rho))
        - 0.5 * n * (k - 1) * math.log(2 * math.pi)
        - 0.5 * (k - 1) * ((n - 1) * math.log1p(-rho) + math.log1p((n - 1) * rho))
    )
    assert ours == pytest.approx(design + 0.5 * n * math.log(k), rel=1e-10)
    # K = 2: the orthonormal contrast is the difference over sqrt(2)
    two = x[:2]
    nn, mean, cross = sufficient_statistics(contrast_basis(2).T @ two)
    joint = conditional_loglik(
        nn,
        mean[None],
        cross[None],
        np.array([rho]),
        (contrast_basis(2).T @ theta[:2])[None],
        np.array([[[(sigma[0] ** 2 + sigma[1] ** 2) / 2]]]),
    )[0]
    d = two[0] - two[1]
    pairwise = pairwise_loglik(
        np.array([d.mean()]),
        np.array([((d - d.mean()) ** 2).sum()]),
        np.array([n]),
        rho,
        theta[0] - theta[1],
        math.sqrt(sigma[0] ** 2 + sigma[1] ** 2),
    )[0]
    assert joint == pytest.approx(pairwise + 0.5 * n * math.log(2.0), rel=1e-12)


def test_marginal_loglik_integrates_the_noise_covariance(rng):
    """p(Z) = p(Z | S) p(S) / p(S | Z) for any S: the inverse-Wishart integral is exact."""
    k, n, rho = 4, 10, 0.1
    d, basis = k - 1, contrast_basis(k)
    x = rng.normal(size=(k, n))
    nn, mean, cross = sufficient_statistics(basis.T @ x)
    theta = basis.T @ rng.normal(size=k)
    nu0, psi = d + 1.0, 0.7
    marginal = marginal_loglik(nn, mean[None], cross[None], np.array([rho]), theta[None], nu0, psi)
    v = mean - theta
    q_form = cross / (1 - rho) + n / (1 + (n - 1) * rho) * np.outer(v, v)
    for s in (np.eye(d) * 0.3, np.cov(rng.normal(size=(d, 20)))):
        cond = conditional_loglik(
            nn, mean[None], cross[None], np.array([rho]), theta[None], s[None]
        )
        prior = stats.invwishart(df=nu0, scale=psi * np.eye(d)).logpdf(s)
        post = stats.invwishart(df=nu0 + n, scale=psi * np.eye(d) + q_form).logpdf(s)
        assert marginal[0] == pytest.approx(cond[0] + prior - post, rel=1e-10)
    # K = 2: the pairwise likelihood integrated over sigma^2 / 2 ~ inverse-gamma, numerically
    two = x[:2]
    nn, mean, cross = sufficient_statistics(contrast_basis(2).T @ two)
    t2 = contrast_basis(2).T @ np.array([0.3, -0.1])
    closed = marginal_loglik(nn, mean[None], cross[None], np.array([rho]), t2[None], 1.5, psi)[0]
    dd = two[0] - two[1]

    def integrand(var: float) -> float:
        lik = pairwise_loglik(
            np.array([dd.mean()]),
            np.array([((dd - dd.mean()) ** 2).sum()]),
            np.array([n]),
            rho,
            math.sqrt(2.0) * t2[0],
            math.sqrt(2.0 * var),
        )[0]
        prior = stats.invgamma(a=1.5 / 2, scale=psi / 2).logpdf(var)
        return math.exp(lik + 0.5 * n * math.log(2.0) + prior - closed)

    total, _ = integrate.quad(integrand, 0.0, np.inf, limit=200)
    assert total == pytest.approx(1.0, rel=1e-6)


# --------------------------------------------------------------------------- data preparation
def test_prepare_orients_scales_and_ignores_fold_effects(rng):
    scores = _study(rng, [0.0, 0.01, 0.02])
    base = prepare(_table(scores), ("s0", "s1", "s2"))
    # a fold effect shared by the systems and a common shift change nothing
    shifted = prepare(_table(scores + rng.normal(size=(8, 1, 10)) + 5.0), ("s0", "s1", "s2"))
    np.testing.assert_allclose(shifted.means, base.means, atol=1e-9)
    np.testing.assert_allclose(shifted.cross, base.cross, atol=1e-9)
    # scaling the scores changes only the scale
    scaled = prepare(_table(3.0 * scores), ("s0", "s1", "s2"))
    assert scaled.scale == pytest.approx(3.0 * base.scale)
    np.testing.assert_allclose(scaled.means, base.means, atol=1e-9)
    # lower-is-better: the same errors as accuracy's complement give the same oriented data
    errors = prepare(_table(1.0 - scores, lower=True), ("s0", "s1", "s2"))
    np.testing.assert_allclose(errors.means, base.means, atol=1e-9)
    assert errors.higher_is_better is False
    np.testing.assert_allclose(errors.mean_scores, 1.0 - base.mean_scores)


def test_prepare_bad_input_names_the_argument(rng):
    table = _table(_study(rng, [0.0, 0.01, 0.02]))
    with pytest.raises(InputError, match="at least 2 different systems"):
        prepare(table, ("s0", "s0"))
    with pytest.raises(InputError, match="unknown system 'zz'"):
        prepare(table, ("s0", "zz"))
    with pytest.raises(InputTypeError, match="`priors` must be JointPriors"):
        prepare(table, ("s0", "s1"), priors=object())  # type: ignore[arg-type]
    with pytest.raises(InputError, match="noise_scale=-1.0"):
        JointPriors(noise_scale=-1.0)
    one = _table(_study(rng, [0.0, 0.01], q=1))
    with pytest.raises(InputError, match="at least 2 data sets"):
        prepare(one, ("s0", "s1"))
    same = np.broadcast_to(_study(rng, [0.0])[:, :1], (8, 3, 10)).copy()
    with pytest.raises(InputError, match="nothing to rank"):
        prepare(_table(same), ("s0", "s1", "s2"))


def test_identical_systems_keep_the_posterior_proper(rng):
    """Two systems with the same score on every fold: the noise prior fills that contrast."""
    scores = _study(rng, [0.0, 0.01, 0.02])
    scores[:, 2] = scores[:, 1]
    p = prepare(_table(scores), ("s0", "s1", "s2"))
    data = p.model_data(JointPriors())
    assert np.all(np.isfinite(data["transform"])) and np.isfinite(data["const"])


# --------------------------------------------------------------------------- compiled density
@pytest.mark.parametrize(("q", "k", "n"), [(4, 3, 10), (3, 5, 6), (6, 2, 10)])
def test_compiled_density_matches_pymc(rng, q, k, n):
    """The hand-written density and gradient are PyMC's model's, to 1e-9."""
    import pymc as pm

    from isbetter.cv.joint.compiled_backend import log_density
    from isbetter.cv.joint.pymc_backend import build_model

    scores = _study(rng, np.linspace(0.0, 0.02, k), q=q, n=n)
    data = prepare(_table(scores), [f"s{m}" for m in range(k)]).model_data(JointPriors())
    model = build_model(q, k)
    with model:
        pm.set_data(data)
    logp = model.compile_logp(mode="FAST_COMPILE")
    dlogp = model.compile_dlogp(mode="FAST_COMPILE")
    names = [v.name for v in model.value_vars]
    for _ in range(3):
        point = {
            name: 0.7 * rng.normal(size=np.shape(v)) for name, v in model.initial_point().items()
        }
        flat = np.concatenate([np.ravel(point[name]) for name in names])
        value, grad = log_density(flat, data)
        assert value == pytest.approx(float(logp(point)), rel=1e-10, abs=1e-9)
        np.testing.assert_allclose(grad, dlogp(point), rtol=1e-8, atol=1e-9)


def test_draw_spread_has_the_inverse_wishart_mean(rng):
    n, q, d = 20000, 6, 3
    deviations = np.broadcast_to(rng.normal(size=(q, d)), (n, q, d))
    precision = np.broadcast_to(rng.uniform(0.5, 2.0, size=q), (n, q))
    draws = draw_spread(deviations, precision, d + 3.0, 0.5, np.random.default_rng(1))
    scatter = 0.5 * np.eye(d) + np.einsum("q,qa,qb->ab", precision[0], deviations[0], deviations[0])
    expected = scatter / (d + 3.0 + q - d - 1)
    # the Monte Carlo error of a mean of 20000 inverse-Wishart draws is below 2% here
    np.testing.assert_allclose(draws.mean(axis=0), expected, rtol=0.03, atol=0.03 * expected.max())


# --------------------------------------------------------------------------- ranks
def test_rank_summary_counts_draws():
    effects = np.array(
        [[0.0, 1.0, 2.0], [0.0, 2.0, 1.0], [0.0, 1.0, 1.5], [3.0, 1.0, 2.0]]  # a < b < c ...
    )
    r = rank_summary(effects, ("a", "b", "c"), rope=0.6)
    assert r.p_best == {"a": 0.25, "b": 0.25, "c": 0.5}
    assert r.expected_rank == {"a": 2.5, "b": 2.0, "c": 1.5}
    assert r.rank_interval["a"] == (1, 3) and r.rank_interval["c"] == (1, 2)
    assert r.rank_probabilities["a"] == [0.25, 0.0, 0.75]
    assert r.top_orders[0] == ("a < b < c", 0.5)
    assert dict(r.rope_orders)["a < b ≈ c"] == 0.25  # draw 3: b and c within 0.6
    assert RankSummary.from_dict(json.loads(json.dumps(r.to_dict()))) == r


# --------------------------------------------------------------------------- fits and rankings
@pytest.fixture(scope="module")
def small_study():
    """3 systems on 6 data sets: s2 far better, s0 and s1 practically equal."""
    scores = _study(np.random.default_rng(5), [0.0, 0.001, 0.05], q=6)
    return _table(scores)


@pytest.fixture(scope="module")
def small_ranking(small_study):
    return rank(small_study, rope=0.01, method="joint", rng=2, **SMALL)


def test_joint_ranking_has_the_pairwise_shape(small_ranking):
    r = small_ranking
    assert len(r.pairs) == 3 and {p.method for p in r.pairs} == {"joint"}
    for p in r.pairs:
        assert p.counting == "argmax" and p.predictive is not None
        assert p.estimate is not None and p.diagnostics is not None and p.observed is not None
        assert p.p_a_better + p.p_rope + p.p_b_better == pytest.approx(1.0)
        assert len(r.simplex["acc"][(p.system_a, p.system_b)]) > 0
    assert r.order("acc") == "s0 ≈ s1 < s2"
    assert r.pair("s2", "s0", "acc").p_a_better > 0.9
    j = r.joint["acc"]
    assert j.p_best["s2"] > 0.9 and j.rank_interval["s2"] == (1, 1)
    assert j.top_orders[0][0].endswith("< s2")
    assert sum(j.p_best.values()) == pytest.approx(1.0)
    assert r.settings["comparison_method"] == "joint"


def test_joint_ranking_json_round_trip_and_reports(small_ranking):
    data = json.loads(json.dumps(small_ranking.to_dict()))
    block = data["metrics"]["acc"]["joint"]
    assert {"method", "p_best", "expected_rank", "rank_interval", "top_orders"} <= set(block)
    assert block["method"] == "joint" and set(block["top_orders"][0]) == {"order", "p"}
    again = summary_from_dict(data)
    assert again.to_dict() == small_ranking.to_dict()
    for fmt in ("text", "markdown", "latex", "html"):
        out = render(small_ranking, fmt)
        assert "P(best)" in out and "expected rank" in out and "most probable orders" in out, fmt
    assert json.loads(render(small_ranking, "json"))["metrics"]["acc"]["joint"] == block


def test_joint_ranking_same_seed_same_numbers(small_study, small_ranking):
    again = rank(small_study, rope=0.01, method="joint", rng=2, **SMALL)
    assert again.to_dict()["metrics"] == small_ranking.to_dict()["metrics"]


def test_joint_ranking_lower_is_better_flips(rng):
    scores = _study(np.random.default_rng(5), [0.0, 0.001, 0.05], q=6)
    errors = rank(_table(1.0 - scores, lower=True), rope=0.01, method="joint", rng=2, **SMALL)
    assert errors.order("acc") == "s0 ≈ s1 < s2"
    assert errors.joint["acc"].p_best["s2"] > 0.9


def test_joint_ranking_bad_input(small_study, tmp_path):
    with pytest.raises(InputError, match="`jobs` applies to the pairwise route"):
        rank(small_study, method="joint", jobs=2)
    with pytest.raises(InputError, match="`cache_dir` applies to the pairwise route"):
        rank(small_study, method="joint", cache_dir=tmp_path)
    with pytest.raises(InputError, match="Option\\(s\\) 'prior' do not apply to method 'joint'"):
        rank(small_study, method="joint", prior=1.0)
    with pytest.raises(InputError, match="Unknown method 'jointly'"):
        rank(small_study, method="jointly")


def test_cli_rank_joint_json(tmp_path, capsys):
    scores = _study(np.random.default_rng(5), [0.0, 0.001, 0.05], q=6)
    _table(scores).data.to_csv(tmp_path / "scores.csv", index=False)
    base = ["rank", str(tmp_path / "scores.csv"), "--metric", "acc", "--method", "joint"]
    code = main([*base, "--rope", "0.01", "--seed", "2", "--draws", "300", "--tune", "300",
                 "--chains", "2", "--format", "json"])  # fmt: skip
    assert code == 0
    block = json.loads(capsys.readouterr().out)["metrics"]["acc"]
    assert block["order"] == "s0 ≈ s1 < s2" and block["joint"]["p_best"]["s2"] > 0.9
    assert main([*base, "--jobs", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--jobs applies to the pairwise route" in err


# --------------------------------------------------------------------------- slow
@pytest.mark.slow
def test_joint_recovers_a_known_order():
    """K = 4, 20 data sets: true effects 0, 0, 3, 6 ROPEs; the order and P(best) recovered."""
    scores = _study(np.random.default_rng(7), [0.0, 0.0, 0.03, 0.06], q=20)
    res = rank(_table(scores), rope=0.01, method="joint", rng=1)
    assert res.order("acc") == "s0 ≈ s1 < s2 < s3"
    j = res.joint["acc"]
    assert j.p_best["s3"] > 0.99 and j.rank_interval["s3"] == (1, 1)
    assert j.rank_interval["s2"] == (2, 2)
    assert {j.top_orders[0][0], j.top_orders[1][0]} == {"s0 < s1 < s2 < s3", "s1 < s0 < s2 < s3"}
    assert res.pairs[0].diagnostics is not None and res.pairs[0].diagnostics.converged


#: pairs of the UCI ranking whose pairwise fit is decisive (largest probability >= 0.9)
#: and where the joint model's relation differs, with the reason (see the report)
UCI_EXPLAINED: dict[tuple[str, str], str] = {}


@pytest.mark.slow
def test_joint_agrees_with_the_decisive_pairwise_relations(uci_long_path):
    table = read_scores(uci_long_path, dataset="dataset_id", system="classifier", score="accuracy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pairwise = rank(table, rope=0.01, rng=1)
    joint = rank(table, rope=0.01, method="joint", rng=1)
    assert joint.order("accuracy") == pairwise.order("accuracy")
    decisive = 0
    for a, b in itertools.combinations(table.systems, 2):
        p = pairwise.pair(a, b, "accuracy")
        if max(p.p_a_better, p.p_rope, p.p_b_better) < 0.9:
            continue
        decisive += 1
        if (a, b) in UCI_EXPLAINED:
            continue
        assert joint.relations["accuracy"][(a, b)] == pairwise.relations["accuracy"][(a, b)], (a, b)
    assert decisive >= 5
