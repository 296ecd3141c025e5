r"""Divergences of the components form on small studies: counts, where they start, ranks.

Fits ``JointPriors(tails="components")`` on the simulated studies of
``validation/joint_sbc.py`` (its generator and matched priors; K = 4) and records per
study: the divergences after tuning (and during it), the largest R-hat and smallest bulk
ESS of the diagnosed quantities, the SBC ranks of the setting's quantities, and where the
divergent trajectories started (nutpie's ``divergence_start``, unconstrained
coordinates), decoded into the model's quantities (nu_j, log10 s_j, log kappa_i, log
lambda_ij, log|det R|), next to the same quantities on thinned ordinary draws.

Usage (from the repository root; one JSON line per study into ``--out``)::

    ISBETTER_CACHE_DIR=/tmp/c nice -n 10 python -m validation.joint_smallq \
        --datasets 5 --reps 80 --tune 1000 --out /tmp/smallq_q5_t1000.jsonl

``--summary FILE ...`` prints the table of the measured files.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validation.joint_sbc import N_RANKS, JointSetting, replication

SEED = 20261130
#: thinned ordinary draws kept per fit, to set the divergences' starts against
KEPT = 50


def decode(x: np.ndarray, q: int, d: int) -> dict[str, np.ndarray]:
    """Return the model's quantities at unconstrained points `x` (n, n_dim).

    The components kernel's coordinates (``compiled_backend._components_kernel``): d
    log(nu_j - 1), d effects' coordinates, q xi_i (kappa), q x d xi_ij (lambda), d u_j
    (log s_j up to the shear), d x d R. Model units (the scores over the fit's scale).
    """
    from isbetter.cv.joint.spec import COMPONENT_SHEAR

    nu = 1.0 + np.exp(x[:, :d])
    at = 2 * d
    xi_kappa = x[:, at : at + q]
    at += q
    xi = x[:, at : at + q * d].reshape(-1, q, d)
    spread = np.sqrt(2.0 * (nu + 1.0)) / nu
    log_lam = -1.0 / nu[:, None, :] + spread[:, None, :] * xi
    at += q * d
    log_s = x[:, at : at + d] + 0.5 * COMPONENT_SHEAR * np.log(nu / (nu + 2.0))
    at += d
    raw = x[:, at : at + d * d].reshape(-1, d, d)
    return {
        "nu": nu,
        "log10_s": log_s / np.log(10.0),
        "xi_kappa": xi_kappa,  # kappa_i's coordinate (its map needs the data's a_i)
        "log_lam_min": log_lam.min(axis=1),  # per component, the smallest weight over data sets
        "log_abs_det_r": np.linalg.slogdet(raw)[1],
        "effects_coord": x[:, d : 2 * d],
    }


class Capture:
    """Keep nutpie's raw statistics (divergence starts, unconstrained draws) of each fit."""

    def __init__(self) -> None:
        self.stats: list[Any] = []

    def install(self) -> None:
        """Patch nutpie.sample (store the divergences and draws) and the trace conversion."""
        from isbetter.inference import libs, sampling

        nutpie = libs.nutpie()
        original_sample = nutpie.sample
        original_convert = sampling.trace_to_idata

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

        nutpie.sample = sample
        sampling.trace_to_idata = convert

    def locations(
        self, q: int, d: int, rng: np.random.Generator, data: dict[str, Any]
    ) -> dict[str, Any]:
        """Decode the last fit's divergences' starts and ends and KEPT ordinary draws.

        `data`: the fit's model data (:func:`study_data`), to evaluate the density at the
        ends (:func:`walls`).
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
        pool = np.concatenate(ordinary)
        kept = pool[rng.choice(pool.shape[0], size=min(KEPT, pool.shape[0]), replace=False)]
        out: dict[str, Any] = {"tuning_divergences": tuning_div}
        out["ordinary"] = {k: v.tolist() for k, v in decode(kept, q, d).items()}
        if starts:
            out["starts"] = {k: v.tolist() for k, v in decode(np.stack(starts), q, d).items()}
            out["ends"] = {k: v.tolist() for k, v in decode(np.stack(ends), q, d).items()}
            out["end_logp"], out["end_logp_no_box"] = walls(np.stack(ends), data)
        return out


def walls(points: np.ndarray, data: dict[str, Any]) -> tuple[list[float], list[float]]:
    """Return the log density at `points`, and with the effects' box 10^6 times wider.

    -inf with the real box and finite with the wide one: the point is outside the box
    (a wall of the density), not in a region where the density is merely steep.
    """
    from isbetter.cv.joint.compiled_backend import log_density

    wide = dict(data, effect_hi=float(data["effect_hi"]) * 1e6)
    nan = float("nan")
    real = [float(log_density(x, data)[0]) if np.isfinite(x).all() else nan for x in points]
    free = [float(log_density(x, wide)[0]) if np.isfinite(x).all() else nan for x in points]
    return real, free


def study_data(s: JointSetting, seed: np.random.SeedSequence) -> dict[str, Any]:
    """Return the model data of the study :func:`replication` fits from `seed`."""
    from isbetter.cv.joint.spec import prepare
    from validation.joint_sbc import draw_scores, draw_truth, matched_priors

    rng = np.random.default_rng(seed)
    table = draw_scores(draw_truth(s, rng), s, rng)
    priors = matched_priors(table, s)
    return prepare(table, table.systems, rho=s.rho, priors=priors).model_data(priors)


def run(args: argparse.Namespace) -> None:
    """Fit the studies, one JSON line per study."""
    import isbetter.cv.joint.model as model
    from isbetter.cv.joint.model import NutsSettings

    capture = Capture()
    capture.install()
    if args.target_accept is not None or args.mass_matrix != "diagonal":
        accept = {} if args.target_accept is None else {"target_accept": args.target_accept}
        nuts = NutsSettings(mass_matrix=args.mass_matrix, **accept)
        model.joint_fit = functools.partial(model.joint_fit, nuts=nuts)  # type: ignore[assignment]
    if args.default_priors:  # the fit's own bounds from the data, as a user's fit has
        import validation.joint_sbc as sbc
        from isbetter.cv.joint.spec import JointPriors

        sbc.matched_priors = lambda table, s: JointPriors(tails="components")  # type: ignore[assignment]
    out = Path(args.out)
    done = sum(1 for _ in out.open()) if out.exists() else 0
    for q in args.datasets:
        s = JointSetting(
            q,
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
            data = study_data(s, seed)
            where = capture.locations(q, 3, np.random.default_rng([SEED, q, r]), data)
            row = {
                "q": q,
                "study": r,
                "tune": args.tune,
                "target_accept": args.target_accept,
                "mass_matrix": args.mass_matrix,
                "seconds": round(time.perf_counter() - t0, 2),
                **{k: record[k] for k in ("divergences", "r_hat_max", "ess_bulk_min", "ranks")},
                **where,
            }
            with out.open("a") as f:
                f.write(json.dumps(row, default=float) + "\n")


def summary(paths: list[str]) -> None:
    """Print one row per file: fits with divergences, mean divergences, R-hat, ESS."""
    print("| file | q | fits | with div | mean div | R-hat > 1.01 | ESS < 400 | s/fit |")
    print("|---|---|---|---|---|---|---|---|")
    for path in paths:
        rows = [json.loads(line) for line in Path(path).open()]
        for q in sorted({r["q"] for r in rows}):
            sel = [r for r in rows if r["q"] == q]
            div = np.array([r["divergences"] for r in sel])
            print(
                f"| {Path(path).name} | {q} | {len(sel)} | {(div > 0).sum()} | {div.mean():.2f} "
                f"| {sum(r['r_hat_max'] > 1.01 for r in sel)} "
                f"| {sum(r['ess_bulk_min'] < 400 for r in sel)} "
                f"| {np.mean([r['seconds'] for r in sel]):.1f} |"
            )


def main() -> None:
    """Parse the command line and run or summarise."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", help="JSON-lines file (appended; a rerun resumes)")
    p.add_argument("--datasets", type=int, nargs="+", default=[5, 10])
    p.add_argument("--reps", type=int, default=80)
    p.add_argument("--draws", type=int, default=1000)
    p.add_argument("--tune", type=int, default=1000)
    p.add_argument("--chains", type=int, default=2)
    p.add_argument("--target-accept", type=float, default=None)
    p.add_argument(
        "--mass-matrix", default="diagonal", choices=("diagonal", "low_rank", "draw_variance")
    )
    p.add_argument(
        "--default-priors",
        action="store_true",
        help="fit with the package's default priors (bounds from the data, as a user's fit) "
        "instead of the generator's: divergences as users see them; the ranks then mean nothing",
    )
    p.add_argument("--summary", nargs="+", help="print the table of these files and stop")
    args = p.parse_args()
    if args.summary:
        summary(args.summary)
        return
    run(args)


if __name__ == "__main__":
    main()
