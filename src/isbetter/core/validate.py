"""Small argument checkers shared by every public function.

Each checker returns the normalised value or raises :class:`~isbetter.InputError`
(bad value) / :class:`~isbetter.InputTypeError` (bad type) with a message that
names the argument, what was expected and what was found.
"""

from __future__ import annotations

import functools
import inspect
import numbers
import os
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from isbetter.core.errors import InputError, InputTypeError, RenamedArgumentWarning

__all__ = [
    "check_choice",
    "check_columns",
    "check_finite_array",
    "check_positive_int",
    "check_probability",
    "check_rope",
    "check_nonnegative",
    "check_options",
    "check_path",
    "counted",
    "legacy_keywords",
    "plural",
    "renamed_attribute",
]

F = TypeVar("F", bound=Callable[..., Any])


def plural(n: int, noun: str, many: str | None = None) -> str:
    """Return `noun` in the number `n` asks for: "line" for 1, else "lines" (or `many`).

    Examples
    --------
    >>> plural(1, "line"), plural(2, "line"), plural(0, "data set"), plural(2, "is", "are")
    ('line', 'lines', 'data sets', 'are')
    """
    return noun if n == 1 else many or noun + "s"


def counted(n: int, noun: str, many: str | None = None) -> str:
    """Return `n` with its noun in the right number: "1 score", "2 scores", "0 scores"."""
    return f"{n} {plural(n, noun, many)}"


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


def check_finite_array(values: Any, name: str) -> np.ndarray:
    """Return `values` as a float array after checking it has no NaN or infinity."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputTypeError(
            f"`{name}` must hold numbers, got values that are not: {exc}."
        ) from exc
    bad = ~np.isfinite(arr)
    if bad.any():
        n_nan = int(np.isnan(arr).sum())
        n_inf = int(bad.sum()) - n_nan
        raise InputError(
            f"`{name}` has {n_nan} NaN and {n_inf} infinite values; scores must be finite "
            "(remove or impute them before comparing)."
        )
    return arr


def check_path(value: Any, name: str) -> Any:
    """Return `value` after checking it is None or a path (a str or an ``os.PathLike``)."""
    if value is None or isinstance(value, str | os.PathLike):
        return value
    raise InputTypeError(
        f"`{name}` must be a path (a str or a pathlib.Path), got {type(value).__name__} "
        f"{value!r}; e.g. {name}='isbetter-cache'."
    )


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


def legacy_keywords(
    names: Collection[str], translate: Callable[[dict[str, Any], dict[str, Any]], list[str]]
) -> Callable[[F], F]:
    """Accept a function's old keywords `names` for one release, with a warning.

    They are not parameters of its signature: the wrapper takes them out of the call,
    ``translate(old, arguments)`` writes their meaning into `arguments` (the call's
    current arguments by name) and returns what to write instead, and a
    :class:`~isbetter.RenamedArgumentWarning` says so. Any other unknown keyword is a
    TypeError naming it, as for any function.
    """

    def decorate(func: F) -> F:
        signature = inspect.signature(func)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            old = {k: kwargs.pop(k) for k in list(kwargs) if k in names}
            if not old:
                return func(*args, **kwargs)
            arguments = signature.bind_partial(*args, **kwargs).arguments
            warnings.warn(" ".join(translate(old, arguments)), RenamedArgumentWarning, stacklevel=2)
            return func(**arguments)

        return wrapper  # type: ignore[return-value]

    return decorate


def renamed_attribute(old: str, new: str) -> property:
    """Return a read-only property `old` giving attribute `new`, with a deprecation warning.

    The warning is a :class:`~isbetter.RenamedArgumentWarning` that names the new attribute.
    """

    def get(self: Any) -> Any:
        warnings.warn(
            f"`.{old}` is the old name of `.{new}`; read `.{new}`.",
            RenamedArgumentWarning,
            stacklevel=2,
        )
        return getattr(self, new)

    return property(get, doc=f"The old name of :attr:`{new}` (deprecated).")


def check_options(options: Iterable[str], takes: Sequence[str], method: str) -> None:
    """Raise when an option is not one that `method` takes, naming those it takes."""
    unknown = [name for name in options if name not in takes]
    if unknown:
        raise InputError(
            f"{plural(len(unknown), 'Option')} {', '.join(repr(u) for u in unknown)} "
            f"{plural(len(unknown), 'does', 'do')} not apply to method {method!r}; it takes: "
            f"{', '.join(takes)}."
        )


def check_columns(
    columns: Iterable[str],
    available: Sequence[str],
    what: str = "Column",
    hints: Mapping[str, str] | None = None,
) -> None:
    """Raise if any of `columns` is not in `available`, listing every missing one.

    `hints` maps a column to what to do when it is missing (e.g. how to say there
    is no such column); the hints of the missing columns end the message.
    """
    missing = [c for c in columns if c not in available]
    if missing:
        names = ", ".join(repr(c) for c in missing)
        avail = ", ".join(repr(str(c)) for c in available)
        advice = [hints[c] for c in missing if hints and c in hints]
        raise InputError(
            f"{plural(len(missing), what)} {names} not found. Available columns: {avail}; "
            "name the right ones with the column arguments"
            + "".join(f"; {a}" for a in advice)
            + "."
        )
