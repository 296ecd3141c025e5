"""Coverage of 95% HDIs and decision error rates of the F1 and hierarchical models.

Usage (from the repository root)::

    python validation/coverage.py --out coverage-report           # full setting
    python validation/coverage.py --out /tmp/cov --quick          # a few minutes

* Coverage: truths drawn from the prior (F1: ``delta`` on >= 500 test sets per
  size; hierarchical: ``delta0`` on >= 200 studies, prior bounds matched as in
  ``sbc.py``), so a calibrated 95% HDI covers the truth 95% of the time.
* Decision error rates at a fixed truth with the default priors: with the true
  difference inside the ROPE, how often a winner is declared at 0.95; with a true
  difference of twice the ROPE, how often equivalence is declared.

Writes ``report.md`` and ``report.json`` into ``--out`` and prints the tables.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: import `validation` as a package, and
    # drop this folder from the path, where coverage.py would shadow the `coverage` package
    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
    sys.path.insert(0, str(_here.parent))

from validation.calibration import (
    HIERARCHICAL_PARAMETERS,
    HierarchicalSetting,
    draw_f1_counts,
    draw_f1_truth,
    hdi_covers,
    hierarchical_replication,
    true_f1_delta,
)
from validation.report import check_out_dir, ci, markdown_table, write_json
from validation.runner import replicate
from validation.scenarios import (
    HierarchicalScenario,
    f1_decisions,
    f1_scenario,
    hierarchical_decision_replication,
)

F1_ROPE = 0.05  # the F1 comparison's default ROPE
HIER_ROPE = 0.01
#: the checks, selectable with --parts
PARTS = ("f1", "hierarchical-coverage", "hierarchical-rates")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Parse and check the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="folder for the report (created if missing)")
    p.add_argument("--quick", action="store_true", help="small setting (a few minutes)")
    p.add_argument("--workers", type=int, default=1, help="processes for the hierarchical fits")
    p.add_argument("--seed", type=int, default=20240917)
    p.add_argument("--f1-sets", type=int, help="test sets per size and scenario (default 2000)")
    p.add_argument("--studies", type=int, help="hierarchical prior studies (default 200)")
    p.add_argument(
        "--scenario-studies", type=int, help="hierarchical studies per fixed truth (default 100)"
    )
    p.add_argument("--datasets", type=int, default=10, help="data sets per hierarchical study")
    p.add_argument(
        "--parts",
        nargs="+",
        choices=PARTS,
        default=list(PARTS),
        help="checks to run (default: all); e.g. hierarchical-rates alone",
    )
    args = p.parse_args(argv)
    if args.workers < 1:
        p.error("--workers must be >= 1")
    args.f1_sets = args.f1_sets or (500 if args.quick else 2000)
    args.studies = args.studies or (40 if args.quick else 200)
    args.scenario_studies = args.scenario_studies or (15 if args.quick else 100)
    if min(args.f1_sets, args.studies, args.scenario_studies) < 1 or args.datasets < 2:
        p.error("counts must be >= 1 and --datasets >= 2")
    return args


def f1_coverage(args: argparse.Namespace, rng: np.random.Generator) -> list[list[Any]]:
    """Coverage of the F1 model's 95% HDI of delta, truths drawn from the prior."""
    from isbetter import get_measure
    from isbetter.f1.paired import sample_delta

    rows = []
    for n_docs in (50, 200, 1000):
        truth = draw_f1_truth(args.f1_sets, rng)
        counts = draw_f1_counts(truth, n_docs, rng)
        for name in ("f1", "accuracy"):
            measure = get_measure(name)
            draws = sample_delta(counts, measure, draws=4000, rng=rng)
            k = int(hdi_covers(draws, true_f1_delta(truth, measure)).sum())
            rows.append(
                [f"F1 model, δ {name}", n_docs, args.f1_sets, k / args.f1_sets, ci(k, args.f1_sets)]
            )
    return rows


