"""validation/joint_smallq.py's decoding of the components kernel's coordinates."""

from __future__ import annotations

import numpy as np
from validation.joint_sbc import JointSetting
from validation.joint_smallq import decode, sim_data

from isbetter.cv.joint import compiled_backend as cb


def test_decode_matches_the_kernels_expansion() -> None:
    # the kernel's own map from coordinates to quantities (_expand_components, run as
    # Python) at random points of a q = 3, K = 4 study: decode must give the same nu, s
    # and smallest weight per component (the effects are integrated out: no coordinates)
    q, k = 3, 4
    d = k - 1
    s = JointSetting(q, n_systems=k, tails="components", spread_prior="huang-wand")
    data = sim_data(s, np.random.SeedSequence([7, q]).spawn(1)[0])
    buffer = cb._buffer(data)
    rng = np.random.default_rng(1)
    x = rng.normal(scale=1.5, size=(5, cb._n_dim(buffer)))
    got = decode(x, q, d)
    assert "beta_over_box" not in got
    for n, point in enumerate(x):
        out = np.empty(cb._n_expanded(buffer))
        cb._expand_components(point, buffer, out)
        nu = out[:d]
        at = d + q
        lam = out[at : at + q * d].reshape(q, d)
        scale = out[at + q * d : at + q * d + d]
        np.testing.assert_allclose(got["nu"][n], nu, rtol=1e-12)
        np.testing.assert_allclose(got["log10_s"][n], np.log10(scale), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got["log_lam_min"][n], np.log(lam).min(axis=0), rtol=1e-10)
