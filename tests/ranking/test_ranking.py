"""Ranking many systems: partial orders, rules, a study with a known order, the CLI."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from _uci import UCI_COLUMNS
from isbetter import ConvergenceWarning, InputError, rank, read_scores
from isbetter.cli import main
from isbetter.ranking.order import partial_order
from isbetter.report import FORMATS, render, summary_from_dict


# ----------------------------------------------------------------------- partial orders
def test_chain_with_an_equivalence_group():
    rel = {
        ("TnT", "Collins"): "b_better",
        ("TnT", "LAPOS"): "b_better",
        ("TnT", "Flair"): "b_better",
        ("Collins", "LAPOS"): "equivalent",
        ("Collins", "Flair"): "b_better",
        ("LAPOS", "Flair"): "b_better",
    }
    order = partial_order(("TnT", "Collins", "LAPOS", "Flair"), rel)
    assert order.line == "TnT < Collins ≈ LAPOS < Flair"
    assert order.groups == (("TnT",), ("Collins", "LAPOS"), ("Flair",))
    # transitive reduction: TnT -> group -> Flair, not TnT -> Flair
    assert order.hasse_edges == (("Collins ≈ LAPOS", "Flair"), ("TnT", "Collins ≈ LAPOS"))
    assert order.inconsistencies == ()


def test_orientation_of_relations_does_not_matter():
    a = partial_order(("x", "y"), {("x", "y"): "a_better"})
    b = partial_order(("x", "y"), {("y", "x"): "b_better"})
    assert a.line == b.line == "y < x"


def test_incomparable_systems_are_braced():
    rel = {("a", "b"): "b_better", ("a", "c"): "b_better", ("b", "c"): "undecided"}
    order = partial_order(("a", "b", "c"), rel)
    assert order.line == "a < {b, c}"
    assert set(order.hasse_edges) == {("a", "b"), ("a", "c")}


def test_inconsistencies_are_reported_never_hidden():
    cycle = {("a", "b"): "b_better", ("b", "c"): "b_better", ("a", "c"): "a_better"}
    order = partial_order(("a", "b", "c"), cycle)
    assert any(x.startswith("cycle:") for x in order.inconsistencies)
    nontransitive = {("a", "b"): "equivalent", ("b", "c"): "equivalent", ("a", "c"): "b_better"}
    order = partial_order(("a", "b", "c"), nontransitive)
    # a chain of "≈" does not join a and c, which have a strict relation: groups are cliques
    assert order.groups == (("a", "b"), ("c",))
    assert order.line == "a ≈ b < c"
    (text,) = order.inconsistencies
    assert text.startswith("≈ is not transitive: b ≈ c, but a ≈ b and c cannot form one group")


def test_groups_form_from_the_strongest_equivalence_first():
    """Two tight pairs linked by a weak "≈" (the UCI case: aode ≈ hnb, j48 ≈ j48gr)."""
    rel = {
        ("aode", "hnb"): "equivalent",
        ("j48", "j48gr"): "equivalent",
        ("aode", "j48"): "equivalent",
        ("aode", "j48gr"): "equivalent",
        ("hnb", "j48"): "a_better",
        ("hnb", "j48gr"): "a_better",
    }
    strength = {("aode", "hnb"): 0.99, ("j48", "j48gr"): 1.0, ("aode", "j48"): 0.6,
                ("aode", "j48gr"): 0.55}  # fmt: skip
    systems = ("aode", "hnb", "j48", "j48gr")
    order = partial_order(systems, rel, strength)
    assert set(order.groups) == {("aode", "hnb"), ("j48", "j48gr")}
    assert order.line == "j48 ≈ j48gr < aode ≈ hnb"
    assert len(order.inconsistencies) == 2  # aode ≈ j48 and aode ≈ j48gr, across groups
    # without strengths, the order of the systems decides: aode joins j48 first
    weak_first = partial_order(systems, rel, {("aode", "j48"): 1.0, ("aode", "j48gr"): 1.0})
    assert ("aode", "j48", "j48gr") in weak_first.groups


@given(st.permutations(list("abcdef")), st.integers(0, 5))
def test_ranking_is_acyclic_whenever_the_pairwise_decisions_are(perm, ties):
    """Relations consistent with a (weak) total order give that order, with no conflict."""
    level = {s: i for i, s in enumerate(perm)}
    for s in perm[:ties]:  # merge some systems into their neighbour's level
        level[s] = level[perm[max(0, perm.index(s) - 1)]]
    names = tuple(sorted(perm))
    rel = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            r = (
                "equivalent"
                if level[a] == level[b]
                else ("a_better" if level[a] > level[b] else "b_better")
            )
            rel[(a, b)] = r
    order = partial_order(names, rel)
    assert order.inconsistencies == ()
    flat = [s for grp in order.groups for s in grp]
    assert sorted(flat) == list(names)
    assert [level[grp[0]] for grp in order.groups] == sorted({level[s] for s in names})


# ------------------------------------------------------------------- a known true order
ROPE = 0.01
LEVELS = {"s1": 0, "s2": 0, "s3": 3, "s4": 6, "s5": 6, "s6": 9, "s7": 12, "s8": 15}


@pytest.fixture(scope="module")
def known_study():
    """8 systems on 8 data sets x 10 folds; true means 0, 0, 3, 6, 6, 9, 12, 15 x ROPE."""
    g = np.random.default_rng(11)
    base = g.uniform(0.6, 0.8, size=(8, 1))
    rows = []
    for system, level in LEVELS.items():
        scores = base + level * ROPE + g.normal(0, 0.002, size=(8, 10))
        for d in range(8):
            for f in range(10):
                rows.append((f"d{d}", system, f, scores[d, f]))
    df = pd.DataFrame(rows, columns=["dataset", "system", "fold", "acc"])
    return read_scores(df, run=None, score="acc")


def test_known_order_is_recovered_under_both_rules(known_study, hierarchical_model):
    """8 systems, true means 0, 0, 3, 6, 6, 9, 12, 15 x ROPE: order and groups recovered.

    One fit of the 28 pairs (the compiled 8-data-set model of conftest); the threshold
    rule re-reads the same pairs (`with_rule`, no refit).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = rank(known_study, rope=ROPE, jobs=1, rng=3, draws=500, chains=2)
    assert res.rule == "likelihood" and len(res.pairs) == 28
    for ranking in (res, res.with_rule("threshold", threshold=0.95)):
        assert ranking.order("acc") == "s1 ≈ s2 < s3 < s4 ≈ s5 < s6 < s7 < s8", ranking.rule
        assert ranking.orders["acc"].groups[0] == ("s1", "s2")
        assert ranking.orders["acc"].inconsistencies == ()
    assert res.pair("s8", "s1", "acc").p_a_better > 0.95  # mirrored from (s1, s8)
    # a stricter threshold leaves pairs undecided, never contradicts
    strict = res.with_rule("threshold", threshold=0.9999)
    assert strict.orders["acc"].inconsistencies == ()
    assert set(strict.relations["acc"].values()) <= {
        "a_better",
        "b_better",
        "equivalent",
        "undecided",
    }


