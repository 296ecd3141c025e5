"""Paired and unpaired Bayesian models of two classifiers' contingency tables.

Zhang, Wang, Yilmaz, Wang, Zhou (SIGIR 2016) model the predictions of two
binary classifiers A and B on the same N test documents. With ``n+`` positive
documents and the counts ``c+`` / ``c-`` of the joint outcomes
(A, B) in ((1,1), (1,0), (0,1), (0,0)) among positives / negatives:

**Paired model** (section 3.1.2)::

    mu ~ Beta(beta+, beta-)          n+ ~ Bin(N, mu)
    theta+ ~ Dir(alpha+)             c+ ~ Mult(n+, theta+)
    theta- ~ Dir(alpha-)             c- ~ Mult(n-, theta-)
    rho+_A = theta+_11 + theta+_10   rho-_A = theta-_11 + theta-_10
    rho+_B = theta+_11 + theta+_01   rho-_B = theta-_11 + theta-_01

**Unpaired model** (section 3.1.1): each classifier has its own
``mu ~ Beta(beta)``, ``rho+ ~ Beta(a+)``, ``rho- ~ Beta(a-)`` with binomial counts, as
if A and B had been tested on two different test sets.

Every measure of the contingency table follows from the rates
``tp = mu rho+``, ``fp = (1 - mu) rho-``, ``fn = mu (1 - rho+)``,
``tn = (1 - mu)(1 - rho-)`` (N cancels).

All priors are conjugate, so the posterior is exact:
``mu | data ~ Beta(beta+ + n+, beta- + n-)`` and
``theta± | data ~ Dir(alpha± + c±)``. :func:`sample_delta` samples it directly
with numpy (no MCMC), vectorised over draws and over any leading dimensions
of the counts (independent test sets, as in the power analysis).

The sampler is built so that exchanging A and B negates the draws exactly (same
seed): the two Gamma variates of the discordant cells (1,0) and (0,1) are drawn
in the order of their shape parameters (ties by an orientation of the whole
table), so the random stream does not depend on which system is called A. Only
a fully symmetric table (then A and B are interchangeable) mirrors in
distribution alone.

References
----------
.. [1] Zhang, Wang, Yilmaz, Wang, Zhou (2016). Bayesian performance comparison of
   text classifiers. SIGIR.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.validate import check_choice
from isbetter.core.vocabulary import F1_MODELS
from isbetter.f1.measures import Measure
from isbetter.f1.predictions import JointCounts

__all__ = ["F1Model", "F1Prior", "Model", "sample_delta", "sample_rates"]

Model = Literal["paired", "unpaired"]


def _positive_tuple(values: Any, n: int, name: str) -> tuple[float, ...]:
    arr = np.asarray(values, dtype=float).ravel()
    if arr.shape != (n,) or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise InputError(
            f"`{name}` must be {n} positive numbers (Dirichlet/Beta concentrations), "
            f"got {values!r}."
        )
    return tuple(float(x) for x in arr)


@dataclass(frozen=True)
class F1Prior:
    """Prior hyper-parameters of the paired and unpaired models (Zhang et al. 2016).

    The defaults are the uniform priors of the paper's experiments (section 3.1).

    Attributes
    ----------
    mu : tuple of 2 floats, default: (1, 1)
        ``Beta(beta+, beta-)`` prior of the proportion of positive documents.
    theta_pos, theta_neg : tuple of 4 floats, default: (1, 1, 1, 1)
        Dirichlet priors of the joint outcomes (1,1), (1,0), (0,1), (0,0) of
        (A, B) on positive / negative documents (paired model).
    rho_pos, rho_neg : tuple of 2 floats, default: (1, 1)
        ``Beta`` priors of each classifier's rate of positive predictions on
        positive / negative documents (unpaired model), as (a_1, a_0).

    Examples
    --------
    >>> F1Prior().theta_pos
    (1.0, 1.0, 1.0, 1.0)
    >>> F1Prior(mu=(0.5, 0.5)).mu
    (0.5, 0.5)
    """

    mu: tuple[float, ...] = (1.0, 1.0)
    theta_pos: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0)
    theta_neg: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0)
    rho_pos: tuple[float, ...] = (1.0, 1.0)
    rho_neg: tuple[float, ...] = (1.0, 1.0)

    def __post_init__(self) -> None:
        for name, n in (
            ("mu", 2),
            ("theta_pos", 4),
            ("theta_neg", 4),
            ("rho_pos", 2),
            ("rho_neg", 2),
        ):
            object.__setattr__(self, name, _positive_tuple(getattr(self, name), n, name))

    def swapped(self) -> F1Prior:
        """Return the prior with the roles of A and B exchanged."""
        tp, tn = self.theta_pos, self.theta_neg
        return F1Prior(
            mu=self.mu,
            theta_pos=(tp[0], tp[2], tp[1], tp[3]),
            theta_neg=(tn[0], tn[2], tn[1], tn[3]),
            rho_pos=self.rho_pos,
            rho_neg=self.rho_neg,
        )

    @property
    def symmetric(self) -> bool:
        """True when the prior treats A and B alike (then the prior of delta is symmetric)."""
        return (self.theta_pos[1] == self.theta_pos[2]) and (self.theta_neg[1] == self.theta_neg[2])

    def to_dict(self) -> dict[str, list[float]]:
        """JSON-safe hyper-parameters."""
        return {
            k: list(getattr(self, k))
            for k in ("mu", "theta_pos", "theta_neg", "rho_pos", "rho_neg")
        }


@dataclass(frozen=True)
class F1Model:
    """A model of :func:`~isbetter.compare_f1` with its prior: ``model="paired"`` is ``F1Model()``.

    Attributes
    ----------
    name : {"paired", "unpaired", "hierarchical"}, default: "paired"
        The model (see :func:`~isbetter.compare_f1`).
    prior : F1Prior, optional
        Hyper-parameters of the paired and unpaired models; default: uniform
        (Beta(1, 1), Dir(1, 1, 1, 1)). The hierarchical model has its own
        (:mod:`isbetter.f1.icdm`).

    Examples
    --------
    >>> F1Model("unpaired", prior=F1Prior(mu=(2, 2))).prior.mu
    (2.0, 2.0)
    """

    name: str = "paired"
    prior: F1Prior | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", check_choice(self.name, "model", F1_MODELS))
        if self.prior is not None and not isinstance(self.prior, F1Prior):
            raise InputTypeError(f"`prior` must be an F1Prior, got {type(self.prior).__name__}.")
        if self.name == "hierarchical" and self.prior is not None:
            raise InputError(
                "`prior` sets the paired and unpaired models' hyper-parameters; the "
                "hierarchical model has its own (see isbetter.f1.icdm). Leave `prior` unset."
            )


Cells = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _cells(mu: np.ndarray, rho_pos: np.ndarray, rho_neg: np.ndarray) -> Cells:
    """Rates (tp, fp, fn, tn) of one classifier; they sum to 1."""
    tp = mu * rho_pos
    fp = rho_neg - mu * rho_neg  # (1 - mu) rho-
    fn = mu - tp  # mu (1 - rho+)
    tn = 1.0 - mu
    tn -= fp  # (1 - mu)(1 - rho-)
    return tp, fp, fn, tn


def _mt_accept(d: Any, c: Any, x: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One round of Marsaglia & Tsang's test: (accepted?, value). Overwrites `x`."""
    v = c * x
    v += 1.0
    ok = v > 0
    x *= x  # x**2
    q = x * x
    q *= -0.0331
    q += 1.0
    accept = u < q  # the squeeze accepts ~98 %: no logarithm needed for those
    accept &= ok
    v3 = v * v
    v3 *= v
    rest = np.flatnonzero(ok & ~accept)
    if rest.size:
        dr = d if np.ndim(d) == 0 else np.broadcast_to(d, x.shape).reshape(-1)[rest]
        vr = v3.reshape(-1)[rest]
        full = np.log(u.reshape(-1)[rest]) < 0.5 * x.reshape(-1)[rest] + dr * (
            1.0 - vr + np.log(vr)
        )
        accept.reshape(-1)[rest[full]] = True
    v3 *= d
    return accept, v3