def hierarchical_coverage(args: argparse.Namespace, seed: int) -> tuple[list[list[Any]], dict]:
    """Coverage of the hierarchical model's 95% HDIs, studies drawn from the prior."""
    setting = HierarchicalSetting(
        args.datasets, **({"draws": 300, "tune": 300} if args.quick else {})
    )
    out = replicate(
        hierarchical_replication,
        setting,
        (100,),
        reps=args.studies,
        seed=seed,
        workers=args.workers,
        label="hierarchical coverage",
    )
    failures = [o["failed"] for o in out if "failed" in o]
    out = [o for o in out if "failed" not in o]
    n = len(out)
    rows = []
    for name in HIERARCHICAL_PARAMETERS:
        k = sum(o["covered"][name] for o in out)
        rows.append([f"hierarchical, {name}", f"q = {args.datasets}", n, k / n, ci(k, n)])
    fits = {
        "failed": len(failures),
        "failures": failures,
        "with_divergences": sum(o["divergences"] > 0 for o in out),
        "divergent_studies": [o["study"] for o in out if o["divergences"] > 0],
        "r_hat_above_1.01": sum(o["r_hat_max"] > 1.01 for o in out),
        "refitted": sum(o["refitted"] for o in out),
    }
    return rows, fits


def f1_error_rates(args: argparse.Namespace, rng: np.random.Generator) -> list[list[Any]]:
    """Decision error rates of the F1 comparison at fixed truths (default prior)."""
    from isbetter import get_measure

    f1 = get_measure("f1")
    rows = []
    for label, target in (("inside", 0.0), ("inside", F1_ROPE / 2), ("2 × rope", 2 * F1_ROPE)):
        dist = f1_scenario(target, f1)
        for n_docs in (100, 500, 2000):
            res = f1_decisions(
                dist, f1, n_docs=n_docs, sets=args.f1_sets, rope=F1_ROPE, draws=4000, rng=rng
            )
            rows.append(_rate_row(f"F1, δ = {target:g} ({label})", n_docs, res, target))
    return rows


def _rate_row(name: str, size: Any, res: dict[str, Any], target: float) -> list[Any]:
    n = res["sets"]
    prob, by_hdi = res["by_probability"], res["by_hdi"]
    if target < 2 * F1_ROPE:  # inside the ROPE: a winner is an error
        k = prob.get("a_better", 0) + prob.get("b_better", 0)
        k_hdi = by_hdi.get("a_better", 0) + by_hdi.get("b_better", 0)
        what = "winner declared"
    else:  # twice the ROPE: equivalence is an error
        k, k_hdi = prob.get("equivalent", 0), by_hdi.get("equivalent", 0)
        what = "equivalence declared"
    return [name, size, n, what, k / n, ci(k, n), k_hdi / n, res["hdi95_coverage"]]


def hierarchical_error_rates(
    args: argparse.Namespace, seed: int
) -> tuple[list[list[Any]], list[str]]:
    """Decision error rates of the hierarchical model at fixed truths (default priors).

    Also returns one line per scenario on the fits' health.
    """
    extra = {"draws": 500, "tune": 300} if args.quick else {}
    cases = [
        ("inside", 0.0, HIER_ROPE / 4),
        ("inside", HIER_ROPE / 2, HIER_ROPE / 4),
        ("2 × rope", 2 * HIER_ROPE, HIER_ROPE / 4),
    ]
    rows, notes = [], []
    for i, (label, delta0, std0) in enumerate(cases):
        name = f"hierarchical, δ0 = {delta0:g}, σ0 = {std0:g} ({label})"
        sc = HierarchicalScenario(name, delta0, std0, n_datasets=args.datasets, **extra)
        out = replicate(
            hierarchical_decision_replication,
            sc,
            (),
            reps=args.scenario_studies,
            seed=seed + i,
            workers=args.workers,
            label=name,
        )
        failures = [o["failed"] for o in out if "failed" in o]
        out = [o for o in out if "failed" not in o]
        n = len(out)
        notes.append(
            f"{name}: fits with divergences {sum(o['divergences'] > 0 for o in out)}, "
            f"R-hat > 1.01: {sum(o['r_hat_max'] > 1.01 for o in out)}, "
            f"failed to start: {len(failures)} {failures if failures else ''}".rstrip()
        )
        if failures:
            name += f" [{len(failures)} fits failed, left out]"
        bad = ("a_better", "b_better") if label == "inside" else ("equivalent",)
        k = sum(o["argmax"] in bad for o in out)
        k_pred = sum(o["predictive"] in bad for o in out)
        what = "winner declared" if label == "inside" else "equivalence declared"
        cov = float(np.mean([o["delta0_covered"] for o in out]))
        rows.append([name, f"q = {args.datasets}", n, what, k / n, ci(k, n), k_pred / n, cov])
    return rows, notes


