import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from _reference import DATA, baycomp_long, expected_probabilities
from isbetter import InputError, from_arrays, read_scores
from isbetter.cv.sign_tests import sign_test, signed_rank_test

DRAWS = 50_000
# Monte Carlo error of a probability from 50 000 draws is at most
# sqrt(0.25 / 50000) = 0.0022; the published tolerance +-0.01 is 4.5 of them.
TOL = 0.01


def _uci_means(a: str, b: str):
    wide = pd.read_csv(DATA / "uci_mean_accuracy.csv")
    return from_arrays(wide[[a]].to_numpy(), wide[[b]].to_numpy(), names=(a, b), runs=1).paired(
        a, b
    )


def _baycomp_means(a: str, b: str):
    df = baycomp_long()
    # key on row_index: the baycomp copy's names are not unique (reference README)
    table = read_scores(df, dataset="row_index", system="classifier", score="score_percent")
    return table.paired(a, b)


def test_signed_rank_jmlr_tutorial():
    res = signed_rank_test(_uci_means("nbc", "aode"), rope=0.01, prior=0.6, draws=DRAWS, rng=1)
    expected = expected_probabilities("signrank_nbc_aode_run1")
    np.testing.assert_allclose(res.probabilities().as_tuple(), expected, atol=TOL)


def test_sign_jmlr_tutorial():
    res = sign_test(_uci_means("nbc", "aode"), rope=0.01, prior=1.0, draws=DRAWS, rng=2)
    expected = expected_probabilities("signtest_nbc_aode_run1")
    np.testing.assert_allclose(res.probabilities().as_tuple(), expected, atol=TOL)


def test_baycomp_documentation_cases():
    paired = _baycomp_means("nbc", "j48")
    assert paired.n_datasets == 54
    sr = signed_rank_test(paired, rope=1.0, draws=DRAWS, rng=3)
    np.testing.assert_allclose(
        sr.probabilities().as_tuple(),
        expected_probabilities("baycomp_signedrank_nbc_j48_v1"),
        atol=TOL,
    )
    st = sign_test(paired, rope=1.0, draws=DRAWS, rng=4)
    np.testing.assert_allclose(
        st.probabilities().as_tuple(),
        expected_probabilities("baycomp_signtest_nbc_j48_v1"),
        atol=TOL,
    )


def test_sign_test_matches_region_dirichlet(rng):
    """The per-observation weights aggregate to Dirichlet(counts + prior) (baycomp's form)."""
    z = rng.normal(0.0, 0.02, size=25)
    paired = from_arrays(z[:, None], np.zeros((25, 1))).paired("A", "B")
    res = sign_test(paired, rope=0.01, prior=2.0, prior_place="b_better", draws=40_000, rng=5)
    masses = res.posterior.region_masses(0.01)
    counts = np.array([(z > 0.01).sum(), (np.abs(z) <= 0.01).sum(), (z < -0.01).sum()], float)
    alpha = counts + np.array([0.0, 0.0, 2.0])
    mean = alpha / alpha.sum()
    var = mean * (1 - mean) / (alpha.sum() + 1)
    se = np.sqrt(var / 40_000)
    # means of Dirichlet components within 4 Monte Carlo standard errors
    assert np.all(np.abs(masses.mean(axis=0) - mean) < 4 * se)


def test_signed_rank_against_explicit_double_sum(rng):
    z = rng.normal(0.005, 0.02, size=12)
    paired = from_arrays(z[:, None], np.zeros((12, 1))).paired("A", "B")
    res = signed_rank_test(paired, rope=0.01, prior=0.5, draws=50, rng=6)
    masses = res.posterior.region_masses(0.01)
    values = np.concatenate(([0.0], z))
    for w, m in zip(res.posterior.weights, masses, strict=True):
        right = sum(
            w[i] * w[j] * ((values[i] + values[j] > 0.02) + 0.5 * (values[i] + values[j] == 0.02))
            for i in range(13)
            for j in range(13)
        )
        left = sum(
            w[i] * w[j] * ((values[i] + values[j] < -0.02) + 0.5 * (values[i] + values[j] == -0.02))
            for i in range(13)
            for j in range(13)
        )
        np.testing.assert_allclose(m, [right, 1 - right - left, left], atol=1e-12)


@pytest.mark.parametrize("test", [sign_test, signed_rank_test])
def test_swap_mirrors_and_same_seed_same_result(test, rng):
    z = rng.normal(0.01, 0.02, size=20)
    paired = from_arrays(z[:, None], np.zeros((20, 1))).paired("A", "B")
    kwargs = {} if test is signed_rank_test else {"prior_place": "rope"}
    ab = test(paired, rope=0.005, draws=5000, rng=7, **kwargs)
    ba = test(paired.swapped(), rope=0.005, draws=5000, rng=7, **kwargs)
    assert (ab.p_a_better, ab.p_rope, ab.p_b_better) == (ba.p_b_better, ba.p_rope, ba.p_a_better)
    again = test(paired, rope=0.005, draws=5000, rng=7, **kwargs)
    assert again.probabilities() == ab.probabilities()
    assert ab.settings["seed"] == 7


