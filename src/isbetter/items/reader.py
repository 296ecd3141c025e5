"""Read item-level evaluation results from whatever form they come in: :func:`read`.

One entry point dispatches on what each path is:

* a folder → lm-evaluation-harness ``--log_samples`` output (:mod:`.lm_eval`), or,
  when it holds none, the Inspect logs in it (Inspect's ``logs/``);
* an ``.eval`` file, or a ``.json`` file that is an Inspect log → Inspect (:mod:`.inspect_logs`);
* any other ``.csv`` / ``.tsv`` / ``.jsonl`` / ``.json`` / ``.parquet`` file, or a
  pandas DataFrame → a plain table, long (a row per task, item, system, run) when it
  has the columns named by `system` and `score`, else wide (a row per item, a column
  per system).

Several paths are read each by its reader and joined into one table.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.tables import read_table
from isbetter.items.inspect_logs import is_inspect_json, read_inspect
from isbetter.items.lm_eval import read_lm_eval
from isbetter.items.table import ItemTable

__all__ = ["read"]

_TABLES = (".csv", ".tsv", ".txt", ".jsonl", ".ndjson", ".json", ".parquet", ".pq")


def is_table(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is read as an item table (not an lm-eval folder or an Inspect log)."""
    path = Path(path)
    return path.is_file() and _kind(path) == "table"


def _kind(path: Path) -> str:
    if path.is_dir():
        return "lm_eval"
    if not path.is_file():
        raise InputError(f"no such file or folder: {str(path)!r}")
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes[-1:] == [".eval"]:
        return "inspect"
    if suffixes[-1:] == [".json"] and is_inspect_json(path):
        return "inspect"
    if any(s in _TABLES for s in suffixes[-2:]):
        return "table"
    raise InputError(
        f"{str(path)!r}: not an lm-evaluation-harness folder, an Inspect log (.eval, .json) "
        "or a table (.csv, .tsv, .jsonl, .json, .parquet)"
    )


def _read_flat(source: Any, *, name: str, **options: Any) -> ItemTable:
    """Read a table; its errors name it."""
    try:
        return _read_table(source, name=name, **options)
    except InputError as exc:
        message = str(exc)
        raise InputError(message if name in message else f"{name}: {message}") from exc


def _read_table(
    source: Any,
    *,
    name: str,
    item: str | None,
    system: str,
    score: str,
    task: str | None,
    run: str | None,
    cluster: str | None,
    systems: Sequence[str] | None,
    run_suffix: bool,
    metric: str | None,
) -> ItemTable:
    df = read_table(source, argument="paths", text=[item] if item else [])
    if system in df.columns and score in df.columns:
        if systems is not None or run_suffix:
            raise InputError(
                f"{name} is a long table (columns {system!r} and {score!r}): `systems` and "
                "`run_suffix` are for wide tables (a column per system)"
            )
        return ItemTable.from_frame(
            df,
            task=task or ("task" if "task" in df.columns else None),
            item=item or "item",
            system=system,
            run=run or ("run" if "run" in df.columns else None),
            score=score,
            cluster=cluster,
            metric=metric,
            source=f"{name} (long table)",
        )
    if (system in df.columns) != (score in df.columns):  # a long table missing a column
        has, lacks = (system, score) if system in df.columns else (score, system)
        raise InputError(
            f"{name} has a column {has!r} but none {lacks!r}: a long table needs both (one "
            f"row per item and system; its columns: {', '.join(map(repr, df.columns))}); a "
            f"wide table has a column per system and neither"
        )
    if run is not None:
        raise InputError(
            f"`run`: {name} is a wide table (no columns {system!r} and {score!r}): its runs "
            "are rows '<item>.<k>' (`run_suffix`), or make it long"
        )
    return _wide(
        source,
        df,
        name=name,
        item=item,
        task=task,
        systems=systems,
        cluster=cluster,
        run_suffix=run_suffix,
        metric=metric,
    )


