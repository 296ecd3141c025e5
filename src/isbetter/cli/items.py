"""``isbetter items``: compare two language models item by item, on one task or over subtasks."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from isbetter.cli.common import (
    add_output_args,
    emit,
    formatter,
    lazy_plot,
    mark_default_rope,
    rope_note,
)
from isbetter.core.vocabulary import ITEM_MODELS, ITEM_POOLS


def add(sub: argparse._SubParsersAction) -> None:
    """Declare the subcommand and its arguments."""
    p = sub.add_parser(
        "items",
        help="compare two language models item by item on one task or over its subtasks "
        "(evaluation logs)",
        description=(
            "Paired Bayesian comparison of two models on the same items of one task, from "
            "lm-evaluation-harness output folders, Inspect logs or item-level tables: the "
            "exact paired model for binary items (Dir(1,1,1,1) on the 2 x 2 table), the "
            "Bayesian bootstrap of the paired mean difference for graded items, runs or "
            "clusters; with mid-p McNemar, Koehn's paired bootstrap, Miller's clustered "
            "standard error and the unpaired z-test lm-evaluation-harness prints beside it. "
            "Logs of several tasks without --task: the hierarchical paired model over the "
            "subtasks (the next subtask's difference, the population mean difference, each "
            "subtask's shrunk difference; --plot draws them), for graded items or clusters "
            "the hierarchical correlated-t model with rho = 0; or --pool micro."
        ),
        formatter_class=formatter,
    )
    p.add_argument(
        "paths",
        type=Path,
        nargs="+",
        metavar="PATH",
        help="lm-evaluation-harness output folders, Inspect logs (.eval, .json, or a folder "
        "of them) or an "
        "item-level table (CSV, TSV, Parquet or JSON lines): long, one row per item and "
        "model with columns system and score (and task, item, run when present), or wide, "
        "a column per model",
    )
    p.add_argument("--a", required=True, metavar="MODEL", help="model A")
    p.add_argument("--b", required=True, metavar="MODEL", help="model B")
    p.add_argument(
        "--task",
        default=None,
        metavar="TASK",
        help="compare on this task alone (logs of several tasks; without it, over all of them)",
    )
    add_pool_arg(p)
    p.add_argument(
        "--metric", default=None, metavar="NAME", help="the metric of the logs (e.g. acc, acc_norm)"
    )
    add_reading_args(p, system_and_run=True)
    p.add_argument(
        "--rope",
        type=float,
        default=None,
        help="ROPE half-width in score units, e.g. 0.02 for two points of accuracy (default "
        "0: no practical equivalence can be concluded; a note says so and suggests one)",
    )
    _add_model_args(p)
    add_output_args(
        p,
        "write the posterior plot of the difference here (over subtasks: the forest plot of "
        "each subtask's observed and shrunk difference)",
    )


def _add_model_args(p: argparse.ArgumentParser) -> None:
    """Add the model and its sampling: --model, --draws, --resamples, --no-baselines."""
    p.add_argument(
        "--model",
        default="auto",
        choices=ITEM_MODELS,
        help="exact: binary items; bootstrap: the Bayesian bootstrap; auto: exact for binary "
        "items without clusters, else bootstrap",
    )
    p.add_argument(
        "--draws",
        type=int,
        default=None,
        help="posterior draws (default 50000; the bootstrap of many distinct item scores: "
        "fewer, down to 10000, as its cost is draws x distinct scores; the hierarchical "
        "model over subtasks: per chain, default 1000 x 4 chains)",
    )
    p.add_argument(
        "--resamples", type=int, default=10_000, help="resamples of the paired bootstrap baseline"
    )
    p.add_argument("--no-baselines", action="store_true", help="skip the frequentist tests")


def add_pool_arg(g: argparse._ActionsContainer) -> None:
    """Add --pool: how several subtasks are compared (``isbetter items``, ``rank --items``)."""
    g.add_argument(
        "--pool",
        default=None,
        choices=ITEM_POOLS[1:],
        help="logs of several tasks: hierarchical (the default for two or more subtasks: the "
        "hierarchical paired model of binary items over them, MCMC; graded items or "
        "clusters by the hierarchical correlated-t model with rho = 0; rank --method "
        "items-joint: a two-level Bayesian bootstrap, the mean over the population of "
        "subtasks) or micro (their items pooled as one task, each (task, item) one item: a "
        "micro average)",
    )


def add_reading_args(g: argparse._ActionsContainer, *, system_and_run: bool) -> None:
    """Add how item-level logs are read (``isbetter items`` and ``isbetter rank --items``).

    --filter, --runs, --cluster, --run-suffix, --common-items and the columns of a long
    table (:func:`add_long_table_args`); :func:`read_items` reads them.
    """
    g.add_argument(
        "--filter", default=None, metavar="NAME", help="the filter of lm-evaluation-harness logs"
    )
    g.add_argument(
        "--runs",
        default="latest",
        choices=("latest", "all"),
        help="several runs of a task by one model: the latest, or all (then each item's mean "
        "over its runs is compared, by the Bayesian bootstrap)",
    )
    g.add_argument(
        "--cluster",
        default=None,
        metavar="FIELD",
        help="the items' clusters (a doc field, an Inspect metadata key or a column): the "
        "bootstrap then resamples clusters",
    )
    g.add_argument(
        "--run-suffix",
        action="store_true",
        help="wide tables: rows <item>.<k> are run k of <item> (MathArena's AIME table)",
    )
    g.add_argument(
        "--common-items",
        action="store_true",
        help="compare on the items both models have (the others are left out, and the report "
        "says how many); without it, models on different items are an error",
    )
    add_long_table_args(g, system_and_run=system_and_run)


#: a long item table's columns: the reader's argument, the flag that names it, its default
LONG_COLUMNS = (
    ("task", "--task-col", "task, when present"),
    ("item", "--item-col", "item"),
    ("system", "--system-col", "system"),
    ("run", "--run-col", "run, when present"),
    ("score", "--score-col", "score"),
)


def add_long_table_args(g: argparse._ActionsContainer, *, system_and_run: bool) -> None:
    """Add the columns of a long item table: --task-col, --item-col, --score-col.

    With `system_and_run` also --system-col and --run-col (``isbetter items``; ``rank``
    has them already, for score files).
    """
    for argument, flag, default in LONG_COLUMNS:
        if not system_and_run and argument in ("system", "run"):
            continue
        g.add_argument(
            flag,
            default=None,
            metavar="COL",
            help=f"item tables (long): the {argument} column (default {default})",
        )


def _columns_named(args: argparse.Namespace) -> dict[str, tuple[str, str]]:
    """Reader argument -> (flag, column) for the long-table columns the command line named.

    ``rank``'s --system-col and --run-col have the defaults of score files (system, run):
    those are the item reader's too, so only other values count as named.
    """
    named = {}
    for argument, flag, _ in LONG_COLUMNS:
        value = getattr(args, f"{argument}_col", None)
        if value and value != argument:
            named[argument] = (flag, value)
    return named


def _check_columns_named(paths: Sequence[Path], named: dict[str, tuple[str, str]]) -> None:
    """Raise naming the flag when an item table lacks a column the command line named."""
    from isbetter.core.errors import InputError
    from isbetter.core.tables import read_table
    from isbetter.items.reader import is_table

    tables = [p for p in paths if is_table(p)]
    if named and not tables:
        flag, _ = next(iter(named.values()))
        raise InputError(
            f"{flag} names a column of an item table (CSV, TSV, Parquet, JSON lines); "
            "these inputs are logs: leave it out."
        )
    for path in tables:
        columns = read_table(path, argument="PATH").columns
        for flag, column in named.values():
            if column not in columns:
                raise InputError(
                    f"{flag} {column!r}: {str(path)!r} has no such column; its columns: "
                    + ", ".join(map(repr, map(str, columns)))
                )


def read_items(
    args: argparse.Namespace, metric: str | None, named: Sequence[tuple[str, str]] = ()
) -> Any:
    """Read `args.paths` into an ItemTable by the options of :func:`add_reading_args`.

    `named` are the models the command line names, with their flags (checked present);
    with ``--common-items``, the table of those models (default: all) on the items they
    all have.
    """
    from isbetter.cli.messages import cli_message
    from isbetter.items.reader import read

    columns = _columns_named(args)
    _check_columns_named(args.paths, columns)
    options = {"metric": metric, "filter": args.filter, "cluster": args.cluster}
    options |= {argument: column for argument, (_, column) in columns.items()}
    table = read(
        args.paths,
        runs=args.runs,
        run_suffix=args.run_suffix,
        **{k: v for k, v in options.items() if v is not None},
    )
    check_models(table, named)
    # the reader's notes name its Python arguments (`runs='all'`): say the flags
    notes = tuple(cli_message(note, args) for note in table.notes)
    if notes != table.notes:
        table = replace(table, notes=notes)
    if args.common_items:
        table = table.restrict(systems=[name for _, name in named] or None).common_items()
    return table


def check_models(table: Any, named: Sequence[tuple[str, str]]) -> None:
    """Raise naming the flag when a model named on the command line is not in the table."""
    from isbetter.core.errors import InputError

    for flag, name in named:
        if name not in table.systems:
            raise InputError(
                f"{flag} {name!r}: no such model in the input; its models: "
                + ", ".join(map(repr, table.systems))
            )


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; return the exit code."""
    from isbetter.core.errors import InputError
    from isbetter.items.compare import DEFAULT_ROPE, compare_items

    if args.a == args.b:
        raise InputError(f"--a and --b are both {args.a!r}; compare two different models.")
    table = read_items(args, args.metric, [("--a", args.a), ("--b", args.b)])
    if args.task is not None and args.task not in table.tasks:
        raise InputError(
            f"--task {args.task!r}: no such task in the input; its tasks: "
            + ", ".join(map(repr, table.tasks))
        )
    rope = DEFAULT_ROPE if args.rope is None else args.rope
    result = compare_items(
        table,
        args.a,
        args.b,
        task=args.task,
        pool=args.pool or "auto",
        rope=rope,
        model=args.model,
        draws=args.draws,
        resamples=args.resamples,
        baselines=not args.no_baselines,
        rng=args.seed,
    )
    scores = table.data.loc[table.data["system"].isin([args.a, args.b]), "score"]
    values = {table.metric: scores.to_numpy(dtype=float)}
    rope_note(args, {table.metric: rope}, values, () if args.rope is not None else values)
    result = mark_default_rope(args, result)
    return emit(args, result, lazy_plot("isbetter.plots", "save_comparison_plot"))
