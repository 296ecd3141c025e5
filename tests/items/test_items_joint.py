"""One posterior of all the systems' mean scores (items-joint): the Dirichlet process prior.

For binary items every pair of the joint draws must be the exact paired model of
``compare_items`` (DESIGN §4.3): ``P(a better) = P(Beta(1 + n10, 1 + n01) > 1/2)``,
checked here within Monte Carlo standard errors, on the tool-use table and on random
tables; the joint (P(best)) against an independent exact sampler, the finite Dirichlet
over the 2^K outcome vectors.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from isbetter.items.joint import (
    BINARY_ALPHA,
    TRUNCATION,
    ItemMatrix,
    item_matrix,
    prior_alpha,
    sample_means,
)
from isbetter.items.reader import read
from isbetter.items.table import ItemTable
from isbetter.ranking import rank

TOOLS = Path(__file__).parent / "data" / "no_clt_paper" / "langchain_data_tool_use_FULL.csv"
CLAUDE, GPT4 = "claude-2.1", "gpt-4-1106-preview (functions)"
#: claude-2.1's P(best) on the tool-use table under the DP posterior, from 10^6 draws of the
#: independent finite-Dirichlet sampler below (Monte Carlo sd 0.00033); gpt-4-1106 0.1245
P_BEST_CLAUDE, P_BEST_CLAUDE_SD = 0.87444, 0.00033


def _counts(x: np.ndarray, y: np.ndarray) -> tuple[int, int, int, int]:
    return (
        int(np.sum((x == 1) & (y == 1))),
        int(np.sum((x == 1) & (y == 0))),
        int(np.sum((x == 0) & (y == 1))),
        int(np.sum((x == 0) & (y == 0))),
    )


def _exact_p_better(x: np.ndarray, y: np.ndarray) -> float:
    """The exact paired model's P(x better), ROPE 0: P(Beta(1 + n10, 1 + n01) > 1/2)."""
    _, n10, n01, _ = _counts(x, y)
    return float(stats.beta.sf(0.5, 1 + n10, 1 + n01))


