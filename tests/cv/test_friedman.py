"""Frequentist baselines of a ranking: mean ranks, Friedman, Iman–Davenport, Nemenyi.

Pinned to Demšar (2006), JMLR 7: Table 6 (AUC of four C4.5 variants on 14 data sets,
shipped in data/demsar2006/) and Table 5 (the critical values q_alpha).
"""

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from isbetter import InputError, friedman_nemenyi, read_scores
from isbetter.cv.friedman import FriedmanNemenyi, dataset_means

TABLE6 = Path(__file__).resolve().parents[2] / "data" / "demsar2006" / "table6_auc.csv"
SYSTEMS = ("C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf")


@pytest.fixture(scope="module")
def table6() -> pd.DataFrame:
    return pd.read_csv(TABLE6, index_col="dataset")


def test_table6_as_printed_average_ranks(table6):
    """The printed values (3 decimals), ties averaged: the tie in `voting` shares 2.5."""
    res = friedman_nemenyi(table6)
    assert res.systems == SYSTEMS and res.n_datasets == 14
    ranks = [res.mean_ranks[s] for s in SYSTEMS]
    np.testing.assert_allclose(ranks, [44 / 14, 28 / 14, 41 / 14, 27 / 14])
    assert [round(r, 3) for r in ranks] == [3.143, 2.0, 2.929, 1.929]
    assert round(res.friedman.statistic, 3) == 9.857 and res.friedman.df == (3,)
    assert round(res.iman_davenport.statistic, 3) == 3.987
    assert res.iman_davenport.df == (3, 39)
    assert res.friedman.p_value == pytest.approx(stats.chi2.sf(res.friedman.statistic, 3))


def test_table6_reproduces_demsar_with_his_tie_break(table6):
    """Demšar's numbers follow when `voting` ranks C4.5+cf ahead of C4.5+m+cf (both 0.975).

    He ranked the unrounded AUCs; every other tie of the printed table (mushroom, iris,
    lung cancer, primary tumor) is averaged in his ranks too. Nudging C4.5+cf by 1e-4
    gives all his published numbers: mean ranks 3.143 / 2.000 / 2.893 / 1.964,
    chi2_F = 9.28, F_F = 3.69, CD = 1.25 (alpha 0.05, q = 2.569) and 1.12 (alpha 0.10).
    """
    broken = table6.copy()
    broken.loc["voting", "C4.5+cf"] += 1e-4
    res = friedman_nemenyi(broken)
    assert [round(res.mean_ranks[s], 3) for s in SYSTEMS] == [3.143, 2.0, 2.893, 1.964]
    assert round(res.friedman.statistic, 2) == 9.28
    assert round(res.iman_davenport.statistic, 2) == 3.69
    assert res.iman_davenport.p_value < 0.05  # Demšar: F(3, 39) critical value 2.85
    cd05, cd10 = res.critical_difference(0.05), res.critical_difference(0.10)
    assert round(cd05.q, 3) == 2.569 and round(cd05.cd, 2) == 1.25
    assert round(cd10.cd, 2) == 1.12
    # Demšar's reading: at 0.05 only C4.5 vs C4.5+m+cf differs (3.143 - 1.964 = 1.18 < 1.25:
    # none does); at 0.10, C4.5 differs from C4.5+m and C4.5+m+cf
    assert res.significant_levels("C4.5", "C4.5+m+cf") == (0.1,)
    assert res.significant_levels("C4.5", "C4.5+m") == (0.1,)
    assert res.significant_levels("C4.5+cf", "C4.5+m+cf") == ()
    assert cd05.groups == (("C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5"),)
    assert cd10.groups == (("C4.5+m+cf", "C4.5+m", "C4.5+cf"), ("C4.5+cf", "C4.5"))


# Demšar (2006), Table 5: q_alpha of the Nemenyi test for k = 2 .. 10 systems
Q_005 = (1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164)
Q_010 = (1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920)


