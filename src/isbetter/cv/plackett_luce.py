r"""Bayesian Plackett–Luce model of the systems' rankings over data sets.

The established joint model of many systems on many data sets when only one
score per data set and system is at hand (Calvo, Ceberio & Lozano 2018 [1]_;
scmamp's ``bPlackettLuceModel`` [2]_). Each data set i ranks the K systems by
their scores, best first, :math:`\sigma_i = (\sigma_{i1}, \ldots, \sigma_{iK})`;
the rankings are independent draws from a Plackett–Luce distribution with
weights :math:`w` on the simplex,

.. math::

    P(\sigma_i \mid w) = \prod_{j=1}^{K} \frac{w_{\sigma_{ij}}}{\sum_{l \ge j} w_{\sigma_{il}}},
    \qquad w \sim \operatorname{Dirichlet}(\alpha),

with :math:`\alpha = 1` (uniform on the simplex; ``concentration``) by default,
as in scmamp. The
model is stated in PyMC (:func:`build_model`: the Dirichlet prior and a
``pm.Potential`` of the log-likelihood summed over data sets) and sampled by NUTS
through :func:`isbetter.inference.sampling.sample`, with its diagnostics: nutpie on
the same log density written in numba and kept in isbetter's cache
(:mod:`isbetter.cv.plackett_luce_density`, checked against PyMC's to 1e-9), or
PyMC's own sampler (``backend="pymc"``).

What it answers (:meth:`PlackettLuceFit.ranks`, :meth:`PlackettLuceFit.p_better`):

* **P(best)**: the posterior probability that :math:`w_k` is the largest weight —
  the same question as the joint model's P(best) (which effect is the largest),
  with the same Monte Carlo interval;
* **P(wins next data set)**: :math:`E[w_k]`, the probability that system k ranks
  first on a new data set (scmamp's "expected win probability"), with the 95%
  credible interval of :math:`w_k`. It is a predictive probability, not P(best): a
  system can have the largest weight in most draws and still win only a third of
  the data sets;
* the order of the weights is the most probable ranking (the mode of the
  Plackett–Luce distribution): its **expected rank** per system (scmamp's
  "expected mode rank"), 95% rank intervals, and the most probable orders;
* for every pair, :math:`P(w_a > w_b)` — the posterior probability that a ranks
  above b more often than not — and :math:`E[w_a / (w_a + w_b)]`, the predictive
  probability that a ranks above b on a new data set.

It models ranks, not differences: there is no ROPE in metric units, and a large
win counts as much as a narrow one. Any metric: for lower-is-better scores the
lowest ranks first. Per-fold scores are reduced to each system's mean per data set
first.

**Ties** (systems with the same score on a data set, up to
:data:`~isbetter.cv.friedman.TIE_TOLERANCE`) enter the likelihood by default
(``ties="marginal"``): a data set whose scores tie is a weak order, and its
probability is that of the tied systems taking their places in *any* order — the
Plackett–Luce probabilities of all the strict rankings the weak order allows,
summed. This is the likelihood of a coarsened observation (Heitjan & Rubin 1991
[3]_): scores are tied because they were rounded (Demšar's AUCs have three
decimals) or hit a ceiling (1.000 on *mushroom*), so an order exists that was not
observed, and each order it could be is counted with its own probability. For a
group G at the stage where the systems S are still unplaced, the sum over G's
:math:`|G|!` orders is computed exactly by a recursion over G's :math:`2^{|G|}`
subsets (:mod:`isbetter.cv.plackett_luce_density`); a group that closes the
ranking (every remaining system tied, e.g. all four on *mushroom*) has probability
1 and carries no information. Groups of more than :data:`MAX_TIED` systems that
do not close the ranking are refused (the recursion's cost doubles with each
system); ``ties="random"`` takes any. The alternative, a Davidson–Luce model
(Firth, Kosmidis & Turner 2019 [4]_; R's ``PlackettLuce``), adds a tie parameter
and treats a tie as an outcome of its own, with a probability of its own — right
for sports draws, not for rounded scores, and it changes what the weights mean.
Neither depends on the seed, so the results move across seeds only by Monte Carlo
error. ``ties="random"`` breaks ties at random with a stream of the fit's seed
instead — scmamp's rule (``rank(ties.method="random")``), to reproduce scmamp:
on Demšar's Table 6 (5 of 14 data sets tied) it moves the leader's P(best) by
far more than Monte Carlo error from one seed to the next. The fit records the
rule and how many data sets had a tie.

References
----------
.. [1] B. Calvo, J. Ceberio, J. A. Lozano (2018). Bayesian inference for algorithm
   ranking analysis. *GECCO '18 Companion*, 324-325.
.. [2] B. Calvo, G. Santafé (2016). scmamp: Statistical comparison of multiple
   algorithms in multiple problems. *The R Journal* 8(1), 248-256.
.. [3] D. F. Heitjan, D. B. Rubin (1991). Ignorability and coarse data. *The Annals
   of Statistics* 19(4), 2244-2253.
.. [4] D. Firth, I. Kosmidis, H. L. Turner (2019). Davidson-Luce model for multi-item
   choice with ties. arXiv:1909.07123.
"""

