"""``isbetter rank``: rank many systems on one or more metrics."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from isbetter.cli.common import (
    HIERARCHICAL_TUNE_HELP,
    add_column_args,
    add_output_args,
    add_sampler_args,
    emit,
    formatter,
    lazy_plot,
    mark_default_rope,
    rope_note,
    score_columns,
)
from isbetter.cli.items import add_pool_arg, add_reading_args
from isbetter.cli.tagging import add_prediction_args, tag_column
from isbetter.core.vocabulary import (
    F1_MODELS,
    ITEM_RANKING_METHODS,
    RANKING_METHODS,
    RANKING_RULES,
)

#: the chains each fit samples unless --chains says (what ranking.items.RANK_CHAINS and
#: items.hierarchical.route.LOW_RANK_MAX_SUBTASKS set: numbers here, so that --help imports
#: no model; tests/cli/test_cli.py checks them)
RANK_CHAINS_HELP = (
    "4: the hierarchical, joint and Plackett–Luce models; rank --items over more than 20 "
    "subtasks of binary items: 2 a pair"
)

#: the joint model's tuning steps unless --tune says (cv.joint.model.COMPONENTS_SAMPLER's,
#: the default form's, and SHARED_SAMPLER's for one nu or per-system tails): numbers here,
#: so that --help imports no model; tests/cli/test_cli.py checks them
JOINT_TUNE_HELP = "--method joint: 2000 (1000 with --joint-tails shared or per-system)"


def _add_ranked_args(p: argparse.ArgumentParser) -> None:
    """Add what is ranked: the file, the systems, the metrics with direction and ROPE."""
    p.add_argument(
        "file",
        type=Path,
        nargs="+",
        metavar="PATH",
        help="scores (long or --wide), or predictions with --gold (CSV, TSV, Parquet or JSON "
        "lines), or a tagger study's manifest.csv with --predictions; with --items, "
        "item-level logs (lm-evaluation-harness folders, Inspect logs, item tables)",
    )
    p.add_argument(
        "--systems",
        nargs="+",
        default=None,
        metavar="SYSTEM",
        help="systems to rank, in this order (default: all)",
    )
    p.add_argument(
        "--metric",
        action="append",
        default=None,
        metavar="COL",
        help="metric column (repeat for several; default: score); with --gold, a "
        "measure such as f1",
    )
    p.add_argument(
        "--lower-is-better",
        nargs="*",
        default=None,
        metavar="COL",
        help="these metrics are errors or losses (no COL: all of them)",
    )
    p.add_argument(
        "--rope",
        action="append",
        default=None,
        metavar="R|COL=R",
        help="ROPE half-width for every metric, or COL=R per metric (repeat)",
    )


def add(sub: argparse._SubParsersAction) -> None:
    """Declare the subcommand and its arguments."""
    p = sub.add_parser(
        "rank",
        help="rank many systems: every pair on every metric, a partial order per metric",
        description=(
            "Compare every pair of systems on every metric and write the partial order "
            "(e.g. 'TnT < Collins ≈ LAPOS < Flair'), the pairwise table and the Hasse diagram; "
            "for scores on several data sets also the mean ranks, Friedman's and "
            "Iman-Davenport's tests and Nemenyi's critical difference (Demšar 2006). "
            "Per-fold scores (long form) by default, one score per data set and system (long, "
            "or --wide), or per-document predictions with --gold."
        ),
        formatter_class=formatter,
    )
    _add_ranked_args(p)
    p.add_argument(
        "--method",
        default="auto",
        help="scores: "
        + ", ".join(m.replace("_", "-") for m in RANKING_METHODS)
        + " (auto: hierarchical for per-fold scores on several data sets, correlated-t for "
        "one, signed-rank for one score per data set; joint: one correlated model of every "
        "system's per-fold scores, P(best), rank intervals and coherent pairs; plackett-luce: "
        "one model of every system's rank on each data set); predictions (--gold): "
        + ", ".join(F1_MODELS)
        + "; item-level logs (--items): "
        + ", ".join(m.replace("_", "-") for m in ITEM_RANKING_METHODS),
    )
    _add_rule_args(p)
    _add_execution_args(p)
    add_output_args(
        p,
        "write the Hasse diagram and the pairwise heatmap here, with the critical-difference "
        "diagram of the mean ranks for scores on several data sets and, for plackett-luce, "
        "the probability of each rank and P(best) with its interval",
    )
    add_prediction_args(
        p.add_argument_group("tagger studies (isbetter tagging split)"), required=False
    )
    items = p.add_argument_group("item-level input (evaluation logs, as isbetter items)")
    items.add_argument(
        "--items",
        action="store_true",
        help="PATHs are item-level logs or tables: rank the models on the same items (--method "
        "auto, exact, bootstrap: every pair as isbetter items, over several tasks by the "
        "hierarchical model (--pool); items-joint: one posterior over items of every "
        "model's scores, every pair as isbetter items' model, with P(best) and rank intervals; "
        "over several tasks over the subtasks and their items, the mean over subtasks)",
    )
    add_reading_args(items, system_and_run=False)
    add_pool_arg(items)
    cols = add_column_args(p)
    drop = next(a for a in cols._group_actions if a.dest == "drop_incomplete")
    drop.help = f"{drop.help} (with --predictions: the folds without an OOV word, OOV accuracy 0/0)"
    cols.add_argument(
        "--gold",
        default=None,
        metavar="COL",
        help="gold-label column: the file holds per-document predictions, one column per system",
    )


def _add_rule_args(p: argparse.ArgumentParser) -> None:
    """How a pair's relation is decided, the MCMC settings and the models' own options."""
    p.add_argument(
        "--rule",
        default="likelihood",
        choices=RANKING_RULES,
        help="likelihood: the most probable relation of each pair; threshold: a "
        "relation only where its probability reaches --threshold",
    )
    p.add_argument(
        "--threshold", type=float, default=0.95, help="probability the threshold rule needs"
    )
    p.add_argument(
        "--margin",
        type=float,
        default=0.05,
        help="likelihood rule: write ≳ when the most probable relation is this close to the ROPE",
    )
    add_sampler_args(
        p,
        "posterior draws (per chain for the hierarchical model)",
        f"{HIERARCHICAL_TUNE_HELP}; {JOINT_TUNE_HELP}",
        RANK_CHAINS_HELP,
    )
    _add_model_args(p)


def _add_model_args(p: argparse.ArgumentParser) -> None:
    """Add the Plackett–Luce and joint models' options and the scores' correlation."""
    p.add_argument(
        "--concentration",
        type=float,
        default=None,
        help="plackett-luce: the Dirichlet prior's concentration (default 1: uniform weights)",
    )
    p.add_argument(
        "--ties",
        default=None,
        choices=("marginal", "random"),
        help="plackett-luce: tied scores on a data set (default marginal: the tied systems "
        "in any order, summed in the likelihood; random: broken at random with --seed, "
        "scmamp's rule)",
    )
    p.add_argument(
        "--joint-spread-prior",
        default=None,
        choices=("inverse-wishart", "huang-wand"),
        help="joint: the prior of the data sets' spread (inverse-wishart: its scale fixed "
        "from the data, the default with --joint-tails shared; huang-wand: half-t scales, the "
        "default otherwise); given without --joint-tails it chooses --joint-tails shared, so "
        "--joint-spread-prior inverse-wishart is the joint model's former default; see "
        "docs/joint_prior.md",
    )
    p.add_argument(
        "--joint-tails",
        default=None,
        choices=("shared", "per-system", "components"),
        help="joint: the deviations' tails (default components: independent Student-t "
        "components, each with its own nu and a half-t scale, sampled at target acceptance "
        "0.99, minutes at many systems; shared: one nu for every pair, seconds, the default "
        "when --joint-spread-prior is given; "
        "per-system: one nu per system, the grouped t; see docs/joint_prior.md)",
    )
    p.add_argument(
        "--rho",
        type=float,
        default=None,
        help="correlation of a data set's scores, for every correlated-t and hierarchical pair "
        "(default: 1/folds; repeated random splits: n_test / (n_test + n_train))",
    )


def _add_execution_args(p: argparse.ArgumentParser) -> None:
    """Where the pairs run, caching, progress."""
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="local worker processes (default: one per two CPUs for two or more "
        "hierarchical fits, as each fit samples on two cores; else 1: in this process)",
    )
    p.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="run the pairs on this Dask scheduler (needs isbetter[dask])",
    )
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep each finished pair here and resume an interrupted ranking",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _rope_option(
    values: list[str] | None, metrics: list[str], default: float
) -> tuple[Any, dict[str, float], list[str]]:
    """Read --rope: the ROPE for :func:`isbetter.rank`, each metric's, those left at `default`."""
    from isbetter.core.errors import InputError

    if not values:
        return None, dict.fromkeys(metrics, default), list(metrics)
    per: dict[str, float] = {}
    common = None
    for v in values:
        col, eq, num = v.rpartition("=")
        try:
            value = float(num)
        except ValueError:
            raise InputError(f"--rope {v!r}: expected a number or COL=NUMBER.") from None
        if (col in per) if eq else (common is not None):
            before = per[col] if eq else common
            raise InputError(
                f"--rope {v!r}: {'the ROPE of ' + repr(col) if eq else 'a ROPE for every metric'}"
                f" is given twice ({before:g}, then {value:g}); give it once."
            )
        if eq:
            per[col] = value
        else:
            common = value
    if common is not None and not per:
        return common, dict.fromkeys(metrics, common), []
    unknown = [col for col in per if col not in metrics]
    if unknown:
        raise InputError(
            f"--rope {unknown[0]}=...: {unknown[0]!r} is not a metric of this ranking; "
            f"metrics: {', '.join(metrics)} (choose them with --metric)."
        )
    ropes = {m: per.get(m, common if common is not None else default) for m in metrics}
    return ropes, ropes, [m for m in metrics if m not in per and common is None]


