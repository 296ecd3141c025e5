import numpy as np
import pandas as pd
import pytest

from isbetter import InputError, InputTypeError, from_arrays, read_scores


def _long(n_folds=3, systems=("a", "b"), datasets=("d1", "d2")):
    rows = [
        {
            "dataset": ds,
            "system": s,
            "run": r,
            "fold": f,
            "score": 0.8 + 0.01 * f + (s == "a") * 0.02,
        }
        for ds in datasets
        for s in systems
        for r in (1, 2)
        for f in range(1, n_folds + 1)
    ]
    return pd.DataFrame(rows)


def test_read_long_dataframe_csv_and_parquet(tmp_path):
    df = _long()
    t = read_scores(df)
    assert t.systems == ("a", "b")
    assert t.datasets == ("d1", "d2")
    p = t.paired("a", "b")
    assert p.n_datasets == 2
    np.testing.assert_array_equal(p.n_runs, [2, 2])
    np.testing.assert_array_equal(p.n_folds, [3, 3])
    np.testing.assert_allclose(p.differences[0], 0.02)
    df.to_csv(tmp_path / "s.csv", index=False)
    df.to_parquet(tmp_path / "s.parquet")
    for path in (tmp_path / "s.csv", tmp_path / "s.parquet", str(tmp_path / "s.csv")):
        np.testing.assert_allclose(read_scores(path).paired("a", "b").differences[1], 0.02)


def test_configurable_names_and_several_metrics():
    df = _long().rename(columns={"dataset": "task", "system": "model", "score": "acc"})
    df["err"] = 1 - df["acc"]
    t = read_scores(
        df,
        dataset="task",
        system="model",
        score=["acc", "err"],
        higher_is_better={"acc": True, "err": False},
    )
    np.testing.assert_allclose(t.paired("a", "b", metric="acc").differences[0], 0.02)
    # a lower-is-better metric is flipped so that positive still means A better
    np.testing.assert_allclose(t.paired("a", "b", metric="err").differences[0], 0.02)
    with pytest.raises(InputError, match="`metric`: unknown metric 'f1'. Available metrics"):
        t.paired("a", "b", metric="f1")


def test_order_within_dataset_is_run_then_fold():
    df = _long().sample(frac=1.0, random_state=np.random.RandomState(0))  # shuffled rows
    df.loc[(df["system"] == "a"), "score"] = df["run"] * 10 + df["fold"]
    df.loc[(df["system"] == "b"), "score"] = 0.0
    p = read_scores(df).paired("a", "b")
    np.testing.assert_array_equal(p.differences[0], [11, 12, 13, 21, 22, 23])


def test_single_dataset_and_single_run():
    df = _long(datasets=("d1",)).query("run == 1").drop(columns=["dataset", "run"])
    p = read_scores(df, dataset=None, run=None).paired("a", "b")
    assert p.datasets == ("data",)
    assert p.n_runs[0] == 1 and p.n_folds[0] == 3


def test_from_arrays_like_baycomp():
    x = np.arange(20, dtype=float).reshape(2, 10)
    y = x - 1
    t = from_arrays(x, y, names=("svm", "rf"), runs=2, datasets=["iris", "wine"])
    p = t.paired("svm", "rf")
    assert p.datasets == ("iris", "wine")
    np.testing.assert_array_equal(p.n_folds, [5, 5])
    np.testing.assert_allclose(p.differences[1], 1.0)


def test_drop_incomplete_records_what_was_dropped():
    df = _long()
    df.loc[0, "score"] = np.nan
    df = df.drop(index=[5])
    t = read_scores(df, drop_incomplete=True)
    assert len(t.dropped) == 3  # the NaN row, and the partners of both broken keys
    assert set(t.dropped["reason"]) == {
        "missing or infinite score",
        "key not present for every system",
    }
    assert t.paired("a", "b").differences[0].size == 4


