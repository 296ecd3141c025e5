r"""The joint model with independent-component Student-t deviations: issue 29's checks.

The model is the package's ``JointPriors(tails="components")`` (``docs/joint_prior.md``,
"Independent components"; :mod:`isbetter.cv.joint.compiled_backend`'s
``_components_kernel``, stated in PyMC by :func:`isbetter.cv.joint.pymc_backend.build_model`;
each data set's deviations integrated out in the sampler and drawn after the fit): with
:math:`d = K - 1`,

.. math::

    \tilde u_i = L z_i, \quad L = Q \operatorname{diag}(s), \quad
    z_{ij} \sim t_{\nu_j}(0, 1) \text{ independent},

:math:`Q` Haar (Gram-Schmidt of a Gaussian matrix), :math:`s_j \sim` half-:math:`t_2(0,
A)`, :math:`\nu_j - 1` with the pairwise model's prior of its one :math:`\nu` each.
The next data set's pair difference is a sum of independent t's; :func:`pair_masses`
computes its three masses per draw, Rao-Blackwellised (the largest component by its t
CDF, the others by Monte Carlo).

Usage (each writes a JSON of numbers under ``--out``)::

    nice -n 10 python -m validation.joint_components pairs     # (a) K = 2 UCI pairs
    nice -n 10 python -m validation.joint_components outlier   # (b) K = 4, one outlier
    nice -n 10 python -m validation.joint_components uci5      # (d) K = 5 UCI pair table

``where`` shows where each chain sits (the narrowest component's scale, direction and
weights), ``raw`` the sampler's unconstrained draws of R::

    nice -n 10 python -m validation.joint_components where --systems j48 j48gr nbc
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from scipy import special

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

UCI = ROOT / "data" / "uci_benavoli2017" / "uci_cv_accuracy_long.csv"


def fit_components(
    table: Any,
    systems: tuple[str, ...],
    *,
    seed: int,
    rope: float = 0.0,
    draws: int | None = None,
    tune: int | None = None,
    chains: int = 4,
    nuts: Any = None,
    noise_scale: float | None = None,
) -> dict[str, Any]:
    """Fit the package's model (``JointPriors(tails="components")``, compiled density).

    `draws`, `tune` and `nuts` (a :class:`~isbetter.cv.joint.model.NutsSettings`): default
    the package's (``COMPONENTS_SAMPLER``); `noise_scale` the noise prior's (default: the
    components' own, 0.001).
    The compiled density is loaded before the clock starts.
    """
    from isbetter.cv.joint.compiled_backend import load_density
    from isbetter.cv.joint.model import joint_fit
    from isbetter.cv.joint.spec import JointPriors

    load_density()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = joint_fit(
            table,
            systems,
            rope=rope,
            priors=JointPriors(tails="components", noise_scale=noise_scale),
            draws=draws,
            tune=tune,
            chains=chains,
            rng=seed,
            **({} if nuts is None else {"nuts": nuts}),
        )
    elapsed = time.perf_counter() - t0
    return {"fit": fit, "sample_s": elapsed}


def pair_masses(
    fit: dict[str, Any], a: int, b: int, rope: float, seed: int, inner: int = 256
) -> np.ndarray:
    """Per posterior draw, the masses (a better, rope, b better) of the next data set.

    delta_next = (b_a - b_b) + sum_j w_j z_j, w_j = c_ab . loading_j (score units): the
    component with the largest |w_j| by its t CDF, the others by `inner` Monte Carlo draws.
    Returns ``(chains, draws, 3)``.
    """
    from isbetter.cv.joint.spec import contrast_basis

    joint = fit["fit"]
    h = contrast_basis(len(joint.systems))
    c = h[a] - h[b]
    centre = joint.effects[..., a] - joint.effects[..., b]
    w = np.einsum("d,cndj->cnj", c, joint.loading)
    nu = joint.nu
    shp = centre.shape
    w, nu, centre = w.reshape(-1, w.shape[-1]), nu.reshape(-1, nu.shape[-1]), centre.reshape(-1)
    top = np.abs(w).argmax(axis=1)
    rows = np.arange(w.shape[0])
    w_top, nu_top = np.abs(w[rows, top]), nu[rows, top]
    rng = np.random.default_rng(seed)
    if w.shape[1] == 1:
        rest = np.zeros((w.shape[0], 1))
    else:
        zs = rng.standard_t(nu[:, None, :], size=(w.shape[0], inner, w.shape[1]))
        mask = np.ones_like(w)
        mask[rows, top] = 0.0
        rest = np.einsum("nmj,nj->nm", zs, w * mask)
    loc = centre[:, None] + rest
    upper = special.stdtr(nu_top[:, None], (rope - loc) / w_top[:, None]).mean(axis=1)
    lower = special.stdtr(nu_top[:, None], (-rope - loc) / w_top[:, None]).mean(axis=1)
    masses = np.stack([1.0 - upper, upper - lower, lower], axis=-1)  # a better: delta > rope
    return masses.reshape(*shp, 3)


def identified_diagnostics(fit: dict[str, Any]) -> dict[str, Any]:
    """Return the fit's R-hat, ESS, divergences and trajectory lengths.

    The package diagnoses b, the smallest and largest nu and the pairs' scales:
    functionals that sign flips and permutations of the components leave alone.
    """
    from isbetter.inference.diagnostics import summary

    joint = fit["fit"]
    diag = joint.diagnostics
    stats = joint.idata.sample_stats
    post = joint.idata.posterior
    scales = np.sort(np.sqrt((joint.loading**2).sum(axis=-2)), axis=-1)  # sorted s_j
    per_variable: dict[str, Any] = {}
    for name, draws in (
        ("b", post["b"].to_numpy()),
        ("nu_range", post["nu_range"].to_numpy()),
        ("pair_scale", post["pair_scale"].to_numpy()),
        ("scale_sorted", scales),
    ):
        rhat, ess_bulk, _ = summary(draws.reshape(*draws.shape[:2], -1))
        per_variable[name] = {
            "rhat": [round(float(v), 3) for v in rhat],
            "ess_bulk": [round(float(v)) for v in ess_bulk],
        }
    per_variable["scale_sorted_median"] = [float(v) for v in np.median(scales, axis=(0, 1))]
    per_variable["chain_nu_range_median"] = (
        np.median(post["nu_range"].to_numpy(), axis=1).round(2).tolist()
    )
    per_variable.update(_geometry(joint))
    return {
        "per_variable": per_variable,
        "rhat_max": float(diag.r_hat_max),
        "ess_bulk_min": float(diag.ess_bulk_min),
        "ess_tail_min": float(diag.ess_tail_min),
        "divergences": int(diag.divergences),
        "mean_steps": float(stats["n_steps"].mean()) if "n_steps" in stats else -1.0,
        "step_size": float(stats["step_size"].mean()) if "step_size" in stats else -1.0,
        "mean_depth": float(stats["depth"].mean()) if "depth" in stats else -1.0,
        "at_max_depth": (
            float(stats["maxdepth_reached"].mean()) if "maxdepth_reached" in stats else -1.0
        ),
        "chain_mean_steps": stats["n_steps"].mean("draw").round(0).to_numpy().tolist(),
        "chain_divergences": stats["diverging"].sum("draw").to_numpy().tolist(),
    }


def _geometry(joint: Any) -> dict[str, Any]:
    """Where the narrowest component points, and where the divergent draws sit.

    ``narrow_cos`` is |cos| of the angle between the narrowest component's column of Q
    and the j48 - j48gr contrast (when both are fitted; sign- and label-free);
    ``narrow_log10_scale`` the log10 of the narrowest s_j (score units); for each, its
    R-hat, bulk ESS and per-chain medians, and the medians over the divergent draws.
    """
    from isbetter.cv.joint.spec import contrast_basis
    from isbetter.inference.diagnostics import summary

    loading = joint.loading
    norms = np.sqrt((loading**2).sum(axis=-2))  # (chains, draws, d): s_j
    narrow = norms.argmin(axis=-1)
    log_s = np.log10(np.take_along_axis(norms, narrow[..., None], -1)[..., 0])
    out: dict[str, Any] = {}
    series = {"narrow_log10_scale": log_s}
    systems = list(joint.systems)
    if "j48" in systems and "j48gr" in systems:
        h = contrast_basis(len(systems))
        c = (h[systems.index("j48")] - h[systems.index("j48gr")]) / np.sqrt(2.0)
        column = np.take_along_axis(loading, narrow[..., None, None], -1)[..., 0]
        column /= np.sqrt((column**2).sum(axis=-1, keepdims=True))
        series["narrow_cos"] = np.abs(column @ c)
    diverging = joint.idata.sample_stats["diverging"].to_numpy().astype(bool)
    for name, values in series.items():
        rhat, ess, _ = summary(values[..., None])
        out[name] = {
            "rhat": round(float(rhat[0]), 3),
            "ess_bulk": round(float(ess[0])),
            "chain_median": np.median(values, axis=1).round(4).tolist(),
            "divergent_median": float(np.median(values[diverging])) if diverging.any() else None,
        }
    return out


def read_uci() -> Any:
    """Return the UCI table the tests use."""
    from isbetter import read_scores

    return read_scores(UCI, dataset="dataset_id", system="classifier", score="accuracy")


def _fit(args: argparse.Namespace, table: Any, systems: tuple[str, ...]) -> dict[str, Any]:
    from isbetter.cv.joint.model import NutsSettings

    nuts = None
    if (args.mass_matrix, args.target_accept, args.max_depth) != ("diagonal", None, None):
        nuts = NutsSettings(
            mass_matrix=args.mass_matrix,
            **({} if args.target_accept is None else {"target_accept": args.target_accept}),
            max_depth=args.max_depth,
        )
    run = {name: getattr(args, name) for name in ("seed", "rope", "draws", "tune", "chains")}
    return fit_components(table, systems, nuts=nuts, noise_scale=args.noise_scale, **run)


def _model_data(args: argparse.Namespace, table: Any, systems: tuple[str, ...]) -> dict[str, Any]:
    """Return the package's model data of the components form of `systems`."""
    from isbetter.cv.joint.spec import JointPriors, prepare

    priors = JointPriors(tails="components", noise_scale=args.noise_scale)
    return prepare(table, systems, rope=args.rope, priors=priors).model_data(priors)


def _nu_sorted_median(fit: dict[str, Any]) -> list[float]:
    nu = fit["fit"].nu
    nu = nu.reshape(-1, nu.shape[-1])
    return [round(float(v), 2) for v in np.median(np.sort(nu, axis=1), axis=0)]


def run_pairs(args: argparse.Namespace) -> dict[str, Any]:
    """Fit (a): K = 2 UCI pairs against the pairwise hierarchical model (`--pairs`: some)."""
    from _joint_data import argmax_probabilities_and_mcse
    from isbetter.cv.hierarchical.model import hierarchical_test

    table = read_uci()
    rows = []
    pairs = list(itertools.combinations(table.systems, 2))
    if args.pairs:
        pairs = [tuple(p.split("/")) for p in args.pairs]
    for a, b in pairs:
        fit = _fit(args, table, (a, b))
        joint, joint_mcse = argmax_probabilities_and_mcse(
            pair_masses(fit, 0, 1, args.rope, args.seed)
        )
        pair = hierarchical_test(table.paired(a, b), rope=args.rope, rng=args.seed)
        chains = pair.idata.posterior.sizes["chain"]
        pairwise, pairwise_mcse = argmax_probabilities_and_mcse(
            pair._posterior().region_masses(args.rope).reshape(chains, -1, 3)
        )
        row = {
            "pair": f"{a}/{b}",
            "components": joint.round(4).tolist(),
            "components_mcse": joint_mcse.round(4).tolist(),
            "pairwise": pairwise.round(4).tolist(),
            "pairwise_mcse": pairwise_mcse.round(4).tolist(),
            "gap": float(np.abs(joint - pairwise).max()),
            "gap_mcse": float(np.hypot(joint_mcse, pairwise_mcse).max()),
            "sample_s": round(fit["sample_s"], 1),
            **identified_diagnostics(fit),
            "nu_median": float(np.median(fit["fit"].nu)),
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    return {"rows": rows, "worst_gap": max(r["gap"] for r in rows)}


def run_outlier(args: argparse.Namespace) -> dict[str, Any]:
    """Fit (b): test_one_outlying_data_set_leaves_p_best's data, with this model."""
    from _joint_data import score_table, study_scores

    scores = study_scores(np.random.default_rng(1), [0.0, 0.01, 0.02, 0.028], q=10, spread=0.004)
    moved = scores.copy()
    moved[0, 2] += 0.3
    out: dict[str, Any] = {}
    for name, arr in (("clean", scores), ("outlier", moved)):
        table = score_table(arr)
        fit = _fit(args, table, tuple(table.systems))
        e = fit["fit"].effects.reshape(-1, 4)
        p_best = np.bincount(e.argmax(axis=1), minlength=4) / e.shape[0]
        out[name] = {
            "p_best": p_best.round(4).tolist(),
            "nu_sorted_median": _nu_sorted_median(fit),
            "sample_s": round(fit["sample_s"], 1),
            **identified_diagnostics(fit),
        }
        print(name, json.dumps(out[name]), flush=True)
    out["shift_best"] = abs(out["outlier"]["p_best"][3] - out["clean"]["p_best"][3])
    return out


def run_uci5(args: argparse.Namespace) -> dict[str, Any]:
    """Fit (d): all five UCI classifiers in one model; every pair's next-data-set masses.

    Each pair's row has the R-hat and bulk ESS of its three masses per draw;
    ``masses_rhat_max`` and ``masses_ess_bulk_min`` are the worst over the pairs.
    """
    from _joint_data import argmax_probabilities_and_mcse
    from isbetter.inference.diagnostics import summary

    table = read_uci()
    systems = tuple(args.systems) if args.systems else tuple(table.systems)
    fit = _fit(args, table, systems)
    pairs = list(itertools.combinations(range(len(systems)), 2))
    b = fit["fit"].effects
    rows = []
    for a, c in pairs:
        masses = pair_masses(fit, a, c, args.rope, args.seed)
        rhat, ess, _ = summary(masses)  # the next data set's masses, per draw
        probs, mcse = argmax_probabilities_and_mcse(masses)
        rows.append(
            {
                "pair": f"{systems[a]}/{systems[c]}",
                "median_diff": float(np.median(b[..., a] - b[..., c])),
                "components": probs.round(4).tolist(),
                "components_mcse": mcse.round(4).tolist(),
                "mean_masses": masses.reshape(-1, 3).mean(axis=0).round(3).tolist(),
                "masses_rhat": rhat.round(3).tolist(),
                "masses_ess_bulk": ess.round(0).tolist(),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return {
        "rows": rows,
        "masses_rhat_max": max(max(r["masses_rhat"]) for r in rows),
        "masses_ess_bulk_min": min(min(r["masses_ess_bulk"]) for r in rows),
        "tune": fit["fit"].settings["tune"],
        "target_accept": fit["fit"].settings["target_accept"],
        "sample_s": round(fit["sample_s"], 1),
        "nu_sorted_median": _nu_sorted_median(fit),
        **identified_diagnostics(fit),
    }


def run_where(args: argparse.Namespace) -> dict[str, Any]:
    """Where each chain sits (`--systems`: the near-identical pair first).

    Per chain: the smallest component scale (score units) and its nu, how far its
    direction is from the first pair's contrast (1 - |cos|), the weights of that
    component on the data sets whose mean difference of the pair is exactly 0 and on the
    others, and the ratio of the fold noise's scale of the pair's contrast mean
    (the transform's diagonal) to that component's scale.
    """
    table = read_uci()
    systems = tuple(args.systems) if args.systems else ("j48", "j48gr", "nbc")
    fit = _fit(args, table, systems)
    joint = fit["fit"]
    post = joint.idata.posterior
    data = _model_data(args, table, systems)
    tied = np.abs(np.asarray(data["means"])[:, 0]) < 1e-12  # contrast 0: (s0 - s1) / sqrt 2
    noise = np.abs(np.asarray(data["transform"])[:, 0, 0])
    scales = np.sqrt((joint.loading**2).sum(axis=-2))  # score units
    small = scales.argmin(axis=-1)
    stats = joint.idata.sample_stats
    chains = []
    for ch in range(scales.shape[0]):
        pick = (np.arange(scales.shape[1]), small[ch])
        directions = post["directions"].to_numpy()[ch]
        lam = post["precision"].to_numpy()[ch].transpose(0, 2, 1)[pick]  # (draws, q)
        s_small = scales[ch][pick]
        row = {
            "chain": ch,
            "s_small_median": float(np.median(s_small)),
            "s_others_median": np.median(np.sort(scales[ch], -1)[:, 1:], 0).round(4).tolist(),
            "nu_small_median": round(float(np.median(joint.nu[ch][pick])), 2),
            "one_minus_cos_median": float(np.median(1.0 - np.abs(directions[:, 0, :][pick]))),
            "log10_weight_tied_q10_q50_q90": np.quantile(np.log10(lam[:, tied]), [0.1, 0.5, 0.9])
            .round(2)
            .tolist(),
            "log10_weight_others_q10_q50_q90": np.quantile(np.log10(lam[:, ~tied]), [0.1, 0.5, 0.9])
            .round(2)
            .tolist(),
            "noise_over_scale_min_median_max": (
                np.quantile(noise, [0.0, 0.5, 1.0]) / np.median(s_small / joint.data.scale)
            )
            .round(1)
            .tolist(),
            "mean_steps": float(stats["n_steps"][ch].mean()),
            "divergences": int(stats["diverging"][ch].sum()),
            "step_size": float(stats["step_size"][ch].mean()),
        }
        chains.append(row)
        print(json.dumps(row), flush=True)
    return {
        "systems": list(systems),
        "n_tied": int(tied.sum()),
        "chains": chains,
        "sample_s": round(fit["sample_s"], 1),
        **identified_diagnostics(fit),
    }


def run_raw(args: argparse.Namespace) -> dict[str, Any]:
    """Sample `--systems` with nutpie directly, keeping the unconstrained draws.

    The package's fits drop them; here they show the Gram-Schmidt matrix R, whose column
    norms the likelihood does not see (prior: spec.DIRECTION_DET_POWER): their R-hat, ESS,
    per-chain medians, and the medians over the divergent draws; and the log s_j.
    """
    from isbetter.cv.joint.compiled_backend import compiled_model
    from isbetter.cv.joint.model import COMPONENTS_SAMPLER
    from isbetter.cv.joint.spec import COMPONENT_SHEAR
    from isbetter.inference import libs
    from isbetter.inference.diagnostics import summary

    table = read_uci()
    systems = tuple(args.systems) if args.systems else tuple(table.systems)
    data = _model_data(args, table, systems)
    t0 = time.perf_counter()
    accept = COMPONENTS_SAMPLER.target_accept if args.target_accept is None else args.target_accept
    idata = libs.nutpie().sample(
        compiled_model(data),
        draws=COMPONENTS_SAMPLER.draws if args.draws is None else args.draws,
        tune=COMPONENTS_SAMPLER.tune if args.tune is None else args.tune,
        chains=args.chains,
        cores=2,
        seed=args.seed,
        progress_bar=False,
        target_accept=accept,
        low_rank_modified_mass_matrix=args.mass_matrix == "low_rank",
        store_unconstrained=True,
    )
    elapsed = time.perf_counter() - t0
    stats = idata.sample_stats
    x = stats["unconstrained_draw"].to_numpy()  # (chains, draws, n_dim)
    d, q = len(systems) - 1, len(data["means"])
    # the coordinates: d log(nu_j - 1), q xi_i, q d xi_ij, d u_j, R (the effects integrated out)
    raw = x[..., 2 * d + q + q * d :].reshape(*x.shape[:2], d, d)  # R, row by row
    if d == 1:  # no R: Q = (1)
        raw = np.ones((*x.shape[:2], 1, 1))
    norms = np.sqrt((raw**2).sum(axis=-2))  # column norms (chains, draws, d)
    nu = 1.0 + np.exp(x[..., :d])  # the sampled u_j = log s_j - c/2 log(nu_j/(nu_j + 2))
    log_scale = x[..., d + q + q * d : 2 * d + q + q * d]
    log_scale = log_scale + 0.5 * COMPONENT_SHEAR * np.log(nu / (nu + 2.0))
    diverging = stats["diverging"].to_numpy().astype(bool)
    out: dict[str, Any] = {"sample_s": round(elapsed, 1), "divergences": int(diverging.sum())}
    out["mean_steps"] = float(stats["n_steps"].mean())
    for name, values in (("r_column_norm", norms), ("log_scale", log_scale)):
        rhat, ess, _ = summary(values)
        out[name] = {
            "rhat": rhat.round(3).tolist(),
            "ess_bulk": ess.round(0).tolist(),
            "chain_median": np.median(values, axis=1).round(3).tolist(),
            "divergent_median": (
                np.median(values[diverging], axis=0).round(3).tolist() if diverging.any() else None
            ),
        }
    narrow = log_scale.argmin(axis=-1)
    narrow_norm = np.take_along_axis(norms, narrow[..., None], -1)[..., 0]
    out["narrow_r_norm_quantiles"] = np.quantile(narrow_norm, [0.01, 0.5, 0.99]).round(3).tolist()
    if diverging.any():
        out["narrow_r_norm_divergent"] = (
            np.quantile(narrow_norm[diverging], [0.1, 0.5, 0.9]).round(3).tolist()
        )
    print(json.dumps(out), flush=True)
    return out


def main() -> None:
    """Run one of the three measurements and write its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("pairs", "outlier", "uci5", "where", "raw"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--draws", type=int, default=None, help="default: the package's")
    parser.add_argument("--rope", type=float, default=0.01)
    parser.add_argument("--tune", type=int, default=None, help="default: the package's")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--pairs", nargs="*", help="pairs a/b for `pairs` (default: all ten)")
    parser.add_argument("--systems", nargs="*", help="systems for `uci5` (default: all five)")
    parser.add_argument(
        "--mass-matrix", default="diagonal", choices=("diagonal", "low_rank", "draw_variance")
    )
    parser.add_argument("--target-accept", type=float, default=None, help="default: the package's")
    parser.add_argument("--max-depth", type=int, default=None)
    parser.add_argument(
        "--noise-scale", type=float, default=None, help="JointPriors.noise_scale (default 0.001)"
    )
    parser.add_argument("--tag", default="", help="appended to the JSON's name")
    parser.add_argument("--out", type=Path, default=ROOT / "validation" / "results")
    args = parser.parse_args()
    run = {
        "pairs": run_pairs,
        "outlier": run_outlier,
        "uci5": run_uci5,
        "where": run_where,
        "raw": run_raw,
    }
    t0 = time.perf_counter()
    result = run[args.what](args)
    result["total_s"] = round(time.perf_counter() - t0, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    tag = "_compiled_subset" if args.what == "pairs" and args.pairs else ""
    if args.what in ("uci5", "where", "raw") and args.systems:
        tag = "_" + "_".join(args.systems)
    tag += f"_{args.tag}" if args.tag else ""
    path = args.out / f"joint_components_{args.what}{tag}_seed{args.seed}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(path, result.get("total_s"))


if __name__ == "__main__":
    main()
