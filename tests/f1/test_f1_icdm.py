"""The ICDM 2015 hierarchical model of two confusion matrices, and model="hierarchical"."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

from isbetter import InputError
from isbetter.f1.averages import FlatCellModel, ICDMModel
from isbetter.f1.baselines import Baselines
from isbetter.f1.compare import compare_f1
from isbetter.f1.icdm import build_icdm_model, icdm_deltas, model_data
from isbetter.f1.measures import accuracy, f1
from isbetter.f1.predictions import predictions_from_arrays
from isbetter.inference.diagnostics import ess_bulk
from isbetter.inference.sampling import Sampling

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.icdm_sbc import eta_log_likelihood  # noqa: E402


def make_predictions(rng, n, n_classes, acc_a=0.85, acc_b=0.8):
    """Correlated systems: B reuses A's uniform (document difficulty) 70 % of the time."""
    gold = rng.integers(0, n_classes, n)
    u = rng.random(n)
    v = np.where(rng.random(n) < 0.7, u, rng.random(n))
    a = np.where(u < acc_a, gold, (gold + rng.integers(1, n_classes, n)) % n_classes)
    b = np.where(v < acc_b, gold, (gold + rng.integers(1, n_classes, n)) % n_classes)
    return pd.DataFrame({"gold": gold, "a": a, "b": b})


def _example_confusions():
    df = pd.read_csv(
        Path(__file__).resolve().parents[2] / "data" / "f1_example" / "predictions.csv"
    )
    t = predictions_from_arrays(df.gold, svm=df.svm, nb=df.nb)
    return t, t.confusion("svm"), t.confusion("nb")


def _dirichlet_multinomial_loglik(conf, eta, concentration=1.0):
    """Sum over rows of scipy's Dirichlet-multinomial log pmf, alpha_j = c * w(eta)_j."""
    m = conf.shape[0]
    w = np.where(np.eye(m, dtype=bool), eta, (1 - eta) / (m - 1))
    return sum(
        stats.dirichlet_multinomial.logpmf(row, concentration * w[j], row.sum())
        for j, row in enumerate(conf)
    )


# ----------------------------------------------------------------------- model, no sampling
def test_icdm_model_structure_without_sampling():
    _, ca, cb = _example_confusions()
    model = build_icdm_model(ca, cb)
    assert {v.name for v in model.free_RVs} == {"eta"}
    assert model.named_vars_to_dims["eta"] == ("system",)
    assert {v.name for v in model.potentials} == {"loglik"}
    assert np.isfinite(model.compile_logp()(model.initial_point()))


def test_collapsed_likelihood_is_the_dirichlet_multinomial():
    """The model's log density at two values of eta differs as the rows' DirMult likelihood.

    theta integrated out: p(c_j | eta) = DirMult(c_j; concentration w_j(eta)). The
    multinomial coefficients and the Beta(1, 1) prior cancel in the difference; the
    logit transform's Jacobian is left out (jacobian=False).
    """
    _, ca, cb = _example_confusions()
    model = build_icdm_model(ca, cb, concentration=2.5)
    logp = model.compile_logp(jacobian=False)
    points = [np.array([0.3, 0.6]), np.array([0.8, 0.45])]
    values = [logp({"eta_logodds__": special.logit(e)}) for e in points]
    expected = [
        _dirichlet_multinomial_loglik(ca, e[0], 2.5) + _dirichlet_multinomial_loglik(cb, e[1], 2.5)
        for e in points
    ]
    assert values[0] - values[1] == pytest.approx(expected[0] - expected[1], rel=1e-9)


def test_model_data_groups_equal_counts():
    conf = np.array([[5, 1, 0], [1, 7, 1], [0, 2, 5]])
    d = model_data(conf, conf, 1.0)
    a = d["system"] == 0
    diag, off = a & (d["diagonal"] == 1.0), a & (d["diagonal"] == 0.0)
    assert dict(zip(d["counts"][diag], d["weights"][diag], strict=True)) == {5.0: 2.0, 7.0: 1.0}
    assert dict(zip(d["counts"][off], d["weights"][off], strict=True)) == {1.0: 3.0, 2.0: 1.0}
    assert float(d["n_classes"]) == 3.0
    with pytest.raises(InputError, match="same row sums"):
        build_icdm_model(conf, conf[:, ::-1].T)


