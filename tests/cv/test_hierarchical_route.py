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
from _oracle import integrated_loglik, nu_prior
from scipy import optimize, special

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


def _oracle_mode(scores, rho: float = 0.1) -> dict[str, float]:
    r"""The integrated posterior's mode in the sampler's coordinates, computed independently.

    The log posterior of :math:`(\log(\nu - 1), \operatorname{logit} \delta_0,
    \operatorname{logit} \sigma_0)` from the raw differences (rho = 1/10 folds, Nadeau &
    Bengio): the oracle's likelihood with each :math:`\delta_i` integrated out by its own
    quadrature (tests/cv/_oracle.py, no code of src), nu's prior with :math:`\alpha, \beta`
    integrated out (``_oracle.nu_prior``), the uniform priors of :math:`\delta_0` on
    :math:`\pm \max(\max|x|, \max sd_i)` and :math:`\sigma_0` on :math:`(0, 1000 \times
    sd(\bar x_i))`, and the three transforms' log Jacobians; maximised by Nelder-Mead
    (derivative-free, the route uses BFGS on the compiled gradient) from its own start.
    """
    diffs = [np.asarray(d, dtype=float) for d in scores.differences]
    n = np.array([d.size for d in diffs], dtype=float)
    xbar = np.array([d.mean() for d in diffs])
    ss = np.array([((d - d.mean()) ** 2).sum() for d in diffs])
    sd = np.sqrt(ss / n)
    data = ((n - 1) / 2, n / (1 + (n - 1) * rho), ss / (1 - rho), xbar, 1000 * sd.mean())
    d_hi = max(max(float(np.abs(d).max()) for d in diffs), float(sd.max()))
    s_hi = 1000 * float(np.std(xbar))

    def values(x):
        return 1 + np.exp(x[0]), d_hi * (2 * special.expit(x[1]) - 1), s_hi * special.expit(x[2])

    def negative(x):
        nu, delta0, std0 = values(x)
        log_p = integrated_loglik(delta0, std0, nu, data).sum() + np.log(nu_prior(nu)) + x[0]
        for v in x[1:]:  # d value = hi expit(v) expit(-v) dv (up to constants)
            log_p += special.log_expit(v) + special.log_expit(-v)
        return -float(log_p)

    start = [math.log(10.0), special.logit(0.5 + xbar.mean() / (2 * d_hi)), -8.0]
    found = optimize.minimize(
        negative, start, method="Nelder-Mead", options={"xatol": 1e-7, "fatol": 1e-10}
    )
    assert found.success, found.message
    return dict(zip(("nu", "delta0", "std0"), map(float, values(found.x)), strict=True))


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
    # the mode is in score units and near the truth (30 data sets: sampling error ~13 %)
    assert far.std0_mode == pytest.approx(0.02, rel=0.5)
    # and it is the mode of the model's posterior: an independent computation of the same
    # mode (_oracle_mode) agrees within 1e-4 relative (measured <= 5e-6 at seeds 1-3; a
    # lost Jacobian or prior term moves it by percents); was only rel=0.5 of the truth
    mode = _oracle_mode(_study(0.02, seed))
    assert far.std0_mode == pytest.approx(mode["std0"], rel=1e-4)
    assert far.nu_mode == pytest.approx(mode["nu"], rel=1e-4)
    assert far.delta0_mode == pytest.approx(mode["delta0"], abs=1e-4 * far.median_width)
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
