"""Ranking defects found in review (issue 21, item 3); each test failed before its fix."""

import warnings

import numpy as np
import pandas as pd
import pytest

from isbetter import ConvergenceWarning, InputError, predictions_from_arrays, rank, read_scores

DRAWS = {"draws": 2000, "baselines": False}


@pytest.fixture(scope="module")
def binary():
    g = np.random.default_rng(21)
    gold = g.integers(0, 2, 400)
    flip = {name: g.random(400) < p for name, p in (("svm", 0.1), ("nb", 0.2), ("lr", 0.12))}
    return predictions_from_arrays(gold, {s: np.where(f, 1 - gold, gold) for s, f in flip.items()})


@pytest.fixture(scope="module")
def three_classes():
    g = np.random.default_rng(22)
    gold = g.choice(["x", "y", "z"], 450)
    out = {}
    for name, p in (("svm", 0.1), ("nb", 0.25), ("lr", 0.15)):
        wrong = g.random(450) < p
        out[name] = np.where(wrong, np.roll(gold, 1), gold)
    return predictions_from_arrays(gold, out)


def test_zero_rope_is_kept_for_predictions(binary):
    """rope=0 (and `--rope 0`) meant 0.05 for per-document predictions, against the docstring."""
    res = rank(binary, rope=0, jobs=1, rng=1, **DRAWS)
    assert res.settings["ropes"] == {"f1": 0.0}
    assert {p.rope for p in res.pairs} == {0.0}
    # no rope given: each kind of evidence keeps its comparison's default
    assert rank(binary, jobs=1, rng=1, **DRAWS).settings["ropes"] == {"f1": 0.05}
    scores = pd.DataFrame(
        [(f"d{d}", s, f, 0.8 + 0.01 * i + 0.001 * f) for d in range(3) for i, s in
         enumerate("ab") for f in range(3)],
        columns=["dataset", "system", "fold", "acc"],
    )  # fmt: skip
    table = read_scores(scores, run=None, score="acc")
    assert rank(table, method="sign", jobs=1, rng=1).settings["ropes"] == {"acc": 0.0}


@pytest.mark.parametrize(
    ("options", "metrics"),
    [
        ({"classes": ["x", "y"]}, ("f1 x", "f1 y")),
        ({"classes": ["x", "y", "z"]}, ("f1 x", "f1 y", "f1 z")),
        ({}, ("f1 macro", "f1 micro")),
        ({"classes": ["y"]}, ("f1",)),
    ],
)
def test_multiclass_ranking_of_named_classes_or_without_averages(
    three_classes, options, metrics, tmp_path
):
    """Two or more named classes, or every class without the averages (once averages=False),
    ranked nothing: order() raised IndexError and the cache took the empty pairs for corrupt
    and refitted them every run."""
    res = rank(three_classes, jobs=1, rng=1, cache_dir=tmp_path, **DRAWS, **options)
    assert res.metrics == metrics
    assert len(res.pairs) == 3 * len(metrics)
    for m in metrics:
        assert res.order(m).count("svm") == 1
    assert res.settings["execution"]["computed"] == 3
    again = rank(three_classes, jobs=1, rng=1, cache_dir=tmp_path, **DRAWS, **options)
    assert again.settings["execution"]["cached"] == 3
    assert again.settings["execution"]["computed"] == 0
    assert again.to_dict()["metrics"] == res.to_dict()["metrics"]


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"threshold": 0.0}, r"`threshold` must be in \(0, 1\]"),
        ({"threshold": 1.5}, r"`threshold` must be in \(0, 1\]"),
        ({"margin": -0.1}, r"`margin` must be a probability"),
    ],
)
def test_with_rule_checks_like_rank(binary, kwargs, pattern):
    """`with_rule` accepted a threshold of 0, which `rank` refuses: one validator for both."""
    res = rank(binary, jobs=1, rng=1, **DRAWS)
    with pytest.raises(InputError, match=pattern):
        rank(binary, jobs=1, rng=1, **DRAWS, **kwargs)
    with pytest.raises(InputError, match=pattern):
        res.with_rule("threshold", **kwargs)


def test_rank_passes_each_comparisons_own_options_to_compare_f1(binary, three_classes):
    """A ranking's options keep their names (tune, chains, beta, averages, ...) when
    compare_f1 moved to typed options: each is mapped, silently, to the typed one; on
    j18-f1's first merge `rank(preds, beta=2)` and `--tune/--chains` were refused."""
    from isbetter import compare_f1, fbeta

    res = rank(binary, metrics=["fbeta"], beta=2, jobs=1, rng=1, **DRAWS)  # and no warning
    pair = res.pairs[0]
    assert pair.settings["metric"] == "f2"
    direct = compare_f1(
        binary, system_a=pair.system_a, system_b=pair.system_b, metric=fbeta(2),
        rope=0.05, rng=pair.settings["seed"], **DRAWS,
    )  # fmt: skip
    row = direct.comparisons[direct.classes[0]]
    assert pair.probabilities().to_dict() == row.probabilities().to_dict()
    every = rank(three_classes, averages=False, jobs=1, rng=1, **DRAWS)
    assert every.metrics == ("f1 x", "f1 y", "f1 z")
    with warnings.catch_warnings():  # one short chain: the options only, not the fit
        warnings.simplefilter("ignore", ConvergenceWarning)
        mcmc = rank(three_classes, method="hierarchical", tune=100, chains=1, draws=200,
                    baselines=False, jobs=1, rng=1)  # fmt: skip
    assert {(p.settings["tune"], p.settings["chains"]) for p in mcmc.pairs} == {(100, 1)}
    with pytest.raises(InputError, match="nonsense"):
        rank(binary, nonsense=1, jobs=1, rng=1)
