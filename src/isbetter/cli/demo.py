"""``isbetter demo``: a tour of the three kinds of evidence on the shipped data, in seconds.

Four steps, each printed with what it shows and the command line that gives the
same answer: the Bayesian correlated t-test on one UCI data set, the Bayesian
signed-rank test across the 54 UCI data sets, the paired Bayesian F1 comparison
on the example predictions, and a ranking of three UCI classifiers with the
Bayesian sign test (the cheap method, under a second; the hierarchical model, the
default, takes seconds per pair).
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import sys
from pathlib import Path
from typing import Any

from isbetter.cli.common import formatter

#: the UCI columns, as the command line names them
UCI_FLAGS = "--dataset-col dataset_id --system-col classifier --metric accuracy"


def add(sub: argparse._SubParsersAction) -> None:
    """Declare the subcommand and its arguments."""
    p = sub.add_parser(
        "demo",
        help="a short tour on the shipped data (seconds)",
        description=__doc__.split("\n\n")[1].replace("\n", " "),
        formatter_class=formatter,
    )
    p.add_argument("--seed", type=int, default=2017, help="random seed of every step")
    p.add_argument(
        "--plot-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="write the plots here (the folder is created if needed)",
    )


def _plot_dir(folder: Path | None) -> Path | None:
    """Create the --plot-dir folder (and its parents) unless it exists."""
    from isbetter.core.errors import InputError

    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InputError(f"--plot-dir {str(folder)!r} is a file; give a folder.") from None
    except OSError as exc:
        raise InputError(
            f"--plot-dir {str(folder)!r}: cannot create the folder ({exc.strerror})."
        ) from None
    return folder


def _shown(path: Path) -> str:
    """`path` for a shell command: relative to the working directory when below it, quoted."""
    with contextlib.suppress(ValueError):
        path = path.relative_to(Path.cwd())
    return shlex.quote(str(path))


def _step(n: int, title: str, shows: str, command: str, report: str) -> None:
    out = sys.stdout
    out.write(f"\n== {n}. {title}\n{shows}\n\n{report.rstrip()}\n\n  same from the shell:\n")
    out.write(f"  $ {command}\n")


def _plot(plot_dir: Path | None, name: str, save: Any, result: Any) -> None:
    if plot_dir is None:
        return
    written = save(result, plot_dir / name)
    print(f"wrote plot to {written or plot_dir / name}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    """Run the subcommand; return the exit code."""
    import pandas as pd

    import isbetter
    from isbetter import example_data
    from isbetter.report import render

    plot_dir = _plot_dir(args.plot_dir)
    uci_path, preds_path = example_data.path("uci"), example_data.path("f1_example")
    uci, seed = _shown(uci_path), args.seed
    scores = isbetter.read_scores(
        pd.read_csv(uci_path),
        dataset="dataset_id",
        system="classifier",
        score="accuracy",
        dataset_name="dataset_name",
    )
    plots = _savers() if plot_dir is not None else {}

    one = isbetter.compare(
        scores, "nbc", "aode", rope=0.01, method="correlated_t", dataset="1", rng=seed
    )
    _step(1, "One data set (anneal): Bayesian correlated t-test",
          "10 runs of 10-fold CV are correlated (rho = 1/10); is naive Bayes (nbc) better than "
          "AODE on anneal by more than 1 point, practically equivalent, or worse?",
          f"isbetter cv {uci} {UCI_FLAGS} --dataset-name-col dataset_name --a nbc --b aode "
          f"--rope 0.01 --dataset 1 --seed {seed}",
          render(one, "text"))  # fmt: skip
    _plot(plot_dir, "1_correlated_t.png", plots.get("cv"), one)

    many = isbetter.compare(
        scores, "nbc", "aode", rope=0.01, method="signed_rank", draws=20_000, rng=seed
    )
    _step(2, "54 data sets: Bayesian signed-rank test",
          "The mean accuracies on 54 UCI data sets; the triangle shows where the posterior "
          "mass lies among 'nbc better', 'equivalent' and 'aode better'.",
          f"isbetter cv {uci} {UCI_FLAGS} --a nbc --b aode --rope 0.01 --method signed-rank "
          f"--draws 20000 --seed {seed}",
          render(many, "text"))  # fmt: skip
    _plot(plot_dir, "2_signed_rank.png", plots.get("cv"), many)

    _predictions_step(preds_path, seed, plot_dir, plots)
    _ranking_step(scores, seed, plot_dir, plots)
    return 0


def _predictions_step(preds_path: Any, seed: int, plot_dir: Any, plots: dict[str, Any]) -> None:
    """Step 3: the paired Bayesian F1 model on the example predictions."""
    import isbetter
    from isbetter.report import render

    preds = _shown(preds_path)
    table = isbetter.read_predictions(preds_path, systems=["svm", "nb"])
    f1 = isbetter.compare_f1(
        table,
        system_a="svm",
        system_b="nb",
        rope=0.05,  # the default, said (the command without --rope would note it)
        draws=20_000,
        baselines=isbetter.Baselines(resamples=2000),
        rng=seed,
    )
    _step(3, "Per-document predictions: paired Bayesian F1 (Zhang et al. 2016)",
          "One test set of 2 000 documents, four topics: the F1 difference of svm and nb per "
          "topic, with the HDI + ROPE decision and the frequentist tests beside it.",
          f"isbetter f1 {preds} --a svm --b nb --rope 0.05 --draws 20000 --resamples 2000 "
          f"--seed {seed}",
          render(f1, "text"))  # fmt: skip
    _plot(plot_dir, "3_f1.png", plots.get("f1"), f1)


def _ranking_step(scores: Any, seed: int, plot_dir: Any, plots: dict[str, Any]) -> None:
    """Step 4: three classifiers ranked by the Bayesian sign test."""
    import isbetter
    from isbetter import example_data
    from isbetter.report import render

    uci = _shown(example_data.path("uci"))
    ranking = isbetter.rank(
        scores, systems=["nbc", "j48", "j48gr"], rope=0.01, method="sign", draws=20_000,
        progress=False, rng=seed,
    )  # fmt: skip
    _step(4, "Ranking three classifiers: partial order from the Bayesian sign test",
          "Every pair compared on the 54 data sets (sign test: cheap; the hierarchical model "
          "is the default and takes seconds per pair): naive Bayes below C4.5 and its grafted "
          "variant, which are practically equivalent (≈).",
          f"isbetter rank {uci} {UCI_FLAGS} --systems nbc j48 j48gr --rope 0.01 --method sign "
          f"--draws 20000 --seed {seed}",
          render(ranking, "text"))  # fmt: skip
    _plot(plot_dir, "4_ranking.png", plots.get("rank"), ranking)


def _savers() -> dict[str, Any]:
    from isbetter.cli.common import lazy_plot

    return {
        "cv": lazy_plot("isbetter.plots", "save_comparison_plot"),
        "f1": lazy_plot("isbetter.plots.f1", "save_f1_plot"),
        "rank": lazy_plot("isbetter.plots.ranking", "save_ranking_plot"),
    }