@pytest.mark.parametrize("k", range(2, 11))
def test_critical_values_of_table5(k):
    scores = np.random.default_rng(k).normal(size=(5, k))
    res = friedman_nemenyi(scores)
    for alpha, table in ((0.05, Q_005), (0.10, Q_010)):
        c = res.critical_difference(alpha)
        assert c.q == pytest.approx(table[k - 2], abs=1.5e-3)  # Table 5 is truncated
        assert c.cd == pytest.approx(c.q * np.sqrt(k * (k + 1) / 30))


def test_friedman_is_scipys_without_ties_and_smaller_with_them():
    g = np.random.default_rng(3)
    scores = g.normal(size=(12, 5))  # continuous: no ties
    res = friedman_nemenyi(scores)
    ref = stats.friedmanchisquare(*scores.T)
    assert res.friedman.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.friedman.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    tied = np.round(scores, 0)  # many ties: scipy corrects for them, Demšar's formula does not
    assert friedman_nemenyi(tied).friedman.statistic < stats.friedmanchisquare(*tied.T).statistic


def test_direction_reverses_the_ranks(table6):
    best = friedman_nemenyi(table6)
    worst = friedman_nemenyi(table6, higher_is_better=False)
    for s in SYSTEMS:
        assert worst.mean_ranks[s] == pytest.approx(5 - best.mean_ranks[s])
    assert worst.friedman.statistic == pytest.approx(best.friedman.statistic)
    assert best.by_rank == ("C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5")


def test_groups_are_the_maximal_sets_closer_than_cd():
    """Every pair inside a group is closer than CD, every pair in no common group is not,
    and no group lies inside another; every system is in some group."""
    g = np.random.default_rng(7)
    for trial in range(40):
        k = int(g.integers(2, 9))
        scores = g.normal(size=(int(g.integers(2, 30)), k)) + g.normal(0, 0.7, size=k)
        res = friedman_nemenyi(scores)
        r = res.mean_ranks
        for c in res.nemenyi:
            sets = [set(grp) for grp in c.groups]
            assert set().union(*sets) == set(r), trial
            for a, b in itertools.combinations(r, 2):
                together = any({a, b} <= s for s in sets)
                assert together == (abs(r[a] - r[b]) < c.cd), (trial, a, b)
            assert not any(s < t for s in sets for t in sets), trial
            for grp in c.groups:
                assert [r[s] for s in grp] == sorted(r[s] for s in grp)


def test_score_table_uses_the_per_dataset_means():
    g = np.random.default_rng(5)
    rows = [
        (f"d{d}", s, run, fold, 0.7 + 0.01 * i + g.normal(0, 0.02))
        for d in range(6)
        for i, s in enumerate(["x", "y", "z"])
        for run in range(2)
        for fold in range(5)
    ]
    df = pd.DataFrame(rows, columns=["dataset", "system", "run", "fold", "err"])
    table = read_scores(df, score="err", higher_is_better=False)
    means = df.groupby(["dataset", "system"])["err"].mean().unstack()
    pd.testing.assert_frame_equal(
        dataset_means(table, "err"), means, check_names=False, check_index_type=False
    )
    res = friedman_nemenyi(table)
    assert res.higher_is_better is False
    assert res.to_dict() == friedman_nemenyi(means, higher_is_better=False).to_dict()
    sub = friedman_nemenyi(table, systems=["z", "x"])
    assert sub.systems == ("z", "x")
    assert sub.to_dict() == friedman_nemenyi(means[["z", "x"]], higher_is_better=False).to_dict()


def test_unanimous_and_all_tied_data_sets():
    unanimous = np.tile([3.0, 2.0, 1.0], (6, 1))
    res = friedman_nemenyi(unanimous)
    assert res.friedman.statistic == pytest.approx(12.0)  # N (k - 1)
    assert res.iman_davenport.statistic == np.inf and res.iman_davenport.p_value == 0.0
    flat = friedman_nemenyi(np.ones((4, 3)))
    assert flat.friedman.statistic == 0.0 and flat.friedman.p_value == 1.0
    assert flat.iman_davenport.statistic == 0.0 and flat.iman_davenport.p_value == 1.0
    assert flat.nemenyi[0].groups == (("1", "2", "3"),)


