# %% [markdown]
# # 06 · A tagger study: four POS taggers on the five genres of the English Web Treebank
#
# Szymański & Gorman (2020, *Is the Best Better?*) rank six part-of-speech taggers by
# token, sentence and OOV accuracy over 20 × 10-fold cross-validation of two corpora, and
# read chains such as `TnT < Collins ≈ LAPOS ≈ Stanford < NLP4J < Flair` off the
# hierarchical model's pairwise probabilities. Their per-fold scores are not public, so we
# ran a study of the same kind ourselves, end to end, and ship its per-fold table:
#
# * **data**: the whole Universal Dependencies English Web Treebank (v2.15, CC BY-SA 4.0),
#   one data set per genre: answers, email, newsgroup, reviews, weblog (~255 k words);
# * **splits**: 3 runs × 10 folds by document (`isbetter.tagging.split`, seed 1; 80/10/10
#   train/dev/test as in the paper, a document never split across parts);
# * **taggers**, all trained here on each fold's train part: `mft` (most frequent tag of the
#   word; unknown words the commonest tag), `tnt` (NLTK's TnT, the paper's weakest, with a
#   suffix tagger for unknown words), `perceptron` (NLTK's averaged perceptron, 2 passes)
#   and `crf` (python-crfsuite, the usual word, affix, shape and neighbour features);
# * **scores** per fold: token, sentence and OOV accuracy (OOV: test words whose form never
#   occurs in that fold's training part), with `isbetter.tagging.read_study`.
#
# `studies/ewt_taggers/run_study.py` regenerates everything from the corpus;
# `data/ud_ewt_taggers/README.md` gives the command, the versions and the time it took.
#
# Contents: the scores, the three chains, the likelihood tables (the paper's Table 2), the
# triangles (its Figures 1–3), Friedman/Nemenyi and the joint model's P(best) beside them,
# and what one standard split with McNemar's test would have claimed.
#
# `ISBETTER_NOTEBOOK_QUICK=1` gives the small settings CI uses (4 chains × 1000 draws per
# fit); unset, each fit gets the model's defaults.

# %%
import json
import os
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

import isbetter
from isbetter.plots import plot_cd_diagram, plot_p_best, plot_triangle_grid
from isbetter.report import render
from isbetter.tagging import wilson_interval

warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
QUICK = os.environ.get("ISBETTER_NOTEBOOK_QUICK", "") not in ("", "0")
ROOT = Path(os.environ.get("ISBETTER_ROOT", "..")).resolve()  # the repository
DATA = ROOT / "data" / "ud_ewt_taggers"
MCMC = {"draws": 1000, "tune": 500, "chains": 4} if QUICK else {}
SEED = 1
METRICS = ("token_accuracy", "sentence_accuracy", "oov_accuracy")
TAGGERS = ("mft", "tnt", "perceptron", "crf")
RESULTS = {}  # the numbers the last cell prints as JSON (checked by tests/test_notebooks.py)
print("quick settings" if QUICK else "full settings", "| isbetter", isbetter.__version__)

# %% [markdown]
# ## The scores
#
# One row per (genre, tagger, run, fold): the three accuracies and the counts behind them.
# The mean over the 30 folds of each genre:

# %%
frame = pd.read_csv(DATA / "scores.csv")
print(len(frame), "rows:", frame["dataset"].nunique(), "genres ×", frame["system"].nunique(),
      "taggers ×", frame["run"].nunique(), "runs ×", frame["fold"].nunique(), "folds")
means = frame.groupby(["system", "dataset"])[list(METRICS)].mean().unstack("system")
means = means.reindex(columns=TAGGERS, level="system")
RESULTS["mean_token_accuracy"] = frame.groupby("system")["token_accuracy"].mean().to_dict()
means.round(4)

# %% [markdown]
# ## Every pair, three metrics: the hierarchical model
#
# `rank` fits the hierarchical model of Corani et al. (2017) to every pair of taggers on
# every metric (6 pairs × 3 metrics), ρ = 1/10 for 10-fold CV, the five genres as data sets.
#
# **The ROPE.** Szymański & Gorman set it to the width of a 95% confidence interval of
# their folds: 0.2 points of token accuracy (fewer than 210 tokens of a Penn Treebank fold)
# and 2–3 points of sentence and OOV accuracy. We keep their values, ±0.002 for token and
# ±0.02 for sentence and OOV accuracy, so our chains answer their question; their own
# advice is to choose it from what matters to a user (annotators' disagreement, say), not
# from a test's noise. Our folds are about 20 times smaller than theirs (≈ 5 000 test
# words), so one fold's 95% interval is wider than this ROPE (±0.006 at 95% accuracy):
# whether two taggers are practically equivalent is a question about the population of
# genres, not about one fold's noise.

