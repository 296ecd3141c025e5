# %% [markdown]
# # 02 · Ranking five classifiers into a partial order
#
# Szymański & Gorman (2020, *Is the Best Better?*, EMNLP) rank six POS taggers by comparing
# every pair with the hierarchical model of Corani et al. (2017) and reading a **partial
# order** off the pairwise probabilities, e.g. `TnT < Collins ≈ LAPOS ≈ Stanford < NLP4J <
# Flair`. Their per-fold data are not public; here the same analysis runs on the five UCI
# classifiers of Benavoli et al. (2017) — 54 data sets × 10 runs × 10 folds — for which
# Corani et al. published three of the pairs.
#
# Contents: the pairwise table (their Table 2), the partial order and its Hasse diagram,
# the grid of triangles (their Figs. 1–3), how the reading **rule**, the **threshold**
# and the **ROPE** change the order, the paper's **chain**, and the **joint model** of all
# five classifiers (P(best), rank intervals, coherent pairs).
#
# `ISBETTER_NOTEBOOK_QUICK=1` gives the small settings CI uses (4 chains × 1000 draws per
# pair); unset, every pair gets the model's defaults (4 chains × 2000 draws). The joint
# model always runs at its own defaults (shorter chains do not meet its convergence rule).

# %%
import json
import os
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

import isbetter
from isbetter.plots import plot_hasse, plot_pairwise_heatmap, plot_triangle_grid
from isbetter.report import render

warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
QUICK = os.environ.get("ISBETTER_NOTEBOOK_QUICK", "") not in ("", "0")
ROOT = Path(os.environ.get("ISBETTER_ROOT", "..")).resolve()  # the repository
DATA = ROOT / "data" / "uci_benavoli2017"
REFERENCE = pd.read_csv(ROOT / "tests" / "reference" / "reference_values.csv").set_index(
    "case_id"
)
MCMC = {"draws": 1000, "tune": 500, "chains": 4} if QUICK else {}
SEED = 1
ROPE = 0.01
RESULTS = {}  # the numbers the last cell prints as JSON (checked by tests/test_notebooks.py)
print("quick settings" if QUICK else "full settings", "| isbetter", isbetter.__version__)

# %% [markdown]
# ## Every pair, one model
#
# `rank` compares the 10 pairs with the hierarchical model (ROPE ±0.01 accuracy). With
# `jobs=1` the pairs run in this process one after the other and share one compiled model
# (54 data sets); the default runs them in parallel processes, and `executor=` takes a Dask
# client. Each pair's seed is derived from the one seed and the pair's names, so the numbers
# do not depend on where the pairs ran.
#
# Two pairs are near-identical classifiers (aode/hnb, j48/j48gr): all their draws put the
# next data set in the ROPE, and the effective-sample-size rule flags them; the flags are
# kept in the pairwise table.

# %%
table = isbetter.read_scores(
    DATA / "uci_cv_accuracy_long.csv", dataset="dataset_id", system="classifier", score="accuracy"
)
SYSTEMS = ("nbc", "aode", "hnb", "j48", "j48gr")


def ranking_at(rope, systems=SYSTEMS):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", isbetter.ConvergenceWarning)  # flags kept in the table
        return isbetter.rank(
            table, systems=systems, rope=rope, jobs=1, progress=False, rng=SEED, **MCMC
        )


ranking = ranking_at(ROPE)
print(ranking.order())

# %% [markdown]
# ## The pairwise table (Szymański & Gorman's Table 2)
#
# One row per pair: P(A better), P(practically equivalent), P(B better) by argmax counting,
# and the relation read by the **likelihood** rule (the most probable of the three, as they
# read their Table 2). Corani et al. published three of these pairs; ours are beside them.

# %%
print(render(ranking))

# %%
rows = []
for case in ("hier_R2016_nbc_aode", "hier_R2016_nbc_hnb", "hier_R2016_hnb_j48"):
    ref = REFERENCE.loc[case]
    pair = ranking.pair(ref["system_a"], ref["system_b"])
    ours = pair.probabilities().as_tuple()
    RESULTS[case] = list(ours)
    for name, o, p in zip(("A better", "ROPE", "B better"), ours, (ref["p_a_better"], ref["p_rope"], ref["p_b_better"])):
        rows.append({"pair": f"{pair.system_a} vs {pair.system_b}", "P": name, "isbetter": round(o, 4), "published": round(float(p), 4)})
