# %% [markdown]
# # 07 · Language models item by item: AIME, tool use, Inspect and lm-eval logs
#
# Language-model benchmarks are small: AIME has 15 problems a paper, a tool-use suite
# 20 tasks. Their evidence is the per-item log, and the question is the usual one — is
# model A better than model B on the population of such items, and how sure can we be?
# The tools in use answer it unpaired (lm-evaluation-harness prints each accuracy with its
# standard error, and a z-test of two accuracies ignores that both models saw the same
# items) or by the central limit theorem (Miller 2024's clustered standard errors), which
# Bowyer, Aitchison & Ivanova (2025, *Don't use the CLT in LLM evals with fewer than a few
# hundred datapoints*) show is too narrow at these sizes. isbetter pairs the items and
# samples the posterior exactly — no MCMC in this notebook:
#
# * binary items (one run, scores 0/1): the exact paired model, Dir(1, 1, 1, 1) on the
#   2 × 2 table of the two models' answers, so P(A better) = P(Beta(1 + n₁₀, 1 + n₀₁) > ½);
# * graded items (here: the mean of 4 runs of a problem): the Bayesian bootstrap of the
#   paired difference over items;
# * many models: `rank(..., method="items_joint")`, one posterior over items of all the
#   models' mean scores, whose draws give P(best), rank intervals and every pair: for
#   binary items a Dirichlet process whose every pair is the exact paired model above,
#   for graded items the Bayesian bootstrap over items.
#
# Data (`data/llm_evals/`, MIT, its README gives the sources): MathArena's AIME II 2025 and
# LangChain's tool-use table as published with Bowyer et al.'s paper; two Inspect logs of
# ARC-Easy; lm-evaluation-harness logs of two models on ko_winogrande.
#
# `ISBETTER_NOTEBOOK_QUICK=1` (CI) changes nothing here: every step takes well under a second.

# %%
import json
import os
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

import isbetter
import isbetter.items
from isbetter.plots import plot_p_best, plot_rank_probabilities

QUICK = os.environ.get("ISBETTER_NOTEBOOK_QUICK", "") not in ("", "0")
ROOT = Path(os.environ.get("ISBETTER_ROOT", "..")).resolve()  # the repository
DATA = ROOT / "data" / "llm_evals"
SEED = 1
RESULTS = {}  # the numbers the last cell prints as JSON (checked by tests/test_notebooks.py)
print("quick settings" if QUICK else "full settings", "| isbetter", isbetter.__version__)

# %% [markdown]
# ## AIME II 2025: 19 models, 15 problems, 4 runs each
#
# The table is wide: a row per (problem, run), a column per model, 1 for a right answer.
# Rows `1`, `1.1`, `1.2`, `1.3` are the four runs of problem 1, which `run_suffix=True`
# tells the reader. Each model's score on a problem is then the mean of its 4 runs.

# %%
AIME = DATA / "no_clt_paper" / "matharena_aime_II.csv"
aime = isbetter.items.read(AIME, run_suffix=True)
raw = pd.read_csv(AIME)
print(aime.source)
print(
    len(aime.systems),
    "models ×",
    aime.frame["item"].nunique(),
    "problems ×",
    aime.frame["run"].nunique(),
    "runs",
)
accuracy = raw.drop(columns="Question").mean().sort_values(ascending=False)
RESULTS["aime_accuracy"] = accuracy.round(6).to_dict()
accuracy.round(3).to_frame("accuracy (60 answers)")

# %% [markdown]
# ## Ranking the 19 models: P(best), rank intervals, the chain
#
# `method="items_joint"` draws all 19 models' accuracies at once by one Bayesian bootstrap
# over the 15 problems (a problem's 4 runs stay together), so the ranks of a draw keep the
# pairing: a hard problem is hard for every model in the same draw. ROPE ±0.05: 5 points of
# accuracy, under one problem in 15 (6.7 points), are practically the same.

# %%
ranking = isbetter.rank(aime, method="items_joint", rope=0.05, rng=SEED)
summary = ranking.joint[ranking.metrics[0]]
table = pd.DataFrame(
    {
        "accuracy": accuracy,
        "P(best)": pd.Series(summary.p_best),
        "E[rank]": pd.Series(summary.expected_rank),
        "rank interval": pd.Series(
            {k: f"{lo}–{hi}" for k, (lo, hi) in summary.rank_interval.items()}
        ),
    }
).sort_values("E[rank]")
print("chain:", ranking.chain())
RESULTS["aime_p_best"] = summary.p_best
RESULTS["aime_rank_interval"] = {k: list(v) for k, v in summary.rank_interval.items()}
RESULTS["aime_chain"] = ranking.chain()
table.round(3)

