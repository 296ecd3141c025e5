import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

import isbetter
from _reference import baycomp_long, expected_probabilities, reference, uci_long
from isbetter import InputError, from_arrays, read_scores
from isbetter.cv.correlated_t import (
    corrected_resampled_ttest,
    correlated_ttest,
    correlated_ttest_posterior,
    rho_from_sizes,
)


def _uci_pair(dataset_id: int, a: str, b: str, rounded: bool):
    df = uci_long()
    df = df[df["dataset_id"] == dataset_id].copy()
    if rounded:
        # the JMLR notebooks fed round(percent_correct_3dp, 2) / 100 (reference row says so)
        df["acc"] = df["percent_correct_3dp"].round(2) / 100
    else:
        df["acc"] = df["percent_correct_3dp"] / 100
    table = read_scores(df, dataset="dataset_name", system="classifier", score="acc")
    return table.paired(a, b)


@pytest.mark.parametrize(
    ("case_id", "dataset_id"), [("ctt_anneal_nbc_aode", 1), ("ctt_audiology_nbc_aode", 2)]
)
def test_reproduces_jmlr_tutorial(case_id, dataset_id):
    res = correlated_ttest(_uci_pair(dataset_id, "nbc", "aode", rounded=True), rope=0.01)
    expected = expected_probabilities(case_id)
    np.testing.assert_allclose(
        (res.p_a_better, res.p_rope, res.p_b_better), expected, rtol=0, atol=1e-9
    )
    assert res.settings["rho"] == pytest.approx(0.1)
    assert res.settings["n"] == 100


def test_posterior_parameters_and_frequentist_test_id2():
    # reference: Julia notebook 2 of BayesianTestsML/tutorial (see reference_values.csv)
    row = reference("ctt_posterior_params_id2")
    assert "posterior mean=-0.0026088997156299564" in row["other"]
    paired = _uci_pair(2, "nbc", "aode", rounded=False)
    post = correlated_ttest(paired).posterior
    assert post.df == 99
    assert post.loc == pytest.approx(-0.0026088997156299564, abs=1e-9)
    assert post.scale == pytest.approx(0.005270342447276725, abs=1e-9)
    freq = corrected_resampled_ttest(paired)
    assert freq.p_value == pytest.approx(0.6216862298080181, abs=1e-9)
    lo, hi = freq.interval.low, freq.interval.high
    assert lo == pytest.approx(-0.0130664, abs=1e-7)
    assert hi == pytest.approx(0.0078486, abs=1e-7)


@pytest.mark.parametrize(
    ("case_id", "rope"),
    [("baycomp_two_on_single_norope", 0.0), ("baycomp_two_on_single_rope05", 0.5)],
)
def test_reproduces_baycomp_documentation(case_id, rope):
    df = baycomp_long()
    df = df[(df["row_index"] == 40) & (df["run"] == 1)]
    assert set(df["dataset"]) == {"sonar"}
    table = read_scores(df, dataset="dataset", system="classifier", score="score_percent")
    res = correlated_ttest(table.paired("nbc", "j48"), rope=rope)
    np.testing.assert_allclose(
        (res.p_a_better, res.p_rope, res.p_b_better),
        expected_probabilities(case_id),
        rtol=0,
        atol=1e-12,
    )


def test_closed_form_against_scipy(rng):
    d = rng.normal(0.01, 0.02, size=30)
    post = correlated_ttest_posterior(d, rho=1 / 3)
    scale = np.std(d, ddof=1) * np.sqrt(1 / 30 + (1 / 3) / (2 / 3))
    dist = stats.t(29, loc=d.mean(), scale=scale)
    masses = post.region_masses(0.005)[0]
    np.testing.assert_allclose(
        masses,
        [dist.sf(0.005), dist.cdf(0.005) - dist.cdf(-0.005), dist.cdf(-0.005)],
        rtol=1e-12,
    )
    assert masses.sum() == pytest.approx(1.0, abs=1e-14)