print("published: Corani et al. (2017), hierarchical/results/rope-001 of BayesianTestsML/tutorial")
pd.DataFrame(rows).set_index(["pair", "P"])

# %%
frame = ranking.to_frame()
cols = ["system_a", "system_b", "p_a_better", "p_rope", "p_b_better", "relation_symbol"]
frame[cols].round(4)

# %%
ax = plot_pairwise_heatmap(ranking)
plt.show()

# %% [markdown]
# ## The partial order and its Hasse diagram
#
# Equivalence groups (connected by ≈), the strict relations between them reduced to a
# Hasse diagram (arrows point to the better system), and every inconsistency — a cycle, or
# an ≈ that is not transitive — reported, never hidden. The mean accuracies alone would
# give a total order; the partial order says which of its steps the evidence supports.

# %%
order = ranking.orders["accuracy"]
print("order:          ", order.line)
print("groups:         ", order.groups)
print("Hasse edges:    ", order.hasse_edges)
print("inconsistencies:", order.inconsistencies or "none")
means = pd.read_csv(DATA / "uci_mean_accuracy.csv")[list(SYSTEMS)].mean().sort_values()
print("by mean accuracy:", " < ".join(f"{s} ({m:.4f})" for s, m in means.items()))
RESULTS["order_likelihood"] = order.line
RESULTS["groups_likelihood"] = [list(g) for g in order.groups]

# %%
ax = plot_hasse(ranking)
plt.show()

# %% [markdown]
# ## The grid of triangles (Szymański & Gorman, Figs. 1–3)
#
# One simplex per pair: each point a posterior draw's (row better, ROPE, column better)
# masses of the next data set's difference.

# %%
fig = plot_triangle_grid(ranking)
plt.show()

# %% [markdown]
# ## How the rule and the threshold change the order
#
# The **likelihood** rule takes the most probable relation for every pair (and writes ≳
# when the winner is within `margin` of a runner-up that is the ROPE). The **threshold**
# rule asserts a relation only where its probability reaches the threshold, and leaves the
# pair undecided (?) otherwise. No refit: the same pairwise probabilities, read again.

# %%
readings = {
    "likelihood (margin 0.05)": ranking,
    "likelihood (margin 0.2)": ranking.with_rule("likelihood", margin=0.2),
    "threshold 0.80": ranking.with_rule("threshold", threshold=0.80),
    "threshold 0.95": ranking.with_rule("threshold", threshold=0.95),
    "threshold 0.99": ranking.with_rule("threshold", threshold=0.99),
}
summary = pd.DataFrame(
    {
        name: {
            "order": r.order(),
            "decided pairs": sum(rel != "undecided" for rel in r.relations["accuracy"].values()),
            "inconsistencies": len(r.orders["accuracy"].inconsistencies),
        }
        for name, r in readings.items()
    }
).T
RESULTS["order_threshold_095"] = readings["threshold 0.95"].order()
RESULTS["decided_threshold_095"] = int(summary.loc["threshold 0.95", "decided pairs"])
pd.set_option("display.max_colwidth", 120)
summary

# %%
fig, axes = plt.subplots(1, 2, figsize=(12, 5))
plot_hasse(readings["likelihood (margin 0.05)"], ax=axes[0])
plot_hasse(readings["threshold 0.95"], ax=axes[1])
fig.tight_layout()
plt.show()

# %% [markdown]
# ## How the ROPE changes the order
#
# The ROPE is part of the question ("better by more than how much?"), so changing it means
# refitting every pair. A narrower ROPE separates more pairs; a wider one merges them.
# (Quick settings: three systems only, to keep CI short.)

