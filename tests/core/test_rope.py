"""The Python API warns of a ROPE that does not fit the scores' scale (issue 29, item 4).

With the package's own :class:`~isbetter.RopeWarning`, pointing at the caller's line:
``compare`` and ``rank`` on scores in percent given ``rope=0.01``, or a ROPE as wide as
the spread of all the scores; ``compare_f1`` (and ``rank`` of predictions) given a ROPE
in percent on a measure in [0, 1]. A ROPE left at its default is not warned of: the
default is the argument's documented value, and every report states it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import isbetter
from isbetter import InputError, RopeWarning, compare, compare_f1, rank, read_scores


def _table(scale: float = 1.0):
    rng = np.random.default_rng(4)
    rows = [
        (s, f, scale * (0.8 + shift + rng.normal(0, 0.01)))
        for s, shift in (("a", 0.02), ("b", 0.0))
        for f in range(10)
    ]
    frame = pd.DataFrame(rows, columns=["system", "fold", "acc"]).assign(dataset="d", run=1)
    return read_scores(frame, score="acc")


def _predictions():
    gold = np.tile([0, 1], 100)
    return pd.DataFrame({"gold": gold, "a": gold, "b": np.roll(gold, 1)})


def test_rope_warning_is_exported_with_the_other_warnings():
    assert issubclass(RopeWarning, UserWarning) and isbetter.RopeWarning is RopeWarning
    assert "RopeWarning" in isbetter.__all__


@pytest.mark.parametrize(
    ("scale", "rope", "said"),
    [(100.0, 0.01, "below a tenth of one point"), (1.0, 0.5, "as wide as the spread")],
)
def test_compare_warns_of_a_rope_off_the_scores_scale(scale, rope, said):
    with pytest.warns(RopeWarning, match=rf"^`rope={rope:g}`: the ROPE .*{said}") as seen:
        compare(_table(scale), "a", "b", rope=rope)
    assert seen[0].filename == __file__  # the caller's line


def test_rank_warns_once_per_metric_whose_rope_does_not_fit():
    with pytest.warns(RopeWarning, match=r"^`rope\['acc'\]=0.01`: .*below a tenth") as seen:
        rank(_table(100.0), rope={"acc": 0.01}, rng=1)
    assert len([w for w in seen if w.category is RopeWarning]) == 1
    assert seen[0].filename == __file__


def test_the_joint_ranking_checks_its_rope_before_its_fit():
    # one data set: refused (InputError), but the ROPE is judged first
    with pytest.warns(RopeWarning, match=r"^`rope=0.01`: .*below a tenth") as seen:
        with pytest.raises(InputError, match="several data sets"):
            rank(_table(100.0), rope=0.01, method="joint", rng=1)
    assert seen[0].filename == __file__


def test_compare_f1_and_rank_of_predictions_warn_of_a_rope_in_percent():
    with pytest.warns(RopeWarning, match=r"^`rope=5`: the ROPE ±5 is as wide") as seen:
        compare_f1(_predictions(), "a", "b", rope=5, draws=500, baselines=False, rng=1)
    assert seen[0].filename == __file__
    with pytest.warns(RopeWarning, match=r"^`rope=5`") as seen:
        rank(_predictions(), rope=5, rng=1, draws=500)
    assert len([w for w in seen if w.category is RopeWarning]) == 1  # not once per pair
    assert seen[0].filename == __file__


def test_a_rope_that_fits_or_the_default_is_not_warned_of():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RopeWarning)
        compare(_table(), "a", "b")  # default: no ROPE
        compare(_table(), "a", "b", rope=0.01)
        compare(_table(100.0), "a", "b", rope=1)
        rank(_table(), rng=1)
        compare_f1(_predictions(), "a", "b", draws=500, baselines=False, rng=1)  # 0.05
        compare_f1(_predictions(), "a", "b", rope=0.01, draws=500, baselines=False, rng=1)
        compare_f1(
            _predictions(),
            "a",
            "b",
            metric=isbetter.dcf(cost_fp=10.0),
            rope=2,
            draws=500,
            baselines=False,
            rng=1,
        )  # a DCF's scale is its costs': not judged
