r"""Which parameterisation a fit of many data sets starts with: the funnel foreseen.

Above :data:`~.model.AUTO_INTEGRATED_MAX_DATASETS` data sets the ``"auto"``
parameterisation samples the centred model, cheap per gradient, whose geometry is
good when each data set pins its own :math:`\delta_i`: when the spread of the
:math:`\delta_i`, :math:`\sigma_0`, is not small against the width of each data
set's likelihood in :math:`\delta_i`. Where :math:`\sigma_0` is far below those
widths (two near-identical systems: j48/j48gr, aode/hnb), the :math:`\delta_i`
are held by :math:`\sigma_0` rather than by their data, NUTS meets the funnel
between them, and the fit is flagged (divergences, R-hat, low ESS) and refitted
with the integrated model, which has no funnel: the centred fit was wasted.

:func:`predict_parameterization` reads the answer off the data before sampling:
it finds the mode of the integrated model's posterior of :math:`(\nu, \delta_0,
\sigma_0)` in the sampler's coordinates (a few dozen evaluations of the same
compiled log density the integrated fit samples; milliseconds at 54 data sets,
well under a second at 1000) and compares :math:`\sigma_0` there with the
median likelihood width of the data sets. At or above :data:`FUNNEL_RATIO` the
centred model is sampled, below it the integrated one. The refit stays as the
safety net for the centred fits this gets wrong.

The ratio separates the fits that were flagged from those that were not more
cleanly than the spread of the per-data-set means against their standard
errors does, because it is the model's own estimate: with Student-t
:math:`\delta_i`, a few data sets far out inflate the spread of the means but
not :math:`\sigma_0` (``bench/bench_refit_cliff.py`` prints both for the UCI
pairs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, special

from isbetter.cv.hierarchical.compiled_backend import log_density
from isbetter.cv.hierarchical.numerics.quadrature import likelihood_width
from isbetter.cv.hierarchical.spec import Prepared

__all__ = ["FUNNEL_RATIO", "RoutePrediction", "predict_parameterization"]

#: The centred model is sampled when sigma_0 at the integrated posterior's mode is at least
#: this many median likelihood widths. Of the centred fits at default settings of 109
#: studies (the ten UCI pairs; simulated ones of 30 to 1000 data sets, normal and t_3
#: spreads; bench/bench_refit_cliff.py --calibrate), all 39 below 0.6 were flagged, none
#: above 0.79; in between both happen. There a wrong "integrated" costs a whole integrated
#: fit (several times a centred one), a wrong "centred" one centred fit (then refitted),
#: so the boundary sits at the low end: 8 of the 70 fits above it were flagged.
FUNNEL_RATIO = 0.6


@dataclass(frozen=True)
class RoutePrediction:
    r"""The parameterisation a fit starts with, and what it was chosen from.

    Attributes
    ----------
    parameterization : {"centred", "integrated"}
        The one sampled first.
    std0_mode, delta0_mode, nu_mode : float
        The integrated posterior's mode in the sampler's coordinates (``std0`` and
        ``delta0`` in score units).
    median_width : float
        Median width of the data sets' likelihoods in :math:`\delta_i` (score units).
    ratio : float
        ``std0_mode / median_width``; NaN if the mode could not be found.
    threshold : float
        :data:`FUNNEL_RATIO`.
    evaluations : int
        Evaluations of the log density the search took.
    """

    parameterization: str
    std0_mode: float
    delta0_mode: float
    nu_mode: float
    median_width: float
    ratio: float
    threshold: float
    evaluations: int

    def to_dict(self) -> dict[str, Any]:
        """Return the fields as a JSON-ready dict (NaN as None)."""
        out: dict[str, Any] = {}
        for key, value in self.__dict__.items():
            if isinstance(value, float):
                value = value if math.isfinite(value) else None
            out[key] = value
        return out


def predict_parameterization(
    prepared: Prepared, data: dict[str, Any], *, threshold: float = FUNNEL_RATIO
) -> RoutePrediction:
    r"""Return the parameterisation a fit of these data should start with.

    Parameters
    ----------
    prepared : Prepared
        The fit's scaled data (:func:`.spec.prepare`).
    data : dict
        ``prepared.model_data(priors)``.
    threshold : float, default: FUNNEL_RATIO
        ``"centred"`` when :math:`\sigma_0` at the mode is at least this many
        median likelihood widths, ``"integrated"`` below.

    Returns
    -------
    RoutePrediction
        ``"centred"`` if no finite mode was found (the refit then still guards the fit).
    """
    bounded = prepared.bounded
    width = likelihood_width(data["a"], data["w"], data["ssr"])
    median_width = float(np.median(width))
    d_hi, s_hi = float(data["delta0_hi"]), float(data["std0_hi"])
    xbar = np.asarray(data["xbar"], dtype=float)
    centre = float(np.median(xbar))
    spread = 1.4826 * float(np.median(np.abs(xbar - centre)))
    # start: the median and the MAD of the means (at least a tenth of a width, within the
    # prior's bounds), nu - 1 at the mean of its prior's middle Gamma (as the sampler's start)
    std0 = min(max(spread, 0.1 * median_width), 0.5 * s_hi)
    centre = min(max(centre, -0.9 * d_hi), 0.9 * d_hi)
    nu1 = (float(data["alpha_lo"]) + float(data["alpha_hi"])) / (
        float(data["beta_lo"]) + float(data["beta_hi"])
    )
    start = np.array(
        [math.log(nu1), special.logit((centre + d_hi) / (2 * d_hi)), special.logit(std0 / s_hi)]
    )
    calls = [0]

    def negative(x: np.ndarray) -> tuple[float, np.ndarray]:
        calls[0] += 1
        value, grad = log_density("integrated", x, data, bounded=bounded)
        if not math.isfinite(value) or not np.all(np.isfinite(grad)):
            return math.inf, np.zeros_like(x)
        return -value, -grad

    # BFGS to a small gradient: L-BFGS-B's test on the relative change of the log density
    # (thousands here) stopped it early, e.g. 0.20 instead of 0.15 for j48/j48gr
    found = optimize.minimize(negative, start, jac=True, method="BFGS", options={"gtol": 1e-4})
    x = found.x
    ratio = math.nan
    nu_mode = delta0_mode = std0_mode = math.nan
    if math.isfinite(found.fun) and np.all(np.isfinite(x)):
        nu_mode = 1.0 + math.exp(x[0])
        delta0_mode = -d_hi + 2.0 * d_hi * float(special.expit(x[1]))
        std0_mode = s_hi * float(special.expit(x[2]))
        ratio = std0_mode / median_width
    chosen = "integrated" if ratio < threshold else "centred"  # NaN: centred
    scale = prepared.scale
    return RoutePrediction(
        parameterization=chosen,
        std0_mode=std0_mode * scale,
        delta0_mode=delta0_mode * scale,
        nu_mode=nu_mode,
        median_width=median_width * scale,
        ratio=ratio,
        threshold=float(threshold),
        evaluations=calls[0],
    )
