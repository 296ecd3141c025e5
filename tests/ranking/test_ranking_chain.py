"""The paper's chain beside the partial order, from Szymański & Gorman's (2020) Table 2.

Table 2 of *Is the Best Better?* (EMNLP 2020) gives, for six POS taggers and three
metrics, each pair's (P(A better), P(≈), P(B better)); section 6 reads off it

* token accuracy:    TnT < Collins ≈ LAPOS ≈ Stanford < NLP4J < Flair
* sentence accuracy: TnT < Collins < LAPOS ≈ Stanford < NLP4J < Flair
* OOV accuracy:      TnT ≈ Collins ≈ LAPOS < Stanford ≲ NLP4J ≈ Flair

Fed the table's numbers, the chain must give all three lines exactly; the partial
order gives the first two and cannot write the third (TnT < LAPOS breaks the group).
"""

import html
import itertools
import json

import pytest

from isbetter.ranking.order import (
    CHAIN_BY_PROBABILITIES,
    CHAIN_BY_RELATIONS,
    chain_line,
    expected_ranks,
    partial_order,
)
from isbetter.ranking.result import RankingResult, orders_of, relations_of
from isbetter.report import FORMATS, render, summary_from_dict
from isbetter.results.comparison import ComparisonResult

TAGGERS = ("TnT", "Collins", "LAPOS", "Stanford", "NLP4J", "Flair")
METRICS = ("token", "sentence", "OOV")
#: Table 2, row by row: A, B, then (>, ≈, <) for token, sentence and OOV accuracy
TABLE2 = """
TnT      Collins  .168 .003 .829  .125 .001 .874  .158 .550 .292
TnT      LAPOS    .137 .001 .862  .127 .000 .873  .162 .305 .533
TnT      Stanford .109 .000 .891  .112 .000 .888  .088 .010 .903
TnT      NLP4J    .152 .000 .848  .156 .000 .844  .116 .002 .882
TnT      Flair    .158 .000 .842  .136 .000 .864  .094 .000 .906
Collins  LAPOS    .116 .617 .267  .105 .215 .680  .063 .842 .095
Collins  Stanford .180 .441 .379  .124 .120 .756  .118 .038 .845
Collins  NLP4J    .137 .014 .848  .153 .010 .837  .166 .010 .824
Collins  Flair    .164 .000 .836  .157 .000 .843  .138 .001 .861
LAPOS    Stanford .099 .822 .079  .084 .829 .087  .138 .091 .771
LAPOS    NLP4J    .172 .112 .716  .163 .137 .700  .161 .018 .821
LAPOS    Flair    .192 .004 .805  .190 .001 .809  .127 .003 .870
Stanford NLP4J    .206 .122 .672  .191 .200 .609  .148 .441 .411
Stanford Flair    .197 .001 .802  .190 .001 .809  .130 .058 .812
NLP4J    Flair    .150 .055 .795  .148 .024 .827  .092 .619 .288
"""
PUBLISHED = {
    "token": "TnT < Collins ≈ LAPOS ≈ Stanford < NLP4J < Flair",
    "sentence": "TnT < Collins < LAPOS ≈ Stanford < NLP4J < Flair",
    "OOV": "TnT ≈ Collins ≈ LAPOS < Stanford ≲ NLP4J ≈ Flair",
}


def _pairs() -> list[ComparisonResult]:
    pairs = []
    for line in TABLE2.strip().splitlines():
        a, b, *cells = line.split()
        p = [float(c) for c in cells]
        for i, metric in enumerate(METRICS):
            pa, pr, pb = p[3 * i : 3 * i + 3]
            pairs.append(
                ComparisonResult(
                    method="hierarchical",
                    system_a=a,
                    system_b=b,
                    metric=metric,
                    higher_is_better=True,
                    rope=0.02,
                    p_a_better=pa,
                    p_rope=pr,
                    p_b_better=pb,
                    counting="argmax",
                    settings={"seed": 0},
                    ranking_metric=metric,
                )
            )
    return pairs


def table2_ranking(rule: str = "likelihood", margin: float = 0.05) -> RankingResult:
    """A ranking holding Table 2's probabilities, read as the paper read them."""
    pairs = _pairs()
    relations = relations_of(pairs, rule, 0.95, margin)
    return RankingResult(
        systems=TAGGERS,
        metrics=METRICS,
        rule=rule,
        threshold=0.95,
        margin=margin,
        pairs=tuple(pairs),
        relations=relations,
        orders=orders_of(TAGGERS, pairs, relations),
        settings={"seed": 0, "ropes": dict.fromkeys(METRICS, 0.02), "rule": rule},
    )


@pytest.fixture(scope="module")
def table2():
    return table2_ranking()


def test_table2_is_complete():
    pairs = _pairs()
    assert len(pairs) == 3 * 15
    for p in pairs:  # each row of the table sums to 1 up to its rounding
        assert abs(p.p_a_better + p.p_rope + p.p_b_better - 1) <= 0.0015
    assert {(p.system_a, p.system_b) for p in pairs} == set(itertools.combinations(TAGGERS, 2))


@pytest.mark.parametrize("metric", METRICS)
def test_chain_gives_the_papers_three_lines(table2, metric):
    assert table2.chain(metric) == PUBLISHED[metric]
    assert table2.orders[metric].chain_by == CHAIN_BY_PROBABILITIES


