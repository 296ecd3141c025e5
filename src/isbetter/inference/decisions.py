r"""One decision vocabulary, the rules that produce it, and masses -> probabilities.

Every decision isbetter reports is one of eight relations of A to B, each with a
key (used in JSON, CSV and the API), a symbol (text, Markdown, HTML) and a
LaTeX form:

==============  ======  ==============  =================================================
key             symbol  LaTeX           meaning
==============  ======  ==============  =================================================
a_better        ≫       ``\gg``        A better by more than the ROPE
a_at_least      ≳       ``\gtrsim``    A better or equivalent (ranking, likelihood rule)
a_leaning       >       ``>``           leaning to A, not decided
equivalent      ≈       ``\approx``    practically equivalent (inside the ROPE)
b_leaning       <       ``<``           leaning to B, not decided
b_at_least      ≲       ``\lesssim``   B better or equivalent (ranking, likelihood rule)
b_better        ≪       ``\ll``        B better by more than the ROPE
undecided       ?       ``?``           no region decided, no side favoured
==============  ======  ==============  =================================================

Three documented rules produce them:

* :func:`hdi_rope_decision` — the HDI + ROPE rule of Kruschke (2013) as used by
  Zhang et al. (2016, section 3.2) for the F1 tables and the power analysis;
* :func:`threshold_decision` — the region whose probability reaches a threshold
  (default 0.95), otherwise ``undecided`` (Benavoli et al. 2017; the
  ``decision()`` of every comparison result);
* :func:`likelihood_decision` — the most probable region, as Szymański & Gorman
  (2020) read their Table 2, with ``a_at_least`` / ``b_at_least`` when the
  runner-up is the ROPE and within a margin of the winner (rankings);
  :func:`no_rope_decision` reads a model without a ROPE (Plackett–Luce) with the
  threshold for "≫" and the leaning relations below it.

:func:`probabilities_from_masses` is the only code that turns per-draw region
masses into the probabilities reported to the user. Two ways of reading them
off exist in the literature and are kept apart by name: ``"argmax"`` (fraction
of draws in which each region holds the largest mass: Corani et al. 2017;
Benavoli et al. 2017; Szymański & Gorman 2020; baycomp) and ``"mean"`` (the
average mass: the posterior predictive probability of the region).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from isbetter.core.validate import check_choice, check_probability, check_rope
from isbetter.inference.records import Probabilities

__all__ = [
    "HDI_ROPE_RULE",
    "RELATIONS",
    "Counting",
    "Relation",
    "argmax_shares",
    "hdi_rope_decision",
    "latex_symbol",
    "likelihood_decision",
    "mirror",
    "no_rope_decision",
    "probabilities_from_masses",
    "relation_key",
    "symbol",
    "threshold_decision",
]

Relation = Literal[
    "a_better",
    "a_at_least",
    "a_leaning",
    "equivalent",
    "b_leaning",
    "b_at_least",
    "b_better",
    "undecided",
]
Counting = Literal["argmax", "mean"]

#: key -> (symbol, LaTeX, meaning)
RELATIONS: dict[str, tuple[str, str, str]] = {
    "a_better": ("≫", r"$\gg$", "A better by more than the ROPE"),
    "a_at_least": ("≳", r"$\gtrsim$", "A better or practically equivalent: too close to call"),
    "a_leaning": (">", "$>$", "leaning to A: no region decided, the evidence favours A"),
    "equivalent": ("≈", r"$\approx$", "practically equivalent: inside the ROPE"),
    "b_leaning": ("<", "$<$", "leaning to B: no region decided, the evidence favours B"),
    "b_at_least": ("≲", r"$\lesssim$", "B better or practically equivalent: too close to call"),
    "b_better": ("≪", r"$\ll$", "B better by more than the ROPE"),
    "undecided": ("?", "?", "undecided: no region decided, no side favoured"),
}
#: the relations the HDI + ROPE rule gives, and where the HDI lies for each
#: (:func:`hdi_rope_decision`)
HDI_ROPE_RULE: dict[str, str] = {
    "a_better": "HDI above the ROPE",
    "a_leaning": "HDI across the upper ROPE bound only",
    "equivalent": "HDI inside the ROPE",
    "b_leaning": "HDI across the lower ROPE bound only",
    "b_better": "HDI below the ROPE",
    "undecided": "HDI across both ROPE bounds",
}
_BY_SYMBOL = {sym: key for key, (sym, _, _) in RELATIONS.items()}
_ASCII = {">>": "a_better", "~": "equivalent", "<<": "b_better"}
#: the three regions, in the order of :class:`~isbetter.inference.records.Probabilities`
_REGIONS: tuple[Relation, Relation, Relation] = ("a_better", "equivalent", "b_better")
#: two regions too close to call apart: their union, where it is a relation
_TIES: dict[frozenset[Relation], Relation] = {
    frozenset({"a_better", "equivalent"}): "a_at_least",
    frozenset({"b_better", "equivalent"}): "b_at_least",
}


def symbol(key: str) -> str:
    """Return the display symbol of a relation key, e.g. ``"≫"`` for ``"a_better"``."""
    return RELATIONS[key][0]


def latex_symbol(key: str) -> str:
    r"""Return the LaTeX form of a relation key, e.g. ``$\gg$`` for ``a_better``."""
    return RELATIONS[key][1]


def mirror(key: str) -> str:
    """Return the relation of B to A given the key of A's relation to B.

    Examples
    --------
    >>> mirror("a_better"), mirror("b_leaning"), mirror("equivalent")
    ('b_better', 'a_leaning', 'equivalent')
    """
    side, _, rest = key.partition("_")
    return {"a": "b_", "b": "a_"}[side] + rest if side in ("a", "b") and rest else key


def relation_key(value: str, name: str = "goal") -> str:
    """Return the key of a relation given as key, symbol or ASCII (``>>``, ``~``, ``<<``).

    Examples
    --------
    >>> relation_key("≫"), relation_key("~"), relation_key("b_better")
    ('a_better', 'equivalent', 'b_better')
    """
    if value in RELATIONS:
        return value
    if value in _BY_SYMBOL:
        return _BY_SYMBOL[value]
    if value in _ASCII:
        return _ASCII[value]
    return check_choice(value, name, [*RELATIONS, *_BY_SYMBOL, *_ASCII])


def hdi_rope_decision(low: float, high: float, rope: float) -> Relation:
    """Return the HDI + ROPE rule of Zhang et al. (2016, section 3.2), after Kruschke (2013).

    With the HDI ``[low, high]`` and the ROPE ``[-rope, rope]`` (see
    :data:`HDI_ROPE_RULE`):

    * ``equivalent``: the HDI lies inside the ROPE;
    * ``a_better`` / ``b_better``: it lies entirely above ``rope`` / below ``-rope``;
    * ``a_leaning`` / ``b_leaning``: it reaches past the upper / lower bound only (it
      lies mainly, not fully, on that side of the ROPE: Zhang et al.'s "slightly
      better / worse, more data needed");
    * ``undecided``: it reaches past both bounds. Kruschke's rule decides nothing there
      and no side is favoured, whatever the sign of the posterior mean.

    The rule is antisymmetric: mirroring the HDI (``-high, -low``) mirrors the relation.

    Examples
    --------
    >>> hdi_rope_decision(0.06, 0.2, 0.05), hdi_rope_decision(-0.03, 0.04, 0.05)
    ('a_better', 'equivalent')
    >>> hdi_rope_decision(-0.1, 0.02, 0.05), hdi_rope_decision(-0.1, 0.12, 0.05)
    ('b_leaning', 'undecided')
    """
    rope = check_rope(rope)
    if low >= -rope and high <= rope:
        # a zero-width ROPE holds no equivalence: an HDI of exactly [0, 0] (identical
        # systems) favours neither side
        return "equivalent" if rope > 0 else "undecided"
    if low > rope:
        return "a_better"
    if high < -rope:
        return "b_better"
    if low >= -rope:  # low inside the ROPE, high above it
        return "a_leaning"
    if high <= rope:  # high inside the ROPE, low below it
        return "b_leaning"
    return "undecided"


def _region_of(close: set[Relation]) -> Relation:
    """Return the relation of regions too close to call apart (all sharing the top place).

    One region: itself; "A better" and "ROPE": ``a_at_least`` (their union holds A ≳ B);
    likewise ``b_at_least``; "A better" and "B better", or all three: ``undecided``.
    Which region was listed first never matters, so the rules stay antisymmetric.
    """
    if len(close) == 1:
        return next(iter(close))
    return _TIES.get(frozenset(close), "undecided")


def threshold_decision(probabilities: Probabilities, threshold: float = 0.95) -> Relation:
    """Return the region whose probability reaches `threshold`, else ``undecided``.

    A tie for the largest probability is shared, as :func:`probabilities_from_masses`
    shares a tied draw, never given to the region listed first. Tied regions at or
    above `threshold` (possible only for a threshold of 0.5 or less) give
    ``a_at_least`` for "A better" and "ROPE" (their union reaches the threshold:
    A ≳ B), ``b_at_least`` likewise, and ``undecided`` for "A better" and "B better"
    (or all three).

    Examples
    --------
    >>> threshold_decision(Probabilities(0.97, 0.03, 0.0))
    'a_better'
    >>> threshold_decision(Probabilities(0.6, 0.3, 0.1))
    'undecided'
    >>> threshold_decision(Probabilities(0.5, 0.0, 0.5), 0.5)
    'undecided'
    """
    threshold = check_probability(threshold, "threshold")
    probs = dict(zip(_REGIONS, probabilities.as_tuple(), strict=True))
    best = max(probs.values())
    if best < threshold:
        return "undecided"
    return _region_of({name for name, p in probs.items() if p == best})


def likelihood_decision(probabilities: Probabilities, margin: float = 0.05) -> Relation:
    """Return the most probable region, or ``a_at_least`` / ``b_at_least`` when too close.

    The winner is the region with the largest probability (Szymański & Gorman 2020
    read their orders off their Table 2 this way). The regions within `margin` of it
    (and any tied with it, also at ``margin=0``) are too close to call apart: "A
    better" and "ROPE" give ``a_at_least`` (A ≳ B), likewise ``b_at_least``; "A
    better" and "B better", or all three, give ``undecided``.

    Examples
    --------
    >>> likelihood_decision(Probabilities(0.168, 0.003, 0.829))
    'b_better'
    >>> likelihood_decision(Probabilities(0.18, 0.441, 0.379))  # Collins vs Stanford
    'equivalent'
    >>> likelihood_decision(Probabilities(0.18, 0.421, 0.399))
    'b_at_least'
    """
    margin = check_probability(margin, "margin")
    probs = dict(zip(_REGIONS, probabilities.as_tuple(), strict=True))
    best = max(probs.values())
    return _region_of({name for name, p in probs.items() if p == best or best - p < margin})


def no_rope_decision(
    probabilities: Probabilities, rule: str, threshold: float, margin: float
) -> Relation:
    """Return the relation of a pair from a model without a ROPE: ``(P(A above), 0, P(B above))``.

    Plackett–Luce's pairs: with no ROPE the likelihood rule's most probable region
    would call every pair for one side however close, so the strict relation needs
    the threshold, as under the threshold rule and on the other routes' reading of a
    decided relation.

    ``a_better`` / ``b_better`` (≫, ≪) where a side's probability reaches
    `threshold`, whatever the rule; below it, under the likelihood rule, the side
    the pair leans to (``a_leaning`` / ``b_leaning``: >, <), or ``undecided`` when
    the two are within `margin`; under the threshold rule ``undecided``.

    Examples
    --------
    >>> no_rope_decision(Probabilities(0.76, 0.0, 0.24), "likelihood", 0.95, 0.05)
    'a_leaning'
    >>> no_rope_decision(Probabilities(0.97, 0.0, 0.03), "likelihood", 0.95, 0.05)
    'a_better'
    >>> no_rope_decision(Probabilities(0.52, 0.0, 0.48), "likelihood", 0.95, 0.05)
    'undecided'
    >>> no_rope_decision(Probabilities(0.76, 0.0, 0.24), "threshold", 0.95, 0.05)
    'undecided'
    """
    decided = threshold_decision(probabilities, threshold)
    if decided != "undecided" or rule != "likelihood":
        return decided
    a, b = probabilities.p_a_better, probabilities.p_b_better
    if abs(a - b) < margin or a == b:
        return "undecided"
    return "a_leaning" if a > b else "b_leaning"


def argmax_shares(masses: np.ndarray) -> np.ndarray:
    """Return each draw's share of each region in argmax counting, the shape of `masses`.

    1 for the region with the largest mass along the last axis; a draw whose largest
    mass is shared (e.g. identical systems at rope = 0: masses (0.5, 0, 0.5)) counts
    equally for every tied region (np.argmax alone would give it to the first, "A
    better", and break the A/B symmetry). Their mean over the draws is
    :func:`probabilities_from_masses`' ``"argmax"`` probabilities.

    Examples
    --------
    >>> import numpy as np
    >>> argmax_shares(np.array([[0.6, 0.3, 0.1], [0.5, 0.0, 0.5]])).tolist()
    [[1.0, 0.0, 0.0], [0.5, 0.0, 0.5]]
    """
    masses = np.asarray(masses, dtype=float)
    tied = masses == masses.max(axis=-1, keepdims=True)
    return tied / tied.sum(axis=-1, keepdims=True)


def probabilities_from_masses(masses: np.ndarray, counting: Counting) -> Probabilities:
    """Read the three probabilities off per-draw region masses.

    Parameters
    ----------
    masses : numpy.ndarray
        Shape ``(n_draws, 3)``: masses of (A better, ROPE, B better) per draw.
    counting : {"argmax", "mean"}
        ``"argmax"``: fraction of draws in which each region is the largest (a
        draw with a tie for the largest counts equally for each tied region);
        ``"mean"``: mean mass of each region.

    Returns
    -------
    Probabilities

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]])
    >>> probabilities_from_masses(m, "argmax").as_tuple()
    (0.5, 0.5, 0.0)
    >>> probabilities_from_masses(m, "mean").as_tuple()
    (0.4, 0.4, 0.2)
    >>> probabilities_from_masses(np.array([[0.5, 0.0, 0.5]]), "argmax").as_tuple()
    (0.5, 0.0, 0.5)
    """
    counting = check_choice(counting, "counting", ("argmax", "mean"))  # type: ignore[assignment]
    masses = np.asarray(masses, dtype=float)
    if counting == "argmax":
        p = argmax_shares(masses).mean(axis=0)
    else:
        p = np.clip(masses.mean(axis=0), 0.0, 1.0)
    return Probabilities(float(p[0]), float(p[1]), float(p[2]))
