"""Property tests (hypothesis) of the cheap models and of the ranking's partial order.

Already covered elsewhere and not repeated here: swap and ROPE monotonicity of
draws-based results (test_decision.py) and of the F1 sampler (test_f1.py), a
constant added to both systems in the correlated t-test (test_correlated_t.py),
rankings of relations consistent with a weak total order (test_ranking.py).

Scores are drawn on a dyadic grid (k / 1024) and scale factors are m / 8, so
shifted and scaled differences are computed *exactly* in floating point: the
Dirichlet-process tests, whose regions are decided by comparisons with the ROPE,
must then give identical probabilities, not merely close ones.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from isbetter import correlated_ttest, from_arrays, sign_test, signed_rank_test
from isbetter.ranking.order import group_label, partial_order

DRAWS = 2000  # Dirichlet draws of the sign / signed-rank tests; identical seeds throughout

grid = st.integers(0, 1024).map(lambda k: k / 1024)
ropes = st.integers(0, 64).map(lambda k: k / 1024)
scales = st.integers(1, 80).map(lambda m: m / 8)
shifts = st.integers(-512, 512).map(lambda k: k / 1024)


def _pair(x, y):
    return from_arrays(np.asarray(x), np.asarray(y), runs=1).paired("A", "B")


def _many(n):
    """Scores of two systems, one score per data set, on `n` data sets."""
    return st.tuples(st.lists(grid, min_size=n, max_size=n), st.lists(grid, min_size=n, max_size=n))


def _one_dataset():
    return _many(10).filter(lambda xy: np.std(np.subtract(*xy)) > 0)


DP_TESTS = {"sign": sign_test, "signed_rank": signed_rank_test}


def _dp(kind, x, y, rope):
    scores = from_arrays(np.asarray(x)[:, None], np.asarray(y)[:, None], runs=1)
    return DP_TESTS[kind](scores.paired("A", "B"), rope=rope, draws=DRAWS, rng=3)


# ------------------------------------------------------------------ swapping A and B
@given(_one_dataset(), ropes)
def test_correlated_t_swap_mirrors_probabilities(xy, rope):
    x, y = xy
    res, swapped = (
        correlated_ttest(_pair(x, y), rope=rope),
        correlated_ttest(_pair(y, x), rope=rope),
    )
    np.testing.assert_allclose(
        swapped.probabilities().as_tuple(), res.probabilities().as_tuple()[::-1], atol=1e-12
    )


@pytest.mark.parametrize("kind", sorted(DP_TESTS))
@given(xy=_many(8), rope=ropes)
def test_dirichlet_tests_swap_mirrors_probabilities_exactly(kind, xy, rope):
    x, y = xy
    res, swapped = _dp(kind, x, y, rope), _dp(kind, y, x, rope)
    assert swapped.probabilities().as_tuple() == res.probabilities().as_tuple()[::-1]


# ------------------------------------------------------------------ widening the ROPE
@given(_one_dataset(), ropes, ropes)
def test_correlated_t_p_rope_never_decreases_as_rope_widens(xy, r1, r2):
    res = correlated_ttest(_pair(*xy), rope=0.01)
    lo, hi = sorted((r1, r2))
    assert res.probabilities(rope=lo).p_rope <= res.probabilities(rope=hi).p_rope + 1e-15


@pytest.mark.parametrize("kind", sorted(DP_TESTS))
@given(xy=_many(8), r1=ropes, r2=ropes)
def test_dirichlet_tests_p_rope_never_decreases_for_the_same_draws(kind, xy, r1, r2):
    """Recomputed from the stored Dirichlet weights: the same draws for every ROPE."""
    res = _dp(kind, *xy, 0.01)
    lo, hi = sorted((r1, r2))
    assert res.probabilities(rope=lo).p_rope <= res.probabilities(rope=hi).p_rope
    # the stored draws are those of a fit at that ROPE
    assert res.probabilities(rope=hi).as_tuple() == _dp(kind, *xy, hi).probabilities().as_tuple()


# ------------------------------------------------------------------ a constant added to all scores
@pytest.mark.parametrize("kind", sorted(DP_TESTS))
@given(xy=_many(8), rope=ropes, c=shifts)
def test_dirichlet_tests_ignore_a_constant_added_to_all_scores(kind, xy, rope, c):
    x, y = (np.asarray(v) for v in xy)
    res, shifted = _dp(kind, x, y, rope), _dp(kind, x + c, y + c, rope)
    assert shifted.probabilities().as_tuple() == res.probabilities().as_tuple()


# ------------------------------------------------------------------ scaling scores and ROPE by c
@given(_one_dataset(), ropes, scales)
def test_correlated_t_is_invariant_to_scaling_scores_and_rope(xy, rope, c):
    x, y = (np.asarray(v) for v in xy)
    res = correlated_ttest(_pair(x, y), rope=rope)
    scaled = correlated_ttest(_pair(c * x, c * y), rope=c * rope)
    np.testing.assert_allclose(
        scaled.probabilities().as_tuple(), res.probabilities().as_tuple(), atol=1e-9
    )
    assert scaled.estimate.mean == pytest.approx(c * res.estimate.mean, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("kind", sorted(DP_TESTS))
@given(xy=_many(8), rope=ropes, c=scales)
def test_dirichlet_tests_are_invariant_to_scaling_scores_and_rope(kind, xy, rope, c):
    x, y = (np.asarray(v) for v in xy)
    res, scaled = _dp(kind, x, y, rope), _dp(kind, c * x, c * y, c * rope)
    assert scaled.probabilities().as_tuple() == res.probabilities().as_tuple()


# ------------------------------------------------------------------ ranking: acyclic in and out
@st.composite
def acyclic_decisions(draw):
    """Pairwise decisions of a random partial order: levels, equivalence blocks, gaps.

    Blocks of systems are mutually "equivalent"; between two blocks the relation is
    the one their levels give ("a_better"/"b_better") or "undecided", the same for
    every pair of members. Keys come in either orientation.
    """
    n = draw(st.integers(2, 7))
    names = [f"s{i}" for i in range(n)]
    block = draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n))
    level = draw(st.permutations(range(n)))  # level of each block
    between: dict[tuple[int, int], bool] = {}  # decided or not, per pair of blocks
    rel = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            ba, bb = block[i], block[names.index(b)]
            if ba == bb:
                r = "equivalent"
            else:
                key = (min(ba, bb), max(ba, bb))
                if key not in between:
                    between[key] = draw(st.booleans())
                r = "undecided"
                if between[key]:
                    r = "a_better" if level[ba] > level[bb] else "b_better"
            if draw(st.booleans()):
                rel[(a, b)] = r
            else:
                rel[(b, a)] = {"a_better": "b_better", "b_better": "a_better"}.get(r, r)
    return tuple(names), rel, {s: level[block[i]] for i, s in enumerate(names)}


@given(acyclic_decisions())
def test_ranking_is_acyclic_whenever_the_pairwise_decisions_are(case):
    import networkx as nx

    names, rel, level = case
    order = partial_order(names, rel)
    assert order.inconsistencies == ()
    hasse = nx.DiGraph(order.hasse_edges)
    assert nx.is_directed_acyclic_graph(hasse)
    label = {s: group_label(g) for g in order.groups for s in g}
    strict = set()
    for (a, b), r in rel.items():
        if r in ("a_better", "b_better"):
            worse, better = (b, a) if r == "a_better" else (a, b)
            strict.add((label[worse], label[better]))
            assert level[better] > level[worse]
    # the Hasse diagram implies every strict decision and invents none
    closure = nx.transitive_closure_dag(nx.DiGraph(list(strict)))
    assert set(nx.transitive_closure_dag(hasse).edges()) == set(closure.edges())
    # groups are listed worst layer first: a better group never comes before a worse one
    position = {group_label(g): i for i, g in enumerate(order.groups)}
    assert all(position[w] < position[b] for w, b in strict)
    assert sorted(s for g in order.groups for s in g) == sorted(names)


def test_a_cycle_in_the_decisions_is_reported_as_one():
    """The property above can fail: a cyclic table gives an inconsistency."""
    rel = {("a", "b"): "b_better", ("b", "c"): "b_better", ("c", "a"): "b_better"}
    assert any(x.startswith("cycle:") for x in partial_order(("a", "b", "c"), rel).inconsistencies)


@pytest.mark.parametrize("kind", sorted(DP_TESTS))
def test_identical_systems_at_rope_zero_favour_neither(kind):
    """Every draw ties the two sides (masses 0.5, 0, 0.5): the tie is shared, not given to A."""
    x = np.array([0.8, 0.7, 0.9, 0.6])
    res = _dp(kind, x, x.copy(), 0.0)
    assert res.probabilities().as_tuple() == (0.5, 0.0, 0.5)