def test_ranking_result_round_trips_and_renders(known_study):
    res = rank(known_study, rope=ROPE, method="signed_rank", jobs=1, rng=1, draws=2000)
    again = summary_from_dict(json.loads(json.dumps(res.to_dict())))
    assert again.to_dict() == res.to_dict()
    for fmt in FORMATS:
        out = render(res, fmt)
        if fmt == "latex":  # typewriter type, breakable after each "|"
            out = out.replace("|\\allowbreak ", "|")
        assert out.strip() and res.signature in out or fmt == "csv"
    frame = res.to_frame()
    assert len(frame) == 28 and {"relation", "p_a_better", "p_rope"} <= set(frame.columns)
    # the same seed gives identical pairs, whatever runs them
    same = rank(known_study, rope=ROPE, method="signed_rank", jobs=2, rng=1, draws=2000)
    assert same.to_frame().drop(columns=["seed"]).equals(frame.drop(columns=["seed"]))


def test_rank_iv(known_study):
    with pytest.raises(InputError, match="unknown system 'zz'"):
        rank(known_study, systems=["s1", "zz"])
    with pytest.raises(InputError, match="at least 2 systems"):
        rank(known_study, systems=["s1"])
    with pytest.raises(InputError, match="Unknown rule"):
        rank(known_study, rule="vote")
    with pytest.raises(InputError, match="no ROPE for metric"):
        rank(known_study, rope={"other": 0.01})
    with pytest.raises(InputError, match="`threshold` must be"):
        rank(known_study, threshold=0.0)


