"""The exact paired model of binary items: closed form, §3.4's paired model, identical systems."""

import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from isbetter.core.errors import InputError
from isbetter.f1.paired import sample_rates
from isbetter.f1.predictions import JointCounts
from isbetter.items.compare import compare_paired_items
from isbetter.items.paired import ItemCounts, p_a_better_exact, prior_delta, sample_delta

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.calibration import smooth_uniformity, uniformity  # noqa: E402
from validation.items_sbc import paired_studies  # noqa: E402

DRAWS = 200_000
N_RANKS = 100
CALIBRATED_P = 1e-3
#: the studies of the SBC test; ``validation/teeth.py`` measures its rule's power
SBC_STUDIES = 1000


def _sbc_pvalue(alpha: float, seed: int) -> float:
    pool = paired_studies(SBC_STUDIES, np.random.default_rng(seed), N_RANKS, alpha=alpha)
    ranks = (pool["draws"] < pool["truth"][..., None]).sum(axis=-1)[:, 0]
    return min(uniformity(ranks, N_RANKS, 20)[1], smooth_uniformity(ranks, N_RANKS))


def test_exact_model_is_calibrated() -> None:
    """Simulation-based calibration (Talts et al. 2018): 1000 studies of 50 items, theta
    from the prior Dir(1, 1, 1, 1), the rank of the true delta among 99 posterior draws
    uniform by the 20-bin chi-squared and Neyman's smooth test (p > 0.001). Against a
    posterior 30 % too narrow, 50 % too wide or shifted by half its sd the rule fails
    every time (``python -m validation.teeth``, docs/teeth.md)."""
    assert _sbc_pvalue(1.0, seed=41) > CALIBRATED_P


def test_exact_model_sbc_fails_with_a_wrong_prior() -> None:
    """The same truths fitted with Dir(4, 4, 4, 4): too confident near 0, fails by far."""
    assert _sbc_pvalue(4.0, seed=41) < 1e-6


@pytest.mark.parametrize(
    "counts",
    [(50, 30, 10, 10), (5, 2, 3, 0), (0, 0, 0, 0), (900, 41, 29, 30), (3, 7, 0, 1), (1, 1, 2, 0)],
)
def test_p_a_better_is_the_beta_closed_form(counts: tuple[int, ...]) -> None:
    c = ItemCounts(*counts)
    d = sample_delta(c, draws=DRAWS, rng=np.random.default_rng(1))
    p = float(np.mean(d > 0))
    exact = stats.beta(1 + c.n10, 1 + c.n01).sf(0.5)
    assert p_a_better_exact(c) == pytest.approx(exact, abs=1e-12)
    mcse = np.sqrt(exact * (1 - exact) / DRAWS)
    assert abs(p - exact) <= 4 * mcse + 1e-12


def test_posterior_moments_are_the_dirichlet_ones() -> None:
    c = ItemCounts(50, 30, 10, 10)
    a = np.array(c.as_tuple()) + 1.0
    a0 = a.sum()
    mean = (a[1] - a[2]) / a0
    var = (a[1] * (a0 - a[1]) + a[2] * (a0 - a[2]) + 2 * a[1] * a[2]) / (a0**2 * (a0 + 1))
    d = sample_delta(c, draws=DRAWS, rng=np.random.default_rng(2))
    assert abs(d.mean() - mean) <= 4 * np.sqrt(var / DRAWS)
    # the sd of a sample variance of near-normal draws: var * sqrt(2 / n)
    assert abs(d.var() - var) <= 4 * var * np.sqrt(2 / DRAWS)


