"""Sample PyMC models and diagnose the draws: one module, one rule set.

Every model of isbetter that needs MCMC (the hierarchical correlated-t model,
the paired F1 model written in PyMC, the ICDM 2015 hierarchical F1 model) is
sampled here: with nutpie (compiled with numba) when it is installed, PyMC's
own NUTS otherwise. The draws are diagnosed with one rule set — rank-normalised
split R-hat at most 1.01, bulk and tail ESS at least 100 per chain, no
divergences (Vehtari et al. 2021) — into an
:class:`~isbetter.inference.records.MCMCDiagnostics`, and poor convergence raises
:class:`~isbetter.ConvergenceWarning`.

Seeds: the sampler's seed is an integer; where it is derived from another seed
it is generated from a :class:`numpy.random.SeedSequence`
(:func:`~isbetter.inference.seeds.sampler_seed`),
never drawn from a shared generator.
"""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from isbetter.core.errors import ConvergenceWarning, InputError, outside_stacklevel
from isbetter.core.validate import check_choice, check_positive_int, counted
from isbetter.inference import libs
from isbetter.inference.nutpie_trace import trace_to_idata
from isbetter.inference.records import MCMCDiagnostics

__all__ = [
    "CHAIN_CORES",
    "ESS_PER_CHAIN_MIN",
    "STOP",
    "FitStopped",
    "MASS_MATRICES",
    "R_HAT_MAX",
    "Sampling",
    "chain_cores",
    "convergence_recorded_only",
    "diagnose",
    "poor_convergence",
    "resolve_backend",
    "sample",
    "warn_if_poor",
]

Backend = Literal["auto", "nutpie", "pymc"]
BACKENDS = ("auto", "nutpie", "pymc")
MassMatrix = Literal["diagonal", "low_rank", "draw_variance"]
MASS_MATRICES = ("diagonal", "low_rank", "draw_variance")
#: convergence thresholds (Vehtari, Gelman, Simpson, Carpenter, Bürkner 2021, "Rank-
#: normalization, folding, and localization"): R-hat <= 1.01 and 100 effective draws per chain
R_HAT_MAX = 1.01
ESS_PER_CHAIN_MIN = 100
#: a fit runs its chains in parallel on at most this many cores unless told (`cores`)
CHAIN_CORES = 2
#: set to an Event by whoever runs fits in threads: the nutpie samplers of this context
#: stop (FitStopped) within STOP_POLL_SECONDS of its being set
STOP: ContextVar[threading.Event | None] = ContextVar("isbetter_stop", default=None)
STOP_POLL_SECONDS = 0.1


_QUIET: ContextVar[bool] = ContextVar("isbetter_convergence_recorded_only", default=False)


def chain_cores(chains: int, cores: int | None) -> int:
    """Return the cores a fit's `chains` run on: `cores`, else at most CHAIN_CORES."""
    return cores if cores is not None else min(chains, CHAIN_CORES)


class FitStopped(Exception):
    """A fit run in a thread was stopped through :data:`STOP` (its run was cancelled)."""


@dataclass(frozen=True)
class Sampling:
    """How an MCMC fit runs: tuning steps and chains, and the cores they run on.

    One settings object for every model sampled by NUTS: the hierarchical model of
    :func:`~isbetter.compare_f1` (``model="hierarchical"``) and the hierarchical
    correlated-t model of per-fold scores
    (:meth:`HierarchicalModel.fit <isbetter.cv.hierarchical.model.HierarchicalModel.fit>`).
    The number of draws is not here: it is each function's own `draws`, which the
    exact models (no MCMC) take too, and which each function counts its own way.
    A result records these settings under the keys ``tune`` and ``chains``.

    Attributes
    ----------
    tune : int, optional
        Tuning steps per chain; default: the model's own (1000 for the F1 model; 500 for
        the model of per-fold scores, 1000 for its centred model of 21 to 200 data sets).
    chains : int, default: 4
        Number of chains.
    cores : int, optional
        Chains run in parallel on this many cores (default ``min(chains, 2)``).

    Examples
    --------
    >>> Sampling(tune=2000, chains=2)
    Sampling(tune=2000, chains=2, cores=None)
    >>> Sampling(chains=0)
    Traceback (most recent call last):
    ...
    isbetter.core.errors.InputError: `chains` must be an integer >= 1, got 0.
    """

    tune: int | None = None
    chains: int = 4
    cores: int | None = None

    def __post_init__(self) -> None:
        if self.tune is not None:
            object.__setattr__(self, "tune", check_positive_int(self.tune, "tune", minimum=0))
        object.__setattr__(self, "chains", check_positive_int(self.chains, "chains"))
        if self.cores is not None:
            object.__setattr__(self, "cores", check_positive_int(self.cores, "cores"))

    def tune_or(self, default: int) -> int:
        """Return the tuning steps per chain: :attr:`tune`, or the model's `default`."""
        return default if self.tune is None else self.tune