def _standard_gamma(shape: Any, size: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Gamma(shape, 1) draws of shape `size` (`shape` broadcasts), by Marsaglia & Tsang (2000).

    The exact rejection sampler numpy uses too, vectorised: normals and uniforms
    are drawn in bulk for all draws at once and only the few rejected ones (about
    1-5 %) are redrawn. Shapes below 1 use ``Gamma(a) = Gamma(a + 1) * U**(1 / a)``.
    """
    a = np.asarray(shape, dtype=float)
    small = a < 1
    d = np.where(small, a + 1, a) - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    # normals and uniforms in single precision (resolution ~6e-8, far below any Monte
    # Carlo error) halve the cost of the dominant step; the arithmetic is in double precision.
    # Uniforms are taken in (0, 1] so that log(u) is finite.
    x = rng.standard_normal(size, dtype=np.float32).astype(float)
    accept, out = _mt_accept(d, c, x, 1.0 - rng.random(size, dtype=np.float32))
    todo = np.flatnonzero(~accept)
    if todo.size:
        flat = out.reshape(-1)
        flat_d = np.broadcast_to(d, size).reshape(-1)[todo]
        flat_c = np.broadcast_to(c, size).reshape(-1)[todo]
        while todo.size:
            ok, val = _mt_accept(
                flat_d, flat_c, rng.standard_normal(todo.size), 1.0 - rng.random(todo.size)
            )
            flat[todo[ok]] = val[ok]
            todo, flat_d, flat_c = todo[~ok], flat_d[~ok], flat_c[~ok]
        out = flat.reshape(size)
    if np.any(small):
        boost = rng.random(size) ** (1.0 / np.where(small, a, 1.0))
        out = np.where(small, out * boost, out)
    return out


def orientation(diffs: np.ndarray) -> np.ndarray:
    """Return whether the first non-zero of `diffs` (last axis) is positive (True if none).

    `diffs` are differences "A-side minus B-side" of paired quantities; exchanging A
    and B negates them, so the result flips too, except for fully symmetric input.
    It decides the draw order of tied pairs, which keeps the random stream
    exchange-symmetric (see :func:`_dirichlet_symmetric`).
    """
    d = np.asarray(diffs)
    nz = d != 0
    idx = np.argmax(nz, axis=-1)
    first = np.take_along_axis(d, idx[..., None], axis=-1)[..., 0]
    return np.where(nz.any(axis=-1), first > 0, True)


def _dirichlet_symmetric(
    shape4: np.ndarray, size: tuple[int, ...], rng: np.random.Generator, orient: np.ndarray
) -> tuple[np.ndarray, ...]:
    """Unnormalised Dirichlet draws (four Gamma arrays of shape `size`), A/B-exchange symmetric.

    Cells (1,1) and (0,0) are drawn first; then the discordant cells (1,0) and
    (0,1) in increasing order of their shape parameters (ties: by `orient`, the
    data set's orientation, which flips when A and B are exchanged).
    """
    s = shape4[..., None, :]  # (..., 1, 4): broadcast over draws
    g11 = _standard_gamma(s[..., 0], size, rng)
    g00 = _standard_gamma(s[..., 3], size, rng)
    first = np.where(s[..., 1] == s[..., 2], orient, s[..., 1] < s[..., 2])
    g_lo = _standard_gamma(np.minimum(s[..., 1], s[..., 2]), size, rng)
    g_hi = _standard_gamma(np.maximum(s[..., 1], s[..., 2]), size, rng)
    if first.ndim == 0 or first.size == 1:
        g10, g01 = (g_lo, g_hi) if bool(np.all(first)) else (g_hi, g_lo)
    else:
        g10 = np.where(first, g_lo, g_hi)
        g01 = np.where(first, g_hi, g_lo)
    return g11, g10, g01, g00


def _beta(
    a: np.ndarray, b: np.ndarray, size: tuple[int, ...], rng: np.random.Generator
) -> np.ndarray:
    ga = _standard_gamma(a, size, rng)
    gb = _standard_gamma(b, size, rng)
    return ga / (ga + gb)


def sample_rates(
    counts: JointCounts,
    *,
    model: Model = "paired",
    prior: F1Prior | None = None,
    draws: int = 50_000,
    rng: np.random.Generator,
) -> tuple[Cells, Cells]:
    """Draw from the exact posterior the contingency rates of A and of B.

    Parameters
    ----------
    counts : JointCounts
        Joint outcome counts; leading dimensions are independent test sets.
    model : {"paired", "unpaired"}, default: "paired"
        The model of Zhang et al. (2016) to use.
    prior : F1Prior, optional
        Hyper-parameters; default: uniform priors.
    draws : int, default: 50000
        Posterior draws per test set.
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    cells_a, cells_b : tuple of 4 numpy.ndarray
        ``(tp, fp, fn, tn)`` rates of A and of B, each of shape ``(..., draws)``.
        Zero counts give draws from the prior.
    """
    prior = prior or F1Prior()
    if model not in ("paired", "unpaired"):
        raise InputError(f"Unknown model {model!r}. Available: 'paired', 'unpaired'.")
    return _sample_rates(counts, model, prior, draws, rng)


def _sample_rates(
    counts: JointCounts, model: str, prior: F1Prior, draws: int, rng: np.random.Generator
) -> tuple[Cells, Cells]:
    pos = np.asarray(counts.pos, dtype=float)
    neg = np.asarray(counts.neg, dtype=float)
    n_pos = pos.sum(axis=-1)[..., None]
    n_neg = neg.sum(axis=-1)[..., None]
    size = n_pos.shape[:-1] + (draws,)
    if model == "paired":
        mu = _beta(prior.mu[0] + n_pos, prior.mu[1] + n_neg, size, rng)
        sp, sq = pos + np.asarray(prior.theta_pos), neg + np.asarray(prior.theta_neg)
        orient = orientation(np.stack([sp[..., 1] - sp[..., 2], sq[..., 1] - sq[..., 2]], -1))
        orient = np.asarray(orient)[..., None]
        p11, p10, p01, p00 = _dirichlet_symmetric(sp, size, rng, orient)
        q11, q10, q01, q00 = _dirichlet_symmetric(sq, size, rng, orient)
        tot_p = p11 + p10
        tot_p += p01
        tot_p += p00
        tot_q = q11 + q10
        tot_q += q01
        tot_q += q00
        # rho = (g11 + g10) / total for A, (g11 + g01) / total for B
        rp_a, rp_b, rn_a, rn_b = p11 + p10, p11 + p01, q11 + q10, q11 + q01
        rp_a /= tot_p
        rp_b /= tot_p
        rn_a /= tot_q
        rn_b /= tot_q
        return _cells(mu, rp_a, rn_a), _cells(mu, rp_b, rn_b)
    (tp_a, fp_a, _, _), (tp_b, fp_b, _, _) = counts.cells()
    tp_a, fp_a = np.asarray(tp_a, float)[..., None], np.asarray(fp_a, float)[..., None]
    tp_b, fp_b = np.asarray(tp_b, float)[..., None], np.asarray(fp_b, float)[..., None]
    # draw the system with the smaller (tp, fp) first, so A/B exchange negates delta
    a_first = (tp_a < tp_b) | ((tp_a == tp_b) & (fp_a <= fp_b))
    lo_tp, hi_tp = np.where(a_first, tp_a, tp_b), np.where(a_first, tp_b, tp_a)
    lo_fp, hi_fp = np.where(a_first, fp_a, fp_b), np.where(a_first, fp_b, fp_a)

    def one(tp: np.ndarray, fp: np.ndarray) -> Cells:
        mu = _beta(prior.mu[0] + n_pos, prior.mu[1] + n_neg, size, rng)
        rp = _beta(prior.rho_pos[0] + tp, prior.rho_pos[1] + n_pos - tp, size, rng)
        rn = _beta(prior.rho_neg[0] + fp, prior.rho_neg[1] + n_neg - fp, size, rng)
        return _cells(mu, rp, rn)

    first, second = one(lo_tp, lo_fp), one(hi_tp, hi_fp)
    cells_a = tuple(np.where(a_first, f, s) for f, s in zip(first, second, strict=True))
    cells_b = tuple(np.where(a_first, s, f) for f, s in zip(first, second, strict=True))
    return cells_a, cells_b  # type: ignore[return-value]


def sample_delta(
    counts: JointCounts,
    measure: Measure,
    *,
    model: Model = "paired",
    prior: F1Prior | None = None,
    draws: int = 50_000,
    rng: np.random.Generator,
) -> np.ndarray:
    """Draw the posterior of ``delta = psi(A) - psi(B)`` (oriented: positive = A better).

    For a lower-is-better `measure` (e.g. DCF) ``delta = psi(B) - psi(A)``.

    Returns
    -------
    numpy.ndarray
        Shape ``(..., draws)``.

    Examples
    --------
    >>> import numpy as np
    >>> from isbetter.f1.measures import f1
    >>> c = JointCounts(pos=np.array([300, 300, 200, 200]), neg=np.array([200, 200, 300, 300]))
    >>> d = sample_delta(c, f1, draws=20_000, rng=np.random.default_rng(1))
    >>> round(float(d.mean()), 2)   # F1_A = 0.6, F1_B = 0.5
    0.1
    """
    cells_a, cells_b = sample_rates(counts, model=model, prior=prior, draws=draws, rng=rng)
    return measure.difference(measure(*cells_a), measure(*cells_b))
