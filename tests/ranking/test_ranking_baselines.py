"""The frequentist baselines beside every ranking over several data sets (issue 21, item 1).

Mean ranks, Friedman, Iman–Davenport and Nemenyi's critical differences per metric: in
the RankingResult, its JSON, every report format and `isbetter rank`.
"""

import csv
import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from _uci import UCI_RANK_ARGS
from isbetter import (
    ConvergenceWarning,
    friedman_nemenyi,
    predictions_from_arrays,
    rank,
    read_scores,
)
from isbetter.cli import main
from isbetter.report import render, summary_from_dict


@pytest.fixture(scope="module")
def table():
    """Four systems on 10 data sets x 2 runs x 5 folds, two metrics (one an error)."""
    g = np.random.default_rng(12)
    rows = []
    for d in range(10):
        base = g.uniform(0.6, 0.9)
        for i, s in enumerate(["base", "tuned", "big", "huge"]):
            for run in range(2):
                for fold in range(5):
                    acc = base + 0.012 * i + g.normal(0, 0.01)
                    rows.append((f"d{d}", s, run, fold, acc, 1 - acc + g.normal(0, 0.005)))
    df = pd.DataFrame(rows, columns=["dataset", "system", "run", "fold", "acc", "err"])
    return read_scores(df, score=["acc", "err"], higher_is_better={"acc": True, "err": False})


@pytest.fixture(scope="module")
def ranking(table):
    return rank(table, rope=0.005, method="sign", jobs=1, rng=3)


def test_every_metric_of_a_score_ranking_has_its_baselines(table, ranking):
    assert set(ranking.baselines) == {"acc", "err"}
    for m in ("acc", "err"):
        expected = friedman_nemenyi(table, metric=m, systems=ranking.systems)
        assert ranking.baselines[m] == expected
    assert ranking.baselines["err"].higher_is_better is False
    assert ranking.baselines["acc"].by_rank[0] == "huge"
    assert ranking.baselines["err"].by_rank[0] == "huge"  # the lowest error ranks first
    # another order or subset of systems: the same pairs, the baselines of those systems
    sub = rank(table, systems=["huge", "base"], rope=0.005, method="sign", jobs=1, rng=3)
    assert sub.baselines["acc"].systems == ("huge", "base")
    assert sub.baselines["acc"].mean_ranks == {"huge": 1.0, "base": 2.0}
    # reading the pairs with another rule leaves the baselines as they are
    assert ranking.with_rule("threshold", threshold=0.9).baselines == ranking.baselines


def test_json_block_per_metric_and_round_trip(ranking):
    data = json.loads(render(ranking, "json"))
    block = data["metrics"]["acc"]["baselines"]
    assert {"friedman", "iman_davenport", "mean_ranks", "nemenyi_cd"} <= set(block)
    assert set(block["friedman"]) == {"statistic", "df", "p_value"} == set(block["iman_davenport"])
    assert block["friedman"]["df"] == 3 and block["iman_davenport"]["df"] == [3, 27]
    assert [c["alpha"] for c in block["nemenyi_cd"]] == [0.05, 0.1]
    assert all({"alpha", "cd", "groups"} <= set(c) for c in block["nemenyi_cd"])
    assert block["mean_ranks"] == ranking.baselines["acc"].mean_ranks
    again = summary_from_dict(data)
    assert again.baselines == ranking.baselines
    assert again.to_dict() == ranking.to_dict()


def test_every_format_carries_the_baselines(ranking):
    base = ranking.baselines["acc"]
    ranks = ", ".join(f"{s} {base.mean_ranks[s]:.3f}" for s in base.by_rank)
    groups = ", ".join("{" + ", ".join(g) + "}" for g in base.nemenyi[0].groups)
    for fmt in ("text", "markdown", "html"):
        out = render(ranking, fmt)
        assert ranks in out, fmt
        assert f"Friedman χ²(3) = {base.friedman.statistic:.3f}" in out, fmt
        # the four systems rank alike on every data set: said in words (issue 29), not "= inf"
        assert base.iman_davenport.statistic == float("inf")
        assert "F(3, 27): every data set ranks the systems in the same order" in out, fmt
        assert "= inf" not in out, fmt
        assert f"Nemenyi CD = {base.nemenyi[0].cd:.3f} at α 0.05" in out, fmt
        assert f"CD = {base.nemenyi[1].cd:.3f} at α 0.1" in out, fmt
        assert groups.replace("{", "").replace("}", "") in out.replace("{", "").replace("}", "")
        assert "acc Δ rank" in out, fmt
    latex = render(ranking, "latex")
    assert r"Friedman $\chi^2$(3)" in latex and r"at $\alpha$ 0.05" in latex
    assert r"$\Delta$ rank" in latex  # under the metric's heading "acc"
    rows = list(csv.DictReader(io.StringIO(render(ranking, "csv"))))
    row = next(r for r in rows if r["ranking_metric"] == "acc" and r["system_a"] == "base")
    assert float(row["mean_rank_a"]) == base.mean_ranks["base"]
    assert float(row["mean_rank_b"]) == base.mean_ranks[row["system_b"]]
    assert float(row["nemenyi_cd_0.05"]) == base.nemenyi[0].cd
    different = base.significant_levels("base", row["system_b"])
    assert row["nemenyi_different_0.05"] == str(0.05 in different)
    assert float(row["friedman_p_value"]) == base.friedman.p_value
    assert float(row["iman_davenport_statistic"]) == base.iman_davenport.statistic


