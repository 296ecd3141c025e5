"""The compiled factor of sigma_i's prior bound (tables from SciPy) and the densities using it."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import special

from isbetter import ConvergenceWarning
from isbetter.cv.hierarchical.numerics.sigma_bound import bound_tables, log_bound, log_q


@pytest.fixture(scope="module")
def compiled_log_bound():
    import numba
    from numba.extending import register_jitable

    from isbetter.inference.nu_prior import interpolate

    register_jitable(interpolate)
    return numba.njit(log_bound)


@pytest.mark.parametrize("a", [0.5, 1.0, 4.5, 49.5, 499.5])
def test_table_equals_scipy(compiled_log_bound, a):
    """log Q(a, e^t) and its derivative against SciPy, from below the table to above it."""
    offsets, tables = bound_tables(np.array([a, a]))
    assert offsets.tolist() == [0.0, 0.0]  # one table per distinct a
    t_lo, per_unit, n = tables[2], tables[3], int(tables[4])
    t_top = t_lo + (n - 1) / per_unit
    t = np.random.default_rng(3).uniform(t_lo - 3.0, t_top + 1.0, 4000)
    got = np.array([compiled_log_bound(v, tables, 0) for v in t])
    f, d_f = log_q(a, np.exp(t))
    inside = np.isfinite(f) & (f > -600)  # where SciPy's Q has not underflowed
    np.testing.assert_allclose(got[inside, 0], f[inside], rtol=0, atol=1e-8)
    np.testing.assert_allclose(got[inside, 1], d_f[inside], rtol=1e-7, atol=1e-9)
    # where it has: finite, decreasing, with the derivative of -y (the asymptotic form)
    assert np.isfinite(got).all()
    far = np.array([compiled_log_bound(v, tables, 0) for v in (t_top + 2.0, t_top + 4.0)])
    assert far[1, 0] < far[0, 0] < -600
    assert far[0, 1] == pytest.approx(-math.exp(t_top + 2.0), rel=0.05)
    # continuous at both ends of the table
    for edge in (t_lo, t_top):
        below, above = (compiled_log_bound(edge + s, tables, 0)[0] for s in (-1e-9, 1e-9))
        assert abs(below - above) < 1e-3 * max(1.0, abs(below))


def test_tables_of_several_sizes_are_indexed_per_data_set(compiled_log_bound):
    a = np.array([4.5, 0.5, 4.5, 9.5])
    offsets, tables = bound_tables(a)
    assert offsets[0] == offsets[2] != offsets[1] != offsets[3]
    for a_i, offset in zip(a, offsets, strict=True):
        value = compiled_log_bound(math.log(3.0), tables, int(offset))[0]
        assert value == pytest.approx(math.log(special.gammaincc(a_i, 3.0)), abs=1e-9)


# --------------------------------------------------------------------------- the densities
@pytest.fixture(scope="module")
def tight():
    """A study whose sigma_i bound (1.5 x the mean sd) binds: Prepared.bounded."""
    from isbetter.cv.hierarchical.priors import HierarchicalPriors
    from isbetter.cv.hierarchical.spec import prepare
    from isbetter.cv.scores import from_arrays

    rng = np.random.default_rng(11)
    q, folds = 6, 10
    a = rng.normal(0.8, 0.05, size=(q, folds))
    b = a + rng.normal(0.01, 0.02, size=(q, folds)) + rng.normal(0, 0.01, size=(q, 1))
    scores = from_arrays(a, b, names=("x", "y"), folds=folds).paired("x", "y")
    priors = HierarchicalPriors(std_upper=1.5)
    prepared = prepare(scores, 0.01, None, priors)
    assert prepared.bounded
    return prepared.model_data(priors)


def test_integrated_density_keeps_the_bound_factor(tight):
    """Bounded minus unbounded log density: the NumPy rule (SciPy's Q, 4096 nodes)."""
    from _oracle import integrated_loglik

    from isbetter.cv.hierarchical.compiled_backend import _arguments, _expand, log_density

    data = tuple(tight[k] for k in ("a", "w", "ssr", "xbar", "std_hi"))
    bounds = _arguments(tight, False)[1]
    rng = np.random.default_rng(4)
    diffs = []
    for _ in range(12):
        x = rng.normal(0.0, 1.5, 3)
        bounded, grad = log_density("integrated", x, tight, bounded=True)
        unbounded = log_density("integrated", x, tight)[0]
        hyper = _expand("integrated", x, bounds)
        d0, s0, nu = (float(hyper[k]) for k in ("delta0", "std0", "nu"))
        ref = [integrated_loglik(d0, s0, nu, data, n_nodes=4096, bounded=b) for b in (1, 0)]
        diffs.append(bounded - unbounded)
        # the rule's accuracy (~1e-6 per data set) on a factor of ~-2.6 here
        assert bounded - unbounded == pytest.approx((ref[0] - ref[1]).sum(), abs=1e-5)
        step = 1e-5
        central = [
            (
                log_density("integrated", x + step * e, tight, bounded=True)[0]
                - log_density("integrated", x - step * e, tight, bounded=True)[0]
            )
            / (2 * step)
            for e in np.eye(3)
        ]
        np.testing.assert_allclose(grad, central, rtol=1e-4, atol=1e-4)
    assert max(diffs) < -1.0  # the factor matters in this study


def test_centred_density_keeps_the_bound_factor(tight):
    """The centred density's bound factor: SciPy's marginal likelihood, and its gradient."""
    from isbetter.cv.hierarchical.compiled_backend import _arguments, _expand, log_density

    q = tight["a"].size
    bounds = _arguments(tight, False)[1]
    rng = np.random.default_rng(5)
    for _ in range(10):
        x = rng.normal(0.0, 1.0, q + 5)
        bounded, grad = log_density("centred", x, tight, bounded=True)
        unbounded = log_density("centred", x, tight)[0]
        delta = _expand("centred", x, bounds)["delta"]
        quad = tight["ssr"] + tight["w"] * (tight["xbar"] - delta) ** 2
        factor = np.log(special.gammaincc(tight["a"], quad / (2 * tight["std_hi"] ** 2)))
        assert bounded - unbounded == pytest.approx(factor.sum(), abs=1e-8)
        step = 1e-6
        central = [
            (
                log_density("centred", x + step * e, tight, bounded=True)[0]
                - log_density("centred", x - step * e, tight, bounded=True)[0]
            )
            / (2 * step)
            for e in np.eye(q + 5)
        ]
        np.testing.assert_allclose(grad, central, rtol=1e-6, atol=1e-6)


def test_a_bounded_fit_compiles_no_pymc_model(tight):
    """A study whose sigma_i bound binds is sampled with the compiled density too.

    Such fits built and compiled a PyMC model in every process (70-75 s measured); the
    factor's tables make them as fast as the others.
    """
    from isbetter.cv.hierarchical.model import HierarchicalModel
    from isbetter.cv.hierarchical.priors import HierarchicalPriors
    from isbetter.cv.scores import from_arrays

    rng = np.random.default_rng(11)
    a = rng.normal(0.8, 0.05, size=(6, 10))
    b = a + rng.normal(0.01, 0.02, size=(6, 10)) + rng.normal(0, 0.01, size=(6, 1))
    scores = from_arrays(a, b, names=("x", "y"), folds=10).paired("x", "y")
    model = HierarchicalModel(6, backend="nutpie", parameterization="integrated")
    with warnings.catch_warnings():  # a short run: its diagnostics are not the point here
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = model.fit(
            scores, rope=0.01, priors=HierarchicalPriors(std_upper=1.5), draws=300, chains=2, rng=3
        )
    assert result.settings["sigma_bound_term"] == "kept"
    assert model._models == {}  # no PyMC model was built
    assert np.isfinite(result.delta).all()
