r"""Divergences of the components form on small studies, simulated and real: counts, where.

Two sources of small studies, each fitted with the joint model and recorded one JSON line
per fit (divergences after tuning and during it, the largest R-hat, the smallest bulk and
tail ESS, whether the fit passes the package's whole rule ``MCMCDiagnostics.converged``,
seconds), with nutpie's ``divergence_start`` / ``divergence_end`` of the components form
decoded into the model's quantities (:func:`decode`) next to thinned ordinary draws:

* ``sim``: the simulated studies of ``validation/joint_sbc.py`` (its generator and matched
  priors, ``JointPriors(tails="components")``, K = 4), 2 chains x 1000 draws unless told;
  the SBC ranks of the setting's quantities are kept too; ``--package-priors``: the
  package's data-dependent components priors instead (what a user's fit of them uses);
* ``uci`` / ``taggers``: random subsets of real cross-validation scores (q data sets x K
  systems; the subsets fixed by the seed and written into each line) from
  ``data/uci_benavoli2017/uci_cv_accuracy_long.csv`` (rope 0.01) or
  ``data/ud_ewt_taggers/scores.csv`` (token accuracy, rope 0.002), fitted as
  ``isbetter.rank(..., method="joint")`` fits them (:func:`isbetter.cv.joint.model.joint_fit`,
  its default draws: 4 chains x 2000) with ``--priors components`` or ``--priors default``
  (today's default: one shared nu, inverse-Wishart).

Usage (from the repository root)::

    ISBETTER_CACHE_DIR=/tmp/c nice -n 10 python -m validation.joint_smallq sim \
        --datasets 5 10 --reps 40 --target-accept 0.95 --out /tmp/sim_095.jsonl
    ISBETTER_CACHE_DIR=/tmp/c nice -n 10 python -m validation.joint_smallq uci \
        --datasets 5 10 --systems 3 4 5 --subsets 15 --priors components \
        --target-accept 0.9 --out /tmp/uci_c090.jsonl
    python -m validation.joint_smallq summary /tmp/*.jsonl    # the table
    python -m validation.joint_smallq where /tmp/*.jsonl      # where divergences start
    python -m validation.joint_smallq regions /tmp/*.jsonl    # ... against each fit's draws
    python -m validation.joint_smallq compact /tmp/*.jsonl --out DIR   # small copies

A rerun with the same ``--out`` resumes after the lines already written.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SEED = 20261130
#: thinned ordinary draws kept per fit, to set the divergences' starts against
KEPT = 50
ROOT = Path(__file__).resolve().parents[1]
#: the real sources: file, read_scores arguments, rope (score units)
REAL = {
    "uci": (
        ROOT / "data" / "uci_benavoli2017" / "uci_cv_accuracy_long.csv",
        {"dataset": "dataset_id", "system": "classifier", "score": "accuracy"},
        0.01,
    ),
    "taggers": (
        ROOT / "data" / "ud_ewt_taggers" / "scores.csv",
        {"score": "token_accuracy"},
        0.002,
    ),
}


def decode(x: np.ndarray, q: int, d: int) -> dict[str, np.ndarray]:
    """Return the model's quantities at unconstrained points `x` (n, n_dim) of main's kernel.

    The components kernel's coordinates (``compiled_backend._components_kernel``, the
    effects integrated out): d log(nu_j - 1); q xi_i (kappa_i); q rows of d xi_ij
    (lambda_ij, data set by data set); d u_j = log s_j - c/2 log(nu_j / (nu_j + 2)); d x d
    R row by row (none at d = 1). Model units. (Files written before the effects were
    integrated out also hold ``beta_over_box``, beta_j / effect_hi; :func:`where` reads it
    where present.)
    """
    from isbetter.cv.joint.spec import COMPONENT_SHEAR

    nu = 1.0 + np.exp(x[:, :d])
    at = d
    xi_kappa = x[:, at : at + q]
    at += q
    xi = x[:, at : at + q * d].reshape(-1, q, d)
    spread = np.sqrt(2.0 * (nu + 1.0)) / nu
    log_lam = -1.0 / nu[:, None, :] + spread[:, None, :] * xi
    at += q * d
    log_s = x[:, at : at + d] + 0.5 * COMPONENT_SHEAR * np.log(nu / (nu + 2.0))
    at += d
    # R, row by row (none at d = 1, where Q = (1): log|det R| reported as 0)
    raw = x[:, at : at + d * d].reshape(-1, d, d) if d > 1 else np.ones((x.shape[0], 1, 1))
    return {
        "nu": nu,
        "log10_s": log_s / np.log(10.0),
        "xi_kappa": xi_kappa,  # kappa_i's coordinate (its map needs the data's a_i)
        "log_lam_min": log_lam.min(axis=1),  # per component, the smallest weight over data sets
        "log_abs_det_r": np.linalg.slogdet(raw)[1],
    }


class Capture:
    """Keep nutpie's raw statistics (divergence starts, unconstrained draws) and diagnostics."""

    def __init__(self) -> None:
        self.stats: list[Any] = []
        self.diagnostics: list[Any] = []

    def install(self, nuts: Any) -> None:
        """Patch nutpie.sample, the trace conversion and joint_fit (`nuts`: its settings)."""
        import isbetter.cv.joint.model as model
        from isbetter.inference import libs, sampling

        nutpie = libs.nutpie()
        original_sample = nutpie.sample
        original_convert = sampling.trace_to_idata
        original_fit = model.joint_fit

        @functools.wraps(original_sample)
        def sample(*args: Any, **kwargs: Any) -> Any:
            kwargs.setdefault("store_divergences", True)
            kwargs.setdefault("store_unconstrained", True)
            return original_sample(*args, **kwargs)

        def convert(results: Any, coords: Any) -> Any:
            draws, stats = results.get_arrow_trace()
            self.stats.append(stats)

            class Taken:
                def is_arrow(self) -> bool:
                    return True

                def get_arrow_trace(self) -> Any:
                    return draws, stats

            return original_convert(Taken(), coords)

        @functools.wraps(original_fit)
        def joint_fit(*args: Any, **kwargs: Any) -> Any:
            if nuts is not None:
                kwargs.setdefault("nuts", nuts)
            fit = original_fit(*args, **kwargs)
            self.diagnostics.append(fit.diagnostics)
            return fit

        nutpie.sample = sample
        sampling.trace_to_idata = convert
        model.joint_fit = joint_fit  # type: ignore[assignment]

    def locations(
        self, q: int, d: int, rng: np.random.Generator, data: dict[str, Any] | None
    ) -> dict[str, Any]:
        """Decode the last fit's divergences' starts and ends and KEPT ordinary draws.

        `data`: the fit's model data (components form), to decode and to evaluate the
        density at the ends; None (another form): the tuning divergences only.
        """
        import pyarrow

        stats = self.stats.pop()
        starts: list[np.ndarray] = []
        ends: list[np.ndarray] = []
        ordinary, tuning_div = [], 0
        for batch in stats:
            tuning = np.asarray(batch.column("tuning")).astype(bool)
            div = np.asarray(batch.column("diverging")).astype(bool)
            tuning_div += int((div & tuning).sum())
            if data is None:
                continue
            unc = pyarrow.array(batch.column("unconstrained_draw"))
            draws = np.stack([np.asarray(v.as_py()) for v in unc])
            ordinary.append(draws[~tuning])
            n_dim = draws.shape[1]
            if (div & ~tuning).any():
                first = pyarrow.array(batch.column("divergence_start"))
                last = pyarrow.array(batch.column("divergence_end"))
                for i in np.flatnonzero(div & ~tuning):
                    starts.append(np.asarray(first[int(i)].as_py()))
                    end = last[int(i)].as_py()  # None where nutpie kept no end point
                    ends.append(np.full(n_dim, np.nan) if end is None else np.asarray(end))
        out: dict[str, Any] = {"tuning_divergences": tuning_div}
        if data is None:
            return out
        pool = np.concatenate(ordinary)
        kept = pool[rng.choice(pool.shape[0], size=min(KEPT, pool.shape[0]), replace=False)]
        out["ordinary"] = {k: v.tolist() for k, v in decode(kept, q, d).items()}
        if starts:
            out["starts"] = {k: v.tolist() for k, v in decode(np.stack(starts), q, d).items()}
            out["ends"] = {k: v.tolist() for k, v in decode(np.stack(ends), q, d).items()}
            out["end_logp"] = end_logp(np.stack(ends), data)
        return out