def resolve_backend(backend: str) -> str:
    """Return ``"nutpie"`` or ``"pymc"`` for `backend` (``"auto"``: nutpie when installed)."""
    backend = check_choice(backend, "backend", BACKENDS)
    if backend == "pymc":
        return backend
    try:
        libs.nutpie()
    except ImportError as exc:
        if backend == "nutpie":
            raise InputError(
                "`backend='nutpie'` needs nutpie (`pip install nutpie`); or use backend='pymc'."
            ) from exc
        return "pymc"
    return "nutpie"


def sample(
    model: Any,
    *,
    draws: int,
    tune: int,
    chains: int,
    cores: int | None,
    seed: int,
    backend: str,
    compiled: Any = None,
    mass_matrix: MassMatrix = "diagonal",
    target_accept: float = 0.8,
    max_depth: int | None = None,
) -> Any:
    """Sample `model` and return its :class:`arviz.InferenceData`.

    Parameters
    ----------
    model : pymc.Model
        The model (its data already set).
    draws, tune, chains : int
        Draws and tuning steps per chain, number of chains.
    cores : int or None
        Chains run in parallel on this many cores (default ``min(chains, 2)``).
    seed : int
        The sampler's seed.
    backend : {"nutpie", "pymc"}
        From :func:`resolve_backend`.
    compiled : nutpie compiled model, optional
        A compiled model to reuse (nutpie only); compiled from `model` otherwise.
    mass_matrix : {"diagonal", "low_rank", "draw_variance"}, default: "diagonal"
        nutpie's mass matrix adaptation: diagonal from the draws and their gradients
        (nutpie's default), its low-rank modified one, or diagonal from the draws'
        variances alone (as Stan's). PyMC adapts its own diagonal one.
    target_accept : float, default: 0.8
        The step size adapts to this mean acceptance probability (both backends).
    max_depth : int, optional
        NUTS's largest tree depth: at most ``2 ** max_depth`` leapfrog steps per draw
        (nutpie's ``maxdepth``, PyMC's ``max_treedepth``); default: the sampler's own (10).
    """
    cores = chain_cores(chains, cores)
    if backend == "nutpie":
        run = {"draws": draws, "tune": tune, "chains": chains, "cores": cores, "seed": seed}
        idata = _sample_nutpie(
            model,
            compiled,
            run,
            mass_matrix=mass_matrix,
            target_accept=target_accept,
            max_depth=max_depth,
        )
    else:
        pm = libs.pymc()

        depth = {} if max_depth is None else {"max_treedepth": max_depth}
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            random_seed=seed,
            target_accept=target_accept,
            progressbar=False,
            compute_convergence_checks=False,
            model=model,
            **depth,
        )
    _check_complete(idata, draws, chains)
    return idata


def _sample_nutpie(
    model: Any,
    compiled: Any,
    run: dict[str, Any],
    *,
    mass_matrix: MassMatrix,
    target_accept: float,
    max_depth: int | None,
) -> Any:
    """Sample with nutpie (:func:`sample`'s settings; `run`: draws, tune, chains, cores, seed)."""
    nutpie = libs.nutpie()

    if compiled is None:
        compiled = nutpie.compile_pymc_model(model, backend="numba")
    # nutpie's diagonal adaptation uses the gradients too unless told (an option of
    # its diagonal settings alone)
    adapt: dict[str, Any] = {}
    if mass_matrix == "draw_variance":
        adapt["use_grad_based_mass_matrix"] = False
    if max_depth is not None:
        adapt["maxdepth"] = max_depth
    sampler = nutpie.sample(
        compiled,
        **run,
        progress_bar=False,
        save_warmup=False,
        low_rank_modified_mass_matrix=mass_matrix == "low_rank",
        target_accept=target_accept,
        blocking=False,
        return_raw_trace=True,  # converted here, without the tuning steps
        **adapt,
    )
    # waited for here, not in nutpie.sample: that hands back the draws so far on Ctrl-C
    try:
        raw = _wait(sampler)
    except BaseException:
        sampler.cancel()
        raise
    idata = trace_to_idata(raw, compiled.coords)
    if idata is None:  # a trace the lean conversion does not handle: nutpie's own
        sampler._return_raw_trace = False
        idata = sampler._extract(raw)
    return idata