# %%
table = isbetter.read_scores(DATA / "scores.csv", score=list(METRICS))
ROPE = {"token_accuracy": 0.002, "sentence_accuracy": 0.02, "oov_accuracy": 0.02}
with warnings.catch_warnings():
    warnings.simplefilter("ignore", isbetter.ConvergenceWarning)  # flags kept in the table
    # no `systems`: in their sorted order, as the README's command, the same fits (each
    # pair's seed follows its place among the pairs)
    ranking = isbetter.rank(table, rope=ROPE, jobs=1, progress=False, rng=SEED, **MCMC)

# %% [markdown]
# ## The three chains
#
# Szymański & Gorman's notation: every tagger in one line, worst first by expected rank,
# and between neighbours the relation the likelihood rule gives that pair (`<` the right
# one better, `≈` practically equivalent, `≲` better but within the margin of the ROPE).
# Beside each, the partial order read from all six pairs.

# %%
for metric in METRICS:
    print(f"{metric:18s} chain: {ranking.chain(metric)}")
    print(f"{'':18s} order: {ranking.order(metric)}")
RESULTS["chains"] = {m: ranking.chain(m) for m in METRICS}
RESULTS["orders"] = {m: ranking.order(m) for m in METRICS}

# %% [markdown]
# ## The likelihood table (the paper's Table 2)
#
# P(left better), P(practically equivalent), P(right better) of every pair on each metric:
# argmax counts of the next genre's difference, as the paper reads them.

# %%
pairs = ranking.to_frame()
pairs["metric"] = pairs["metric"].astype(str)
wide = pairs.pivot_table(
    index=["system_a", "system_b"], columns="metric",
    values=["p_a_better", "p_rope", "p_b_better"], sort=False,
)
table2 = pd.concat(
    {m: wide.xs(m, axis=1, level="metric")[["p_a_better", "p_rope", "p_b_better"]]
     for m in METRICS},
    axis=1,
)
RESULTS["table2"] = {
    f"{a} vs {b}": {m: [round(float(table2.loc[(a, b), (m, c)]), 4)
                        for c in ("p_a_better", "p_rope", "p_b_better")] for m in METRICS}
    for a, b in table2.index
}
table2.round(3)

# %%
print(render(ranking))

# %% [markdown]
# ## The triangles (the paper's Figures 1–3)
#
# One simplex per pair and metric: each point a posterior draw's masses of the next
# genre's difference (left better, ROPE, right better).

# %%
for metric in METRICS:
    fig = plot_triangle_grid(ranking, metric)
    fig.suptitle(f"{metric} (ROPE ±{ROPE[metric]:g})")
    plt.show()

# %% [markdown]
# ## Beside them: Friedman/Nemenyi, and the joint model's P(best)
#
# The frequentist answer readers of Demšar (2006) expect: mean ranks over the five genres,
# Friedman's test and Nemenyi's critical difference. With five data sets the CD is wide:
# the rank test sees five observations per tagger, where the hierarchical model sees 30
# folds of each genre and the sizes of the differences.
#
# The joint correlated model (`method="joint"`) fits all four taggers' per-fold scores in
# one posterior: P(each tagger is best on a new genre), expected ranks, and pairs that
# cannot contradict each other.

# %%
baselines = {m: ranking.baselines[m] for m in METRICS}
for metric in METRICS:
    b = baselines[metric]
    cd = b.critical_difference(0.05)
    ranks = ", ".join(f"{s} {r:.1f}" for s, r in sorted(b.mean_ranks.items(), key=lambda x: x[1]))
    print(f"{metric}: mean ranks {ranks}; Friedman p = {b.friedman.p_value:.2g}; "
          f"Nemenyi CD(0.05) = {cd.cd:.2f}, groups {[set(g) for g in cd.groups]}")
RESULTS["friedman_p"] = {m: float(baselines[m].friedman.p_value) for m in METRICS}

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore", isbetter.ConvergenceWarning)
    joint = isbetter.rank(table, rope=ROPE, method="joint", progress=False, rng=SEED, **MCMC)
p_best = pd.DataFrame({m: joint.joint[m].p_best for m in METRICS}).reindex(TAGGERS)
RESULTS["joint_p_best"] = {m: joint.joint[m].p_best for m in METRICS}
RESULTS["joint_chains"] = {m: joint.chain(m) for m in METRICS}
for metric in METRICS:
    print(f"{metric:18s} joint chain: {joint.chain(metric)}")
