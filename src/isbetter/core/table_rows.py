"""Rows of a long score table: keep the systems asked for, and say which rows were dropped."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.validate import counted

__all__ = ["describe_dropped", "keep_systems"]


def keep_systems(df: pd.DataFrame, systems: Sequence[str] | None) -> pd.DataFrame:
    """Return the rows of `df` (a ``system`` column of str) whose system is in `systems`.

    A system left out can then neither block nor change the comparison of the others
    (its missing folds are not checked, nor dropped from every system).
    """
    if systems is None:
        return df
    if isinstance(systems, str) or not isinstance(systems, Sequence):
        raise InputTypeError(
            f"`systems` must be a list of system names, got {type(systems).__name__}."
        )
    names = [str(s) for s in systems]
    available = sorted(df["system"].unique())
    for name in names:
        if name not in available:
            raise InputError(
                f"`systems`: unknown system {name!r}. Available systems: "
                + ", ".join(repr(s) for s in available)
                + "."
            )
    twice = [s for i, s in enumerate(names) if s in names[:i]]
    if twice:
        raise InputError(f"`systems` names {twice[0]!r} twice; name each system once.")
    return df[df["system"].isin(names)]


def describe_dropped(dropped: pd.DataFrame, limit: int = 4) -> str:
    """Say which rows `drop_incomplete` removed, by reason, naming the first few keys.

    Empty when nothing was dropped; e.g. ``1 row, key not present for every
    system (1): system 'a', data set 'd0', run 1, fold 5``. Only the key columns
    `dropped` has are named (a table without runs has no run to name).
    """
    if dropped is None or len(dropped) == 0:
        return ""
    named = [(c, w) for c, w in _KEYS if c in dropped.columns]
    parts = []
    for reason, rows in dropped.groupby("reason", sort=False):
        keys = [
            ", ".join(
                f"{word} {value!r}" if isinstance(value, str) else f"{word} {value}"
                for (_, word), value in zip(named, row, strict=True)
            )
            for row in rows[[c for c, _ in named]].head(limit).itertuples(index=False)
        ]
        more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
        parts.append(f"{reason} ({len(rows)}): {'; '.join(keys)}{more}")
    return f"{counted(len(dropped), 'row')}, " + "; ".join(parts)


#: key columns of a score table and the words that name them
_KEYS = (("system", "system"), ("dataset", "data set"), ("run", "run"), ("fold", "fold"))