def _wait(sampler: Any) -> Any:
    """Wait for nutpie's `sampler`; in a context with a :data:`STOP` event, until it is set.

    Off the main thread no Ctrl-C reaches the sampler: the thread that runs the fits
    stops them through the event (:mod:`isbetter.ranking.execution`).
    """
    stop = STOP.get()
    if stop is None:
        return sampler.wait()
    while True:
        try:
            return sampler.wait(timeout=STOP_POLL_SECONDS)
        except TimeoutError:
            if stop.is_set():
                raise FitStopped("the run stopped: this fit was cancelled") from None


def _check_complete(idata: Any, draws: int, chains: int) -> None:
    """Raise KeyboardInterrupt if the sampler stopped early (it swallowed a Ctrl-C).

    PyMC's sampler catches KeyboardInterrupt and returns the chains cut short: a fit of
    those would be reported as if whole.
    """
    post = getattr(idata, "posterior", None)
    sizes = dict(post.sizes) if post is not None else {}
    if (sizes.get("chain"), sizes.get("draw")) != (chains, draws):
        raise KeyboardInterrupt(
            f"sampling was interrupted: {sizes.get('chain', 0)} chain(s) of "
            f"{sizes.get('draw', 0)} draws, not {chains} of {draws}"
        )


def _nan_extreme(values: np.ndarray, fn: Any) -> float:
    finite = values[~np.isnan(values)]
    return float(fn(finite)) if finite.size else float("nan")


def diagnose(idata: Any, var_names: tuple[str, ...], *, backend: str) -> MCMCDiagnostics:
    """Diagnose the posterior draws of `var_names` (every element of array variables).

    ArviZ's estimators (rank-normalised split R-hat, bulk and tail ESS), vectorised
    over the variables: ArviZ loops over them in Python, which costs seconds for a
    model with a thousand data sets (:mod:`isbetter.inference.diagnostics`).
    """
    from isbetter.inference import diagnostics as mcmc

    post = idata.posterior
    columns = [post[v].to_numpy() for v in var_names]
    x = np.concatenate([c.reshape(c.shape[0], c.shape[1], -1) for c in columns], axis=2)
    chains, draws = x.shape[0], x.shape[1]
    if draws < 4:  # too few draws for any estimate
        r_hat_max = ess_bulk_min = ess_tail_min = float("nan")
    else:
        r_hat, ess_bulk, ess_tail = mcmc.summary(x)
        r_hat_max = _nan_extreme(r_hat, np.max) if chains > 1 else float("nan")
        ess_bulk_min = _nan_extreme(ess_bulk, np.min)
        ess_tail_min = _nan_extreme(ess_tail, np.min)
    divergences = int(idata.sample_stats["diverging"].to_numpy().sum())
    converged = (
        (math.isnan(r_hat_max) or r_hat_max <= R_HAT_MAX)
        and ess_bulk_min >= ESS_PER_CHAIN_MIN * chains  # False when NaN
        and ess_tail_min >= ESS_PER_CHAIN_MIN * chains
        and divergences == 0
    )
    return MCMCDiagnostics(
        r_hat_max=r_hat_max,
        ess_bulk_min=ess_bulk_min,
        ess_tail_min=ess_tail_min,
        divergences=divergences,
        chains=chains,
        draws=draws,
        variables=tuple(var_names),
        backend=backend,
        converged=bool(converged),
    )


@contextmanager
def convergence_recorded_only() -> Iterator[None]:
    """Let :func:`warn_if_poor` say nothing in this block (this thread's context only).

    For a caller that reports each fit's diagnostics itself (a ranking warns once); unlike
    :class:`warnings.catch_warnings`, safe in threads.
    """
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)


def warn_if_poor(diagnostics: MCMCDiagnostics, what: str) -> None:
    """Raise :class:`~isbetter.ConvergenceWarning` when `diagnostics` are poor.

    The warning points at the user's call, however deep in the package the fit was.
    """
    if diagnostics.converged or _QUIET.get():
        return
    warnings.warn(
        f"The {what}'s MCMC did not converge well: {poor_convergence(diagnostics)}. Increase "
        "`tune` and `draws`, or check the data; the result records these diagnostics.",
        ConvergenceWarning,
        stacklevel=outside_stacklevel(),
    )


def poor_convergence(d: MCMCDiagnostics) -> str:
    """Return the numbers of `d` against the thresholds that :func:`diagnose` applies."""
    return (
        f"R-hat max {d.r_hat_max:.3f} (want <= {R_HAT_MAX}), bulk ESS min "
        f"{d.ess_bulk_min:.0f} and tail ESS min {d.ess_tail_min:.0f} (want >= "
        f"{ESS_PER_CHAIN_MIN * d.chains}), {counted(d.divergences, 'divergence')} (want 0)"
    )
