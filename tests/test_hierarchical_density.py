"""The hand-written log densities of the hierarchical model equal PyMC's, value and gradient."""

from __future__ import annotations

import numpy as np
import pytest

from isbetter.data import from_arrays
from isbetter.models.hierarchical_density import _BOUNDS, _expand, log_density
from isbetter.models.hierarchical_likelihood import prepare
from isbetter.models.hierarchical_pymc import build_model
from isbetter.models.priors import HierarchicalPriors


@pytest.fixture(scope="module")
def model_data():
    rng = np.random.default_rng(11)
    q, folds = 6, 10
    a = rng.normal(0.8, 0.05, size=(q, folds))
    b = a + rng.normal(0.01, 0.02, size=(q, folds)) + rng.normal(0, 0.01, size=(q, 1))
    scores = from_arrays(a, b, names=("x", "y"), folds=folds).paired("x", "y")
    priors = HierarchicalPriors()
    prepared = prepare(scores, 0.01, None, priors)
    assert not prepared.bounded
    return prepared.model_data(priors)


@pytest.mark.parametrize("parameterization", ["centred", "integrated"])
def test_log_density_and_gradient_equal_pymc(model_data, parameterization):
    import pymc as pm

    q = model_data["a"].size
    model = build_model(q, parameterization=parameterization, bounded=False)
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
        value, grad = log_density(parameterization, x, model_data)
        # the integrated model's quadrature adapts its nodes the same way in both
        assert value == pytest.approx(float(logp(point)), rel=1e-9, abs=1e-9)
        np.testing.assert_allclose(grad, dlogp(point), rtol=1e-7, atol=1e-7)
        # every variable nutpie stores, as PyMC computes it from the same position
        for name, value in _expand(parameterization, x, bounds).items():
            np.testing.assert_allclose(value, constrained[name](point), rtol=1e-12)


def test_c_functions_equal_the_kernel(model_data):
    """What nutpie calls (C functions over one buffer) is the tested kernel."""
    import ctypes

    from isbetter.models import hierarchical_density as hd

    q = model_data["a"].size
    model = hd.compiled_model("centred", model_data)
    kernels = hd._kernels()
    logp = hd._log_density_function("centred", model_data)
    rng = np.random.default_rng(5)
    buffer = model.user_data
    ptr = ctypes.POINTER(ctypes.c_double)
    for _ in range(5):
        x = rng.normal(0.0, 1.5, size=q + 5)
        out, value = np.empty(q + 5), np.empty(1)
        code = kernels["centred_logp"].ctypes(
            q + 5,
            x.ctypes.data_as(ptr),
            out.ctypes.data_as(ptr),
            value.ctypes.data_as(ptr),
            buffer.ctypes.data_as(ctypes.c_void_p),
        )
        expected, grad = logp(x)
        assert code == 0
        assert value[0] == expected
        np.testing.assert_array_equal(out, grad)
        expanded = np.empty(q + 5)
        code = kernels["centred_expand"].ctypes(
            q + 5,
            q + 5,
            x.ctypes.data_as(ptr),
            expanded.ctypes.data_as(ptr),
            buffer.ctypes.data_as(ctypes.c_void_p),
        )
        assert code == 0
        bounds = np.array([float(model_data[k]) for k in _BOUNDS])
        named = _expand("centred", x, bounds)
        flat = np.concatenate([np.ravel(named[k]) for k in model.shape_info[0]])
        np.testing.assert_allclose(expanded, flat, rtol=1e-14)
    # a wrong dimension is refused, not read out of bounds
    assert (
        kernels["centred_logp"].ctypes(
            q + 4,
            x.ctypes.data_as(ptr),
            out.ctypes.data_as(ptr),
            value.ctypes.data_as(ptr),
            buffer.ctypes.data_as(ctypes.c_void_p),
        )
        == -1
    )


def test_digamma_matches_scipy():
    from scipy import special

    from isbetter.models import hierarchical_density as hd

    hd._kernels()  # registers the helpers with numba
    import numba

    digamma = numba.njit(lambda v: hd._digamma(v))
    for v in [1e-3, 0.5, 1.0, 1.5, 2.7, 5.9, 9.99, 10.0, 13.0, 250.0, 1e6]:
        assert digamma(v) == pytest.approx(special.digamma(v), rel=1e-13, abs=1e-13)
