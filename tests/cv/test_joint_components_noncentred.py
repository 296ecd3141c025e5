"""Independent components, non-centred (a validation experiment).

The form is ``validation/joint_components_noncentred.py`` (``docs/joint_prior.md``,
"Non-centred components, measured"). Checked here so that its numbers are about the
package's law: at the same point its density is the package's PyMC statement's
(``pymc_backend._components_model``) plus the Jacobian of z -> u~.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from _joint_data import score_table, study_scores
from isbetter.cv.joint.pymc_backend import build_model as centred_model
from isbetter.cv.joint.spec import JointPriors, prepare

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from validation import joint_components_noncentred as noncentred  # noqa: E402


def _gram_schmidt(raw):
    q, r = np.linalg.qr(raw)
    return q * np.sign(np.diag(r))[None, :]  # the positive-diagonal QR's Q is Gram-Schmidt's


def _point(model, values):
    """Return `values` (by variable name) as `model`'s unconstrained point."""
    point = {}
    for rv in model.free_RVs:
        value = values[rv.name]
        transform = model.rvs_to_transforms.get(rv)
        if transform is not None:
            value = transform.forward(value, *rv.owner.inputs).eval()
        point[model.rvs_to_values[rv].name] = value
    return point


@pytest.mark.slow
@pytest.mark.parametrize(("q", "k"), [(5, 2), (4, 3), (3, 4)])
def test_the_density_is_the_package_s_plus_the_jacobian_s(rng, q, k):
    """log p_nc(nu, beta, s, R, z) = log p_c(nu, beta, eta(z), s, R) + q sum_j log s_j (up to
    one constant: T_i's Jacobian), at random points, with u~_i = Q diag(s) z_i and eta_i =
    T_i^{-1}(means_i - beta - u~_i): the same law in other coordinates."""
    import pymc as pm

    priors = JointPriors(tails="components")
    scores = study_scores(rng, np.linspace(0.0, 0.02, k), q=q, n=10)
    data = prepare(score_table(scores), tuple(f"s{m}" for m in range(k)), priors=priors)
    data = data.model_data(priors)
    centred = centred_model(q, k, "huang-wand", "components")
    with centred:
        pm.set_data(data)
    model = noncentred.build_model(data)
    # with the transforms' Jacobians, which are the same in both
    logp_c = centred.compile_logp(mode="FAST_COMPILE")
    logp_nc = model.compile_logp(mode="FAST_COMPILE")
    d = k - 1
    gaps = []
    for _ in range(4):
        nu_m1 = rng.gamma(2.0, 5.0, size=d)
        beta = 0.5 * rng.normal(size=d)
        s = rng.gamma(2.0, 0.5, size=d)
        raw = rng.normal(size=(d, d))
        z = rng.standard_t(3.0, size=(q, d))
        u = z @ (_gram_schmidt(raw) * s[None, :]).T
        rest = np.asarray(data["means"]) - beta[None, :] - u
        eta = np.linalg.solve(np.asarray(data["transform"]), rest[..., None])[..., 0]
        common = {"nu_minus_one": nu_m1, "effect_coords": beta, "direction_raw": raw}
        a = logp_c(_point(centred, {**common, "eta": eta, "component_scale": s}))
        b = logp_nc(_point(model, {**common, "z": z, "component_scale": s}))
        gaps.append(b - a - q * np.log(s).sum())
    assert np.ptp(gaps) < 1e-8
