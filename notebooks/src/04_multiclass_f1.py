# %% [markdown]
# # 04 · Multi-class: micro- and macro-averaged F1, flat and hierarchical models
#
# A single-label classifier over M classes is often summarised by one number: the
# **micro**-averaged F1 (pool the counts of all classes; for single-label data it equals
# accuracy) or the **macro**-averaged F1 (mean of the per-class F1). Zhang, Wang, Zhao &
# Wang (2015, *A Bayesian hierarchical model for comparing average F1 scores*, ICDM)
# model the uncertainty of both; this notebook compares three models of the same test set:
#
# * **paired (flat)**: an exact Dirichlet posterior over the M³ joint outcomes
#   (true class, prediction of A, prediction of B) — it uses that A and B saw the same
#   documents;
# * **unpaired (flat)**: one exact Dirichlet posterior per confusion matrix;
# * **hierarchical (ICDM 2015)**: each confusion-matrix row θ_j ~ Dirichlet tied by an
#   overall tendency η of predicting correctly, fitted with MCMC (unpaired, as in the paper).
#
# Data: the shipped **synthetic** 20-class test set `data/f1_20class` (7 532 documents,
# the size of the 20 Newsgroups test split the paper uses; see `data/README.md`), so
# there are no published numbers to reproduce; the observed averages are checked against a
# direct computation instead.
#
# `ISBETTER_NOTEBOOK_QUICK=1`: fewer draws and a short MCMC run (CI).

# %%
import json
import os
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import isbetter
from isbetter.report import render

warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
QUICK = os.environ.get("ISBETTER_NOTEBOOK_QUICK", "") not in ("", "0")
ROOT = Path(os.environ.get("ISBETTER_ROOT", "..")).resolve()  # the repository
PREDICTIONS = ROOT / "data" / "f1_20class" / "predictions.csv"
DRAWS = 5_000 if QUICK else 50_000
QUICK_MCMC = {"draws": 1_000, "sampling": isbetter.Sampling(tune=300, chains=2)}
MCMC = QUICK_MCMC if QUICK else {"draws": 8_000}
SEED = 2015
RESULTS = {}  # the numbers the last cell prints as JSON (checked by tests/test_notebooks.py)
print("quick settings" if QUICK else "full settings", "| isbetter", isbetter.__version__)

# %%
predictions = isbetter.read_predictions(PREDICTIONS, gold="gold", systems=["svm", "nb"])
df = pd.read_csv(PREDICTIONS)
print(len(df), "documents,", df["gold"].nunique(), "classes; class shares from",
      f"{df['gold'].value_counts(normalize=True).min():.3f} to {df['gold'].value_counts(normalize=True).max():.3f}")
print("accuracy: svm %.4f, nb %.4f" % ((df["svm"] == df["gold"]).mean(), (df["nb"] == df["gold"]).mean()))

# %% [markdown]
# ## Three models of the same test set

# %%
common = dict(system_a="svm", system_b="nb", rope=0.01, rng=SEED)
paired = isbetter.compare_f1(predictions, model="paired", draws=DRAWS,
                             baselines=isbetter.Baselines(resamples=2_000), **common)
unpaired = isbetter.compare_f1(predictions, model="unpaired", draws=DRAWS, baselines=False, **common)
with warnings.catch_warnings():
    if QUICK:  # a short run; the diagnostics stay in the result
        warnings.simplefilter("ignore", isbetter.ConvergenceWarning)
    icdm = isbetter.compare_f1(predictions, model="hierarchical", baselines=False, **MCMC, **common)
MODELS = {"paired (flat)": paired, "unpaired (flat)": unpaired, "hierarchical (ICDM)": icdm}
print("ICDM fit:", icdm.diagnostics.line())

# %% [markdown]
# ## Micro and macro rows side by side
#
# ROPE ±0.01: on a test set of 7 500 documents a difference of one point of F1 is the
# smallest one worth reporting here.

# %%
rows = []
for name, res in MODELS.items():
    for avg in ("micro", "macro"):
        r = res.row(avg)
        rows.append({
            "model": name, "average": avg, "F1 svm": r["score_a"], "F1 nb": r["score_b"],
            "mean δ": r["mean"], "sd": r["sd"], "HDI low": r["interval_low"],
            "HDI high": r["interval_high"], "P(δ in ROPE)": r["p_rope"], "decision": r["decision"],
        })
averages = pd.DataFrame(rows).set_index(["average", "model"]).sort_index()
RESULTS["averages"] = {
    f"{avg}|{model}": [float(v) for v in averages.loc[(avg, model), ["F1 svm", "F1 nb", "mean δ", "sd"]]]
    for avg, model in averages.index
}
averages.round(4)

# %% [markdown]
# All three agree on the observed averages (the first two columns are the test set's own
# F1s) and on the direction. They differ in the **width** of the posterior: the paired
# model knows that most documents are classified alike by both systems, so its posterior of
# δ is narrower than the unpaired ones. The hierarchical model's shrinkage of the per-class
# rows towards η moves the macro average a little towards the pooled behaviour.

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 4))
for ax, avg in zip(axes, ("micro", "macro")):
    for name, res in MODELS.items():
        d = res.draws(avg)
        ax.hist(d, bins=80, density=True, histtype="step", lw=1.4, label=f"{name}: sd {d.std():.4f}")
    ax.axvspan(-0.01, 0.01, color="orange", alpha=0.2, label="ROPE ±0.01")
    ax.set_title(f"{avg}-averaged F1: svm − nb")
    ax.set_xlabel("δ")
    ax.legend(fontsize="small", frameon=False)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## Per class: the flat binary model against the hierarchical one
#
# The paired model treats each class on its own (one-vs-rest) and uses the pairing; the
# ICDM model ties the classes together through η but ignores the pairing, so its per-class
# intervals are wider. With hundreds of documents per class its shrinkage through η is
# slight: the two means nearly coincide.

# %%
classes = [c for c in paired.classes if c not in ("macro", "micro")]
per_class = pd.DataFrame({
    "n": [paired.row(c)["n_positive"] for c in classes],
    "observed δ": [paired.row(c)["observed"] for c in classes],
    "paired mean": [paired.row(c)["mean"] for c in classes],
    "paired sd": [paired.row(c)["sd"] for c in classes],
    "ICDM mean": [icdm.row(c)["mean"] for c in classes],
    "ICDM sd": [icdm.row(c)["sd"] for c in classes],
}, index=pd.Index(classes, name="class"))
fig, ax = plt.subplots(figsize=(10, 3.5))
x = np.arange(len(classes))
ax.errorbar(x - 0.15, per_class["paired mean"], 1.96 * per_class["paired sd"], fmt="o", ms=3, label="paired (binary, per class)")
ax.errorbar(x + 0.15, per_class["ICDM mean"], 1.96 * per_class["ICDM sd"], fmt="s", ms=3, label="hierarchical (ICDM)")
ax.plot(x, per_class["observed δ"], "kx", label="observed")
ax.axhspan(-0.01, 0.01, color="orange", alpha=0.2)
ax.set_xticks(x, classes, fontsize="small")
ax.set_ylabel("δ = F1(svm) − F1(nb)")
ax.legend(fontsize="small", frameon=False)
plt.show()
per_class.round(4)

# %% [markdown]
# The full report of the hierarchical fit (per-class rows, macro and micro, diagnostics,
# signature):

# %%
print(render(icdm))

# %% [markdown]
# ## Numbers checked by the tests

# %% tags=results
print(json.dumps({"notebook": "04_multiclass_f1", "quick": QUICK, **RESULTS}))