def test_orientation_swap_and_lower_is_better(rng):
    x = rng.normal(0.80, 0.02, size=20)
    y = x - rng.normal(0.01, 0.01, size=20)
    table = from_arrays(x, y, names=("a", "b"), runs=2)
    ab = correlated_ttest(table.paired("a", "b"), rope=0.005)
    ba = correlated_ttest(table.paired("b", "a"), rope=0.005)
    assert ab.p_a_better > 0.8  # A is clearly better by construction
    assert (ab.p_a_better, ab.p_rope, ab.p_b_better) == pytest.approx(
        (ba.p_b_better, ba.p_rope, ba.p_a_better), abs=1e-15
    )
    # the same numbers read as an error rate: now b is the better system
    errors = from_arrays(x, y, names=("a", "b"), runs=2, higher_is_better=False)
    low = correlated_ttest(errors.paired("a", "b"), rope=0.005)
    assert low.p_b_better == pytest.approx(ab.p_a_better, abs=1e-15)
    assert low.p_a_better == pytest.approx(ab.p_b_better, abs=1e-15)


def test_zero_variance_is_a_point_mass():
    x = np.full(10, 0.9)
    y = np.full(10, 0.85)
    res = correlated_ttest(from_arrays(x, y, runs=1).paired("A", "B"), rope=0.01)
    assert (res.p_a_better, res.p_rope, res.p_b_better) == (1.0, 0.0, 0.0)
    assert corrected_resampled_ttest(from_arrays(x, y, runs=1).paired("A", "B")).p_value == 0.0
    same = from_arrays(x, x, runs=1).paired("A", "B")
    # identical systems: equivalent with a ROPE; without one (a zero width) no equivalence
    # is concluded and neither side favoured (issue 29: it was P(rope) = 1, "equivalent")
    assert correlated_ttest(same, rope=0.01).p_rope == 1.0
    assert correlated_ttest(same, rope=0.0).probabilities().as_tuple() == (0.5, 0.0, 0.5)


def test_probabilities_for_another_rope_without_refit(rng):
    x = rng.normal(0.80, 0.02, size=10)
    y = rng.normal(0.79, 0.02, size=10)
    res = correlated_ttest(from_arrays(x, y, runs=1).paired("A", "B"), rope=0.0)
    ropes = [0.0, 0.002, 0.01, 0.05]
    p_rope = [res.probabilities(rope=r).p_rope for r in ropes]
    assert p_rope == sorted(p_rope)
    again = correlated_ttest(from_arrays(x, y, runs=1).paired("A", "B"), rope=0.01)
    assert res.probabilities(rope=0.01).as_tuple() == pytest.approx(
        (again.p_a_better, again.p_rope, again.p_b_better), abs=1e-15
    )


def test_rho_settable_from_sizes():
    assert rho_from_sizes(20, 80) == pytest.approx(0.2)
    x = np.array([0.8, 0.82, 0.79, 0.81, 0.83])
    y = np.array([0.79, 0.8, 0.8, 0.8, 0.8])
    paired = from_arrays(x, y, runs=1).paired("A", "B")
    a = correlated_ttest(paired, rho=rho_from_sizes(20, 80)).posterior
    b = correlated_ttest(paired).posterior  # default rho = 1/5 folds
    assert a.scale == pytest.approx(b.scale)


