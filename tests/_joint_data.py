"""Simulated fold-level scores of K systems for the joint model's tests."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from isbetter import ConvergenceWarning, rank, read_scores

#: MCMC settings of the small fits
SMALL = {"draws": 300, "tune": 300, "chains": 2}


def small_joint_rank(table, **kwargs):
    """The joint ranking of a small study with SMALL's draws, rope 0.01 and seed 2 unless
    given: for tests of the ranking's form, not of convergence (the default prior,
    independent components, mixes slowly at this size: R-hat up to 1.014, a divergence
    or two, so its ConvergenceWarning is not raised here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return rank(table, **{"rope": 0.01, "method": "joint", "rng": 2, **SMALL, **kwargs})


def score_table(scores: np.ndarray, *, lower: bool = False, names=None) -> object:
    """A ScoreTable of ``scores[i, k, f]``: data set i, system k, fold f (one run)."""
    q, k, n = scores.shape
    names = names or [f"s{m}" for m in range(k)]
    rows = [
        (f"d{i}", names[m], f + 1, scores[i, m, f])
        for i in range(q)
        for m in range(k)
        for f in range(n)
    ]
    frame = pd.DataFrame(rows, columns=["dataset", "system", "fold", "acc"])
    return read_scores(frame, run=None, score="acc", higher_is_better=not lower)


def study_scores(rng: np.random.Generator, effects, q: int = 8, n: int = 10, spread: float = 0.004):
    """Scores with fold effects, data-set deviations and noise around known effects."""
    effects = np.asarray(effects, dtype=float)
    k = effects.size
    level = rng.uniform(0.6, 0.9, size=(q, 1, 1))
    folds = rng.normal(0, 0.02, size=(q, 1, n))
    deviations = rng.normal(0, spread, size=(q, k, 1))
    noise = rng.normal(0, 0.005, size=(q, k, n))
    return level + folds + effects[None, :, None] + deviations + noise


def assert_compiled_matches_pymc(rng: np.random.Generator, model, data: dict, n_points: int = 3):
    """Assert that the compiled joint density and its gradient are `model`'s (PyMC) at random
    points, to 1e-9; `data` is the model's data (already set into `model`)."""
    import pytest

    from isbetter.cv.joint.compiled_backend import log_density

    logp = model.compile_logp(mode="FAST_COMPILE")
    dlogp = model.compile_dlogp(mode="FAST_COMPILE")
    names = [v.name for v in model.value_vars]
    for _ in range(n_points):
        point = {
            name: 0.7 * rng.normal(size=np.shape(v)) for name, v in model.initial_point().items()
        }
        flat = np.concatenate([np.ravel(point[name]) for name in names])
        value, grad = log_density(flat, data)
        assert value == pytest.approx(float(logp(point)), rel=1e-10, abs=1e-9)
        np.testing.assert_allclose(grad, dlogp(point), rtol=1e-8, atol=1e-9)
    return flat


def assert_gradient_is_central_differences(x: np.ndarray, data: dict) -> None:
    """The compiled joint density's gradient at `x` against central differences of its value."""
    from isbetter.cv.joint.compiled_backend import log_density

    _, grad = log_density(x, data)
    h = 1e-6
    numeric = np.empty_like(x)
    for j in range(x.size):
        up, down = x.copy(), x.copy()
        up[j] += h
        down[j] -= h
        numeric[j] = (log_density(up, data)[0] - log_density(down, data)[0]) / (2 * h)
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-5)


def argmax_probabilities_and_mcse(masses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The three argmax-counted probabilities of ``(chains, draws, 3)`` per-draw masses and
    their Monte Carlo standard errors: each probability is the mean of a per-draw share
    (an indicator), so MCSE = sd / sqrt(ESS), ESS the share's bulk ESS over the chains (for
    an indicator the rank normalisation is affine, so this is the ESS of its mean); sd =
    sqrt(p (1 - p)) for an indicator. A share that never varies has MCSE 0."""
    from isbetter.inference.decisions import argmax_shares
    from isbetter.inference.diagnostics import ess_bulk

    shares = argmax_shares(masses)
    flat = shares.reshape(-1, 3)
    var = flat.var(axis=0)
    ess = ess_bulk(shares)
    mcse = np.where(var > 0.0, np.sqrt(var / np.where(var > 0.0, ess, 1.0)), 0.0)
    return flat.mean(axis=0), mcse