def test_conditional_draws_give_per_class_macro_and_micro(rng):
    """Given eta, theta and mu are drawn exactly: the micro delta's mean is its expectation."""
    _, ca, cb = _example_confusions()
    eta = np.full((4000, 2), 0.5)
    d = icdm_deltas(eta, ca, cb, f1, concentration=1.0, rng=rng)
    m = ca.shape[0]
    assert d["delta_class"].shape == (4000, m)
    np.testing.assert_allclose(d["delta_macro"], d["delta_class"].mean(axis=1), atol=1e-12)
    # micro F1 of single-label classification is the accuracy sum_j mu_j theta_jj; given eta,
    # mu ~ Dir(1 + n) and theta_j ~ Dir(w_j + c_j) are independent, so its expectation is
    # sum_j (w_jj + c_jj) / (M + N), and with the same eta for A and B the w_jj cancel in
    # the difference: within 4 Monte Carlo standard errors (independent draws)
    expected = (np.trace(ca) - np.trace(cb)) / (ca.sum() + m)
    micro = d["delta_micro"]
    assert abs(micro.mean() - expected) < 4 * micro.std() / np.sqrt(micro.size)
    acc = icdm_deltas(eta, ca, cb, accuracy, concentration=1.0, rng=np.random.default_rng(1))
    assert acc["delta_class"].shape == (4000, m)
    # prior draws: bounded, centred on 0 (A and B have the same prior)
    prior = icdm_deltas(eta, ca, cb, f1, concentration=1.0, rng=rng, posterior=False)
    assert np.all(np.abs(prior["delta_micro"]) <= 1) and np.all(np.isfinite(prior["delta_class"]))
    assert abs(prior["delta_micro"].mean()) < 4 * prior["delta_micro"].std() / np.sqrt(4000)


def test_averaged_models_share_one_interface():
    flat, icdm = FlatCellModel(), ICDMModel(sampling=Sampling(chains=3))
    assert (flat.name, flat.paired, icdm.name, icdm.paired) == ("flat", True, "icdm", False)
    assert icdm.draws_per_chain(8000) == 2667 and icdm.settings()["chains"] == 3
    cells = np.zeros((3, 3, 3))
    cells[0, 0, 0], cells[1, 1, 2], cells[2, 2, 2], cells[2, 0, 2] = 20, 5, 30, 4
    out = flat.sample(cells, f1, draws=500, seed_seq=np.random.SeedSequence(1))
    assert out.macro.shape == (500,) and out.prior_macro.shape == (1000,)
    np.testing.assert_array_equal(out.prior_micro[:500], -out.prior_micro[500:])
    assert out.per_class is None and out.diagnostics is None and out.ess is None


# ------------------------------------------------------------------------------- sampling
def _confusions(df):
    """Confusion matrices ``(2, M, M)`` of systems a and b (rows: gold class)."""
    m = int(df.gold.max()) + 1
    conf = np.zeros((2, m, m))
    for s, col in enumerate(("a", "b")):
        np.add.at(conf[s], (df.gold.to_numpy(), df[col].to_numpy()), 1)
    return conf


def _exact_micro_mean(conf_a, conf_b):
    """Exact posterior mean of the ICDM model's delta micro-F1 (prior mass 1 per row).

    Micro-F1 of single-label classification is the accuracy ``sum_j mu_j theta_s,jj``.
    Given eta, mu ~ Dir(1 + n) and theta_s,j ~ Dir(w_s,j + c_s,j) are independent, so
    ``E[mu_j theta_s,jj | eta] = (eta_s + c_s,jj) / (M + N)`` and the mean of delta is
    ``(M (E eta_A - E eta_B) + tr c_A - tr c_B) / (M + N)``; E eta_s by quadrature of its
    exact one-dimensional posterior (prior Beta(1, 1), Dirichlet-multinomial likelihood
    ``validation.icdm_sbc.eta_log_likelihood``, checked against scipy's) on 20 000 cells.
    """
    m, n = conf_a.shape[0], conf_a.sum()
    grid = (np.arange(20_000) + 0.5) / 20_000
    means = []
    for conf in (conf_a, conf_b):
        logp = eta_log_likelihood(np.asarray(conf), grid)
        w = np.exp(logp - logp.max())
        means.append(float((w * grid).sum() / w.sum()))
    return (m * (means[0] - means[1]) + np.trace(conf_a) - np.trace(conf_b)) / (m + n)


