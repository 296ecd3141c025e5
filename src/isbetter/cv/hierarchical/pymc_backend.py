r"""The PyMC model of the hierarchical correlated-t comparison (Corani et al. 2017).

:func:`build_model` is pure: it builds the model for a number of data sets with
``pm.Data`` placeholders; :mod:`isbetter.cv.hierarchical.model` sets the data
(:meth:`~isbetter.cv.hierarchical.spec.Prepared.model_data`), compiles
it once and samples it (:mod:`isbetter.inference.sampling`).

References
----------
.. [1] G. Corani, A. Benavoli, J. Demšar, F. Mangili, M. Zaffalon (2017).
   Statistical comparison of classifiers through Bayesian hierarchical
   modelling. *Machine Learning* 106(11), 1817-1837.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from isbetter.core.validate import check_choice, check_positive_int
from isbetter.cv.hierarchical.numerics.kernels import (
    NODE_SPACING,
    compiled_kernels,
    kernel_version,
    no_bound,
    with_bound,
)
from isbetter.inference import libs

__all__ = ["PARAMETERIZATIONS", "Parameterization", "build_model"]

Parameterization = Literal["integrated", "centred", "noncentred"]
PARAMETERIZATIONS = ("integrated", "centred", "noncentred")


@lru_cache(maxsize=1)
def _quadrature_op() -> type:
    """Return the PyTensor Op of the compiled integrated likelihood (defined on first use)."""
    import pytensor.tensor as pt
    from pytensor.gradient import DisconnectedType
    from pytensor.graph.basic import Apply
    from pytensor.graph.op import Op
    from pytensor.link.numba.dispatch.basic import (
        numba_njit,
        register_funcify_default_op_cache_key,
    )

    kernel = compiled_kernels()[0]

    class IntegratedLoglik(Op):  # type: ignore[misc,unused-ignore]
        """Per data set: log p(x_i | delta0, std0, nu) without log c(nu), and its gradient.

        Inputs ``delta0, std0, nu`` (scalars) and ``a, w, ssr, xbar, std_hi`` (data);
        outputs the log integrals and their derivatives (``(q, 3)``), both from one
        pass of :func:`.numerics.kernels.compiled_kernels`, with the factor of
        sigma_i's bound ``std_hi`` where `bounded`.
        """

        __props__ = ("spacing", "bounded")

        def __init__(self, spacing: float, bounded: bool) -> None:
            self.spacing = float(spacing)
            self.bounded = bool(bounded)

        def make_node(self, *inputs: Any) -> Any:
            tensors = [pt.as_tensor_variable(v).astype("float64") for v in inputs]
            return Apply(self, tensors, [pt.dvector(), pt.dmatrix()])

        def perform(self, node: Any, inputs: Any, outputs: Any) -> None:
            delta0, std0, nu, *data, std_hi = inputs
            lik = tuple(np.asarray(v, dtype=float) for v in data)
            bound = with_bound(lik[0], float(std_hi)) if self.bounded else no_bound(lik[0].size)
            logq, grad = kernel(float(delta0), float(std0), float(nu), lik, self.spacing, bound)
            outputs[0][0], outputs[1][0] = logq, grad

        def infer_shape(self, fgraph: Any, node: Any, shapes: Any) -> Any:
            return [(shapes[3][0],), (shapes[3][0], 3)]

        def connection_pattern(self, node: Any) -> list[list[bool]]:
            # the data (a, w, ssr, xbar, std_hi) get no gradient
            return [[True, True]] * 3 + [[False, False]] * 5

        def grad(self, inputs: Any, output_grads: Any) -> list[Any]:
            if not isinstance(output_grads[1].type, DisconnectedType):
                raise NotImplementedError("the derivative output has no gradient")
            applied: Any = self(*inputs)
            jac = applied[1]
            hyper = [(output_grads[0] * jac[:, j]).sum() for j in range(3)]
            return hyper + [DisconnectedType()() for _ in range(5)]

    @register_funcify_default_op_cache_key(IntegratedLoglik)  # type: ignore[misc,unused-ignore]
    def _numba_integrated(op: Any, node: Any = None, **kwargs: Any) -> Any:
        import numba

        spacing, bounded = op.spacing, op.bounded

        @numba_njit
        def integrated(delta0, std0, nu, a, w, ssr, xbar, std_hi):  # type: ignore[no-untyped-def,unused-ignore]
            q = a.shape[0]
            offsets, tables, shift = np.full(q, -1.0), np.zeros(0), 0.0
            if bounded:  # the tables come from SciPy (sigma_bound)
                with numba.objmode(offsets="float64[:]", tables="float64[:]", shift="float64"):
                    offsets, tables, shift = with_bound(a, float(std_hi))
            lik = (a, w, ssr, xbar)
            return kernel(
                delta0.item(), std0.item(), nu.item(), lik, spacing, (offsets, tables, shift)
            )

        # the checksum of the kernel's source is part of PyTensor's cache key
        return integrated, kernel_version()

    return IntegratedLoglik


def build_model(
    n_datasets: int,
    *,
    parameterization: Parameterization = "integrated",
    bounded: bool = True,
) -> Any:
    r"""Build the PyMC model for `n_datasets` data sets, with placeholder data.

    The data (scaled sufficient statistics and prior bounds) are ``pm.Data``
    containers, so a compiled model is reused for every pair of systems with the
    same number of data sets: ``a, w, ssr, xbar`` (per data set: ``(n - 1) / 2``,
    ``n / (1 + (n - 1) rho)``, ``ss / (1 - rho)`` and the mean), ``const`` (the
    likelihood's data-only terms) and ``delta0_hi, std0_hi, std_hi, alpha_lo,
    alpha_hi, beta_lo, beta_hi``.

    Parameters
    ----------
    n_datasets : int
        Number of data sets ``q`` (>= 2).
    parameterization : {"integrated", "centred", "noncentred"}, default: "integrated"
        ``"integrated"`` integrates every :math:`\delta_i` out by quadrature
        (:func:`.numerics.kernels.compiled_kernels`) and :math:`\alpha,
        \beta` out of :math:`\nu`'s prior, so NUTS samples only :math:`\nu,
        \delta_0, \sigma_0`: no funnel between :math:`\sigma_0` and the
        :math:`\delta_i`; the :math:`\delta_i` are drawn
        afterwards from their conditionals
        (:func:`.numerics.quadrature.draw_deltas`). ``"centred"`` samples
        :math:`\delta_i \sim t_\nu(\delta_0, \sigma_0)` directly; with few data
        sets it diverges and under-shrinks where :math:`\sigma_0` is small
        (``bench/bench_hierarchical_parameterisation.py``). ``"noncentred"``
        samples :math:`z_i \sim t_\nu(0, 1)`, :math:`\delta_i = \delta_0 + \sigma_0
        z_i`; on the UCI data it mixed poorly (R-hat up to 1.23, as :math:`\nu`
        near 1 gives :math:`z_i` heavy tails).
    bounded : bool, default: True
        Keep the incomplete-gamma factor of the bound of :math:`\sigma_i`'s
        prior in the likelihood (see
        the marginal likelihood of :mod:`.spec`). Fits drop it when its log is
        above ``-BOUND_TERM_TOL`` wherever the posterior can be.

    Returns
    -------
    pymc.Model
        Free variables ``nu_minus_one, delta0, std0`` and ``alpha, beta`` and
        ``z`` (non-centred) or ``delta`` (centred), or none more (integrated,
        which has a potential ``nu_prior`` instead); deterministics ``nu`` (and
        ``delta``); a potential ``loglik``; dimension ``dataset``.

    Notes
    -----
    The per-data-set :math:`\sigma_i \sim U(0, \bar\sigma)` are integrated out
    analytically (the marginal likelihood of :mod:`.spec`), which removes
    ``q`` parameters and their funnel-shaped coupling with :math:`\delta_i`; the model is otherwise
    that of Corani et al. [1]_ (see :class:`~isbetter.cv.hierarchical.priors.HierarchicalPriors`).
    """
    pm = libs.pymc()

    q = check_positive_int(n_datasets, "n_datasets", minimum=2)
    parameterization = check_choice(  # type: ignore[assignment]
        parameterization, "parameterization", PARAMETERIZATIONS
    )
    with pm.Model(coords={"dataset": np.arange(q)}) as model:
        data = {
            "a": pm.Data("a", np.full(q, 4.5), dims="dataset"),  # (n - 1) / 2
            "w": pm.Data("w", np.full(q, 5.0), dims="dataset"),  # n / (1 + (n - 1) rho)
            "ssr": pm.Data("ssr", np.full(q, 10.0), dims="dataset"),  # ss / (1 - rho)
            "xbar": pm.Data("xbar", np.zeros(q), dims="dataset"),
            "const": pm.Data("const", 0.0),  # sum of the data-only terms
        }
        for name, value in _BOUNDS.items():
            data[name] = pm.Data(name, value)
        nu = _nu_prior(data, integrated=parameterization == "integrated")
        delta0 = pm.Uniform("delta0", lower=-data["delta0_hi"], upper=data["delta0_hi"])
        std0 = pm.Uniform("std0", lower=0.0, upper=data["std0_hi"])
        if parameterization == "integrated":
            loglik = _integrated_loglik(delta0, std0, nu, data, bounded=bounded)
        else:
            loglik = _centred_loglik(delta0, std0, nu, data, parameterization, bounded=bounded)
        pm.Potential("loglik", loglik)
    return model


#: the prior bounds among the model's data, with placeholder values
_BOUNDS = {
    "delta0_hi": 1.0,
    "std0_hi": 1.0,
    "std_hi": 1000.0,
    "alpha_lo": 1.0,
    "alpha_hi": 2.0,
    "beta_lo": 0.01,
    "beta_hi": 0.1,
}
#: Gauss-Legendre nodes over alpha in nu's prior with alpha and beta integrated out: at
#: most 5e-6 from 128 nodes in log density for 1e-8 <= nu - 1 <= 3000
_ALPHA_NODES = 12


def _nu_prior(data: dict[str, Any], *, integrated: bool, dims: str | None = None) -> Any:
    """Add nu to the model: nu - 1 ~ Gamma(alpha, beta), alpha ~ U, beta ~ U ([1], section 3).

    With `dims` (not `integrated`) one nu per coordinate of that dimension, sharing alpha
    and beta: a hierarchy over the nu's.
    """
    pm = libs.pymc()

    if not integrated:
        alpha = pm.Uniform("alpha", lower=data["alpha_lo"], upper=data["alpha_hi"])
        beta = pm.Uniform("beta", lower=data["beta_lo"], upper=data["beta_hi"])
        nu_minus_one = pm.Gamma("nu_minus_one", alpha=alpha, beta=beta, dims=dims)
        return pm.Deterministic("nu", nu_minus_one + 1.0, dims=dims)
    # alpha and beta integrated out too, so that NUTS samples three parameters only (their
    # hierarchy over nu diverged now and then where nu - 1 is small): the Gamma density
    # integrated over beta in closed form, x^-2 alpha (P(alpha + 1, b_hi x) - P(alpha + 1,
    # b_lo x)), P the regularised lower incomplete gamma function, then averaged over alpha
    x = pm.HalfFlat("nu_minus_one")
    pm.Potential("nu_prior", nu_prior_logp(x, data))
    return pm.Deterministic("nu", x + 1.0)


def nu_prior_logp(x: Any, data: dict[str, Any]) -> Any:
    r"""Return the log prior of :math:`\nu - 1 =` `x` with alpha and beta integrated out.

    Elementwise: one :math:`\nu` per element of `x` (a scalar, or the joint model's
    per-component vector), each :math:`\nu_j - 1 \sim \operatorname{Gamma}(\alpha_j,
    \beta_j)` with its own :math:`\alpha_j, \beta_j` integrated out (bounds from `data`).
    """
    import pytensor.tensor as pt

    t, weight = np.polynomial.legendre.leggauss(_ALPHA_NODES)
    alpha = data["alpha_lo"] + (data["alpha_hi"] - data["alpha_lo"]) * (t + 1.0) / 2.0
    column = pt.shape_padright(x)  # the nodes over alpha along a last axis
    lo, hi = data["beta_lo"] * column, data["beta_hi"] * column
    shape = alpha + 1.0
    mass = pt.switch(  # without cancellation where both are near 1
        lo > shape,
        pt.gammaincc(shape, lo) - pt.gammaincc(shape, hi),
        pt.gammainc(shape, hi) - pt.gammainc(shape, lo),
    )
    density = (weight / 2.0 * alpha * mass).sum(axis=-1)
    return pt.log(density / (x**2 * (data["beta_hi"] - data["beta_lo"])))


def _integrated_loglik(
    delta0: Any, std0: Any, nu: Any, data: dict[str, Any], *, bounded: bool
) -> Any:
    import pytensor.tensor as pt

    lik = (data["a"], data["w"], data["ssr"], data["xbar"], data["std_hi"])
    logq = _quadrature_op()(NODE_SPACING, bounded)(delta0, std0, nu, *lik)[0]
    log_norm = pt.gammaln((nu + 1.0) / 2.0) - pt.gammaln(nu / 2.0) - 0.5 * pt.log(nu * math.pi)
    return data["const"] + logq.sum() + logq.shape[0] * log_norm


def _centred_loglik(
    delta0: Any, std0: Any, nu: Any, data: dict[str, Any], parameterization: str, *, bounded: bool
) -> Any:
    pm = libs.pymc()
    import pytensor.tensor as pt

    if parameterization == "noncentred":
        z = pm.StudentT("z", nu=nu, mu=0.0, sigma=1.0, dims="dataset")
        delta = pm.Deterministic("delta", delta0 + std0 * z, dims="dataset")
    else:
        delta = pm.StudentT("delta", nu=nu, mu=delta0, sigma=std0, dims="dataset")
    # the marginal likelihood of .spec with its data-only terms precomputed (Prepared.model_data)
    quad = data["ssr"] + data["w"] * pt.square(data["xbar"] - delta)
    loglik = data["const"] - (data["a"] * pt.log(quad / 2)).sum()
    if bounded:
        bound = pt.gammaincc(data["a"], quad / (2 * data["std_hi"] ** 2))
        loglik = loglik + pt.log(bound).sum()
    return loglik