def test_same_seed_across_processes():
    code = (
        "import numpy as np; from isbetter import from_arrays;"
        "from isbetter.cv.sign_tests import signed_rank_test;"
        "z = np.linspace(-0.02, 0.03, 15)[:, None];"
        "r = signed_rank_test(from_arrays(z, 0 * z, runs=1).paired('A', 'B'), rope=0.01, rng=11);"
        "print(repr(r.probabilities().as_tuple()))"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    }
    assert len(outs) == 1
    z = np.linspace(-0.02, 0.03, 15)[:, None]
    here = signed_rank_test(from_arrays(z, 0 * z, runs=1).paired("A", "B"), rope=0.01, rng=11)
    assert outs.pop().strip() == repr(here.probabilities().as_tuple())


def test_generator_seed_is_recorded_and_reproduces(rng):
    z = np.linspace(-0.02, 0.03, 15)[:, None]
    paired = from_arrays(z, 0 * z, runs=1).paired("A", "B")
    res = sign_test(paired, rope=0.01, draws=2000, rng=rng)
    again = sign_test(paired, rope=0.01, draws=2000, rng=res.settings["seed"])
    assert again.probabilities() == res.probabilities()


def test_rope_monotone_without_refit(rng):
    z = rng.normal(0.0, 0.02, size=30)
    paired = from_arrays(z[:, None], np.zeros((30, 1))).paired("A", "B")
    res = signed_rank_test(paired, rope=0.0, draws=4000, rng=8)
    mean_rope = [res.posterior.region_masses(r)[:, 1].mean() for r in (0, 0.005, 0.01, 0.03)]
    assert mean_rope == sorted(mean_rope)
    fresh = signed_rank_test(paired, rope=0.01, draws=4000, rng=8)
    assert res.probabilities(rope=0.01) == fresh.probabilities()


def test_sign_tests_iv():
    paired = from_arrays(np.array([[0.1], [0.2]]), np.array([[0.0], [0.3]])).paired("A", "B")
    with pytest.raises(InputError, match="`prior` must be a finite non-negative number"):
        sign_test(paired, prior=-1)
    with pytest.raises(InputError, match="Unknown prior_place 'left'"):
        sign_test(paired, prior_place="left")
    with pytest.raises(InputError, match="`draws` must be an integer >= 1"):
        signed_rank_test(paired, draws=0)
    with pytest.raises(InputError, match="`rope` must be a non-negative number"):
        signed_rank_test(paired, rope=-1)
    with pytest.raises(InputError, match="`rng` must be a non-negative integer seed"):
        signed_rank_test(paired, rng=-3)


def test_sign_test_at_rope_zero_has_no_rope_mass(rng):
    """Regression: at rope 0 the prior pseudo-observation gave P(rope) > 0."""
    z = rng.normal(0.01, 0.02, size=20)
    paired = from_arrays(z[:, None], np.zeros((20, 1))).paired("A", "B")
    res = sign_test(paired, rope=0.0, rng=1, draws=20_000)
    assert res.p_rope == 0.0
    assert res.p_a_better + res.p_b_better == pytest.approx(1.0)
    masses = res.posterior.region_masses(0.0)
    assert np.all(masses[:, 1] == 0) and np.allclose(masses.sum(axis=1), 1)
    # with a ROPE the pseudo-observation is back in it
    assert np.all(res.posterior.region_masses(0.001)[:, 1] > 0)
    # and the argmax probabilities at a ROPE of 0.01 (no refit) are those of an independent
    # Dirichlet: the regions' weights are Dir(n(z > r), n(|z| <= r) + 1, n(z < -r)); within
    # 4 combined binomial standard errors of the two Monte Carlo estimates
    counts = [int((z > 0.01).sum()), int((np.abs(z) <= 0.01).sum()) + 1, int((z < -0.01).sum())]
    w = np.random.default_rng(7).dirichlet(counts, size=200_000)
    ref = np.bincount(w.argmax(axis=1), minlength=3) / 200_000
    assert 0.05 < ref[1] < 0.95, (counts, ref)  # a P(rope) that a wrong mass would move
    se = np.sqrt(ref * (1 - ref) * (1 / 20_000 + 1 / 200_000))
    got = np.array(res.probabilities(rope=0.01).as_tuple())
    np.testing.assert_array_less(np.abs(got - ref), 4 * se + 1e-9)
    # the two sides alone: n(z > 0) + 0 prior vs n(z < 0), a Beta posterior
    n_pos, n_neg = int((z > 0).sum()), int((z < 0).sum())
    expected = float(np.mean(masses[:, 0] > 0.5))
    from scipy import stats

    assert expected == pytest.approx(stats.beta(n_pos, n_neg).sf(0.5), abs=0.02)