def _wide(
    source: Any,
    df: pd.DataFrame,
    *,
    name: str,
    item: str | None,
    run_suffix: bool,
    metric: str | None,
    **options: Any,
) -> ItemTable:
    """Read a wide table: its items in `item` (else ``item``, else the first column)."""
    notes = []
    if item is None:
        item = "item" if "item" in df.columns else str(df.columns[0])
        if item != "item":
            notes.append(f"{name}: the first column {item!r} taken as the items")
        if not isinstance(source, pd.DataFrame):  # its ids as written: 1.10 is not 1.1
            df = read_table(source, argument="paths", text=[item])
    ids = df[item].astype(str)
    if not run_suffix and ids.str.fullmatch(r"\d+\.\d+").any() and ids.str.fullmatch(r"\d+").any():
        notes.append(
            f"{name}: items such as {ids[ids.str.contains('.', regex=False)].iloc[0]!r} read "
            "as items of their own; if they are runs of an item (1, 1.1, 1.2 = item 1, "
            "runs 0-2), pass `run_suffix=True`"
        )
    return ItemTable.from_wide(
        df,
        item=item,
        run_suffix=run_suffix,
        metric=metric or "score",
        source=f"{name} (wide table: items x systems)",
        notes=notes,
        **options,
    )


def _join(tables: Sequence[ItemTable]) -> ItemTable:
    if len(tables) == 1:
        return tables[0]
    data = pd.concat([t.data for t in tables], ignore_index=True)
    keys = data.duplicated(["task", "item", "system", "run"])
    if keys.any():
        row = data.loc[keys.idxmax()]
        holders = [
            t.source
            for t in tables
            if ((t.data["task"] == row["task"]) & (t.data["system"] == row["system"])).any()
        ]
        raise InputError(
            f"task {row['task']!r} by {row['system']!r} is in more than one of the inputs "
            f"({' | '.join(holders)}): read one of them"
        )
    groups: dict[str, tuple[str, ...]] = {}
    for t in tables:
        for g, ts in t.groups.items():
            groups[g] = tuple(sorted(set(groups.get(g, ())) | set(ts)))
    return ItemTable(
        data,
        metric=", ".join(dict.fromkeys(m for t in tables for m in t.metric.split(", "))),
        source=" + ".join(t.source for t in tables),
        notes=tuple(n for t in tables for n in t.notes),
        groups=groups,
    )


def read(
    paths: str | os.PathLike[str] | pd.DataFrame | Sequence[str | os.PathLike[str] | pd.DataFrame],
    *,
    metric: str | None = None,
    filter: str | None = None,  # noqa: A002 - lm-evaluation-harness's word
    runs: str = "latest",
    cluster: str | None = None,
    subtask: str | None = None,
    scorer: str | None = None,
    names: Mapping[str, str] | None = None,
    item: str | None = None,
    system: str = "system",
    score: str = "score",
    task: str | None = None,
    run: str | None = None,
    systems: Sequence[str] | None = None,
    run_suffix: bool = False,
) -> ItemTable:
    """Read per-item evaluation results into one :class:`ItemTable`.

    Parameters
    ----------
    paths : path, DataFrame, or a sequence of them
        lm-evaluation-harness output folders (one per model, or a folder holding
        them), Inspect logs (``.eval``, ``.json``, or a folder of them), tables (``.csv``, ``.tsv``,
        ``.jsonl``, ``.json``, ``.parquet`` — Parquet needs pyarrow) or DataFrames.
    metric : str, optional
        lm-evaluation-harness: the per-item metric (default: the only one, else
        ``acc``). Tables: the name given to the scores (default the score column's).
    filter : str, optional
        lm-evaluation-harness: the answer filter (default: the only one, else ``none``).
    runs : {"latest", "all"}
        Several runs of one task by one model (samples files, Inspect logs): the
        latest (default; the others are noted) or all, as runs 0, 1, ….
    cluster : str, optional
        The items' clusters: a field of lm-evaluation-harness's ``doc``, a key of an
        Inspect sample's ``metadata``, or a column of a table.
    subtask : str, optional
        lm-evaluation-harness: a field of the ``doc`` splitting each task into subtasks.
    scorer : str, optional
        Inspect: the scorer (default: the only one).
    names : mapping, optional
        lm-evaluation-harness: a model folder's name → the system's name.
    item, system, score, task, run : str, optional
        Tables: the columns. A table with the columns `system` and `score` is long
        (its columns ``item``, ``task`` and ``run`` are used when present and not
        named otherwise); otherwise it is wide with the items in `item` (default
        ``item``, else the first column) and a column per system.
    systems : sequence of str, optional
        Wide tables: the system columns (default every column holding numbers).
    run_suffix : bool
        Wide tables: items ``<item>.<k>`` are run k of ``<item>`` (MathArena's AIME
        table, rows ``1, 1.1, 1.2, 1.3``).

    Returns
    -------
    ItemTable
        Its ``source`` says what was read and which metric, filter and runs were
        chosen; its ``notes`` every choice made on the way (runs left out, all-zero
        runs kept, columns skipped).

    Raises
    ------
    InputError
        One line naming the file (and line) for anything that cannot be read as
        stated: see the readers.

    Examples
    --------
    >>> import pandas as pd
    >>> wide = pd.DataFrame({"q": ["1", "1.1", "2", "2.1"], "m1": [1, 1, 0, 1],
    ...                      "m2": [1, 0, 0, 0]})
    >>> table = read(wide, item="q", run_suffix=True)
    >>> table.systems, table.paired("m1", "m2").a.tolist()
    (('m1', 'm2'), [1.0, 0.5])
    """
    if isinstance(paths, str | os.PathLike | pd.DataFrame):
        paths = [paths]
    if not isinstance(paths, Sequence) or not paths:
        raise InputTypeError("`paths` must be a path, a DataFrame or a non-empty list of them")
    if runs not in ("latest", "all"):
        raise InputError(f"`runs` must be 'latest' or 'all', got {runs!r}")
    kinds = _classify(paths)
    _check_options(
        kinds,
        lm_eval={"filter": filter, "subtask": subtask, "names": names},
        inspect={"scorer": scorer},
        table={"item": item, "task": task, "run": run, "systems": systems},
    )
    tables = []
    if kinds["lm_eval"]:
        tables.append(
            read_lm_eval(
                kinds["lm_eval"],
                metric=metric,
                filter=filter,
                runs=runs,
                subtask=subtask,
                cluster=cluster,
                names=names,
            )
        )
    if kinds["inspect"]:
        tables.append(read_inspect(kinds["inspect"], scorer=scorer, runs=runs, cluster=cluster))
    flat: dict[str, Any] = {"item": item, "system": system, "score": score, "task": task}
    flat["run"] = run
    flat |= {"cluster": cluster, "systems": systems, "run_suffix": run_suffix, "metric": metric}
    for source in kinds["table"]:
        name = "a DataFrame" if isinstance(source, pd.DataFrame) else repr(str(source))
        tables.append(_read_flat(source, name=name, **flat))
    table = _join(tables)
    _check_tasks(table)
    return table


