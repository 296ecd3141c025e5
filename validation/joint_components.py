r"""Prototype: the joint model with independent-component Student-t deviations.

Not the package's model (issue 29 item 1; ``docs/joint_prior.md``, "Independent
components"). The joint model's likelihood is kept exactly (the fold effects and the
noise covariance integrated out, the contrasts of each data set's deviations sampled
as :math:`\tilde u_i = \bar z_i - \beta - T_i\eta_i`, :meth:`JointData.model_data`);
only the law of the deviations changes. With :math:`d = K - 1`,

.. math::

    \tilde u_i = L z_i, \quad L = U \operatorname{diag}(s), \quad
    z_{ij} \sim t_{\nu_j}(0, 1) \text{ independent},

so :math:`p(\tilde u_i) = |\det L|^{-1} \prod_j t_{\nu_j}((L^{-1}\tilde u_i)_j)`, no
latent weights. Priors: each column :math:`u_j = v_j/|v_j|`, :math:`v_j \sim N(0, I_d)`
(uniform directions), :math:`s_j \sim` half-:math:`t_2(0, A)` (Huang and Wand's
marginal of a contrast's sd, A from the robust spread, as ``JointPriors(spread_prior=
"huang-wand")``), :math:`\nu_j - 1 \sim \operatorname{Gamma}(\alpha, \beta)`,
:math:`\alpha \sim U(1, 2)`, :math:`\beta \sim U(0.01, 0.1)` integrated out per
component (the pairwise model's prior of its one :math:`\nu`). At K = 2 this is the
shared-:math:`\nu` Huang-Wand model exactly (:math:`\tilde u_i = s z_i`, a
:math:`t_\nu(0, s)`), hence Corani's model up to the stated prior differences.

Usage (each writes a JSON of numbers under ``--out``)::

    nice -n 10 python validation/joint_components.py pairs     # (a) ten K = 2 UCI pairs
    nice -n 10 python validation/joint_components.py outlier   # (b) K = 4, one outlier
    nice -n 10 python validation/joint_components.py uci5      # (d) K = 5 UCI pair table
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
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
ALPHA_NODES = 12


def _nu_prior(x: Any, data: dict[str, Any]) -> Any:
    """Log prior of nu - 1 = x (a vector), alpha and beta integrated out per component."""
    import pytensor.tensor as pt

    t, weight = np.polynomial.legendre.leggauss(ALPHA_NODES)
    alpha = data["alpha_lo"] + (data["alpha_hi"] - data["alpha_lo"]) * (t + 1.0) / 2.0
    lo = data["beta_lo"] * x[:, None]
    hi = data["beta_hi"] * x[:, None]
    shape = alpha[None, :] + 1.0
    mass = pt.switch(
        lo > shape,
        pt.gammaincc(shape, lo) - pt.gammaincc(shape, hi),
        pt.gammainc(shape, hi) - pt.gammainc(shape, lo),
    )
    density = (weight[None, :] / 2.0 * alpha[None, :] * mass).sum(axis=1) / (
        x**2 * (data["beta_hi"] - data["beta_lo"])
    )
    return pt.log(density).sum()


def _gram_schmidt(raw: Any, d: int) -> Any:
    """Return the orthonormal columns of `raw` (d x d) by Gram-Schmidt, written out."""
    import pytensor.tensor as pt

    columns: list[Any] = []
    for j in range(d):
        v = raw[:, j]
        for u in columns:
            v = v - pt.dot(u, v) * u
        columns.append(v / pt.sqrt(pt.square(v).sum()))
    return pt.stack(columns, axis=1)


def build_model(q: int, k: int, orthogonal: bool = True) -> Any:
    """Return the PyMC model of the independent-component joint model (q data sets, K systems).

    `orthogonal`: the loading L = Q diag(s) with Q orthogonal (Gram-Schmidt of a Gaussian
    matrix, Haar); else unit columns at free angles (a curved ridge where the data are
    near Gaussian: NUTS's trajectories hit the depth limit).
    """
    import pymc as pm
    import pytensor.tensor as pt

    from isbetter.cv.joint.spec import contrast_basis

    d = k - 1
    basis = contrast_basis(k)
    coords = {
        "dataset": np.arange(q),
        "system": np.arange(k),
        "contrast": np.arange(d),
        "component": np.arange(d),
    }
    with pm.Model(coords=coords) as model:
        data = {
            "means": pm.Data("means", np.zeros((q, d)), dims=("dataset", "contrast")),
            "transform": pm.Data("transform", np.tile(np.eye(d), (q, 1, 1))),
            "power": pm.Data("power", np.full(q, 6.0), dims="dataset"),
        }
        for name, value in {
            "const": 0.0,
            "effect_hi": 1.0,
            "half_t_scale": 1.0,
            "alpha_lo": 1.0,
            "alpha_hi": 2.0,
            "beta_lo": 0.01,
            "beta_hi": 0.1,
        }.items():
            data[name] = pm.Data(name, value)
        x = pm.HalfFlat("nu_minus_one", dims="component")
        pm.Potential("nu_prior", _nu_prior(x, data))
        nu = pm.Deterministic("nu", x + 1.0, dims="component")
        beta = pm.Uniform(
            "effect_coords", lower=-data["effect_hi"], upper=data["effect_hi"], dims="contrast"
        )
        pm.Deterministic("b", pt.dot(basis, beta), dims="system")
        eta = pm.Flat("eta", dims=("dataset", "contrast"))
        shift = (data["transform"] * eta[:, None, :]).sum(axis=-1)
        dev = pm.Deterministic(
            "deviations", data["means"] - beta[None, :] - shift, dims=("dataset", "contrast")
        )
        s = pm.HalfStudentT("comp_scale", nu=2.0, sigma=data["half_t_scale"], dims="component")
        if d == 1:
            directions = pt.ones((1, 1))
        else:
            raw = pm.Normal("direction_raw", 0.0, 1.0, dims=("contrast", "component"))
            if orthogonal:  # Gram-Schmidt: Q is Haar-distributed, L L' = Q diag(s^2) Q'
                directions = _gram_schmidt(raw, d)
            else:  # unit columns, free angles
                directions = raw / pt.sqrt(pt.square(raw).sum(axis=0, keepdims=True))
        loading = pm.Deterministic(
            "loading", directions * s[None, :], dims=("contrast", "component")
        )
        z = pt.linalg.solve(loading, dev.T).T  # (q, d)
        log_det = pt.log(pt.abs(pt.linalg.det(loading)))
        t_logp = pm.logp(pm.StudentT.dist(nu=nu[None, :], mu=0.0, sigma=1.0), z).sum()
        pm.Potential("deviation_prior", t_logp - q * log_det)
        power = data["power"]
        loglik = data["const"] - (power * pt.log1p(pt.square(eta).sum(axis=-1) / (2 * power))).sum()
        pm.Potential("loglik", loglik)
    return model


def model_data(table: Any, systems: tuple[str, ...]) -> tuple[dict[str, Any], Any]:
    """Return the model's data for `systems` of `table` (the Huang-Wand form's settings)."""
    from isbetter.cv.joint.spec import JointPriors, prepare

    priors = JointPriors(spread_prior="huang-wand")
    prepared = prepare(table, systems, priors=priors)
    base = prepared.model_data(priors)
    data = {
        name: base[name]
        for name in ("means", "transform", "power", "const", "effect_hi")
        + ("alpha_lo", "alpha_hi", "beta_lo", "beta_hi")
    }
    data["half_t_scale"] = np.asarray(math.sqrt(prepared.spread_var))  # A, scaled units
    return data, prepared


class Fitter:
    """One compiled model per shape, refitted with new data."""

    def __init__(self, orthogonal: bool = True) -> None:
        self.compiled: dict[tuple[int, int], Any] = {}
        self.orthogonal = orthogonal

    def fit(
        self,
        table: Any,
        systems: tuple[str, ...],
        *,
        seed: int,
        draws: int = 2000,
        tune: int = 1000,
        chains: int = 4,
    ) -> dict[str, Any]:
        """Sample the posterior of `systems` of `table`; return it with timings."""
        import nutpie
        import pymc as pm

        data, prepared = model_data(table, systems)
        shape = (prepared.n_datasets, prepared.n_systems)
        t0 = time.perf_counter()
        if shape not in self.compiled:
            model = build_model(*shape, orthogonal=self.orthogonal)
            with model:
                pm.set_data(data)
            self.compiled[shape] = nutpie.compile_pymc_model(model, backend="numba")
            compiled = self.compiled[shape]
        else:
            compiled = self.compiled[shape].with_data(**data)
        t1 = time.perf_counter()
        idata = nutpie.sample(
            compiled,
            draws=draws,
            tune=tune,
            chains=chains,
            cores=2,
            seed=seed,
            progress_bar=False,
            target_accept=0.9,
        )
        t2 = time.perf_counter()
        return {"idata": idata, "prepared": prepared, "compile_s": t1 - t0, "sample_s": t2 - t1}


def pair_masses(
    fit: dict[str, Any], a: int, b: int, rope: float, seed: int, inner: int = 256
) -> np.ndarray:
    """Per posterior draw, the masses (a better, rope, b better) of the next data set.

    delta_next = (b_a - b_b) + sum_j w_j z_j, w_j = c_ab . loading_j (score units): the
    component with the largest |w_j| by its t CDF, the others by `inner` Monte Carlo draws.
    Returns ``(chains, draws, 3)``.
    """
    from isbetter.cv.joint.spec import contrast_basis

    post = fit["idata"].posterior
    prepared = fit["prepared"]
    scale = prepared.scale
    k = prepared.n_systems
    h = contrast_basis(k)
    c = h[a] - h[b]
    centre = (post["b"].to_numpy()[..., a] - post["b"].to_numpy()[..., b]) * scale
    loading = post["loading"].to_numpy() * scale  # (chains, draws, d, d)
    w = np.einsum("d,cndj->cnj", c, loading)
    nu = post["nu"].to_numpy()
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


def argmax_probs(masses: np.ndarray) -> np.ndarray:
    """Return the fraction of draws in which each region is the most probable (as published)."""
    flat = masses.reshape(-1, 3)
    return np.bincount(flat.argmax(axis=1), minlength=3) / flat.shape[0]


def identified_diagnostics(fit: dict[str, Any], pairs: list[tuple[int, int]]) -> dict[str, float]:
    """Return R-hat and bulk ESS of functionals the components' symmetries leave alone.

    Sign flips, permutations and rotations of the components leave them alone: the
    effects b, every pair's scale sqrt(c' L L' c), the smallest and largest nu.
    """
    import arviz as az
    import xarray as xr

    from isbetter.cv.joint.spec import contrast_basis

    post = fit["idata"].posterior
    k = fit["prepared"].n_systems
    h = contrast_basis(k)
    loading = post["loading"].to_numpy()
    scales = []
    for a, b in pairs:
        w = np.einsum("d,cndj->cnj", h[a] - h[b], loading)
        scales.append(np.sqrt((w**2).sum(axis=-1)))
    ds = xr.Dataset(
        {
            "b": post["b"],
            "pair_scale": (("chain", "draw", "pair"), np.stack(scales, axis=-1)),
            "nu_min": (("chain", "draw"), post["nu"].to_numpy().min(axis=-1)),
            "nu_max": (("chain", "draw"), post["nu"].to_numpy().max(axis=-1)),
        }
    )
    rhat = az.rhat(ds)
    ess = az.ess(ds, method="bulk")
    out = {f"rhat_{v}": float(rhat[v].max()) for v in ds.data_vars}
    out.update({f"ess_{v}": float(ess[v].min()) for v in ds.data_vars})
    stats = fit["idata"].sample_stats
    out["divergences"] = int(stats["diverging"].sum())
    out["mean_steps"] = float(stats["n_steps"].mean()) if "n_steps" in stats else -1.0
    out["step_size"] = float(stats["step_size"].mean()) if "step_size" in stats else -1.0
    return out


def read_uci() -> Any:
    """Return the UCI table the tests use."""
    from isbetter import read_scores

    return read_scores(UCI, dataset="dataset_id", system="classifier", score="accuracy")


def run_pairs(args: argparse.Namespace) -> dict[str, Any]:
    """Fit (a): the ten K = 2 UCI pairs against the pairwise hierarchical model."""
    from isbetter.cv.hierarchical.model import hierarchical_test

    table = read_uci()
    fitter = Fitter(orthogonal=not args.free_angles)
    rows = []
    for a, b in itertools.combinations(table.systems, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = fitter.fit(
                table, (a, b), seed=args.seed, draws=args.draws, tune=args.tune, chains=args.chains
            )
        joint = argmax_probs(pair_masses(fit, 0, 1, args.rope, args.seed))
        pair = hierarchical_test(table.paired(a, b), rope=args.rope, rng=args.seed)
        pairwise = np.array([pair.p_a_better, pair.p_rope, pair.p_b_better])
        row = {
            "pair": f"{a}/{b}",
            "components": joint.round(4).tolist(),
            "pairwise": pairwise.round(4).tolist(),
            "gap": float(np.abs(joint - pairwise).max()),
            "compile_s": round(fit["compile_s"], 1),
            "sample_s": round(fit["sample_s"], 1),
            **identified_diagnostics(fit, [(0, 1)]),
            "nu_median": float(np.median(fit["idata"].posterior["nu"].to_numpy())),
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
    fitter = Fitter(orthogonal=not args.free_angles)
    out: dict[str, Any] = {}
    for name, arr in (("clean", scores), ("outlier", moved)):
        table = score_table(arr)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = fitter.fit(
                table,
                tuple(table.systems),
                seed=args.seed,
                draws=args.draws,
                tune=args.tune,
                chains=args.chains,
            )
        e = fit["idata"].posterior["b"].to_numpy().reshape(-1, 4)
        p_best = np.bincount(e.argmax(axis=1), minlength=4) / e.shape[0]
        nu = fit["idata"].posterior["nu"].to_numpy().reshape(-1, 3)
        out[name] = {
            "p_best": p_best.round(4).tolist(),
            "nu_sorted_median": np.median(np.sort(nu, axis=1), axis=0).round(2).tolist(),
            "compile_s": round(fit["compile_s"], 1),
            "sample_s": round(fit["sample_s"], 1),
            **identified_diagnostics(fit, list(itertools.combinations(range(4), 2))),
        }
        print(name, json.dumps(out[name]), flush=True)
    out["shift_best"] = abs(out["outlier"]["p_best"][3] - out["clean"]["p_best"][3])
    return out


def run_uci5(args: argparse.Namespace) -> dict[str, Any]:
    """Fit (d): all five UCI classifiers in one model; every pair's next-data-set masses."""
    table = read_uci()
    systems = tuple(table.systems)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = Fitter(orthogonal=not args.free_angles).fit(
            table, systems, seed=args.seed, draws=args.draws, tune=args.tune, chains=args.chains
        )
    pairs = list(itertools.combinations(range(len(systems)), 2))
    post = fit["idata"].posterior
    b = post["b"].to_numpy() * fit["prepared"].scale
    rows = []
    for a, c in pairs:
        masses = pair_masses(fit, a, c, args.rope, args.seed)
        rows.append(
            {
                "pair": f"{systems[a]}/{systems[c]}",
                "median_diff": float(np.median(b[..., a] - b[..., c])),
                "components": argmax_probs(masses).round(3).tolist(),
                "mean_masses": masses.reshape(-1, 3).mean(axis=0).round(3).tolist(),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    nu = post["nu"].to_numpy().reshape(-1, len(systems) - 1)
    return {
        "rows": rows,
        "compile_s": round(fit["compile_s"], 1),
        "sample_s": round(fit["sample_s"], 1),
        "nu_sorted_median": np.median(np.sort(nu, axis=1), axis=0).round(2).tolist(),
        **identified_diagnostics(fit, pairs),
    }


def main() -> None:
    """Run one of the three measurements and write its JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("pairs", "outlier", "uci5"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--rope", type=float, default=0.01)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument(
        "--free-angles",
        action="store_true",
        help="unit columns at free angles instead of an orthogonal loading",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "validation" / "results")
    args = parser.parse_args()
    run = {"pairs": run_pairs, "outlier": run_outlier, "uci5": run_uci5}[args.what]
    t0 = time.perf_counter()
    result = run(args)
    result["total_s"] = round(time.perf_counter() - t0, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    tag = "_free" if args.free_angles else ""
    path = args.out / f"joint_components_{args.what}{tag}_seed{args.seed}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(path, result.get("total_s"))


if __name__ == "__main__":
    main()
