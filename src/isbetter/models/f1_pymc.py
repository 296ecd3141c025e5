"""The paired F1 model of Zhang et al. (2016) written in PyMC: the extensible path.

The default inference of :func:`isbetter.f1_compare.compare_f1` is the exact
conjugate posterior (:mod:`isbetter.models.f1`). This module writes the *same*
model in PyMC, so it can be extended beyond conjugacy (other priors, hierarchical
structure) and so the exact sampler can be checked against MCMC (a test). PyMC is
imported inside the functions; ``import isbetter`` stays light.

The compact model of the paper (section 3.1.2)::

    mu ~ Beta(beta+, beta-)            n+ ~ Binomial(N, mu)
    theta+ ~ Dirichlet(alpha+)         c+ ~ Multinomial(n+, theta+)
    theta- ~ Dirichlet(alpha-)         c- ~ Multinomial(n-, theta-)
    delta = psi(mu, rho+_A, rho-_A) - psi(mu, rho+_B, rho-_B)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from isbetter._errors import ConvergenceWarning
from isbetter.measures import Measure
from isbetter.models.f1 import F1Prior
from isbetter.predictions import JointCounts

__all__ = [
    "PyMCF1Fit",
    "build_icdm_model",
    "build_paired_model",
    "sample_icdm",
    "sample_paired_pymc",
]


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
    rhat : float
        R-hat of delta.
    seconds : float
        Wall time of ``pm.sample`` (compilation included).
    idata : arviz.InferenceData
        The full trace, for power users.
    """

    delta: np.ndarray = field(repr=False)
    ess: float
    rhat: float
    seconds: float
    idata: Any = field(repr=False, compare=False)


def sample_paired_pymc(
    counts: JointCounts,
    measure: Measure,
    *,
    prior: F1Prior | None = None,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    cores: int = 1,
    rng: np.random.Generator,
) -> PyMCF1Fit:
    """Sample the paired model with PyMC's NUTS; warn on poor convergence.

    The seed of ``pm.sample`` is drawn from `rng`.

    Warns
    -----
    ConvergenceWarning
        R-hat above 1.01 or divergences; increase `tune` / `draws`.
    """
    import time
    import warnings

    import arviz as az
    import pymc as pm

    model = build_paired_model(counts, measure, prior)
    seed = int(rng.integers(0, 2**31 - 1))
    start = time.perf_counter()
    with model:
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            random_seed=seed,
            progressbar=False,
            compute_convergence_checks=False,
        )
    seconds = time.perf_counter() - start
    delta = idata.posterior["delta"].values.reshape(-1)
    summ = az.summary(idata, var_names=["delta"], kind="diagnostics")
    ess, rhat = float(summ["ess_bulk"].iloc[0]), float(summ["r_hat"].iloc[0])
    divergent = int(idata.sample_stats["diverging"].values.sum())
    if rhat > 1.01 or divergent:
        warnings.warn(
            f"PyMC F1 model: R-hat {rhat:.3f}, {divergent} divergences; increase `tune` and "
            "`draws`, or use the exact sampler (the default).",
            ConvergenceWarning,
            stacklevel=2,
        )
    return PyMCF1Fit(delta=delta, ess=ess, rhat=rhat, seconds=seconds, idata=idata)