def _fits_line(args: argparse.Namespace, fits: dict[str, Any]) -> str:
    if not fits:
        return "Hierarchical prior studies: not run (--parts)."
    return (
        f"Hierarchical prior studies: {args.studies}; fits that failed to start "
        f"(left out): {fits['failed']}; fits with divergences: "
        f"{fits['with_divergences']} (studies {fits['divergent_studies']}); "
        f"R-hat > 1.01: {fits['r_hat_above_1.01']}; centred fits refitted "
        f"integrated: {fits['refitted']}; failures: {fits['failures']}."
    )


def main(argv: list[str] | None = None) -> int:
    """Run every check, write the report, print the tables."""
    args = parse_args(argv)
    out = check_out_dir(args.out)
    seeds = [int(s) for s in np.random.SeedSequence(args.seed).generate_state(4)]
    start = time.perf_counter()
    cov_rows: list[list[Any]] = []
    rate_rows: list[list[Any]] = []
    hier_fits: dict[str, Any] = {}
    if "f1" in args.parts:
        print("F1 coverage and error rates", file=sys.stderr)
        cov_rows += f1_coverage(args, np.random.default_rng(seeds[0]))
        rate_rows += f1_error_rates(args, np.random.default_rng(seeds[1]))
    if "hierarchical-coverage" in args.parts:
        hier_cov, hier_fits = hierarchical_coverage(args, seeds[2])
        cov_rows += hier_cov
    rate_notes: list[str] = []
    if "hierarchical-rates" in args.parts:
        hier_rates, rate_notes = hierarchical_error_rates(args, seeds[3])
        rate_rows += hier_rates
    cov_table = markdown_table(["quantity", "size", "n", "95% HDI coverage", "95% CI"], cov_rows)
    rate_table = markdown_table(
        [
            "truth",
            "size",
            "n",
            "error",
            "rate (p ≥ 0.95)",
            "95% CI",
            "rate (HDI rule / predictive)",
            "HDI coverage at this truth",
        ],
        rate_rows,
    )
    text = "\n".join(
        [
            "# Coverage and decision error rates",
            "",
            f"Command: `python validation/coverage.py {' '.join(sys.argv[1:])}`; seed "
            f"{args.seed}; {time.perf_counter() - start:.0f} s.",
            "",
            "## 95% HDI coverage, truths drawn from the prior",
            "",
            cov_table,
            "",
            _fits_line(args, hier_fits),
            "",
            f"## Decision error rates (ROPE {F1_ROPE} for F1, {HIER_ROPE} hierarchical)",
            "",
            "F1 rows: the second rate is the HDI + ROPE rule (≫/≪ or ≈); hierarchical rows: "
            "the second rate uses the predictive probabilities instead of argmax counts.",
            "",
            rate_table,
            "",
            *[f"* {note}" for note in rate_notes],
            "",
        ]
    )
    (out / "report.md").write_text(text, encoding="utf-8")
    write_json(
        {
            "seed": args.seed,
            "coverage": cov_rows,
            "error_rates": rate_rows,
            "fits": hier_fits,
            "rate_fits": rate_notes,
        },
        out / "report.json",
    )
    print(text)
    print(f"report: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
