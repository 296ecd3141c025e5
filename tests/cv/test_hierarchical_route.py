"""The parameterisation a fit of many data sets starts with (cv/hierarchical/route.py).

Above 20 data sets "auto" sampled the centred model first; for two near-identical
systems (sigma_0 near 0) that fit met the funnel, was flagged and refitted with the
integrated model: two of the ten UCI pairs, 113-121 s for 1000 data sets. The route
now foresees the funnel from the data and starts with the integrated model there.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from isbetter import ConvergenceWarning, from_arrays, read_scores
from isbetter.cv.hierarchical import model as hm
from isbetter.cv.hierarchical import route
from isbetter.cv.hierarchical.priors import HierarchicalPriors
from isbetter.cv.hierarchical.spec import prepare

UCI = Path(__file__).resolve().parents[2] / "data" / "uci_benavoli2017" / "uci_cv_accuracy_long.csv"
Q = 30  # above AUTO_INTEGRATED_MAX_DATASETS: "auto" chooses


def _study(spread: float, seed: int, q: int = Q):
    """10 runs x 10 folds per data set; the systems' mean differences spread `spread` (sd)."""
    g = np.random.default_rng(seed)
    x = g.uniform(0.7, 0.9, size=(q, 1)) + g.normal(0, 0.02, size=(q, 100))
    delta = 0.001 + spread * g.normal(size=(q, 1))
    y = x + delta + g.normal(0, 0.01, size=(q, 100))
    return from_arrays(x, y, names=("x", "y"), runs=10).paired("x", "y")


def _predict(scores):
    priors = HierarchicalPriors()
    prepared = prepare(scores, 0.01, None, priors)
    return route.predict_parameterization(prepared, prepared.model_data(priors))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_route_is_integrated_for_near_identical_and_centred_for_separated_systems(seed):
    # the near-identical systems: y = x + N(0.001, 0.01) per fold, sigma_0 = 0
    near = _predict(_study(0.0, seed))
    assert near.parameterization == "integrated"
    assert near.ratio < 0.5 * route.FUNNEL_RATIO
    # mean differences spread 0.02 between data sets, standard errors ~0.003 within
    far = _predict(_study(0.02, seed))
    assert far.parameterization == "centred"
    assert far.ratio > 2 * route.FUNNEL_RATIO
    # the mode is in score units and near the truth
    assert far.std0_mode == pytest.approx(0.02, rel=0.5)
    assert near.delta0_mode == pytest.approx(-0.001, abs=0.002)  # x - y


def test_route_of_the_uci_pairs_whose_centred_fits_were_refitted():
    table = read_scores(UCI, dataset="dataset_id", system="classifier", score="accuracy")
    chosen = {
        pair: _predict(table.paired(*pair)).parameterization
        for pair in [("j48", "j48gr"), ("aode", "hnb"), ("nbc", "aode"), ("hnb", "j48")]
    }
    assert chosen == {
        ("j48", "j48gr"): "integrated",
        ("aode", "hnb"): "integrated",
        ("nbc", "aode"): "centred",  # the README's pair keeps its centred fit
        ("hnb", "j48"): "centred",
    }


def test_a_fit_of_near_identical_systems_is_not_refitted():
    """Today's code sampled the centred model first here, and it was flagged and refitted."""
    scores = _study(0.0, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # short chains
        res = hm.hierarchical_test(scores, rope=0.01, rng=5, draws=300, tune=300, chains=2)
    assert res.settings["refit_of"] is None
    assert res.settings["parameterization"] == "integrated"
    choice = res.settings["parameterization_choice"]
    assert choice["parameterization"] == "integrated"
    assert choice["threshold"] == route.FUNNEL_RATIO
    assert 0 <= choice["ratio"] < route.FUNNEL_RATIO
    assert choice["std0_mode"] == pytest.approx(choice["ratio"] * choice["median_width"])
    assert res.p_rope > 0.9 and res.delta.shape == (600, Q)
    # forced, nothing is chosen
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        forced = hm.hierarchical_test(
            scores, rope=0.01, rng=5, parameterization="integrated", draws=300, tune=300, chains=2
        )
    assert forced.settings["parameterization_choice"] is None


def test_the_centred_model_of_many_data_sets_adapts_its_mass_matrix_from_the_draws():
    """nutpie's low-rank adaptation costs ~3.7x per gradient there (CENTRED_MASS_MATRIX); the
    integrated model keeps it up to LOW_RANK_MAX_DATASETS, the centred one with few;
    above, both adapt nutpie's default diagonal one."""
    pytest.importorskip("nutpie")
    q = hm.AUTO_INTEGRATED_MAX_DATASETS
    assert hm.CENTRED_MASS_MATRIX == "draw_variance"
    assert hm.HierarchicalModel(q + 1).mass_matrix == "draw_variance"  # "auto": centred first
    assert hm.HierarchicalModel(54, parameterization="centred").mass_matrix == "draw_variance"
    assert hm.HierarchicalModel(q, parameterization="centred").mass_matrix == "low_rank"
    assert hm.HierarchicalModel(54, parameterization="integrated").mass_matrix == "low_rank"
    assert hm.HierarchicalModel(54, parameterization="noncentred").mass_matrix == "low_rank"
    big = hm.LOW_RANK_MAX_DATASETS + 1  # nutpie's default diagonal one, either model
    assert hm.HierarchicalModel(big, parameterization="integrated").mass_matrix == "diagonal"
    assert hm.HierarchicalModel(big).mass_matrix == "diagonal"
    assert hm.HierarchicalModel(big).default_tune == hm.TUNE
    assert hm.HierarchicalModel(54, backend="pymc").mass_matrix == "diagonal"  # PyMC's own
    # a fit records it (the integrated model a flagged centred fit is refitted with: its own)
    scores = _study(0.05, 1)
    seen = []
    real = hm.sample

    def spy(*args, **kwargs):
        seen.append(kwargs["mass_matrix"])
        return real(*args, **kwargs)

    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        mp.setattr(hm, "sample", spy)
        warnings.simplefilter("ignore", ConvergenceWarning)  # short chains
        res = hm.hierarchical_test(scores, rope=0.01, rng=5, draws=300, tune=300, chains=2)
    assert res.settings["parameterization_choice"]["parameterization"] == "centred"
    assert seen[0] == "draw_variance"  # the sampler was told
    assert res.settings["mass_matrix"] == seen[-1]
    # its tuning steps, unless told: DRAW_VARIANCE_TUNE (the integrated model's: TUNE)
    assert hm.HierarchicalModel(54).default_tune == hm.DRAW_VARIANCE_TUNE == 1000
    assert hm.HierarchicalModel(54, parameterization="integrated").default_tune == hm.TUNE
    assert res.settings["tune"] == 300
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # short chains
        default = hm.hierarchical_test(scores, rope=0.01, rng=5, draws=100, chains=2)
    tune = {"centred": hm.DRAW_VARIANCE_TUNE, "integrated": hm.TUNE}
    assert default.settings["tune"] == tune[default.settings["parameterization"]]


def test_route_without_a_finite_mode_keeps_the_centred_start(monkeypatch):
    def nowhere(parameterization, x, data, *, bounded=False):
        return -math.inf, np.full_like(x, np.nan)

    monkeypatch.setattr(route, "log_density", nowhere)
    prediction = _predict(_study(0.0, 1))
    assert prediction.parameterization == "centred"  # the refit still guards it
    assert math.isnan(prediction.ratio)
    assert prediction.to_dict()["ratio"] is None
