"""Performance measures of a 2 x 2 contingency table (tp, fp, fn, tn).

A measure is a function of the four cells of a binary classifier's
contingency table. The cells may be counts or rates (fractions of the test
set): every built-in measure is invariant to the total, so the paired F1 model
can pass its posterior rates ``tp = mu * rho+``, ``fp = (1 - mu) * rho-``,
``fn = mu * (1 - rho+)``, ``tn = (1 - mu) * (1 - rho-)`` directly (Zhang et al.
2016, section 3.1: N cancels).

Every measure declares whether higher is better. Differences are always
oriented so that a positive difference means system A is better: for a
lower-is-better measure such as Keller's detection cost function (DCF) the
difference is ``psi(B) - psi(A)``.

A ratio whose denominator is zero (e.g. precision of a system that predicts no
positive) is 0, as in scikit-learn's default ``zero_division=0``.

References
----------
.. [1] Zhang, Wang, Yilmaz, Wang, Zhou (2016). Bayesian performance comparison
   of text classifiers. SIGIR.
.. [2] Keller, Mariethoz, Bengio (2004). Significance tests for bizarre measures
   in 2-class classification tasks. IDIAP-RR 04-34.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.validate import check_nonnegative, check_probability

__all__ = [
    "MEASURES",
    "DCFCosts",
    "Measure",
    "accuracy",
    "balanced_accuracy",
    "dcf",
    "f1",
    "fbeta",
    "get_measure",
    "measure_scale",
    "precision",
    "recall",
    "specificity",
]

Cells = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _symbolic(x: Any) -> bool:
    """Return True for PyTensor variables (the PyMC path builds measures symbolically)."""
    return hasattr(x, "owner") and hasattr(x, "type")


def _ratio(num: Any, den: Any) -> Any:
    """``num / den`` elementwise, 0 where ``den == 0`` (plain division for PyTensor)."""
    if _symbolic(num) or _symbolic(den):
        return num / den
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    num, den = np.broadcast_arrays(num, den)
    out = np.zeros(num.shape)
    np.divide(num, den, out=out, where=den != 0)
    return out


@dataclass(frozen=True)
class DCFCosts:
    """The parameters of a detection cost function (see :func:`dcf`).

    Attributes
    ----------
    cost_fn, cost_fp : float
        Costs of a false negative and of a false positive.
    p_positive : float
        Prior probability of the positive class.
    """

    cost_fn: float
    cost_fp: float
    p_positive: float


@dataclass(frozen=True)
class Measure:
    """A performance measure of a binary contingency table.

    Attributes
    ----------
    name : str
        Name used in reports, e.g. ``"f1"`` or ``"dcf(1,10,0.01)"``.
    func : callable
        ``func(tp, fp, fn, tn) -> array``, elementwise on arrays of counts or rates.
    higher_is_better : bool
        Direction of the measure; differences are oriented "positive = A better".
    dcf_costs : DCFCosts or None
        Set by :func:`dcf`: the measure is a detection cost function with these
        costs and prior, so tests made for DCF (Keller et al.'s adapted proportion
        test) apply to it. None for every other measure.
    """

    name: str
    func: Cells = field(repr=False, compare=False)
    higher_is_better: bool = True
    dcf_costs: DCFCosts | None = None

    def __call__(self, tp: Any, fp: Any, fn: Any, tn: Any) -> np.ndarray:
        """Evaluate the measure on the cells (numpy arrays or numbers; they broadcast)."""
        cells = [np.asarray(x, dtype=float) for x in (tp, fp, fn, tn)]
        return np.asarray(self.func(*cells), dtype=float)

    def difference(self, psi_a: Any, psi_b: Any) -> Any:
        """Return the difference oriented so that positive means A is better."""
        return psi_a - psi_b if self.higher_is_better else psi_b - psi_a


def _fbeta_func(beta: float) -> Cells:
    b2 = beta * beta

    def func(tp: Any, fp: Any, fn: Any, tn: Any) -> np.ndarray:
        return _ratio((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp)

    return func


def fbeta(beta: float = 1.0) -> Measure:
    """Return the F-beta measure, ``(1 + b^2) tp / ((1 + b^2) tp + b^2 fn + fp)``.

    Examples
    --------
    >>> float(fbeta(1.0)(6, 4, 4, 6))  # F1 of scenario (a), system A, of Zhang et al.
    0.6

    With more false negatives than false positives, F2 (recall weighs more) is lower
    than F1 and F0.5 higher: tp = 6, fp = 2, fn = 4 give 30 / 48, 12 / 18 and 7.5 / 10.5.

    >>> [round(float(fbeta(b)(tp=6, fp=2, fn=4, tn=8)), 4) for b in (2.0, 1.0, 0.5)]
    [0.625, 0.6667, 0.7143]
    """
    beta = check_nonnegative(beta, "beta")
    name = "f1" if beta == 1.0 else f"f{beta:g}"
    return Measure(name, _fbeta_func(beta))


#: F1 = 2 tp / (2 tp + fp + fn)
f1 = fbeta(1.0)
#: precision = tp / (tp + fp)
precision = Measure("precision", lambda tp, fp, fn, tn: _ratio(tp, tp + fp))
#: recall = tp / (tp + fn)
recall = Measure("recall", lambda tp, fp, fn, tn: _ratio(tp, tp + fn))
#: specificity = tn / (tn + fp)
specificity = Measure("specificity", lambda tp, fp, fn, tn: _ratio(tn, tn + fp))
#: accuracy = (tp + tn) / (tp + fp + fn + tn)
accuracy = Measure("accuracy", lambda tp, fp, fn, tn: _ratio(tp + tn, tp + fp + fn + tn))
#: balanced accuracy = (recall + specificity) / 2
balanced_accuracy = Measure(
    "balanced_accuracy",
    lambda tp, fp, fn, tn: 0.5 * (_ratio(tp, tp + fn) + _ratio(tn, tn + fp)),
)


def dcf(cost_fn: float = 1.0, cost_fp: float = 1.0, p_positive: float = 0.5) -> Measure:
    """Return Keller et al.'s detection cost function (lower is better).

    ``DCF = cost_fn * P(p) * fn / (fn + tp) + cost_fp * P(n) * fp / (fp + tn)``,
    with ``P(p) = p_positive`` the prior probability of a positive (client)
    access and ``P(n) = 1 - P(p)`` [2]_. Being a cost, differences of DCF are
    taken as ``DCF(B) - DCF(A)``, so a positive difference still means A is better.

    Parameters
    ----------
    cost_fn, cost_fp : float, default: 1.0
        Costs of a false negative (rejecting a client) and a false positive
        (accepting an impostor).
    p_positive : float, default: 0.5
        Prior probability of the positive class.

    References
    ----------
    .. [2] Keller, Mariethoz, Bengio (2004), eq. (7).

    Examples
    --------
    >>> m = dcf(cost_fn=1.0, cost_fp=10.0, p_positive=0.01)
    >>> m.higher_is_better, m.dcf_costs
    (False, DCFCosts(cost_fn=1.0, cost_fp=10.0, p_positive=0.01))
    >>> round(float(m(tp=90, fp=5, fn=10, tn=895)), 5)  # 0.01 * 0.1 + 9.9 * 5 / 900
    0.056
    """
    cost_fn = check_nonnegative(cost_fn, "cost_fn")
    cost_fp = check_nonnegative(cost_fp, "cost_fp")
    p_pos = check_probability(p_positive, "p_positive")

    def func(tp: Any, fp: Any, fn: Any, tn: Any) -> np.ndarray:
        miss = _ratio(fn, fn + tp)
        false_alarm = _ratio(fp, fp + tn)
        return cost_fn * p_pos * miss + cost_fp * (1.0 - p_pos) * false_alarm

    return Measure(
        f"dcf({cost_fn:g},{cost_fp:g},{p_pos:g})",
        func,
        higher_is_better=False,
        dcf_costs=DCFCosts(cost_fn, cost_fp, p_pos),
    )


#: the built-in measures by name (F-beta and DCF take parameters: see :func:`get_measure`)
MEASURES: dict[str, Measure] = {
    m.name: m for m in (f1, precision, recall, accuracy, specificity, balanced_accuracy)
}

#: every measure name :func:`get_measure` takes
MEASURE_NAMES: tuple[str, ...] = (*MEASURES, "fbeta", "dcf")


def measure_scale(measure: Measure | str) -> np.ndarray | None:
    """Return the range a ROPE on `measure` (or its name) is judged against: ``[0, 1]``, or None.

    A ratio of the contingency table (F1, precision, accuracy ...) lies in [0, 1],
    so a ROPE is in those units (:func:`isbetter.core.rope.rope_misfit`); a DCF (its
    scale set by the costs) and a measure found outside [0, 1] on the extreme tables
    are not judged (None).

    Examples
    --------
    >>> measure_scale("f1"), measure_scale(dcf(cost_fp=10.0)) is None
    (array([0., 1.]), True)
    """
    measure = get_measure(measure)
    if measure.dcf_costs is not None:
        return None
    corners = np.eye(4).tolist() + [[0, 1, 1, 0], [1, 0, 0, 1]]  # tp, fp, fn, tn
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.array([float(measure(*cells)) for cells in corners])
    values = values[np.isfinite(values)]
    if values.size == 0 or values.min() < 0 or values.max() > 1:
        return None
    return np.array([0.0, 1.0])


def get_measure(
    measure: str | Measure | Cells = "f1",
    *,
    beta: float = 1.0,
    cost_fn: float = 1.0,
    cost_fp: float = 1.0,
    p_positive: float = 0.5,
    higher_is_better: bool = True,
) -> Measure:
    """Resolve a measure given by name, as a :class:`Measure` or as a function.

    Parameters
    ----------
    measure : str, Measure or callable, default: "f1"
        A name (``"f1"``, ``"fbeta"``, ``"precision"``, ``"recall"``, ``"accuracy"``,
        ``"specificity"``, ``"balanced_accuracy"``, ``"dcf"``), a :class:`Measure`,
        or a function ``f(tp, fp, fn, tn)`` of the cells (counts or rates; it must
        work elementwise on numpy arrays).
    beta : float, default: 1.0
        The beta of ``"fbeta"``.
    cost_fn, cost_fp, p_positive : float
        Parameters of ``"dcf"`` (see :func:`dcf`).
    higher_is_better : bool, default: True
        Direction of a user function (ignored for names and Measure objects).

    Returns
    -------
    Measure

    Raises
    ------
    InputError
        Unknown measure name.
    InputTypeError
        `measure` is neither a string, a Measure nor callable.

    Examples
    --------
    >>> get_measure("fbeta", beta=0.5).name
    'f0.5'
    >>> get_measure(lambda tp, fp, fn, tn: tp / (tp + fp + fn)).name
    'custom'
    """
    if isinstance(measure, Measure):
        return measure
    if isinstance(measure, str):
        key = measure.lower().replace("-", "_")
        if key == "fbeta":
            return fbeta(beta)
        if key == "dcf":
            return dcf(cost_fn, cost_fp, p_positive)
        if key in MEASURES:
            return MEASURES[key]
        names = ", ".join(repr(n) for n in MEASURE_NAMES)
        raise InputError(
            f"Unknown measure {measure!r}. Available measures: {names}; or pass a function "
            "f(tp, fp, fn, tn)."
        )
    if callable(measure):
        name = getattr(measure, "__name__", "custom")
        return Measure("custom" if name == "<lambda>" else name, measure, bool(higher_is_better))
    raise InputTypeError(
        f"`measure` must be a measure name, a Measure or a function f(tp, fp, fn, tn), got "
        f"{type(measure).__name__}."
    )