def build_icdm_model(
    conf_a: np.ndarray,
    conf_b: np.ndarray,
    measure: Measure,
    *,
    concentration: float = 1.0,
) -> Any:
    """Build Zhang et al.'s (ICDM 2015) hierarchical model of two confusion matrices in PyMC.

    For each classifier s in {A, B} and true class j (M classes)::

        mu ~ Dirichlet(1_M)                   n ~ Multinomial(N, mu)     (shared: same gold)
        eta_s ~ Beta(1, 1)                    overall tendency to predict correctly
        w_s,jk = eta_s if k == j else (1 - eta_s) / (M - 1)
        theta_s,j ~ Dirichlet(concentration * w_s,j)
        c_s,j ~ Multinomial(n_j, theta_s,j)   row j of the confusion matrix

    and ``delta`` is the difference of the macro-averaged measure (deterministics
    ``macro_a``, ``macro_b``, ``delta_macro``) and of the micro-averaged one
    (``delta_micro``), positive when A is better. The rows of each confusion matrix
    share strength through eta. The prior mass of each row is `concentration`
    (1, as on the ICDM slides: the weights w sum to 1), so the prior never swamps
    the data even for 20 classes. A and B are modelled independently given mu (the
    model is unpaired: the joint outcomes are not used).

    Parameters
    ----------
    conf_a, conf_b : numpy.ndarray
        Confusion matrices (rows: true class; columns: predicted), same row sums.
    measure : Measure
        Per-class measure (PyTensor-compatible arithmetic, as the built-ins).
    concentration : float, default: 1.0
        Prior mass of each row's Dirichlet.
    """
    import pymc as pm
    import pytensor.tensor as pt

    conf_a = np.asarray(conf_a, dtype=np.int64)
    conf_b = np.asarray(conf_b, dtype=np.int64)
    m = conf_a.shape[0]
    n_j = conf_a.sum(axis=1)
    coords = {"true": np.arange(m), "pred": np.arange(m)}
    eye = np.eye(m)
    with pm.Model(coords=coords) as model:
        mu = pm.Dirichlet("mu", a=np.ones(m), dims="true")
        pm.Multinomial("n", n=int(n_j.sum()), p=mu, observed=n_j, dims="true")
        results = {}
        for name, conf in (("a", conf_a), ("b", conf_b)):
            eta = pm.Beta(f"eta_{name}", alpha=1.0, beta=1.0)
            w = eta * eye + (1 - eta) / (m - 1) * (1 - eye)
            theta = pm.Dirichlet(f"theta_{name}", a=concentration * w, dims=("true", "pred"))
            pm.Multinomial(f"c_{name}", n=n_j, p=theta, observed=conf, dims=("true", "pred"))
            joint = mu[:, None] * theta  # P(true j, predicted k)
            tp = pt.diagonal(joint)
            fn = mu - tp
            fp = joint.sum(axis=0) - tp
            tn = 1 - tp - fn - fp
            macro = pm.Deterministic(f"macro_{name}", pt.mean(measure.func(tp, fp, fn, tn)))
            micro = pm.Deterministic(
                f"micro_{name}", measure.func(tp.sum(), fp.sum(), fn.sum(), tn.sum())
            )
            results[name] = (macro, micro)
        sign = 1.0 if measure.higher_is_better else -1.0
        pm.Deterministic("delta_macro", sign * (results["a"][0] - results["b"][0]))
        pm.Deterministic("delta_micro", sign * (results["a"][1] - results["b"][1]))
    return model


def sample_icdm(
    conf_a: np.ndarray,
    conf_b: np.ndarray,
    measure: Measure,
    *,
    concentration: float = 1.0,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    cores: int = 1,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """Sample :func:`build_icdm_model` with NUTS; return draws of the two deltas and idata.

    Returns
    -------
    dict
        ``delta_macro``, ``delta_micro`` (numpy arrays, chains concatenated),
        ``eta_a``, ``eta_b``, ``rhat`` (max over the deltas), ``idata``.

    Warns
    -----
    ConvergenceWarning
        R-hat above 1.01 or divergences.
    """
    import warnings

    import arviz as az
    import pymc as pm

    model = build_icdm_model(conf_a, conf_b, measure, concentration=concentration)
    with model:
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            random_seed=int(rng.integers(0, 2**31 - 1)),
            progressbar=False,
            compute_convergence_checks=False,
        )
    post = idata.posterior
    summ = az.summary(idata, var_names=["delta_macro", "delta_micro"], kind="diagnostics")
    rhat = float(summ["r_hat"].max())
    divergent = int(idata.sample_stats["diverging"].values.sum())
    if rhat > 1.01 or divergent:
        warnings.warn(
            f"ICDM hierarchical F1 model: R-hat {rhat:.3f}, {divergent} divergences; increase "
            "`tune` and `draws`.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return {
        "delta_macro": post["delta_macro"].values.reshape(-1),
        "delta_micro": post["delta_micro"].values.reshape(-1),
        "eta_a": post["eta_a"].values.reshape(-1),
        "eta_b": post["eta_b"].values.reshape(-1),
        "rhat": rhat,
        "idata": idata,
    }
