"""Zhang et al.'s (ICDM 2015) hierarchical model of two confusion matrices, in PyMC.

For each classifier s in {A, B} and true class j of M classes::

    mu ~ Dirichlet(1_M)                  n ~ Multinomial(N, mu)   (shared: same gold)
    eta_s ~ Beta(1, 1)                   overall tendency to predict correctly
    w_s,jk = eta_s if k == j else (1 - eta_s) / (M - 1)
    theta_s,j ~ Dirichlet(concentration * w_s,j)
    c_s,j ~ Multinomial(n_j, theta_s,j)  row j of s's confusion matrix

The rows of a confusion matrix share strength through eta_s. (With a prior mass
of 1 per row, eta_s is the share of that mass on the diagonal; the data inform it
mostly through which cells are empty, so it need not be near the accuracy.) From a draw of
(mu, theta_s) follow each class's one-vs-rest rates ``tp_j = mu_j theta_s,jj``,
``fn_j = mu_j - tp_j``, ``fp_j = sum_i mu_i theta_s,ij - tp_j`` and so any measure
per class (``psi_s,j``), its macro average (mean over classes) and its micro
average (the measure of the pooled rates; micro-F1 is the accuracy
``sum_j mu_j theta_s,jj``). The differences ``delta_class``, ``delta_macro`` and
``delta_micro`` are positive when A is better. A and B are independent given mu:
the model is **unpaired** (the joint outcomes of the two systems on a document
are not used), unlike the flat-cell model of :mod:`isbetter.f1.multiclass`.

**Prior mass.** The weights w_s,j sum to 1, so each row's Dirichlet has total mass
`concentration` (default 1, as on the ICDM slides): for 20 classes the prior adds
one pseudo-document per row, never swamping the data.

**How it is sampled.** Written out, the model has M(M - 1) free simplex
coordinates per classifier whose Dirichlet concentrations are tiny
((1 - eta) / (M - 1), e.g. 0.01): NUTS then meets exponential tails in the
unconstrained space, and compiling the Dirichlet and multinomial densities with
numba took over a minute. The sampler therefore integrates theta out: given eta_s,
the rows are Dirichlet-multinomial, ``p(c_s | eta_s) = prod_j B(a_j + c_j) / B(a_j)``
with ``a_j = concentration * w_s,j`` (the row sums of ``a_j`` do not depend on eta, so
only ``sum_jk [lgamma(a_jk + c_jk) - lgamma(a_jk)]`` remains). NUTS samples
``eta = (eta_A, eta_B)`` from this two-parameter model (:func:`build_icdm_model`)
through :func:`isbetter.inference.sampling.sample`; then, for every draw of eta,
``theta_s,j | eta_s, c ~ Dirichlet(a_j + c_s,j)`` and ``mu | n ~ Dirichlet(1 + n)`` are
drawn exactly (conjugacy; mu is independent of the rest a posteriori). The result
is a draw of the full joint posterior (collapsed sampling). The deltas are added to
the trace (variables ``delta_macro``, ``delta_micro``, ``delta_class`` with dims
``(chain, draw[, true])``) and diagnosed with eta. Prior draws of the deltas (for
the Savage–Dickey Bayes factor) are drawn forward from the prior with numpy.

The likelihood is evaluated on the distinct non-zero counts only (a few dozen
terms instead of 2 M^2), and the compiled model depends on neither M nor the
counts: it is compiled once per process and reused with new data
(:func:`compiled_icdm_model`). Compilation (numba) takes seconds to tens of
seconds; a fit then takes about a second for 20 classes.

References
----------
.. [1] Zhang, Wang, Zhao, Wang (2015). A Bayesian hierarchical model for comparing
   average F1 scores. ICDM.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from isbetter.core.errors import InputError
from isbetter.f1.measures import Measure
from isbetter.inference import libs
from isbetter.inference.records import MCMCDiagnostics
from isbetter.inference.sampling import (
    Sampling,
    diagnose,
    resolve_backend,
    sample,
    warn_if_poor,
)
from isbetter.inference.seeds import sampler_seed

__all__ = [
    "DIAGNOSED",
    "ICDM_TUNE",
    "ICDMFit",
    "build_icdm_model",
    "compiled_icdm_model",
    "icdm_deltas",
    "model_data",
    "sample_icdm",
]

#: the variables whose convergence is diagnosed
DIAGNOSED = ("eta", "delta_macro", "delta_micro", "delta_class")
#: Gamma variates per chunk of the exact conditional draws (memory bound)
_CHUNK_CELLS = 2_000_000

#: NUTS tuning steps per chain, unless the Sampling says otherwise
ICDM_TUNE = 1000


def _check_confusions(conf_a: Any, conf_b: Any) -> tuple[np.ndarray, np.ndarray]:
    ca = np.asarray(conf_a, dtype=np.int64)
    cb = np.asarray(conf_b, dtype=np.int64)
    m = ca.shape[0] if ca.ndim == 2 else 0
    if ca.shape != (m, m) or cb.shape != (m, m) or m < 2:
        raise InputError(
            f"`conf_a` and `conf_b` must be square confusion matrices of the same size (at "
            f"least 2 classes), got shapes {ca.shape} and {cb.shape}."
        )
    if np.any(ca < 0) or np.any(cb < 0) or not np.array_equal(ca.sum(1), cb.sum(1)):
        raise InputError(
            "`conf_a` and `conf_b` must be non-negative counts with the same row sums (the "
            "gold classes of the same test documents)."
        )
    return ca, cb


def model_data(conf_a: np.ndarray, conf_b: np.ndarray, concentration: float) -> dict[str, Any]:
    """Return the model's data: the distinct non-zero cell counts and how often each occurs.

    The collapsed likelihood is a sum over cells of ``lgamma(a + c) - lgamma(a)``, with
    ``a`` the same for all diagonal (off-diagonal) cells of one system and 0 for
    empty cells; grouping equal counts turns the M^2 terms per system into a few
    dozen. Entries: ``counts``, ``weights`` (multiplicities), ``system`` (0: A, 1: B),
    ``diagonal`` (1.0 for diagonal cells), ``n_classes`` and ``concentration``.
    """
    m = conf_a.shape[0]
    eye = np.eye(m, dtype=bool)
    parts = []
    for s, conf in enumerate((conf_a, conf_b)):
        for diagonal, cells in ((1.0, conf[eye]), (0.0, conf[~eye])):
            values, weights = np.unique(cells[cells > 0], return_counts=True)
            parts.append((values, weights, np.full(values.size, s), np.full(values.size, diagonal)))
    counts, weights, system, diag = (np.concatenate(x) for x in zip(*parts, strict=True))
    return {
        "counts": counts.astype(float),
        "weights": weights.astype(float),
        "system": system.astype(np.int64),
        "diagonal": diag,
        "n_classes": np.asarray(float(m)),
        "concentration": np.asarray(float(concentration)),
    }


def build_icdm_model(conf_a: Any, conf_b: Any, *, concentration: float = 1.0) -> Any:
    """Build the collapsed ICDM model (theta integrated out) as a :class:`pymc.Model`.

    Pure: no sampling. Free variable ``eta`` (dims ``system`` = ``("a", "b")``); data
    as :func:`model_data`; potential ``loglik``, the Dirichlet-multinomial likelihood
    of the confusion-matrix rows given eta up to a constant (see the module
    docstring). The compiled model depends on neither M nor the counts: one serves
    every fit (:func:`compiled_icdm_model`).

    Parameters
    ----------
    conf_a, conf_b : numpy.ndarray
        Confusion matrices (rows: true class; columns: predicted), same row sums.
    concentration : float, default: 1.0
        Prior mass of each row's Dirichlet.
    """
    pm = libs.pymc()
    import pytensor.tensor as pt

    ca, cb = _check_confusions(conf_a, conf_b)
    data = model_data(ca, cb, concentration)
    with pm.Model(coords={"system": ["a", "b"]}) as model:
        counts = pm.Data("counts", data["counts"])
        weights = pm.Data("weights", data["weights"])
        system = pm.Data("system", data["system"])
        diagonal = pm.Data("diagonal", data["diagonal"])
        m = pm.Data("n_classes", data["n_classes"])
        conc = pm.Data("concentration", data["concentration"])
        eta = pm.Beta("eta", alpha=1.0, beta=1.0, dims="system")
        e = eta[system]
        a = conc * (diagonal * e + (1.0 - diagonal) * (1.0 - e) / (m - 1.0))
        pm.Potential("loglik", (weights * (pt.gammaln(a + counts) - pt.gammaln(a))).sum())
    return model


_CACHE: dict[str, tuple[Any, Any]] = {}
_LOCK = threading.Lock()


def compiled_icdm_model(backend: str) -> tuple[Any, Any]:
    """Return the model and its compiled nutpie sampler (None for the PyMC backend).

    Built and compiled once per process (compiling takes seconds, sampling less);
    the data are set per fit. Not thread-safe by itself: hold :data:`_LOCK` while
    setting data and sampling (as :func:`sample_icdm` does).
    """
    if backend not in _CACHE:
        empty = np.array([[1, 0], [0, 1]])
        model = build_icdm_model(empty, empty)
        compiled = None
        if backend == "nutpie":
            nutpie = libs.nutpie()

            compiled = nutpie.compile_pymc_model(model, backend="numba", freeze_model=False)
        _CACHE[backend] = (model, compiled)
    return _CACHE[backend]


def _dirichlet_rows(shape: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Dirichlet draws along the last axis of `shape` (rows of all-underflowed Gammas -> shape)."""
    g = rng.standard_gamma(shape)
    total = g.sum(axis=-1, keepdims=True)
    empty = total == 0  # every Gamma variate underflowed (tiny prior concentrations)
    if np.any(empty):
        g = np.where(empty, shape, g)
        total = g.sum(axis=-1, keepdims=True)
    return g / total