def end_logp(points: np.ndarray, data: dict[str, Any]) -> list[float]:
    """Return the log density at `points` (NaN where nutpie kept no end point)."""
    from isbetter.cv.joint.compiled_backend import log_density

    return [float(log_density(x, data)[0]) if np.isfinite(x).all() else np.nan for x in points]


def _diagnostics(diag: Any) -> dict[str, Any]:
    return {
        "divergences": int(diag.divergences),
        "r_hat_max": float(diag.r_hat_max),
        "ess_bulk_min": float(diag.ess_bulk_min),
        "ess_tail_min": float(diag.ess_tail_min),
        "converged": bool(diag.converged),
    }


def _resume(out: Path) -> int:
    return sum(1 for _ in out.open()) if out.exists() else 0


def _nuts(args: argparse.Namespace) -> Any:
    from isbetter.cv.joint.model import NutsSettings

    if args.target_accept is None and args.mass_matrix == "diagonal":
        return None
    accept = {} if args.target_accept is None else {"target_accept": args.target_accept}
    return NutsSettings(mass_matrix=args.mass_matrix, **accept)


def sim_data(s: Any, seed: np.random.SeedSequence) -> dict[str, Any]:
    """Return the model data of the study ``joint_sbc.replication`` fits from `seed`."""
    from isbetter.cv.joint.spec import prepare
    from validation.joint_sbc import draw_scores, draw_truth, matched_priors

    rng = np.random.default_rng(seed)
    table = draw_scores(draw_truth(s, rng), s, rng)
    priors = matched_priors(table, s)
    return prepare(table, table.systems, rho=s.rho, priors=priors).model_data(priors)