def test_read_scores_iv(tmp_path):
    df = _long()
    with pytest.raises(InputError, match=r"Column 'acc' not found\. Available columns: 'dataset'"):
        read_scores(df, score="acc")
    with pytest.raises(InputError, match="Columns 'task', 'model' not found"):
        read_scores(df, dataset="task", system="model")
    with pytest.raises(InputError, match="The score table is empty"):
        read_scores(df.iloc[:0])
    bad = df.copy()
    bad.loc[3, "score"] = np.inf
    bad.loc[4, "score"] = np.nan
    missing = r"2 scores are missing \(NaN\) or infinite \(index labels 3, 4\)"
    with pytest.raises(InputError, match=missing):
        read_scores(bad)
    with pytest.raises(InputError, match=r"Duplicated \(system, dataset, run, fold\) keys: 2 rows"):
        read_scores(pd.concat([df, df.iloc[[0]]]))
    with pytest.raises(
        InputError,
        match=r"Folds differ between systems on data set 'd1': a \(6\), b \(5\); e\.g\. run \d+ "
        r"fold \d+ has no score of b\. Every \(system, data set\) pair needs the same fold "
        r"labels \(or pass `drop_incomplete=True`\)",
    ):
        read_scores(df.drop(index=[8]))
    with pytest.raises(InputError, match="has 1 system"):
        read_scores(df[df["system"] == "a"])
    with pytest.raises(InputTypeError, match="Metric column 'score' must hold numbers"):
        read_scores(df.assign(score="x"))
    with pytest.raises(InputError, match="No such file: "):
        read_scores(tmp_path / "missing.csv")
    with pytest.raises(InputTypeError, match="`source` must be a pandas DataFrame or the path"):
        read_scores(42)
    with pytest.raises(InputError, match="`higher_is_better` has no direction for metric"):
        read_scores(df, higher_is_better={"acc": True})
    ragged = df[~((df["run"] == 2) & (df["fold"] == 3))]
    ragged = ragged[~((ragged["run"] == 1) & (ragged["fold"] == 1))]
    with pytest.raises(InputError, match="not runs x folds"):
        read_scores(ragged)


def test_paired_iv():
    t = read_scores(_long())
    with pytest.raises(
        InputError, match=r"`system_b`: unknown system 'c'. Available systems: 'a', 'b'"
    ):
        t.paired("a", "c")
    with pytest.raises(InputError, match="are both 'a'"):
        t.paired("a", "a")


def test_from_arrays_iv():
    with pytest.raises(InputError, match="same shape"):
        from_arrays(np.zeros(3), np.zeros(4))
    with pytest.raises(InputError, match="does not divide"):
        from_arrays(np.zeros(10), np.zeros(10), runs=3)
    with pytest.raises(InputError, match="two different system names"):
        from_arrays(np.zeros(10), np.zeros(10), names=("a", "a"), runs=1)
    with pytest.raises(InputError, match=r"^1 score is missing \(NaN\) or infinite \(index label"):
        from_arrays(np.array([0.1, np.nan]), np.zeros(2), runs=1)


def test_from_arrays_never_guesses_the_number_of_runs(rng):
    """Regression: 10 x 10-fold scores were silently read as one run of 100 folds (rho 0.01)."""
    x, y = rng.normal(size=(3, 100)), rng.normal(size=(3, 100))
    with pytest.raises(InputError, match="cannot tell how the 100 scores per data set were made"):
        from_arrays(x, y)
    ten = from_arrays(x, y, runs=10).paired("A", "B")
    assert set(ten.n_runs) == {10} and set(ten.n_folds) == {10}
    same = from_arrays(x, y, folds=10).paired("A", "B")
    assert set(same.n_runs) == {10} and set(same.n_folds) == {10}
    with pytest.raises(InputError, match="is not the 100 scores per row"):
        from_arrays(x, y, runs=5, folds=10)
    with pytest.raises(InputError, match="`folds`=7 does not divide"):
        from_arrays(x, y, folds=7)
    # one score per data set (per-data-set means, for the sign tests) needs nothing
    assert from_arrays(x[:, :1], y[:, :1]).paired("A", "B").n_datasets == 3