def _conditional_means(df, eta, rng, repeat=20):
    """Mean and its standard error of each row's delta F1 given draws of eta (A, B).

    Written from the model (module docstring of isbetter.f1.icdm) with numpy only: rows
    ``theta_s,j ~ Dir(w_s,j(eta_s) + c_s,j)`` (concentration 1), ``mu ~ Dir(1 + n)``;
    per class ``F1 = 2 tp / (2 tp + fp + fn)`` of the one-vs-rest rates, macro their
    mean, micro the F1 of the pooled rates (the accuracy); `repeat` draws per eta.
    """
    conf = _confusions(df)
    m = conf.shape[1]
    e = np.repeat(eta, repeat, axis=0)[:, :, None, None]  # (n, system, 1, 1)
    off = (1 - e) / (m - 1)
    w = np.where(np.eye(m, dtype=bool), e, off)
    g = rng.standard_gamma(w + conf)
    theta = g / g.sum(axis=-1, keepdims=True)  # (n, system, true, predicted)
    g = rng.standard_gamma(np.broadcast_to(1.0 + conf[0].sum(axis=1), (len(e), m)))
    mu = g / g.sum(axis=-1, keepdims=True)
    joint = mu[:, None, :, None] * theta
    tp = np.einsum("nsjj->nsj", joint)
    fn, fp = mu[:, None, :] - tp, joint.sum(axis=2) - tp
    per_class = 2 * tp / (2 * tp + fp + fn)
    tp_, fp_, fn_ = tp.sum(-1), fp.sum(-1), fn.sum(-1)
    rows = {str(j): per_class[:, :, j] for j in range(m)}
    rows |= {"macro": per_class.mean(-1), "micro": 2 * tp_ / (2 * tp_ + fp_ + fn_)}
    delta = {k: v[:, 0] - v[:, 1] for k, v in rows.items()}
    return {k: (d.mean(), d.std() / np.sqrt(len(d))) for k, d in delta.items()}


def test_hierarchical_pipeline_with_a_stub_sampler(monkeypatch):
    """compare_f1(model="hierarchical") wiring, without compiling or running NUTS.

    The sampler is replaced by independent draws of eta near 0.5: everything after
    it (exact conditional draws, diagnostics, rows, settings) runs for real.
    """
    import arviz as az

    from isbetter.f1 import icdm as f1_icdm

    calls = []

    def fake_sample(model, *, draws, chains, seed, backend, **kwargs):
        calls.append({"draws": draws, "chains": chains, "seed": seed, "backend": backend})
        eta = np.random.default_rng(seed).uniform(0.45, 0.55, (chains, draws, 2))
        return az.from_dict(
            posterior={"eta": eta}, sample_stats={"diverging": np.zeros((chains, draws), bool)}
        )

    monkeypatch.setattr(f1_icdm, "sample", fake_sample)
    monkeypatch.setattr(
        f1_icdm,
        "compiled_icdm_model",
        lambda backend: (build_icdm_model(np.eye(2), np.eye(2)), None),
    )
    df = make_predictions(np.random.default_rng(5), n=2500, n_classes=5)
    res = compare_f1(
        df,
        model="hierarchical",
        rng=3,
        draws=3000,
        sampling=Sampling(chains=3),
        baselines=Baselines(resamples=300),
    )
    assert calls[0]["draws"] == 1000 and calls[0]["chains"] == 3
    assert res.classes == ("0", "1", "2", "3", "4", "macro", "micro")
    d = res.diagnostics
    assert d is not None and d.chains == 3 and d.draws == 1000 and d.converged
    assert d.variables == ("eta", "delta_macro", "delta_micro", "delta_class")
    assert res.settings["draws"] == 1000 and res.settings["chains"] == 3
    paired = compare_f1(df, rng=3, draws=3000, baselines=Baselines(resamples=300))
    for key in res.classes:
        cr = res.comparison(key)
        assert cr.diagnostics == d and cr.method.startswith("f1_hierarchical")
        assert len(res.draws(key)) == 3000 and len(res.prior_draws[key]) == 6000
        assert res.row(key)["bootstrap_p_value"] == paired.row(key)["bootstrap_p_value"]
    # the conditional draws given the stub's eta against an independent computation of their
    # mean (_conditional_means: numpy's Dirichlet, the F1 written out) within 4 combined
    # Monte Carlo standard errors (the 3000 draws are independent: sd / sqrt(3000)); was a
    # posterior sd (~0.015, ~15 MCSE) of the paired model's mean, a different model
    eta = np.random.default_rng(calls[0]["seed"]).uniform(0.45, 0.55, (3, 1000, 2)).reshape(-1, 2)
    expected = _conditional_means(df, eta, np.random.default_rng(8))
    for key in res.classes:
        got = res.draws(key)
        mean, se = expected[key]
        z = (got.mean() - mean) / np.hypot(got.std() / np.sqrt(got.size), se)
        assert abs(z) < 4, (key, got.mean(), mean, z)
    np.testing.assert_allclose(
        res.draws("macro"), np.mean([res.draws(c) for c in range(5)], axis=0), atol=1e-12
    )
    assert {t.name for t in res.across_classes} == {"t_test", "s_test"}
    # identical predictions: sampled like any other data (no shortcut to delta = 0)
    same = compare_f1(df.assign(b=df.a), model="hierarchical", rng=3, draws=600, baselines=False)
    assert all(np.isfinite(same.draws(k)).all() for k in same.classes)


