"""Prior settings as frozen dataclasses: the checks every model's settings share.

The hierarchical model of per-fold scores
(:class:`~isbetter.cv.hierarchical.priors.HierarchicalPriors`), the joint model
(:class:`~isbetter.cv.joint.spec.JointPriors`) and the items' hierarchical model
(:class:`~isbetter.items.hierarchical.priors.ItemsHierarchicalPriors`) state their priors'
bounds and scales as fields of a frozen dataclass derived from :class:`PositivePriors`.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any, ClassVar

from isbetter.core.errors import InputError, InputTypeError

__all__ = ["PositivePriors"]


class PositivePriors:
    """Checks of a frozen dataclass of prior settings (its fields are the priors' bounds).

    Every field must be a positive finite number, ``alpha_lower < alpha_upper`` and
    ``beta_lower < beta_upper`` (the hyper-priors of nu); the fields named in
    ``_CHOICES`` are choices among words, which the subclass checks.
    """

    _CHOICES: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        problems = []
        for name, value in asdict(self).items():  # type: ignore[call-overload]
            if name in self._CHOICES:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputTypeError(
                    f"`{type(self).__name__}.{name}` must be a number, got "
                    f"{type(value).__name__} {value!r}."
                )
            if not math.isfinite(value) or value <= 0:
                problems.append(f"{name}={value!r} (must be finite and > 0)")
            object.__setattr__(self, name, float(value))
        for low, high in (("alpha_lower", "alpha_upper"), ("beta_lower", "beta_upper")):
            if getattr(self, low) >= getattr(self, high):
                problems.append(f"{low}={getattr(self, low)!r} >= {high}={getattr(self, high)!r}")
        if problems:
            raise InputError(
                f"Bad `{type(self).__name__}`: "
                + "; ".join(problems)
                + ". Bounds must be positive, and each lower bound below its upper bound."
            )

    def to_dict(self) -> dict[str, Any]:
        """Return the settings as a JSON-safe dictionary."""
        return asdict(self)  # type: ignore[call-overload]
