# %% [markdown]
# # 05 · "Bizarre" measures: Keller, Mariéthoz & Bengio (2004) beside the Bayesian answer
#
# F1 and the detection cost function (DCF) are not averages over test examples, so the
# usual tests of a difference in error rate do not apply to them. Keller, Mariéthoz &
# Bengio (2004, *Significance tests for bizarre measures in 2-class classification
# tasks*, IDIAP-RR 04-34) propose
#
# * for **DCF**, an adapted proportion test: DCF is a weighted sum of an error rate on the
#   positives and one on the negatives, two independent proportions; pairing A and B
#   leaves only the documents on which they disagree in the variance (their eq. 9);
# * for **F1**, a **bootstrap percentile test**: resample the documents' eight joint events
#   (true class × decision of A × decision of B, their Table 1) and read the distribution
#   of ΔF1 off the resamples (eqs. 12–14).
#
# The paired Bayesian model of Zhang et al. (2016) answers the same questions from the
# same eight counts with a posterior. This notebook puts them side by side on the shipped
# **synthetic** test set `data/f1_example` (2 000 documents, four topics, three
# classifiers; see `data/README.md`), one topic against the rest, and then repeats the
# design of Keller et al.'s Section 5 experiment with a known truth. Their RCV1 data are
# not public, so their Table 3 is shown for context only.
#
# Orientation: Keller et al. write dF1 = F1(B) − F1(A); here δ = F1(A) − F1(B) and, for a
# cost, δ = DCF(B) − DCF(A): positive always means A is better.
#
# `ISBETTER_NOTEBOOK_QUICK=1`: fewer resamples and simulated test sets (CI).

# %%
import json
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy import stats

import isbetter
from isbetter.f1.baselines import bootstrap_test, dcf_proportion_test
from isbetter.f1.measures import dcf, f1
from isbetter.f1.paired import sample_delta
from isbetter.f1.power import JointDistribution

QUICK = os.environ.get("ISBETTER_NOTEBOOK_QUICK", "") not in ("", "0")
ROOT = Path(os.environ.get("ISBETTER_ROOT", "..")).resolve()  # the repository
PREDICTIONS = ROOT / "data" / "f1_example" / "predictions.csv"
RESAMPLES = 2_000 if QUICK else 10_000  # Keller et al. used M = 10 000
DRAWS = 10_000 if QUICK else 50_000
SUBSETS = 200 if QUICK else 1_000  # Keller et al.'s D_true sub-samples
SEED = 2004
RESULTS = {}  # the numbers the last cell prints as JSON (checked by tests/test_notebooks.py)
rng = np.random.default_rng(SEED)
print("quick settings" if QUICK else "full settings", "| isbetter", isbetter.__version__)

# %% [markdown]
# ## The eight joint events
#
# `science` against the rest, svm (A) against nb (B).

# %%
table = isbetter.read_predictions(PREDICTIONS, gold="gold", systems=["svm", "logreg", "nb"])
LABEL, A, B = "science", "svm", "nb"
counts = table.joint_counts(A, B, LABEL)
events = pd.DataFrame(
    [counts.pos, counts.neg],
    index=["positive (science)", "negative (other)"],
    columns=["A=1, B=1", "A=1, B=0", "A=0, B=1", "A=0, B=0"],
)
events

# %% [markdown]
# ## ΔF1: bootstrap percentile test and the Bayesian posterior
#
# Keller et al.'s confidence is the share of bootstrap replicates on one side of 0 (their
# eq. 13); their decision asks whether 0 lies outside the 95% percentile interval.

# %%
boot = bootstrap_test(counts, f1, resamples=RESAMPLES, rng=rng)
bayes_f1 = isbetter.compare_f1(table, system_a=A, system_b=B, classes=[LABEL], rope=0.05,
                               draws=DRAWS, baselines=isbetter.Baselines(resamples=RESAMPLES),
                               rng=SEED)