def _default_rope(args: argparse.Namespace) -> float:
    """Return the ROPE of a metric without --rope: F1's for predictions (--gold), else 0."""
    from isbetter.f1.compare import DEFAULT_ROPE as F1_DEFAULT_ROPE

    return F1_DEFAULT_ROPE if args.gold is not None else 0.0


def _scales(args: argparse.Namespace, data: Any, metrics: list[str]) -> dict[str, Any]:
    """Return what each metric's ROPE is judged against: its scores, or its measure's range."""
    from isbetter.f1.measures import measure_scale

    if args.gold is not None:
        return {m: measure_scale(m) for m in metrics}
    frame = data.data
    if args.systems:
        frame = frame[frame["system"].isin(args.systems)]
    if args.items:  # an item table: one metric, its values in the score column
        return {m: frame["score"].to_numpy(dtype=float) for m in metrics}
    return {m: frame[m].to_numpy(dtype=float) for m in metrics}


def _dask_client(address: str) -> Any:
    """Connect to the Dask scheduler at `address`; without Dask, say how to install it."""
    from isbetter.core.errors import InputError

    try:
        from dask.distributed import Client
    except ImportError:
        raise InputError(
            "--scheduler runs the pairs on Dask, which is not installed: pip install "
            '"isbetter[dask]" (or leave --scheduler out to run them here).'
        ) from None
    return Client(address)