def test_the_partial_order_gives_the_first_two_lines_only(table2):
    """The OOV line is a chain, not a partial order: TnT ≈ Collins ≈ LAPOS but TnT < LAPOS."""
    assert table2.order("token") == PUBLISHED["token"]
    assert table2.order("sentence") == PUBLISHED["sentence"]
    assert table2.relations["OOV"][("TnT", "LAPOS")] == "b_better"  # 0.533 > 0.305
    assert table2.order("OOV") != PUBLISHED["OOV"]
    assert table2.orders["OOV"].inconsistencies  # the ≈ that is not transitive, reported


def test_expected_ranks_of_table2(table2):
    """The stated score: 1 + Σ over the others of P(other better) + ½ P(≈); sums to 21."""
    ranks = table2.orders["OOV"].chain_ranks
    assert ranks["TnT"] == pytest.approx(1 + 0.292 + 0.533 + 0.903 + 0.882 + 0.906
                                         + (0.550 + 0.305 + 0.010 + 0.002) / 2)  # fmt: skip
    assert sum(ranks.values()) == pytest.approx(21, abs=0.01)
    assert sorted(TAGGERS, key=lambda s: -ranks[s]) == list(TAGGERS)


def test_chain_needs_the_margin_for_the_close_call(table2):
    """Stanford vs NLP4J on OOV (0.441 vs 0.411): "≲" within the margin, "≈" without it."""
    assert "Stanford ≈ NLP4J" in table2_ranking(margin=0.0).chain("OOV")
    assert "Stanford ≲ NLP4J" in table2.chain("OOV")
    assert "Stanford ≲ NLP4J" in table2.with_rule("likelihood").chain("OOV")


def test_threshold_rule_chain_shows_undecided_pairs(table2):
    strict = table2.with_rule("threshold", threshold=0.95)
    # no pair of neighbours reaches 0.95 in Table 2: every link is undecided
    assert strict.chain("token") == "TnT ? Collins ? LAPOS ? Stanford ? NLP4J ? Flair"


def test_chain_in_every_report_format(table2):
    for fmt in FORMATS:
        out = render(table2, fmt)
        if fmt == "latex":
            assert r"TnT $\approx$ Collins $\approx$ LAPOS $<$ Stanford $\lesssim$ NLP4J" in out
        elif fmt == "html":
            assert html.escape(PUBLISHED["OOV"]) in out
        else:
            assert PUBLISHED["OOV"] in out, fmt
    data = json.loads(render(table2, "json"))
    assert {m: data["metrics"][m]["chain"] for m in METRICS} == PUBLISHED
    assert data["metrics"]["OOV"]["chain_by"] == CHAIN_BY_PROBABILITIES
    frame = table2.to_frame()
    assert set(frame.loc[frame.ranking_metric == "OOV", "chain"]) == {PUBLISHED["OOV"]}


def test_chain_survives_the_json_round_trip(table2):
    again = summary_from_dict(json.loads(json.dumps(table2.to_dict())))
    assert again.to_dict() == table2.to_dict()
    assert again.chain("OOV") == PUBLISHED["OOV"]


def test_a_ranking_saved_before_the_chain_existed_reads_with_its_chain(table2):
    data = json.loads(json.dumps(table2.to_dict()))
    for block in data["metrics"].values():
        for key in ("chain", "chain_ranks", "chain_by"):
            del block[key]
    again = summary_from_dict(data)
    assert {m: again.chain(m) for m in METRICS} == PUBLISHED
    assert again.order("token") == PUBLISHED["token"]


def test_chain_from_relations_alone_and_its_symbols():
    rel = {("a", "b"): "equivalent", ("b", "c"): "b_at_least", ("a", "c"): "b_better"}
    order = partial_order(("c", "b", "a"), rel)
    assert order.chain == "a ≈ b ≲ c"
    assert order.chain_by == CHAIN_BY_RELATIONS
    # a score that disagrees with a pair shows it (">"), and "?" for an undecided pair
    assert chain_line(["c", "a", "b"], rel) == "c > a ≈ b"
    assert chain_line(["a", "b"], {("a", "b"): "undecided"}) == "a ? b"
    assert chain_line(["b", "a"], {("a", "b"): "a_at_least"}) == "b ≲ a"


def test_expected_ranks_ties_keep_the_given_order():
    ranks = expected_ranks(("x", "y", "z"), {("x", "y"): (0.0, 1.0, 0.0),
                                              ("x", "z"): (0.0, 0.0, 1.0),
                                              ("y", "z"): (0.0, 0.0, 1.0)})  # fmt: skip
    assert ranks == {"x": 2.5, "y": 2.5, "z": 1.0}
    order = partial_order(
        ("x", "y", "z"),
        {("x", "y"): "equivalent", ("x", "z"): "b_better", ("y", "z"): "b_better"},
        ranks=ranks,
        ranks_by="test",
    )
    assert order.chain == "x ≈ y < z"
    with pytest.raises(ValueError, match="ranks_by"):
        partial_order(("x", "y"), {("x", "y"): "equivalent"}, ranks={"x": 1.5, "y": 1.5})