def test_agrees_with_the_theta_plus_part_of_the_f1_paired_model() -> None:
    """DESIGN §4.3: the θ⁺ part of §3.4's paired model with every item a positive.

    What differs: §3.4's accuracy is ``mu rho+ + (1 - mu)(1 - rho-)`` with
    ``mu ~ Beta(1 + N, 1)``; without negatives the (1 - mu) term carries the prior of
    ``theta-`` (mean 0), so its accuracy difference is the items' delta shrunk by
    ``E[mu] = (N + 1) / (N + 2)`` in the mean.
    """
    c = ItemCounts(6, 9, 3, 2)
    jc = JointCounts(pos=np.array(c.as_tuple()), neg=np.zeros(4, np.int64))
    (tp_a, fp_a, fn_a, tn_a), (tp_b, fp_b, _, tn_b) = sample_rates(
        jc, draws=DRAWS, rng=np.random.default_rng(3)
    )
    mu = tp_a + fn_a
    theta_plus = (tp_a - tp_b) / mu  # rho+_A - rho+_B = theta+_10 - theta+_01
    ours = sample_delta(c, draws=DRAWS, rng=np.random.default_rng(4))
    sd = ours.std()
    assert abs(theta_plus.mean() - ours.mean()) <= 4 * sd * np.sqrt(2 / DRAWS)
    assert abs(theta_plus.std() - sd) <= 4 * sd * np.sqrt(1 / DRAWS)
    p_f1, p_ours = np.mean(theta_plus > 0), p_a_better_exact(c)
    assert abs(p_f1 - p_ours) <= 4 * np.sqrt(p_ours * (1 - p_ours) / DRAWS)
    # the whole accuracy difference of §3.4: shrunk by E[mu] in the mean
    accuracy = (tp_a + tn_a) - (tp_b + tn_b)
    shrink = (c.n + 1) / (c.n + 2)
    expected = shrink * ours.mean()
    assert abs(accuracy.mean() - expected) <= 4 * accuracy.std() * np.sqrt(2 / DRAWS)
    assert abs(accuracy.mean() - ours.mean()) > 8 * accuracy.std() / np.sqrt(DRAWS)


def test_exchanging_a_and_b_negates_every_draw() -> None:
    c = ItemCounts(12, 7, 3, 5)
    d = sample_delta(c, draws=1001, rng=np.random.default_rng(5))
    e = sample_delta(c.swapped(), draws=1001, rng=np.random.default_rng(5))
    assert np.array_equal(d, -e)


def test_same_seed_same_draws() -> None:
    c = ItemCounts(12, 7, 3, 5)
    d = sample_delta(c, draws=100, rng=np.random.default_rng(6))
    assert np.array_equal(d, sample_delta(c, draws=100, rng=np.random.default_rng(6)))
    assert not np.array_equal(d, sample_delta(c, draws=100, rng=np.random.default_rng(7)))


def test_prior_is_symmetric_with_the_dirichlet_variance() -> None:
    d = prior_delta(draws=DRAWS, rng=np.random.default_rng(8))
    assert d.size == DRAWS
    assert np.mean(d > 0) == np.mean(d < 0)
    # Dir(1,1,1,1): Var(theta10 - theta01) = 2 * 3/80 + 2/80 = 0.1
    assert abs(d.var() - 0.1) <= 4 * 0.1 * np.sqrt(2 / (DRAWS / 2))


def _pair(a: list[int], b: list[int]) -> SimpleNamespace:
    n = len(a)
    return SimpleNamespace(
        task="t",
        system_a="x",
        system_b="y",
        items=np.arange(n).astype(str),
        a=np.array(a, float),
        b=np.array(b, float),
        clusters=None,
        runs=np.ones((n, 2), np.int64),
        binary=True,
    )


@pytest.mark.parametrize("rope", [0.0, 0.01, 0.02, 0.05, 0.1])
def test_identical_systems_are_undecided_on_few_items_whatever_the_rope(rope: float) -> None:
    scores = [1] * 12 + [0] * 8
    res = compare_paired_items(_pair(scores, scores), rope=rope, rng=1, baselines=False)
    assert res.p_a_better == res.p_b_better  # exactly: the posterior is mirrored
    assert res.estimate.decision == "undecided"
    assert res.decision() == "undecided"


def test_identical_systems_on_many_items_are_equivalent_never_a_side() -> None:
    scores = [1] * 3000 + [0] * 2000
    res = compare_paired_items(_pair(scores, scores), rope=0.02, rng=1, baselines=False)
    assert res.p_a_better == res.p_b_better
    assert res.estimate.decision == "equivalent"
    zero = compare_paired_items(_pair(scores, scores), rope=0.0, rng=1, baselines=False)
    assert zero.estimate.decision == "undecided" and zero.decision() == "undecided"


def test_counts_refuse_graded_scores() -> None:
    with pytest.raises(InputError, match="binary scores"):
        ItemCounts.from_scores([1, 0.5], [1, 0])
    with pytest.raises(InputError, match="count"):
        ItemCounts(1, -1, 0, 0)