def test_round_trip_through_json(table6):
    res = friedman_nemenyi(np.tile([3.0, 2.0, 1.0], (6, 1)), systems=["a", "b", "c"])
    for r in (res, friedman_nemenyi(table6, alpha=0.01)):
        data = json.loads(json.dumps(r.to_dict(), allow_nan=False))
        again = FriedmanNemenyi.from_dict(data)
        assert again == r
        assert set(data) >= {"friedman", "iman_davenport", "mean_ranks", "nemenyi_cd"}
        assert {"statistic", "df", "p_value"} == set(data["friedman"])
        assert all({"alpha", "cd"} <= set(c) for c in data["nemenyi_cd"])
    assert data["iman_davenport"]["df"] == [3, 39] and data["friedman"]["df"] == 3


def test_bad_input_names_the_argument(table6):
    with pytest.raises(InputError, match="1 data set"):
        friedman_nemenyi(table6.iloc[:1])
    with pytest.raises(InputError, match="`data` has 4 NaN"):
        friedman_nemenyi(table6.mask(table6 > 0.999))
    with pytest.raises(InputError, match="`alpha`"):
        friedman_nemenyi(table6, alpha=0.0)
    with pytest.raises(InputError, match="`alpha`"):
        friedman_nemenyi(table6, alpha=[])
    with pytest.raises(InputError, match="`systems`"):
        friedman_nemenyi(table6, systems=["C4.5", "C5"])
    with pytest.raises(InputError, match="2-D"):
        friedman_nemenyi(np.zeros(5))
    with pytest.raises(InputError, match="`systems` names 2 systems"):
        friedman_nemenyi(np.zeros((3, 4)), systems=["a", "b"])
    with pytest.raises(InputError, match="`metric` is for a ScoreTable"):
        friedman_nemenyi(table6, metric="auc")
    with pytest.raises(InputError, match="no critical difference at 0.01"):
        friedman_nemenyi(table6).critical_difference(0.01)


def test_ties_do_not_depend_on_the_order_of_summation():
    """j48 and j48gr have the same mean accuracy on UCI data set 10 (0.7217) from different
    folds; summed in another order the two means differ in the last bit. They tie."""
    folds = np.array([[0.76, 0.70, 0.75, 0.71], [0.77, 0.68, 0.76, 0.71]])
    a, b = folds.mean(axis=1)
    c = np.nextafter(a, 1.0)  # the same mean, one bit up
    scores = np.array([[a, c, 0.5], [0.6, 0.6, 0.8]])
    assert c != a and a == pytest.approx(b)
    res = friedman_nemenyi(scores, systems=["j48", "j48gr", "nbc"])
    assert res.mean_ranks["j48"] == res.mean_ranks["j48gr"] == 2.0
    assert (
        res.mean_ranks
        == friedman_nemenyi(
            np.array([[a, a, 0.5], [0.6, 0.6, 0.8]]), systems=["j48", "j48gr", "nbc"]
        ).mean_ranks
    )
    # a real difference, however small next to the scores' own precision, is not a tie
    assert friedman_nemenyi(np.array([[0.7217, 0.7217 + 1e-9], [0.5, 0.6]])).mean_ranks == {
        "1": 2.0,
        "2": 1.0,
    }


def test_uci_folds_give_the_baselines_of_the_shipped_means():
    """Fold-level input is ranked on each system's mean per data set: the 27 000 UCI
    accuracies give what the shipped table of means (12 decimals) gives."""
    root = TABLE6.parents[1] / "uci_benavoli2017"
    table = read_scores(
        root / "uci_cv_accuracy_long.csv",
        dataset="dataset_id",
        system="classifier",
        score="accuracy",
    )
    means = pd.read_csv(root / "uci_mean_accuracy.csv")[list(table.systems)]
    res = friedman_nemenyi(table)
    assert res.to_dict() == friedman_nemenyi(means).to_dict()
    assert res.by_rank == ("aode", "hnb", "j48gr", "j48", "nbc")
    assert round(res.friedman.statistic, 3) == 20.204 and res.n_datasets == 54
    assert res.critical_difference(0.05).groups == (
        ("aode", "hnb", "j48gr", "j48"),
        ("j48gr", "j48", "nbc"),
    )