p_best.round(3)

# %%
fig, axes = plt.subplots(2, 3, figsize=(16, 9))
for i, metric in enumerate(METRICS):
    plot_cd_diagram(ranking, metric, ax=axes[0, i])
    axes[0, i].set_title(metric)
    plot_p_best(joint, metric, ax=axes[1, i])
fig.tight_layout()
plt.show()

# %% [markdown]
# ## What one standard split with McNemar's test would have claimed
#
# Gorman & Bedrick (2019) test one split: Wilson intervals for each tagger's token accuracy
# and the mid-p McNemar test on the tokens exactly one of two taggers gets right.
# `run_study.py` ran that test on every fold (`isbetter.tagging.read_study(...).baselines`,
# shipped as `mcnemar.csv`). On the first fold of the first run of each genre — *one*
# standard split per genre:

# %%
mcnemar = pd.read_csv(DATA / "mcnemar.csv")
first = frame[(frame["run"] == 1) & (frame["fold"] == 1)].copy()
first[["low", "high"]] = [
    wilson_interval(int(c), int(n)) for c, n in zip(first["correct_tokens"], first["tokens"])
]
first["accuracy [95% Wilson]"] = [
    f"{a:.4f} [{lo:.4f}, {hi:.4f}]"
    for a, lo, hi in zip(first["token_accuracy"], first["low"], first["high"])
]
print("token accuracy with its 95% Wilson interval, run 1 fold 1:")
print(first.pivot(index="dataset", columns="system", values="accuracy [95% Wilson]")
      [list(TAGGERS)].to_string())
one = mcnemar[(mcnemar["run"] == 1) & (mcnemar["fold"] == 1)]
one[["dataset", "system_a", "system_b", "only_a", "only_b", "p_value", "better"]].round(6)

# %% [markdown]
# And how often each claim comes up across all 150 folds: a single split is a draw from
# this distribution. Where McNemar is significant on nearly every fold, one split would
# have said "better" and the hierarchical model agrees; where it flips between folds, the
# claim depended on the split. McNemar tests a difference on *these* tokens, not a
# difference that matters: with thousands of tokens it declares differences far below
# the ROPE significant, which the Bayesian answer calls practically equivalent.

# %%
m = mcnemar.assign(
    a_better=mcnemar["significant"] & mcnemar["better"].eq(mcnemar["system_a"]),
    b_better=mcnemar["significant"] & mcnemar["better"].eq(mcnemar["system_b"]),
)
claims = m.groupby(["system_a", "system_b"], sort=False).agg(
    folds=("p_value", "size"), a_better=("a_better", "sum"), b_better=("b_better", "sum")
)
claims["no_difference"] = claims["folds"] - claims["a_better"] - claims["b_better"]
token = {}  # (a, b) -> relation of a to b and P(a better, ≈, b better), both ways round
MIRROR = str.maketrans("≫≪<>≳≲", "≪≫><≲≳")
for r in pairs[pairs["metric"] == "token_accuracy"].itertuples():
    ps = (r.p_a_better, r.p_rope, r.p_b_better)
    token[r.system_a, r.system_b] = (r.relation_symbol, ps)
    token[r.system_b, r.system_a] = (r.relation_symbol.translate(MIRROR), ps[::-1])
claims["hierarchical (token)"] = [token[k][0] for k in claims.index]
claims["P(>, ≈, <)"] = [tuple(round(float(p), 3) for p in token[k][1]) for k in claims.index]
RESULTS["mcnemar_claims"] = {
    f"{a} vs {b}": [int(r["a_better"]), int(r["b_better"]), int(r["no_difference"])]
    for (a, b), r in claims.iterrows()
}
claims

# %% [markdown]
# The pair on which one split's verdict depends most on the split, said in words:

# %%
split_dependent = claims.assign(
    minority=claims[["a_better", "b_better", "no_difference"]].apply(
        lambda r: r.sum() - r.max(), axis=1
    )
).sort_values("minority", ascending=False)
(a, b), row = next(split_dependent.iterrows())
print(
    f"{a} vs {b}: on {row['folds']} single splits McNemar says {a} better {row['a_better']} "
    f"times, {b} better {row['b_better']} times and no difference {row['no_difference']} "
    f"times; over all folds and genres the hierarchical model says {a} "
    f"{row['hierarchical (token)']} {b} with P(>, ≈, <) = {row['P(>, ≈, <)']}."
)

# %% [markdown]
# ## Numbers checked by the tests

# %% tags=results
print(json.dumps({"notebook": "06_tagger_study", "quick": QUICK, **RESULTS}))
