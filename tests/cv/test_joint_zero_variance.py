"""The joint model's zero-variance rule: the pairwise model's (Corani's reference code's).

A data set on which two systems have the same score on every fold has a direction of
its contrasts that does not vary; the joint model gives it the per-fold variance the
pairwise model gives a zero-variance data set (U(-rope, rope) differences, rope^2 / 3;
rope 0: ``ZERO_VARIANCE_FLOOR`` x the mean sd of the pairs that vary), means kept
(``docs/joint_prior.md``, "Zero-variance data sets"). Checked here: at K = 2 the joint
model's data equal the pairwise model's and, given the noise, so do the likelihoods;
the rule does not depend on the order of the systems; it applies to the null space
only; the fit records it.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from _joint_oracle import conditional_loglik
from _oracle import conditional_loglik as pairwise_loglik

from _joint_data import score_table, study_scores
from isbetter import ConvergenceWarning
from isbetter.cv.hierarchical.priors import HierarchicalPriors
from isbetter.cv.hierarchical.spec import ZERO_VARIANCE_FLOOR
from isbetter.cv.hierarchical.spec import prepare as pairwise_prepare
from isbetter.cv.joint.spec import contrast_basis, prepare


def _with_ties(rng: np.random.Generator, k: int = 2) -> np.ndarray:
    """Scores of `k` systems on 8 data sets: s0 and s1 equal on every fold of d1 and d4,
    and d6's s1 is s0 shifted by 0.02 (a constant difference)."""
    scores = study_scores(rng, np.linspace(0.0, 0.02, k))
    scores[1, 1] = scores[1, 0]
    scores[4, 1] = scores[4, 0]
    scores[6, 1] = scores[6, 0] - 0.02
    return scores


def _pair_variance(data, a: int, b: int) -> np.ndarray:
    """Per data set, the per-fold variance of systems a - b (score units) from `cross`."""
    h = contrast_basis(data.n_systems)
    g = h[a] - h[b]
    return np.einsum("j,ijl,l->i", g, data.cross, g) / data.n * data.scale**2


@pytest.mark.parametrize("rope", [0.01, 0.0])
def test_at_two_systems_the_data_are_the_pairwise_model_s(rng, rope):
    """K = 2: the same zero-variance data sets and floor, the same scale, 2 x the
    contrast's cross-products = the differences' SS, sqrt(2) x its mean = their mean;
    and given the noise (sigma_i^2 = 2 Sigma_i) the same likelihood up to the Jacobian
    n log(2) / 2 of the contrast."""
    scores = _with_ties(rng)
    table = score_table(scores)
    joint = prepare(table, ("s0", "s1"), rope=rope)
    pair = pairwise_prepare(table.paired("s0", "s1"), rope, None, HierarchicalPriors())
    assert joint.zero_variance == pair.zero_variance == ("d1", "d4", "d6")
    assert joint.zero_variance_sd == pytest.approx(pair.zero_variance_sd, rel=1e-12)
    expected = 0.01 / math.sqrt(3.0)
    if rope == 0.0:
        varying = np.delete(scores[:, 0] - scores[:, 1], [1, 4, 6], axis=0).std(axis=1)
        expected = ZERO_VARIANCE_FLOOR * varying.mean()
    assert joint.zero_variance_sd == pytest.approx(expected, rel=1e-12)
    assert joint.scale == pytest.approx(pair.scale, rel=1e-12)
    np.testing.assert_allclose(2.0 * joint.cross[:, 0, 0], pair.ss, rtol=1e-10)
    np.testing.assert_allclose(math.sqrt(2.0) * joint.means[:, 0], pair.mean, rtol=1e-10)
    assert pair.mean[6] * pair.scale == pytest.approx(0.02)  # the observed mean kept
    sigma = np.linspace(0.5, 2.0, 8)
    delta = np.linspace(-1.0, 1.0, 8)
    ours = conditional_loglik(
        joint.n, joint.means, joint.cross, joint.rho, delta[:, None] / math.sqrt(2.0),
        (sigma**2 / 2.0)[:, None, None],
    )  # fmt: skip
    theirs = pairwise_loglik(pair.mean, pair.ss, pair.n, pair.rho, delta, sigma)
    np.testing.assert_allclose(ours, theirs + 0.5 * joint.n * math.log(2.0), rtol=1e-12)


