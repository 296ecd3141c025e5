r"""The joint correlated model's likelihood: its sufficient statistics, and its mathematics.

With the fold effects :math:`\mu_{if}` integrated out (flat prior), data set i's
scores enter only through their K - 1 contrasts. In orthonormal coordinates
(:math:`Z_i = H^T X_i`, :math:`H` from :func:`.spec.contrast_basis`; any other
contrasts change the density by a constant) they are matrix-normal,
:math:`Z_i \sim MN(\tilde\theta_i 1^T, \Sigma_i, M_i)` with
:math:`M_i = (1-\rho_i)I + \rho_i 11^T`, and with
:math:`M^{-1} = (I - c\,11^T)/(1-\rho)`, :math:`c = \rho/(1 + (n-1)\rho)`, the
quadratic form is

.. math::

    Q_i = (Z_i - \tilde\theta_i 1^T) M_i^{-1} (Z_i - \tilde\theta_i 1^T)^T
        = \frac{R_i}{1 - \rho_i} + w_i v_i v_i^T, \quad
    w_i = \frac{n_i}{1 + (n_i - 1)\rho_i}, \quad v_i = \bar z_i - \tilde\theta_i,

so the density needs only :math:`n_i`, the contrasts' fold means :math:`\bar z_i` and
their within-fold cross-products :math:`R_i` (:func:`sufficient_statistics`). For K = 2
it is the likelihood of the differences of the pairwise model (Corani et al. 2017)
with :math:`\sigma_i^2 = 2\Sigma_i` (the orthonormal contrast is the difference over
:math:`\sqrt 2`). Diagonal noise per system,
:math:`\operatorname{diag}(\sigma_{i1}^2, \dots, \sigma_{iK}^2)`, is the special case
:math:`\Sigma_i = H^T D_i H`.

With the conjugate prior :math:`\Sigma_i \sim \operatorname{IW}(\nu_0, \psi I)`,
:math:`\Sigma_i` integrates out in closed form (a matrix-variate t; Gupta & Nagar
2000, theorem 4.2.1): with :math:`d = K - 1` and :math:`B_i = \psi I + R_i/(1-\rho_i)`,

.. math::

    \log p(Z_i \mid \tilde\theta_i) = -\frac{dn}{2}\log\pi - \frac{d}{2}\log|M_i|
    + \log\frac{\Gamma_d(\frac{\nu_0 + n}{2})}{\Gamma_d(\frac{\nu_0}{2})}
    + \frac{\nu_0 d}{2}\log\psi - \frac{\nu_0 + n}{2}\log|B_i|
    - \frac{\nu_0 + n}{2}\log\big(1 + w_i v_i^T B_i^{-1} v_i\big)

(``marginal_loglik`` of the test oracle ``tests/cv/_joint_oracle.py``, which also has
the conditional form), a multivariate-t kernel in :math:`\tilde\theta_i`: O(d^2)
per data set once :math:`B_i^{-1}` is known. The fits compute it once, in the compiled
density of :mod:`.compiled_backend` (and its PyTensor form in :mod:`.pymc_backend`),
both tested equal to the oracle's NumPy form.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sufficient_statistics"]


def sufficient_statistics(scores: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """Return ``(n, mean, R)`` of one data set's ``(d, n)`` scores or contrasts (rows).

    ``mean[j]`` is row j's mean over the folds and ``R`` the ``d x d``
    cross-product matrix of the deviations ``x[j, f] - mean[j]``.

    Examples
    --------
    >>> n, mean, r = sufficient_statistics(np.array([[1.0, 3.0], [2.0, 2.0]]))
    >>> n, mean, r
    (2, array([2., 2.]), array([[2., 0.],
           [0., 0.]]))
    """
    x = np.asarray(scores, dtype=float)
    mean = x.mean(axis=1)
    dev = x - mean[:, None]
    return x.shape[1], mean, dev @ dev.T