def run_sim(args: argparse.Namespace) -> None:
    """Fit joint_sbc's simulated studies, one JSON line per study."""
    from validation.joint_sbc import N_RANKS, JointSetting, replication

    capture = Capture()
    capture.install(_nuts(args))
    label = "components-matched"
    if args.package_priors:  # the fit's own bounds from the data, as a user's fit has
        import validation.joint_sbc as sbc
        from isbetter.cv.joint.spec import JointPriors

        sbc.matched_priors = lambda table, s: JointPriors(tails="components")  # type: ignore[assignment]
        label = "components-package"
    out = Path(args.out)
    done = _resume(out)
    for q in args.datasets:
        s = JointSetting(
            q,
            n_systems=args.systems[0],
            draws=args.draws,
            tune=args.tune,
            chains=args.chains,
            tails="components",
            spread_prior="huang-wand",
        )
        seeds = np.random.SeedSequence([SEED, q]).spawn(args.reps)
        for r, seed in enumerate(seeds):
            if done:
                done -= 1
                continue
            t0 = time.perf_counter()
            record = replication(s, seed, N_RANKS)
            seconds = time.perf_counter() - t0
            where = capture.locations(
                q, s.n_systems - 1, np.random.default_rng([SEED, q, r]), sim_data(s, seed)
            )
            row = {
                "source": "sim",
                "priors": label,
                "q": q,
                "k": s.n_systems,
                "study": r,
                "draws": f"{args.chains}x{args.draws}",
                "tune": args.tune,
                "target_accept": args.target_accept,
                "mass_matrix": args.mass_matrix,
                "seconds": round(seconds, 2),
                **_diagnostics(capture.diagnostics.pop()),
                "ranks": record["ranks"],
                **where,
            }
            with out.open("a") as f:
                f.write(json.dumps(row, default=float) + "\n")