def test_the_floor_fills_only_the_direction_that_does_not_vary(rng):
    """K = 3, s0 = s1 on every fold of d1: that data set's s0 - s1 gets rope^2 / 3 per
    fold (it had 0: without the rule the joint model measured that direction without
    noise); its other directions, and every other data set, keep their data."""
    scores = _with_ties(rng, k=3)
    table = score_table(scores)
    bare = prepare(table, ("s0", "s1", "s2"), rope=0.0)
    data = prepare(table, ("s0", "s1", "s2"), rope=0.02)
    assert data.zero_variance == ("d1", "d4", "d6")
    assert data.zero_variance_sd == pytest.approx(0.02 / math.sqrt(3.0))
    assert _pair_variance(data, 0, 1)[[1, 4, 6]] == pytest.approx(0.02**2 / 3, rel=1e-9)
    assert _pair_variance(bare, 0, 1)[[1, 4, 6]] == pytest.approx(
        bare.zero_variance_sd**2, rel=1e-9
    )
    # the direction that varies, orthogonal to s0 - s1, keeps its cross-products
    h = contrast_basis(3)
    other = (h[0] + h[1] - 2 * h[2]) / math.sqrt(6.0)
    np.testing.assert_allclose(
        np.einsum("j,ijl,l->i", other, data.cross, other) * data.scale**2,
        np.einsum("j,ijl,l->i", other, bare.cross, other) * bare.scale**2,
        rtol=1e-9,
    )
    untouched = [0, 2, 3, 5, 7]
    np.testing.assert_allclose(
        data.cross[untouched] * data.scale**2, bare.cross[untouched] * bare.scale**2, rtol=1e-12
    )
    np.testing.assert_allclose(data.means * data.scale, bare.means * bare.scale, rtol=1e-12)


def test_the_rule_does_not_depend_on_the_order_of_the_systems(rng):
    """Permuting the systems maps the contrasts by an orthogonal O = H^T P H: the floored
    cross-products map by it too, and the floor, the data sets and the scale stay."""
    scores = _with_ties(rng, k=4)
    scores[3, 3] = scores[3, 2]  # another tie, of two other systems, on another data set
    table = score_table(scores)
    systems = ("s0", "s1", "s2", "s3")
    order = (2, 0, 3, 1)
    base = prepare(table, systems, rope=0.01)
    moved = prepare(table, tuple(systems[j] for j in order), rope=0.01)
    assert base.zero_variance == moved.zero_variance == ("d1", "d3", "d4", "d6")
    assert moved.zero_variance_sd == base.zero_variance_sd
    assert moved.scale == pytest.approx(base.scale, rel=1e-12)
    h = contrast_basis(4)
    o = h.T @ np.eye(4)[list(order)] @ h
    np.testing.assert_allclose(moved.cross, o @ base.cross @ o.T, atol=1e-12)
    np.testing.assert_allclose(moved.means, base.means @ o.T, atol=1e-12)


def test_fewer_folds_than_contrasts_is_no_zero_variance(rng):
    """With n - 1 < d every data set lacks directions whatever its scores: no floor."""
    scores = study_scores(rng, [0.0, 0.01, 0.02, 0.03], n=3)
    data = prepare(score_table(scores), ("s0", "s1", "s2", "s3"), rope=0.01)
    assert data.zero_variance == () and data.zero_variance_sd is None


def test_the_fit_records_the_floor(rng):
    from isbetter.cv.joint.model import joint_fit

    table = score_table(_with_ties(rng, k=3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = joint_fit(table, rope=0.01, draws=30, tune=30, chains=1, rng=3)
    assert fit.settings["zero_variance_datasets"] == ["d1", "d4", "d6"]
    assert fit.settings["zero_variance_sd"] == pytest.approx(0.01 / math.sqrt(3.0))