def _dirichlet_moments(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Mean and sd of theta10 - theta01 under Dir(1 + n11, 1 + n10, 1 + n01, 1 + n00)."""
    a = np.asarray(_counts(x, y), dtype=float) + 1
    s = a.sum()
    mean = (a[1] - a[2]) / s
    var = (a[1] * (s - a[1]) + a[2] * (s - a[2]) + 2 * a[1] * a[2]) / (s**2 * (s + 1))
    return mean, float(np.sqrt(var))


def _check_pairs(matrix: ItemMatrix, draws: int, seed: int) -> None:
    """Every pair's P(a better), mean and sd against the exact paired model."""
    means = sample_means(matrix, draws=draws, rng=np.random.default_rng(seed))
    x = matrix.scores
    for a, b in itertools.combinations(range(x.shape[1]), 2):
        delta = means[:, a] - means[:, b]
        p = _exact_p_better(x[:, a], x[:, b])
        se = np.sqrt(p * (1 - p) / draws)
        assert abs(np.mean(delta > 0) - p) < 4.5 * se + 1e-9, (matrix.systems[a], matrix.systems[b])
        mean, sd = _dirichlet_moments(x[:, a], x[:, b])
        assert abs(delta.mean() - mean) < 4.5 * sd / np.sqrt(draws)
        assert delta.std() == pytest.approx(sd, rel=0.04)


@pytest.fixture(scope="module")
def tools() -> ItemTable:
    return read(TOOLS)


def test_tool_use_pairs_are_the_exact_paired_model(tools: ItemTable) -> None:
    matrix = item_matrix(tools)
    assert matrix.binary and prior_alpha(matrix) == BINARY_ALPHA == 4.0
    assert matrix.scores.shape == (20, 9)
    _check_pairs(matrix, draws=20_000, seed=11)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_binary_tables_pairs_are_the_exact_paired_model(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = (8, 15, 40)[seed], (3, 5, 6)[seed]
    skill = rng.uniform(0.2, 0.9, k)
    hard = rng.normal(0, 1, n)[:, None]  # shared difficulty: correlated systems
    x = (rng.random((n, k)) < 1 / (1 + np.exp(hard - 2 * (skill - 0.5)))).astype(float)
    x[:, 0] = 1.0  # one perfect system (the overconfident case)
    x[:, -1] = x[:, 1]  # twins: P(either better) = P(Beta(1, 1) > 1/2) = 1/2
    matrix = ItemMatrix(tuple("abcdef"[:k]), x, np.array(["t"] * n), None, binary=True)
    _check_pairs(matrix, draws=20_000, seed=100 + seed)


def _finite_dirichlet_means(x: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """The DP posterior on the finite space {0,1}^K, sampled exactly: Dir(alpha/2^K + n_z).

    An independent sampler of the same posterior (no stick-breaking, no truncation).
    """
    k = x.shape[1]
    patterns = np.array(list(itertools.product((0.0, 1.0), repeat=k)))
    index = (x @ (2 ** np.arange(k - 1, -1, -1))).astype(int)
    shapes = BINARY_ALPHA / 2**k + np.bincount(index, minlength=2**k)
    w = rng.standard_gamma(shapes, (draws, 2**k))
    return (w @ patterns) / w.sum(axis=1, keepdims=True)


def _p_best(means: np.ndarray) -> np.ndarray:
    return np.bincount(means.argmax(axis=1), minlength=means.shape[1]) / means.shape[0]


def test_p_best_agrees_with_the_finite_dirichlet_over_outcome_vectors(tools: ItemTable) -> None:
    """The joint, not only the pairs: P(best) of two exact samplers, within MC error."""
    matrix = item_matrix(tools)
    draws = 40_000
    ours = _p_best(sample_means(matrix, draws=draws, rng=np.random.default_rng(5)))
    ref = _p_best(_finite_dirichlet_means(matrix.scores, draws, np.random.default_rng(6)))
    se = np.sqrt((ours * (1 - ours) + ref * (1 - ref)) / draws)
    assert np.all(np.abs(ours - ref) <= 4.5 * se + 1e-9), (ours, ref)
    # the perfect model is no longer best in every draw
    best = matrix.systems.index(CLAUDE)
    assert abs(ours[best] - P_BEST_CLAUDE) < 4.5 * np.hypot(se[best], P_BEST_CLAUDE_SD)


def test_tool_use_perfect_model_p_best_below_one(tools: ItemTable) -> None:
    r = rank(tools, method="items_joint", rope=0.0, rng=1, draws=20_000)
    j = r.joint[r.metrics[0]]
    assert tools.frame.loc[tools.frame["system"] == CLAUDE, "score"].eq(1).all()
    # P(best) <= P(claude > gpt-4-1106) = P(Beta(3, 1) > 1/2) = 0.875, and nearly that
    se = np.hypot(np.sqrt(P_BEST_CLAUDE * (1 - P_BEST_CLAUDE) / 20_000), P_BEST_CLAUDE_SD)
    assert abs(j.p_best[CLAUDE] - P_BEST_CLAUDE) < 4.5 * se
    pair = r.pair(CLAUDE, GPT4)
    assert pair.p_a_better == pytest.approx(0.875, abs=4.5 * np.sqrt(0.875 * 0.125 / 20_000))
    prior = r.settings["prior"]
    assert pair.settings["prior"] == prior
    assert prior["alpha"] == 4.0 and prior["base"].startswith("uniform on {0,1}^9")
    assert prior["truncation"] == TRUNCATION
    assert np.isfinite(pair.estimate.bf01)  # a proper prior: Bayes factors as the exact pair
    assert "bayes_factor" not in pair.settings
    # same seed: identical draws; another seed: other draws
    again = rank(tools, method="items_joint", rope=0.0, rng=1, draws=20_000)
    assert again.pairs == r.pairs and again.joint == r.joint
    other = rank(tools, method="items_joint", rope=0.0, rng=2, draws=20_000)
    assert other.joint[r.metrics[0]].p_best != j.p_best


def test_same_seed_identical_draws() -> None:
    x = (np.random.default_rng(0).random((30, 4)) < 0.6).astype(float)
    m = ItemMatrix(tuple("abcd"), x, np.array(["t"] * 30), None, binary=True)
    one = sample_means(m, draws=3000, rng=np.random.default_rng(9))
    assert np.array_equal(one, sample_means(m, draws=3000, rng=np.random.default_rng(9)))
    assert not np.array_equal(one, sample_means(m, draws=3000, rng=np.random.default_rng(10)))
    assert np.all((one >= 0) & (one <= 1))


def _runs_table(runs: int, cluster: bool = False) -> ItemTable:
    rng = np.random.default_rng(2)
    n = 12
    scores = {s: (rng.random(n) < p).astype(float) for s, p in (("a", 0.9), ("b", 0.4))}
    rows = [
        {"task": "t", "item": str(i), "system": s, "run": r, "score": v[i], "cluster": str(i // 3)}
        for s, v in scores.items()
        for i in range(n)
        for r in range(runs)
    ]
    frame = pd.DataFrame(rows)
    if not cluster:
        frame = frame.drop(columns="cluster")
    return ItemTable.from_frame(
        frame, run="run", metric="acc", cluster="cluster" if cluster else None
    )


@pytest.mark.parametrize(("runs", "cluster"), [(2, False), (1, True)])
def test_runs_and_clusters_keep_the_bayesian_bootstrap(runs: int, cluster: bool) -> None:
    """0/1 means of 2 runs, or clustered items: compare_items' bootstrap route, alpha 0."""
    table = _runs_table(runs, cluster)
    matrix = item_matrix(table)
    assert not matrix.binary or cluster
    assert prior_alpha(matrix) == 0.0
    pair = rank(table, method="items_joint", rng=1, draws=2000).pair("a", "b")
    assert pair.settings["prior"]["alpha"] == 0.0
    assert pair.settings["bayes_factor"].startswith("none")
    # the bootstrap never leaves the items seen: a model right on every item stays at 1
    means = sample_means(matrix, draws=2000, rng=np.random.default_rng(0))
    assert matrix.scores[:, 0].min() == 1.0 and np.allclose(means[:, 0], 1.0, rtol=0, atol=1e-12)


def test_binary_one_run_is_the_dirichlet_process() -> None:
    matrix = item_matrix(_runs_table(1))
    assert matrix.binary and prior_alpha(matrix) == 4.0
    means = sample_means(matrix, draws=20_000, rng=np.random.default_rng(0))
    # each system alone: Beta(2 + right, 2 + wrong)
    for k in range(2):
        right = matrix.scores[:, k].sum()
        a, b = 2 + right, 2 + matrix.n_items - right
        assert means[:, k].mean() == pytest.approx(a / (a + b), abs=4.5 * 0.15 / np.sqrt(20_000))


def test_the_guide_states_the_tool_use_ranking_as_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """docs/guide/llm_evals.md: the items-joint P(best) of the tool-use table, as the CLI prints."""
    from isbetter.cli import main

    guide = Path(__file__).parents[2] / "docs" / "guide" / "llm_evals.md"
    prose = " ".join(guide.read_text(encoding="utf-8").split())
    stated = re.search(
        r"--rope 0\.05 --seed 1` prints, from its 10 000 draws, P\(best\) claude-2\.1 "
        r"(0\.\d{3} \[0\.\d{3}, 0\.\d{3}\]) and gpt-4-1106-preview \(functions\) "
        r"(0\.\d{3} \[0\.\d{3}, 0\.\d{3}\])",
        prose,
    )
    assert stated, "the guide's tool-use sentence changed: update this test"
    argv = ["rank", str(TOOLS), "--items", "--method", "items-joint", "--rope", "0.05"]
    assert main([*argv, "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert f"claude-2.1 {stated[1]}" in out and f"gpt-4-1106-preview (functions) {stated[2]}" in out
    # within Monte Carlo error of the reference the guide also states
    assert abs(float(stated[1].split()[0]) - P_BEST_CLAUDE) < 4.5 * 0.0034
    assert f"{P_BEST_CLAUDE:.4f} ± {P_BEST_CLAUDE_SD:.4f}" in prose


def test_the_base_part_is_the_dirichlet_process_prior() -> None:
    """Q ~ DP(4 G0) alone: a system's mean is Beta(2, 2), two systems' difference Dir(1,1,1,1)'s.

    Kolmogorov–Smirnov against the closed form and against the exact model's prior draws;
    the stick-breaking leaves less than TRUNCATION in every draw, so nothing is lost.
    """
    from isbetter.items import paired
    from isbetter.items.joint import _base_means

    one = _base_means(20_000, 1, BINARY_ALPHA, np.random.default_rng(0))[:, 0]
    assert stats.kstest(one, stats.beta(2, 2).cdf).pvalue > 1e-3
    two = _base_means(20_000, 2, BINARY_ALPHA, np.random.default_rng(1))
    prior = paired.prior_delta(draws=20_000, rng=np.random.default_rng(2))
    assert stats.ks_2samp(two[:, 0] - two[:, 1], prior).pvalue > 1e-3
    assert np.all((two >= 0) & (two <= 1))
