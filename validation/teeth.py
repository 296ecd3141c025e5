"""Teeth: how often does each calibration test of the suite catch a mildly wrong posterior?

Usage (from the repository root)::

    python -m validation.teeth            # full pools: ~1 h to build on a busy machine
    python -m validation.teeth --quick    # smaller pools (or a full run's first studies)
    python -m validation.teeth --joint-tails components   # the joint tests on another form

For every simulation-based calibration (SBC) or coverage test of the suite, three
miscalibrations are planted into the test's own statistic: the posterior's sd
times 0.7 (too narrow), times 1.5 (too wide), and its mean shifted by 0.5
posterior sd. The script prints one line per test and plant, ``TEST PLANT
DETECTION_RATE`` (± its Monte Carlo standard error), also the rate without a
plant (the false alarms), and exits with 1 when a test catches a plant less
often than 0.8.

Rerunning a test's MCMC fits hundreds of times would cost hours, so the rates
are estimated from a pool. Each pool holds simulated studies of the test's
design (truth from the prior, data from the model, a fit by isbetter's code),
their posterior draws thinned as the test thins them, the mean and sd of all
draws, and the truths; it is built once and cached (``--cache``; by default
``$XDG_CACHE_HOME/isbetter/teeth``, never the working directory). A plant
transforms the draws (``mean + k (draw - mean) + shift sd``); the rate is the
fraction of ``--subsets`` random subsets of the test's size (drawn without
replacement from the pool) on which the test's exact pass/fail rule fails. Against
a plant, each subset's studies take fresh pseudo-truths: one of each study's own
unplanted draws, ranked among its other draws (uniform without a plant, as a
calibrated posterior's truth is; :meth:`RankPool.pseudo_statistic`), so the rate
is the test's power against the plant on calibrated posteriors of the pool's
studies. Ranking the studies' own truths instead (``--truths real``, the rates as
first measured) adds the pool's luck: a subset of 200 from 250 is most of the pool,
so every subset shares the pool's own departure from uniformity, and on calibrated
normal posteriors a plant caught 0.62 of the time gives rates whose sd over pools
is 0.37 at 250 studies and 0.23 at 500, where the printed error was 0.05; with
pseudo-truths 0.07. Without a plant the truths are the studies' own: that line is
the test's false alarms on this pool. A test that checks several quantities (delta0,
std0, nu, delta_1) gets each plant in one quantity at a time, as a real error need
not touch them all, and its rate is that of its weakest quantity (named on the
line): planted into every quantity at once, the hierarchical test would catch
everything through nu alone, whose prior-dominated posterior is far from normal.
The Monte Carlo standard error printed is the binomial one of the subsets,
``sqrt(r (1 - r) / subsets)`` (at least ``1 / subsets``). The false alarms' line
carries the pool's own sampling error as well: on calibrated pools of 250 (the
joint model's quick pools) the joint test's false alarms average 0.013, but exceed
0.05 on 6 % of pools and 0.17 on 2 % (docs/teeth.md).

The correlated t-test's posterior is an exact Student t: its pool holds the
location, scale and degrees of freedom, and a plant moves and scales the
interval and the CDF whose value at the truth (the PIT) the SBC tests (the shift
uses the t's sd, its scale when ``df <= 2`` where the sd is infinite).

The joint model's pools, the items' hierarchical model's, the Plackett–Luce model's and
the hierarchical model's ``hier5`` are also the studies of their calibration tests
(``tests/cv/test_joint_calibration.py``,
``tests/items/test_items_hierarchical_calibration.py``,
``tests/ranking/test_plackett_luce_calibration.py`` and
``tests/inference/test_calibration.py`` take the first ones through :func:`studies`), so
the slow step fits them once. The joint pools are fitted with the
joint model's default prior; with ``--joint-tails`` another form of its tails (its
pools ``joint{q}@{tails}``, the same seeds, its tests named
``joint_calibration@{tails}::...``) stands in for the default's. The cache key of
every simulated pool (all but the correlated t-test's, whose key is its seed and size)
holds a digest of isbetter's source and of the simulation code, so a change of the
model or of its default rebuilds them rather than test old fits. See ``docs/teeth.md``
for the table.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import importlib.metadata
import inspect
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from validation.calibration import (
    HIERARCHICAL_PARAMETERS,
    HierarchicalSetting,
    draw_f1_counts,
    draw_f1_truth,
    hierarchical_replication,
    true_f1_delta,
)
from validation.pl_sbc import PLSetting
from validation.pl_sbc import quantities as pl_quantities
from validation.pl_sbc import replication as pl_replication
from validation.runner import replicate

N_RANKS = 100  # 99 thinned draws: ranks 0..99, as every SBC test of the suite
#: name -> (scale of the posterior about its mean, shift in posterior sds)
PLANTS: dict[str, tuple[float, float]] = {
    "none": (1.0, 0.0),
    "sd*0.7": (0.7, 0.0),
    "sd*1.5": (1.5, 0.0),
    "mean+0.5sd": (1.0, 0.5),
}
REQUIRED = 0.8  # detection rate every test must reach against every plant
CALIBRATED_P = 1e-3  # the suite's threshold for a calibrated fit
#: the joint pools' tuning steps: the form's default up to stop 45 (SHARED_SAMPLER's; the
#: components' was 1000 too, now 2000). The pools keep 1000, where they were measured
#: (docs/teeth.md): SBC at the shorter tuning checks the sampler at least as hard
JOINT_POOL_TUNE = 1000


# --------------------------------------------------------------------------- pools
@dataclass(frozen=True)
class RankPool:
    """Studies' thinned draws ``(n, quantity, L)``, all draws' mean and sd, and truths.

    MCMC pools also hold each fit's divergent transitions (``divergences``, ``(n,)``).
    """

    draws: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    truth: np.ndarray
    divergences: np.ndarray | None = None

    def head(self, n: int) -> RankPool:
        """Return the first `n` studies."""
        div = None if self.divergences is None else self.divergences[:n]
        return RankPool(self.draws[:n], self.mean[:n], self.sd[:n], self.truth[:n], div)

    @property
    def quantities(self) -> int:
        """Number of quantities whose ranks the test checks."""
        return int(self.draws.shape[1])

    def __len__(self) -> int:
        return int(self.draws.shape[0])

    def statistic(self, scale: float, shift: float, only: int = 0) -> np.ndarray:
        """Ranks ``(n, quantity)`` of the truths among the draws, quantity `only` planted."""
        m, s = self.mean[:, only, None], self.sd[:, only, None]
        planted = self.draws.copy()
        planted[:, only] = m + scale * (self.draws[:, only] - m) + shift * s
        return (planted < self.truth[..., None]).sum(axis=-1)

    def pseudo_statistic(
        self, scale: float, shift: float, only: int, chosen: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """Ranks ``(subsets, size, quantity)`` of pseudo-truths of the `chosen` studies.

        Each chosen study takes one of its own L unplanted draws, the same one for every
        quantity, as its truth and ranks it among its other L - 1 draws, quantity `only`
        planted; the rank plus a uniform share of the ties and of one step, over L, is
        uniform on (0, 1) without a plant whatever the posterior (the draw is one of L
        exchangeable values), and is binned to ranks ``0 .. L`` as the truths' are.
        """
        n_draws = self.draws.shape[-1]
        pick = rng.integers(n_draws, size=chosen.shape)[..., None]
        out = np.empty((*chosen.shape, self.quantities), dtype=np.int64)
        for k in range(self.quantities):
            d = self.draws[chosen, k]  # (subsets, size, L)
            t = np.take_along_axis(d, pick, -1)
            if k == only:
                m, s = self.mean[chosen, k, None], self.sd[chosen, k, None]
                d = m + scale * (d - m) + shift * s
            own = np.take_along_axis(d, pick, -1)[..., 0]  # the pseudo-truth's own draw, planted
            below = (d < t).sum(axis=-1) - (own < t[..., 0])
            ties = (d == t).sum(axis=-1) - (own == t[..., 0])
            u = (below + rng.uniform(size=below.shape) * (ties + 1)) / n_draws
            out[..., k] = np.minimum((u * (n_draws + 1)).astype(np.int64), n_draws)
        return out


@dataclass(frozen=True)
class TPool:
    """Exact Student-t posteriors ``(n,)`` of the correlated t-test and the true mean."""

    loc: np.ndarray
    scale: np.ndarray
    df: np.ndarray
    truth: float

    quantities = 1

    def __len__(self) -> int:
        return int(self.loc.size)

    def statistic(self, scale: float, shift: float, only: int = 0) -> np.ndarray:
        """``(n, 2)``: whether the planted 95% interval covers the truth, and its PIT value."""
        return self._judged(scale, shift, np.arange(len(self)), self.truth)

    def pseudo_statistic(
        self, scale: float, shift: float, only: int, chosen: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """``(subsets, size, 2)`` of the `chosen` studies, each truth drawn from its posterior."""
        truth = self.loc[chosen] + self.scale[chosen] * rng.standard_t(self.df[chosen])
        return self._judged(scale, shift, chosen, truth)

    @functools.cached_property
    def _quantile(self) -> np.ndarray:
        return np.asarray(stats.t.ppf(0.975, self.df))  # the 95% interval's half-width / scale

    def _judged(self, scale: float, shift: float, idx: np.ndarray, truth: Any) -> np.ndarray:
        loc, sc, df = self.loc[idx], self.scale[idx], self.df[idx]
        ratio = np.divide(df, df - 2, out=np.ones_like(df), where=df > 2)
        sd = sc * np.sqrt(ratio)  # the t's sd; its scale where df <= 2
        centre, width = loc + shift * sd, scale * sc
        covered = np.abs(truth - centre) <= width * self._quantile[idx]
        return np.stack([covered, stats.t.cdf((truth - centre) / width, df)], axis=-1)


def _cached(cache: Path, name: str, n: int, spec: str, build: Callable[[], dict[str, Any]]) -> Any:
    """Pool `name` of `n` studies: the first `n` of a cached pool of at least `n`, or built.

    Study ``r`` of a pool always comes from the same seed, so a pool's first `n`
    studies are the pool of `n` (the quick run reuses a full run's pool).
    """
    digest = hashlib.sha256(spec.encode()).hexdigest()[:12]
    found = sorted(cache.glob(f"{name}-{digest}-*.npz"), key=lambda p: int(p.stem.split("-")[-1]))
    usable = [p for p in found if int(p.stem.split("-")[-1]) >= n]
    if usable:
        with np.load(usable[0]) as f:
            arrays = {k: f[k] if f[k].ndim == 0 else f[k][:n] for k in f.files}
    else:
        start = time.perf_counter()
        arrays = build()
        cache.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(cache / f"{name}-{digest}-{n}.npz", **arrays)
        print(f"  pool {name}: built in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    if "df" in arrays:
        return TPool(arrays["loc"], arrays["scale"], arrays["df"], float(arrays["truth"]))
    div = arrays.get("divergences")
    return RankPool(arrays["draws"], arrays["mean"], arrays["sd"], arrays["truth"], div)


def f1_pool(n: int, seed: int) -> dict[str, Any]:
    """Paired F1 model: test sets of 200 documents; delta of F1 and accuracy.

    As ``test_calibration._f1_pvalues``: truth from the prior, one test set, 99 exact
    posterior draws for the ranks (400 more for the mean and sd).
    """
    from isbetter import get_measure
    from isbetter.f1.paired import sample_delta

    rng = np.random.default_rng(seed)
    out: dict[str, list[np.ndarray]] = {"draws": [], "mean": [], "sd": [], "truth": []}
    for start in range(0, n, 2000):
        truth = draw_f1_truth(min(2000, n - start), rng)
        counts = draw_f1_counts(truth, 200, rng)
        per = [(sample_delta(counts, get_measure(m), draws=499, rng=rng), m) for m in F1_MEASURES]
        out["draws"].append(np.stack([d[:, : N_RANKS - 1] for d, _ in per], axis=1))
        out["mean"].append(np.stack([d.mean(axis=1) for d, _ in per], axis=1))
        out["sd"].append(np.stack([d.std(axis=1) for d, _ in per], axis=1))
        t = [true_f1_delta(truth, get_measure(m)) for _, m in per]
        out["truth"].append(np.stack(t, axis=1))
    return {k: np.concatenate(v) for k, v in out.items()}


F1_MEASURES = ("f1", "accuracy")


def _kept(results: list[dict[str, Any]], quantities: tuple[str, ...]) -> dict[str, Any]:
    done = [r for r in results if "kept" in r]  # failed fits are left out, as the tests do
    kept = [r["kept"] for r in done]
    out = {
        "draws": np.array([[k["draws"][q] for q in quantities] for k in kept]),
        "mean": np.array([[k["mean"][q] for q in quantities] for k in kept]),
        "sd": np.array([[k["sd"][q] for q in quantities] for k in kept]),
        "truth": np.array([[k["truth"][q] for q in quantities] for k in kept]),
    }
    if all("divergences" in r for r in done):
        out["divergences"] = np.array([r["divergences"] for r in done])
    return out


#: the setting of ``tests/inference/test_calibration.py`` (one core per fit here)
HIERARCHICAL = HierarchicalSetting(5, draws=300, tune=300, chains=2, cores=1)


def _mcmc_pool(
    fn: Callable[..., Any],
    setting: Any,
    quantities: tuple[str, ...],
    n: int,
    seed: int,
    workers: int,
    label: str,
) -> dict[str, Any]:
    """`n` studies of replication `fn` at `setting`, with their kept draws (:func:`_kept`)."""
    res = replicate(fn, setting, (N_RANKS, True), reps=n, seed=seed, workers=workers, label=label)
    return _kept(res, quantities)


def hierarchical_pool(n: int, seed: int, workers: int) -> dict[str, Any]:
    """Hierarchical model, q = 5 data sets x 10 folds, as the suite's SBC test."""
    return _mcmc_pool(
        hierarchical_replication,
        HIERARCHICAL,
        HIERARCHICAL_PARAMETERS,
        n,
        seed,
        workers,
        "hierarchical q=5",
    )


def joint_setting(q: int, tails: str | None = None) -> Any:
    """Return the joint pools' setting: K = 4 systems on q data sets, the default prior.

    ``JointSetting``'s tails and spread prior are ``JointPriors()``'s, whatever they are
    (``tests/cv/test_joint_calibration.py`` checks it), or with `tails` that form of the
    tails and its own default spread prior (``JointPriors(tails=tails)``'s); 2 chains x
    300 draws after :data:`JOINT_POOL_TUNE` tuning steps, at the form's target acceptance
    (which ``joint_fit`` takes itself), one core per fit (the pool runs `workers` fits at
    once). With 300 tuning steps at the components' 0.99 the q = 50 pool's nu min and
    scale 0-1 failed the test (docs/teeth.md).
    """
    from dataclasses import replace

    from isbetter.cv.joint.spec import JointPriors
    from validation.joint_sbc import JointSetting

    s = JointSetting(q, draws=300, tune=JOINT_POOL_TUNE, chains=2, cores=1)
    if tails is None:
        return s
    return replace(s, tails=tails, spread_prior=JointPriors(tails=tails).spread_prior)  # type: ignore[arg-type]


def joint_key(q: int, tails: str | None = None) -> str:
    """Return the key of the joint pool at q data sets of the form `tails`.

    ``joint{q}`` for the default form (``JointPriors().tails``, or `tails` None), the
    pool of the slow test (:func:`joint_studies`); ``joint{q}@{tails}`` for another form.
    Both draw study ``r`` from the same seed (:func:`_pool_seed` of ``joint{q}``).
    """
    from isbetter.cv.joint.spec import JointPriors

    return f"joint{q}" if tails in (None, JointPriors().tails) else f"joint{q}@{tails}"


def _joint_form(key: str) -> tuple[int, str | None]:
    """Return q and the form of the tails (None: the default) of joint pool `key`."""
    base, _, tails = key.partition("@")
    return int(base.removeprefix("joint")), tails or None


def joint_pool(q: int, n: int, seed: int, workers: int, tails: str | None = None) -> dict[str, Any]:
    """Joint model of K = 4 systems on q data sets (the default prior, or that of `tails`)."""
    from validation.joint_sbc import replication

    s = joint_setting(q, tails)
    return _mcmc_pool(replication, s, s.quantities, n, seed, workers, f"joint q={q}")


def items_hierarchical_pool(n: int, seed: int, workers: int) -> dict[str, Any]:
    """Fit the items' hierarchical model, 6 subtasks x 60 items, as its SBC test."""
    from validation.items_sbc import QUANTITIES, ItemsSetting, replication

    # one core per fit: the pool runs `workers` fits at once
    s = ItemsSetting(cores=1)
    return _mcmc_pool(replication, s, QUANTITIES, n, seed, workers, "items hierarchical")


# ICDM model of two confusion matrices (validation/icdm_sbc.py): exact and NUTS pools; the
# NUTS pool is also the studies of its slow calibration test (``studies("icdm", ...)``)
#: the simulation code of the ICDM pools (their cache keys' digest)
ICDM_SIMULATION = ("icdm_sbc.py", "calibration.py", "runner.py")
#: studies of the ICDM model's NUTS SBC test (tests/f1/test_f1_icdm_calibration.py, slow)
ICDM_TEST_SIZE = 200
#: studies of its exact SBC test (eta on a grid, the rest isbetter's exact draws; default suite)
ICDM_EXACT_TEST_SIZE = 500


def icdm_pool(n: int, seed: int, workers: int) -> dict[str, Any]:
    """Fit the ICDM model with NUTS (``sample_icdm``), 3 classes x 60 documents, as its SBC test."""
    from validation.icdm_sbc import QUANTITIES, ICDMSetting, replication

    return _mcmc_pool(replication, ICDMSetting(), QUANTITIES, n, seed, workers, "icdm")


def icdm_exact_pool(n: int, seed: int) -> dict[str, Any]:
    """ICDM model with eta's exact posterior on a grid, as its default-suite SBC test."""
    from validation.icdm_sbc import exact_studies

    return exact_studies(n, np.random.default_rng(seed), N_RANKS)


def source_digest(simulation: tuple[str, ...] = ()) -> str:
    """Digest of isbetter's source, the simulation code and the samplers' versions.

    A joint pool is also a test's studies (:func:`joint_studies`): any change of the
    model, of its default prior or of the sampler must refit them.
    """
    import isbetter

    h = hashlib.sha256()
    package = Path(isbetter.__file__).parent
    here = Path(__file__).parent
    files = sorted(package.rglob("*.py")) + [here / f for f in simulation or JOINT_SIMULATION]
    for f in files:
        where = package.parent if f.is_relative_to(package) else here
        h.update(f.relative_to(where).as_posix().encode() + f.read_bytes())
    for dist in ("nutpie", "pymc", "numpy"):
        try:
            h.update(f"{dist}={importlib.metadata.version(dist)}".encode())
        except importlib.metadata.PackageNotFoundError:
            h.update(f"{dist}=none".encode())
    return h.hexdigest()[:12]


#: the simulation code of the joint pools and of the items' hierarchical pool (their digest)
JOINT_SIMULATION = ("joint_sbc.py", "calibration.py", "runner.py")
ITEMS_SIMULATION = ("items_sbc.py", "calibration.py", "runner.py")
#: the hierarchical pool's and the F1 pool's (whose simulation, ``f1_pool``, is in this file:
#: its source enters the key too, and ``HIERARCHICAL``, the hierarchical pool's setting)
HIER_SIMULATION = ("calibration.py", "runner.py")
F1_SIMULATION = ("calibration.py",)
DEFAULT_SEED = 20261129


def _spec(pool: str, seed: int, n: int) -> str:
    """Return the cache key's text: what determines pool `pool`'s studies."""
    spec = f"{pool} seed={seed} v1"
    if pool.startswith("ct"):
        return f"{spec} n={n}"
    if pool.startswith("joint"):
        from isbetter.cv.joint.spec import JointPriors

        q, tails = _joint_form(pool)
        form = JointPriors(tails=tails or JointPriors().tails)  # type: ignore[arg-type]
        prior = f"tails={form.tails} spread_prior={form.spread_prior}"
        return f"{spec} {prior} setting={joint_setting(q, tails)} source={source_digest()}"
    if pool in ("items_hier", "items_paired"):
        return f"{spec} source={source_digest(ITEMS_SIMULATION)}"
    if pool == "hier5":
        return f"{spec} setting={HIERARCHICAL} source={source_digest(HIER_SIMULATION)}"
    if pool == "f1":
        sampler = hashlib.sha256(inspect.getsource(f1_pool).encode()).hexdigest()[:12]
        return f"{spec} f1_pool={sampler} source={source_digest(F1_SIMULATION)}"
    if pool in PL_POOLS:
        return f"{spec} setting={PL_POOLS[pool]} source={source_digest(PL_SIMULATION)}"
    if pool.startswith("icdm"):
        return f"{spec} source={source_digest(ICDM_SIMULATION)}"
    return spec


def _pool_seed(pool: str, seed: int) -> int:
    # a joint pool's other form of the tails draws from the default form's seeds
    return seed + sum(map(ord, pool.partition("@")[0]))


def default_cache() -> Path:
    """``$XDG_CACHE_HOME/isbetter/teeth`` (``~/.cache/isbetter/teeth``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "isbetter" / "teeth"


def studies(key: str, n: int, workers: int = 1, cache: Path | None = None) -> RankPool:
    """Return the first `n` studies of pool `key` (built if not cached).

    The studies of the slow calibration tests whose pools are MCMC fits
    (``tests/cv/test_joint_calibration.py``,
    ``tests/items/test_items_hierarchical_calibration.py``): study ``r`` always comes
    from the same seed (``--seed``'s default), so the test and ``--quick`` share the fits;
    a pool of at least the quick size is built, so the script reuses it.
    """
    size = max(n, QUICK_POOL_SIZES.get(key, n))
    seed = _pool_seed(key, DEFAULT_SEED)
    pool = _cached(
        cache or default_cache(),
        key,
        size,
        _spec(key, seed, size),
        functools.partial(build_pool, key, size, seed, workers),
    )
    return pool.head(n)


def joint_studies(q: int, n: int, workers: int = 1, cache: Path | None = None) -> RankPool:
    """Return the first `n` studies of the joint pool at q data sets (:func:`studies`)."""
    return studies(f"joint{q}", n, workers, cache)


def correlated_t_pool(n_runs: int, n_folds: int, rho: float, n: int, seed: int) -> dict[str, Any]:
    """Compound-symmetric normal differences, as ``test_correlated_t._coverage``."""
    from isbetter.cv.correlated_t import correlated_ttest_posterior

    rng = np.random.default_rng(seed)
    delta, sigma, size = 0.01, 0.03, n_runs * n_folds
    e = rng.standard_normal((n, size))
    u = rng.standard_normal((n, 1))
    x = delta + sigma * (np.sqrt(1 - rho) * e + np.sqrt(rho) * u)
    posts = [correlated_ttest_posterior(row, rho) for row in x]
    return {
        "loc": np.array([p.loc for p in posts]),
        "scale": np.array([p.scale for p in posts]),
        "df": np.array([p.df for p in posts]),
        "truth": np.array(delta),
    }


# --------------------------------------------------------------------------- pass/fail rules
@dataclass(frozen=True)
class Rule:
    """A test's pass/fail rule on its statistic ``r`` (studies, quantities).

    ``rule(r)`` judges one statistic; ``rule.batch(rs)`` judges many at once, ``rs`` of
    shape (subsets, studies, quantities), and returns one bool per subset (the same
    verdicts: the p-values of :func:`validation.calibration.uniformity` and
    :func:`~validation.calibration.smooth_uniformity`, computed along an axis).
    """

    batch: Callable[[np.ndarray], np.ndarray]

    def __call__(self, r: np.ndarray) -> bool:
        """Whether the test passes on statistic `r`."""
        return bool(self.batch(np.asarray(r)[None])[0])


def chi2_pvalues(ranks: np.ndarray, n_ranks: int, bins: int) -> np.ndarray:
    """:func:`~validation.calibration.uniformity`'s p-value along axis -2 of `ranks`.

    `ranks` (..., studies, quantities) of ``0 .. n_ranks - 1``; returns (..., quantities).
    """
    r = np.moveaxis(np.asarray(ranks) // (n_ranks // bins), -2, -1)  # (..., quantity, study)
    flat = r.reshape(-1, r.shape[-1]) + bins * np.arange(r.size // r.shape[-1])[:, None]
    counts = np.bincount(flat.ravel(), minlength=flat.shape[0] * bins).reshape(-1, bins)
    expected = r.shape[-1] / bins
    chi2 = ((counts - expected) ** 2 / expected).sum(axis=-1)
    return np.asarray(stats.chi2.sf(chi2, bins - 1)).reshape(r.shape[:-1])


@functools.cache
def _rank_basis(n_ranks: int) -> np.ndarray:
    x = (np.arange(n_ranks) + 0.5) / n_ranks
    q, _ = np.linalg.qr(np.column_stack([np.ones(n_ranks), x, x * x]))
    return q[:, 1:] * np.sqrt(n_ranks)


def smooth_pvalues(values: np.ndarray, n_ranks: int | None = None) -> np.ndarray:
    """:func:`~validation.calibration.smooth_uniformity`'s p-value along axis -2.

    `values` (..., studies, quantities): ranks ``0 .. n_ranks - 1`` or, without
    `n_ranks`, values in (0, 1); returns (..., quantities).
    """
    v = np.asarray(values)
    if n_ranks is None:
        v = v.astype(float)
        phi = np.stack([np.sqrt(3) * (2 * v - 1), np.sqrt(5) * (6 * v * v - 6 * v + 1)], -1)
    else:
        phi = _rank_basis(n_ranks)[v.astype(int)]
    components = phi.sum(axis=-3) / np.sqrt(v.shape[-2])
    return np.asarray(stats.chi2.sf((components**2).sum(axis=-1), 2))


def _chi2_passes(bins: int, smooth: bool, r: np.ndarray) -> np.ndarray:
    p = chi2_pvalues(r, N_RANKS, bins)
    if smooth:
        p = np.minimum(p, smooth_pvalues(r, N_RANKS))
    return np.all(p > CALIBRATED_P, axis=-1)


def chi2_rule(bins: int) -> Rule:
    """Pass when every quantity's binned chi-squared p-value exceeds 1e-3."""
    return Rule(functools.partial(_chi2_passes, bins, False))


def chi2_and_smooth_rule(bins: int) -> Rule:
    """Pass when every quantity's chi-squared and smooth-test p-values exceed 1e-3."""
    return Rule(functools.partial(_chi2_passes, bins, True))


def _coverage_passes(r: np.ndarray) -> np.ndarray:
    n = r.shape[-2]
    return np.abs(r[..., 0].mean(axis=-1) - 0.95) < 4 * np.sqrt(0.95 * 0.05 / n)


def _coverage_and_smooth_passes(r: np.ndarray) -> np.ndarray:
    return _coverage_passes(r) & (smooth_pvalues(r[..., 1:])[..., 0] > CALIBRATED_P)


def _pit_passes(r: np.ndarray) -> np.ndarray:
    u = r[..., 1:]
    bins = np.minimum((u * 20).astype(int), 19)  # 20 equal bins of (0, 1): ranks of 20
    chi2 = chi2_pvalues(bins, 20, 20)[..., 0]
    return (smooth_pvalues(u)[..., 0] > CALIBRATED_P) & (chi2 > CALIBRATED_P)


#: pass when the 95% intervals' coverage is within 4 binomial standard errors of 0.95
coverage_rule = Rule(_coverage_passes)
#: pass when the coverage passes and the PIT values' smooth test p-value exceeds 1e-3
coverage_and_smooth_rule = Rule(_coverage_and_smooth_passes)
#: pass when the PIT values' smooth test and 20-bin chi-squared p-values exceed 1e-3
pit_rule = Rule(_pit_passes)


# --------------------------------------------------------------------------- the tests
#: the joint model's calibration tests (tests/cv/test_joint_calibration.py): q, studies,
#: rule. 200 studies at q = 50 (was 100): the smooth test's power against a posterior 30 %
#: too narrow grows from ~0.75 (normal posteriors) to ~0.99. With the components default
#: (issue 29) 200 studies still (every plant caught >= 0.973 of the time, full pools):
#: 150 caught a posterior 50 % too wide at q = 5 0.835 of the time, and on the quick
#: pools 0.75 (q = 5) and one 30 % too narrow at q = 50 0.49 (docs/teeth.md)
JOINT_TESTS = tuple((q, n, chi2_and_smooth_rule(10)) for q, n in ((5, 200), (10, 200), (50, 200)))
#: studies of the items' hierarchical SBC test (tests/items/test_items_hierarchical_calibration.py):
#: 250 (was 150, which caught mu_phi's posterior 30 % too narrow 0.92 of the time on the
#: full pool but 0.39-0.61 on the quick pool's first 200-300 studies; 250 of 300: 0.99)
ITEMS_TEST_SIZE = 250


@dataclass(frozen=True)
class Check:
    """One test of the suite: its pool, its size and its pass/fail rule."""

    name: str
    pool: str
    size: int
    passes: Rule


# ------------------------------------------------- Plackett–Luce (validation/pl_sbc.py)
#: the Plackett–Luce pools' designs, K = 4 systems: truths from the model's prior, a fit by
#: isbetter's ``plackett_luce`` (2 chains x 500 draws, one core per fit); N = 10 data sets
#: untied, and N = 30 with ties (each boundary between places erased with probability 0.3)
PL_POOLS = {
    "pl4x10": PLSetting(n_systems=4, n_datasets=10),
    "pl4x30t": PLSetting(n_systems=4, n_datasets=30, tie_prob=0.3),
}
#: studies of the Plackett–Luce SBC test (tests/ranking/test_plackett_luce_calibration.py)
PL_TEST_SIZE = 250
#: the Plackett–Luce pools' simulation code (their digest)
PL_SIMULATION = ("pl_sbc.py", "calibration.py", "runner.py")
PL_CHECKS = tuple(
    Check(
        f"plackett_luce_calibration::{key}[{PL_TEST_SIZE},chi2+smooth,slow]",
        key,
        PL_TEST_SIZE,
        chi2_and_smooth_rule(10),
    )
    for key in PL_POOLS
)


def pl_pool(key: str, n: int, seed: int, workers: int) -> dict[str, Any]:
    """Fit the Plackett–Luce model to `n` studies of design `key` (:data:`PL_POOLS`)."""
    s = PL_POOLS[key]
    return _mcmc_pool(pl_replication, s, pl_quantities(s.n_systems), n, seed, workers, key)


def joint_checks(tails: str | None = None) -> tuple[Check, ...]:
    """Return the joint model's calibration tests on the pools of the form `tails`.

    The default form's (`tails` None or the default) are named ``joint_calibration::...``,
    another form's ``joint_calibration@{tails}::...``.
    """
    key = functools.partial(joint_key, tails=tails)
    name = "joint_calibration" if "@" not in key(5) else f"joint_calibration@{tails}"
    before = (
        Check(f"{name}::q{q}[{n},chi2,before]", key(q), n, chi2_rule(10))
        for q, n in ((5, 200), (10, 200), (50, 100))
    )
    slow = (
        Check(f"{name}::q{q}[{n},chi2+smooth,slow]", key(q), n, rule) for q, n, rule in JOINT_TESTS
    )
    return (*before, *slow)


#: the joint model's tests on the default form's pools
JOINT_CHECKS = joint_checks()
CHECKS = (
    Check("calibration::f1[4000,chi2,before]", "f1", 4000, chi2_rule(20)),
    Check("calibration::f1[4000,chi2+smooth,slow]", "f1", 4000, chi2_and_smooth_rule(20)),
    Check("calibration::f1[1000,chi2+smooth]", "f1", 1000, chi2_and_smooth_rule(20)),
    Check("calibration::hierarchical[60,chi2,before]", "hier5", 60, chi2_rule(10)),
    Check(
        "calibration::hierarchical[150,chi2+smooth,slow]", "hier5", 150, chi2_and_smooth_rule(10)
    ),
    Check("correlated_t::coverage[2x5,4000]", "ct2x5", 4000, coverage_rule),
    Check("correlated_t::sbc[2x5,1000,pit]", "ct2x5", 1000, pit_rule),
    *(
        Check(f"correlated_t::coverage_thorough[{r}x{f},40000,{when}]", f"ct{r}x{f}", 40000, rule)
        for r, f in ((1, 2), (1, 10), (10, 10), (3, 5))
        for when, rule in (("before", coverage_rule), ("slow", coverage_and_smooth_rule))
    ),
    *JOINT_CHECKS,
    Check("items_paired::sbc[1000,chi2+smooth]", "items_paired", 1000, chi2_and_smooth_rule(20)),
    Check(
        "items_hierarchical_calibration::sbc[150,chi2+smooth,before]",
        "items_hier",
        150,
        chi2_and_smooth_rule(10),
    ),
    Check(
        f"items_hierarchical_calibration::sbc[{ITEMS_TEST_SIZE},chi2+smooth,slow]",
        "items_hier",
        ITEMS_TEST_SIZE,
        chi2_and_smooth_rule(10),
    ),
    *PL_CHECKS,
    Check(
        f"f1_icdm_calibration::exact[{ICDM_EXACT_TEST_SIZE},chi2+smooth]",
        "icdm_exact",
        ICDM_EXACT_TEST_SIZE,
        chi2_and_smooth_rule(20),
    ),
    Check(
        f"f1_icdm_calibration::nuts[{ICDM_TEST_SIZE},chi2+smooth,slow]",
        "icdm",
        ICDM_TEST_SIZE,
        chi2_and_smooth_rule(10),
    ),
)


def build_pool(key: str, n: int, seed: int, workers: int) -> dict[str, Any]:
    """Simulate pool `key` of `n` studies."""
    if key == "f1":
        return f1_pool(n, seed)
    if key == "hier5":
        return hierarchical_pool(n, seed, workers)
    if key.startswith("joint"):
        q, tails = _joint_form(key)
        return joint_pool(q, n, seed, workers, tails)
    if key == "items_paired":
        from validation.items_sbc import paired_studies

        return paired_studies(n, np.random.default_rng(seed), N_RANKS)
    if key == "items_hier":
        return items_hierarchical_pool(n, seed, workers)
    if key in PL_POOLS:
        return pl_pool(key, n, seed, workers)
    if key == "icdm":
        return icdm_pool(n, seed, workers)
    if key == "icdm_exact":
        return icdm_exact_pool(n, seed)
    runs, folds = (int(v) for v in key[2:].split("x"))
    rho = 0.2 if (runs, folds) == (2, 5) else 1 / folds  # as the tests
    return correlated_t_pool(runs, folds, rho, n, seed)


#: studies per pool (the quick run: the first ones): 4-5 times the largest test on it; the
#: joint model's 2.5 (q = 5, 10) and 4 (q = 50) times
POOL_SIZES = {
    "f1": 20_000,
    "hier5": 600,
    "joint5": 500,
    "joint10": 500,
    "joint50": 800,
    "items_paired": 20_000,
    "items_hier": 600,
    "pl4x10": 600,
    "pl4x30t": 600,
    "icdm": 800,
    "icdm_exact": 2500,
}
QUICK_POOL_SIZES = {
    "f1": 6000,
    "hier5": 200,
    "joint5": 250,
    "joint10": 250,
    "joint50": 250,
    "items_paired": 6000,
    "items_hier": 300,
    "pl4x10": 300,
    "pl4x30t": 300,
    "icdm": 250,
    "icdm_exact": 1000,
}


def pool_size(key: str, quick: bool) -> int:
    """Studies in pool `key` (the correlated t-test's: 5 or, quick, 1.25 test sizes)."""
    if key.startswith("ct"):
        largest = max(c.size for c in CHECKS if c.pool == key)
        return int(largest * (1.25 if quick else 5))
    return (QUICK_POOL_SIZES if quick else POOL_SIZES)[key.partition("@")[0]]


def detection_rate(
    check: Check,
    stat: np.ndarray | Callable[[np.ndarray], np.ndarray],
    subsets: int,
    rng: np.random.Generator,
    n: int | None = None,
) -> tuple[float, float]:
    """Fraction of random subsets of the test's size that the test's rule fails, and its MCSE.

    `stat` is the statistic of the pool's `n` studies, ``(n, quantities)``, or a function
    of the chosen studies' indices ``(subsets, size)`` that returns theirs, ``(subsets,
    size, quantities)`` (pseudo-truths drawn afresh for each subset: :func:`planted`).
    """
    n = len(stat) if n is None else n
    if n < check.size:
        raise ValueError(f"{check.name}: pool of {n} < the test's {check.size} studies")
    # the subsets drawn one by one (the same draws as ever), judged together
    chosen = np.stack([rng.choice(n, check.size, replace=False) for _ in range(subsets)])
    if callable(stat):  # a few subsets at a time: their draws are (subsets, size, L)
        step = max(1, 2_000_000 // (check.size * N_RANKS))
        passes = np.concatenate(
            [check.passes.batch(stat(chosen[i : i + step])) for i in range(0, subsets, step)]
        )
    else:
        passes = check.passes.batch(stat[chosen])
    fails = int(subsets - passes.sum())
    rate = fails / subsets
    return rate, float(np.sqrt(max(rate * (1 - rate), 1 / subsets) / subsets))


def planted(
    pool: RankPool | TPool,
    plant: tuple[float, float],
    only: int,
    rng: np.random.Generator,
    truths: str = "pseudo",
) -> np.ndarray | Callable[[np.ndarray], np.ndarray]:
    """Return the statistic :func:`detection_rate` judges for `plant` in quantity `only`.

    `plant` is (scale, shift). Without a plant (1, 0), or with ``truths="real"``, the
    ranks of the studies' truths (their false alarms, and the rates as first measured).
    With a plant and ``truths="pseudo"``, a function of the chosen studies: each subset's
    studies get fresh pseudo-truths from their own posteriors (``pseudo_statistic``), so
    the rate is the test's power against the plant when the posteriors are calibrated.
    With the real truths a subset of 200 of 250 studies is most of the pool, so the rate
    follows the pool's own luck: on pools of calibrated normal posteriors, a plant caught
    0.62 of the time on average gives rates whose sd over pools is 0.37 at 250 studies
    and 0.23 at 500 (the printed error 0.05); on pseudo-truths 0.045-0.066, the subsets'
    own error (docs/teeth.md).
    """
    scale, shift = plant
    if plant == PLANTS["none"] or truths == "real":
        return pool.statistic(scale, shift, only)
    return functools.partial(pool.pseudo_statistic, scale, shift, only, rng=rng)


def run(args: argparse.Namespace) -> list[tuple[str, str, float, float]]:
    """Every check against every plant: ``(test, plant, rate, mcse)``."""
    checks = list(CHECKS)
    if args.joint_tails is not None:  # the joint tests on the pools of that form
        checks = [*joint_checks(args.joint_tails), *(c for c in CHECKS if c not in JOINT_CHECKS)]
    checks = [c for c in checks if not args.only or any(o in c.name for o in args.only)]
    rows = []
    rng = np.random.default_rng(args.seed)
    pools: dict[str, Any] = {}
    for c in checks:
        if c.pool not in pools:
            n = pool_size(c.pool, args.quick)
            seed = _pool_seed(c.pool, args.seed)
            pools[c.pool] = _cached(
                args.cache,
                c.pool,
                n,
                _spec(c.pool, seed, n),
                functools.partial(build_pool, c.pool, n, seed, args.workers),
            )
        pool = pools[c.pool]
        names = _quantities(c.pool)
        for plant in PLANTS:
            # each quantity planted alone (a real error need not touch them all); the
            # test's rate against the plant is that of its weakest quantity
            found = [
                (*detection_rate(c, stat, args.subsets, rng, len(pool)), names[j])
                for j in range(1 if plant == "none" else pool.quantities)
                for stat in [planted(pool, PLANTS[plant], j, rng, args.truths)]
            ]
            rate, se, weakest = min(found)
            rows.append((c.name, plant, rate, se))
            shown = pool.quantities > 1 and plant != "none" and rate < 1
            where = f" weakest={weakest}" if shown else ""
            print(f"{c.name} {plant} {rate:.3f} ± {se:.3f}{where}", flush=True)
    return rows


def _quantities(pool: str) -> tuple[str, ...]:
    if pool == "f1":
        return F1_MEASURES
    if pool == "hier5":
        return HIERARCHICAL_PARAMETERS
    if pool.startswith("joint"):
        q, tails = _joint_form(pool)
        return tuple(name.replace(" ", "") for name in joint_setting(q, tails).quantities)
    if pool == "items_hier":
        from validation.items_sbc import QUANTITIES as ITEMS_QUANTITIES

        return ITEMS_QUANTITIES
    if pool in PL_POOLS:
        return pl_quantities(PL_POOLS[pool].n_systems)
    if pool.startswith("icdm"):
        from validation.icdm_sbc import QUANTITIES as ICDM_QUANTITIES

        return ICDM_QUANTITIES
    return ("delta",)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="smaller pools (a few minutes)")
    p.add_argument("--subsets", type=int, help="random subsets per test and plant (400; quick 100)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED)
    p.add_argument("--workers", type=int, default=1, help="processes for the MCMC pools")
    p.add_argument("--only", nargs="+", help="only the tests whose name contains one of these")
    p.add_argument(
        "--truths",
        choices=["pseudo", "real"],
        default="pseudo",
        help="a plant's rate on pseudo-truths drawn from the posteriors (default) or on the "
        "studies' truths (the pool's own luck included)",
    )
    p.add_argument(
        "--joint-tails",
        choices=["shared", "per-system", "components"],
        help="the joint model's pools of this form of the tails (default: JointPriors()'s)",
    )
    cache = default_cache()
    p.add_argument("--cache", type=Path, default=cache, help=f"pool cache (default {cache})")
    args = p.parse_args(argv)
    args.subsets = args.subsets or (100 if args.quick else 400)
    return args


def main(argv: list[str] | None = None) -> int:
    """Print ``TEST PLANT DETECTION_RATE`` lines; 1 when a test misses a plant too often."""
    args = parse_args(argv)
    rows = run(args)
    weak = [(t, p, r) for t, p, r, _ in rows if p != "none" and r < REQUIRED]
    weak = [w for w in weak if ",before]" not in w[0]]
    for t, p, r in weak:
        print(f"TOO WEAK: {t} catches {p} at {r:.3f} < {REQUIRED}", file=sys.stderr)
    return 1 if weak else 0


if __name__ == "__main__":
    raise SystemExit(main())
