r"""The PyMC model of the joint correlated model of K systems.

:func:`build_model` is pure: it builds the model for q data sets and K systems
with ``pm.Data`` placeholders (:meth:`.spec.JointData.model_data` fills them), so
one model serves every metric of that shape. The likelihood is
:func:`.likelihood.marginal_loglik` (the noise covariance integrated out) written
in PyTensor, a ``pm.Potential``. It is the reference for the compiled density that
nutpie samples (:mod:`.compiled_backend`) and the model PyMC's NUTS samples with
``backend="pymc"``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from isbetter.core.errors import InputError
from isbetter.core.validate import check_choice, check_positive_int
from isbetter.cv.hierarchical.pymc_backend import _nu_prior, nu_prior_logp
from isbetter.cv.joint.spec import (
    COMPONENT_SHEAR,
    COMPONENTS_PLACEHOLDERS,
    DIRECTION_DET_POWER,
    PLACEHOLDER_SCALARS,
    SPREAD_PLACEHOLDERS,
    SpreadPrior,
    Tails,
    contrast_basis,
    direction_prior_const,
)
from isbetter.inference import libs

__all__ = ["build_model"]


def build_model(
    n_datasets: int,
    n_systems: int,
    spread_prior: SpreadPrior = "inverse-wishart",
    tails: Tails = "shared",
) -> Any:
    r"""Build the PyMC model for `n_datasets` data sets and `n_systems` systems.

    Only the contrasts of the deviations, :math:`\tilde u_i = H^T u_i`, reach the
    likelihood. Given the scale-mixture weights :math:`\lambda_i \sim
    \operatorname{Gamma}(\nu/2, \nu/2)` they are :math:`N(0, \Omega/\lambda_i)`, and
    :math:`\Omega \sim \operatorname{IW}(\nu_\Omega, \psi I)` integrates out in
    closed form, :math:`\psi` fixed (``spread_prior="inverse-wishart"``) or given
    the mixing variable :math:`\psi \sim \operatorname{Gamma}(1/2, r)` of Huang and
    Wand's prior (``"huang-wand"``; :class:`~isbetter.cv.joint.spec.JointPriors`):

    .. math::

        p(\tilde u \mid \lambda) = \pi^{-dq/2} \prod_i \lambda_i^{d/2}
        \frac{\Gamma_d(\frac{\nu_\Omega + q}{2})}{\Gamma_d(\frac{\nu_\Omega}{2})}
        \psi^{\nu_\Omega d/2}
        \Big|\psi I + \sum_i \lambda_i \tilde u_i \tilde u_i^T\Big|^{-(\nu_\Omega + q)/2}

    (so every :math:`\tilde u_i` is multivariate t, and every pair's deviation
    :math:`t_\nu`). The :math:`\tilde u_i` are sampled centred on the data, as
    :math:`\tilde u_i = \bar z_i - \beta - T_i \eta_i` with the fixed (data-only)
    :math:`T_i` that makes the likelihood about standard normal in :math:`\eta_i`
    (:meth:`.spec.JointData.model_data`): NUTS's diagonal mass matrix then fits each
    data set's deviations, which the folds pin down; with no scale parameter of the
    deviations left to sample there is no funnel between it and them.

    Parameters
    ----------
    n_datasets, n_systems : int
        q >= 2 and K >= 2.
    spread_prior : {"inverse-wishart", "huang-wand"}, default: "inverse-wishart"
        The prior of :math:`\Omega`: a data container ``spread_var`` (the fixed
        :math:`\psi`, whose :math:`\psi^{\nu_\Omega d/2}` is in ``const``) or
        ``spread_rate`` (:math:`r`).
    tails : {"shared", "per-system", "components"}, default: "shared"
        ``"per-system"``: the grouped t of ``docs/joint_prior.md``, one
        :math:`\nu_k` per system (:math:`\nu_k - 1 \sim \operatorname{Gamma}(\alpha,
        \beta)`, the free variables ``alpha`` and ``beta`` shared) and one weight
        :math:`\lambda_{ik} \sim \operatorname{Gamma}(\nu_k/2, \nu_k/2)` per data set
        and system (``precision`` of dimensions ``dataset``, ``system``): the
        contrasts are :math:`\tilde u_i = A_i\omega_i`, :math:`A_i = H^T
        \operatorname{diag}(\lambda_i^{-1/2}) H`, :math:`\omega_i \sim N(0, \Omega)`,
        and the potential ``spread`` is :math:`-\sum_i \log|A_i| - \frac{\nu_\Omega +
        q}2 \log|\psi I + \sum_i \omega_i\omega_i^T|` plus :math:`\psi`'s terms.
        ``"components"``: independent t components (:func:`_components_model`; only
        with ``spread_prior="huang-wand"``).

    Returns
    -------
    pymc.Model
        Free variables ``nu_minus_one`` (with a potential ``nu_prior``: :math:`\alpha,
        \beta` integrated out as in the pairwise model), ``effect_coords`` (the
        coordinates :math:`\beta` of the effects), ``precision`` (the
        :math:`\lambda_i`), ``eta`` and, with Huang and Wand's prior,
        ``spread_log_psi`` (:math:`\log\psi`, with a potential ``spread_psi_prior``);
        deterministics ``nu``, ``b`` (the effects :math:`H\beta`, summing to zero),
        ``deviations`` (the :math:`\tilde u_i`) and, with that prior, ``spread_psi``;
        potentials ``spread`` (:math:`\Omega` integrated out) and
        ``loglik``.
        Dimensions ``dataset``, ``system``, ``contrast``.
    """
    pm = libs.pymc()
    import pytensor.tensor as pt

    q = check_positive_int(n_datasets, "n_datasets", minimum=2)
    k = check_positive_int(n_systems, "n_systems", minimum=2)
    form = check_choice(spread_prior, "spread_prior", tuple(SPREAD_PLACEHOLDERS))
    chosen = check_choice(tails, "tails", ("shared", "per-system", "components"))
    if chosen == "components":
        if form != "huang-wand":
            raise InputError(
                "`tails='components'` takes its scales from Huang and Wand's form: "
                f"`spread_prior` must be 'huang-wand', got {form!r}."
            )
        return _components_model(q, k)
    per_system = chosen == "per-system"
    d = k - 1
    basis = contrast_basis(k)
    coords = {"dataset": np.arange(q), "system": np.arange(k), "contrast": np.arange(d)}
    with pm.Model(coords=coords) as model:
        data = {
            "means": pm.Data("means", np.zeros((q, d)), dims=("dataset", "contrast")),
            "transform": pm.Data("transform", np.tile(np.eye(d), (q, 1, 1))),
            "power": pm.Data("power", np.full(q, 6.0), dims="dataset"),
        }
        for name, value in {**PLACEHOLDER_SCALARS, **SPREAD_PLACEHOLDERS[form]}.items():
            data[name] = pm.Data(name, value)
        if per_system:  # nu_k - 1 ~ Gamma(alpha, beta), alpha and beta shared and sampled
            nu = _nu_prior(data, integrated=False, dims="system")
        else:
            nu = _nu_prior(data, integrated=True)
        beta = pm.Uniform(
            "effect_coords", lower=-data["effect_hi"], upper=data["effect_hi"], dims="contrast"
        )
        pm.Deterministic("b", pt.dot(basis, beta), dims="system")
        lam = _precision(nu, ("dataset", "system") if per_system else "dataset")
        eta = pm.Flat("eta", dims=("dataset", "contrast"))
        shift = (data["transform"] * eta[:, None, :]).sum(axis=-1)
        deviations = pm.Deterministic(
            "deviations", data["means"] - beta[None, :] - shift, dims=("dataset", "contrast")
        )
        spread, cores, weighted = _cores(deviations, lam, basis, per_system)
        if form == "huang-wand":
            psi = _mixing(data["spread_rate"])
            spread = spread + 0.5 * data["spread_df"] * d * pt.log(psi)
        else:  # psi fixed: its term is in const
            psi = data["spread_var"]
        scatter = psi * pt.eye(d) + pt.dot(weighted.T, cores)
        pm.Potential(
            "spread", spread - 0.5 * (data["spread_df"] + q) * pt.log(pt.linalg.det(scatter))
        )
        power = data["power"]
        loglik = data["const"] - (power * pt.log1p(pt.square(eta).sum(axis=-1) / (2 * power))).sum()
        pm.Potential("loglik", loglik)
    return model


def _cores(deviations: Any, lam: Any, basis: np.ndarray, per_system: bool) -> tuple[Any, Any, Any]:
    r"""Return the Jacobian term, the cores :math:`\omega_i` and their weighted form.

    One weight per data set: :math:`\omega_i = \tilde u_i` with the term
    :math:`\frac d2 \sum_i \log\lambda_i` and the scatter's weights :math:`\lambda_i`.
    Per system: :math:`\omega_i = A_i^{-1}\tilde u_i`, :math:`A_i = H^T
    \operatorname{diag}(\lambda_i^{-1/2}) H`, the term :math:`-\sum_i \log|A_i|`.
    """
    import pytensor.tensor as pt

    if not per_system:
        d = basis.shape[1]
        return 0.5 * d * pt.log(lam).sum(), deviations, deviations * lam[:, None]
    scales = 1.0 / pt.sqrt(lam)  # elementwise: no BLAS call (PyTensor warns without one)
    mix = (basis[None, :, :, None] * scales[:, :, None, None] * basis[None, :, None, :]).sum(axis=1)
    cores = pt.linalg.solve(mix, deviations, b_ndim=1)
    return -pt.log(pt.linalg.det(mix)).sum(), cores, cores


def _precision(nu: Any, dims: str | tuple[str, str], name: str = "precision") -> Any:
    r"""Add the weights :math:`\lambda_i \sim \operatorname{Gamma}(\nu/2, \nu/2)`; return them.

    `dims` ``"dataset"``: one weight per data set. ``("dataset", "system")`` (per-system
    tails) or ``("dataset", "component")`` (independent components): one weight
    :math:`\lambda_{ik} \sim \operatorname{Gamma}(\nu_k/2, \nu_k/2)` per data set and
    system or component (`nu` has one value per column), reparameterised alike. `nu`
    broadcasts against the weights: with one value per data set (the components' noise
    weights :math:`\kappa_i \sim \operatorname{Gamma}(a_i, a_i)`, `nu` :math:`= 2a_i`)
    each weight has its own. Stored as `name`, sampled as ``name + "_std"``, prior in the
    potential ``name + "_prior"``.

    They are sampled as :math:`\xi_i` with :math:`\log\lambda_i = -1/\nu + s(\nu)\xi_i`,
    :math:`s(\nu) = \sqrt{2(\nu + 1)}/\nu` (about the mean and the standard deviation
    of :math:`\log\lambda_i`): an exact change of variables (its Jacobian
    :math:`s(\nu)` included) that removes the funnel between :math:`\nu` and the
    :math:`\log\lambda_i`, which concentrate as :math:`\nu` grows (80% of simulated
    fits on 50 data sets had R-hat above 1.01 with :math:`\log\lambda_i` sampled).
    """
    pm = libs.pymc()
    import pytensor.tensor as pt

    xi = pm.Flat(f"{name}_std", dims=dims)
    spread = pt.sqrt(2.0 * (nu + 1.0)) / nu
    log_lam = -1.0 / nu + spread * xi
    lam = pm.Deterministic(name, pt.exp(log_lam), dims=dims)
    gamma = pm.logp(pm.Gamma.dist(alpha=nu / 2.0, beta=nu / 2.0), lam)
    pm.Potential(f"{name}_prior", (gamma + log_lam + pt.log(spread)).sum())
    return lam


def _mixing(rate: Any) -> Any:
    r"""Add the mixing variable :math:`\psi \sim \operatorname{Gamma}(1/2, \text{rate})`.

    Sampled on the log scale (free variable ``spread_log_psi``, its Jacobian included),
    stored as ``spread_psi``. Written out with :math:`\Gamma(1/2) = \sqrt\pi` rather
    than as ``pm.Gamma``, whose compiled ``gammaln(1/2)`` is off by about 2e-8 (the
    compiled density is tested equal to this model's to 1e-9).
    """
    pm = libs.pymc()
    import pytensor.tensor as pt

    log_psi = pm.Flat("spread_log_psi")
    psi = pm.Deterministic("spread_psi", pt.exp(log_psi))
    pm.Potential(
        "spread_psi_prior",
        0.5 * log_psi - rate * psi + 0.5 * pt.log(rate / np.pi),  # Gamma(1/2) = sqrt(pi)
    )
    return psi


def _components_model(q: int, k: int) -> Any:
    r"""Return the PyMC model with independent t components, the deviations integrated out.

    :math:`\tilde u_i = Q \operatorname{diag}(s) z_i`, :math:`z_{ij} \sim t_{\nu_j}(0,
    1)` independent, written as scale mixtures: :math:`\tilde u_i \mid \lambda_i, s, Q
    \sim N(0, Q D_i Q^T)`, :math:`D_i = \operatorname{diag}(s_j^2/\lambda_{ij})`,
    :math:`\lambda_{ij} \sim \operatorname{Gamma}(\nu_j/2, \nu_j/2)` (``precision``,
    sampled as ``precision_std`` like the shared model's weights, :func:`_precision`),
    :math:`s_j \sim` half-:math:`t_n(0, A)` (``spread_df`` n, ``half_t_scale`` A; sampled
    as ``component_log_scale``). The noise likelihood of data set i (its covariance
    :math:`\Sigma_i` integrated out) is a multivariate t in the residual
    :math:`v_i = \bar z_i - \beta - \tilde u_i`, :math:`\propto (1 + |T_i^{-1} v_i|^2 /
    (2P_i))^{-P_i}`, a Gaussian scale mixture with one weight per data set:
    :math:`v_i \mid \kappa_i \sim N(0, (c_i/\kappa_i) T_i T_i^T)`, :math:`\kappa_i \sim
    \operatorname{Gamma}(a_i, a_i)`, :math:`a_i = P_i - d/2`, :math:`c_i = P_i/a_i`
    (``noise_weight``, sampled as ``noise_weight_std``). Given the weights the model is
    Gaussian in :math:`\tilde u_i`, which integrates out exactly (``docs/joint_prior.md``,
    the marginal form):

    .. math::

        \bar z_i - \beta \sim N(0, M_i), \quad
        M_i = Q D_i Q^T + (c_i/\kappa_i) T_i T_i^T

    The effects :math:`\beta \sim N(0, \tau^2 I_d)` (:math:`\tau` = ``effect_hi``) are
    then Gaussian given the rest and integrated out too (:func:`_collapsed_logp`; potential
    ``loglik``, with ``const`` holding the noise likelihood's constants and the mixture's,
    :math:`\sum_i [\frac d2 \log(2\pi P_i) + \log\Gamma(a_i) - \log\Gamma(P_i)]`).
    :math:`Q` is the Gram-Schmidt orthonormalisation of :math:`R`, :math:`R`'s density
    :math:`\propto e^{-|R|^2/2} |\det R|^m` (:data:`.spec.DIRECTION_DET_POWER`; a function
    of :math:`R^T R`, so :math:`Q` is Haar-distributed); :math:`\nu_j - 1` with
    :math:`\alpha, \beta` integrated out per component. Free variables in the compiled
    density's order: ``nu_minus_one`` (``component``), ``noise_weight_std``
    (``dataset``), ``precision_std`` (``dataset`` x ``component``),
    ``component_log_scale`` (``component``), ``direction_raw`` (``contrast`` x
    ``component``; none at d = 1, :func:`_directions`); deterministics ``nu``,
    ``noise_weight``, ``precision``, ``component_scale``, ``directions`` (:math:`Q`). The
    effects and then the deviations are drawn after the fit from their Gaussian
    conditionals (:func:`.model.draw_effects`, :func:`.model.draw_deviations`). The priors
    of :math:`s` and :math:`R` are written out (potentials), as the compiled density
    states them.
    """
    pm = libs.pymc()
    import pytensor.tensor as pt

    d = k - 1
    coords = {
        "dataset": np.arange(q),
        "system": np.arange(k),
        "contrast": np.arange(d),
        "component": np.arange(d),
    }
    with pm.Model(coords=coords) as model:
        data = {
            "means": pm.Data("means", np.zeros((q, d)), dims=("dataset", "contrast")),
            "transform": pm.Data("transform", np.tile(np.eye(d), (q, 1, 1))),
            "power": pm.Data("power", np.full(q, 6.0), dims="dataset"),
        }
        for name, value in {**PLACEHOLDER_SCALARS, **COMPONENTS_PLACEHOLDERS}.items():
            data[name] = pm.Data(name, value)
        x = pm.HalfFlat("nu_minus_one", dims="component")
        pm.Potential("nu_prior", nu_prior_logp(x, data).sum())
        nu = pm.Deterministic("nu", x + 1.0, dims="component")
        power = data["power"]
        shape = power - 0.5 * d  # a_i
        kappa = _precision(2.0 * shape, "dataset", "noise_weight")
        lam = _precision(nu, ("dataset", "component"))
        scale = _component_scale(nu, data["spread_df"], data["half_t_scale"])
        directions = pm.Deterministic("directions", _directions(d), dims=("contrast", "component"))
        transform = data["transform"]
        noise = (power / shape / kappa)[:, None, None] * (
            transform[:, :, None, :] * transform[:, None, :, :]
        ).sum(axis=-1)
        covariance = _component_covariance(directions, pt.square(scale) / lam, noise)
        pm.Potential(
            "loglik", data["const"] + _collapsed_logp(data["means"], covariance, data["effect_hi"])
        )
    return model


def _component_scale(nu: Any, df: Any, a_scale: Any) -> Any:
    r"""Add the components' scales :math:`s_j \sim` half-:math:`t_n(0, A)`; return them.

    Sampled on the log scale (its Jacobian included) sheared along :math:`\nu_j`: the free
    variable ``component_log_scale`` is :math:`u_j = \log s_j - \frac c2 \log(\nu_j /
    (\nu_j + 2))`, c = :data:`.spec.COMPONENT_SHEAR` (unit Jacobian; with light tails the
    data fix a component's variance :math:`s_j^2 \nu_j/(\nu_j - 2)`, a ridge in
    :math:`(\log s_j, \log \nu_j)` that :math:`u_j` follows). Stored as
    ``component_scale``; the density written out (potential ``component_scale_prior``),
    as the compiled density states it.
    """
    pm = libs.pymc()
    import pytensor.tensor as pt

    log_u = pm.Flat("component_log_scale", dims="component")
    log_s = log_u + 0.5 * COMPONENT_SHEAR * pt.log(nu / (nu + 2.0))
    s = pm.Deterministic("component_scale", pt.exp(log_s), dims="component")
    norm = (
        np.log(2.0)
        + pt.gammaln(0.5 * (df + 1.0))
        - pt.gammaln(0.5 * df)
        - 0.5 * pt.log(df * np.pi)
        - pt.log(a_scale)
    )
    density = norm - 0.5 * (df + 1.0) * pt.log1p(pt.square(s) / (df * pt.square(a_scale)))
    pm.Potential("component_scale_prior", (density + log_s).sum())
    return s


def _component_covariance(directions: Any, variances: Any, noise: Any) -> Any:
    r"""Return the :math:`M_i = Q D_i Q^T + N_i` ``(q, d, d)``.

    `directions` ``(d, d)`` :math:`Q`, `variances` ``(q, d)`` the diagonals of the
    :math:`D_i`, `noise` ``(q, d, d)`` the :math:`N_i`.
    """
    return (directions[None, :, :, None] * variances[:, None, :, None] * directions.T).sum(
        axis=2
    ) + noise


def _collapsed_logp(means: Any, covariance: Any, tau: Any) -> Any:
    r"""Return the log density of the means with the effects integrated out.

    :math:`\log \int \prod_i N(\bar z_i; \beta, M_i)\, N(\beta; 0, \tau^2 I)\,
    d\beta`; `means` ``(q, d)`` the :math:`\bar z_i`, `covariance` ``(q, d, d)`` the :math:`M_i`.
    With :math:`P = \tau^{-2} I + \sum_i M_i^{-1}` and :math:`\hat\beta = P^{-1} \sum_i
    M_i^{-1} \bar z_i` it is :math:`\sum_i \log N(\bar z_i; \hat\beta, M_i) + \log
    N(\hat\beta; 0, \tau^2 I) + \frac d2 \log 2\pi - \frac12 \log\det P`.
    """
    import pytensor.tensor as pt

    q, d = means.shape[0], means.shape[1]
    chol = pt.linalg.cholesky(covariance)
    eye = pt.eye(d)
    inverse = pt.linalg.solve(covariance, pt.tile(eye, (q, 1, 1)), b_ndim=2)
    precision = eye / pt.square(tau) + inverse.sum(axis=0)
    chol_p = pt.linalg.cholesky(precision)
    weighted = (inverse * means[:, None, :]).sum(axis=(0, 2))
    beta = pt.linalg.solve(precision, weighted, b_ndim=1)
    residual = means - beta[None, :]
    white = pt.linalg.solve_triangular(chol, residual, lower=True, b_ndim=1)
    log_det = pt.log(pt.diagonal(chol, axis1=-2, axis2=-1)).sum()
    log_det_p = pt.log(pt.diagonal(chol_p)).sum()
    return (
        -0.5 * q * d * np.log(2.0 * np.pi)
        - log_det
        - 0.5 * pt.square(white).sum()
        - d * pt.log(tau)
        - 0.5 * pt.square(beta).sum() / pt.square(tau)
        - log_det_p
    )


def _directions(d: int) -> Any:
    r"""Add the raw matrix :math:`R` and its prior; return :math:`Q` (Gram-Schmidt of :math:`R`).

    Free variable ``direction_raw`` (``contrast`` x ``component``), potential
    ``direction_prior`` (:math:`e^{-|R|^2/2} |\det R|^m`, normalised). At d = 1 none:
    :math:`Q = (1)` (:math:`Q D_i Q^T = D_i` whatever its sign).
    """
    pm = libs.pymc()
    import pytensor.tensor as pt

    if d == 1:
        return pt.ones((1, 1))
    raw = pm.Flat("direction_raw", dims=("contrast", "component"))
    pm.Potential(
        "direction_prior",
        -0.5 * pt.square(raw).sum()
        + DIRECTION_DET_POWER * pt.log(pt.abs(pt.nlinalg.det(raw)))
        - direction_prior_const(d),
    )
    return _gram_schmidt(raw, d)


def _gram_schmidt(raw: Any, d: int) -> Any:
    """Return the orthonormal columns of `raw` (d x d) by Gram-Schmidt."""
    import pytensor.tensor as pt

    columns: list[Any] = []
    for j in range(d):
        v = raw[:, j]
        for u in columns:
            v = v - pt.dot(u, v) * u
        columns.append(v / pt.sqrt(pt.square(v).sum()))
    return pt.stack(columns, axis=1)