from __future__ import annotations

import dataclasses
import numbers
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.provenance import make_settings
from isbetter.core.validate import check_choice, check_positive_int
from isbetter.cv.friedman import score_matrix, snap_ties
from isbetter.inference import libs
from isbetter.inference.ranks import RANK_INTERVAL, RankSummary, rank_summary
from isbetter.inference.records import MCMCDiagnostics
from isbetter.inference.sampling import diagnose, resolve_backend, sample, warn_if_poor
from isbetter.inference.seeds import RNGLike, child, resolve_seed, sampler_seed

__all__ = [
    "MAX_TIED",
    "TIES",
    "TIE_RULE",
    "PlackettLuceFit",
    "build_model",
    "model_data",
    "plackett_luce",
    "rankings_from_scores",
    "weak_orders",
]

#: the tie rules, and each in words (recorded in every result)
TIES: dict[str, str] = {
    "marginal": "ties in the likelihood: a tied group's probability summed over its orders",
    "random": "ties broken at random with the seed (scmamp's rule)",
}
#: the default tie rule, in words
TIE_RULE = TIES["marginal"]
#: the largest tied group (not closing the ranking) the compiled density sums over
MAX_TIED = 12
#: the largest such group PyMC's model (which lists its orders) takes
MAX_TIED_PYMC = 6
#: the method's name in results
METHOD = "plackett_luce"
#: what the interval of P(wins next data set) = E[w_k] is, in words
P_WINS_NEXT_INTERVAL = (
    "95% credible interval of w_k (equal-tailed, from the posterior of the weights)"
)
#: the variable whose convergence is diagnosed
DIAGNOSED = ("w",)