def test_correlated_ttest_iv():
    one_fold = pd.DataFrame(
        {"dataset": "d", "system": ["a", "b"], "run": [1, 1], "fold": [1, 1], "score": [0.1, 0.2]}
    )
    with pytest.raises(InputError, match="single fold, so rho = 1/folds = 1.*sign or signed-rank"):
        correlated_ttest(read_scores(one_fold).paired("a", "b"))
    x = np.array([[0.8, 0.82, 0.79], [0.7, 0.71, 0.72]])
    paired = from_arrays(x, x - 0.01, runs=1).paired("A", "B")
    with pytest.raises(InputError, match="cover 2 data sets; pass `dataset=`"):
        correlated_ttest(paired)
    assert correlated_ttest(paired, dataset="1").settings["dataset"] == "1"
    with pytest.raises(InputError, match="`dataset`: unknown data set 'x'"):
        correlated_ttest(paired, dataset="x")
    with pytest.raises(InputError, match="`rope` must be a non-negative number"):
        correlated_ttest(paired, rope=-0.01, dataset="0")
    with pytest.raises(InputError, match=r"`rho` must be in \[0, 1\)"):
        correlated_ttest(paired, rho=1.5, dataset="0")
    with pytest.raises(InputError, match="at least 2 differences"):
        correlated_ttest_posterior(np.array([0.1]), rho=0.1)
    with pytest.raises(InputError, match="`n_test` must be an integer >= 1"):
        rho_from_sizes(0, 10)


def _coverage(rng, n_runs, n_folds, rho, reps):
    """Fraction of 95% credible intervals covering the true mean difference.

    Data from the model itself: compound-symmetric normal differences with
    correlation rho. There the Student-t posterior interval is an exact 95%
    frequentist interval, so coverage must be 0.95 up to Monte Carlo error.
    """
    n = n_runs * n_folds
    delta, sigma = 0.01, 0.03
    e = rng.standard_normal((reps, n))
    u = rng.standard_normal((reps, 1))
    x = delta + sigma * (np.sqrt(1 - rho) * e + np.sqrt(rho) * u)
    hits = 0
    for row in x:
        lo, hi = correlated_ttest_posterior(row, rho).interval(0.95)
        hits += lo <= delta <= hi
    return hits / reps


def test_interval_coverage_on_model_data(rng):
    reps = 4000
    cov = _coverage(rng, 2, 5, 0.2, reps)
    # 4 Monte Carlo standard errors of a proportion 0.95 from 4000 replicates (0.014)
    assert abs(cov - 0.95) < 4 * np.sqrt(0.95 * 0.05 / reps)


@pytest.mark.slow
@pytest.mark.parametrize(("n_runs", "n_folds"), [(1, 2), (1, 10), (10, 10), (3, 5)])
def test_interval_coverage_thorough(rng, n_runs, n_folds):
    reps = 40_000
    cov = _coverage(rng, n_runs, n_folds, 1 / n_folds, reps)
    # 4 Monte Carlo standard errors (0.0044)
    assert abs(cov - 0.95) < 4 * np.sqrt(0.95 * 0.05 / reps)


@given(
    arrays(float, 10, elements=st.floats(0.5, 0.9)),
    arrays(float, 10, elements=st.floats(0.5, 0.9)),
    st.floats(-0.4, 0.1),
)
def test_adding_a_constant_to_both_systems_changes_nothing(x, y, c):
    base = correlated_ttest(from_arrays(x, y, runs=1).paired("A", "B"), rope=0.01)
    shifted = correlated_ttest(from_arrays(x + c, y + c, runs=1).paired("A", "B"), rope=0.01)
    np.testing.assert_allclose(
        shifted.probabilities().as_tuple(), base.probabilities().as_tuple(), atol=1e-6
    )


def test_seed_is_recorded_though_the_test_is_exact(uci_long_path):
    from isbetter.cli import main

    table = isbetter.read_scores(
        uci_long_path, dataset="dataset_id", system="classifier", score="accuracy"
    )
    res = isbetter.compare(table, "nbc", "aode", method="correlated_t", dataset="1", rng=3)
    assert res.settings["seed"] == 3
    again = isbetter.compare(table, "nbc", "aode", method="correlated_t", dataset="1", rng=4)
    assert again.probabilities() == res.probabilities()  # exact: the seed changes nothing
    assert main(
        ["cv", str(uci_long_path), "--dataset-col", "dataset_id", "--system-col", "classifier",
         "--metric", "accuracy", "--a", "nbc", "--b", "aode", "--dataset", "1", "--seed", "3"]
    ) == 0  # fmt: skip
