"""Rankings read off the joint correlated model (``rank(..., method="joint")``).

The ranking's shape, JSON, reports, seeds, errors and command line on small fits;
the recovery of a known order and the agreement with the pairwise ranking of the
five UCI classifiers are marked slow.
"""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest

from _joint_data import SMALL, score_table, small_joint_rank, study_scores
from isbetter import ConvergenceWarning, InputError, rank, read_scores
from isbetter.cli import main
from isbetter.report import render, summary_from_dict


# --------------------------------------------------------------------------- fits and rankings
def near_certain(p: float, ess: float) -> bool:
    """Whether `p` is within 4 Monte Carlo standard errors of a reference P = 1.

    The references are long runs of the same data (4 chains x 5000 draws, another seed):
    every one of their 20 000 draws had the event (1 - P < 1.5e-4 at 95 %). Where P is
    near 1 a fit's MCSE is that of a count of one, about 1 / ESS (the fit's smallest bulk
    ESS); the old bounds (P > 0.9) passed a posterior that put 10 % of its mass elsewhere.
    """
    return p >= 1.0 - 4.0 / ess


@pytest.fixture(scope="module")
def small_study():
    """3 systems on 6 data sets: s2 far better, s0 and s1 practically equal."""
    scores = study_scores(np.random.default_rng(5), [0.0, 0.001, 0.05], q=6)
    return score_table(scores)


@pytest.fixture(scope="module")
def small_ranking(small_study):
    return small_joint_rank(small_study)


def test_joint_ranking_has_the_pairwise_shape(small_ranking):
    r = small_ranking
    assert len(r.pairs) == 3 and {p.method for p in r.pairs} == {"joint"}
    for p in r.pairs:
        assert p.counting == "argmax" and p.predictive is not None
        assert p.estimate is not None and p.diagnostics is not None and p.observed is not None
        assert p.p_a_better + p.p_rope + p.p_b_better == pytest.approx(1.0)
        assert len(r.simplex["acc"][(p.system_a, p.system_b)]) > 0
    assert r.order("acc") == "s0 ≈ s1 < s2"
    ess = r.pairs[0].diagnostics.ess_bulk_min  # one joint fit: the same for every pair
    assert near_certain(r.pair("s2", "s0", "acc").p_a_better, ess)
    j = r.joint["acc"]
    assert near_certain(j.p_best["s2"], ess) and j.rank_interval["s2"] == (1, 1)
    assert j.top_orders[0][0].endswith("< s2")
    assert sum(j.p_best.values()) == pytest.approx(1.0)
    assert r.settings["comparison_method"] == "joint"


def test_joint_ranking_json_round_trip_and_reports(small_ranking):
    data = json.loads(json.dumps(small_ranking.to_dict()))
    block = data["metrics"]["acc"]["joint"]
    assert {"method", "p_best", "expected_rank", "rank_interval", "top_orders"} <= set(block)
    assert block["method"] == "joint" and set(block["top_orders"][0]) == {"order", "p"}
    again = summary_from_dict(data)
    assert again.to_dict() == small_ranking.to_dict()
    for fmt in ("text", "markdown", "latex", "html"):
        out = render(small_ranking, fmt)
        assert "P(best)" in out and "expected rank" in out and "most probable orders" in out, fmt
    assert json.loads(render(small_ranking, "json"))["metrics"]["acc"]["joint"] == block


def test_joint_ranking_same_seed_same_numbers(small_study, small_ranking):
    again = small_joint_rank(small_study)
    assert again.to_dict()["metrics"] == small_ranking.to_dict()["metrics"]


def test_joint_ranking_lower_is_better_flips(rng):
    scores = study_scores(np.random.default_rng(5), [0.0, 0.001, 0.05], q=6)
    errors = small_joint_rank(score_table(1.0 - scores, lower=True))
    assert errors.order("acc") == "s0 ≈ s1 < s2"
    ess = errors.pairs[0].diagnostics.ess_bulk_min
    assert near_certain(errors.joint["acc"].p_best["s2"], ess)


def test_joint_ranking_bad_input(small_study, tmp_path):
    with pytest.raises(InputError, match="`jobs` applies to the pairwise route"):
        rank(small_study, method="joint", jobs=2)
    with pytest.raises(InputError, match="`cache_dir` applies to the pairwise route"):
        rank(small_study, method="joint", cache_dir=tmp_path)
    with pytest.raises(InputError, match="Option 'prior' does not apply to method 'joint'"):
        rank(small_study, method="joint", prior=1.0)
    with pytest.raises(InputError, match="Unknown method 'jointly'"):
        rank(small_study, method="jointly")