def rankings_from_scores(
    scores: np.ndarray, higher_is_better: bool, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Return each data set's ranking (system indices, best first) and the number with ties.

    Scores of one data set within :data:`~isbetter.cv.friedman.TIE_TOLERANCE` of each
    other are tied; ties are broken at random (one uniform key per score from `rng`):
    the rule ``ties="random"``.

    Examples
    --------
    >>> r, ties = rankings_from_scores(np.array([[0.7, 0.9, 0.8]]), True, np.random.default_rng(0))
    >>> r.tolist(), ties
    ([[1, 2, 0]], 0)
    """
    signed = snap_ties(-scores if higher_is_better else scores)  # ascending: best first
    keys = rng.random(signed.shape)
    rankings = np.lexsort((keys, signed), axis=1)
    ordered = np.take_along_axis(signed, rankings, axis=1)
    tied = np.any(ordered[:, 1:] == ordered[:, :-1], axis=1)
    return rankings.astype(np.int64), int(tied.sum())


def weak_orders(scores: np.ndarray, higher_is_better: bool) -> tuple[np.ndarray, np.ndarray]:
    """Return each data set's weak order: systems best first, and where each tied group ends.

    ``rankings[i]`` lists the systems best first (tied ones in index order);
    ``ends[i, j]`` is the end (exclusive) of the group of tied systems at place j:
    ``j + 1`` where place j is untied. Scores within
    :data:`~isbetter.cv.friedman.TIE_TOLERANCE` of each other tie.

    Examples
    --------
    >>> r, ends = weak_orders(np.array([[0.7, 0.9, 0.7, 0.8]]), True)
    >>> r.tolist(), ends.tolist()
    ([[1, 3, 0, 2]], [[1, 2, 4, 4]])
    """
    signed = snap_ties(-scores if higher_is_better else scores)  # ascending: best first
    rankings = np.argsort(signed, axis=1, kind="stable")
    ordered = np.take_along_axis(signed, rankings, axis=1)
    n, k = ordered.shape
    new = np.ones((n, k + 1), dtype=bool)  # a group starts at j (and "at" k)
    new[:, 1:k] = ordered[:, 1:] != ordered[:, :-1]
    ends = np.empty((n, k), dtype=np.int64)
    for i in range(n):
        starts = np.flatnonzero(new[i])
        ends[i] = np.repeat(starts[1:], np.diff(starts))
    return rankings.astype(np.int64), ends


def _unique_orders(
    rankings: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the distinct weak orders and how many data sets have each (the density's data).

    Tied systems are put in index order first, so that a weak order is one row.
    """
    canonical = rankings.copy()
    for i, row in enumerate(ends):
        j = 0
        while j < len(row):
            canonical[i, j : row[j]] = np.sort(canonical[i, j : row[j]])
            j = int(row[j])
    both, counts = np.unique(np.hstack([canonical, ends]), axis=0, return_counts=True)
    k = rankings.shape[1]
    return both[:, :k].copy(), both[:, k:].copy(), counts.astype(float)


def _widest_group(ends: np.ndarray) -> int:
    """Return the size of the largest tied group that does not close its ranking (0: none)."""
    k = ends.shape[1]
    sizes = np.where(ends < k, ends - np.arange(k), 0)
    return int(sizes.max()) if sizes.size else 0


def model_data(rankings: np.ndarray, ends: np.ndarray, counts: np.ndarray) -> dict[str, Any]:
    """Return the data of :func:`build_model`: every tied group's orders, listed.

    One row per group that does not close its ranking (an untied place is a group of
    one): ``members`` (groups × orders × widest group; every order of the group's
    systems, padded), ``valid`` (1 on the members' places), ``order_ok`` (1 for a
    listed order, 0 for padding), ``rest`` (groups × K: 1 for the systems placed
    after the group) and ``weight`` (how many data sets share the row).
    """
    import itertools
    import math

    k = rankings.shape[1]
    groups = []
    for row, end, count in zip(rankings, ends, counts, strict=True):
        j = 0
        while j < k and end[j] < k:
            groups.append((row[j : end[j]], row[end[j] :], count))
            j = int(end[j])
    widest = max((len(g) for g, _, _ in groups), default=1)
    n_orders = math.factorial(widest)
    members = np.zeros((len(groups), n_orders, widest), dtype=np.int64)
    valid = np.zeros((len(groups), n_orders, widest))
    order_ok = np.zeros((len(groups), n_orders))
    rest = np.zeros((len(groups), k))
    weight = np.zeros(len(groups))
    for i, (group, after, count) in enumerate(groups):
        for o, order in enumerate(itertools.permutations(group)):
            members[i, o, : len(group)] = order
            valid[i, o, : len(group)] = 1.0
            order_ok[i, o] = 1.0
        rest[i, after] = 1.0
        weight[i] = count
    return {
        "members": members,
        "valid": valid,
        "order_ok": order_ok,
        "rest": rest,
        "weight": weight,
    }


def build_model(k: int) -> Any:
    r"""Build the Plackett–Luce model of K systems as a :class:`pymc.Model`. Pure: no sampling.

    Data (``pm.Data``, set per fit): the groups of :func:`model_data` and ``alpha``
    (the Dirichlet's K concentrations, ``concentration``). The weights are
    :math:`w = g / \sum_k g_k` with independent :math:`g_k \sim \operatorname{Gamma}(\alpha_k, 1)`,
    which makes :math:`w \sim \operatorname{Dirichlet}(\alpha)` exactly; the likelihood
    depends on :math:`g` only through :math:`w` (its scale cancels), and NUTS samples
    :math:`\log g` in K free dimensions, which mixes better than the K − 1 of a
    simplex transform (measured on CEC'17, nutpie, 4 × 1000 draws: bulk ESS 4470
    against 3430, sampling 2.5 s against 6.2 s on the same loaded machine). Free
    variable ``g``; deterministic ``w`` (dims ``system``); potential ``loglik``, the
    log-likelihood of the weak orders: per group G followed by the systems R, the
    log of the sum over G's orders :math:`\pi` of
    :math:`\prod_j g_{\pi_j} / (\sum_{l \ge j} g_{\pi_l} + \sum_{r \in R} g_r)`, listed
    order by order — the dense form of what :mod:`.plackett_luce_density` computes by
    a recursion over subsets (an untied place: one order, the plain Plackett–Luce factor).
    """
    pm = libs.pymc()
    import pytensor.tensor as pt

    strict = np.tile(np.arange(1, k + 1), (2, 1))
    empty = model_data(np.tile(np.arange(k), (2, 1)), strict, np.ones(2))
    with pm.Model(coords={"system": np.arange(k)}) as model:
        data = {name: pm.Data(name, value) for name, value in empty.items()}
        alpha = pm.Data("alpha", np.ones(k))
        g = pm.Gamma("g", alpha=alpha, beta=1.0, dims="system")
        pm.Deterministic("w", g / g.sum(), dims="system")
        valid = data["valid"]
        ranked = g[data["members"]] * valid  # (groups, orders, places)
        after = pt.sum(data["rest"] * g, axis=1)[:, None, None]
        remaining = pt.cumsum(ranked[:, :, ::-1], axis=2)[:, :, ::-1] + after
        placed = pt.switch(valid > 0, ranked, 1.0)  # log 1 = 0 on the padding
        terms = pt.sum(valid * (pt.log(placed) - pt.log(remaining)), axis=2)
        terms = pt.switch(data["order_ok"] > 0, terms, -np.inf)
        per_group = pm.math.logsumexp(terms, axis=1)
        pm.Potential("loglik", pt.sum(data["weight"] * per_group))
    return model


_LOCK = threading.Lock()


@lru_cache(maxsize=8)
def _pymc_model(k: int) -> Any:
    """Return the PyMC model of K systems, built once per process (data set per fit).

    Hold :data:`_LOCK` while setting its data and sampling.
    """
    return build_model(k)


def _sample(
    orders: tuple[np.ndarray, np.ndarray, np.ndarray],
    alpha: np.ndarray,
    backend: str,
    **settings: Any,
) -> Any:
    """Sample the posterior of the weights: nutpie on the compiled density, or PyMC's NUTS.

    `orders` are the distinct weak orders, their group ends and counts. nutpie samples
    the hand-written density of :mod:`.plackett_luce_density` (the same model in the
    same coordinates, loaded from isbetter's cache instead of compiled in every
    process); PyMC samples :func:`build_model`.
    """
    if backend == "nutpie":
        from isbetter.cv.plackett_luce_density import nutpie_model

        return sample(None, backend=backend, compiled=nutpie_model(*orders, alpha), **settings)
    pm = libs.pymc()

    with _LOCK:
        model = _pymc_model(alpha.shape[0])
        with model:
            pm.set_data({**model_data(*orders), "alpha": alpha})
        return sample(model, backend=backend, **settings)


def _rankings(
    scores: np.ndarray, higher_is_better: bool, ties: str, stream: Any
) -> tuple[np.ndarray, np.ndarray, int]:
    """Return the data sets' rankings and group ends under the tie rule, and how many tie.

    ``"random"`` breaks ties with `stream` (a seed sequence) into strict rankings.
    """
    rankings, ends = weak_orders(scores, higher_is_better)
    n, k = scores.shape
    tied = int(np.sum(np.any(ends != np.arange(1, k + 1), axis=1)))
    if ties == "random":
        rankings, _ = rankings_from_scores(scores, higher_is_better, np.random.default_rng(stream))
        ends = np.tile(np.arange(1, k + 1), (n, 1))
    return rankings, ends, tied


def _check_groups(ends: np.ndarray, datasets: Sequence[Any], backend: str) -> None:
    """Refuse a tied group too large to sum over (``ties="marginal"``), naming its data set."""
    limit = MAX_TIED if backend == "nutpie" else MAX_TIED_PYMC
    for name, row in zip(datasets, ends, strict=True):
        size = _widest_group(row[None, :])
        if size > limit:
            raise InputError(
                f"data set {name!r} has {size} systems tied above others; ties='marginal' "
                f"sums a tied group over its orders for groups of up to {limit} systems "
                f"(backend {backend!r}): pass ties='random' to break ties at random, as "
                "scmamp does."
            )


@dataclass(frozen=True)
class PlackettLuceFit:
    """The posterior of the Plackett–Luce weights, and what was ranked.

    Attributes
    ----------
    systems : tuple of str
        The K systems, in the order given.
    weights : numpy.ndarray
        ``(chains, draws, K)`` posterior draws of the weights (each row sums to 1).
    rankings : numpy.ndarray
        ``(data sets, K)``: each data set's ranking, system indices best first (with
        ``ties="random"`` ties broken; else tied systems in index order).
    ends : numpy.ndarray
        ``(data sets, K)``: where the group of tied systems at each place ends
        (exclusive; ``j + 1`` for an untied place j, and everywhere with
        ``ties="random"``), as :func:`weak_orders` gives it.
    datasets : tuple of str
        The data sets, in the rows' order.
    tied_datasets : int
        How many data sets had a tie.
    ties : str
        The tie rule, a key of :data:`TIES`.
    higher_is_better : bool
        Direction of the scores that were ranked.
    concentration : tuple of float
        The Dirichlet prior's concentrations α, one per system.
    diagnostics : MCMCDiagnostics
        Of the weights.
    seconds : float
        Wall time of the fit (compilation included).
    settings : dict
        Method, seed, prior, sampler settings, ties.
    """

    systems: tuple[str, ...]
    weights: np.ndarray = field(repr=False)
    rankings: np.ndarray = field(repr=False)
    ends: np.ndarray = field(repr=False)
    datasets: tuple[str, ...] = field(repr=False)
    tied_datasets: int
    ties: str
    higher_is_better: bool
    concentration: tuple[float, ...]
    diagnostics: MCMCDiagnostics
    seconds: float
    settings: dict[str, Any] = field(repr=False)

    @property
    def draws(self) -> np.ndarray:
        """The weights' draws with the chains concatenated: ``(chains * draws, K)``."""
        return self.weights.reshape(-1, len(self.systems))

    def expected_weights(self) -> dict[str, float]:
        """Return E[w_k]: each system's probability of ranking first (winning) on a new data set."""
        return dict(zip(self.systems, map(float, self.draws.mean(axis=0)), strict=True))

    def ranks(self, top: int = 5) -> RankSummary:
        """Return P(best), P(wins next data set), expected ranks and the most probable orders.

        From the order of the weights in each draw
        (:func:`~isbetter.inference.ranks.rank_summary`): ``p_best`` is the posterior
        probability that w_k is the largest weight, with its Monte Carlo interval, as
        for the joint model. ``p_wins_next`` is E[w_k] (scmamp's expected win
        probability: the probability of ranking first on a new data set), with the
        95% equal-tailed credible interval of w_k (:data:`P_WINS_NEXT_INTERVAL`).
        """
        chains = self.weights.shape[0]
        summary = rank_summary(
            self.draws, self.systems, rope=0.0, method=METHOD, top=top, chains=chains
        )
        tail = (1.0 - RANK_INTERVAL) / 2.0
        low, high = np.quantile(self.draws, [tail, 1.0 - tail], axis=0)
        return dataclasses.replace(
            summary,
            p_wins_next=self.expected_weights(),
            p_wins_next_interval={
                s: (float(lo), float(hi)) for s, lo, hi in zip(self.systems, low, high, strict=True)
            },
            p_wins_next_interval_kind=P_WINS_NEXT_INTERVAL,
        )

    def p_better(self) -> dict[tuple[str, str], float]:
        """Return P(w_a > w_b) for every pair (a before b in :attr:`systems`)."""
        w = self.draws
        k = len(self.systems)
        return {
            (self.systems[i], self.systems[j]): float(np.mean(w[:, i] > w[:, j]))
            for i in range(k)
            for j in range(i + 1, k)
        }

    def p_above(self, a: str, b: str) -> np.ndarray:
        """Per draw, w_a / (w_a + w_b): the probability that `a` ranks above `b` next time."""
        w = self.draws
        ia, ib = self.systems.index(a), self.systems.index(b)
        return w[:, ia] / (w[:, ia] + w[:, ib])


def _concentration(value: Any, k: int) -> np.ndarray:
    """Return the Dirichlet's K concentrations from one positive number or K of them."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        values = np.full(k, float(value))
    elif isinstance(value, Sequence | np.ndarray) and not isinstance(value, str):
        try:
            values = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise InputTypeError(f"`concentration` must be numbers, got {value!r}.") from None
        if values.shape != (k,):
            raise InputError(
                f"`concentration` gives {values.size} values for {k} systems; give one number "
                "or one per system."
            )
    else:
        raise InputTypeError(
            "`concentration` must be a positive number or one per system, got "
            f"{type(value).__name__}."
        )
    if not np.all(np.isfinite(values) & (values > 0)):
        raise InputError(f"`concentration` must be positive and finite, got {value!r}.")
    return values


def plackett_luce(
    data: Any,
    *,
    metric: str | None = None,
    systems: Sequence[str] | None = None,
    higher_is_better: bool | None = None,
    concentration: float | Sequence[float] = 1.0,
    ties: str = "marginal",
    draws: int = 1000,
    tune: int = 500,
    chains: int = 4,
    cores: int | None = None,
    backend: str = "auto",
    rng: RNGLike = None,
) -> PlackettLuceFit:
    """Fit the Bayesian Plackett–Luce model to the systems' rankings over data sets.

    Parameters
    ----------
    data : ScoreTable, pandas.DataFrame or 2-D array
        A :class:`~isbetter.cv.scores.ScoreTable` (per-fold scores are averaged per
        data set and system), or one row per data set and one column per system.
    metric : str, optional
        With a ScoreTable: the metric column (default: the first).
    systems : sequence of str, optional
        The systems, in the order to report them (default: all; an array's columns
        are named ``"1"``, ``"2"``, ...).
    higher_is_better : bool, optional
        Direction of the scores; default: the ScoreTable's, else True.
    concentration : float or sequence of float, default: 1.0
        The Dirichlet prior's concentration α, one for all systems (1: uniform on
        the simplex, scmamp's default) or one per system.
    ties : {"marginal", "random"}, default: "marginal"
        ``"marginal"``: a data set's tied systems take their places in any order, the
        likelihood summing over those orders (see the module's notes; groups of up
        to :data:`MAX_TIED` systems, :data:`MAX_TIED_PYMC` with PyMC's sampler);
        ``"random"``: ties broken at random with the seed, scmamp's rule.
    draws, tune, chains : int
        NUTS draws and tuning steps per chain, and chains.
    cores : int, optional
        Chains run in parallel on this many cores (default ``min(chains, 2)``).
    backend : {"auto", "nutpie", "pymc"}, default: "auto"
        See :func:`~isbetter.inference.sampling.resolve_backend`.
    rng : int, numpy.random.Generator or None
        The one seed: its first stream breaks ties (``ties="random"``), its second
        seeds NUTS.

    Returns
    -------
    PlackettLuceFit

    Warns
    -----
    ConvergenceWarning
        Poor convergence of the weights.

    Examples
    --------
    >>> fit = plackett_luce(scores, rng=1)  # doctest: +SKIP
    >>> fit.ranks().p_best, fit.ranks().p_wins_next  # doctest: +SKIP
    """
    start = time.perf_counter()
    names, frame, direction = score_matrix(
        data,
        metric,
        systems,
        higher_is_better,
        "the Plackett–Luce model ranks the systems on each data set and needs",
    )
    scores = frame.to_numpy()
    concentrations = _concentration(concentration, scores.shape[1])
    ties = check_choice(ties, "ties", tuple(TIES))
    sampler = _sampler_settings(draws, tune, chains, cores, backend)
    seed = resolve_seed(rng)
    root = np.random.SeedSequence(seed)
    rankings, ends, tied = _rankings(scores, direction, ties, child(root, 0))
    if ties == "marginal":
        _check_groups(ends, list(frame.index), sampler["backend"])
    orders = _unique_orders(rankings, ends)
    idata = _sample(orders, concentrations, **sampler, seed=sampler_seed(child(root, 1)))
    diagnostics = diagnose(idata, DIAGNOSED, backend=sampler["backend"])
    warn_if_poor(diagnostics, "Plackett–Luce model")
    alphas = tuple(float(a) for a in concentrations)
    return PlackettLuceFit(
        systems=tuple(names),
        weights=idata.posterior["w"].to_numpy(),
        rankings=rankings,
        ends=ends,
        datasets=tuple(str(d) for d in frame.index),
        tied_datasets=tied,
        ties=ties,
        higher_is_better=bool(direction),
        concentration=alphas,
        diagnostics=diagnostics,
        seconds=time.perf_counter() - start,
        settings=make_settings(
            METHOD,
            seed,
            concentration=alphas[0] if len(set(alphas)) == 1 else list(alphas),
            **{k: v for k, v in sampler.items() if k != "cores"},
            ties=TIES[ties],
            tied_datasets=tied,
            n_datasets=scores.shape[0],
            higher_is_better=bool(direction),
        ),
    )


def _sampler_settings(
    draws: int, tune: int, chains: int, cores: int | None, backend: str
) -> dict[str, Any]:
    """Return the checked NUTS settings, in the order the fit's settings record them."""
    return {
        "draws": check_positive_int(draws, "draws"),
        "tune": check_positive_int(tune, "tune", minimum=0),
        "chains": check_positive_int(chains, "chains"),
        "cores": None if cores is None else check_positive_int(cores, "cores"),
        "backend": resolve_backend(backend),
    }
