"""Tests of the paired / unpaired F1 models and of compare_f1 (Zhang et al. SIGIR 2016)."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from isbetter import InputError, InputTypeError, RenamedArgumentWarning
from isbetter.f1.baselines import Baselines
from isbetter.f1.compare import F1_MODELS, compare_f1
from isbetter.f1.measures import accuracy, dcf, f1, fbeta, get_measure
from isbetter.f1.paired import F1Model, F1Prior, sample_delta, sample_rates
from isbetter.f1.predictions import JointCounts, predictions_from_arrays
from isbetter.results import ComparisonResult, F1Result, TestResult

COUNTS = JointCounts(pos=np.array([120, 40, 15, 25]), neg=np.array([10, 12, 30, 248]))
MIRROR = {
    "a_better": "b_better",
    "a_leaning": "b_leaning",
    "equivalent": "equivalent",
    "b_leaning": "a_leaning",
    "b_better": "a_better",
}


def bootstrap_interval(res, label=None):
    """The percentile interval of row `label`'s bootstrap test."""
    return res.comparison(label).summary().test("bootstrap").interval


def make_predictions(rng, n=2000, acc_a=0.85, acc_b=0.8, n_classes=2):
    """Correlated systems: B reuses A's uniform (document difficulty) 70 % of the time."""
    gold = rng.integers(0, n_classes, n)
    u = rng.random(n)
    v = np.where(rng.random(n) < 0.7, u, rng.random(n))
    a = np.where(u < acc_a, gold, (gold + rng.integers(1, n_classes, n)) % n_classes)
    b = np.where(v < acc_b, gold, (gold + rng.integers(1, n_classes, n)) % n_classes)
    return pd.DataFrame({"gold": gold, "a": a, "b": b})


# ----------------------------------------------------------------------------- exact sampler
def test_exact_posterior_marginals(rng):
    """Dirichlet aggregation: rho+_A ~ Beta(a11 + a10 + c11 + c10, a01 + a00 + c01 + c00)."""
    (tp, fp, fn, tn), (tp_b, fp_b, fn_b, tn_b) = sample_rates(COUNTS, draws=40_000, rng=rng)
    mu = tp + fn
    n_pos, n_neg = COUNTS.pos.sum(), COUNTS.neg.sum()
    checks = [
        (mu, stats.beta(1 + n_pos, 1 + n_neg)),
        (tp / mu, stats.beta(2 + 120 + 40, 2 + 15 + 25)),  # rho+ of A
        (fp / (1 - mu), stats.beta(2 + 10 + 12, 2 + 30 + 248)),  # rho- of A
        (tp_b / mu, stats.beta(2 + 120 + 15, 2 + 40 + 25)),  # rho+ of B
        (fp_b / (1 - mu), stats.beta(2 + 10 + 30, 2 + 12 + 248)),  # rho- of B
    ]
    for draws, dist in checks:
        # seeded, so deterministic; a correct sampler fails this with probability 1e-3
        assert stats.kstest(draws, dist.cdf).pvalue > 1e-3
    np.testing.assert_allclose(tp + fp + fn + tn, 1.0)


def test_unpaired_marginals(rng):
    (tp, fp, fn, tn), _ = sample_rates(COUNTS, model="unpaired", draws=40_000, rng=rng)
    mu = tp + fn
    assert stats.kstest(tp / mu, stats.beta(1 + 160, 1 + 40).cdf).pvalue > 1e-3
    assert stats.kstest(fp / (1 - mu), stats.beta(1 + 22, 1 + 278).cdf).pvalue > 1e-3


def test_batched_sampling_agrees_with_single(rng):
    stack = JointCounts(
        pos=np.stack([COUNTS.pos, COUNTS.pos[::-1]]), neg=np.stack([COUNTS.neg, COUNTS.neg[::-1]])
    )
    d = sample_delta(stack, f1, draws=30_000, rng=rng)
    assert d.shape == (2, 30_000)
    single = sample_delta(COUNTS, f1, draws=30_000, rng=rng)
    # difference of two means of 30 000 independent draws: sd = sd(d) sqrt(2 / 30 000)
    assert abs(d[0].mean() - single.mean()) < 4 * single.std() * np.sqrt(2 / 30_000)
    assert d[1].mean() != pytest.approx(d[0].mean(), abs=0.01)


