import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from isbetter import ComparisonResult, InputError, Probabilities
from isbetter.inference.decisions import likelihood_decision, mirror, threshold_decision
from isbetter.inference.posterior import DrawsPosterior, StudentTPosterior
from isbetter.results import probabilities_from_masses

finite = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)


def _result(draws, rope=0.01):
    return ComparisonResult.from_posterior(
        DrawsPosterior(np.asarray(draws, dtype=float)),
        system_a="a",
        system_b="b",
        rope=rope,
        method="test",
        settings={"seed": 1},
    )


@given(arrays(float, st.integers(1, 200), elements=finite), st.floats(0, 0.5))
def test_probabilities_sum_to_one_and_swap(draws, rope):
    res = _result(draws, rope)
    mirrored = _result(-draws, rope)
    assert sum(res.probabilities().as_tuple()) == pytest.approx(1.0)
    assert res.p_a_better == pytest.approx(mirrored.p_b_better)
    assert res.p_rope == pytest.approx(mirrored.p_rope)


@given(arrays(float, st.integers(1, 200), elements=finite), st.floats(0, 0.3), st.floats(0, 0.3))
def test_p_rope_never_decreases_as_rope_grows(draws, r1, r2):
    res = _result(draws)
    lo, hi = sorted((r1, r2))
    assert res.probabilities(rope=lo).p_rope <= res.probabilities(rope=hi).p_rope


@given(arrays(float, (50, 3), elements=st.floats(0, 1)))
def test_argmax_counts_are_fractions(masses):
    p = probabilities_from_masses(masses, "argmax").as_tuple()
    assert sum(p) == pytest.approx(1.0)
    # a tie for the largest mass is shared by 2 or 3 regions: multiples of 1 / (6 * 50)
    assert all(v * 300 == pytest.approx(round(v * 300)) for v in p)


def test_rope_boundaries_are_closed():
    res = _result([0.01, -0.01, 0.0100001, -0.0100001], rope=0.01)
    assert res.probabilities().as_tuple() == (0.25, 0.5, 0.25)
    zero = _result([0.0, 0.0, 1.0], rope=0.0)
    assert zero.p_rope == pytest.approx(2 / 3)  # rope = 0 still gives three fields


def test_decision_and_dict():
    res = _result(np.r_[np.full(96, 0.5), np.zeros(4)])
    assert res.decision() == "a_better"
    assert res.decision(threshold=0.99) == "undecided"
    assert _result(np.zeros(10)).decision() == "equivalent"
    d = res.to_dict()
    assert d["p_a_better"] == 0.96 and d["system_a"] == "a" and d["counting"] == "mean"
    with pytest.raises(InputError, match="`threshold` must be a probability in"):
        res.decision(threshold=2)
    assert "P(a better)" in str(res)


def test_probabilities_iv():
    with pytest.raises(InputError, match="Unknown counting 'max'"):
        probabilities_from_masses(np.ones((2, 3)), "max")
    with pytest.raises(InputError, match="`rope` must be a non-negative number"):
        _result([0.1]).probabilities(rope=-0.1)
    assert Probabilities(0.1, 0.2, 0.7).to_dict()["p_b_better"] == 0.7


def test_student_t_posterior_helpers(rng):
    post = StudentTPosterior(df=9.0, loc=0.01, scale=0.02)
    lo, hi = post.interval(0.9)
    assert lo < 0.01 < hi
    draws = post.sample(20_000, rng)
    # mean of 20k t(9) draws: sd = 0.02*sqrt(9/7); 4 standard errors
    assert abs(draws.mean() - 0.01) < 4 * 0.02 * np.sqrt(9 / 7) / np.sqrt(20_000)
    point = StudentTPosterior(df=9.0, loc=0.01, scale=0.0)
    assert point.interval() == (0.01, 0.01)
    assert np.all(point.sample(3, rng) == 0.01)


def test_threshold_rule_shares_ties():
    """Regression (statistical review): the threshold rule broke ties toward A (np.argmax).

    Identical systems at rope 0 give P = (0.5, 0, 0.5): at a threshold of 0.5 both sides
    reach it and neither is preferred. A tie of one side with the ROPE is their union.
    """
    tie = Probabilities(0.5, 0.0, 0.5)
    assert threshold_decision(tie, 0.5) == "undecided"
    assert threshold_decision(Probabilities(0.5, 0.5, 0.0), 0.5) == "a_at_least"
    assert threshold_decision(Probabilities(0.0, 0.5, 0.5), 0.5) == "b_at_least"
    assert threshold_decision(Probabilities(1 / 3, 1 / 3, 1 / 3), 0.3) == "undecided"
    assert threshold_decision(Probabilities(0.4, 0.2, 0.4), 0.3) == "undecided"
    assert threshold_decision(Probabilities(0.45, 0.1, 0.35), 0.3) == "a_better"
    # through ComparisonResult.decision: draws symmetric about 0
    pair = _result([0.3, -0.3], rope=0.0)
    assert pair.decision(threshold=0.5) == "undecided"
    three = _result([0.0, 0.3, -0.3, 0.2, -0.2, 0.0], rope=0.0)
    assert three.probabilities().as_tuple() == (1 / 3, 1 / 3, 1 / 3)
    assert three.decision(threshold=0.3) == "undecided"


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1), st.floats(0, 0.2))
def test_decision_rules_are_antisymmetric(a, r, b, threshold, margin):
    total = a + r + b
    if total == 0:
        return
    p = Probabilities(a / total, r / total, b / total)
    swapped = Probabilities(b / total, r / total, a / total)
    assert threshold_decision(swapped, threshold) == mirror(threshold_decision(p, threshold))
    assert likelihood_decision(swapped, margin) == mirror(likelihood_decision(p, margin))


def test_likelihood_rule_shares_ties():
    """A tie is too close to call at margin 0 as well; three regions within the margin
    decide nothing (the runner-up used to be the first listed of two tied)."""
    assert likelihood_decision(Probabilities(0.5, 0.0, 0.5), 0.0) == "undecided"
    assert likelihood_decision(Probabilities(0.0, 0.5, 0.5), 0.0) == "b_at_least"
    assert likelihood_decision(Probabilities(0.34, 0.33, 0.33), 0.05) == "undecided"
    assert likelihood_decision(Probabilities(0.33, 0.33, 0.34), 0.05) == "undecided"
    assert likelihood_decision(Probabilities(0.6, 0.1, 0.3), 0.0) == "a_better"