def test_poor_convergence_warns_once_naming_the_one_fit(small_study):
    """The joint model's K(K-1)/2 pairs are read from one fit: a poor fit is one warning
    with its numbers, not "3 of 3 comparisons did not converge well" (with Huang and
    Wand's prior the UCI ranking said so of all 10 pairs, at a fit with R-hat 1.012)."""
    with pytest.warns(ConvergenceWarning) as caught:
        rank(small_study, rope=0.01, method="joint", rng=2, draws=20, tune=20, chains=2)
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(messages) == 1, messages
    assert "The joint model's fit of 'acc' did not converge well: R-hat max" in messages[0]
    assert "comparisons" not in messages[0]


def test_cli_rank_joint_json(tmp_path, capsys):
    scores = study_scores(np.random.default_rng(5), [0.0, 0.001, 0.05], q=6)
    score_table(scores).data.to_csv(tmp_path / "scores.csv", index=False)
    base = ["rank", str(tmp_path / "scores.csv"), "--metric", "acc", "--method", "joint"]
    with warnings.catch_warnings():  # the form of the output: as small_joint_rank
        warnings.simplefilter("ignore", ConvergenceWarning)
        code = main([*base, "--rope", "0.01", "--seed", "2", "--draws", "300", "--tune", "300",
                     "--chains", "2", "--format", "json"])  # fmt: skip
    assert code == 0
    block = json.loads(capsys.readouterr().out)["metrics"]["acc"]
    ess = block["pairs"][0]["comparison"]["diagnostics"]["ess_bulk_min"]
    assert block["order"] == "s0 ≈ s1 < s2" and near_certain(block["joint"]["p_best"]["s2"], ess)
    assert main([*base, "--jobs", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--jobs applies to the pairwise route" in err


def _cli_stopped_at_rank(tmp_path, monkeypatch):
    """A score file and `isbetter rank`'s arguments for it, with `rank` replaced by a stub
    that records the priors it is given and stops; returns (those priors, the arguments)."""
    import isbetter.ranking

    seen: list = []

    def fake_rank(data, **kwargs):
        seen.append(kwargs.get("priors"))
        raise InputError("stopped here")

    monkeypatch.setattr(isbetter.ranking, "rank", fake_rank)
    scores = study_scores(np.random.default_rng(5), [0.0, 0.001, 0.05], q=3)
    score_table(scores).data.to_csv(tmp_path / "scores.csv", index=False)
    return seen, ["rank", str(tmp_path / "scores.csv"), "--metric", "acc", "--rope", "0.01"]


def test_cli_joint_spread_prior_reaches_the_fit(tmp_path, capsys, monkeypatch):
    """--joint-spread-prior huang-wand passes JointPriors(spread_prior="huang-wand") to
    rank (the fit records it: tests/cv/test_joint_prior.py), which with no --joint-tails
    is the shared-nu form, as --joint-spread-prior inverse-wishart is the former default;
    without either no priors are passed (the default, independent components); with
    another method it is refused."""
    from isbetter.cv.joint.spec import JointPriors

    seen, base = _cli_stopped_at_rank(tmp_path, monkeypatch)
    assert main([*base, "--method", "joint", "--joint-spread-prior", "huang-wand"]) == 2
    assert main([*base, "--method", "joint", "--joint-spread-prior", "inverse-wishart"]) == 2
    assert main([*base, "--method", "joint"]) == 2
    assert seen == [JointPriors(spread_prior="huang-wand"), JointPriors(tails="shared"), None]
    assert [p.tails for p in seen[:2]] == ["shared", "shared"]
    capsys.readouterr()
    assert main([*base, "--joint-spread-prior", "huang-wand"]) == 2
    err = capsys.readouterr().err
    assert "--joint-spread-prior is a prior of --method joint" in err and len(seen) == 3


def test_cli_joint_tails_reach_the_fit(tmp_path, capsys, monkeypatch):
    """--joint-tails passes JointPriors(tails=...) to rank (with --joint-spread-prior when
    both are given); without --method joint it is refused naming the flag, and so are
    components tails with the inverse-Wishart spread (they need Huang and Wand's form)."""
    from isbetter.cv.joint.spec import JointPriors

    seen, base = _cli_stopped_at_rank(tmp_path, monkeypatch)
    joint = [*base, "--method", "joint"]
    assert main([*joint, "--joint-tails", "components"]) == 2
    assert (
        main([*joint, "--joint-tails", "per-system", "--joint-spread-prior", "inverse-wishart"])
        == 2
    )
    assert main([*joint, "--joint-tails", "shared"]) == 2
    assert seen == [
        JointPriors(tails="components"),
        JointPriors(tails="per-system", spread_prior="inverse-wishart"),
        JointPriors(spread_prior="inverse-wishart"),  # the former default
    ]
    capsys.readouterr()
    assert main([*base, "--joint-tails", "components"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--joint-tails is a prior of --method joint" in err
    assert (
        main([*joint, "--joint-tails", "components", "--joint-spread-prior", "inverse-wishart"])
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--joint-spread-prior must be huang-wand" in err
    assert "--joint-tails components" in err and "JointPriors" not in err and len(seen) == 3


# --------------------------------------------------------------------------- slow
@pytest.mark.slow
def test_joint_recovers_a_known_order():
    """K = 4, 20 data sets: true effects 0, 0, 3, 6 ROPEs; the order and P(best) recovered."""
    scores = study_scores(np.random.default_rng(7), [0.0, 0.0, 0.03, 0.06], q=20)
    res = rank(score_table(scores), rope=0.01, method="joint", rng=1)
    assert res.order("acc") == "s0 ≈ s1 < s2 < s3"
    j = res.joint["acc"]
    # a long run (4 x 5000 draws, seed 105): s3 best in every draw (was P > 0.99)
    ess = res.pairs[0].diagnostics.ess_bulk_min
    assert near_certain(j.p_best["s3"], ess) and j.rank_interval["s3"] == (1, 1)
    assert j.rank_interval["s2"] == (2, 2)
    assert {j.top_orders[0][0], j.top_orders[1][0]} == {"s0 < s1 < s2 < s3", "s1 < s0 < s2 < s3"}
    assert res.pairs[0].diagnostics is not None and res.pairs[0].diagnostics.converged


#: pairs of the UCI ranking whose pairwise fit is decisive (largest probability >= 0.9)
#: and where the joint model's relation differs, with the reason (see the report)
UCI_EXPLAINED: dict[tuple[str, str], str] = {}


@pytest.mark.slow
def test_joint_agrees_with_the_decisive_pairwise_relations(uci_long_path):
    table = read_scores(uci_long_path, dataset="dataset_id", system="classifier", score="accuracy")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        pairwise = rank(table, rope=0.01, rng=1)
    joint = rank(table, rope=0.01, method="joint", rng=1)
    assert joint.order("accuracy") == pairwise.order("accuracy")
    decisive = 0
    for a, b in itertools.combinations(table.systems, 2):
        p = pairwise.pair(a, b, "accuracy")
        if max(p.p_a_better, p.p_rope, p.p_b_better) < 0.9:
            continue
        decisive += 1
        if (a, b) in UCI_EXPLAINED:
            continue
        assert joint.relations["accuracy"][(a, b)] == pairwise.relations["accuracy"][(a, b)], (a, b)
    assert decisive >= 5


def test_every_output_names_what_each_relation_is_about(small_ranking):
    """Issue 29: the joint model printed its ROPE order of the mean effects next to its
    table of the next data set's differences, neither saying which; and ordered its chain
    by the mean effects' ranks while its relations came from the table."""
    from isbetter.ranking.order import CHAIN_BY_PROBABILITIES, expected_ranks

    r = small_ranking
    assert r.about("acc") == {
        "pairs": "the difference on the next data set",
        "joint": "the systems' mean effects b_k (over data sets), not one data set",
    }
    # the chain is read off the table's quantity: its order too
    order = r.orders["acc"]
    probs = {(p.system_a, p.system_b): p.probabilities().as_tuple() for p in r.pairs}
    assert order.chain_by == CHAIN_BY_PROBABILITIES
    assert order.chain_ranks == pytest.approx(expected_ranks(r.systems, probs))
    for fmt in ("text", "markdown", "latex", "html"):
        out = render(r, fmt)
        assert "pairs and order: next data set" in out, fmt
        assert "acc, next data set (ROPE" in out and "acc chain, next data set:" in out, fmt
        assert "acc, mean effects, most probable orders" in out, fmt
        assert "about the difference on the next data set" in out, fmt
    block = json.loads(render(r, "json"))["metrics"]["acc"]
    assert block["pairs_about"] == "the difference on the next data set"
    assert block["joint_about"].startswith("the systems' mean effects b_k")


def test_per_system_nu_reach_the_pairs_as_the_grouped_t(small_study):
    """A fit with one nu per system ((chains, draws, K)): every pair's probabilities are
    the argmax-counted and mean masses of the grouped t (cv.joint.predictive), not the t's
    (a shared-tails fit, its nu made per system)."""
    from dataclasses import replace

    from isbetter.cv.joint.model import joint_fit
    from isbetter.cv.joint.predictive import pair_masses
    from isbetter.cv.joint.spec import JointPriors
    from isbetter.inference.decisions import probabilities_from_masses
    from isbetter.ranking.joint import _pairs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the draws are what they are
        fit = joint_fit(small_study, rope=0.01, rng=3, priors=JointPriors(tails="shared"), **SMALL)
    k = fit.effects.shape[-1]
    factors = np.array([0.5, 1.0, 4.0])  # nu_k: three different tails per draw
    per_system = replace(fit, nu=1.0 + (fit.nu[..., None] - 1.0) * factors)
    systems = fit.systems
    pairs, _ = _pairs(per_system, systems, "acc", 0.01, set(), 0)
    shared, _ = _pairs(fit, systems, "acc", 0.01, set(), 0)
    effects = fit.effects.reshape(-1, k)
    spread = fit.spread.reshape(-1, k, k)
    nu = per_system.nu.reshape(-1, k)
    for (ia, ib), got, old in zip(itertools.combinations(range(k), 2), pairs, shared, strict=True):
        masses = pair_masses(effects[:, ia] - effects[:, ib], spread, nu, ia, ib, 0.01)
        want = probabilities_from_masses(masses, "argmax")
        assert (got.p_a_better, got.p_rope, got.p_b_better) == (
            want.p_a_better,
            want.p_rope,
            want.p_b_better,
        )
        assert got.predictive == probabilities_from_masses(masses, "mean")
        assert got.predictive != old.predictive


def _components_ranking(study, rng):
    from isbetter.cv.joint.spec import JointPriors

    components = JointPriors(tails="components")  # the default, named: the table's form
    return small_joint_rank(study, priors=components, rng=rng, draws=100, tune=100)


def test_components_tails_reach_the_pairs(small_study):
    """JointPriors(tails="components"): the fit's nu is (chains, draws, K - 1), one per
    component, and each pair's masses are component_pair_masses of its weights
    w = c_ab^T L (seeded from the ranking's seed and the pair): a table of three
    pairs whose probabilities sum to 1, the same at the same seed, recorded as
    components tails."""
    from isbetter.cv.joint.model import joint_fit
    from isbetter.cv.joint.predictive import component_pair_masses, component_weights
    from isbetter.cv.joint.spec import JointPriors
    from isbetter.inference.decisions import probabilities_from_masses
    from isbetter.inference.seeds import pair_seed
    from isbetter.ranking.joint import _pairs

    r = _components_ranking(small_study, 2)
    assert len(r.pairs) == 3 and {p.method for p in r.pairs} == {"joint"}
    for p in r.pairs:
        assert p.p_a_better + p.p_rope + p.p_b_better == pytest.approx(1.0)
        q = p.predictive
        assert q.p_a_better + q.p_rope + q.p_b_better == pytest.approx(1.0)
        assert p.settings["tails"] == "components"
    assert "tails='components'" in r.settings["options"]["priors"]
    assert _components_ranking(small_study, 2).to_dict()["metrics"] == r.to_dict()["metrics"]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = joint_fit(small_study, rope=0.01, rng=3, priors=JointPriors(tails="components"),
                        draws=50, tune=50, chains=2)  # fmt: skip
    k = fit.effects.shape[-1]
    assert fit.nu.shape == (2, 50, k - 1) and fit.loading is not None
    pairs, _ = _pairs(fit, fit.systems, "acc", 0.01, set(), 7)
    effects = fit.effects.reshape(-1, k)
    loading = fit.loading.reshape(-1, k - 1, k - 1)
    nu = fit.nu.reshape(-1, k - 1)
    for (ia, ib), got in zip(itertools.combinations(range(k), 2), pairs, strict=True):
        a, b = fit.systems[ia], fit.systems[ib]
        masses = component_pair_masses(
            effects[:, ia] - effects[:, ib],
            component_weights(loading, ia, ib),
            nu,
            0.01,
            rng=pair_seed(7, "joint", "acc", a, b),
        )
        assert got.predictive == probabilities_from_masses(masses, "mean")