# %% [markdown]
# o3-mini (high) solved 56 of its 60 attempts, 8 more than the next models, and is first
# in nearly every draw (P(best) ≈ 0.99, rank interval 1–1). Below it the 95% rank intervals
# overlap widely — o1 (medium), o3-mini (medium) and DeepSeek-R1 share places 2–6 — and
# the chain (`≈`: the ROPE or undecided is the most probable relation, `≲`: nearly so)
# groups the models that 15 problems cannot tell apart. P(best) and the rank
# probabilities:

# %%
fig, axes = plt.subplots(1, 2, figsize=(13, 6))
plot_p_best(ranking, ax=axes[0])
plot_rank_probabilities(ranking, ax=axes[1])
fig.tight_layout()
plt.show()

# %% [markdown]
# ## One pair three ways: o3-mini (high) vs DeepSeek-R1
#
# * **unpaired z-test** — what lm-evaluation-harness's comparison amounts to: each model's
#   accuracy with its own standard error, as if the two had seen different problems;
# * **Miller's clustered SE** of the paired difference (the 4 runs of a problem one
#   cluster), and **McNemar**'s mid-p test of the 60 (problem, run) answers taken as
#   independent items — both normal or exact tests of a paired difference;
# * **isbetter**: the posterior of the difference in accuracy on the population of such
#   problems, by the Bayesian bootstrap over the 15 problems, with the ROPE.

# %%
A, B = "o3-mini (high)", "DeepSeek-R1"
pair = isbetter.compare_items(aime, A, B, rope=0.05, rng=SEED)
tests = {t.name: t for t in pair.tests}
runs60 = isbetter.items.read(AIME)  # rows as items: 60 binary answers per model
mcnemar60 = isbetter.compare_items(runs60, A, B, rope=0.05, rng=SEED)
m60 = {t.name: t for t in mcnemar60.tests}
rows = {
    "unpaired z (lm-eval style)": tests["unpaired_z"],
    "Miller's clustered SE (paired)": tests["clustered_se"],
    "paired bootstrap (Koehn)": tests["paired_bootstrap"],
    "McNemar mid-p, 60 answers as items": m60["mcnemar_midp"],
}
three = pd.DataFrame(
    {
        name: {
            "difference": t.estimate,
            "95% interval": f"[{t.interval.low:+.3f}, {t.interval.high:+.3f}]"
            if t.interval
            else "",
            "p-value": t.p_value,
        }
        for name, t in rows.items()
    }
).T
print(pair)
RESULTS["pair"] = {
    "a": A,
    "b": B,
    "mean_difference": pair.observed.difference,
    "p_a_better": pair.p_a_better,
    "p_rope": pair.p_rope,
    "p_b_better": pair.p_b_better,
    "p_unpaired": tests["unpaired_z"].p_value,
    "p_clustered": tests["clustered_se"].p_value,
    "p_mcnemar_60": m60["mcnemar_midp"].p_value,
    "method": pair.method,
}
three

# %% [markdown]
# The difference is 0.183 (11 of 60 answers) every way; what differs is the spread. The
# unpaired z-test's interval, [+0.001, +0.365], is the widest and barely excludes 0
# (p ≈ 0.048): it ignores that both models solved, or failed, the same problems. Pairing
# removes that shared difficulty: Miller's clustered SE gives [+0.036, +0.330]
# (p ≈ 0.015). McNemar on the 60 answers (p ≈ 0.002) is the most confident, because it
# counts the 4 runs of a problem as 4 independent items — the population we care about
# is problems, and there are 15. The clustered SE's normal interval is itself too narrow
# at 15 clusters (Bowyer et al.). isbetter's posterior keeps the pairing, counts problems
# as the units and answers in probabilities with the ROPE: P(o3-mini (high) better by more
# than 5 points) ≈ 0.98, P(practically equal) ≈ 0.02, P(DeepSeek-R1 better) < 0.001.

# %% [markdown]
# ## Tool use: 20 items × 9 models
#
# LangChain's tool-use benchmark: one run, 0/1 per item. The column `reference output`
# (the expected answer, text) is not a model: the reader skips it and says so. Binary
# items: `items_joint` draws the models' accuracies from the Dirichlet process
# DP(4 G₀ + Σᵢ δ_{xᵢ}) over the 9 models' score vectors, G₀ uniform on {0,1}⁹, which puts
# mass on outcomes no item showed and is, for every pair of models, the exact paired
# model Dir(1 + n₁₁, 1 + n₁₀, 1 + n₀₁, 1 + n₀₀) (the guide derives it).