def test_rank_cell_marks_the_pairs_nemenyi_separates(ranking):
    """The Δ rank column: B's mean rank minus A's, ** beyond the CD at 0.05, * at 0.10."""
    out = render(ranking, "text")
    base = ranking.baselines["acc"]
    for p in ranking.pairs:
        if p.metric != "acc":
            continue
        diff = base.mean_ranks[p.system_b] - base.mean_ranks[p.system_a]
        stars = "*" * len(base.significant_levels(p.system_a, p.system_b))
        line = next(x for x in out.splitlines() if x.split()[:2] == [p.system_a, p.system_b])
        assert f"{diff:+.2f}{' ' + stars if stars else ''}" in line


def test_no_baselines_for_one_test_set_or_one_data_set(table):
    g = np.random.default_rng(2)
    gold = g.integers(0, 2, 300)
    preds = {s: np.where(g.random(300) < p, 1 - gold, gold) for s, p in (("a", 0.1), ("b", 0.2))}
    one_test_set = rank(predictions_from_arrays(gold, preds), jobs=1, rng=1, draws=1000)
    one_data_set = table.data[table.data["dataset"] == "d0"]
    single = rank(
        read_scores(one_data_set, score="acc"), rope=0.005, method="correlated_t", jobs=1, rng=1
    )
    for res in (one_test_set, single):
        assert res.baselines == {}
        assert all("baselines" not in block for block in res.to_dict()["metrics"].values())
        assert "no mean ranks, Friedman test or Nemenyi critical difference" in render(res)
        assert "mean_rank_a" not in res.to_frame().columns


def test_cli_text_and_html_report_carry_the_baselines(tmp_path, uci_long_path, capsys):
    """The five UCI classifiers, pairs by the signed-rank test (fast): the Bayesian order,
    the mean ranks and the CD groups side by side in the report, the CD diagram in the page."""
    report = tmp_path / "rank.html"
    args = ["rank", str(uci_long_path), *UCI_RANK_ARGS, "--method", "signed-rank", "--jobs", "1"]
    assert main([*args, "--report", str(report), "--quiet"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    i = next(n for n, x in enumerate(lines) if x.startswith("accuracy, next data set (ROPE "))
    assert lines[i] == "accuracy, next data set (ROPE ±0.01): nbc < j48 ≈ j48gr < aode ≈ hnb"
    assert lines[i + 1].startswith("accuracy chain, next data set: nbc < j48")  # then baselines
    i += 1
    assert lines[i + 1].endswith("aode 2.444, hnb 2.704, j48gr 2.917, j48 3.250, nbc 3.685")
    assert lines[i + 2].startswith("accuracy: Friedman χ²(4) = 20.204, p = 0.0004552")
    assert lines[i + 3] == (
        "accuracy: Nemenyi CD = 0.830 at α 0.05 (q = 2.728); groups without a significant "
        "difference: {aode, hnb, j48gr, j48}, {j48gr, j48, nbc}"
    )
    page = report.read_text(encoding="utf-8")
    assert "critical-difference diagram of the mean ranks" in page
    assert page.count("data:image/png;base64,") == 1
    assert "Nemenyi CD = 0.830 at α 0.05" in page


@pytest.mark.slow
def test_uci_report_beside_the_hierarchical_order(uci_long_path, capsys):
    """The acceptance: `isbetter rank` on the five UCI classifiers as the README runs it
    (hierarchical pairs, ~15-60 s) shows the Bayesian order, the mean ranks and the CD groups."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        assert main(["rank", str(uci_long_path), *UCI_RANK_ARGS, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "accuracy, next data set (ROPE ±0.01): nbc < j48 ≈ j48gr < aode ≈ hnb" in out
    assert "aode 2.444, hnb 2.704, j48gr 2.917, j48 3.250, nbc 3.685" in out
    assert "{aode, hnb, j48gr, j48}, {j48gr, j48, nbc}" in out
