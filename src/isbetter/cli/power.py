"""``isbetter power``: power of the F1 models by simulation."""

from __future__ import annotations

import argparse

from isbetter.cli.common import Renamed, add_output_args, emit, formatter, lazy_plot
from isbetter.core.vocabulary import POWER_GOALS


def add(sub: argparse._SubParsersAction) -> None:
    """Declare the subcommand and its arguments."""
    p = sub.add_parser(
        "power",
        help="power of the paired and unpaired F1 models, by simulation",
        description=(
            "Simulate test sets of each size from a joint distribution of two classifiers' "
            "outcomes and report how often the HDI + ROPE decision reaches the goal "
            "(Zhang et al., SIGIR 2016, section 4.1 and Table 3)."
        ),
        formatter_class=formatter,
    )
    _add_distribution_args(p)
    p.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[500, 1000, 1500, 2000, 2500, 3000, 3500],
        help="test-set sizes",
    )
    p.add_argument(
        "--goal",
        default=None,
        choices=POWER_GOALS,
        help="decision to reach (default: a_better; equivalent for --scenario sigir-b)",
    )
    p.add_argument("--replicates", type=int, default=1000, help="simulated test sets per size")
    p.add_argument("--draws", type=int, default=5000, help="posterior draws per test set")
    p.add_argument("--rope", type=float, default=0.05, help="ROPE half-width")
    p.add_argument(
        "--metric",
        "--measure",
        action=Renamed,
        default="f1",
        help="measure of the contingency table (a name, see `isbetter f1 --help`; --measure: its "
        "old name)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_output_args(p, "write the power curves here")


def _add_distribution_args(p: argparse.ArgumentParser) -> None:
    """Declare the generating distribution: a scenario of the paper, or mu and the thetas."""
    p.add_argument(
        "--scenario",
        default=None,
        choices=["sigir-a", "sigir-b"],
        help="a generating distribution of the paper (sets --goal too)",
    )
    p.add_argument("--mu", type=float, default=None, help="probability of a positive document")
    p.add_argument(
        "--theta-pos",
        type=float,
        nargs=4,
        default=None,
        metavar="P",
        help="P(outcome | positive) for (A,B) = (1,1) (1,0) (0,1) (0,0)",
    )
    p.add_argument(
        "--theta-neg",
        type=float,
        nargs=4,
        default=None,
        metavar="P",
        help="P(outcome | negative), same order",
    )


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; return the exit code."""
    from isbetter.core.errors import InputError
    from isbetter.f1.power import (
        SIGIR_SCENARIO_A,
        SIGIR_SCENARIO_B,
        JointDistribution,
        power_analysis,
    )

    custom = (args.mu, args.theta_pos, args.theta_neg)
    if args.scenario is not None:
        if any(v is not None for v in custom):
            raise InputError("Give either --scenario or --mu/--theta-pos/--theta-neg, not both.")
        dist = SIGIR_SCENARIO_A if args.scenario == "sigir-a" else SIGIR_SCENARIO_B
        goal = args.goal or ("a_better" if args.scenario == "sigir-a" else "equivalent")
    else:
        if any(v is None for v in custom):
            raise InputError(
                "Give a generating distribution: --scenario sigir-a|sigir-b, or all of --mu, "
                "--theta-pos (4 numbers) and --theta-neg (4 numbers)."
            )
        dist = JointDistribution(args.mu, tuple(args.theta_pos), tuple(args.theta_neg))
        goal = args.goal or "a_better"
    result = power_analysis(
        dist,
        sizes=args.sizes,
        goal=goal,
        replicates=args.replicates,
        draws=args.draws,
        rope=args.rope,
        metric=args.metric,
        rng=args.seed,
        progress=False if args.quiet else None,
    )
    return emit(args, result, lazy_plot("isbetter.plots.power", "save_power_plot"))
