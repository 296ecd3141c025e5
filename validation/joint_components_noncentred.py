r"""Independent t components, non-centred: the sampler moves the standardised components.

The law of the package's ``JointPriors(tails="components")`` (``docs/joint_prior.md``,
"Independent components"; :func:`isbetter.cv.joint.pymc_backend._components_model`), in
other coordinates. There the sampler moves each data set's contrasts through
:math:`\eta_i`, :math:`\tilde u_i = \bar z_i - \beta - T_i\eta_i`: centred on the data
and scaled by the fold noise, the right coordinates where the folds pin the deviations
down, a funnel where a component's scale is far below the noise (the j48/j48gr
direction on the UCI data, "Integrating each component's scale out"). Here the
sampler's coordinates are the standardised components themselves:

.. math::

    \tilde u_i = Q \operatorname{diag}(s) z_i, \quad z_{ij} \sim t_{\nu_j}(0, 1),

and the folds enter through the likelihood of :math:`\eta_i = T_i^{-1}(\bar z_i - \beta
- \tilde u_i)`, the package's ``loglik`` potential unchanged. The Jacobian of
:math:`z_i \mapsto \tilde u_i` (:math:`\prod_j s_j`) cancels the :math:`-\sum_j \log
s_j` of the centred form's deviation density, so the posterior of every other
variable is the package's. The priors of :math:`\nu_j` (``nu_prior_logp``),
:math:`\beta`, :math:`s_j \sim` half-:math:`t_n(0, A)` and :math:`R_{ab} \sim N(0,
1)` (:math:`Q` its Gram-Schmidt orthonormalisation, ``_gram_schmidt``) are the
package's; :math:`s` and :math:`R` as PyMC's ``HalfStudentT`` and ``Normal``, the
same laws the package writes out as potentials.

Measured in ``docs/joint_prior.md``, "Non-centred components, measured"; run with
``python -m validation.joint_components uci5 --noncentred [--systems ...]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from isbetter.cv.hierarchical.pymc_backend import nu_prior_logp
from isbetter.cv.joint.pymc_backend import _gram_schmidt
from isbetter.cv.joint.spec import COMPONENTS_PLACEHOLDERS, PLACEHOLDER_SCALARS, contrast_basis
from isbetter.inference import libs


def build_model(data: dict[str, Any]) -> Any:
    r"""Return the non-centred components model of the package's model data `data`.

    `data`: ``JointData.model_data(JointPriors(tails="components"))``. Free variables
    ``nu_minus_one`` (``component``), ``effect_coords``, ``component_scale``,
    ``direction_raw`` (``contrast`` x ``component``) and ``z`` (``dataset`` x
    ``component``, :math:`z_{ij} \sim t_{\nu_j}(0, 1)`); deterministics ``nu``, ``b``,
    ``loading`` (:math:`Q\operatorname{diag}(s)`, model units) and ``deviations``.
    """
    pm = libs.pymc()
    import pytensor.tensor as pt

    means = np.asarray(data["means"], dtype=float)
    q, d = means.shape
    k = d + 1
    transform = np.asarray(data["transform"], dtype=float)
    coords = {"dataset": range(q), "system": range(k), "contrast": range(d), "component": range(d)}
    with pm.Model(coords=coords) as model:
        values = {
            "means": pm.Data("means", means, dims=("dataset", "contrast")),
            "inverse": pm.Data("inverse", np.linalg.inv(transform)),  # T_i^{-1}
            "power": pm.Data("power", np.asarray(data["power"], dtype=float), dims="dataset"),
        }
        for name in {**PLACEHOLDER_SCALARS, **COMPONENTS_PLACEHOLDERS}:
            values[name] = pm.Data(name, np.asarray(data[name], dtype=float))
        x = pm.HalfFlat("nu_minus_one", dims="component")
        pm.Potential("nu_prior", nu_prior_logp(x, values).sum())
        nu = pm.Deterministic("nu", x + 1.0, dims="component")
        beta = pm.Uniform(
            "effect_coords", lower=-values["effect_hi"], upper=values["effect_hi"], dims="contrast"
        )
        pm.Deterministic("b", pt.dot(contrast_basis(k), beta), dims="system")
        s = pm.HalfStudentT(
            "component_scale",
            nu=values["spread_df"],
            sigma=values["half_t_scale"],
            dims="component",
        )
        raw = pm.Normal("direction_raw", 0.0, 1.0, dims=("contrast", "component"))
        loading = pm.Deterministic(
            "loading", _gram_schmidt(raw, d) * s[None, :], dims=("contrast", "component")
        )
        z = pm.StudentT("z", nu=nu[None, :], mu=0.0, sigma=1.0, dims=("dataset", "component"))
        dev = pm.Deterministic("deviations", pt.dot(z, loading.T), dims=("dataset", "contrast"))
        rest = values["means"] - beta[None, :] - dev
        eta = (values["inverse"] * rest[:, None, :]).sum(axis=-1)
        power = values["power"]
        loglik = (
            values["const"] - (power * pt.log1p(pt.square(eta).sum(axis=-1) / (2 * power))).sum()
        )
        pm.Potential("loglik", loglik)
    return model


def data_start(data: dict[str, Any]) -> dict[str, np.ndarray]:
    r"""Return a starting point at the data (constrained values, by variable name).

    PyMC's default start (:math:`s_j` at A, :math:`z` jittered by U(-1, 1), Q from a
    jittered zero matrix) puts the deviations a whole prior scale from the data, where
    the fold noise makes the likelihood in :math:`z` very steep: the chains stuck there
    (measured, K = 3: 8000 divergences of 8000, R-hat 4.4). Here :math:`Q \approx I`,
    :math:`\beta` the median of the contrasts' means, :math:`s_j` their standard
    deviation (at least 1e-3 in model units) and :math:`z_i = \operatorname{diag}(s)^{-1}
    Q^T(\bar z_i - \beta)`: the deviations start at the data (:math:`\eta_i = 0`). Only
    the :math:`\nu_j` are jittered.
    """
    means = np.asarray(data["means"], dtype=float)
    beta = np.median(means, axis=0)
    spread = np.maximum(means.std(axis=0), 1e-3)
    d = means.shape[1]
    # Q near I, not I: nutpie refuses a start where a gradient entry is exactly zero
    raw = np.eye(d) + 0.1 * np.sin(np.arange(1.0, d * d + 1.0)).reshape(d, d)
    basis, upper = np.linalg.qr(raw)
    basis = basis * np.sign(np.diag(upper))[None, :]  # Gram-Schmidt's Q
    return {
        "effect_coords": beta,
        "component_scale": spread,
        "direction_raw": raw,
        "z": (means - beta) @ basis / spread,
        "nu_minus_one": np.full(d, 4.0),
    }


def fit(
    table: Any, systems: tuple[str, ...], *, seed: int, draws: int, tune: int, chains: int
) -> Any:
    """Fit the non-centred form with nutpie (PyMC graph) through the package's sampling path.

    Returns a :class:`~isbetter.cv.joint.model.JointFit` as the package's components fits
    (``loading`` in score units, ``pair_scale`` and ``nu_range`` in the posterior);
    ``settings["compile_s"]`` is the seconds nutpie's numba compile of the graph took.
    """
    import time

    from isbetter.cv.joint.model import TARGET_ACCEPT
    from isbetter.cv.joint.spec import JointPriors, prepare
    from isbetter.inference.sampling import sample
    from validation.joint_components_integrated import components_fit

    priors = JointPriors(tails="components")
    prepared = prepare(table, systems, priors=priors)
    model = build_model(prepared.model_data(priors))
    t0 = time.perf_counter()
    compiled = libs.nutpie().compile_pymc_model(
        model,
        backend="numba",
        initial_points=data_start(prepared.model_data(priors)),
        jitter_rvs={model["nu_minus_one"]},
    )
    compile_s = time.perf_counter() - t0
    sampling = {"draws": draws, "tune": tune, "chains": chains, "seed": seed}
    idata = sample(
        model,
        **sampling,
        cores=None,
        backend="nutpie",
        compiled=compiled,
        target_accept=TARGET_ACCEPT,
    )
    settings = {"form": "components, non-centred", "seed": seed, "compile_s": compile_s}
    return components_fit(idata, prepared, settings)
