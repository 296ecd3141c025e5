"""Macro- and micro-averaged measures of two multi-class classifiers: one interface, two models.

An :class:`AveragedModel` takes the documents' joint outcomes (true class j,
prediction of A k, prediction of B l; ``cells`` of shape (M, M, M), see
:func:`isbetter.f1.multiclass.joint_cells`) and a per-class measure and
returns :class:`AveragedDraws`: posterior and prior draws of the macro- and
micro-averaged difference (positive: A better), and where the model gives them
per-class draws, effective sample sizes and MCMC diagnostics.

Implementations:

* :class:`FlatCellModel` (default of :func:`isbetter.compare_f1`) — the exact
  paired model of the M^3 cells, ``phi ~ Dirichlet(alpha)``, sampled without MCMC
  (:mod:`isbetter.f1.multiclass`);
* :class:`UnpairedCellModel` — its unpaired counterpart: each confusion matrix
  its own flat Dirichlet over the M^2 cells, exact (``model="unpaired"``);
* :class:`ICDMModel` — Zhang et al.'s (ICDM 2015) hierarchical model of the two
  confusion matrices (:mod:`isbetter.f1.icdm`): unpaired, rows tied by an
  overall tendency eta, sampled with NUTS; it also gives every class's difference.

The exact models draw as many times as asked (the flat-cell model costs a few
thousand variates per draw for 20 classes: about 1.5 s for 50 000 posterior and
50 000 prior draws); the ICDM model, an MCMC run, caps its draws (``max_draws``).

Seeds: an implementation draws from the first two children of `seed_seq` only,
so a caller may use further children (e.g. for a bootstrap) without overlap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np

from isbetter.core.errors import InputError
from isbetter.f1.icdm import ICDM_TUNE
from isbetter.f1.measures import Measure
from isbetter.inference.records import MCMCDiagnostics
from isbetter.inference.sampling import Sampling
from isbetter.inference.summaries import symmetrised

__all__ = [
    "AVERAGE_MAX_RESAMPLES",
    "HIERARCHICAL_MAX_DRAWS",
    "AveragedDraws",
    "AveragedModel",
    "FlatCellModel",
    "ICDMModel",
    "UnpairedCellModel",
]

#: bootstrap resamples of the macro / micro rows (each resamples every document)
AVERAGE_MAX_RESAMPLES = 10_000
#: posterior draws of the hierarchical model, all chains together (2 000 per chain x 4)
HIERARCHICAL_MAX_DRAWS = 8_000


@dataclass(frozen=True)
class AveragedDraws:
    """Draws of the averaged differences of a multi-class comparison.

    Attributes
    ----------
    macro, micro : numpy.ndarray
        Posterior draws of the macro- and micro-averaged difference.
    prior_macro, prior_micro : numpy.ndarray
        Prior draws of the same, symmetrised (the priors are symmetric in A and B).
    per_class : numpy.ndarray or None
        Shape ``(n_draws, M)``: posterior draws of each class's difference, when the
        model gives them (from the same fit).
    prior_per_class : numpy.ndarray or None
        Shape ``(n_prior_draws, M)``: symmetrised prior draws of the same.
    ess : dict of str to float, or None
        Effective sample sizes for the Monte Carlo errors, keyed ``"macro"``,
        ``"micro"`` and the class indices ``"0"``, ``"1"``, ...; None for independent
        draws.
    diagnostics : MCMCDiagnostics or None
        Convergence diagnostics when MCMC was used.
    idata : arviz.InferenceData or None
        The trace of an MCMC fit.
    prior_ess : int
        Independent draws in each prior sample: half its length (property).
    """

    macro: np.ndarray = field(repr=False)
    micro: np.ndarray = field(repr=False)
    prior_macro: np.ndarray = field(repr=False)
    prior_micro: np.ndarray = field(repr=False)
    per_class: np.ndarray | None = field(default=None, repr=False)
    prior_per_class: np.ndarray | None = field(default=None, repr=False)
    ess: dict[str, float] | None = None
    diagnostics: MCMCDiagnostics | None = None
    idata: Any = field(default=None, repr=False, compare=False)

    @property
    def prior_ess(self) -> int:
        """Independent draws in each prior sample (symmetrised: half its length)."""
        return self.prior_macro.shape[0] // 2


class AveragedModel(Protocol):
    """A model of the averaged measures of two multi-class classifiers.

    Attributes
    ----------
    name : str
        Short name recorded in the settings.
    paired : bool
        Whether the model uses the pairing of A's and B's predictions.
    max_draws : int or None
        Most draws a caller should ask for (None: no cap).
    """

    @property
    def name(self) -> str:
        """Short name recorded in the settings."""
        ...

    @property
    def paired(self) -> bool:
        """Whether the model uses the pairing of A's and B's predictions."""
        ...

    @property
    def max_draws(self) -> int | None:
        """Most draws a caller should ask for (None: no cap)."""
        ...

    def sample(
        self, cells: np.ndarray, measure: Measure, *, draws: int, seed_seq: np.random.SeedSequence
    ) -> AveragedDraws:
        """Posterior and prior draws for the joint outcome counts `cells` (M, M, M)."""
        ...

    def settings(self) -> dict[str, Any]:
        """Return the model's options, for the result's settings."""
        ...


@dataclass(frozen=True)
class _ExactCellModel:
    """What the two exact models share: `alpha`, independent draws, the seeds' use."""

    name: ClassVar[str]
    paired: ClassVar[bool]
    alpha: float | None = None
    max_draws: int | None = field(default=None, init=False)

    def _deltas(
        self, cells: np.ndarray, measure: Measure, draws: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """Macro and micro differences drawn for the counts `cells` (zeros: the prior)."""
        raise NotImplementedError

    def sample(
        self, cells: np.ndarray, measure: Measure, *, draws: int, seed_seq: np.random.SeedSequence
    ) -> AveragedDraws:
        """Draw the exact posterior (first child of `seed_seq`) and prior (second child)."""
        if self.alpha is not None and not self.alpha > 0:
            raise InputError(
                f"`alpha` must be a positive Dirichlet concentration, got {self.alpha!r}."
            )
        cells = np.asarray(cells, dtype=float)
        post_ss, prior_ss = seed_seq.spawn(2)
        macro, micro = self._deltas(cells, measure, draws, np.random.default_rng(post_ss))
        prior = self._deltas(np.zeros_like(cells), measure, draws, np.random.default_rng(prior_ss))
        return AveragedDraws(
            macro=macro,
            micro=micro,
            prior_macro=symmetrised(prior[0]),
            prior_micro=symmetrised(prior[1]),
        )

    def settings(self) -> dict[str, Any]:
        """Return the model's options: ``{"average_model": name, "alpha": ...}``."""
        return {"average_model": self.name, "alpha": self.alpha}


@dataclass(frozen=True)
class FlatCellModel(_ExactCellModel):
    """The exact paired model of the M^3 joint outcome cells (no MCMC).

    ``phi ~ Dirichlet(alpha)`` over the cells, ``alpha = 1 / M^2`` per cell by default
    (total prior mass M; see :mod:`isbetter.f1.multiclass`). Draws are
    independent, so ``ess`` is None. Gives no per-class draws (the per-class rows of
    :func:`isbetter.compare_f1` come from the binary paired model).

    Attributes
    ----------
    alpha : float, optional
        Dirichlet concentration per cell.
    """

    name = "flat"
    paired = True

    def _deltas(
        self, cells: np.ndarray, measure: Measure, draws: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        from isbetter.f1.multiclass import sample_average_delta

        return sample_average_delta(cells, measure, alpha=self.alpha, draws=draws, rng=rng)


@dataclass(frozen=True)
class UnpairedCellModel(_ExactCellModel):
    """Exact unpaired model of the averages: one flat Dirichlet per confusion matrix.

    ``phi_A ~ Dirichlet(alpha)`` over A's M^2 confusion-matrix cells, ``phi_B`` likewise
    and independently, ``alpha = 1 / M`` per cell by default (total prior mass M; by
    aggregation the class proportions get a flat Dirichlet, as in the paired
    flat-cell model). The posterior ``Dirichlet(alpha + C_s)`` is drawn exactly. Like
    the unpaired binary model it ignores that A and B saw the same documents.

    Attributes
    ----------
    alpha : float, optional
        Dirichlet concentration per cell.
    """

    name = "flat_unpaired"
    paired = False

    def _deltas(
        self, cells: np.ndarray, measure: Measure, draws: int, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        from isbetter.f1.multiclass import macro_micro

        conf = np.stack([cells.sum(axis=2), cells.sum(axis=1)])  # A's and B's matrices
        m = conf.shape[-1]
        shape = conf + (1.0 / m if self.alpha is None else float(self.alpha))
        macro, micro = np.empty((draws, 2)), np.empty((draws, 2))
        step = max(1, 2_000_000 // shape.size)
        for start in range(0, draws, step):
            s = min(step, draws - start)
            g = rng.standard_gamma(shape, size=(s, *shape.shape))
            g /= g.sum(axis=(-2, -1), keepdims=True)
            macro[start : start + s], micro[start : start + s] = macro_micro(g, measure)
        return (
            measure.difference(macro[:, 0], macro[:, 1]),
            measure.difference(micro[:, 0], micro[:, 1]),
        )


@dataclass(frozen=True)
class ICDMModel:
    """Zhang et al.'s (ICDM 2015) hierarchical model, sampled with NUTS.

    Unpaired: it sees the two confusion matrices ``cells.sum(axis=2)`` (A) and
    ``cells.sum(axis=1)`` (B) only. ``draws`` of :meth:`sample` is the total number
    of posterior draws, split evenly over the chains (rounded up).

    Attributes
    ----------
    concentration : float, default: 1.0
        Prior mass of each confusion-matrix row's Dirichlet.
    sampling : Sampling, default: Sampling()
        NUTS tuning steps per chain (default :data:`~isbetter.f1.icdm.ICDM_TUNE`), chains and cores.
    backend : {"auto", "nutpie", "pymc"}, default: "auto"
        nutpie when installed, otherwise PyMC's NUTS.
    """

    concentration: float = 1.0
    sampling: Sampling = field(default_factory=Sampling)
    backend: str = "auto"
    name: str = field(default="icdm", init=False)
    paired: bool = field(default=False, init=False)
    max_draws: int | None = field(default=HIERARCHICAL_MAX_DRAWS, init=False)

    def draws_per_chain(self, draws: int) -> int:
        """Draws per chain for `draws` draws in total."""
        return max(1, math.ceil(draws / self.sampling.chains))

    def sample(
        self, cells: np.ndarray, measure: Measure, *, draws: int, seed_seq: np.random.SeedSequence
    ) -> AveragedDraws:
        """Fit the model to the two confusion matrices (see :mod:`isbetter.f1.icdm`)."""
        from isbetter.f1.icdm import sample_icdm

        cells = np.asarray(cells)
        fit = sample_icdm(
            cells.sum(axis=2),
            cells.sum(axis=1),
            measure,
            concentration=self.concentration,
            draws=self.draws_per_chain(draws),
            sampling=self.sampling,
            backend=self.backend,
            seed_seq=seed_seq,
        )
        ess = {"macro": fit.ess_macro, "micro": fit.ess_micro}
        ess.update({str(j): float(e) for j, e in enumerate(fit.ess_class)})
        return AveragedDraws(
            macro=fit.delta_macro,
            micro=fit.delta_micro,
            prior_macro=symmetrised(fit.prior_macro),
            prior_micro=symmetrised(fit.prior_micro),
            per_class=fit.delta_class,
            prior_per_class=symmetrised(fit.prior_class),
            ess=ess,
            diagnostics=fit.diagnostics,
            idata=fit.idata,
        )

    def settings(self) -> dict[str, Any]:
        """Return the model's options: concentration, tune, chains, backend."""
        from isbetter.inference.sampling import resolve_backend

        return {
            "average_model": self.name,
            "concentration": self.concentration,
            "tune": self.sampling.tune_or(ICDM_TUNE),
            "chains": self.sampling.chains,
            "backend": resolve_backend(self.backend),
        }