def test_delta_recovers_truth_and_paired_is_sharper(rng):
    # scenario (a) of the paper, with counts equal to their expectations at N = 20 000
    c = JointCounts(pos=np.array([3000, 3000, 2000, 2000]), neg=np.array([2000, 2000, 3000, 3000]))
    paired = sample_delta(c, f1, draws=20_000, rng=rng)
    unpaired = sample_delta(c, f1, model="unpaired", draws=20_000, rng=rng)
    for d in (paired, unpaired):
        assert abs(d.mean() - 0.1) < 4 * d.std() / np.sqrt(20_000) + 0.002  # prior/ratio bias
    # sd ratio is about 0.91 here; each sd is estimated to ~0.5 % from 20 000 draws
    assert paired.std() < 0.95 * unpaired.std()


def test_same_seed_same_draws_and_prior_validation():
    d1 = sample_delta(COUNTS, f1, draws=25_000, rng=np.random.default_rng(3))
    d2 = sample_delta(COUNTS, f1, draws=25_000, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(d1, d2)
    with pytest.raises(InputError, match="`theta_pos` must be 4 positive numbers"):
        F1Prior(theta_pos=(1, 1, 0, 1))
    with pytest.raises(InputError, match="Unknown model"):
        sample_rates(COUNTS, model="joint", rng=np.random.default_rng(0))  # type: ignore[arg-type]


def test_prior_hyperparameters_matter_with_little_data(rng):
    tiny = JointCounts(pos=np.array([2, 1, 0, 1]), neg=np.array([0, 1, 1, 4]))
    flat = sample_rates(tiny, draws=20_000, rng=rng)[0][0]
    strong = sample_rates(tiny, prior=F1Prior(mu=(50, 50)), draws=20_000, rng=rng)[0][0]
    mu_flat, mu_strong = (flat.mean(), strong.mean())
    assert mu_flat != pytest.approx(mu_strong, abs=0.02)


# ------------------------------------------------------------------------------- measures
def test_measures_on_rates_and_dcf_orientation(rng):
    # A misses fewer clients and accepts fewer impostors: lower DCF, so delta > 0
    c = JointCounts(pos=np.array([800, 150, 10, 40]), neg=np.array([5, 5, 60, 8930]))
    m = dcf(cost_fn=1, cost_fp=10, p_positive=0.1)
    d = sample_delta(c, m, draws=20_000, rng=rng)
    (ca, cb) = c.cells()
    assert m(*ca) < m(*cb)
    assert d.mean() > 0
    # DCF is linear in the rates within each class, so its posterior mean is exact: with
    # theta+ ~ Dir(pos + 1), theta- ~ Dir(neg + 1) (cells (A, B) = ++, +-, -+, --), the miss
    # rate of A is theta+_-+ + theta+_--, of B theta+_+- + theta+_--, the false alarm rate
    # of A theta-_++ + theta-_+-, of B theta-_++ + theta-_-+; so DCF(B) - DCF(A) is
    # 0.1 (theta+_+- - theta+_-+) + 9 (theta-_-+ - theta-_+-). Exact sampler: independent
    # draws, Monte Carlo standard error sd / sqrt(20 000).
    ep, en = (c.pos + 1) / (c.pos.sum() + 4), (c.neg + 1) / (c.neg.sum() + 4)
    exact = 1 * 0.1 * (ep[1] - ep[2]) + 10 * 0.9 * (en[2] - en[1])
    assert d.mean() == pytest.approx(exact, abs=4 * d.std() / np.sqrt(20_000))


@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda: fbeta(-1.0), InputError, "`beta` must be a finite non-negative number, got -1.0"),
        (lambda: fbeta(float("inf")), InputError, "`beta` must be a finite non-negative number"),
        (lambda: fbeta("2"), InputTypeError, "`beta` must be a non-negative number, got str '2'"),
        (lambda: dcf(cost_fn=-1), InputError, "`cost_fn` must be a finite non-negative number"),
        (lambda: dcf(cost_fp=float("nan")), InputError, "`cost_fp` must be a finite non-negative"),
        (lambda: dcf(cost_fp=None), InputTypeError, "`cost_fp` must be a non-negative number"),
        (
            lambda: dcf(p_positive=1.5),
            InputError,
            r"`p_positive` must be a probability in \[0, 1\]",
        ),
        (lambda: dcf(p_positive="0.1"), InputTypeError, "`p_positive` must be a probability"),
    ],
)
def test_bad_fbeta_and_dcf_arguments_are_named(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_user_function_equals_builtin(rng):
    def my_f1(tp, fp, fn, tn):
        return 2 * tp / (2 * tp + fp + fn)

    d1 = sample_delta(COUNTS, get_measure(my_f1), draws=10_000, rng=np.random.default_rng(1))
    d2 = sample_delta(COUNTS, f1, draws=10_000, rng=np.random.default_rng(1))
    np.testing.assert_allclose(d1, d2, rtol=1e-12)
    assert get_measure(my_f1).name == "my_f1"
    with pytest.raises(InputError, match="Unknown measure 'auc'"):
        get_measure("auc")


@pytest.mark.parametrize(
    "name",
    ["f1", "precision", "recall", "accuracy", "specificity", "balanced_accuracy", "fbeta", "dcf"],
)
def test_builtin_measures_match_sklearn_style_formulas(name):
    tp, fp, fn, tn = 30.0, 10.0, 5.0, 55.0
    expected = {
        "f1": 60 / 75,
        "precision": 0.75,
        "recall": 30 / 35,
        "accuracy": 0.85,
        "specificity": 55 / 65,
        "balanced_accuracy": (30 / 35 + 55 / 65) / 2,
        "fbeta": 5 * 30 / (5 * 30 + 4 * 5 + 10),  # beta = 2
        "dcf": 0.5 * 5 / 35 + 0.5 * 10 / 65,
    }[name]
    m = get_measure(name, beta=2.0)
    assert float(m(tp, fp, fn, tn)) == pytest.approx(expected)
    # invariant to the total: rates give the same value
    assert float(m(tp / 100, fp / 100, fn / 100, tn / 100)) == pytest.approx(expected)


# ----------------------------------------------------------------------------- compare_f1
def test_compare_f1_binary_row_and_result_api(rng):
    df = make_predictions(rng)
    res = compare_f1(df, rng=5, draws=20_000, baselines=Baselines(resamples=2000))
    assert isinstance(res, F1Result)
    assert res.classes == ("1",)
    row = res.row()
    for key in (
        "label",
        "mean",
        "sd",
        "interval_low",
        "interval_high",
        "p_rope",
        "p_below_0",
        "p_above_0",
        "bf01",
        "decision",
        "sign_p_value",
        "mcnemar_p_value",
        "bootstrap_p_value",
    ):
        assert key in row
    assert row["interval_low"] <= row["mean"] <= row["interval_high"]
    assert row["p_below_0"] + row["p_above_0"] == pytest.approx(1.0)
    assert row["p_a_better"] + row["p_rope"] + row["p_b_better"] == pytest.approx(1.0)
    # the p_rope of the row is the fraction of draws inside the ROPE
    d = res.draws()
    assert row["p_rope"] == pytest.approx(np.mean(np.abs(d) <= 0.05))
    # the per-class ComparisonResult carries the same draws and probabilities
    cr = res.comparisons["1"]
    assert isinstance(cr, ComparisonResult)
    assert cr.label == "1" and cr.metric == "f1" and cr.higher_is_better
    assert cr.observed.n == 2000 and cr.observed.n_positive == res.counts["1"].pos.sum()
    assert cr.estimate.interval.kind == "hdi" and cr.estimate.decision == row["decision"]
    assert [t.name for t in cr.tests] == [
        "sign",
        "ptest",
        "mcnemar",
        "mcnemar_chi2",
        "bootstrap",
        "randomization",
    ]
    assert all(isinstance(t, TestResult) for t in cr.tests)
    assert cr.diagnostics is None and res.diagnostics is None
    assert cr.p_a_better == pytest.approx(row["p_a_better"])
    assert cr.probabilities(rope=0.0).p_rope == 0.0
    assert res.settings["seed"] == 5 and "versions" in res.settings
    assert cr.settings["label"] == "1" and cr.settings["seed"] == 5
    # the signature and a JSON round trip of the light summary
    assert "method:paired-f1|rope:0.05|draws:20000|seed:5" in res.summary().signature
    data = json.loads(json.dumps(res.to_dict()))
    assert data["rows"][0]["label"] == "1"
    assert data["rows"][0]["estimate"]["decision"] == row["decision"]
    assert F1_MODELS == ("paired", "unpaired", "hierarchical")


def test_swapping_a_and_b_mirrors_every_number(rng):
    df = make_predictions(rng)
    res1 = compare_f1(
        df, system_a="a", system_b="b", rng=11, draws=20_000, baselines=Baselines(resamples=2000)
    )
    res2 = compare_f1(
        df, system_a="b", system_b="a", rng=11, draws=20_000, baselines=Baselines(resamples=2000)
    )
    r1, r2 = res1.row(), res2.row()
    assert r1["score_a"] == r2["score_b"] and r1["observed"] == pytest.approx(-r2["observed"])
    assert r1["mean"] == pytest.approx(-r2["mean"], abs=1e-15)
    assert r1["sd"] == pytest.approx(r2["sd"], rel=1e-12)
    assert r1["interval_low"] == pytest.approx(-r2["interval_high"], abs=1e-15)
    assert r1["interval_high"] == pytest.approx(-r2["interval_low"], abs=1e-15)
    assert (r1["p_below_0"], r1["p_above_0"]) == (r2["p_above_0"], r2["p_below_0"])
    assert (r1["p_a_better"], r1["p_b_better"]) == (r2["p_b_better"], r2["p_a_better"])
    assert r1["p_rope"] == r2["p_rope"]
    assert r1["bf01"] == pytest.approx(r2["bf01"], rel=1e-9)
    assert r1["decision"] == MIRROR[r2["decision"]]
    for key in (
        "sign_p_value",
        "ptest_p_value",
        "mcnemar_p_value",
        "mcnemar_chi2_p_value",
        "bootstrap_p_value",
        "randomization_p_value",
    ):
        assert r1[key] == pytest.approx(r2[key], rel=1e-12), key
    assert bootstrap_interval(res1).low == pytest.approx(-bootstrap_interval(res2).high)


def test_identical_predictions_are_sampled_not_declared_equivalent(rng):
    """Regression: A = B on every document gave delta = 0, "≈" and BF01 = inf at any size.

    The model's posterior is sampled instead: agreement on 20 documents is weak evidence
    (a wide HDI, no "≈"), agreement on 20 000 documents strong evidence ("≈").
    Regression (statistical review): the wide HDI of the 20 documents, across both ROPE
    bounds, was labelled "b_leaning" by the sign of the Monte Carlo mean; it is undecided.
    """
    small = make_predictions(rng, n=20, n_classes=2)
    small["b"] = small["a"]
    res = compare_f1(small, rng=1, draws=20_000, baselines=Baselines(resamples=500))
    row = res.row()
    assert row["interval_high"] - row["interval_low"] > 0.2  # the model's own uncertainty
    assert row["interval_low"] < -0.05 and row["interval_high"] > 0.05
    assert row["decision"] == "undecided" and np.isfinite(row["bf01"])
    for seed in (2, 3, 4):  # whichever side the draws' mean falls
        assert compare_f1(small, rng=seed, draws=20_000, baselines=False).row()["decision"] == (
            "undecided"
        )
    assert abs(row["mean"]) < 0.01  # symmetric in A and B
    assert row["sign_p_value"] == 1.0 and row["bootstrap_p_value"] == 1.0
    big = make_predictions(rng, n=20_000, n_classes=2)
    big["b"] = big["a"]
    assert compare_f1(big, rng=1, draws=20_000, baselines=False).row()["decision"] == "equivalent"
    with pytest.raises(InputError, match="are both 'a'"):
        compare_f1(small, system_a="a", system_b="a", rng=1)


def test_hdi_agrees_with_keller_bootstrap_interval_at_7500_documents():
    """Acceptance: flat prior, N = 7 500: 95 % HDI within 0.005 of Keller's percentile interval.

    Both estimate the sampling distribution of delta F1; their Monte Carlo errors at
    50 000 posterior draws / 10 000 resamples are about 3e-4 on the bounds.
    """
    df = make_predictions(np.random.default_rng(20240917), n=7500)
    res = compare_f1(df, rng=2024, draws=50_000, baselines=Baselines(resamples=10_000))
    row, boot = res.row(), bootstrap_interval(res)
    assert abs(row["interval_low"] - boot.low) < 0.005
    assert abs(row["interval_high"] - boot.high) < 0.005
    assert row["interval_high"] - row["interval_low"] > 0.015  # the check is not vacuous


def test_multiclass_rows_are_one_vs_rest(rng):
    df = make_predictions(rng, n=3000, n_classes=4)
    res = compare_f1(df, rng=3, draws=5000, baselines=Baselines(resamples=500))
    assert res.classes == ("0", "1", "2", "3", "macro", "micro")
    assert {t.name for t in res.across_classes} == {"t_test", "s_test"}
    # class 2's row equals a binary comparison of "2" against the rest
    t = predictions_from_arrays(
        (df.gold == 2).astype(int), a=(df.a == 2).astype(int), b=(df.b == 2).astype(int)
    )
    binary = compare_f1(t, rng=3, draws=5000, baselines=Baselines(resamples=500))
    assert binary.row()["score_a"] == pytest.approx(res.row(2)["score_a"])
    assert binary.counts["1"].pos.tolist() == res.counts["2"].pos.tolist()
    sub = compare_f1(df, rng=3, draws=5000, classes=[2, 0], baselines=False)
    assert sub.classes == ("2", "0") and "sign_p_value" not in sub.table


def test_decisions_follow_hdi_and_rope(rng):
    df = make_predictions(rng, n=4000, acc_a=0.95, acc_b=0.7)
    row = compare_f1(df, rng=1, draws=10_000, baselines=False).row()
    assert row["interval_low"] > 0.05 and row["decision"] == "a_better"
    assert row["bf01"] < 1 / 3
    close = make_predictions(rng, n=6000, acc_a=0.8, acc_b=0.8)
    row = compare_f1(close, rng=1, draws=10_000, baselines=False).row()
    assert row["decision"] == "equivalent" and row["bf01"] > 3


def test_unpaired_model_is_wider(rng):
    df = make_predictions(rng, n=3000)
    paired = compare_f1(df, rng=1, draws=10_000, baselines=False).row()
    unpaired = compare_f1(df, rng=1, draws=10_000, model="unpaired", baselines=False).row()
    assert unpaired["sd"] > paired["sd"]
    # each posterior mean against an independent computation of the same posterior (numpy's
    # Dirichlet and beta draws, the models of Zhang et al. 2016 written out here), within 4
    # Monte Carlo standard errors of the two (both samplers exact: independent draws)
    counts = binary_counts(df)
    for model, row in (("paired", paired), ("unpaired", unpaired)):
        mean, sd = reference_f1_delta(counts, model, 200_000, np.random.default_rng(9))
        assert row["mean"] == pytest.approx(mean, abs=4 * sd * np.sqrt(1 / 10_000 + 1 / 200_000))


def test_unpaired_macro_micro_rows_are_wider(rng):
    df = make_predictions(rng, n=3000, n_classes=3)
    paired = compare_f1(df, rng=1, draws=6000, baselines=False)
    unpaired = compare_f1(df, rng=1, draws=6000, model="unpaired", baselines=False)
    assert unpaired.classes == ("0", "1", "2", "macro", "micro")
    assert unpaired.comparisons["micro"].method == "f1_unpaired_micro"
    assert unpaired.settings["average_model"] == "flat_unpaired"
    for key in ("macro", "micro"):
        p, u = paired.row(key), unpaired.row(key)
        assert u["sd"] > p["sd"]
        assert u["mean"] == pytest.approx(p["mean"], abs=4 * u["sd"] / np.sqrt(6000) + 0.002)
        assert u["observed"] == p["observed"]
        prior = unpaired.prior_draws[key]
        np.testing.assert_array_equal(prior[:6000], -prior[6000:])


def test_compare_f1_iv(rng):
    df = make_predictions(rng, n=200)
    with pytest.raises(InputError, match="Column 'c' not found. Available columns: 'gold', 'a'"):
        compare_f1(df, system_a="c", system_b="a")
    table = predictions_from_arrays(df.gold, a=df.a, b=df.b)
    with pytest.raises(InputError, match="unknown system 'c'. Available systems: 'a', 'b'"):
        compare_f1(table, system_a="c", system_b="a")
    three = df.assign(c=df.a)
    with pytest.raises(InputError, match="Name the two systems"):
        compare_f1(three)
    with pytest.raises(InputError, match="`rope` must be a non-negative number"):
        compare_f1(df, rope=-0.1)
    with pytest.raises(InputError, match="`classes` names 2 classes of a binary task"):
        compare_f1(df, classes=[0, 1])
    with pytest.raises(InputError, match="`classes`: 7 is not a gold label"):
        compare_f1(df, classes=7)
    with pytest.raises(InputError, match="Unknown model"):
        compare_f1(df, model="joint")
    with pytest.raises(InputError, match="`prior` sets the paired and unpaired"):
        compare_f1(df, model=F1Model("hierarchical", prior=F1Prior()))
    res = compare_f1(df, classes=0, rng=0, draws=1000, baselines=False)
    assert res.classes == ("0",)
    same = compare_f1(df, classes=[0], rng=0, draws=1000, baselines=False)
    assert same.table.equals(res.table)


def test_accuracy_measure_and_seeds(rng):
    df = make_predictions(rng, n=500)
    r1 = compare_f1(df, metric="accuracy", rng=9, draws=2000, baselines=Baselines(resamples=300))
    r2 = compare_f1(df, metric=accuracy, rng=9, draws=2000, baselines=Baselines(resamples=300))
    pd.testing.assert_frame_equal(r1.table, r2.table)
    r3 = compare_f1(df, metric="accuracy", rng=10, draws=2000, baselines=Baselines(resamples=300))
    assert r3.row()["mean"] != r1.row()["mean"]
    assert r1.metric == "accuracy"


@pytest.mark.parametrize("shape", [0.3, 1.0, 2.5, 6.0, 300.0, 5000.0])
def test_gamma_sampler_is_exact(shape):
    """The vectorised Marsaglia-Tsang sampler against scipy's Gamma CDF (and its mean)."""
    from isbetter.f1.paired import _standard_gamma

    g = np.random.default_rng(int(shape * 10))
    x = _standard_gamma(shape, (100_000,), g)
    assert stats.kstest(x, stats.gamma(shape).cdf).pvalue > 1e-3
    # mean within 4 standard errors (sd = sqrt(shape))
    assert abs(x.mean() - shape) < 4 * np.sqrt(shape / 100_000)
    # array shapes broadcast along the draws; each row has its own shape
    rows = _standard_gamma(np.array([[shape], [2 * shape]]), (2, 50_000), g)
    assert stats.kstest(rows[1], stats.gamma(2 * shape).cdf).pvalue > 1e-3


# ------------------------------------------------------------------- multi-class averages
def _macro_f1(confusion):
    """Mean over classes of F1 = 2 tp / (2 tp + fp + fn); confusion (draws, gold, predicted)."""
    tp = np.diagonal(confusion, axis1=1, axis2=2)
    fp, fn = confusion.sum(axis=1) - tp, confusion.sum(axis=2) - tp
    return (2 * tp / (2 * tp + fp + fn)).mean(axis=1)


def test_macro_micro_rows(rng):
    df = make_predictions(rng, n=6000, n_classes=4, acc_a=0.85, acc_b=0.8)
    res = compare_f1(df, rng=4, draws=8000, baselines=Baselines(resamples=2000))
    t = res.table.set_index("label")
    # observed macro F1 is the mean of the per-class F1; micro F1 is the accuracy
    assert t.loc["macro", "score_a"] == pytest.approx(t.loc[list("0123"), "score_a"].mean())
    assert t.loc["micro", "score_a"] == pytest.approx(np.mean(df.gold == df.a))
    assert t.loc["micro", "score_b"] == pytest.approx(np.mean(df.gold == df.b))
    # flat prior, N = 6 000: the HDIs agree with the documents' bootstrap (same sampling
    # distribution); MC error of each bound ~5e-4 at 8 000 draws / 2 000 resamples
    for key in ("macro", "micro"):
        boot = bootstrap_interval(res, key)
        assert t.loc[key, "interval_low"] == pytest.approx(boot.low, abs=0.005)
        assert t.loc[key, "interval_high"] == pytest.approx(boot.high, abs=0.005)
    # posterior means: micro (the accuracy difference) is linear in the cells, so with the
    # default Dir(1/m^2) on each of the m^3 = 64 cells its mean is exactly the observed
    # difference times N / (N + m) (the prior's cells add as much to A's accuracy as to
    # B's); macro against plain Dirichlet draws of all 64 cells. Within 4 Monte Carlo
    # standard errors (exact samplers: independent draws).
    mean, sd = t.loc["micro", "mean"], t.loc["micro", "sd"]
    exact = t.loc["micro", "observed"] * 6000 / (6000 + 4)
    assert mean == pytest.approx(exact, abs=4 * sd / np.sqrt(8000))
    cells = np.zeros((4, 4, 4))
    np.add.at(cells, (df.gold, df.a, df.b), 1)
    phi = np.random.default_rng(3).dirichlet(cells.ravel() + 1 / 16, 40_000).reshape(-1, 4, 4, 4)
    macro = _macro_f1(phi.sum(axis=3)) - _macro_f1(phi.sum(axis=2))
    ref, ref_sd = float(np.mean(macro)), float(np.std(macro))
    assert t.loc["macro", "mean"] == pytest.approx(
        ref, abs=4 * np.sqrt(t.loc["macro", "sd"] ** 2 / 8000 + ref_sd**2 / 40_000)
    )
    # micro delta of F1 = delta of accuracy; its sign test is the s-test on correctness
    assert t.loc["micro", "sign_p_value"] < 1e-6
    assert res.comparisons["macro"].method == "f1_paired_macro"


def test_macro_micro_mirror_under_swap(rng):
    df = make_predictions(rng, n=1500, n_classes=3)
    r1 = compare_f1(
        df, system_a="a", system_b="b", rng=8, draws=3000, baselines=Baselines(resamples=500)
    )
    r2 = compare_f1(
        df, system_a="b", system_b="a", rng=8, draws=3000, baselines=Baselines(resamples=500)
    )
    for key in ("macro", "micro"):
        np.testing.assert_allclose(r1.draws(key), -r2.draws(key), atol=1e-15)
        assert r1.row(key)["bf01"] == pytest.approx(r2.row(key)["bf01"], rel=1e-9)
        assert r1.row(key)["bootstrap_p_value"] == pytest.approx(r2.row(key)["bootstrap_p_value"])


def test_average_prior_is_weak_and_valid():
    from isbetter.f1.multiclass import sample_average_delta

    cells = np.zeros((5, 5, 5))
    macro, micro = sample_average_delta(cells, f1, draws=4000, rng=np.random.default_rng(0))
    # the prior of each difference is symmetric about 0 and bounded by 1
    assert abs(micro.mean()) < 4 * micro.std() / np.sqrt(4000)
    assert np.all(np.abs(macro) <= 1) and np.all(np.abs(micro) <= 1)
    with pytest.raises(InputError, match="`alpha` must be a positive"):
        sample_average_delta(cells, f1, alpha=0.0, rng=np.random.default_rng(0))


def test_swap_mirrors_exactly_with_a_tied_discordant_pair():
    # positives: 7 (1,0) and 7 (0,1) tie; negatives differ
    c = JointCounts(pos=np.array([50, 7, 7, 10]), neg=np.array([4, 9, 3, 80]))
    d1 = sample_delta(c, f1, draws=30_000, rng=np.random.default_rng(5))
    d2 = sample_delta(c.swapped(), f1, draws=30_000, rng=np.random.default_rng(5))
    np.testing.assert_allclose(d1, -d2, atol=1e-15)


def test_other_columns_are_ignored_when_systems_are_named(rng):
    df = make_predictions(rng, n=300).assign(doc_id=np.arange(300), note="x")
    res = compare_f1(df, system_a="a", system_b="b", rng=0, draws=500, baselines=False)
    assert res.row()["n"] == 300


counts_strategy = st.lists(st.integers(0, 40), min_size=8, max_size=8)


@settings(max_examples=15, deadline=None)
@given(cells=counts_strategy, rope=st.floats(0.0, 0.2))
def test_property_swap_negates_draws_and_rope_is_monotone(cells, rope):
    c = JointCounts(pos=np.array(cells[:4]), neg=np.array(cells[4:]))
    symmetric = cells[1] == cells[2] and cells[5] == cells[6]
    d1 = sample_delta(c, f1, draws=2000, rng=np.random.default_rng(1))
    d2 = sample_delta(c.swapped(), f1, draws=2000, rng=np.random.default_rng(1))
    if not symmetric:
        np.testing.assert_allclose(d1, -d2, atol=1e-15)
    assert np.all(np.abs(d1) <= 1)
    from isbetter.inference.posterior import DrawsPosterior

    res = ComparisonResult.from_posterior(
        DrawsPosterior(d1), system_a="a", system_b="b", rope=rope, method="f1", settings={}
    )
    assert res.probabilities(rope=rope + 0.01).p_rope >= res.p_rope


def binary_counts(df, positive=1):
    """Joint outcomes (A, B) = ++, +-, -+, -- of the positive and of the negative documents."""
    a, b, pos = (df.a == positive).to_numpy(), (df.b == positive).to_numpy(), df.gold == positive
    cells = [a & b, a & ~b, ~a & b, ~a & ~b]
    return JointCounts(
        np.array([(c & pos).sum() for c in cells]), np.array([(c & ~pos).sum() for c in cells])
    )


def reference_f1_delta(counts, model, draws, g):
    """Posterior mean and sd of F1(A) - F1(B) under the default uniform priors, by plain draws.

    Paired: mu ~ Beta(1 + n+, 1 + n-), theta+- ~ Dir(counts + 1), A's rate of positive
    predictions on positives theta+_++ + theta+_+-, B's theta+_++ + theta+_-+ (negatives
    alike). Unpaired: each system its own mu and Beta(1 + k, 1 + n - k) rates.
    """
    pos, neg = np.asarray(counts.pos, float), np.asarray(counts.neg, float)
    n_pos, n_neg = pos.sum(), neg.sum()

    def f1_of(mu, r_pos, r_neg):
        tp, fp, fn = mu * r_pos, (1 - mu) * r_neg, mu * (1 - r_pos)
        return 2 * tp / (2 * tp + fp + fn)

    if model == "paired":
        mu = g.beta(1 + n_pos, 1 + n_neg, draws)
        tp_, tn_ = g.dirichlet(pos + 1, draws), g.dirichlet(neg + 1, draws)
        f_a = f1_of(mu, tp_[:, 0] + tp_[:, 1], tn_[:, 0] + tn_[:, 1])
        f_b = f1_of(mu, tp_[:, 0] + tp_[:, 2], tn_[:, 0] + tn_[:, 2])
    else:
        k_a, k_b = (pos[0] + pos[1], neg[0] + neg[1]), (pos[0] + pos[2], neg[0] + neg[2])
        f_a, f_b = (
            f1_of(
                g.beta(1 + n_pos, 1 + n_neg, draws),
                g.beta(1 + kp, 1 + n_pos - kp, draws),
                g.beta(1 + kn, 1 + n_neg - kn, draws),
            )
            for kp, kn in (k_a, k_b)
        )
    d = f_a - f_b
    return float(d.mean()), float(d.std())


def keller_dcf_p_value(df, cost_fn=1.0, cost_fp=1.0, p_positive=0.5, positive=1):
    """Keller et al.'s paired proportion test of DCF(B) - DCF(A) (2004, eq. 9), from the
    documents: only those where A and B disagree (a miss of one, not the other, among
    the positives; a false alarm among the negatives) enter the variance."""
    pos = df.gold.to_numpy() == positive
    miss_a, miss_b = (df.a.to_numpy() != positive) & pos, (df.b.to_numpy() != positive) & pos
    alarm_a, alarm_b = (df.a.to_numpy() == positive) & ~pos, (df.b.to_numpy() == positive) & ~pos
    n_p, n_n = pos.sum(), (~pos).sum()
    wp, wn = cost_fn * p_positive, cost_fp * (1 - p_positive)
    d = wp * (miss_b.sum() - miss_a.sum()) / n_p + wn * (alarm_b.sum() - alarm_a.sum()) / n_n
    var = wp**2 * (miss_a != miss_b).sum() / n_p**2 + wn**2 * (alarm_a != alarm_b).sum() / n_n**2
    return 2 * stats.norm.sf(abs(d) / np.sqrt(var))


def test_dcf_comparison_has_kellers_proportion_test(rng):
    df = make_predictions(rng, n=1500)
    res = compare_f1(
        df, metric=dcf(cost_fp=3.0), rng=1, draws=2000, baselines=Baselines(resamples=300)
    )
    row = res.row()
    expected = keller_dcf_p_value(df, cost_fp=3.0)
    assert 1e-6 < expected < 0.5  # neither end, where every p-value looks alike
    assert row["dcf_ptest_p_value"] == pytest.approx(expected, rel=1e-9)
    assert res.metric == "dcf(1,3,0.5)" and not res.higher_is_better
    # A is the more accurate system: lower cost, so delta = DCF(B) - DCF(A) > 0
    assert row["score_a"] < row["score_b"] and row["mean"] > 0


def test_dcf_measure_object_gets_the_proportion_test_too(rng):
    """A DCF made by measures.dcf(...) is recognised as a DCF, like the name "dcf"."""
    df = make_predictions(rng, n=1500)
    with pytest.warns(RenamedArgumentWarning, match=r"write metric=dcf\(cost_fn=1, cost_fp=3, "):
        by_name = compare_f1(df, metric="dcf", cost_fp=3.0, rng=1, draws=2000, resamples=300)
    by_object = compare_f1(
        df, metric=dcf(cost_fp=3.0), rng=1, draws=2000, baselines=Baselines(resamples=300)
    )
    test = by_object.comparison().summary().test("dcf_ptest")
    assert test is not None
    assert test.p_value == pytest.approx(keller_dcf_p_value(df, cost_fp=3.0), rel=1e-9)
    assert test.p_value == by_name.row()["dcf_ptest_p_value"]
    assert test.estimate == pytest.approx(by_object.row()["observed"])
    pd.testing.assert_frame_equal(by_name.table, by_object.table)
    # the costs of the object are used, not compare_f1's old cost arguments
    with pytest.warns(RenamedArgumentWarning):
        other = compare_f1(df, metric=dcf(1.0, 10.0, 0.2), cost_fp=3.0, rng=1, draws=500)
    expected = keller_dcf_p_value(df, cost_fn=1.0, cost_fp=10.0, p_positive=0.2)
    assert expected != pytest.approx(keller_dcf_p_value(df, cost_fp=3.0), rel=0.01)
    assert other.row()["dcf_ptest_p_value"] == pytest.approx(expected, rel=1e-9)
    # not for other measures
    assert (
        "dcf_ptest_p_value"
        not in compare_f1(df, rng=1, draws=500, baselines=Baselines(resamples=50)).table
    )


def test_baselines_do_not_change_posterior_draws(rng):
    df = make_predictions(rng, n=400, n_classes=3)
    with_b = compare_f1(df, rng=12, draws=1000, baselines=Baselines(resamples=200))
    without = compare_f1(df, rng=12, draws=1000, baselines=False)
    for label in with_b.classes:
        np.testing.assert_array_equal(with_b.draws(label), without.draws(label))
    assert with_b.row(1)["bf01"] == without.row(1)["bf01"]