def subsets(
    source: str, datasets: list[int], systems: list[int], n: int
) -> Iterator[tuple[int, int, int, list[str], list[str]]]:
    """Yield (q, K, index, data sets, systems): `n` random subsets per (q, K), fixed seeds."""
    import pandas as pd

    path, columns, _ = REAL[source]
    frame = pd.read_csv(path)
    all_sets = sorted({str(v) for v in frame[columns.get("dataset", "dataset")]})
    all_systems = sorted({str(v) for v in frame[columns.get("system", "system")]})
    for q in datasets:
        for k in systems:
            rng = np.random.default_rng([SEED, q, k])
            for i in range(n):
                sets = sorted(rng.choice(all_sets, size=q, replace=False).tolist())
                names = sorted(rng.choice(all_systems, size=k, replace=False).tolist())
                yield q, k, i, sets, names


def real_table(source: str, sets: list[str], names: list[str]) -> Any:
    """Return the ScoreTable of data sets `sets` and systems `names` of `source`."""
    import pandas as pd

    import isbetter

    path, columns, _ = REAL[source]
    frame = pd.read_csv(path)
    dataset, system = columns.get("dataset", "dataset"), columns.get("system", "system")
    frame[dataset] = frame[dataset].astype(str)
    frame = frame[frame[dataset].isin(sets) & frame[system].isin(names)]
    return isbetter.read_scores(frame, **columns)


def run_real(args: argparse.Namespace) -> None:
    """Fit random subsets of a real study, one JSON line per fit."""
    import isbetter.cv.joint.model as model
    from isbetter.cv.joint.spec import JointPriors, prepare

    capture = Capture()
    capture.install(_nuts(args))
    priors = None
    if args.priors == "components":
        df = {} if args.spread_df is None else {"spread_df": args.spread_df}
        priors = JointPriors(tails="components", **df)
    rope = REAL[args.source][2]
    out = Path(args.out)
    done = _resume(out)
    for q, k, i, sets, names in subsets(args.source, args.datasets, args.systems, args.subsets):
        if done:
            done -= 1
            continue
        table = real_table(args.source, sets, names)
        seed = int(np.random.default_rng([SEED, q, k, i]).integers(2**31))
        t0 = time.perf_counter()
        fit = model.joint_fit(table, names, rope=rope, priors=priors, rng=seed, cores=1)
        seconds = time.perf_counter() - t0
        data = None
        if args.priors == "components":
            data = prepare(table, names, rope=rope, priors=priors).model_data(priors)
        where = capture.locations(q, k - 1, np.random.default_rng([SEED, q, k, i, 1]), data)
        row = {
            "source": args.source,
            "priors": args.priors + ("" if args.spread_df is None else f"-df{args.spread_df:g}"),
            "q": q,
            "k": k,
            "study": i,
            "datasets": sets,
            "systems": names,
            "draws": f"{fit.effects.shape[0]}x{fit.effects.shape[1]}",
            "target_accept": args.target_accept,
            "mass_matrix": args.mass_matrix,
            "seed": seed,
            "seconds": round(seconds, 2),
            **_diagnostics(capture.diagnostics.pop()),
            **where,
        }
        with out.open("a") as f:
            f.write(json.dumps(row, default=float) + "\n")


def _rows(paths: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for path in paths for line in Path(path).open()]


def _groups(rows: list[dict[str, Any]]) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        key = (r["source"], r["priors"], r["q"], r["k"], r["target_accept"], r["draws"])
        groups.setdefault(key, []).append(r)
    return groups