# %%
tools = isbetter.items.read(DATA / "no_clt_paper" / "langchain_data_tool_use_FULL.csv")
print("\n".join(tools.notes))
tool_rank = isbetter.rank(tools, method="items_joint", rope=0.05, rng=SEED)
tsum = tool_rank.joint[tool_rank.metrics[0]]
tool_table = pd.DataFrame(
    {
        "accuracy": tools.frame.groupby("system")["score"].mean(),
        "P(best)": pd.Series(tsum.p_best),
        "rank interval": pd.Series({k: f"{lo}–{hi}" for k, (lo, hi) in tsum.rank_interval.items()}),
    }
).sort_values("accuracy", ascending=False)
print("chain:", tool_rank.chain())
RESULTS["tools_p_best"] = tsum.p_best
RESULTS["tools_chain"] = tool_rank.chain()
joint_top = tool_rank.pair("claude-2.1", "gpt-4-1106-preview (functions)")
RESULTS["tools_joint_pair"] = {
    "p_above_0": joint_top.estimate.p_above_0,  # no ROPE: the exact pair's P(claude better)
    "prior": joint_top.settings["prior"],
}
tool_table.round(3)

# %% [markdown]
# **A perfect score on 20 items is not certainty.** claude-2.1 is right on all 20 items. A
# Bayesian bootstrap over the items (a reweighting of the 20 items, never an item that was
# not seen) would make its accuracy 1 in every draw and P(best) = 1 exactly. The
# Dirichlet process keeps some mass for unseen items: against gpt-4-1106-preview, right on
# 18 of the same items and wrong where claude was right twice (n₁₀ = 2, n₀₁ = 0), the
# pair of the joint draws is the exact paired model's, P(claude better) =
# P(Beta(3, 1) > ½) = 0.875; claude's P(best) is just below that bound (about 0.874),
# gpt-4-1106-preview's about 0.125. `compare_items` gives the same pair:

# %%
top = isbetter.compare_items(
    tools, "claude-2.1", "gpt-4-1106-preview (functions)", rope=0.0, rng=SEED
)
print(top)
RESULTS["tools_top_pair"] = {
    "counts": top.settings["counts"],
    "p_a_better": top.p_a_better,
    "method": top.method,
}

# %% [markdown]
# ## Inspect logs: ARC-Easy by two models
#
# Two Inspect `.json` logs; scores `C`/`I` read as 1/0. The logs cover different samples
# (qwen 3, sonnet 5, 3 shared): pairing them as they are is an error that names the
# difference, so we keep the items both have with `common_items()` (the CLI's
# `--common-items`), which records the drop.

# %%
arc = isbetter.items.read(
    [DATA / "inspect" / "data_arc_qwen.json", DATA / "inspect" / "data_arc_sonnet.json"]
).common_items()
print("\n".join(arc.notes))
QWEN, SONNET = "ollama/qwen2.5:0.5b", "anthropic/claude-sonnet-4-0"
arc_pair = isbetter.compare_items(arc, SONNET, QWEN, rope=0.05, rng=SEED)
print(arc_pair)
RESULTS["arc"] = {
    "counts": arc_pair.settings["counts"],
    "p_above_0": arc_pair.estimate.p_above_0,
    "method": arc_pair.method,
}

# %% [markdown]
# Three shared items cannot say much: sonnet was right on all 3, qwen on 1 (n₁₀ = 2,
# n₀₁ = 0), and P(sonnet better) = P(Beta(3, 1) > ½) = 0.875 with no ROPE (0.83 by more
# than 5 points) is far from certainty.
#
# ## lm-evaluation-harness logs: ko_winogrande
#
# One `--log_samples` folder per model. SOLAR has two runs; the reader takes the latest and
# records the choice (an earlier run scored 0 on every item, a prompt bug). Binary
# `exact_match` → the exact paired model; the 2 × 2 counts n₁₁/n₁₀/n₀₁/n₀₀ are shown.

# %%
KO = DATA / "lm_eval" / "ko_winogrande"
ko = isbetter.items.read(
    [KO / "meta-llama__Llama-3.1-8B-Instruct", KO / "upstage__SOLAR-10.7B-Instruct-v1.0"]
)
print(ko.source)
print("\n".join(ko.notes))
LLAMA, SOLAR = "meta-llama/Llama-3.1-8B-Instruct", "upstage/SOLAR-10.7B-Instruct-v1.0"
ko_pair = isbetter.compare_items(ko, SOLAR, LLAMA, rope=0.0, rng=SEED)
print(ko_pair)
RESULTS["ko"] = {
    "a": SOLAR,
    "b": LLAMA,
    "counts": ko_pair.settings["counts"],
    "p_a_better": ko_pair.p_a_better,
    "method": ko_pair.method,
    "draws": int(ko_pair.settings.get("draws", 0) or 0),
}
pd.Series(ko_pair.settings["counts"]).to_frame("items")

# %% [markdown]
# With ROPE 0, P(SOLAR better) is exactly P(Beta(1 + n₁₀, 1 + n₀₁) > ½) =
# P(Beta(3, 2) > ½) = 11/16 ≈ 0.69 (up to Monte Carlo error): 6 items, a posterior this
# wide cannot rank the two.

# %% tags=results
print(json.dumps({"notebook": "07_llm_evals", "quick": QUICK, **RESULTS}, default=float))
