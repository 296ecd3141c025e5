r"""Fit the joint correlated model of K systems: one posterior for every pair and every rank.

Pairwise fits are separate models whose probabilities can contradict each other;
the joint model (``../shared/DESIGN.md`` §4.2) puts all K systems' fold-level scores
on all q data sets into one hierarchical model, so every pairwise quantity, every
order and every rank comes from one posterior. :func:`joint_fit` returns a
:class:`JointFit`: draws of the effects :math:`b_k`, of the covariance of the
deviations of a data set's systems and of :math:`\nu`, in score units, oriented so
that larger is better.
:mod:`isbetter.ranking.joint` reads the pairwise table and the ranks off it.

With nutpie (the default when installed) the model's hand-written log density,
compiled once per machine and kept in isbetter's cache (:mod:`.compiled_backend`),
is sampled; with ``backend="pymc"`` PyMC's own NUTS samples the PyMC model
(:mod:`.pymc_backend`), which states the same density. ``import isbetter`` imports
neither.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from isbetter.core.errors import InputTypeError
from isbetter.core.provenance import make_settings
from isbetter.core.validate import (
    check_choice,
    check_positive_int,
    check_probability,
    check_rope,
)
from isbetter.cv.joint.spec import JointData, JointPriors, contrast_basis, prepare
from isbetter.cv.scores import ScoreTable
from isbetter.inference import libs
from isbetter.inference.records import MCMCDiagnostics
from isbetter.inference.sampling import (
    MASS_MATRICES,
    Backend,
    MassMatrix,
    diagnose,
    resolve_backend,
    sample,
    warn_if_poor,
)
from isbetter.inference.seeds import resolve_seed

__all__ = [
    "JointFit",
    "JointModel",
    "NutsSettings",
    "SamplerDefaults",
    "draw_deviations",
    "draw_effects",
    "draw_spread",
    "grouped_cores",
    "joint_fit",
    "sampler_defaults",
]

#: the variables whose convergence is diagnosed (the ones the results are read from)
DIAGNOSED = ("b", "nu", "pair_scale")
#: with independent components, whose labels and signs the posterior does not identify:
#: the functionals that permuting and flipping the components leave alone
DIAGNOSED_COMPONENTS = ("b", "nu_range", "pair_scale")


@dataclass(frozen=True)
class SamplerDefaults:
    """A form's sampler defaults: draws and tuning steps per chain, NUTS's target acceptance.

    :func:`joint_fit` (so ``rank(method="joint")`` and ``isbetter rank --method joint``)
    uses them where `draws`, `tune` or ``NutsSettings.target_accept`` is not given, by the
    form of the tails (:func:`sampler_defaults`); a fit records the values it used in its
    ``settings``.
    """

    draws: int
    tune: int
    target_accept: float


#: one nu (``tails="shared"``, the former default) and the per-system tails: no
#: divergences in fits of 3, 5, 10 (16 each) and 54 data sets at target acceptance 0.9
SHARED_SAMPLER = SamplerDefaults(draws=2000, tune=1000, target_accept=0.9)
#: independent t components, the default form (issue 29; docs/joint_prior.md, Status):
#: the one place where their draws, tuning steps and target acceptance are set. With the
#: effects integrated out, 0.99 leaves 1-2 divergences in about one small study in seven
#: and meets the rule on all the UCI data at K = 5, seeds 1-3 (stop 44). 2000 tuning steps:
#: the two largest components exchange labels slowly, which longer tuning mends (the
#: UCI ranking at seed 1, R-hat 1.014 after 1000 steps, 1.002 after 2000; stop 45)
COMPONENTS_SAMPLER = SamplerDefaults(draws=2000, tune=2000, target_accept=0.99)


def sampler_defaults(tails: str) -> SamplerDefaults:
    """Return the sampler defaults of the form `tails` (``JointPriors.tails``).

    Examples
    --------
    >>> sampler_defaults("components") == COMPONENTS_SAMPLER
    True
    >>> sampler_defaults("shared").target_accept
    0.9
    """
    return COMPONENTS_SAMPLER if tails == "components" else SHARED_SAMPLER


@dataclass(frozen=True)
class NutsSettings:
    """NUTS's adaptation and trajectory settings of a joint fit (recorded in its settings).

    Attributes
    ----------
    mass_matrix : {"diagonal", "low_rank", "draw_variance"}, default: "diagonal"
        nutpie's mass matrix adaptation (:func:`isbetter.inference.sampling.sample`).
    target_accept : float, optional
        The step size adapts to this mean acceptance probability; default: the form's
        (:func:`sampler_defaults`), recorded in the fit's ``settings["target_accept"]``.
    max_depth : int, optional
        NUTS's largest tree depth (at most ``2 ** max_depth`` leapfrog steps a draw);
        default: the sampler's (10).

    Examples
    --------
    >>> NutsSettings(mass_matrix="low_rank").target_accept is None  # the form's
    True
    >>> NutsSettings(max_depth=0)
    Traceback (most recent call last):
    ...
    isbetter.core.errors.InputError: `max_depth` must be an integer >= 1, got 0.
    """

    mass_matrix: MassMatrix = "diagonal"
    target_accept: float | None = None
    max_depth: int | None = None

    def __post_init__(self) -> None:
        check_choice(self.mass_matrix, "mass_matrix", MASS_MATRICES)
        if self.target_accept is not None:
            accept = check_probability(self.target_accept, "target_accept", open_interval=True)
            object.__setattr__(self, "target_accept", accept)
        if self.max_depth is not None:
            object.__setattr__(self, "max_depth", check_positive_int(self.max_depth, "max_depth"))


@dataclass(frozen=True)
class JointFit:
    r"""Posterior draws of the joint model of K systems, in score units.

    Attributes
    ----------
    data : JointData
        The systems, data sets, metric and direction, the scale and the raw means.
    effects : numpy.ndarray
        ``(chains, draws, K)`` draws of :math:`b_k` (summing to zero; larger is better
        whatever the metric's direction).
    spread : numpy.ndarray
        ``(chains, draws, K, K)`` draws of the covariance :math:`H \Omega H^T` of a data
        set's deviations :math:`u` (up to their common part, which no contrast sees):
        pair (a, b)'s deviation :math:`u_a - u_b` is :math:`t_\nu` with scale
        ``sqrt(V[a, a] + V[b, b] - 2 V[a, b])`` (:meth:`pair_scales`). Drawn for each
        posterior draw from :math:`\Omega`'s conditional inverse-Wishart.
    nu : numpy.ndarray
        ``(chains, draws)`` draws of the degrees of freedom; with per-system tails
        (``JointPriors(tails="per-system")``, the grouped t) ``(chains, draws, K)``, one
        :math:`\nu_k` per system, and then a pair's deviation is a normal given its two
        systems' weights, not a :math:`t` (``docs/joint_prior.md``); with independent
        components (``tails="components"``) ``(chains, draws, K - 1)``, one
        :math:`\nu_j` per column of :attr:`loading`.
    diagnostics : MCMCDiagnostics
        R-hat, ESS and divergences of the effects, nu and the pairs' scales.
    settings : dict
        Seed, priors, sampler settings, versions.
    idata : arviz.InferenceData
        The sampler's output (model units).
    loading : numpy.ndarray or None
        With independent components only: ``(chains, draws, K - 1, K - 1)`` draws of
        :math:`L = Q \operatorname{diag}(s)` in score units, the contrasts of a data
        set's deviations being :math:`L z`, :math:`z_j \sim t_{\nu_j}(0, 1)`
        independent. Pair (a, b)'s deviation is :math:`\sum_j w_j z_j`, :math:`w =
        L^T H^T (e_a - e_b)` (a sum of independent t's; :attr:`spread` is
        :math:`H L L^T H^T`, and :meth:`pair_scales` the norms of the :math:`w`). The
        sampler integrates the effects and each data set's deviations out; they are drawn
        for each posterior draw from their conditionals (:func:`draw_effects`,
        :func:`draw_deviations`) into ``idata.posterior["b"]`` and
        ``idata.posterior["deviations"]``. None otherwise.
    """

    data: JointData
    effects: np.ndarray = field(repr=False)
    spread: np.ndarray = field(repr=False)
    nu: np.ndarray = field(repr=False)
    diagnostics: MCMCDiagnostics
    settings: dict[str, Any] = field(repr=False)
    idata: Any = field(default=None, repr=False, compare=False)
    loading: np.ndarray | None = field(default=None, repr=False)

    @property
    def systems(self) -> tuple[str, ...]:
        """The K systems, in the order of the effects' last axis."""
        return self.data.systems

    def pair_scales(self) -> np.ndarray:
        """Return ``(chains, draws, pairs)``: the scale of each pair's deviation (a < b)."""
        return _pair_scales(self.spread)


def _pair_scales(spread: np.ndarray) -> np.ndarray:
    k = spread.shape[-1]
    a, b = np.triu_indices(k, 1)
    var = spread[..., a, a] + spread[..., b, b] - 2.0 * spread[..., a, b]
    return np.sqrt(np.clip(var, 0.0, None))


def draw_spread(
    deviations: np.ndarray,
    precision: np.ndarray,
    spread_df: float,
    psi: np.ndarray | float,
    rng: np.random.Generator,
) -> np.ndarray:
    r"""Draw :math:`\Omega` from its conditional posterior for each posterior draw.

    Given the deviations' contrasts :math:`\tilde u_i`, weights :math:`\lambda_i` and
    the prior's mixing variable :math:`\psi`,
    :math:`\Omega \sim \operatorname{IW}(\nu_\Omega + q, \psi I + \sum_i \lambda_i
    \tilde u_i \tilde u_i^T)`; sampled as the inverse of a Wishart draw by Bartlett's
    decomposition, vectorised over the draws.

    Parameters
    ----------
    deviations : numpy.ndarray
        ``(draws, q, d)``.
    precision : numpy.ndarray
        ``(draws, q)``.
    spread_df : float
        :math:`\nu_\Omega`: the prior is :math:`\operatorname{IW}(\nu_\Omega, \psi I)`.
    psi : numpy.ndarray or float
        ``(draws,)`` or one value: :math:`\psi` of each draw.
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        ``(draws, d, d)`` draws of :math:`\Omega`.
    """
    n, q, d = deviations.shape
    psi = np.broadcast_to(np.asarray(psi, dtype=float), (n,))
    scatter = psi[:, None, None] * np.eye(d) + np.einsum(
        "sq,sqa,sqb->sab", precision, deviations, deviations
    )
    df = spread_df + q
    # W ~ Wishart(df, scatter^-1) = L A A^T L^T, L L^T = scatter^-1 (Bartlett); Omega = W^-1
    lower = np.linalg.cholesky(np.linalg.inv(scatter))
    bartlett = np.zeros((n, d, d))
    rows, cols = np.tril_indices(d, -1)
    bartlett[:, rows, cols] = rng.standard_normal((n, rows.size))
    diag = np.arange(d)
    bartlett[:, diag, diag] = np.sqrt(rng.chisquare(df - diag, size=(n, d)))
    factor = lower @ bartlett
    return np.linalg.inv(factor @ factor.transpose(0, 2, 1))


def grouped_cores(deviations: np.ndarray, precision: np.ndarray) -> np.ndarray:
    r"""Return the grouped t's cores :math:`\omega_i = A_i^{-1}\tilde u_i`.

    :math:`A_i = H^T \operatorname{diag}(\lambda_{i1}^{-1/2}, \ldots,
    \lambda_{iK}^{-1/2}) H` (``docs/joint_prior.md``). `deviations` ``(..., q, d)``,
    `precision` ``(..., q, K)``; returns ``(..., q, d)``.
    """
    basis = contrast_basis(precision.shape[-1])
    mix = np.einsum("ma,...m,mb->...ab", basis, 1.0 / np.sqrt(precision), basis)
    return np.linalg.solve(mix, deviations[..., None])[..., 0]


def _spread_draws(post: Any, data: dict[str, Any], k: int, seed: int) -> np.ndarray:
    r"""Return ``(chains, draws, K, K)`` draws of :math:`H \Omega H^T` (model units).

    One :math:`\Omega` per posterior draw (:func:`draw_spread`), from a random stream
    of its own derived from the fit's `seed` (the sampler uses the seed itself). With
    per-system tails the deviations are the cores :math:`\omega_i`
    (:func:`grouped_cores`), with unit weights.
    """
    deviations = post["deviations"].to_numpy()
    shape = deviations.shape[:2]
    precision = post["precision"].to_numpy()
    if precision.ndim == 4:  # per-system weights (chains, draws, q, K)
        deviations = grouped_cores(deviations, precision)
        precision = np.ones(precision.shape[:3])
    omega = draw_spread(
        deviations.reshape(-1, *deviations.shape[2:]),
        precision.reshape(-1, deviations.shape[2]),
        float(data["spread_df"]),
        post["spread_psi"].to_numpy().reshape(-1) if "spread_psi" in post else data["spread_var"],
        _draws_rng(seed),
    )
    basis = contrast_basis(k)
    return (basis @ omega @ basis.T).reshape(*shape, k, k)


def _draws_rng(seed: int) -> np.random.Generator:
    """Return the random stream of the draws made after a fit (derived from its `seed`)."""
    return np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])


def draw_effects(post: Any, data: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    r"""Draw the effects of independent components from their Gaussian conditional.

    The sampler integrates the effects' coordinates :math:`\beta \sim N(0, \tau^2 I_d)`
    (:math:`\tau` = ``effect_hi``) out (``compiled_backend._marginal_logp``). Given a
    posterior draw, in :math:`Q`'s basis (:math:`A_i = D_i + (c_i/\kappa_i) Q^T T_i T_i^T
    Q`, :math:`x'_i = Q^T \bar z_i`), with :math:`P' = \tau^{-2} I + \sum_i A_i^{-1}`:

    .. math::

        Q^T\beta \sim N(P'^{-1} \textstyle\sum_i A_i^{-1} x'_i,\; P'^{-1}).

    Vectorised over the draws.

    Parameters
    ----------
    post : xarray.Dataset
        The posterior (model units): ``noise_weight`` ``(chains, draws, q)``,
        ``precision`` ``(chains, draws, q, d)``, ``component_scale`` ``(chains, draws,
        d)``, ``directions`` ``(chains, draws, d, d)``.
    data : dict
        The fit's model data (:meth:`.spec.JointData.model_data`): ``means``,
        ``transform``, ``power``, ``effect_hi``.
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        ``(chains, draws, K)`` draws of the effects :math:`b = H\beta` (model units).
    """
    means = np.asarray(data["means"], dtype=float)
    transform = np.asarray(data["transform"], dtype=float)
    power = np.asarray(data["power"], dtype=float)
    tau = float(data["effect_hi"])
    d = means.shape[1]
    basis_q = post["directions"].to_numpy()[..., None, :, :]  # (chains, draws, 1, d, d)
    rotated = np.swapaxes(transform, -1, -2) @ basis_q  # T_i^T Q
    noise_var = power / (power - 0.5 * d) / post["noise_weight"].to_numpy()
    variances = post["component_scale"].to_numpy()[..., None, :] ** 2 / post["precision"].to_numpy()
    cov = noise_var[..., None, None] * (np.swapaxes(rotated, -1, -2) @ rotated)
    cov += variances[..., None] * np.eye(d)  # A_i
    inverse = np.linalg.inv(cov)
    shifted = (means[..., None, :] @ basis_q)[..., 0, :]  # x'_i = Q^T means_i
    precision = np.eye(d) / tau**2 + inverse.sum(axis=-3)
    total = (inverse @ shifted[..., None]).sum(axis=-3)
    chol = np.linalg.cholesky(precision)
    z = rng.standard_normal(total.shape)
    coords = np.linalg.solve(precision, total) + np.linalg.solve(np.swapaxes(chol, -1, -2), z)
    beta = (basis_q[..., 0, :, :] @ coords)[..., 0]
    return beta @ contrast_basis(d + 1).T


def draw_deviations(post: Any, data: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    r"""Draw each data set's deviations of independent components from their conditional.

    The sampler integrates the deviations :math:`\tilde u_i` out given one noise weight
    :math:`\kappa_i` per data set (``docs/joint_prior.md``, the marginal form). Given a
    posterior draw, with :math:`r_i = \bar z_i - \beta`, :math:`\Pi_i = Q D_i Q^T`,
    :math:`D_i = \operatorname{diag}(s_j^2/\lambda_{ij})`, :math:`N_i =
    (c_i/\kappa_i) T_i T_i^T` (:math:`c_i = P_i/(P_i - d/2)`) and :math:`M_i = \Pi_i +
    N_i`, they are Gaussian:

    .. math::

        \tilde u_i \sim N(\Pi_i M_i^{-1} r_i,\; \Pi_i - \Pi_i M_i^{-1} \Pi_i).

    Drawn by Matheron's rule: with :math:`u^0_i \sim N(0, \Pi_i)` and :math:`e_i \sim
    N(0, N_i)` independent, :math:`u^0_i + \Pi_i M_i^{-1}(r_i - u^0_i - e_i)` has that
    law (no factor of the conditional covariance, which is near singular along the
    directions the folds resolve). Vectorised over the draws and data sets.

    Parameters
    ----------
    post : xarray.Dataset
        The posterior (model units): ``b`` ``(chains, draws, K)``, ``noise_weight``
        ``(chains, draws, q)``, ``precision`` ``(chains, draws, q, d)``,
        ``component_scale`` ``(chains, draws, d)``, ``directions``
        ``(chains, draws, d, d)``.
    data : dict
        The fit's model data (:meth:`.spec.JointData.model_data`): ``means``,
        ``transform``, ``power``.
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        ``(chains, draws, q, d)`` draws of the :math:`\tilde u_i` (model units).
    """
    means = np.asarray(data["means"], dtype=float)
    transform = np.asarray(data["transform"], dtype=float)
    power = np.asarray(data["power"], dtype=float)
    d = means.shape[1]
    beta = post["b"].to_numpy() @ contrast_basis(d + 1)  # (chains, draws, d): H^T b
    residual = means - beta[..., None, :]
    sd = post["component_scale"].to_numpy()[..., None, :] / np.sqrt(post["precision"].to_numpy())
    root_prior = post["directions"].to_numpy()[..., None, :, :] * sd[..., None, :]
    noise_sd = np.sqrt(power / (power - 0.5 * d) / post["noise_weight"].to_numpy())
    root_noise = noise_sd[..., None, None] * transform
    prior = root_prior @ np.swapaxes(root_prior, -1, -2)
    total = prior + root_noise @ np.swapaxes(root_noise, -1, -2)
    z = rng.standard_normal((2, *residual.shape, 1))
    start = (root_prior @ z[0])[..., 0]
    miss = residual - start - (root_noise @ z[1])[..., 0]
    return start + (prior @ np.linalg.solve(total, miss[..., None]))[..., 0]


def _components_spread(post: Any, loading: np.ndarray) -> np.ndarray:
    r"""Return :math:`H L L^T H^T` of independent components' `loading` (score units).

    Adds to `post` the smallest and largest :math:`\nu_j` of each draw (``nu_range``),
    which permuting the components leaves alone (diagnosed in place of the
    :math:`\nu_j`).
    """
    basis = contrast_basis(loading.shape[-1] + 1)
    nu = post["nu"].to_numpy()
    post["nu_range"] = (("chain", "draw", "end"), np.stack([nu.min(-1), nu.max(-1)], axis=-1))
    return basis @ loading @ loading.transpose(0, 1, 3, 2) @ basis.T


def _covariance_draws(
    post: Any, data: dict[str, Any], prepared: JointData, seed: int
) -> tuple[np.ndarray, np.ndarray | None]:
    r"""Return the draws of :attr:`JointFit.spread` and :attr:`JointFit.loading` (score units).

    Independent components: the loading :math:`Q \operatorname{diag}(s)` of each draw,
    stored in `post` (model units) as ``loading``, the effects drawn from their
    conditional (:func:`draw_effects`) stored as ``b``, then the deviations drawn from
    theirs given them (:func:`draw_deviations`) stored as ``deviations``; otherwise
    :math:`\Omega` drawn from its conditional (:func:`_spread_draws`) and no loading.
    The draws come from the random stream :func:`_draws_rng` derives from `seed`.
    """
    scale = prepared.scale
    if prepared.tails != "components":
        return _spread_draws(post, data, prepared.n_systems, seed) * scale**2, None
    drawn = post["directions"].to_numpy() * post["component_scale"].to_numpy()[..., None, :]
    post["loading"] = (("chain", "draw", "contrast", "component"), drawn)
    rng = _draws_rng(seed)
    post["b"] = (("chain", "draw", "system"), draw_effects(post, data, rng))
    deviations = draw_deviations(post, data, rng)
    post["deviations"] = (("chain", "draw", "dataset", "contrast"), deviations)
    loading = drawn * scale
    return _components_spread(post, loading), loading


class JointModel:
    """The joint model of one shape (q data sets, K systems) and sampler, reused by fits.

    Parameters
    ----------
    n_datasets, n_systems : int
        The shape every fit of this model has.
    backend : {"auto", "nutpie", "pymc"}, default: "auto"
        nutpie (the compiled density of :mod:`.compiled_backend`) when installed, else
        PyMC's NUTS on :func:`.pymc_backend.build_model`.
    """

    def __init__(
        self,
        n_datasets: int,
        n_systems: int,
        *,
        backend: Backend = "auto",
    ) -> None:
        self.n_datasets = check_positive_int(n_datasets, "n_datasets", minimum=2)
        self.n_systems = check_positive_int(n_systems, "n_systems", minimum=2)
        self.backend = resolve_backend(backend)
        self._models: dict[tuple[str, str], Any] = {}  # PyMC's, per form of the prior
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"JointModel(n_datasets={self.n_datasets}, n_systems={self.n_systems}, "
            f"backend={self.backend!r})"
        )

    def _with_data(self, data: dict[str, Any], form: tuple[str, str]) -> tuple[Any, Any]:
        """Return the PyMC model (or None) and nutpie's compiled model (or None) of `data`."""
        if self.backend == "nutpie":
            from isbetter.cv.joint.compiled_backend import compiled_model

            # the hand-written density: loaded from isbetter's cache, any shape
            return None, compiled_model(data)
        pm = libs.pymc()

        from isbetter.cv.joint.pymc_backend import build_model

        if form not in self._models:
            self._models[form] = build_model(
                self.n_datasets,
                self.n_systems,
                *form,  # type: ignore[arg-type]
            )
        model = self._models[form]
        with model:
            pm.set_data(data)
        return model, None

    def fit(
        self,
        prepared: JointData,
        *,
        rope: float,
        priors: JointPriors,
        rho: float | None,
        draws: int,
        tune: int,
        chains: int,
        cores: int | None,
        seed: int,
        nuts: NutsSettings | None = None,
    ) -> JointFit:
        """Sample the posterior of `prepared` (from :func:`.spec.prepare`)."""
        nuts = NutsSettings() if nuts is None else nuts
        if (prepared.n_datasets, prepared.n_systems) != (self.n_datasets, self.n_systems):
            raise ValueError(
                f"this JointModel has shape {(self.n_datasets, self.n_systems)}, the data "
                f"{(prepared.n_datasets, prepared.n_systems)}"
            )
        data = prepared.model_data(priors)
        accept = nuts.target_accept
        sampling: dict[str, Any] = {
            "draws": draws,
            "tune": tune,
            "chains": chains,
            "cores": cores,
            "seed": seed,
            "mass_matrix": nuts.mass_matrix,
            "target_accept": sampler_defaults(prepared.tails).target_accept
            if accept is None
            else accept,
            "max_depth": nuts.max_depth,
        }
        with self._lock:
            form = (prepared.spread_prior, prepared.tails)
            model, compiled = self._with_data(data, form)
            idata = sample(model, **sampling, backend=self.backend, compiled=compiled)
        post = idata.posterior
        scale = prepared.scale
        components = prepared.tails == "components"
        spread, loading = _covariance_draws(post, data, prepared, seed)
        post["pair_scale"] = (("chain", "draw", "pair"), _pair_scales(spread))
        diagnosed = DIAGNOSED_COMPONENTS if components else DIAGNOSED
        diagnostics = diagnose(idata, diagnosed, backend=self.backend)
        warn_if_poor(diagnostics, "joint model")
        settings = _settings(prepared, priors, rope=rope, rho=rho, sampling=sampling)
        settings["backend"] = self.backend
        return JointFit(
            data=prepared,
            effects=post["b"].to_numpy() * scale,
            spread=spread,
            nu=post["nu"].to_numpy(),
            diagnostics=diagnostics,
            settings=settings,
            idata=idata,
            loading=loading,
        )


def _settings(
    prepared: JointData,
    priors: JointPriors,
    *,
    rope: float,
    rho: float | None,
    sampling: dict[str, Any],
) -> dict[str, Any]:
    """Return a joint fit's settings (the fit fills in its sampler's backend)."""
    return make_settings(
        "joint",
        sampling["seed"],
        rope=rope,
        rho=None if rho is None else float(rho),
        rho_used=sorted({float(r) for r in prepared.rho}),
        priors=priors.to_dict(),
        draws=sampling["draws"],
        tune=sampling["tune"],
        chains=sampling["chains"],
        backend=None,
        mass_matrix=sampling["mass_matrix"],
        target_accept=sampling["target_accept"],
        max_depth=sampling["max_depth"],
        scale=prepared.scale,
        spread_prior=_spread_setting(prepared),
        tails=prepared.tails,
        metric=prepared.metric,
        n_datasets=prepared.n_datasets,
        systems=list(prepared.systems),
        zero_variance_datasets=list(prepared.zero_variance),
        zero_variance_sd=prepared.zero_variance_sd,
    )


def _spread_setting(prepared: JointData) -> dict[str, Any]:
    """Return the prior of the deviations' covariance: its form and settings in score units."""
    d = prepared.n_systems - 1
    if prepared.tails == "components":  # each component's scale s_j ~ half-t(0, A)
        return {
            "form": "huang-wand",
            "df": prepared.spread_df - d + 1.0,
            "component_scale": float(np.sqrt(prepared.spread_var) * prepared.scale),
        }
    if prepared.spread_prior == "inverse-wishart":
        psi = prepared.spread_var * prepared.scale**2
        return {"form": "inverse-wishart", "df": prepared.spread_df, "psi": float(psi)}
    return {
        "form": "huang-wand",
        "df": prepared.spread_df - d + 1.0,  # the half-t's
        "pair_scale": float(np.sqrt(2.0 * prepared.spread_var) * prepared.scale),
    }


@lru_cache(maxsize=8)
def _shared_model(n_datasets: int, n_systems: int, backend: str) -> JointModel:
    # holds models only (keyed on their shape and sampler), no user settings
    return JointModel(n_datasets, n_systems, backend=backend)  # type: ignore[arg-type]


def joint_fit(
    table: ScoreTable,
    systems: Sequence[str] | None = None,
    *,
    metric: str | None = None,
    rope: float = 0.0,
    rho: float | None = None,
    priors: JointPriors | None = None,
    draws: int | None = None,
    tune: int | None = None,
    chains: int = 4,
    cores: int | None = None,
    backend: Backend = "auto",
    rng: int | np.random.Generator | None = None,
    nuts: NutsSettings | None = None,
) -> JointFit:
    r"""Fit the joint correlated model to the per-fold scores of K systems on q data sets.

    Parameters
    ----------
    table : ScoreTable
        Per-fold scores (:func:`~isbetter.read_scores`), at least 2 data sets.
    systems : sequence of str, optional
        The systems (default: all of the table's), at least 2.
    metric : str, optional
        Metric column (default: the first); its direction orients the effects.
    rope : float, default: 0.0
        ROPE half-width in score units (recorded with the fit); it sets the noise of the
        directions in which a data set's scores do not vary (two systems with the same
        score on every fold), U(-rope, rope) differences as in the pairwise model
        (``settings["zero_variance_datasets"]``, ``settings["zero_variance_sd"]``).
    rho : float, optional
        Correlation of the scores within a data set; default ``1 / folds``.
    priors : JointPriors, optional
        Prior settings (default: the reference implementation's bounds).
    draws, tune : int, optional
        Posterior draws and tuning steps per chain; default: the form's
        (:func:`sampler_defaults`: :data:`COMPONENTS_SAMPLER` for the default form,
        :data:`SHARED_SAMPLER` for one nu or per-system tails), recorded in ``settings``.
    chains : int, default: 4
        Number of chains.
    cores : int, optional
        Chains run in parallel on this many cores (default ``min(chains, 2)``).
    backend : {"auto", "nutpie", "pymc"}, default: "auto"
        nutpie (the compiled density) when installed, else PyMC's NUTS.
    rng : int, numpy.random.Generator or None
        Seed of the sampler; recorded in ``settings["seed"]``.
    nuts : NutsSettings, optional
        NUTS's mass matrix, target acceptance and tree depth (default:
        ``NutsSettings()``: the form's target acceptance); recorded in ``settings``
        (``mass_matrix``, ``target_accept``, ``max_depth``).

    Returns
    -------
    JointFit

    Warns
    -----
    ConvergenceWarning
        R-hat above 1.01, too few effective draws, or divergences.

    Notes
    -----
    The model (``../shared/DESIGN.md`` §4.2, :mod:`.spec`): :math:`x_{ikf} = \mu_{if}
    + b_k + u_{ik} + e_{ikf}`, fold effects :math:`\mu_{if}` integrated out; the
    deviations' contrasts independent t components (the default, below) or multivariate
    t with covariance :math:`\Omega` (so each pair's deviation is :math:`t_\nu` with its
    own scale); the noise of the contrasts
    matrix-normal with covariance :math:`\Sigma_i` across systems and compound
    symmetry (correlation :math:`\rho_i`) across folds; the :math:`\Sigma_i`
    integrated out against inverse-Wishart priors; with one shared :math:`\nu`
    (``JointPriors(tails="shared")``) :math:`\Omega` against an
    inverse-Wishart with a fixed scale (that form's default) or, with
    ``JointPriors(spread_prior="huang-wand")``, Huang and Wand's prior given its mixing
    variable (every pair's scale half-t, flat near zero;
    :class:`~isbetter.cv.joint.spec.JointPriors`, ``docs/joint_prior.md``).
    ``settings["spread_prior"]`` records the form and its settings in score units (the
    degrees of freedom and the fixed :math:`\psi`, or the half-t's degrees of freedom
    and a pair's half-t scale). With the default, ``JointPriors(tails="components")``
    (independent t components, ``docs/joint_prior.md``), the fit holds one
    :math:`\nu_j` per component and the draws of the loading :math:`L`
    (:attr:`JointFit.loading`), and ``settings["spread_prior"]`` a component's half-t
    scale (``component_scale``).
    Scores are divided by the mean per-data-set standard deviation of two systems' fold
    differences before fitting; the draws are reported in score units.
    """
    if not isinstance(table, ScoreTable):
        raise InputTypeError(
            f"`table` must be a ScoreTable (isbetter.read_scores), got {type(table).__name__}."
        )
    rope = check_rope(rope)
    priors = JointPriors() if priors is None else priors
    defaults = sampler_defaults(priors.tails)
    draws = check_positive_int(defaults.draws if draws is None else draws, "draws", minimum=1)
    tune = check_positive_int(defaults.tune if tune is None else tune, "tune", minimum=0)
    chains = check_positive_int(chains, "chains", minimum=1)
    if cores is not None:
        cores = check_positive_int(cores, "cores", minimum=1)
    backend_used = resolve_backend(backend)
    names = table.systems if systems is None else tuple(systems)
    prepared = prepare(table, names, metric=metric, rope=rope, rho=rho, priors=priors)
    model = _shared_model(prepared.n_datasets, prepared.n_systems, backend_used)
    return model.fit(
        prepared,
        rope=rope,
        priors=priors,
        rho=rho,
        draws=draws,
        tune=tune,
        chains=chains,
        cores=cores,
        seed=resolve_seed(rng),
        nuts=nuts,
    )