def _read(args: argparse.Namespace) -> tuple[Any, list[str]]:
    """Read the file: predictions (--gold) or scores; return them and the metrics to rank."""
    from isbetter.core.errors import InputError

    if args.gold is not None:
        from isbetter.f1.predictions import read_predictions

        if args.wide:
            raise InputError(
                "--wide reads a table of scores, --gold a table of predictions; give one."
            )
        predictions = read_predictions(args.file, gold=args.gold, systems=args.systems)
        return predictions, args.metric or ["f1"]
    from isbetter.cv.scores import read_scores

    metrics = args.metric or ["score"]
    lower = set(metrics if args.lower_is_better == [] else args.lower_is_better or [])
    data = read_scores(
        args.file,
        **score_columns(args),
        score=metrics,
        higher_is_better={m: m not in lower for m in metrics},
        drop_incomplete=args.drop_incomplete,
        systems=args.systems,  # a system left out does not drop folds of the others
    )
    return data, metrics


def _read_study(args: argparse.Namespace) -> tuple[Any, list[str], dict[str, Any]]:
    """Score a tagger study (manifest and --predictions): the table, metrics, its baselines."""
    from isbetter.core.errors import InputError
    from isbetter.tagging import METRICS, read_study

    if args.gold is not None or args.wide:
        flag = "--gold" if args.gold is not None else "--wide"
        raise InputError(f"--predictions scores a tagger study; {flag} reads another table.")
    for flag in _SCORE_TABLE_ONLY:
        if getattr(args, flag[2:].replace("-", "_")) != _SCORE_TABLE_ONLY[flag]:
            raise InputError(
                f"{flag} names a column of a score table; --predictions builds the study's "
                "own (columns dataset = corpus, system, run, fold): leave it out."
            )
    if args.lower_is_better is not None:
        raise InputError(
            "--lower-is-better: a tagger study's metrics are accuracies (higher is better); "
            "leave it out."
        )
    unknown = [m for m in args.metric or [] if m not in METRICS]
    if unknown:
        raise InputError(
            f"--metric {unknown[0]!r}: a tagger study has the metrics {', '.join(METRICS)}."
        )
    metrics = args.metric or list(METRICS)
    study = read_study(
        args.file,
        args.predictions,
        systems=args.systems,
        column=tag_column(args.tag_column),
        metrics=metrics,
        drop_incomplete=args.drop_incomplete,
    )
    return study.table, metrics, {"mcnemar": study.baselines.record()}


#: score-table column flags and their defaults: a tagger study (--predictions) has fixed columns
_SCORE_TABLE_ONLY = {
    "--dataset-col": None,
    "--system-col": "system",
    "--run-col": "run",
    "--fold-col": "fold",
}