def test_system_without_scores_on_a_metric_is_named():
    df = pd.DataFrame(
        {
            "dataset": ["d"] * 6,
            "system": ["a", "a", "b", "b", "c", "c"],
            "fold": [1, 2] * 3,
            "acc": [0.8, 0.7, 0.6, 0.7, 0.5, 0.6],
            "f1": [0.5, 0.6, 0.4, 0.4, np.nan, np.nan],
        }
    )
    with pytest.raises(InputError, match="System 'c' has no scores on metric 'f1'"):
        read_scores(df, run=None, score=["acc", "f1"])


# ------------------------------------------------------------------------------ the CLI
def test_cli_rank_json(uci_long_path, capsys):
    code = main(
        [
            "rank",
            str(uci_long_path),
            *UCI_COLUMNS,
            "--rope",
            "accuracy=0.01",
            "--method",
            "signed-rank",
            "--jobs",
            "1",
            "--seed",
            "1",
            "--format",
            "json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    block = out["metrics"]["accuracy"]
    assert len(block["pairs"]) == 10
    assert {"a", "b", "p_a_better", "p_rope", "p_b_better", "relation"} <= set(block["pairs"][0])
    assert {"order", "hasse_edges", "groups", "inconsistencies"} <= set(block)
    assert out["signature"].startswith("method:pairwise-signed-rank|rope:0.01|draws:50000|seed:1")


def test_cli_rank_bad_input_is_one_line(uci_long_path, capsys):
    base = [
        "rank",
        str(uci_long_path),
        *UCI_COLUMNS,
        "--jobs",
        "1",
    ]
    assert main([*base, "--systems", "nbc", "zzz"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown system 'zzz'" in err
    assert main([*base, "--rope", "accuracy=abc"]) == 2
    assert "--rope 'accuracy=abc'" in capsys.readouterr().err


def test_order_of_an_unknown_metric_names_the_metrics():
    from isbetter.ranking.result import RankingResult

    ranking = RankingResult.__new__(RankingResult)
    object.__setattr__(ranking, "orders", {"accuracy": None})
    object.__setattr__(ranking, "metrics", ("accuracy",))
    with pytest.raises(InputError, match="no metric 'score'; it has 'accuracy'"):
        ranking.order("score")


# ----------------------------------------------------------------------- where pairs run
def _jobs_asked(data, monkeypatch, what="jobs", **kwargs):
    """The `jobs` (or `threads`) that rank() hands to run_tasks (stopped before any work)."""
    from isbetter.ranking import execution

    asked = {}

    def stop(tasks, *, jobs, threads, **_):
        asked.update(jobs=jobs, threads=threads)
        raise LookupError("stopped before running")

    monkeypatch.setattr(execution, "run_tasks", stop)
    with pytest.raises(LookupError, match="stopped"):
        rank(data, **kwargs)
    return asked[what]


@pytest.mark.parametrize(
    ("kwargs", "jobs"),
    [
        ({"method": "sign"}, 1),
        ({"method": "signed_rank"}, 1),
        ({"method": "correlated_t"}, 1),
        ({"method": "hierarchical", "systems": ["s1", "s2"]}, 1),  # one fit: no pool
        ({"method": "hierarchical", "systems": ["s1", "s2", "s3"]}, 3),  # 3 fits, 8 CPUs
        ({"method": "auto"}, 4),  # several data sets: hierarchical; 2 cores a fit
        ({"method": "auto", "cores": 1}, 8),  # fits on one core each: one per CPU
        ({"method": "auto", "chains": 1}, 8),  # one chain: one core
        ({"method": "sign", "jobs": 3}, 3),  # as asked
    ],
)
def test_worker_processes_only_for_several_mcmc_fits(known_study, monkeypatch, kwargs, jobs):
    """On 8 CPUs: one worker per two, as each fit samples its chains on two cores."""
    monkeypatch.setattr("isbetter.ranking.os.cpu_count", lambda: 8)
    assert _jobs_asked(known_study, monkeypatch, rope=ROPE, **kwargs) == jobs


@pytest.mark.parametrize(("cpus", "jobs"), [(None, 1), (1, 1), (2, 1), (3, 1), (5, 2)])
def test_mcmc_fits_run_in_this_process_on_two_cpus(known_study, monkeypatch, cpus, jobs):
    """Each fit already samples on two cores: on 2 CPUs a second worker only competes."""
    monkeypatch.setattr("isbetter.ranking.os.cpu_count", lambda: cpus)
    assert _jobs_asked(known_study, monkeypatch, rope=ROPE, method="hierarchical") == jobs


@pytest.mark.parametrize(
    ("kwargs", "threads"),
    [
        ({"method": "hierarchical"}, 2),  # in this process: two fits at a time
        ({"method": "hierarchical", "jobs": 1}, 2),
        ({"method": "hierarchical", "systems": ["s1", "s2"]}, 1),  # one fit
        ({"method": "hierarchical", "backend": "pymc"}, 1),  # PyMC's sampler: not in threads
        ({"method": "hierarchical", "jobs": 2}, 1),  # worker processes
        ({"method": "sign"}, 1),  # exact: one after the other
    ],
)
def test_two_hierarchical_fits_at_a_time_in_this_process(known_study, monkeypatch, kwargs, threads):
    monkeypatch.setattr("isbetter.ranking.os.cpu_count", lambda: 2)
    asked = _jobs_asked(known_study, monkeypatch, what="threads", rope=ROPE, **kwargs)
    assert asked == threads


def test_no_threads_without_nutpie(known_study, monkeypatch):
    import importlib.util

    monkeypatch.setattr("isbetter.ranking.os.cpu_count", lambda: 2)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "nutpie" else real(name)
    )
    asked = _jobs_asked(known_study, monkeypatch, what="threads", rope=ROPE, method="hierarchical")
    assert asked == 1


@pytest.mark.parametrize(("method", "jobs"), [("paired", 1), ("unpaired", 1), ("hierarchical", 3)])
def test_f1_rankings_start_workers_only_for_the_mcmc_model(monkeypatch, method, jobs):
    from isbetter import predictions_from_arrays

    monkeypatch.setattr("isbetter.ranking.os.cpu_count", lambda: 8)
    g = np.random.default_rng(5)
    gold = g.integers(0, 2, 60)
    table = predictions_from_arrays(gold, {s: g.integers(0, 2, 60) for s in "abc"})
    assert _jobs_asked(table, monkeypatch, method=method) == jobs


def test_cheap_ranking_runs_in_this_process_by_default(known_study):
    """The README's scikit-learn example as a script: no process pool to bootstrap."""
    res = rank(known_study, systems=["s1", "s3", "s8"], rope=ROPE, method="sign", rng=1)
    assert res.settings["execution"]["executor"] == "serial"