def summary(paths: list[str]) -> None:
    """Print one row per setting: fits with divergences, mean divergences, the whole rule."""
    print(
        "| source | priors | q | K | target_accept | draws | fits | with div | mean div "
        "| not converged | R-hat > 1.01 | finite end | s/fit |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key, sel in sorted(_groups(_rows(paths)).items(), key=str):
        div = np.array([r["divergences"] for r in sel])
        finite = sum(any(np.isfinite(v) for v in r.get("end_logp", [])) for r in sel)
        print(
            f"| {' | '.join(str(v) for v in key)} | {len(sel)} | {(div > 0).sum()} "
            f"| {div.mean():.2f} | {sum(not r['converged'] for r in sel)} "
            f"| {sum(r['r_hat_max'] > 1.01 for r in sel)} | {finite} "
            f"| {np.mean([r['seconds'] for r in sel]):.1f} |"
        )


def where(paths: list[str]) -> None:
    """Print the 5/50/95% quantiles of the decoded starts against the ordinary draws.

    And the shares of the starts beyond the ordinary draws' 1% and 99% points (pooled
    over the setting's fits).
    """
    rows = _rows(paths)
    for key, sel in sorted(_groups(rows).items(), key=str):
        hit = [r for r in sel if "starts" in r]
        if not hit:
            continue
        total = sum(r["divergences"] for r in sel)
        print(f"\n{' '.join(str(v) for v in key)}: {total} divergences")
        for name, field, reduce in (
            ("log10 s_max", "log10_s", lambda v: v.max(axis=1)),
            ("log10 s_min", "log10_s", lambda v: v.min(axis=1)),
            ("nu_min", "nu", lambda v: v.min(axis=1)),
            ("log lambda_min", "log_lam_min", lambda v: v.min(axis=1)),
            ("log|det R|", "log_abs_det_r", lambda v: v),
            ("|beta|/box max", "beta_over_box", lambda v: np.abs(v).max(axis=1)),
            ("xi_kappa |max|", "xi_kappa", lambda v: np.abs(v).max(axis=1)),
        ):
            if field not in hit[0]["starts"]:  # beta: only in files of the box prior
                continue
            got = {
                part: np.concatenate([reduce(np.asarray(r[part][field])) for r in hit])
                for part in ("ordinary", "starts")
            }
            qs = {p: np.quantile(v, [0.05, 0.5, 0.95]) for p, v in got.items()}
            low, high = np.quantile(got["ordinary"], [0.01, 0.99])
            print(
                f"  {name:15s} ordinary {' / '.join(f'{v:.2f}' for v in qs['ordinary'])}"
                f"   starts {' / '.join(f'{v:.2f}' for v in qs['starts'])}"
                f"   starts < ordinary 1%: {np.mean(got['starts'] < low):.2f}"
                f", > 99%: {np.mean(got['starts'] > high):.2f}"
            )


def _outside(r: dict[str, Any]) -> dict[str, np.ndarray]:
    # per divergence start of fit r: beyond the fit's own kept ordinary draws' range
    o = {k: np.asarray(v) for k, v in r["ordinary"].items()}
    s = {k: np.asarray(v) for k, v in r["starts"].items()}
    return {
        "s_max above": s["log10_s"].max(axis=1) > o["log10_s"].max(),
        "s_min below": s["log10_s"].min(axis=1) < o["log10_s"].min(),
        "lambda_min below": s["log_lam_min"].min(axis=1) < o["log_lam_min"].min(),
        "|det R| below": s["log_abs_det_r"] < o["log_abs_det_r"].min(),
        "nu_min below": s["nu"].min(axis=1) < o["nu"].min(),
    }


def regions(paths: list[str]) -> None:
    """Print, per setting, the shares of the starts outside their fit's ordinary draws.

    A start is outside in a quantity when it lies beyond the range of the fit's KEPT
    ordinary draws (largest scale above, the others below); "inside" counts the starts
    outside in none; "fits" counts the fits with a start whose s_max is above.
    """
    for key, sel in sorted(_groups(_rows(paths)).items(), key=str):
        hit = [r for r in sel if "starts" in r]
        if not hit:
            continue
        parts = [_outside(r) for r in hit]
        n = sum(len(p["s_max above"]) for p in parts)
        shares = {name: sum(int(p[name].sum()) for p in parts) / n for name in parts[0]}
        inside = sum(int((~np.any(list(p.values()), axis=0)).sum()) for p in parts) / n
        fits = sum(bool(p["s_max above"].any()) for p in parts)
        print(
            f"{' '.join(str(v) for v in key)}: {n} starts in {len(hit)} fits; "
            + ", ".join(f"{k} {v:.2f}" for k, v in shares.items())
            + f", inside {inside:.2f}; fits with an s_max start above: {fits}"
        )


#: the per-point reductions `where` and `regions` read, kept by :func:`compact`
_REDUCED = {
    "nu": lambda v: v.min(axis=1, keepdims=True),
    "log10_s": lambda v: np.stack([v.min(axis=1), v.max(axis=1)], axis=1),
    "log_lam_min": lambda v: v.min(axis=1, keepdims=True),
    "beta_over_box": lambda v: np.abs(v).max(axis=1, keepdims=True),
    "xi_kappa": lambda v: np.abs(v).max(axis=1, keepdims=True),
    "log_abs_det_r": lambda v: v,
}


def compact(paths: list[str], out_dir: str) -> None:
    """Write each file into `out_dir` with the decoded points reduced and rounded.

    Per point only what :func:`where` and :func:`regions` read (the smallest and largest
    log10 s_j, the smallest nu_j and log weight, the largest |beta_j| over the box and
    |xi_kappa_i|, log|det R|), 3 decimals, and the ends dropped but for whether their
    density is finite: both commands print the same numbers from the compact files, up
    to the rounding (a last digit).
    """
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    for path in paths:
        lines = []
        for r in _rows([path]):
            for part in ("ordinary", "starts"):
                if part in r:
                    r[part] = {
                        k: np.round(f(np.asarray(r[part][k], dtype=float)), 3).tolist()
                        for k, f in _REDUCED.items()
                        if k in r[part]
                    }
            r.pop("ends", None)
            if "end_logp" in r:
                r["end_logp"] = [1.0 if np.isfinite(v) else np.nan for v in r["end_logp"]]
            lines.append(json.dumps(r, default=float))
        (Path(out_dir) / Path(path).name).write_text("\n".join(lines) + "\n")


def main() -> None:
    """Parse the command line and run or summarise."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("source", choices=("sim", *REAL, "summary", "where", "regions", "compact"))
    p.add_argument("files", nargs="*", help="summary / where: the JSON-lines files")
    p.add_argument("--out", help="JSON-lines file (appended; a rerun resumes)")
    p.add_argument("--datasets", type=int, nargs="+", default=[5, 10])
    p.add_argument("--systems", type=int, nargs="+", default=[4], help="K (sim: the first)")
    p.add_argument("--reps", type=int, default=40, help="sim: studies per q")
    p.add_argument("--subsets", type=int, default=15, help="real: subsets per (q, K)")
    p.add_argument("--priors", choices=("components", "default"), default="components")
    p.add_argument(
        "--spread-df",
        type=float,
        default=None,
        help="real: the components' half-t degrees of freedom of the scales (default the "
        "package's, 2; 30 is close to a half-normal)",
    )
    p.add_argument(
        "--package-priors",
        action="store_true",
        help="sim: fit with JointPriors(tails='components') (bounds from the data, as a "
        "user's fit) instead of the generator's; the ranks then mean nothing",
    )
    p.add_argument("--draws", type=int, default=1000, help="sim: draws per chain")
    p.add_argument("--tune", type=int, default=1000, help="sim: tuning steps")
    p.add_argument("--chains", type=int, default=2, help="sim: chains")
    p.add_argument("--target-accept", type=float, default=None)
    p.add_argument(
        "--mass-matrix", default="diagonal", choices=("diagonal", "low_rank", "draw_variance")
    )
    args = p.parse_args()
    if args.source == "summary":
        summary(args.files)
    elif args.source == "where":
        where(args.files)
    elif args.source == "regions":
        regions(args.files)
    elif args.source == "compact":
        compact(args.files, args.out)
    elif args.source == "sim":
        run_sim(args)
    else:
        run_real(args)


if __name__ == "__main__":
    main()
