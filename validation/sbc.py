"""Simulation-based calibration of the paired F1 model and the hierarchical model.

Usage (from the repository root)::

    python validation/sbc.py --out sbc-report            # full setting
    python validation/sbc.py --out /tmp/sbc --quick      # a few minutes
    python validation/sbc.py --out sbc-broken --broken   # also the deliberately broken fits

Writes ``report.md``, ``report.json`` and rank histograms (``*.png``) into the
folder given by ``--out`` and prints the chi-squared p-values of uniformity. See
``validation/README.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
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
    f1_sbc,
    hierarchical_replication,
    uniformity,
)
from validation.report import (
    check_out_dir,
    markdown_table,
    plot_rank_histograms,
    write_json,
)
from validation.runner import replicate

N_RANKS = 100  # 99 thinned posterior draws per fit: ranks 0..99
F1_BINS = 20
HIER_BINS = 10


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Parse and check the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="folder for the report (created if missing)")
    p.add_argument("--quick", action="store_true", help="small setting (a few minutes)")
    p.add_argument("--workers", type=int, default=1, help="processes for the hierarchical fits")
    p.add_argument("--seed", type=int, default=20240917)
    p.add_argument("--datasets", type=int, nargs="+", help="q values (default 5 10 50)")
    p.add_argument("--reps", type=int, help="hierarchical studies per q (default 1000)")
    p.add_argument("--f1-reps", type=int, help="simulated test sets (default 5000)")
    p.add_argument(
        "--parameterization",
        default="auto",
        choices=["auto", "integrated", "centred"],
        help="of the hierarchical fits (default auto, as the library)",
    )
    p.add_argument("--chains", type=int, default=2, help="per hierarchical fit (default 2)")
    p.add_argument("--draws", type=int, default=500, help="per chain (default 500)")
    p.add_argument("--n-docs", type=int, default=200, help="documents per test set")
    p.add_argument("--measures", nargs="+", default=["f1", "accuracy"])
    p.add_argument(
        "--broken",
        action="store_true",
        help="also fit deliberately wrong models (F1: unpaired; hierarchical: wrong rho)",
    )
    args = p.parse_args(argv)
    if args.workers < 1:
        p.error("--workers must be >= 1")
    args.datasets = args.datasets or ([5] if args.quick else [5, 10, 50])
    args.reps = args.reps or (30 if args.quick else 1000)
    args.f1_reps = args.f1_reps or (1000 if args.quick else 5000)
    if min(args.datasets) < 2 or args.reps < 1 or args.f1_reps < 1 or args.n_docs < 1:
        p.error("--datasets must be >= 2; --reps, --f1-reps and --n-docs >= 1")
    return args


def f1_section(args: argparse.Namespace, model: str, seed: int) -> dict[str, Any]:
    """SBC of the F1 model (or, with model="unpaired", of a wrong fit)."""
    rng = np.random.default_rng(seed)
    res = f1_sbc(
        tuple(args.measures),
        reps=args.f1_reps,
        n_docs=args.n_docs,
        n_ranks=N_RANKS,
        rng=rng,
        model=model,
        coverage_draws=2000,
    )
    panels = {}
    for name, entry in res.items():
        counts, p = uniformity(entry["ranks"], N_RANKS, F1_BINS)
        panels[f"delta {name}"] = {
            "counts": counts,
            "p_value": p,
            "hdi95_coverage": float(entry["covered"].mean()),
            "reps": args.f1_reps,
        }
    return panels


def hierarchical_section(
    setting: HierarchicalSetting, reps: int, seed: int, workers: int, label: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """SBC of the hierarchical model in one setting: rank histograms and fit diagnostics."""
    start = time.perf_counter()
    out = replicate(
        hierarchical_replication,
        setting,
        (N_RANKS,),
        reps=reps,
        seed=seed,
        workers=workers,
        label=label,
    )
    failed = [o["failed"] for o in out if "failed" in o]
    out = [o for o in out if "failed" not in o]
    panels = {}
    for name in HIERARCHICAL_PARAMETERS:
        counts, p = uniformity(np.array([o["ranks"][name] for o in out]), N_RANKS, HIER_BINS)
        covered = np.mean([o["covered"][name] for o in out])
        panels[name] = {"counts": counts, "p_value": p, "hdi95_coverage": float(covered)}
        panels[name]["reps"] = len(out)
    fits = {
        "seconds": time.perf_counter() - start,
        "failed": len(failed),
        "failures": sorted(set(failed)),
        "with_divergences": sum(o["divergences"] > 0 for o in out),
        "divergent_studies": [o["study"] for o in out if o["divergences"] > 0],
        "r_hat_above_1.01": sum(o["r_hat_max"] > 1.01 for o in out),
        "r_hat_studies": [o["study"] for o in out if o["r_hat_max"] > 1.01],
        "refitted": sum(o["refitted"] for o in out),
        "min_ess_bulk": min(o["ess_bulk_min"] for o in out),
        "sigma_bound_term": sorted({str(o["bound_term"]) for o in out}),
        "parameterization": sorted({str(o["parameterization"]) for o in out}),
    }
    return panels, fits


def run(args: argparse.Namespace, out: Path) -> dict[str, Any]:
    """Run every SBC setting the command line asks for."""
    seeds = np.random.SeedSequence(args.seed).generate_state(8)
    sections: dict[str, Any] = {}
    f1_runs = [("paired", "F1 model (paired, exact)")]
    if args.broken:
        f1_runs.append(("unpaired", "BROKEN: paired data fitted with the unpaired model"))
    for i, (model, title) in enumerate(f1_runs):
        print(f"F1 SBC ({model}): {args.f1_reps} test sets of {args.n_docs}", file=sys.stderr)
        sections[f"f1_{model}"] = {
            "title": title,
            "panels": f1_section(args, model, int(seeds[i])),
            "setting": {"reps": args.f1_reps, "n_docs": args.n_docs, "model": model},
        }
    quick = {"draws": 300, "tune": 300} if args.quick else {"draws": args.draws}
    quick |= {"chains": args.chains, "parameterization": args.parameterization}
    settings = [
        (f"hier_q{q}", f"Hierarchical model, q = {q}", HierarchicalSetting(q, **quick))
        for q in args.datasets
    ]
    if args.broken:
        q = min(args.datasets)
        wrong = replace(HierarchicalSetting(q, **quick), rho_data=0.5, rho_fit=0.1)
        settings.append(
            (f"hier_q{q}_wrong_rho", f"BROKEN: q = {q}, data rho 0.5, fit rho 0.1", wrong)
        )
    for key, title, setting in settings:
        seed = int(seeds[2]) + setting.n_datasets  # each q its own stream
        panels, fits = hierarchical_section(setting, args.reps, seed, args.workers, key)
        sections[key] = {"title": title, "panels": panels, "fits": fits}
        sections[key]["setting"] = setting.to_dict() | {"reps": args.reps}
    return sections


def write(sections: dict[str, Any], args: argparse.Namespace, out: Path) -> str:
    """Write the PNGs, report.md and report.json; return the summary table."""
    lines = [
        "# Simulation-based calibration (Talts et al. 2018)",
        "",
        f"Command: `python validation/sbc.py {' '.join(sys.argv[1:])}`; seed {args.seed}. "
        f"Ranks of the truth among {N_RANKS - 1} thinned posterior draws; "
        "χ² test of uniformity of the binned ranks (p > 0.01 expected for a calibrated fit).",
        "",
    ]
    rows = []
    for key, sec in sections.items():
        png = out / f"{key}.png"
        plot_rank_histograms(sec["panels"], N_RANKS, png, sec["title"])
        for name, panel in sec["panels"].items():
            rows.append(
                [sec["title"], name, panel["reps"], panel["p_value"], panel["hdi95_coverage"]]
            )
        lines.append(f"![{sec['title']}]({png.name})")
        if "fits" in sec:
            fits = sec["fits"]
            lines.append(
                f"\n{sec['title']}: {fits['seconds']:.0f} s; failed fits {fits['failed']} "
                f"(left out); fits with divergences "
                f"{fits['with_divergences']}, R-hat > 1.01: {fits['r_hat_above_1.01']}, "
                f"smallest bulk ESS {fits['min_ess_bulk']:.0f}; centred fits refitted "
                f"integrated: {fits['refitted']}; sigma_i bound term "
                f"{', '.join(fits['sigma_bound_term'])}; parameterization "
                f"{', '.join(fits['parameterization'])}."
            )
            for what in ("failures", "divergent_studies", "r_hat_studies"):
                if fits[what]:
                    lines.append(f"{what.replace('_', ' ')}: {fits[what]}")
        lines.append("")
    table = markdown_table(["setting", "quantity", "reps", "χ² p", "95% HDI coverage"], rows)
    (out / "report.md").write_text("\n".join([*lines[:4], table, "", *lines[4:]]) + "\n")
    summary = {k: {kk: vv for kk, vv in v.items() if kk != "title"} for k, v in sections.items()}
    write_json({"seed": args.seed, "n_ranks": N_RANKS, "sections": summary}, out / "report.json")
    return table


def main(argv: list[str] | None = None) -> int:
    """Run the SBC, write the report, print the table."""
    args = parse_args(argv)
    out = check_out_dir(args.out)
    sections = run(args, out)
    print(write(sections, args, out))
    print(f"\nreport: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