def _read_items(args: argparse.Namespace) -> Any:
    """Read item-level logs (--items) into an ItemTable; refuse the options of other input."""
    from isbetter.cli.items import read_items
    from isbetter.core.errors import InputError

    other = [
        flag
        for flag, given in (
            ("--gold", args.gold is not None),
            ("--wide", args.wide),
            ("--predictions", args.predictions is not None),
            ("--lower-is-better", args.lower_is_better is not None),
        )
        if given
    ]
    if other:
        raise InputError(f"--items reads item-level logs; {other[0]} reads another kind of input.")
    if args.metric and len(args.metric) > 1:
        raise InputError(
            f"--metric is given {len(args.metric)} times; item-level logs are ranked on one "
            "metric at a time (e.g. --metric acc)."
        )
    named = [("--systems", s) for s in args.systems or []]
    return read_items(args, args.metric[0] if args.metric else None, named)


def _read_input(args: argparse.Namespace) -> tuple[Any, list[str], dict[str, Any]]:
    """Read the PATHs: item-level logs (--items), a tagger study, predictions or scores.

    Returns the data, the metrics to rank and a tagger study's per-fold McNemar tests
    (for the report; empty otherwise).
    """
    from isbetter.core.errors import InputError

    if args.items:
        args.paths = args.file
        data = _read_items(args)
        return data, [data.metric], {}
    if args.pool is not None:
        raise InputError(
            "--pool pools the subtasks of item-level logs; add --items or leave it out."
        )
    if len(args.file) > 1:
        raise InputError(
            f"{len(args.file)} PATHs: scores, predictions and tagger studies are one file; "
            "item-level logs (several lm-evaluation-harness folders or Inspect logs) need --items."
        )
    args.file = args.file[0]
    if args.predictions is not None:
        return _read_study(args)
    data, metrics = _read(args)
    return data, metrics, {}


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; return the exit code."""
    import dataclasses

    from isbetter.core.errors import InputError
    from isbetter.core.table_rows import describe_dropped
    from isbetter.ranking import rank

    options = {
        k: getattr(args, k)
        for k in ("draws", "chains", "tune", "rho", "concentration", "ties", "pool")
        if getattr(args, k) is not None
    }
    joint = {"spread_prior": args.joint_spread_prior, "tails": args.joint_tails}
    joint = {k: v for k, v in joint.items() if v is not None}
    if joint:
        options["priors"] = _joint_priors(args.method, joint)
    twice = [m for i, m in enumerate(args.metric or []) if m in args.metric[:i]]
    if twice:
        raise InputError(f"--metric {twice[0]!r} is given twice; name each metric once.")
    data, metrics, study = _read_input(args)
    rope, ropes, defaulted = _rope_option(args.rope, metrics, _default_rope(args))
    client = None
    if args.scheduler is not None:
        client = _dask_client(args.scheduler)
    try:
        result = rank(
            data,
            systems=args.systems,
            metrics=metrics,
            **({"rope": rope} if rope is not None else {}),
            method=args.method.replace("-", "_"),
            rule=args.rule,
            threshold=args.threshold,
            margin=args.margin,
            executor=client,
            jobs=args.jobs,
            cache_dir=args.cache_dir,
            progress=False if args.quiet else None,
            rng=args.seed,
            **options,
        )
    finally:
        if client is not None:
            client.close()
    dropped = describe_dropped(data.dropped) if args.gold is None and not args.items else ""
    if dropped:  # say what --drop-incomplete removed, as cv does
        result = dataclasses.replace(result, settings={**result.settings, "dropped": dropped})
    if study:
        result = dataclasses.replace(result, settings={**result.settings, **study})
    if args.method.replace("-", "_") != "plackett_luce":  # it has no ROPE: nothing to say
        rope_note(args, ropes, _scales(args, data, metrics), defaulted)
        result = mark_default_rope(args, result, defaulted)
    return emit(args, result, lazy_plot("isbetter.plots.ranking", "save_ranking_plot"))


def _joint_priors(method: str, joint: dict[str, Any]) -> Any:
    """Return the JointPriors of --joint-spread-prior and --joint-tails (given: `joint`)."""
    from isbetter.core.errors import InputError
    from isbetter.cv.joint.spec import JointPriors

    flags = {"spread_prior": "--joint-spread-prior", "tails": "--joint-tails"}
    if method != "joint":
        flag = flags[next(iter(joint))]
        raise InputError(
            f"{flag} is a prior of --method joint, got --method {method}; "
            f"add --method joint or leave {flag} out."
        )
    if joint.get("tails") == "components" and joint.get("spread_prior", "huang-wand") != (
        "huang-wand"
    ):
        raise InputError(
            "--joint-tails components takes its components' scales from Huang and Wand's "
            f"form: --joint-spread-prior must be huang-wand, got {joint['spread_prior']}; "
            "leave --joint-spread-prior out or set it to huang-wand."
        )
    return JointPriors(**joint)
