"""The hand-written log densities of the hierarchical model equal PyMC's, value and gradient."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from isbetter import IsbetterError
from isbetter.cv.hierarchical.compiled_backend import _BOUNDS, _expand, log_density
from isbetter.cv.hierarchical.priors import HierarchicalPriors
from isbetter.cv.hierarchical.pymc_backend import build_model
from isbetter.cv.hierarchical.spec import prepare
from isbetter.cv.scores import from_arrays


@pytest.fixture(scope="module", params=[False, True], ids=["unbounded", "bounded"])
def study(request):
    """(model data, bounded): the reference priors, or a sigma_i bound that binds."""
    rng = np.random.default_rng(11)
    q, folds = 6, 10
    a = rng.normal(0.8, 0.05, size=(q, folds))
    b = a + rng.normal(0.01, 0.02, size=(q, folds)) + rng.normal(0, 0.01, size=(q, 1))
    scores = from_arrays(a, b, names=("x", "y"), folds=folds).paired("x", "y")
    priors = HierarchicalPriors(std_upper=1.5) if request.param else HierarchicalPriors()
    prepared = prepare(scores, 0.01, None, priors)
    assert prepared.bounded is request.param
    return prepared.model_data(priors), request.param


@pytest.mark.parametrize("parameterization", ["centred", "integrated"])
def test_log_density_and_gradient_equal_pymc(study, parameterization):
    import pymc as pm

    model_data, bounded = study
    q = model_data["a"].size
    model = build_model(q, parameterization=parameterization, bounded=bounded)
    with model:
        pm.set_data(model_data)
    logp = model.compile_logp(mode="FAST_COMPILE")
    dlogp = model.compile_dlogp(mode="FAST_COMPILE")
    names = [v.name for v in model.value_vars]
    sizes = [int(np.prod(model.initial_point()[n].shape)) for n in names]
    bounds = np.array([float(model_data[k]) for k in _BOUNDS])
    outputs = {v.name: v for v in model.unobserved_value_vars}
    constrained = {
        name: model.compile_fn(
            var, inputs=model.value_vars, mode="FAST_COMPILE", on_unused_input="ignore"
        )
        for name, var in outputs.items()
    }
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = rng.normal(0.0, 1.5, size=sum(sizes))
        point, start = {}, 0
        for name, size in zip(names, sizes, strict=True):
            shape = model.initial_point()[name].shape
            point[name] = x[start : start + size].reshape(shape)
            start += size
        value, grad = log_density(parameterization, x, model_data, bounded=bounded)
        # the integrated model's quadrature adapts its nodes the same way in both
        assert value == pytest.approx(float(logp(point)), rel=1e-9, abs=1e-9)
        np.testing.assert_allclose(grad, dlogp(point), rtol=1e-7, atol=1e-7)
        # every variable nutpie stores, as PyMC computes it from the same position
        for name, value in _expand(parameterization, x, bounds).items():
            np.testing.assert_allclose(value, constrained[name](point), rtol=1e-12)


@pytest.mark.parametrize("parameterization", ["centred", "integrated"])
def test_c_functions_equal_the_kernel(study, parameterization):
    """What nutpie calls (C functions over one buffer) is the tested kernel."""
    import ctypes

    from isbetter.cv.hierarchical import compiled_backend as hd

    model_data, bounded = study
    q = model_data["a"].size
    n = q + 5 if parameterization == "centred" else 3
    model = hd.compiled_model(parameterization, model_data, bounded=bounded)
    kernels = hd._kernels()
    c_logp, c_expand = (kernels[f"{parameterization}_{f}"].ctypes for f in ("logp", "expand"))
    logp = hd._log_density_function(parameterization, model_data, bounded)
    rng = np.random.default_rng(5)
    buffer = model.user_data.ctypes.data_as(ctypes.c_void_p)
    ptr = ctypes.POINTER(ctypes.c_double)
    for _ in range(5):
        x = rng.normal(0.0, 1.5, size=n)
        out, value = np.empty(n), np.empty(1)
        code = c_logp(
            n, x.ctypes.data_as(ptr), out.ctypes.data_as(ptr), value.ctypes.data_as(ptr), buffer
        )
        expected, grad = logp(x)
        assert code == 0
        assert value[0] == expected
        np.testing.assert_array_equal(out, grad)
        expanded = np.empty(n)
        code = c_expand(n, n, x.ctypes.data_as(ptr), expanded.ctypes.data_as(ptr), buffer)
        assert code == 0
        bounds = np.array([float(model_data[k]) for k in _BOUNDS])
        named = _expand(parameterization, x, bounds)
        flat = np.concatenate([np.ravel(named[k]) for k in model.shape_info[0]])
        np.testing.assert_allclose(expanded, flat, rtol=1e-14)
    # a wrong dimension is refused, not read out of bounds
    wrong = c_logp(
        n - 1, x.ctypes.data_as(ptr), out.ctypes.data_as(ptr), value.ctypes.data_as(ptr), buffer
    )
    assert wrong == -1
    # std0 at 0 (its sigmoid underflowed): an error code, not a division by 0, which a C
    # function can only print and ignore (it reported success with a stale density)
    x = np.full(n, 0.5)
    x[2 if parameterization == "integrated" else 4] = -800.0
    code = c_logp(
        n, x.ctypes.data_as(ptr), out.ctypes.data_as(ptr), value.ctypes.data_as(ptr), buffer
    )
    assert code == 4 and value[0] == -np.inf and np.all(out == 0.0)
    assert logp(x)[0] == -np.inf
    # nu - 1 beyond the prior's table (its mass underflows): an error code, no NaN
    if parameterization == "integrated":
        x = np.array([12.0, 0.0, 0.0])
        code = c_logp(
            3, x.ctypes.data_as(ptr), out.ctypes.data_as(ptr), value.ctypes.data_as(ptr), buffer
        )
        assert code == 4 and value[0] == -np.inf and np.all(out == 0.0)


@pytest.mark.parametrize("bounds", [(1.0, 2.0, 0.01, 0.1), (0.5, 10.0, 0.001, 1.0)])
def test_nu_prior_table_interpolates_scipy(bounds):
    """The compiled kernels' nu prior (a cubic Hermite table in log(nu - 1)) against SciPy.

    Measured: at most 4.4e-10 in log p and 7.4e-9 relative in its derivative over the
    table; its last 0.05 units in t, where log p < -690, carry SciPy's own denormal noise.
    """
    from isbetter.inference.nu_prior import (
        STEPS_PER_UNIT,
        T_LO,
        NuPrior,
        interpolate,
        nu_prior_table,
    )

    table = nu_prior_table(bounds)
    t_hi = T_LO + (table[2] - 1) / STEPS_PER_UNIT
    t = np.random.default_rng(1).uniform(T_LO, t_hi - 0.05, 4000)
    log_p, d_log_p = NuPrior(bounds)(np.exp(t))
    got = np.array([interpolate(v, table) for v in t])
    np.testing.assert_allclose(got[:, 0], log_p, rtol=0, atol=1e-9)
    np.testing.assert_allclose(got[:, 1], d_log_p * np.exp(t), rtol=2e-8, atol=2e-8)
    # at the nodes the table is SciPy's value; beyond its top, -inf as the PyMC model
    assert interpolate(T_LO, table)[0] == table[3]
    assert interpolate(t_hi + 0.01, table) == (-np.inf, 0.0)
    assert np.isneginf(NuPrior(bounds)(np.exp(t_hi + 1.0))[0])


def test_digamma_matches_scipy():
    from scipy import special

    from isbetter.cv.hierarchical import compiled_backend as hd

    hd._kernels()  # registers the helpers with numba
    import numba

    digamma = numba.njit(lambda v: hd._digamma(v))
    for v in [1e-3, 0.5, 1.0, 1.5, 2.7, 5.9, 9.99, 10.0, 13.0, 250.0, 1e6]:
        assert digamma(v) == pytest.approx(special.digamma(v), rel=1e-13, abs=1e-13)


def test_nutpie_still_has_the_private_fields_the_density_fills():
    # the compiled density builds nutpie's CompiledPyMCModel itself, private fields included;
    # a nutpie release that renames one must fail here (and at run time) naming the field
    from nutpie.compile_pymc import CompiledPyMCModel

    from isbetter.inference.compiled_density import NUTPIE_FIELDS, check_nutpie_fields

    check_nutpie_fields(CompiledPyMCModel)
    assert {"_n_dim", "_shapes", "_coords"} <= set(NUTPIE_FIELDS)

    @dataclasses.dataclass
    class Renamed:  # what a nutpie release without _shapes would look like
        dims: dict
        _n_dim: int
        _coords: dict

    with pytest.raises(IsbetterError, match=r"field\(s\) compiled_logp_func.*_shapes.*0\.16"):
        check_nutpie_fields(Renamed)


def _near_identical(q: int, seed: int = 3):
    """x ~ N(0.8, 0.02), y = x + N(0.001, 0.01): 10 runs x 10 folds of q data sets."""
    g = np.random.default_rng(seed)
    x = g.normal(0.8, 0.02, size=(q, 100))
    y = x + g.normal(0.001, 0.01, size=(q, 100))
    return from_arrays(x, y, names=("A", "B"), folds=10).paired("A", "B")


@pytest.mark.parametrize("q", [3, 54, 1000])
def test_the_integrated_model_starts_where_the_data_put_std0_and_delta0(q):
    """The start of every chain: std0 within a factor e of the moment estimate (the
    prior's centre is thousands of times above it), delta0 within two standard errors of
    the weighted mean, both inside their bounds; seeds give different starts."""
    from isbetter.cv.hierarchical.compiled_backend import _arguments, _data_start

    priors = HierarchicalPriors()
    data = prepare(_near_identical(q), 0.01, None, priors).model_data(priors)
    lik, bounds, _ = _arguments(data, False)
    d_hi, s_hi = bounds[4], bounds[5]
    se2 = data["ssr"] / (2 * data["a"] * data["w"])
    tau = np.sqrt(max(np.var(data["xbar"], ddof=1) - se2.mean(), 0.01 * np.median(se2)))
    weights = 1 / (se2 + tau**2)
    centre, spread = (weights * data["xbar"]).sum() / weights.sum(), weights.sum() ** -0.5
    starts = np.array([_data_start(lik, bounds, seed) for seed in range(50)])
    delta0 = -d_hi + 2 * d_hi / (1 + np.exp(-starts[:, 1]))
    std0 = s_hi / (1 + np.exp(-starts[:, 2]))
    assert np.all(np.abs(np.log(std0 / tau)) <= 1 + 1e-9)
    assert np.all(np.abs(delta0 - centre) <= 2 * spread + 1e-12)
    assert std0.max() < tau * 3 < 0.01 * s_hi  # the prior's centre: s_hi / 2
    assert np.all(np.abs(starts[:, 0]) <= 1) and len(np.unique(starts[:, 2])) == 50


def test_the_integrated_start_falls_back_to_the_priors_centre():
    """Means all equal and no spread within the data sets: std0 at its floor, finite; data
    that give no finite start: the prior's centre, jittered, as PyMC's."""
    from isbetter.cv.hierarchical.compiled_backend import _data_start, _initial_point

    bounds = np.array([1.0, 2.0, 0.1, 0.2, 3.0, 10.0, 0.0, 0.0])
    flat = np.stack([np.full(4, 4.5), np.full(4, 10.0), np.zeros(4), np.zeros(4)])
    start = _data_start(flat, bounds, 7)
    assert np.isfinite(start).all() and start[2] < -10  # std0 ~ 1e-9 of its bound
    broken = flat.copy()
    broken[3, 0] = np.nan
    np.testing.assert_array_equal(
        _data_start(broken, bounds, 7), _initial_point("integrated", 4, bounds, 7)
    )