def _classify(paths: Sequence[Any]) -> dict[str, list[Any]]:
    """Sort the inputs by kind: lm-evaluation-harness folders, Inspect logs, tables."""
    kinds: dict[str, list[Any]] = {"lm_eval": [], "inspect": [], "table": []}
    for p in paths:
        if isinstance(p, pd.DataFrame):
            kinds["table"].append(p)
        elif isinstance(p, str | os.PathLike):
            logs = _inspect_logs(Path(p))
            if logs:
                kinds["inspect"] += logs
            else:
                kinds[_kind(Path(p))].append(Path(p))
        else:
            raise InputTypeError(f"`paths`: expected a path or a DataFrame, got {type(p).__name__}")
    return kinds


def _inspect_logs(path: Path) -> list[Path]:
    """Return the Inspect logs in folder `path` (``inspect eval`` writes them to ``logs/``).

    None when it is not a folder, or holds lm-evaluation-harness output anywhere below.
    """
    if not path.is_dir():
        return []
    for _root, _dirs, files in os.walk(path):
        if any(f.startswith(("samples_", "results_")) for f in files):
            return []
    return [
        f
        for f in sorted(path.iterdir())
        if f.is_file()
        and (f.suffix.lower() == ".eval" or (f.suffix.lower() == ".json" and is_inspect_json(f)))
    ]


def _check_tasks(table: ItemTable) -> None:
    """Every task has more than one system, unless the table has one system only."""
    if len(table.systems) < 2:
        return
    per_task = table.data.groupby("task", sort=True)["system"].unique()
    for task, have in per_task.items():
        if len(have) == 1:
            raise InputError(
                f"task {task!r} is only in the input of {have[0]!r}: nothing to compare it "
                "with; read it apart, or read the other models' logs of it"
            )


def _check_options(kinds: Mapping[str, list[Any]], **options: Mapping[str, Any]) -> None:
    """Raise when an option for one kind of input is given and no input is of that kind."""
    words = {"lm_eval": "lm-evaluation-harness folders", "inspect": "Inspect logs"}
    words["table"] = "tables"
    for kind, given in options.items():
        if kinds[kind]:
            continue
        for option, value in given.items():
            if value is not None:
                raise InputError(f"`{option}` applies to {words[kind]}, and none was given")