# %%
ROPE_SYSTEMS = ("nbc", "aode", "j48") if QUICK else SYSTEMS
by_rope = {
    0.005: ranking_at(0.005, ROPE_SYSTEMS),
    ROPE: ranking_at(ROPE, ROPE_SYSTEMS) if QUICK else ranking,
    0.02: ranking_at(0.02, ROPE_SYSTEMS),
}
rope_table = pd.DataFrame(
    {
        f"ROPE ±{r:g}": {
            "order": res.order(),
            "P(rope) nbc vs aode": round(res.pair("nbc", "aode").p_rope, 3),
            "P(rope) aode vs j48": round(res.pair("aode", "j48").p_rope, 3),
            "groups": len(res.orders["accuracy"].groups),
        }
        for r, res in by_rope.items()
    }
).T
RESULTS["orders_by_rope"] = {str(r): res.order() for r, res in by_rope.items()}
rope_table

# %%
fig, axes = plt.subplots(1, 3, figsize=(16, 5))
for ax, (r, res) in zip(axes, by_rope.items()):
    plot_hasse(res, ax=ax)
    ax.annotate(f"ROPE ±{r:g}", xy=(0.5, 0.0), xycoords="axes fraction", ha="center",
                va="top", fontweight="bold")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## The chain: Szymański & Gorman's own notation
#
# Beside the partial order stands the **chain**: every system in one line, worst first by
# expected rank, and between each pair of *neighbours* the relation the rule gives that
# pair alone. It can say a ≈ b ≈ c with a < c, which no partial order can.

# %%
print("partial order:", ranking.order())
print("chain:        ", ranking.chain())
RESULTS["chain_likelihood"] = ranking.chain()

# %% [markdown]
# ## One model of all five: the joint correlated model
#
# `method="joint"` fits one model of all the systems' per-fold scores instead of ten
# pairwise ones: every pair's probabilities, the orders, P(each system is best), the
# expected ranks with 95% intervals and the most probable orders come from one posterior,
# so they cannot contradict each other. The noise of a data set's systems has a full
# covariance: the near-identical pairs aode/hnb and j48/j48gr need it. Two quantities,
# named in every report: the pairs, the order and the chain are about the difference on
# the *next data set*; P(best), the ranks and the most probable orders about the systems'
# *mean effects* b_k. A pair can be practically equivalent in its mean effects and yet
# differ on the next data set.

# %%
joint = isbetter.rank(table, systems=SYSTEMS, rope=ROPE, method="joint", progress=False, rng=SEED)
print("joint order:", joint.order())
print("joint chain:", joint.chain())
ranks = joint.joint["accuracy"]
ranks_table = pd.DataFrame(
    {
        "P(best)": ranks.p_best,
        "expected rank": ranks.expected_rank,
        "95% rank interval": {s: f"[{lo}, {hi}]" for s, (lo, hi) in ranks.rank_interval.items()},
    }
).sort_values("expected rank")
RESULTS["joint_order"] = joint.order()
RESULTS["joint_p_best"] = ranks.p_best
ranks_table.round(3)

# %%
print("most probable orders of the mean effects:")
for line, p in ranks.top_orders:
    print(f"  {p:.3f}  {line}")
print(f"most probable orders of the mean effects, groups within ROPE ±{ROPE:g} tied:")
for line, p in ranks.rope_orders:
    print(f"  {p:.3f}  {line}")

# %% [markdown]
# The two routes side by side, pair by pair: where a pairwise fit is decisive (largest
# probability at least 0.9) they agree. Elsewhere they can differ: one model of the data
# sets' deviations (independent components whose scales and tails all the pairs share)
# gives aode vs j48 and aode vs j48gr a wider spread across data sets than their own fits
# do, so the ROPE holds less of the next data set's difference.

# %%
side = pd.DataFrame(
    [
        {
            "pair": f"{p.system_a} vs {p.system_b}",
            "pairwise >, ≈, <": tuple(round(x, 3) for x in p.probabilities().as_tuple()),
            "joint >, ≈, <": tuple(
                round(x, 3) for x in joint.pair(p.system_a, p.system_b).probabilities().as_tuple()
            ),
            "pairwise": ranking.relations["accuracy"][(p.system_a, p.system_b)],
            "joint": joint.relations["accuracy"][(p.system_a, p.system_b)],
        }
        for p in ranking.pairs
    ]
).set_index("pair")
side

# %% [markdown]
# ## Numbers checked by the tests

# %% tags=results
print(json.dumps({"notebook": "02_ranking", "quick": QUICK, **RESULTS}))
