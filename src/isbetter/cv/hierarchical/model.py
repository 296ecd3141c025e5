r"""Hierarchical correlated-t model of per-fold scores on many data sets (PyMC).

Answers: *on the next data set of this kind, will system A be better than B by
more than the ROPE, practically equivalent, or worse?* It pools the per-fold
differences of two systems on many data sets, as Corani et al. (2017) [1]_ and
Szymański & Gorman (2020) [3]_ do, and returns the posterior of the difference
on a new data set, :math:`\delta_{next}`.

``import isbetter`` does not import this module's heavy dependencies: PyMC,
PyTensor, ArviZ and nutpie are imported inside the functions that need them.

References
----------
.. [1] G. Corani, A. Benavoli, J. Demšar, F. Mangili, M. Zaffalon (2017).
   Statistical comparison of classifiers through Bayesian hierarchical
   modelling. *Machine Learning* 106(11), 1817-1837.
.. [2] C. Nadeau, Y. Bengio (2003). Inference for the generalization error.
   *Machine Learning* 52, 239-281.
.. [3] P. Szymański, K. Gorman (2020). Is the best better? Bayesian statistical
   model comparison for natural language processing. EMNLP.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any, Literal

import numpy as np

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.provenance import input_settings, make_settings
from isbetter.core.validate import check_choice, check_positive_int, check_rope
from isbetter.cv.hierarchical.compiled_backend import (
    DENSITY_PARAMETERIZATIONS,
    compiled_model,
    load_density,
)
from isbetter.cv.hierarchical.numerics.kernels import NODE_SPACING
from isbetter.cv.hierarchical.numerics.quadrature import draw_deltas
from isbetter.cv.hierarchical.priors import HierarchicalPriors
from isbetter.cv.hierarchical.pymc_backend import PARAMETERIZATIONS, Parameterization, build_model
from isbetter.cv.hierarchical.route import RoutePrediction, predict_parameterization
from isbetter.cv.hierarchical.spec import Prepared, prepare
from isbetter.cv.scores import PairedScores
from isbetter.inference import libs
from isbetter.inference.decisions import probabilities_from_masses
from isbetter.inference.posterior import HierarchicalPosterior
from isbetter.inference.records import MCMCDiagnostics, Observed
from isbetter.inference.sampling import (
    Backend,
    MassMatrix,
    Sampling,
    diagnose,
    resolve_backend,
    sample,
    warn_if_poor,
)
from isbetter.inference.seeds import resolve_seed
from isbetter.inference.summaries import estimate_from_draws
from isbetter.results.comparison import HierarchicalResult

__all__ = [
    "HierarchicalModel",
    "HierarchicalPosterior",
    "HierarchicalResult",
    "hierarchical_test",
]

#: the variables whose convergence is diagnosed (the ones the result reports)
DIAGNOSED = ("delta0", "std0", "nu", "delta")

#: nutpie adapts a low-rank mass matrix up to this many data sets, a diagonal one above: it
#: adapts to the correlation of std0 and nu (the funnel where std0 is small and nu near 1),
#: its cost grows with q, and with many data sets std0 and nu are well identified
#: (bench/bench_hierarchical_scaling.py measures both) ...
LOW_RANK_MAX_DATASETS = 200
#: ... but the centred model of AUTO_INTEGRATED_MAX_DATASETS + 1 to LOW_RANK_MAX_DATASETS
#: data sets (the one "auto" samples there unless the route foresees the funnel) adapts a
#: diagonal one from the draws' variances: nutpie's low-rank adaptation costs ~3.7 times
#: as much per gradient there as a diagonal one (9.6 against 2.6 us at 54 data sets: its
#: own work per step, not the density's) for about the same Monte Carlo error of the
#: probabilities; its default diagonal one (from the draws and their gradients) is
#: cheaper still but mixes worse there. bench/bench_mass_matrix.py measures the three on
#: 72 fits (the eight centred UCI pairs at three seeds, simulated studies of 30-200 data
#: sets): 99.6 CPU s low-rank, 35.1 this one (with DRAW_VARIANCE_TUNE), 26.3 the
#: gradients' diagonal; 4, 5 and 3 fits flagged (this one: none of the 24 UCI fits, 5
#: simulated near FUNNEL_RATIO, where the route's refit with the integrated model
#: catches them); Monte Carlo standard error of the probabilities 0.0024, 0.0025 and
#: 0.0029 on average, at most 0.0092, 0.0103 and 0.0197.
CENTRED_MASS_MATRIX: MassMatrix = "draw_variance"
#: tuning steps per chain of a fit, unless told; DRAW_VARIANCE_TUNE where the mass matrix is
#: adapted from the draws' variances (CENTRED_MASS_MATRIX): with 500 steps 1 of the 48 fits
#: of the eight centred UCI pairs at seeds 1-6 was flagged (tail ESS 377), and 1 of the
#: ten pairs of the README's ranking (tail ESS 211); with 1000 none, for 16% more CPU
#: time (still 1.75 times less than the low-rank mass matrix with 500)
TUNE = 500
DRAW_VARIANCE_TUNE = 1000


# --------------------------------------------------------------------------- fitting
class HierarchicalModel:
    r"""A compiled hierarchical model, reused for every pair with the same number of data sets.

    Compiling the model takes a few seconds; sampling it again with new data
    does not recompile. :func:`hierarchical_test` keeps one of these per
    ``(n_datasets, backend, parameterization)``; build one yourself to control
    its lifetime (e.g. in a ranking of many systems).

    Parameters
    ----------
    n_datasets : int
        Number of data sets of every pair this model will fit.
    backend : {"auto", "nutpie", "pymc"}, default: "auto"
        Sampler: nutpie (compiled with numba, fastest here) when installed,
        otherwise PyMC's own NUTS.
    parameterization : {"auto", "integrated", "centred", "noncentred"}, default: "auto"
        See :func:`build_model`: ``"integrated"`` samples the hyper-parameters
        with every :math:`\delta_i` integrated out and draws the :math:`\delta_i`
        afterwards (no funnel; right with few data sets). ``"auto"``: integrated
        up to :data:`AUTO_INTEGRATED_MAX_DATASETS` data sets; above, each fit starts
        with the centred model unless the data foretell its funnel (:mod:`.route`:
        :math:`\sigma_0` far below the data sets' widths, as for two near-identical
        systems), and a flagged centred fit is refitted with the integrated model.

    Examples
    --------
    >>> model = HierarchicalModel(54)  # doctest: +SKIP
    >>> results = [model.fit(table.paired(a, b), rng=1) for a, b in pairs]  # doctest: +SKIP
    """

    def __init__(
        self,
        n_datasets: int,
        *,
        backend: Backend = "auto",
        parameterization: Parameterization | Literal["auto"] = "auto",
    ) -> None:
        self.n_datasets = check_positive_int(n_datasets, "n_datasets", minimum=2)
        self.backend = resolve_backend(backend)
        self.parameterization = resolve_parameterization(parameterization, self.n_datasets)
        self.mass_matrix = _mass_matrix(self.backend, self.parameterization, self.n_datasets)
        # one PyMC model (and compiled sampler) per likelihood variant, built on demand
        self._models: dict[bool, Any] = {}
        self._compiled: dict[bool, Any] = {}
        # "auto" with many data sets: centred or integrated as .route predicts, a flagged
        # centred fit refitted with the integrated model (see fit)
        self._routed = parameterization == "auto" and self.parameterization == "centred"
        self._sibling: HierarchicalModel | None = None
        self._lock = threading.Lock()

    @property
    def default_tune(self) -> int:
        """Tuning steps per chain unless a fit is told (of ``mass_matrix``: see TUNE)."""
        return DRAW_VARIANCE_TUNE if self.mass_matrix == "draw_variance" else TUNE

    def __repr__(self) -> str:
        return (
            f"HierarchicalModel(n_datasets={self.n_datasets}, backend={self.backend!r}, "
            f"parameterization={self.parameterization!r}, compiled={bool(self._models)})"
        )

    def compile(self, *, bounded: bool = False) -> HierarchicalModel:
        """Compile (or load from the cache) the model now, instead of at the first fit.

        Parameters
        ----------
        bounded : bool, default: False
            The variant with the factor of sigma_i's prior bound (:func:`build_model`),
            which fits keep where it can matter (never with the reference priors). With
            nutpie both variants are the same compiled density (:mod:`.compiled_backend`).
        """
        with self._lock:
            if self._density():
                load_density()
            else:
                self._compile_locked(bounded)
        return self

    def _density(self) -> bool:
        """Whether a fit samples the hand-written density (nutpie; either likelihood)."""
        return self.backend == "nutpie" and self.parameterization in DENSITY_PARAMETERIZATIONS

    def _pymc_model(self, bounded: bool, data: dict[str, Any]) -> tuple[Any, Any]:
        """Return the PyMC model (and nutpie's compiled one) with `data` set."""
        pm = libs.pymc()

        model, compiled = self._compile_locked(bounded)
        # the initial-point function reads the model's data, so set it for both backends
        with model:
            pm.set_data(data)
        if compiled is not None:
            # data the likelihood variant does not use (std_hi) are not in the compiled model
            compiled = compiled.with_data(
                **{k: v for k, v in data.items() if k in compiled.shared_data}
            )
        return model, compiled

    def _compile_locked(self, bounded: bool) -> tuple[Any, Any]:
        if bounded not in self._models:
            self._models[bounded] = build_model(
                self.n_datasets,
                parameterization=self.parameterization,  # type: ignore[arg-type]
                bounded=bounded,
            )
        if self.backend == "nutpie" and bounded not in self._compiled:
            nutpie = libs.nutpie()

            self._compiled[bounded] = nutpie.compile_pymc_model(
                self._models[bounded], backend="numba", freeze_model=False
            )
        return self._models[bounded], self._compiled.get(bounded)

    def fit(
        self,
        scores: PairedScores,
        *,
        rope: float = 0.0,
        rho: float | None = None,
        priors: HierarchicalPriors | None = None,
        draws: int = 2000,
        tune: int | None = None,
        chains: int = 4,
        cores: int | None = None,
        rng: int | np.random.Generator | None = None,
        sampling: Sampling | None = None,
    ) -> HierarchicalResult:
        """Fit the model to one pair of systems; see :func:`hierarchical_test`.

        `sampling` (:class:`~isbetter.inference.sampling.Sampling`), when given, sets
        `tune`, `chains` and `cores` instead, as for :func:`~isbetter.compare_f1`.
        """
        if sampling is not None:
            tune = sampling.tune if sampling.tune is not None else tune
            chains, cores = sampling.chains, sampling.cores
        rope = check_rope(rope)
        if priors is None:
            priors = HierarchicalPriors()
        elif not isinstance(priors, HierarchicalPriors):
            raise InputTypeError(
                f"`priors` must be HierarchicalPriors or None, got {type(priors).__name__}."
            )
        draws = check_positive_int(draws, "draws", minimum=1)
        if tune is not None:
            tune = check_positive_int(tune, "tune", minimum=0)
        chains = check_positive_int(chains, "chains", minimum=1)
        if cores is not None:
            cores = check_positive_int(cores, "cores", minimum=1)
        prepared = prepare(scores, rope, rho, priors)
        if scores.n_datasets != self.n_datasets:
            raise InputError(
                f"This HierarchicalModel was built for {self.n_datasets} data sets, the scores "
                f"have {scores.n_datasets}; build one with HierarchicalModel("
                f"{scores.n_datasets}) (hierarchical_test does that for you)."
            )
        seed = resolve_seed(rng)
        data = prepared.model_data(priors)
        run = {"draws": draws, "tune": tune, "chains": chains, "cores": cores, "seed": seed}
        fitted, refit_of, route = self, None, None
        if self._routed:
            # "auto" with many data sets: where the centred model would meet its funnel
            # (std0 far below the data sets' widths, e.g. two near-identical systems),
            # start with the integrated one (.route)
            route = predict_parameterization(prepared, data)
            if route.parameterization == "integrated":
                fitted = self._integrated_sibling()
        run["tune"] = fitted.default_tune if tune is None else tune
        idata = fitted._sample(data, prepared.bounded, run, prepared.scale)
        diagnostics = diagnose(idata, DIAGNOSED, backend=self.backend)
        if fitted is self and self._routed and not diagnostics.converged:
            # the safety net: a flagged centred fit is replaced by the integrated model's
            refit_of = {"parameterization": self.parameterization, **diagnostics.to_dict()}
            fitted = self._integrated_sibling()
            run["tune"] = fitted.default_tune if tune is None else tune
            idata = fitted._sample(data, prepared.bounded, run, prepared.scale)
            diagnostics = diagnose(idata, DIAGNOSED, backend=self.backend)
        warn_if_poor(diagnostics, "hierarchical model")
        settings = fitted._settings(scores, prepared, rope, rho, priors, run, refit_of, route)
        return fitted._result(scores, idata, diagnostics, prepared, rope, settings)

    def _sample(
        self, data: dict[str, Any], bounded: bool, sampling: dict[str, Any], scale: float
    ) -> Any:
        """Sample this parameterization with `data`; the integrated one gets its delta_i.

        The draws are returned in score units (the model is fitted on differences /
        `scale`), so the diagnostics are those of the draws the result holds.
        """
        options: dict[str, Any] = {
            "backend": self.backend,
            "mass_matrix": self.mass_matrix,
            "target_accept": TARGET_ACCEPT[self.parameterization],
        }
        if self._density():
            # the hand-written density, loaded from isbetter's cache, any q: a model of its
            # own for this fit, so fits in threads sample side by side
            compiled = compiled_model(self.parameterization, data, bounded=bounded)
            idata = sample(None, **sampling, compiled=compiled, **options)
        else:
            with self._lock:  # the PyMC model's data are set for this fit
                model, compiled = self._pymc_model(bounded, data)
                idata = sample(model, **sampling, compiled=compiled, **options)
        if self.parameterization == "integrated":
            _attach_deltas(idata, data, bounded, sampling["seed"])
        post = idata.posterior
        for name in ("delta0", "std0", "delta"):
            post[name] = post[name] * scale
        return idata

    def _integrated_sibling(self) -> HierarchicalModel:
        with self._lock:
            if self._sibling is None:
                self._sibling = HierarchicalModel(
                    self.n_datasets,
                    backend=self.backend,  # type: ignore[arg-type]
                    parameterization="integrated",
                )
            return self._sibling

    def _settings(
        self,
        scores: PairedScores,
        prepared: Prepared,
        rope: float,
        rho: float | None,
        priors: HierarchicalPriors,
        sampling: dict[str, Any],
        refit_of: dict[str, Any] | None,
        route: RoutePrediction | None,
    ) -> dict[str, Any]:
        """Return the result's settings: the fit's inputs, sampler and how it was chosen."""
        scale = prepared.scale
        rho_setting = None if rho is None else float(rho)
        return make_settings(
            "hierarchical",
            sampling["seed"],
            rope=rope,
            rho=rho_setting,
            rho_used=sorted({float(r) for r in prepared.rho}),
            priors=priors.to_dict(),
            draws=sampling["draws"],
            tune=sampling["tune"],
            chains=sampling["chains"],
            backend=self.backend,
            parameterization=self.parameterization,
            parameterization_choice=None if route is None else route.to_dict(),
            refit_of=refit_of,
            target_accept=TARGET_ACCEPT[self.parameterization],
            quadrature_node_spacing=(
                NODE_SPACING if self.parameterization == "integrated" else None
            ),
            scale=scale,
            sigma_bound_term="kept" if prepared.bounded else "dropped",
            mass_matrix=self.mass_matrix,
            zero_variance_datasets=list(prepared.zero_variance),
            zero_variance_sd=prepared.zero_variance_sd,
            metric=scores.metric,
            n_datasets=scores.n_datasets,
            **input_settings(scores),
        )

    def _result(
        self,
        scores: PairedScores,
        idata: Any,
        diagnostics: MCMCDiagnostics,
        prepared: Prepared,
        rope: float,
        settings: dict[str, Any],
    ) -> HierarchicalResult:
        post = idata.posterior.assign_coords(dataset=list(scores.datasets))
        idata.posterior = post
        delta0 = post["delta0"].to_numpy().reshape(-1)
        std0 = post["std0"].to_numpy().reshape(-1)
        nu = post["nu"].to_numpy().reshape(-1)
        delta = post["delta"].to_numpy().reshape(-1, scores.n_datasets)
        identical = not any(np.any(d) for d in scores.differences)  # symmetric posterior
        posterior = HierarchicalPosterior(delta0=delta0, std0=std0, nu=nu, symmetric=identical)
        masses = posterior.region_masses(rope)
        return HierarchicalResult.from_posterior(  # type: ignore[return-value]
            posterior,
            system_a=scores.system_a,
            system_b=scores.system_b,
            rope=rope,
            method="hierarchical",
            settings=settings,
            metric=scores.metric,
            higher_is_better=scores.higher_is_better,
            predictive=probabilities_from_masses(masses, "mean"),
            estimate=estimate_from_draws(delta0, rope=rope, ess=_ess(idata, "delta0")),
            observed=Observed(
                n=int(sum(d.size for d in scores.differences)),
                score_a=float(np.mean(scores.means_a)),
                score_b=float(np.mean(scores.means_b)),
                difference=float(np.mean(scores.mean_differences())),
            ),
            diagnostics=diagnostics,
            datasets=tuple(scores.datasets),
            delta=delta,
            observed_means=scores.mean_differences(),
            delta0=delta0,
            std0=std0,
            nu=nu,
            idata=idata,
        )


def _attach_deltas(idata: Any, data: dict[str, Any], bounded: bool, seed: int) -> None:
    """Draw every delta_i from its conditional given each posterior draw (integrated model)."""
    post = idata.posterior
    delta0, std0, nu = (post[v].to_numpy() for v in ("delta0", "std0", "nu"))
    # a stream of its own, derived from the fit's seed (the sampler uses the seed itself)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    keys = ("a", "w", "ssr", "xbar", "std_hi")
    delta = draw_deltas(delta0, std0, nu, tuple(data[k] for k in keys), rng, bounded=bounded)
    post["delta"] = (("chain", "draw", "dataset"), delta.reshape(*delta0.shape, -1))


def _ess(idata: Any, name: str) -> float:
    from isbetter.inference import diagnostics as mcmc

    x = idata.posterior[name].to_numpy()
    return float(mcmc.ess_bulk(x.reshape(x.shape[0], x.shape[1], 1))[0])


#: NUTS's target acceptance per parameterization: the integrated model's three
#: hyper-parameters are cheap, and 0.9 removed the last divergences at 3-5 data sets
#: (tests/cv/test_hierarchical_reference.py::test_default_fits_do_not_diverge_and_mix)
TARGET_ACCEPT = {"integrated": 0.9, "centred": 0.8, "noncentred": 0.8}

#: "auto" integrates the delta_i out up to this many data sets and above samples them
#: (centred) unless the data foretell the funnel (.route): with few data sets the centred
#: funnel under-shrinks (tests/cv/test_hierarchical_oracle.py);
#: with many, each delta_i is pinned by its data, and on the 54 UCI data sets the centred
#: model converged in 30 of 30 fits where the integrated one was flagged in 3 of 10 pairs
AUTO_INTEGRATED_MAX_DATASETS = 20


def resolve_parameterization(parameterization: str, n_datasets: int) -> str:
    """Return the parameterization to use: ``"auto"`` by the number of data sets."""
    if parameterization == "auto":
        return "integrated" if n_datasets <= AUTO_INTEGRATED_MAX_DATASETS else "centred"
    return check_choice(parameterization, "parameterization", PARAMETERIZATIONS)


def _mass_matrix(backend: str, parameterization: str, n_datasets: int) -> MassMatrix:
    """Return nutpie's mass matrix adaptation for a fit (see CENTRED_MASS_MATRIX)."""
    if backend != "nutpie":
        return "diagonal"  # PyMC's own
    if n_datasets > LOW_RANK_MAX_DATASETS:
        return "diagonal"
    if parameterization == "centred" and n_datasets > AUTO_INTEGRATED_MAX_DATASETS:
        return CENTRED_MASS_MATRIX
    return "low_rank"


@lru_cache(maxsize=16)
def _shared_model(n_datasets: int, backend: str, parameterization: str) -> HierarchicalModel:
    # holds compiled models only (keyed on their shape and sampler), no user settings
    return HierarchicalModel(n_datasets, backend=backend, parameterization=parameterization)  # type: ignore[arg-type]


def hierarchical_test(
    scores: PairedScores,
    *,
    rope: float = 0.0,
    rho: float | None = None,
    priors: HierarchicalPriors | None = None,
    draws: int = 2000,
    tune: int | None = None,
    chains: int = 4,
    cores: int | None = None,
    backend: Backend = "auto",
    parameterization: Parameterization | Literal["auto"] = "auto",
    rng: int | np.random.Generator | None = None,
) -> HierarchicalResult:
    r"""Compare two systems from per-fold scores on many data sets (Corani et al. 2017).

    Fits the hierarchical correlated-t model to the per-fold differences
    ``d = score(A) - score(B)`` and answers: on a new data set of this kind, is
    A better than B by more than `rope`, practically equivalent, or worse?

    Parameters
    ----------
    scores : PairedScores
        Differences of the two systems on at least 2 data sets (from
        :meth:`ScoreTable.paired <isbetter.ScoreTable.paired>`).
    rope : float, default: 0.0
        Half-width of the region of practical equivalence, in score units.
    rho : float, optional
        Correlation of the scores within a data set; default ``1 / folds`` of
        each data set (Nadeau & Bengio [2]_).
    priors : HierarchicalPriors, optional
        Prior settings; default: the reference implementation's.
    draws, chains : int, default: 2000, 4
        Posterior draws per chain, number of chains (4 x 2000 = 8000 draws, as in
        the reference results). On the ten pairs of the five UCI classifiers (seeds
        1 and 2) these give a bulk ESS of at least 3970 for delta0 and 1500 for nu,
        no divergences and no refit.
    tune : int, optional
        Tuning steps per chain; default 500, and 1000 for the centred model of 21 to
        200 data sets (its mass matrix is adapted from the draws' variances alone,
        :data:`CENTRED_MASS_MATRIX`). A result records the number used.
    cores : int, optional
        Chains run in parallel on this many cores (default: ``min(chains, 2)``).
    backend : {"auto", "nutpie", "pymc"}, default: "auto"
        nutpie when installed (about 1 s per further fit of the same shape),
        else PyMC's NUTS.
    parameterization : {"auto", "integrated", "centred", "noncentred"}, default: "auto"
        How the per-data-set means are sampled (see :func:`build_model`):
        ``"integrated"`` integrates them out by quadrature and draws them
        afterwards from their conditionals; it agrees with an independent
        quadrature of the posterior where ``"centred"`` under-shrinks with few
        data sets (``tests/cv/test_hierarchical_oracle.py``). ``"auto"``: see
        :class:`HierarchicalModel`; ``settings["parameterization_choice"]``
        records what the choice was made from, ``settings["refit_of"]`` a
        flagged centred fit that was replaced.
    rng : int, numpy.random.Generator or None
        Seed; it is recorded in ``result.settings["seed"]``.

    Returns
    -------
    HierarchicalResult
        ``p_a_better, p_rope, p_b_better`` by argmax counting (the published
        convention), ``predictive`` probabilities, draws of ``delta0, std0, nu``
        and of every data set's ``delta`` in score units, ``diagnostics``,
        ``settings`` and ``idata``.

    Raises
    ------
    InputError
        Fewer than 2 data sets, a single fold (rho = 1), a bad `rope`, `rho` or
        sampler setting.

    Warns
    -----
    ConvergenceWarning
        R-hat above 1.01, fewer than 100 effective draws per chain, or divergences.

    See Also
    --------
    HierarchicalModel : reuse the compiled model for many pairs.

    Notes
    -----
    For data set :math:`i` with :math:`n` differences :math:`x_i`,

    .. math::

        x_i &\sim MVN(\delta_i 1, \sigma_i^2 M), \quad M = (1-\rho) I + \rho 11^T \\
        \delta_i &\sim t_\nu(\delta_0, \sigma_0), \quad \sigma_i \sim U(0, \bar\sigma)

    with the priors of :class:`~isbetter.cv.hierarchical.priors.HierarchicalPriors`. The
    differences and the ROPE are divided by the mean per-data-set standard
    deviation before fitting; results are reported in score units. The
    likelihood uses the sufficient statistics ``(n, mean, within sum of
    squares)`` of each data set, so it costs O(1) per data set, and
    :math:`\sigma_i` is integrated out in closed form
    (the marginal likelihood of :mod:`.spec`).

    A data set whose differences are all equal (zero variance) would make the
    posterior improper. As in the reference code, which replaces such scores by
    U(-rope, rope) noise, it is given the variance of that noise, ``rope**2 / 3``
    (keeping its observed mean); with ``rope = 0``, a hundredth of the mean
    standard deviation of the other data sets. That value is immaterial: as it goes
    to 0 the posterior tends to that of :math:`\delta_i` equal to the observed
    mean, and departs from it as its square (from 0.1% to 3% of the mean sd the
    probabilities move by less than 1e-4). ``settings`` records which data sets
    were treated so and the standard deviation used.

    Each posterior draw :math:`s` gives :math:`\delta_{next} \sim
    t_{\nu_s}(\delta_{0,s}, \sigma_{0,s})` and its masses in the three regions.
    The argmax-counted probabilities are the fraction of draws in which a region
    holds the largest mass; the predictive probabilities are the mean masses.

    References
    ----------
    .. [1] Corani, Benavoli, Demšar, Mangili, Zaffalon (2017), *Machine Learning* 106.
    .. [2] Nadeau, Bengio (2003), *Machine Learning* 52.

    Examples
    --------
    >>> import numpy as np
    >>> from isbetter import from_arrays
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(0.80, 0.02, size=(8, 10))
    >>> y = x - 0.03 + rng.normal(0, 0.01, size=(8, 10))
    >>> scores = from_arrays(x, y, names=("new", "old"), runs=1).paired("new", "old")
    >>> res = hierarchical_test(scores, rope=0.01, rng=1)  # doctest: +SKIP
    >>> res.p_a_better > 0.9  # doctest: +SKIP
    True
    """
    backend_used = resolve_backend(backend)
    if not isinstance(scores, PairedScores):
        raise InputTypeError(
            "`scores` must be PairedScores, e.g. `read_scores(...).paired('A', 'B')`, got "
            f"{type(scores).__name__}."
        )
    if scores.n_datasets < 2:
        prepare(scores, check_rope(rope), rho, priors or HierarchicalPriors())  # raises
    resolve_parameterization(parameterization, scores.n_datasets)  # raises if unknown
    # "auto" stays "auto": each fit chooses its parameterization (HierarchicalModel.fit)
    model = _shared_model(scores.n_datasets, backend_used, parameterization)
    return model.fit(
        scores,
        rope=rope,
        rho=rho,
        priors=priors,
        draws=draws,
        tune=tune,
        chains=chains,
        cores=cores,
        rng=rng,
    )