#: posterior mean of each row's delta and its MCSE in a long run of the ICDM model on
#: make_predictions(default_rng(5), n=2500, n_classes=5) (seed 106, 4 chains x 10 000 draws,
#: converged)
ICDM_REFERENCE = {
    "0": (0.0619467, 1.9e-4), "1": (0.0564553, 2.0e-4), "2": (0.0623447, 2.0e-4),
    "3": (0.0476292, 2.2e-4), "4": (0.0777820, 2.0e-4), "macro": (0.0612316, 1.3e-4),
    "micro": (0.0613576, 1.3e-4),
}  # fmt: skip


@pytest.mark.slow
def test_compare_f1_hierarchical_gives_every_row_with_diagnostics():
    """One ICDM fit: per-class rows, macro and micro, each with the fit's diagnostics.

    Compiling the model (numba) takes ~10-50 s on first use in a process; the fit itself
    about a second.
    """
    df = make_predictions(np.random.default_rng(5), n=2500, n_classes=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ConvergenceWarning
        res = compare_f1(
            df,
            model="hierarchical",
            rng=3,
            draws=4000,
            sampling=Sampling(chains=2),
            baselines=Baselines(resamples=500),
        )
    assert res.classes == ("0", "1", "2", "3", "4", "macro", "micro")
    assert res.model == "hierarchical" and res.diagnostics is not None
    d = res.diagnostics
    assert d.converged and d.chains == 2 and d.draws == 2000 and "delta_class" in d.variables
    assert res.settings["chains"] == 2 and res.settings["draws"] == 2000
    assert res.settings["average_model"] == "icdm" and "tune" in res.settings
    paired = compare_f1(df, rng=3, draws=4000, baselines=Baselines(resamples=500))
    for key in res.classes:
        cr = res.comparison(key)
        assert cr.diagnostics == d and cr.method.startswith("f1_hierarchical")
        # Monte Carlo error from the row's bulk ESS over the chains
        ess = ess_bulk(res.draws(key).reshape(2, 2000, 1))[0]
        assert cr.estimate.mcse == pytest.approx(cr.estimate.sd / np.sqrt(ess), rel=1e-9)
        assert len(res.draws(key)) == 4000 and len(res.prior_draws[key]) == 8000
        # the posterior mean within 4 Monte Carlo standard errors (this fit's and the
        # reference's) of a long run of the same model on the same data (ICDM_REFERENCE);
        # was only: within a posterior sd of the paired model's mean, a different model
        ref, ref_se = ICDM_REFERENCE[key]
        se = np.hypot(cr.estimate.mcse, ref_se)
        assert abs(cr.estimate.mean - ref) < 4 * se, (key, cr.estimate.mean, ref, se)
        # the same data: the two models' means agree within a posterior sd (shrinkage)
        assert cr.estimate.mean == pytest.approx(paired.row(key)["mean"], abs=cr.estimate.sd)
        # baselines do not depend on the model
        assert res.row(key)["bootstrap_p_value"] == paired.row(key)["bootstrap_p_value"]
    assert res.row("macro")["mean"] == pytest.approx(
        np.mean([res.row(str(c))["mean"] for c in range(5)]), abs=1e-12
    )
    # micro (the accuracy): its exact posterior mean, within 4 MCSE of the fit (the long
    # run's 0.0613576 +- 1.3e-4 is 1.2 of its MCSE from the exact 0.0615155)
    micro = res.comparison("micro").estimate
    exact = _exact_micro_mean(*_confusions(df))
    assert abs(micro.mean - exact) < 4 * micro.mcse, (micro.mean, exact, micro.mcse)
    # a subset of classes: rows of those classes only, from the fit of all of them
    sub = compare_f1(
        df, model="hierarchical", classes=[3], rng=3, draws=4000, sampling=Sampling(chains=2)
    )
    assert sub.classes == ("3",)
    np.testing.assert_array_equal(sub.draws(3), res.draws(3))


@pytest.mark.slow
def test_icdm_model_agrees_with_the_flat_joint_model():
    """ICDM 2015 hierarchical model vs the exact flat-cell joint model on 2 000 documents.

    Different priors and the ICDM model is unpaired, so only a loose agreement is
    expected: macro-F1 posterior means within 0.3 posterior sd (the prior differences
    are negligible at this size; NUTS MC error ~0.03 sd), and the unpaired model wider.
    ICDM's micro-F1 mean is also checked against its exact value within 4 MCSE.
    """
    t, ca, cb = _example_confusions()
    icdm = compare_f1(t, system_a="svm", system_b="nb", model="hierarchical", rng=0, draws=2000)
    flat = compare_f1(t, system_a="svm", system_b="nb", rng=1, draws=10_000, baselines=False)
    macro, row = icdm.row("macro"), flat.row("macro")
    assert icdm.diagnostics.r_hat_max < 1.01
    assert abs(macro["mean"] - row["mean"]) < 0.3 * macro["sd"]
    assert macro["sd"] > row["sd"]
    micro, flat_micro = icdm.row("micro"), flat.row("micro")
    assert abs(micro["mean"] - flat_micro["mean"]) < 0.3 * micro["sd"]
    exact = _exact_micro_mean(ca, cb)
    assert abs(micro["mean"] - exact) < 4 * icdm.comparison("micro").estimate.mcse


@pytest.mark.slow
def test_icdm_and_flat_micro_f1_agree_on_20_classes():
    """20 classes, 20 000 documents: posterior means of delta micro-F1 agree within 4 MCSE.

    The two models differ in prior (ICDM: one pseudo-document per confusion-matrix row
    and a flat Dirichlet on the class proportions; flat cells: total mass M) and in
    pairing, neither of which moves the posterior mean at this size by more than ~1e-5.
    The Monte Carlo error of the ICDM mean is sd / sqrt(bulk ESS); that of the flat
    model's independent draws sd / sqrt(n).
    """
    df = make_predictions(
        np.random.default_rng(2015), n=20_000, n_classes=20, acc_a=0.8, acc_b=0.78
    )
    icdm = compare_f1(df, model="hierarchical", rng=2, baselines=False)
    flat = compare_f1(df, rng=2, draws=10_000, baselines=False)
    assert icdm.diagnostics.converged
    h, f = icdm.comparison("micro").estimate, flat.comparison("micro").estimate
    ess = ess_bulk(icdm.draws("micro").reshape(4, 2000, 1))[0]
    assert h.mcse == pytest.approx(h.sd / np.sqrt(ess), rel=1e-9) and ess > 1000
    assert f.mcse == pytest.approx(f.sd / np.sqrt(10_000), rel=1e-9)
    combined = np.hypot(h.mcse, f.mcse)
    assert abs(h.mean - f.mean) < 4 * combined
    assert abs(h.mean - _exact_micro_mean(*_confusions(df))) < 4 * h.mcse  # its exact mean
    assert h.sd > f.sd  # unpaired: wider
