"""isbetter.sklearn: repeated cross-validation of scikit-learn estimators into a ScoreTable."""

from __future__ import annotations

import joblib
import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from sklearn.datasets import load_diabetes, load_iris, load_wine  # noqa: E402
from sklearn.dummy import DummyClassifier  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.naive_bayes import GaussianNB  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

import isbetter  # noqa: E402
from isbetter import InputError  # noqa: E402
from isbetter.sklearn import cross_val_scores  # noqa: E402

DATA = {"iris": load_iris(), "wine": load_wine()}


def _three() -> dict:
    return {
        "tree": DecisionTreeClassifier(max_depth=2),
        "nb": GaussianNB(),
        "knn": make_pipeline(StandardScaler(), KNeighborsClassifier()),
    }


@pytest.fixture(scope="module")
def table() -> isbetter.ScoreTable:
    return cross_val_scores(_three(), DATA, folds=5, runs=2, rng=7)


def test_tidy_long_table(table):
    df = table.data
    assert df.columns.tolist() == ["dataset", "system", "run", "fold", "accuracy"]
    assert table.systems == ("knn", "nb", "tree")
    assert table.datasets == ("iris", "wine")
    sizes = df.groupby(["dataset", "system"]).size()
    assert (sizes == 10).all() and len(sizes) == 6
    assert set(df["run"]) == {1, 2} and set(df["fold"]) == {1, 2, 3, 4, 5}
    assert df["accuracy"].between(0, 1).all()
    assert table.higher_is_better == {"accuracy": True}
    assert table.data.attrs["cross_validation"]["seed"] == 7


def _fingerprint(estimator, X, y):
    """A 'scorer' that identifies the test fold: the sum of the first feature's values."""
    return float(np.sum(np.asarray(X)[:, 0]))


def _class0(estimator, X, y):
    return float(np.sum(y == 0))


def test_same_folds_for_every_estimator():
    t = cross_val_scores(
        _three(), DATA, scoring={"fp": _fingerprint, "n0": _class0}, folds=5, runs=2, rng=3
    )
    wide = t.data.pivot_table(index=["dataset", "run", "fold"], columns="system", values="fp")
    assert np.allclose(wide.to_numpy(), wide.to_numpy()[:, :1])  # same test fold for all
    assert wide.groupby("dataset").nunique().min().min() > 5  # folds differ within a data set
    # classification targets are split stratified: iris has 50 of each class -> 10 per fold
    iris0 = t.data[t.data["dataset"] == "iris"]["n0"]
    assert (iris0 == 10).all()


def test_unstratified_on_request():
    t = cross_val_scores(
        _three(), {"iris": DATA["iris"]}, scoring={"n0": _class0}, folds=5, runs=2,
        stratify=False, rng=3,
    )  # fmt: skip
    assert not (t.data["n0"] == 10).all()


def test_reproducible_and_seeded():
    est = {"tree": DecisionTreeClassifier(), "dummy": DummyClassifier(strategy="uniform")}
    a = cross_val_scores(est, {"wine": DATA["wine"]}, folds=3, runs=2, rng=11)
    b = cross_val_scores(est, {"wine": DATA["wine"]}, folds=3, runs=2, rng=11)
    c = cross_val_scores(est, {"wine": DATA["wine"]}, folds=3, runs=2, rng=12)
    pd.testing.assert_frame_equal(a.data, b.data)
    assert not a.data["accuracy"].equals(c.data["accuracy"])
    # the estimators passed in are not modified (cloned, random_state set on the clone)
    assert est["dummy"].random_state is None


def test_parallel_folds_give_the_same_scores():
    est = {"tree": DecisionTreeClassifier(), "nb": GaussianNB()}
    one = cross_val_scores(est, {"iris": DATA["iris"]}, folds=3, runs=1, rng=5, n_jobs=1)
    # threads: the same joblib code path as processes, without the seconds of process start
    with joblib.parallel_backend("threading"):
        two = cross_val_scores(est, {"iris": DATA["iris"]}, folds=3, runs=1, rng=5, n_jobs=2)
    pd.testing.assert_frame_equal(one.data, two.data)


def test_regression_defaults_to_r2_and_plain_kfold():
    X, y = load_diabetes(return_X_y=True)
    t = cross_val_scores(
        [("ridge", Ridge()), ("tree", DecisionTreeRegressor(max_depth=3))],
        {"diabetes": (X[:200], y[:200])},
        folds=4,
        runs=1,
        rng=0,
    )
    assert t.metrics == ("r2",)
    assert len(t.data) == 8


def test_feeds_compare_correlated_t_end_to_end():
    t = cross_val_scores(_three(), {"iris": DATA["iris"]}, folds=5, runs=2, rng=1)
    res = isbetter.compare(t, "knn", "tree", method="correlated_t", rope=0.01)
    assert res.method == "correlated_t"
    assert res.settings["rho"] == pytest.approx(1 / 5)
    probs = res.p_a_better + res.p_rope + res.p_b_better
    assert probs == pytest.approx(1.0)


def test_feeds_rank_end_to_end(table):
    res = isbetter.rank(table, method="signed_rank", rope=0.01, jobs=1, rng=0, progress=False)
    assert set(res.systems) == {"knn", "nb", "tree"}
    assert len(res.pairs) == 3


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"estimators": {"nb": GaussianNB()}}, r"`estimators` has 1 estimator;"),
        ({"datasets": {}}, r"`datasets` is empty"),
        ({"folds": 1}, r"`folds` must be an integer >= 2"),
        ({"scoring": "acuracy"}, r"`scoring`: unknown scorer 'acuracy'"),
        ({"datasets": {"bad": (np.zeros((5, 2)), np.zeros(4))}}, r"X has 5 rows and y has"),
        ({"estimators": [("a", GaussianNB()), ("a", GaussianNB())]}, r"duplicated names"),
    ],
)
def test_cross_val_scores_iv(kwargs, match):
    args = {"estimators": _three(), "datasets": {"iris": DATA["iris"]}, "folds": 3, "runs": 1}
    args.update(kwargs)
    with pytest.raises(InputError, match=match):
        cross_val_scores(**args)


def test_mixed_estimators_need_scoring():
    with pytest.raises(InputError, match="`scoring` is needed"):
        cross_val_scores({"nb": GaussianNB(), "ridge": Ridge()}, {"iris": DATA["iris"]}, folds=3)


def test_bad_dataset_type():
    with pytest.raises(TypeError, match=r"`datasets`\['x'\] must be a pair"):
        cross_val_scores(_three(), {"x": 3}, folds=3)