def _measures(mu: np.ndarray, theta: np.ndarray, measure: Measure) -> tuple[np.ndarray, ...]:
    """Per-class, macro and micro `measure` of rates; mu (s, M), theta (s, 2, M, M)."""
    joint = mu[:, None, :, None] * theta  # P(true j, predicted k), per system
    tp = np.diagonal(joint, axis1=-2, axis2=-1)
    fn = mu[:, None, :] - tp
    fp = joint.sum(axis=-2) - tp
    tn = 1.0 - tp - fn - fp
    per_class = measure(tp, fp, fn, tn)  # (s, 2, M)
    micro = measure(tp.sum(-1), fp.sum(-1), fn.sum(-1), tn.sum(-1))  # (s, 2)
    return per_class, per_class.mean(axis=-1), micro


def icdm_deltas(
    eta: np.ndarray,
    conf_a: np.ndarray,
    conf_b: np.ndarray,
    measure: Measure,
    *,
    concentration: float,
    rng: np.random.Generator,
    posterior: bool = True,
) -> dict[str, np.ndarray]:
    """Draws of the deltas given draws of eta, shape (n, 2): exact draws of mu and theta.

    With ``posterior=True`` theta and mu are drawn from their conditional posteriors
    given eta and the counts; with ``posterior=False`` from the prior (the counts
    only fix M).

    Returns
    -------
    dict
        ``delta_class`` (n, M), ``delta_macro`` (n,), ``delta_micro`` (n,).
    """
    m = conf_a.shape[0]
    counts = np.stack([conf_a, conf_b]).astype(float) if posterior else np.zeros((2, m, m))
    n_j = conf_a.sum(axis=1) if posterior else np.zeros(m)
    eye = np.eye(m)
    n = eta.shape[0]
    out = {"delta_class": np.empty((n, m)), "delta_macro": np.empty(n), "delta_micro": np.empty(n)}
    step = max(1, _CHUNK_CELLS // (2 * m * m))
    for start in range(0, n, step):
        e = eta[start : start + step, :, None, None]  # (s, 2, 1, 1)
        w = e * eye + (1.0 - e) / (m - 1) * (1.0 - eye)
        theta = _dirichlet_rows(concentration * w + counts, rng)
        mu = _dirichlet_rows(np.broadcast_to(1.0 + n_j, (e.shape[0], m)), rng)
        per_class, macro, micro = _measures(mu, theta, measure)
        sl = slice(start, start + e.shape[0])
        out["delta_class"][sl] = measure.difference(per_class[:, 0], per_class[:, 1])
        out["delta_macro"][sl] = measure.difference(macro[:, 0], macro[:, 1])
        out["delta_micro"][sl] = measure.difference(micro[:, 0], micro[:, 1])
    return out


@dataclass(frozen=True)
class ICDMFit:
    """Posterior and prior draws of the ICDM model's deltas, with MCMC diagnostics.

    Attributes
    ----------
    delta_macro, delta_micro : numpy.ndarray
        Posterior draws (chains concatenated) of the macro / micro difference.
    delta_class : numpy.ndarray
        Shape ``(n_draws, M)``: posterior draws of each class's difference.
    prior_macro, prior_micro, prior_class : numpy.ndarray
        Prior draws of the same (not symmetrised).
    ess_macro, ess_micro : float
        Bulk effective sample sizes of the two averages.
    ess_class : numpy.ndarray
        Bulk ESS of each class's difference.
    diagnostics : MCMCDiagnostics
        Over :data:`DIAGNOSED`.
    seconds : float
        Wall time of the fit (compilation, sampling and the conditional draws).
    idata : arviz.InferenceData
        The trace: ``eta`` and the deltas.
    """

    delta_macro: np.ndarray = field(repr=False)
    delta_micro: np.ndarray = field(repr=False)
    delta_class: np.ndarray = field(repr=False)
    prior_macro: np.ndarray = field(repr=False)
    prior_micro: np.ndarray = field(repr=False)
    prior_class: np.ndarray = field(repr=False)
    ess_macro: float
    ess_micro: float
    ess_class: np.ndarray = field(repr=False)
    diagnostics: MCMCDiagnostics
    seconds: float
    idata: Any = field(repr=False, compare=False)


def _add_deltas(idata: Any, deltas: dict[str, np.ndarray], chains: int) -> Any:
    """Put the deltas into the trace, dims (chain, draw[, true])."""
    post = idata.posterior
    draws = post.sizes["draw"]
    new = {}
    for name, values in deltas.items():
        shaped = values.reshape(chains, draws, *values.shape[1:])
        dims = ("chain", "draw", "true")[: shaped.ndim]
        new[name] = (dims, shaped)
    idata.posterior = post.assign(new)
    return idata


def _sample_eta(
    data: dict[str, Any],
    draws: int,
    sampling: Sampling,
    backend: str,
    nuts_ss: np.random.SeedSequence,
) -> Any:
    """NUTS draws of eta given the model `data` (the compiled model is shared: one at a time)."""
    with _LOCK:
        model, compiled = compiled_icdm_model(backend)
        pm = libs.pymc()

        with model:
            pm.set_data(data)
        if compiled is not None:
            compiled = compiled.with_data(**data)
        return sample(
            model,
            draws=draws,
            tune=sampling.tune_or(ICDM_TUNE),
            chains=sampling.chains,
            cores=sampling.cores,
            seed=sampler_seed(nuts_ss),
            backend=backend,
            compiled=compiled,
        )


def sample_icdm(
    conf_a: Any,
    conf_b: Any,
    measure: Measure,
    *,
    concentration: float = 1.0,
    draws: int = 2000,
    sampling: Sampling | None = None,
    backend: str = "auto",
    seed_seq: np.random.SeedSequence,
) -> ICDMFit:
    """Sample the ICDM model; return draws of the deltas per class, macro and micro.

    Parameters
    ----------
    conf_a, conf_b : numpy.ndarray
        Confusion matrices of A and B (rows: true class), same row sums.
    measure : Measure
        Per-class measure (any numpy function of the cells).
    concentration : float, default: 1.0
        Prior mass of each row's Dirichlet.
    draws : int, default: 2000
        NUTS draws per chain.
    sampling : Sampling, optional
        Tuning steps per chain (default :data:`ICDM_TUNE`), chains (default 4) and cores.
    backend : {"auto", "nutpie", "pymc"}, default: "auto"
        See :func:`isbetter.inference.sampling.resolve_backend`.
    seed_seq : numpy.random.SeedSequence
        Its first child seeds NUTS, its second the exact conditional and prior draws.

    Warns
    -----
    ConvergenceWarning
        Poor convergence of eta or the deltas (:func:`~isbetter.inference.sampling.warn_if_poor`).
    """
    start = time.perf_counter()
    ca, cb = _check_confusions(conf_a, conf_b)
    m = ca.shape[0]
    backend = resolve_backend(backend)
    if not concentration > 0:
        raise InputError(f"`concentration` must be positive, got {concentration!r}.")
    sampling = sampling or Sampling()
    nuts_ss, draws_ss = seed_seq.spawn(2)
    idata = _sample_eta(model_data(ca, cb, concentration), draws, sampling, backend, nuts_ss)
    eta = idata.posterior["eta"].to_numpy().reshape(-1, 2)
    rng = np.random.default_rng(draws_ss)
    post = icdm_deltas(eta, ca, cb, measure, concentration=concentration, rng=rng)
    prior_eta = rng.uniform(size=eta.shape)  # eta ~ Beta(1, 1)
    prior = icdm_deltas(
        prior_eta, ca, cb, measure, concentration=concentration, rng=rng, posterior=False
    )
    idata = _add_deltas(idata, post, sampling.chains)
    diagnostics = diagnose(idata, DIAGNOSED, backend=backend)
    warn_if_poor(diagnostics, "ICDM hierarchical F1 model")
    from isbetter.inference.diagnostics import ess_bulk

    columns = np.column_stack([post["delta_macro"], post["delta_micro"], post["delta_class"]])
    ess = ess_bulk(columns.reshape(sampling.chains, -1, m + 2))  # draws are in chain order
    return ICDMFit(
        delta_macro=post["delta_macro"],
        delta_micro=post["delta_micro"],
        delta_class=post["delta_class"],
        prior_macro=prior["delta_macro"],
        prior_micro=prior["delta_micro"],
        prior_class=prior["delta_class"],
        ess_macro=float(ess[0]),
        ess_micro=float(ess[1]),
        ess_class=ess[2:],
        diagnostics=diagnostics,
        seconds=time.perf_counter() - start,
        idata=idata,
    )
