"""Small argument checkers shared by every public function.

Each checker returns the normalised value or raises :class:`~isbetter.InputError`
(bad value) / :class:`~isbetter.InputTypeError` (bad type) with a message that
names the argument, what was expected and what was found.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from isbetter.core.errors import InputError, InputTypeError

__all__ = [
    "check_choice",
    "check_columns",
    "check_positive_int",
    "check_probability",
    "check_rope",
    "check_nonnegative",
]


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_rope(rope: Any, name: str = "rope") -> float:
    """Return `rope` as a float after checking it is a finite, non-negative number."""
    if not _is_real(rope):
        raise InputTypeError(
            f"`{name}` must be a non-negative number in score units, got {type(rope).__name__} "
            f"{rope!r}."
        )
    value = float(rope)
    if not np.isfinite(value) or value < 0:
        raise InputError(
            f"`{name}` must be a non-negative number in score units, got {rope!r}; "
            f"pass e.g. {name}=0.01 (a 1-point ROPE on a 0-1 scale) or {name}=0."
        )
    return value + 0.0  # -0.0 becomes 0.0: a zero ROPE is never printed as "-0"


def check_nonnegative(value: Any, name: str) -> float:
    """Return `value` as a float after checking it is finite and >= 0."""
    if not _is_real(value):
        raise InputTypeError(
            f"`{name}` must be a non-negative number, got {type(value).__name__} {value!r}."
        )
    out = float(value)
    if not np.isfinite(out) or out < 0:
        raise InputError(f"`{name}` must be a finite non-negative number, got {value!r}.")
    return out


def check_probability(value: Any, name: str, *, open_interval: bool = False) -> float:
    """Return `value` as a float after checking it lies in [0, 1] (or (0, 1))."""
    if not _is_real(value):
        raise InputTypeError(
            f"`{name}` must be a probability (a number in [0, 1]), got "
            f"{type(value).__name__} {value!r}."
        )
    out = float(value)
    if open_interval:
        if not 0 < out < 1:
            raise InputError(
                f"`{name}` must be a probability strictly between 0 and 1, got {value!r}."
            )
    elif not 0 <= out <= 1:
        raise InputError(f"`{name}` must be a probability in [0, 1], got {value!r}.")
    return out


def check_positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    """Return `value` as an int after checking it is an integer >= `minimum`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputTypeError(
            f"`{name}` must be an integer >= {minimum}, got {type(value).__name__} {value!r}."
        )
    if value < minimum:
        raise InputError(f"`{name}` must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """Return `value` after checking it is one of `choices`."""
    if value not in choices:
        available = ", ".join(repr(c) for c in choices)
        raise InputError(f"Unknown {name} {value!r}. Available: {available}.")
    return str(value)


def check_columns(columns: Iterable[str], available: Sequence[str], what: str = "Column") -> None:
    """Raise if any of `columns` is not in `available`, listing every missing one."""
    missing = [c for c in columns if c not in available]
    if missing:
        names = ", ".join(repr(c) for c in missing)
        avail = ", ".join(repr(str(c)) for c in available)
        plural = "s" if len(missing) > 1 else ""
        raise InputError(
            f"{what}{plural} {names} not found. Available columns: {avail}; "
            "name the right ones with the column arguments."
        )
