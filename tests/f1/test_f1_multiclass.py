"""Tests of the exact multi-class sampler of macro / micro differences (paired model).

The fast sampler (count parts + Bondesson series of the prior parts, one random stream
per chunk) is checked against a slow reference that draws all m^3 cells of every draw
from ``numpy.random.Generator.dirichlet``. All seeds are fixed; the Kolmogorov-Smirnov
threshold (p > 1e-3) would fail a correct sampler once in a thousand seeds.
"""

import numpy as np
import pytest
from scipy import stats
from scipy.special import gammainc, gammaincc, gammainccinv, gammaincinv

import isbetter.f1.multiclass as mc
from isbetter import InputError
from isbetter.f1.measures import dcf, f1
from isbetter.f1.multiclass import joint_cells, macro_micro, sample_average_delta

EPS = 2.0**-53


def reference(cells, alpha, draws, seed, measure=f1):
    """Slow reference: a plain Dirichlet draw of all m^3 cells for every posterior draw."""
    m = cells.shape[0]
    rng = np.random.default_rng(seed)
    phi = rng.dirichlet(alpha + np.asarray(cells, float).ravel(), size=draws)
    phi = phi.reshape(draws, m, m, m)
    mac_a, mic_a = macro_micro(phi.sum(axis=3), measure)
    mac_b, mic_b = macro_micro(phi.sum(axis=2), measure)
    return measure.difference(mac_a, mac_b), measure.difference(mic_a, mic_b)


def assert_same_distribution(x, y, label):
    """Means and sds within 4 Monte Carlo standard errors; two-sample KS p > 1e-3."""
    se_mean = np.sqrt(x.var() / x.size + y.var() / y.size)
    assert abs(x.mean() - y.mean()) < 4 * se_mean, f"{label}: means"

    def se_sd(z):  # delta method: sd of (z - mean)^2 / (2 sd sqrt(n))
        return ((z - z.mean()) ** 2).std() / (2 * z.std() * np.sqrt(z.size))

    assert abs(x.std() - y.std()) < 4 * np.hypot(se_sd(x), se_sd(y)), f"{label}: sds"
    assert stats.ks_2samp(x, y).pvalue > 1e-3, f"{label}: KS"


def small_table(m=4, seed=7):
    """Sparse table: zeros, ones, twos and a few larger counts; about 15 docs per class."""
    rng = np.random.default_rng(seed)
    cells = rng.poisson(0.5, (m, m, m))
    cells[np.arange(m), np.arange(m), np.arange(m)] += 8
    cells[0, 0, 1] += 4  # A right, B wrong: A better on class 0
    return cells


def twenty_classes(seed=11, n=7500, m=20):
    """Two correlated classifiers (~78 % and ~74 % accuracy) on 20 classes."""
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, m, n)
    group = np.arange(m) // 4

    def wrong(g):
        same = group[g] * 4 + (g % 4 + rng.integers(1, 4, g.size)) % 4
        return np.where(rng.random(g.size) < 0.7, same, (g + rng.integers(1, m, g.size)) % m)

    u = rng.random(n)
    v = np.where(rng.random(n) < 0.6, u, rng.random(n))
    a = np.where(u < 0.78, gold, wrong(gold))
    b = np.where(v < 0.74, gold, wrong(gold))
    return joint_cells(gold, a, b, m)


@pytest.fixture(params=["series", "plain"])
def path(request, monkeypatch):
    """Force the series sampler (prior parts as Bondesson terms) or one Gamma per cell."""
    monkeypatch.setattr(mc, "_SERIES_TERMS_PER_CELL", np.inf if request.param == "series" else 0)
    return request.param


# ------------------------------------------------------------------ agreement in distribution
@pytest.mark.parametrize("alpha", [1 / 16, 0.01])
@pytest.mark.parametrize("kind", ["posterior", "prior"])
def test_agrees_with_plain_dirichlet_reference(path, alpha, kind):
    cells = small_table() if kind == "posterior" else np.zeros((4, 4, 4), np.int64)
    plan = mc._plan(cells.astype(float), alpha)
    assert (plan.terms > 0) == (path == "series")
    draws = 30_000
    got = sample_average_delta(cells, f1, alpha=alpha, draws=draws, rng=np.random.default_rng(1))
    want = reference(cells, alpha, draws, seed=2)
    for name, x, y in zip(("macro", "micro"), got, want, strict=True):
        assert np.all(np.isfinite(x)) and np.all(np.abs(x) <= 1)
        assert_same_distribution(x, y, f"{path} {kind} alpha={alpha} {name}")