row = bayes_f1.row(LABEL)
side = "A" if boot.estimate > 0 else "B"
comparison = pd.DataFrame(
    {
        "bootstrap percentile (Keller et al.)": {
            "observed / posterior mean ΔF1": boot.estimate,
            "95% interval": f"[{boot.interval.low:+.4f}, {boot.interval.high:+.4f}] (percentile)",
            f"confidence / P({side} better)": 1 - boot.p_value / 2,
            "two-sided p": boot.p_value,
            "P(|δ| <= 0.05)": "—",
            "decision": "different" if boot.p_value < 0.05 else "not shown different",
        },
        "paired Bayesian (Zhang et al.)": {
            "observed / posterior mean ΔF1": row["mean"],
            "95% interval": f"[{row['interval_low']:+.4f}, {row['interval_high']:+.4f}] (HDI)",
            f"confidence / P({side} better)": row["p_above_0"] if side == "A" else row["p_below_0"],
            "two-sided p": "—",
            "P(|δ| <= 0.05)": row["p_rope"],
            "decision": row["decision"],
        },
    }
)
RESULTS["delta_f1_observed"] = boot.estimate
RESULTS["bootstrap_interval"] = [boot.interval.low, boot.interval.high]
RESULTS["bootstrap_p"] = boot.p_value
RESULTS["bayes_p_above_0"] = row["p_above_0"]
RESULTS["bayes_hdi"] = [row["interval_low"], row["interval_high"]]
comparison

# %% [markdown]
# Both see a clear difference. The bootstrap interval describes how ΔF1 would vary over
# test sets like this one; the HDI describes where the population difference probably is,
# and the ROPE adds the question the p-value cannot ask: is the difference large enough
# to matter?

# %%
ev = np.concatenate([counts.pos, counts.neg])
replicates = rng.multinomial(ev.sum(), ev / ev.sum(), size=RESAMPLES)


def delta_f1(e):
    """Keller et al.'s eq. (12), with our orientation F1(A) - F1(B)."""
    tp_a, fp_a = e[..., 0] + e[..., 1], e[..., 4] + e[..., 5]
    tp_b, fp_b = e[..., 0] + e[..., 2], e[..., 4] + e[..., 6]
    n_p = e[..., :4].sum(-1)
    return 2 * tp_a / (n_p + tp_a + fp_a) - 2 * tp_b / (n_p + tp_b + fp_b)


fig, ax = plt.subplots(figsize=(7, 3.5))
ax.hist(delta_f1(replicates), bins=60, density=True, alpha=0.5, label="bootstrap replicates (Keller Fig. 1)")
ax.hist(bayes_f1.draws(LABEL), bins=60, density=True, histtype="step", lw=1.5, label="paired posterior")
ax.axvline(0, color="k", lw=0.8)
ax.axvspan(-0.05, 0.05, color="orange", alpha=0.15, label="ROPE ±0.05")
ax.set_xlabel("ΔF1 = F1(svm) − F1(nb), class science")
ax.legend(fontsize="small", frameon=False)
plt.show()

# %% [markdown]
# ## DCF: the adapted proportion test and the Bayesian posterior
#
# A cost in the style of speaker verification (Keller et al.'s Section 3): a false
# negative costs 10, a false positive 1, and the prior probability of a positive is 0.5.
# Their eq. (8) assumes A and B independent; eq. (9) keeps only the documents on which they
# disagree.

# %%
COSTS = {"cost_fn": 10.0, "cost_fp": 1.0, "p_positive": 0.5}
measure = dcf(**COSTS)
cells_a, cells_b = counts.cells()  # (tp, fp, fn, tn) of A and of B
dcf_a, dcf_b = float(measure(*cells_a)), float(measure(*cells_b))
n_p, n_n = counts.pos.sum(), counts.neg.sum()
# eq. (8): the unpaired proportion test (assumes DCF_A and DCF_B independent)
fn_bar, fp_bar = (cells_a[2] + cells_b[2]) / 2, (cells_a[1] + cells_b[1]) / 2
sd8 = np.sqrt(2 * (COSTS["cost_fn"] ** 2 * COSTS["p_positive"] ** 2 * fn_bar / n_p**2 * (1 - fn_bar / n_p)
                   + COSTS["cost_fp"] ** 2 * (1 - COSTS["p_positive"]) ** 2 * fp_bar / n_n**2 * (1 - fp_bar / n_n)))
p8 = float(2 * stats.norm.sf(abs(dcf_b - dcf_a) / sd8))
p9 = dcf_proportion_test(counts, **COSTS)  # eq. (9), paired
bayes_dcf = isbetter.compare_f1(table, system_a=A, system_b=B, classes=[LABEL],
                                metric=isbetter.dcf(**COSTS), rope=0.05, draws=DRAWS,
                                baselines=isbetter.Baselines(resamples=RESAMPLES), rng=SEED)
