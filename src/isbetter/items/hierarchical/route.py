r"""Which parameterization of the direction suits the data: centred or non-centred.

The centred model samples :math:`\operatorname{logit} s_t` itself, the non-centred one
:math:`z_t` with :math:`\operatorname{logit} s_t = \mu + \sigma z_t`. The centred one mixes
better where each subtask's data pin its direction more tightly than the subtasks differ
(standard error below :math:`\sigma`); where the subtasks agree (:math:`\sigma` small: two
near-identical models) it meets the funnel of :math:`(\operatorname{logit} s_t, \sigma)`
and the non-centred one is right (Betancourt & Girolami 2015; Papaspiliopoulos, Roberts
& Sköld 2007). The rule compares a moment estimate of :math:`\sigma` with the subtasks'
typical standard error, both from the counts alone, before any fit.

Measured (bench/bench_items_hierarchical.py's 57 subtasks, sigma ~ 0.35, standard errors
~ 0.3): centred bulk / tail ESS min 1604-2031 / 1778-2261, non-centred 602-1187 / 281-1186
(seeds 1-3); 57 near-identical subtasks (sigma ~ 0.02): centred flagged (R-hat 1.04, ESS
64-82), non-centred ESS 751-828.

References
----------
.. [1] M. Betancourt, M. Girolami (2015). Hamiltonian Monte Carlo for hierarchical models.
   In *Current Trends in Bayesian Methodology with Applications*, CRC Press.
.. [2] O. Papaspiliopoulos, G. O. Roberts, M. Sköld (2007). A general framework for the
   parametrization of hierarchical models. *Statistical Science* 22(1), 59-73.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from isbetter.items.hierarchical.counts import SubtaskCounts

__all__ = ["LOW_RANK_MAX_SUBTASKS", "choose_parameterization"]

#: Few subtasks: up to this many, .model's sampler settings of few (a low-rank mass matrix,
#: longer tuning, a higher target acceptance), and a ranking's fits keep the 4 chains
#: (isbetter.ranking.items.RANK_CHAINS above). nutpie adapts a low-rank mass matrix up to
#: this many subtasks, a diagonal one above. With few subtasks nu and sigma are poorly
#: identified and correlated: 8 near-identical subtasks (sigma ~ 0.02) gave a stray
#: divergence in 1 of 4 fits with the diagonal one, none with the low-rank one; with 57 the
#: low-rank one cost 26 s against 5 s for the diagonal one (same machine, loaded), for no
#: better effective sample size
LOW_RANK_MAX_SUBTASKS = 20


def _centred(hit: np.ndarray, miss: np.ndarray) -> tuple[bool, float, float]:
    """Whether to centre logits estimated from `hit` / `miss` counts: spread >= noise."""
    k, m = hit + 0.5, miss + 0.5
    logit, variance = np.log(k / m), 1.0 / k + 1.0 / m
    spread = float(np.var(logit, ddof=1) - variance.mean()) if logit.size > 1 else 0.0
    sigma = float(np.sqrt(max(spread, 0.0)))
    se = float(np.sqrt(np.median(variance)))
    return logit.size > 1 and sigma >= se, sigma, se


def choose_parameterization(data: SubtaskCounts) -> dict[str, Any]:
    r"""Return the parameterizations of the directions and of the rates, and their grounds.

    With :math:`\hat\ell_t = \log((n_{10} + \frac12) / (n_{01} + \frac12))` and its squared
    standard error :math:`v_t = 1 / (n_{10} + \frac12) + 1 / (n_{01} + \frac12)`: the spread
    :math:`\hat\sigma^2 = \max(0, \operatorname{var}(\hat\ell) - \bar v)` (the subtasks'
    variance beyond their noise). The directions are centred when :math:`\hat\sigma` is at
    least the median standard error :math:`\sqrt{v_t}`, non-centred otherwise (and with one
    subtask). The same rule, with :math:`D_t` and :math:`N_t - D_t`, for the rates: a few
    dozen items per subtask and rates that agree give their funnel too (6 subtasks x 60
    items from the prior: bulk ESS of :math:`\tau_\phi` 35-68 of 600 draws, centred).

    Examples
    --------
    >>> import numpy as np
    >>> agree = SubtaskCounts(("a", "b", "c"), np.array([[50, 10, 10, 30]] * 3))
    >>> choose_parameterization(agree)["direction"]
    'noncentred'
    """
    direction = _centred(data.table[:, 1], data.table[:, 2])
    rate = _centred(data.discordant, data.items - data.discordant)
    word = {True: "centred", False: "noncentred"}
    return {
        "direction": word[direction[0]],
        "rate": word[rate[0]],
        "sigma_moment": direction[1],
        "direction_median_standard_error": direction[2],
        "tau_phi_moment": rate[1],
        "rate_median_standard_error": rate[2],
    }