@pytest.mark.parametrize("alpha", [1 / 16, 0.3])
@pytest.mark.parametrize("kind", ["posterior", "prior"])
def test_one_vs_rest_sums_have_their_exact_beta_marginals(path, kind, alpha):
    """Dirichlet aggregation: each tp, row and column sum over the total is a Beta.

    tp_j of A: cells (j, j, l); row j: cells (j, ., .); column k of A: cells (., k, .)
    (of B: (j, l, j), (j, ., .), (., ., l)), each Beta(their shapes, the other shapes).
    """
    m = 4
    cells = small_table() if kind == "posterior" else np.zeros((m, m, m), np.int64)
    plan = mc._plan(cells.astype(float), alpha)
    shape = (cells.transpose(0, 2, 1) if plan.flipped else cells) + alpha  # canonical A, B
    sums = []
    for i in range(12_000 // plan.chunk + 1):
        out = np.empty((2, 3, m, plan.chunk))
        mc._chunk_stats(plan, np.random.default_rng([17, i]), out)
        sums.append(out)
    sums = np.concatenate(sums, axis=-1)
    rates = sums / sums[0, 1].sum(axis=0)
    j = np.arange(m)
    expected = [  # (side, kind): shape sums per class, kind = tp, row, column
        [shape[j, j, :].sum(1), shape.sum((1, 2)), shape.sum((0, 2))],
        [shape[j, :, j].sum(1), shape.sum((1, 2)), shape.sum((0, 1))],
    ]
    total = shape.sum()
    for side in (0, 1):
        for what in range(3):
            for cls in range(m):
                a = expected[side][what][cls]
                p = stats.kstest(rates[side, what, cls], stats.beta(a, total - a).cdf).pvalue
                assert p > 1e-4, f"{path} {kind} side {side} stat {what} class {cls}: p = {p}"


def test_fractional_counts_agree(path):
    """Non-integer cells (e.g. pseudo-counts) are Gamma shapes like any other."""
    cells = small_table() + np.where(np.arange(64).reshape(4, 4, 4) % 5 == 0, 0.5, 0.0)
    cells[1, 2, 3] = 2.5
    got = sample_average_delta(cells, f1, draws=30_000, rng=np.random.default_rng(10))
    want = reference(cells, 1 / 16, 30_000, seed=11)
    for name, x, y in zip(("macro", "micro"), got, want, strict=True):
        assert_same_distribution(x, y, f"fractional {path} {name}")


@pytest.mark.parametrize("kind", ["posterior", "prior"])
def test_default_prior_of_eight_classes_uses_the_series_and_agrees(kind):
    """m = 8 with the default alpha = 1/64: the series is chosen without forcing it."""
    m = 8
    cells = small_table(m, seed=3) if kind == "posterior" else np.zeros((m, m, m), np.int64)
    assert mc._plan(cells.astype(float), 1 / m**2).terms > 0
    draws = 12_000
    got = sample_average_delta(cells, f1, draws=draws, rng=np.random.default_rng(5))
    want = reference(cells, 1 / m**2, draws, seed=6)
    for name, x, y in zip(("macro", "micro"), got, want, strict=True):
        assert_same_distribution(x, y, f"m=8 {kind} {name}")


def test_lower_is_better_measure_agrees(path):
    """DCF (a cost): the difference is psi(B) - psi(A), positive = A better."""
    cells, measure = small_table(), dcf(1.0, 10.0, 0.1)
    got = sample_average_delta(cells, measure, draws=20_000, rng=np.random.default_rng(8))
    want = reference(cells, 1 / 16, 20_000, seed=9, measure=measure)
    for name, x, y in zip(("macro", "micro"), got, want, strict=True):
        assert_same_distribution(x, y, f"dcf {path} {name}")


def test_macro_favours_the_system_that_is_right_more_often():
    cells = twenty_classes()
    macro, micro = sample_average_delta(cells, f1, draws=4000, rng=np.random.default_rng(0))
    acc_a = np.trace(cells.sum(axis=2)) / cells.sum()
    acc_b = np.trace(cells.sum(axis=1)) / cells.sum()
    # micro-F1 of single-label classification is the accuracy, linear in the cells: with
    # Dir(1/m^2) on each of the m^3 cells its posterior mean is exactly the observed
    # difference times N / (N + m) (the prior's cells add as much to A's accuracy as to
    # B's); exact sampler, so within 4 Monte Carlo standard errors sd / sqrt(4000)
    n, m = cells.sum(), cells.shape[0]
    exact = (acc_a - acc_b) * n / (n + m)
    assert micro.mean() == pytest.approx(exact, abs=4 * micro.std() / np.sqrt(4000))
    assert macro.mean() > 0 and micro.mean() > 0


# ------------------------------------------------------------------------ exchange symmetry
@pytest.mark.parametrize("table", ["twenty", "small", "tie"])
def test_exchanging_a_and_b_negates_the_draws_exactly(table, monkeypatch):
    if table == "twenty":
        cells = twenty_classes()
    else:
        cells = small_table()
        if table == "tie":
            # symmetric except one late cell: the orientation is decided there
            cells = cells + cells.transpose(0, 2, 1)
            cells[3, 1, 2] += 1
    for workers in (1, 2):
        kw = {"draws": 2000, "workers": workers}
        d1 = sample_average_delta(cells, f1, rng=np.random.default_rng(4), **kw)
        d2 = sample_average_delta(cells.transpose(0, 2, 1), f1, rng=np.random.default_rng(4), **kw)
        for x, y in zip(d1, d2, strict=True):
            assert np.array_equal(x, -y)
    symmetric = cells + cells.transpose(0, 2, 1)
    d1 = sample_average_delta(symmetric, f1, draws=500, rng=np.random.default_rng(4))
    d2 = sample_average_delta(symmetric, f1, draws=500, rng=np.random.default_rng(4))
    assert np.array_equal(d1[0], d2[0])  # nothing to exchange: the same table


# ---------------------------------------------------------------------- deterministic chunks
@pytest.mark.parametrize("kind", ["posterior", "prior"])
def test_blocks_and_threads_do_not_change_the_draws(kind, monkeypatch):
    cells = twenty_classes() if kind == "posterior" else np.zeros((20, 20, 20), np.int64)
    plan = mc._plan(cells.astype(float), 1 / 400)
    draws = 5 * plan.chunk + 7  # a partial last chunk

    def run(workers, block_draws):
        monkeypatch.setattr(mc, "_BLOCK_DRAWS", block_draws)
        return sample_average_delta(
            cells, f1, draws=draws, rng=np.random.default_rng(3), workers=workers
        )

    one_block = run(1, 10**6)
    for workers, block_draws in [(1, 1), (2, 1), (2, 2 * plan.chunk), (3, 10**6)]:
        for x, y in zip(one_block, run(workers, block_draws), strict=True):
            assert np.array_equal(x, y)
    # a longer run starts with the same draws (one random stream per chunk)
    longer = sample_average_delta(
        cells, f1, draws=draws + 3 * plan.chunk, rng=np.random.default_rng(3)
    )
    full = 5 * plan.chunk
    assert np.array_equal(longer[0][:full], one_block[0][:full])


# ---------------------------------------------------------------- the series and its cut-off
def test_left_out_terms_are_exactly_s0_times_an_independent_gamma(monkeypatch):
    """The identity behind the bound: drawn terms + s0 Gamma(A) ~ Gamma(A), exactly.

    With a coarse cut-off (s0 = exp(-1)), the drawn total alone is far from Gamma(A)
    (the test has power), and adding s0 times an independent Gamma(A) restores it.
    """
    monkeypatch.setattr(mc, "_SERIES_TERMS_PER_CELL", np.inf)
    m, alpha = 4, 0.05
    mass = alpha * m**3
    plan = mc._plan(np.zeros((m, m, m)), alpha)
    assert plan.columns.size == 0  # no counts: only the series
    coarse = mc._Plan(**{**plan.__dict__, "cut": 1.0, "terms": mass * 1.0})
    draws, chunks = 20_000, []
    for i in range(draws // coarse.chunk + 1):
        out = np.empty((2, 3, m, coarse.chunk))
        mc._chunk_stats(coarse, np.random.default_rng([11, i]), out)
        chunks.append(out[0, 1].sum(axis=0))  # drawn total: A's row sums
    drawn = np.concatenate(chunks)[:draws]
    left_out = np.exp(-1.0) * np.random.default_rng(12).gamma(mass, size=draws)
    target = stats.gamma(mass).cdf
    assert stats.kstest(drawn, target).pvalue < 1e-10
    assert stats.kstest(drawn + left_out, target).pvalue > 1e-3
    assert drawn.mean() == pytest.approx(mass * (1 - np.exp(-1.0)), rel=0.03)


@pytest.mark.parametrize(
    ("mass", "n"), [(20.0, 0.0), (20.0, 7500.0), (4.0, 0.0), (0.08, 0.0), (0.5, 30.0), (200.0, 5.0)]
)
def test_cut_off_bounds_the_left_out_mass_below_unit_roundoff(mass, n):
    """P(left-out / drawn total > 2**-53) <= 2**-53, with the incomplete gamma functions.

    Left out: s0 G', G' ~ Gamma(A); drawn total T' = T - s0 G' with T ~ Gamma(N + A).
    s0 G' / T' > eps needs G' > g or T < q, each of probability eps / 2.
    """
    s0 = np.exp(-mc._series_cut(mass, n))
    g, q = gammainccinv(mass, EPS / 2), gammaincinv(n + mass, EPS / 2)
    # the quantiles are right that far in the tails
    assert gammaincc(mass, g) == pytest.approx(EPS / 2, rel=1e-6)
    assert gammainc(n + mass, q) == pytest.approx(EPS / 2, rel=1e-6)
    # on {G' <= g, T >= q}: s0 G' / (T - s0 G') <= s0 g / (q - s0 g) <= eps
    assert s0 * g / (q - s0 * g) <= EPS * (1 + 1e-9)
    assert 1.01 * s0 * g / (q - 1.01 * s0 * g) > EPS  # and not much smaller s0 than needed


def test_bound_holds_on_the_sampler_draws_at_a_coarse_tolerance(monkeypatch):
    """The same construction with eps = delta = 0.02 instead of 2**-53, simulated.

    The left-out mass s0 G' (G' ~ Gamma(A) independent of the drawn terms) exceeds
    eps times the drawn total in at most a fraction delta of the draws.
    """
    monkeypatch.setattr(mc, "_EPS", 0.02)
    monkeypatch.setattr(mc, "_DELTA", 0.02)
    m, alpha = 4, 0.05
    mass = alpha * m**3
    plan = mc._plan(np.zeros((m, m, m)), alpha)
    assert plan.terms > 0
    totals = []
    for i in range(20_000 // plan.chunk + 1):
        out = np.empty((2, 3, m, plan.chunk))
        mc._chunk_stats(plan, np.random.default_rng([13, i]), out)
        totals.append(out[0, 1].sum(axis=0))
    drawn = np.concatenate(totals)
    left_out = np.exp(-plan.cut) * np.random.default_rng(14).gamma(mass, size=drawn.size)
    exceed = np.mean(left_out / drawn > 0.02)
    assert 0 < exceed <= 0.02  # the union bound is not tight: about 0.5 % here


@pytest.mark.parametrize("kind", ["posterior", "prior"])
def test_every_drawn_total_is_above_the_bound_quantile(kind):
    """On the sampler's own draws (20 classes), the drawn total exceeds q / (1 + eps).

    Then the left-out mass s0 G' is below 2**-53 of it unless G' > g (P <= 2**-54).
    """
    m = 20
    cells = twenty_classes() if kind == "posterior" else np.zeros((m, m, m), np.int64)
    plan = mc._plan(cells.astype(float), 1 / m**2)
    mass, n = 1 / m**2 * m**3, float(cells.sum())
    assert plan.terms == pytest.approx(mass * mc._series_cut(mass, n))
    assert plan.terms < m**3 / 8  # e.g. ~650 / ~820 terms instead of 8 000 cells
    totals = []
    for i in range(20):
        out = np.empty((2, 3, m, plan.chunk))
        mc._chunk_stats(plan, np.random.default_rng([21, i]), out)
        totals.append(out[0, 1].sum(axis=0))
    totals = np.concatenate(totals)
    s0 = np.exp(-plan.cut)
    g = stats.gamma(mass).isf(EPS / 2)
    assert np.all(s0 * g / totals <= EPS)
    # the total has the right scale: Gamma(N + A) up to the left-out s0 Gamma(A)
    assert totals.mean() == pytest.approx(n + mass, rel=4 / np.sqrt(totals.size * (n + mass)))


# --------------------------------------------------------------------------------- inputs
def test_input_checks():
    with pytest.raises(InputError, match=r"shape \(m, m, m\)"):
        sample_average_delta(np.zeros((3, 3, 2)), f1, rng=np.random.default_rng(0))
    with pytest.raises(InputError, match="non-negative"):
        sample_average_delta(-np.ones((3, 3, 3)), f1, rng=np.random.default_rng(0))
    with pytest.raises(InputError, match="`alpha` must be a positive"):
        sample_average_delta(np.zeros((3, 3, 3)), f1, alpha=0.0, rng=np.random.default_rng(0))


def test_tiny_alpha_falls_back_to_one_gamma_per_cell():
    """A total prior mass so small that the cut-off would underflow: plain sampling."""
    plan = mc._plan(np.zeros((2, 2, 2)), 1e-4)
    assert plan.terms == 0 and plan.columns.size == 8