drow = bayes_dcf.row(LABEL)
RESULTS["dcf"] = [dcf_a, dcf_b]
RESULTS["dcf_p_unpaired_eq8"] = p8
RESULTS["dcf_p_paired_eq9"] = p9
RESULTS["dcf_ptest_in_result"] = bayes_dcf.comparison(LABEL).summary().test("dcf_ptest").p_value
RESULTS["dcf_bayes"] = [drow["mean"], drow["interval_low"], drow["interval_high"], drow["p_above_0"]]
print(f"DCF svm {dcf_a:.4f}, nb {dcf_b:.4f}; δ = DCF(nb) − DCF(svm) = {dcf_b - dcf_a:+.4f}")
pd.Series(
    {"proportion test, eq. (8), unpaired": p8, "adapted proportion test, eq. (9), paired": p9},
    name="p-value",
).to_frame()

# %%
print(
    f"paired Bayesian: posterior mean δ {drow['mean']:+.4f}, 95% HDI "
    f"[{drow['interval_low']:+.4f}, {drow['interval_high']:+.4f}], P(svm better) {drow['p_above_0']:.4f}, "
    f"P(|δ| <= 0.05) {drow['p_rope']:.4f}, decision {drow['decision']}"
)

# %% [markdown]
# Pairing shrinks the variance to the disagreements, so eq. (9) gives a smaller p-value
# than eq. (8) for the same difference; the paired Bayesian posterior uses the same
# information and adds the size of the difference.
#
# ## Keller et al.'s Section 5, with a known truth
#
# Keller et al. checked the bootstrap against a large held-out pool: from one test set the
# bootstrap gives a confidence that B beats A; 1 000 sub-samples of the pool of the same
# size give the "true" frequency. Here the pool is a known joint distribution (the eight
# event rates of each pair and class of the shipped data), so the truth is exact: we draw
# one test set of the same size, run the bootstrap and the Bayesian model on it, and draw
# many more test sets to see how often A really comes out ahead. The bootstrap and the
# sub-sampling share estimate the same thing (how often A is ahead on a test set of this
# size); the Bayesian P(δ > 0) is the probability that A is better on the population.
# As in Keller et al.'s table, one test set per experiment: its confidence is itself noisy.

# %%
KELLER_TABLE3 = pd.DataFrame(
    {"bootstrap confidence": ["95.6% (F1_B > F1_A)", "54.2% (F1_B > F1_A)", "96.5% (F1_A > F1_B)"],
     "D_true sub-sampling": ["92.4%", "69.1%", "82.5%"]},
    index=["X", "Y", "Z"],
)
print("Keller et al. (2004), Table 3, RCV1 (their data; not reproducible here):")
display(KELLER_TABLE3)

# svm and logreg are nearly the same classifier: small true differences, as in Keller's X-Z
experiments = {"svm vs logreg, politics": ("svm", "logreg", "politics"),
               "svm vs logreg, science": ("svm", "logreg", "science"),
               "svm vs logreg, tech": ("svm", "logreg", "tech")}
rows = []
for name, (a, b, label) in experiments.items():
    c = table.joint_counts(a, b, label)
    n = int(c.pos.sum() + c.neg.sum())
    truth = JointDistribution(c.pos.sum() / n, c.pos / c.pos.sum(), c.neg / c.neg.sum(), name=name)
    one = truth.sample_counts(n, 1, rng)
    one = isbetter.JointCounts(one.pos[0], one.neg[0])
    b_one = bootstrap_test(one, f1, resamples=RESAMPLES, rng=rng)
    posterior = sample_delta(one, f1, draws=DRAWS, rng=rng)  # the exact paired posterior
    many = truth.sample_counts(n, SUBSETS, rng)
    a_cells, b_cells = many.cells()
    freq = float(np.mean(f1(*a_cells) > f1(*b_cells)))
    rows.append({"experiment": name, "N": n, "true δ": truth.true_delta(f1),
                 "bootstrap: P*(A better)": 1 - b_one.p_value / 2 if b_one.estimate > 0 else b_one.p_value / 2,
                 "Bayesian: P(δ > 0)": float(np.mean(posterior > 0)),
                 f"share of {SUBSETS} test sets with A ahead": freq})
section5 = pd.DataFrame(rows).set_index("experiment")
RESULTS["section5"] = section5.reset_index().values.tolist()
section5.round(4)

# %% [markdown]
# ## Numbers checked by the tests

# %% tags=results
print(json.dumps({"notebook": "05_keller_measures", "quick": QUICK, **RESULTS}))
