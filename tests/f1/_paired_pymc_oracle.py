"""Labelled oracle: the paired F1 model of Zhang et al. (2016) written in PyMC.

:func:`isbetter.compare_f1` samples the exact conjugate posterior
(:mod:`isbetter.f1.paired`); this module writes the *same* model in PyMC, so that the
exact sampler is checked against MCMC (``tests/f1/test_f1_paired_pymc.py``) and timed
against it (``bench/bench_f1.py``). Used by tests and benchmarks only. PyMC is
imported inside the functions; ``import isbetter`` stays light. Sampling, seeds and
diagnostics go through :mod:`isbetter.inference.sampling` (nutpie when installed).
Zhang et al.'s hierarchical model of multi-class confusion matrices (ICDM 2015) is
in :mod:`isbetter.f1.icdm`.

The compact model of the paper (section 3.1.2)::

    mu ~ Beta(beta+, beta-)            n+ ~ Binomial(N, mu)
    theta+ ~ Dirichlet(alpha+)         c+ ~ Multinomial(n+, theta+)
    theta- ~ Dirichlet(alpha-)         c- ~ Multinomial(n-, theta-)
    delta = psi(mu, rho+_A, rho-_A) - psi(mu, rho+_B, rho-_B)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from isbetter.f1.measures import Measure
from isbetter.f1.paired import F1Prior
from isbetter.f1.predictions import JointCounts
from isbetter.inference.records import MCMCDiagnostics
from isbetter.inference.sampling import diagnose, resolve_backend, sample, warn_if_poor
from isbetter.inference.seeds import sampler_seed

__all__ = ["PyMCF1Fit", "build_paired_model", "sample_paired_pymc"]


def build_paired_model(counts: JointCounts, measure: Measure, prior: F1Prior | None = None) -> Any:
    """Build the paired model as a :class:`pymc.Model` (pure: no sampling).

    The measure must be written with operations that work on PyTensor tensors
    (the built-in ones do: arithmetic only). Free variables: ``mu``, ``theta_pos``,
    ``theta_neg``; deterministic: ``psi_a``, ``psi_b``, ``delta`` (positive: A better).
    """
    import pymc as pm

    prior = prior or F1Prior()
    pos = np.asarray(counts.pos, dtype=np.int64)
    neg = np.asarray(counts.neg, dtype=np.int64)
    n_pos, n_neg = int(pos.sum()), int(neg.sum())
    coords = {"outcome": ["11", "10", "01", "00"]}
    with pm.Model(coords=coords) as model:
        mu = pm.Beta("mu", alpha=prior.mu[0], beta=prior.mu[1])
        pm.Binomial("n_pos", n=n_pos + n_neg, p=mu, observed=n_pos)
        th_p = pm.Dirichlet("theta_pos", a=np.asarray(prior.theta_pos), dims="outcome")
        th_n = pm.Dirichlet("theta_neg", a=np.asarray(prior.theta_neg), dims="outcome")
        pm.Multinomial("c_pos", n=n_pos, p=th_p, observed=pos, dims="outcome")
        pm.Multinomial("c_neg", n=n_neg, p=th_n, observed=neg, dims="outcome")

        def cells(rho_p: Any, rho_n: Any) -> tuple[Any, Any, Any, Any]:
            return mu * rho_p, (1 - mu) * rho_n, mu * (1 - rho_p), (1 - mu) * (1 - rho_n)

        psi_a = pm.Deterministic(
            "psi_a", measure.func(*cells(th_p[0] + th_p[1], th_n[0] + th_n[1]))
        )
        psi_b = pm.Deterministic(
            "psi_b", measure.func(*cells(th_p[0] + th_p[2], th_n[0] + th_n[2]))
        )
        pm.Deterministic("delta", psi_a - psi_b if measure.higher_is_better else psi_b - psi_a)
    return model


@dataclass(frozen=True)
class PyMCF1Fit:
    """Draws of delta from the PyMC model, with diagnostics.

    Attributes
    ----------
    delta : numpy.ndarray
        Posterior draws of delta, chains concatenated.
    ess : float
        Bulk effective sample size of delta.
    diagnostics : MCMCDiagnostics
        R-hat, bulk / tail ESS and divergences of delta
        (:func:`isbetter.inference.sampling.diagnose`).
    seconds : float
        Wall time of the sampling (compilation included).
    seed : int
        The sampler's seed.
    idata : arviz.InferenceData
        The full trace, for power users.
    """

    delta: np.ndarray = field(repr=False)
    ess: float
    diagnostics: MCMCDiagnostics
    seconds: float
    seed: int
    idata: Any = field(repr=False, compare=False)

    @property
    def rhat(self) -> float:
        """R-hat of delta (NaN with a single chain)."""
        return self.diagnostics.r_hat_max


def sample_paired_pymc(
    counts: JointCounts,
    measure: Measure,
    *,
    prior: F1Prior | None = None,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    cores: int | None = None,
    backend: str = "auto",
    seed: int | np.random.SeedSequence | None = None,
) -> PyMCF1Fit:
    """Sample the paired model with NUTS; warn on poor convergence.

    Parameters
    ----------
    counts : JointCounts
        Joint outcome counts of one class.
    measure : Measure
        PyTensor-compatible measure (the built-ins are).
    prior : F1Prior, optional
        Hyper-parameters; default uniform.
    draws, tune, chains : int
        Draws and tuning steps per chain, number of chains.
    cores : int, optional
        Chains in parallel (default ``min(chains, 2)``).
    backend : {"auto", "nutpie", "pymc"}, default: "auto"
        See :func:`isbetter.inference.sampling.resolve_backend`.
    seed : int or numpy.random.SeedSequence, optional
        The sampler's seed is generated from ``SeedSequence(seed)``
        (:func:`isbetter.inference.sampling.sampler_seed`); None: fresh entropy.

    Warns
    -----
    ConvergenceWarning
        Poor convergence of delta; increase `tune` / `draws`.
    """
    from isbetter.inference.diagnostics import ess_bulk

    backend = resolve_backend(backend)
    seed_seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    sampler = sampler_seed(seed_seq)
    model = build_paired_model(counts, measure, prior)
    start = time.perf_counter()
    idata = sample(
        model,
        draws=draws,
        tune=tune,
        chains=chains,
        cores=cores,
        seed=sampler,
        backend=backend,
    )
    seconds = time.perf_counter() - start
    diagnostics = diagnose(idata, ("delta",), backend=backend)
    warn_if_poor(diagnostics, "PyMC paired F1 model")
    trace = idata.posterior["delta"].to_numpy()
    return PyMCF1Fit(
        delta=trace.reshape(-1),
        ess=float(ess_bulk(trace[:, :, None])[0]),
        diagnostics=diagnostics,
        seconds=seconds,
        seed=sampler,
        idata=idata,
    )
