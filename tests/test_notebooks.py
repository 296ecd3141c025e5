"""The notebooks in notebooks/ execute without error (quick settings) and show the right numbers.

Each notebook is copied into a temporary directory and executed there with nbclient
(``ISBETTER_NOTEBOOK_QUICK=1``: fewer draws, resamples and simulations); its last cell,
tagged ``results``, prints the key numbers as JSON, which are checked here against the
published reference values (tests/reference/reference_values.csv, SIGIR 2016 Table 3 as
in tests/f1/test_power.py) or against an independent computation from the shipped data.
The notebooks with a hierarchical (MCMC) fit take a minute or more each and are slow.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from _reference import expected_probabilities

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
DATA = ROOT / "data"

# MCMC numbers of the quick settings (4 chains x 1000 draws; ESS of the argmax counts
# ~1000, so ~4 Monte Carlo standard errors of a probability near 0.3): wider than the
# +-0.03 of the full-length reproductions in test_hierarchical_reference.py
MCMC_ATOL = 0.05


def execute(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """Run notebook `name` in a copy under `tmp_path`; return its results JSON."""
    work = tmp_path / "run"
    work.mkdir()
    copy = work / f"{name}.ipynb"
    shutil.copy(NOTEBOOKS / f"{name}.ipynb", copy)
    monkeypatch.setenv("ISBETTER_NOTEBOOK_QUICK", "1")
    monkeypatch.setenv("ISBETTER_ROOT", str(ROOT))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    nb = nbformat.read(copy, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(work)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    # plots are shown inline, never written: the working directory holds only the notebook
    assert sorted(p.name for p in work.iterdir()) == [copy.name]
    images = sum(
        "image/png" in out.get("data", {}) for cell in nb.cells for out in cell.get("outputs", [])
    )
    assert images >= 1, f"{name}: {images} plots shown"
    errors = [
        out for cell in nb.cells for out in cell.get("outputs", []) if out.output_type == "error"
    ]
    assert not errors
    # a small record of the run, kept as a CI artefact (outputs included)
    nbformat.write(nb, tmp_path / f"{name}.executed.ipynb")
    tagged = [c for c in nb.cells if "results" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "one cell tagged `results`"
    text = "".join(o.get("text", "") for o in tagged[0].outputs if o.output_type == "stream")
    results = json.loads(text.strip().splitlines()[-1])
    assert results["quick"] is True and results["notebook"] == name
    return results


def test_notebooks_are_built_from_their_sources():
    """notebooks/*.ipynb are exactly what notebooks/build.py makes of notebooks/src (no outputs)."""
    done = subprocess.run(
        [sys.executable, str(NOTEBOOKS / "build.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    names = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))
    assert names == [
        "01_cross_validation",
        "02_ranking",
        "03_paired_f1",
        "04_multiclass_f1",
        "05_keller_measures",
        "06_tagger_study",
        "07_llm_evals",
    ]
    for path in NOTEBOOKS.glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), path.name
        nbformat.validate(nb)


@pytest.mark.slow
def test_01_cross_validation(tmp_path, monkeypatch):
    res = execute("01_cross_validation", tmp_path, monkeypatch)
    # analytic: the JMLR tutorial's numbers to 1e-9
    for key, case in [
        ("ctt_anneal", "ctt_anneal_nbc_aode"),
        ("ctt_audiology", "ctt_audiology_nbc_aode"),
    ]:
        np.testing.assert_allclose(res[key], expected_probabilities(case), atol=1e-9)
    np.testing.assert_allclose(
        res["hier_nbc_aode"], expected_probabilities("hier_R2016_nbc_aode"), atol=MCMC_ATOL
    )
    np.testing.assert_allclose(
        res["sign_nbc_aode"], expected_probabilities("signtest_nbc_aode_run1"), atol=0.01
    )
    np.testing.assert_allclose(
        res["signed_rank_nbc_aode"], expected_probabilities("signrank_nbc_aode_run1"), atol=0.01
    )
    # ROPE sensitivity: P(rope) grows from 0 with the ROPE and equals the main fit at 0.01
    curve = dict(map(tuple, res["hier_rope_sensitivity"]))
    assert curve[0.0] == 0.0 and curve[0.01] == pytest.approx(res["hier_nbc_aode"][1])
    values = [curve[r] for r in sorted(curve)]
    assert values == sorted(values) and values[-1] > 0.9


@pytest.mark.slow
def test_02_ranking(tmp_path, monkeypatch):
    res = execute("02_ranking", tmp_path, monkeypatch)
    for case in ("hier_R2016_nbc_aode", "hier_R2016_nbc_hnb", "hier_R2016_hnb_j48"):
        np.testing.assert_allclose(res[case], expected_probabilities(case), atol=MCMC_ATOL)
    # nbc is the worst under every reading; aode and hnb share a group (P(rope) ~ 1)
    groups = res["groups_likelihood"]
    assert groups[0] == ["nbc"]
    assert any({"aode", "hnb"} <= set(g) for g in groups)
    assert res["order_likelihood"].startswith("nbc <")
    # the threshold rule decides fewer of the 10 pairs than the likelihood rule (all 10)
    assert 0 < res["decided_threshold_095"] < 10
    # a wider ROPE merges groups: at +-0.02 nbc joins the others
    orders = res["orders_by_rope"]
    assert "<" not in orders["0.02"] and orders["0.005"].count("<") >= orders["0.01"].count("<")
    # the chain starts at nbc; the joint model: the same order, aode or hnb best. Its
    # default, independent components, leaves j48gr more (0.13) than one shared nu did
    # (0.03): aode + hnb 0.87 (the joint fit runs at its defaults in both modes, 4 x 2000
    # after 2000 at target acceptance 0.99; the guide's order), where one nu gave 0.96
    assert res["chain_likelihood"].startswith("nbc <")
    assert res["joint_order"] == res["order_likelihood"]
    p_best = res["joint_p_best"]
    assert set(sorted(p_best, key=p_best.get)[-2:]) == {"aode", "hnb"}, p_best
    assert p_best["aode"] + p_best["hnb"] > 0.8 and p_best["nbc"] < 0.01, p_best
    assert sum(p_best.values()) == pytest.approx(1.0)


def _f1_per_class(df: pd.DataFrame, system: str, label: str) -> float:
    tp = np.sum((df[system] == label) & (df["gold"] == label))
    fp = np.sum((df[system] == label) & (df["gold"] != label))
    fn = np.sum((df[system] != label) & (df["gold"] == label))
    return 2 * tp / (2 * tp + fp + fn)


@pytest.mark.slow
def test_03_paired_f1(tmp_path, monkeypatch):
    res = execute("03_paired_f1", tmp_path, monkeypatch)
    df = pd.read_csv(DATA / "f1_20class" / "predictions.csv")
    for label, (f_a, f_b) in res["observed"].items():
        assert f_a == pytest.approx(_f1_per_class(df, "svm", label), abs=1e-12)
        assert f_b == pytest.approx(_f1_per_class(df, "nb", label), abs=1e-12)
        # Yang & Liu's s-test, recomputed: sign test on the documents where one is right
        right_a = (df["svm"] == label) == (df["gold"] == label)
        right_b = (df["nb"] == label) == (df["gold"] == label)
        k, n = int(np.sum(right_a & ~right_b)), int(np.sum(right_a != right_b))
        assert res["s_test"][label] == pytest.approx(stats.binomtest(k, n).pvalue, rel=1e-9)
        lo, hi = res["hdi"][label]
        assert lo < res["mean"][label] < hi
        # the posterior mean sits near the observed difference (flat prior, ~7 500 documents)
        assert res["mean"][label] == pytest.approx(f_a - f_b, abs=0.005)
    # SIGIR 2016 Table 3, as tests/f1/test_power.py checks it: within 3.5 combined binomial
    # standard errors (ours with the quick replicates, the paper's assumed 100)
    reps = res["replicates"]
    for scenario, size, model, ours, published in res["power"]:
        var = ours * (1 - ours) / reps + published * (1 - published) / 100
        assert abs(ours - published) < 3.5 * max(np.sqrt(var), 0.01), (scenario, size, model)


@pytest.mark.slow
def test_04_multiclass_f1(tmp_path, monkeypatch):
    res = execute("04_multiclass_f1", tmp_path, monkeypatch)
    df = pd.read_csv(DATA / "f1_20class" / "predictions.csv")
    labels = sorted(df["gold"].unique())
    for system, col in (("svm", 0), ("nb", 1)):
        accuracy = float(np.mean(df[system] == df["gold"]))
        macro = float(np.mean([_f1_per_class(df, system, lab) for lab in labels]))
        for model in ("paired (flat)", "unpaired (flat)", "hierarchical (ICDM)"):
            # micro F1 of single-label multi-class data is the accuracy
            assert res["averages"][f"micro|{model}"][col] == pytest.approx(accuracy, abs=1e-12)
            assert res["averages"][f"macro|{model}"][col] == pytest.approx(macro, abs=1e-12)
    for avg in ("micro", "macro"):
        observed = (
            res["averages"][f"{avg}|paired (flat)"][0] - res["averages"][f"{avg}|paired (flat)"][1]
        )
        means = {
            m: res["averages"][f"{avg}|{m}"][2]
            for m in ("paired (flat)", "unpaired (flat)", "hierarchical (ICDM)")
        }
        for model, mean in means.items():
            assert mean == pytest.approx(observed, abs=0.01), (avg, model)
        # pairing narrows the posterior
        sds = {m: res["averages"][f"{avg}|{m}"][3] for m in means}
        assert sds["paired (flat)"] < sds["unpaired (flat)"]


def test_05_keller_measures(tmp_path, monkeypatch):
    res = execute("05_keller_measures", tmp_path, monkeypatch)
    df = pd.read_csv(DATA / "f1_example" / "predictions.csv")
    y, a, b = df["gold"] == "science", df["svm"] == "science", df["nb"] == "science"
    # Keller et al.'s eq. (12) from the eight event counts, our orientation F1(A) - F1(B)
    f_a = 2 * np.sum(y & a) / (np.sum(y) + np.sum(a))
    f_b = 2 * np.sum(y & b) / (np.sum(y) + np.sum(b))
    assert res["delta_f1_observed"] == pytest.approx(f_a - f_b, abs=1e-12)
    lo, hi = res["bootstrap_interval"]
    assert lo < f_a - f_b < hi
    # DCF with Cfn = 10, Cfp = 1, P(p) = 0.5 and Keller's eq. (9), recomputed
    n_p, n_n = int(np.sum(y)), int(np.sum(~y))
    dcf_a = 10 * 0.5 * np.sum(y & ~a) / n_p + 0.5 * np.sum(~y & a) / n_n
    dcf_b = 10 * 0.5 * np.sum(y & ~b) / n_p + 0.5 * np.sum(~y & b) / n_n
    np.testing.assert_allclose(res["dcf"], [dcf_a, dcf_b], rtol=1e-12)
    sd = np.sqrt(
        (10 * 0.5) ** 2 * np.sum(y & (a != b)) / n_p**2 + 0.5**2 * np.sum(~y & (a != b)) / n_n**2
    )
    p9 = 2 * stats.norm.sf(abs(dcf_b - dcf_a) / sd)
    assert res["dcf_p_paired_eq9"] == pytest.approx(p9, rel=1e-9)
    assert res["dcf_ptest_in_result"] == pytest.approx(p9, rel=1e-9)
    # pairing: the adapted test is sharper than the unpaired eq. (8)
    assert res["dcf_p_paired_eq9"] < res["dcf_p_unpaired_eq8"]
    mean, low, high, _ = res["dcf_bayes"]
    assert low < dcf_b - dcf_a < high and mean == pytest.approx(dcf_b - dcf_a, abs=0.05)
    # Section 5: bootstrap and Bayesian confidence agree within Monte Carlo noise
    for _, _, _, boot, bayes, _ in res["section5"]:
        assert abs(boot - bayes) < 0.05


@pytest.mark.slow
def test_06_tagger_study(tmp_path, monkeypatch):
    res = execute("06_tagger_study", tmp_path, monkeypatch)
    scores = pd.read_csv(DATA / "ud_ewt_taggers" / "scores.csv")
    taggers = {"mft", "tnt", "perceptron", "crf"}
    means = scores.groupby("system")["token_accuracy"].mean()
    for system, mean in res["mean_token_accuracy"].items():
        assert mean == pytest.approx(means[system], abs=1e-12)
    # every chain and order holds the four taggers once; the baseline is the worst on tokens
    for lines in (res["chains"], res["orders"], res["joint_chains"]):
        for line in lines.values():
            assert sorted(w for w in line.split() if w.isalpha()) == sorted(taggers), line
    assert res["chains"]["token_accuracy"].startswith("mft <")
    # the likelihood table: three probabilities per pair and metric
    assert len(res["table2"]) == 6
    for row in res["table2"].values():
        for probabilities in row.values():
            assert sum(probabilities) == pytest.approx(1.0, abs=1e-3)
    for p_best in res["joint_p_best"].values():
        assert sum(p_best.values()) == pytest.approx(1.0) and set(p_best) == taggers
    # Friedman's test on the genres' mean scores, recomputed (no ties among the means)
    per_genre = scores.groupby(["dataset", "system"])[
        ["token_accuracy", "sentence_accuracy", "oov_accuracy"]
    ].mean()
    for metric, p in res["friedman_p"].items():
        wide = per_genre[metric].unstack("system")
        expected = stats.friedmanchisquare(*(wide[c] for c in wide.columns)).pvalue
        assert p == pytest.approx(expected, rel=1e-9), metric
    # McNemar's claims over all folds, recounted from the shipped per-fold tests; each
    # p-value is the mid-p of its discordant counts
    mcnemar = pd.read_csv(DATA / "ud_ewt_taggers" / "mcnemar.csv")
    k = np.minimum(mcnemar["only_a"], mcnemar["only_b"])
    n = mcnemar["only_a"] + mcnemar["only_b"]
    midp = np.minimum(2 * stats.binom.cdf(k, n, 0.5) - stats.binom.pmf(k, n, 0.5), 1.0)
    np.testing.assert_allclose(mcnemar["p_value"], midp, rtol=1e-9)
    for pair, (a_better, b_better, none) in res["mcnemar_claims"].items():
        a, b = pair.split(" vs ")
        rows = mcnemar[(mcnemar["system_a"] == a) & (mcnemar["system_b"] == b)]
        significant = rows["p_value"] < 0.05
        more_a = rows["only_a"] > rows["only_b"]
        assert (a_better, b_better) == (
            int((significant & more_a).sum()),
            int((significant & ~more_a).sum()),
        )
        assert a_better + b_better + none == len(rows) == len(scores) // len(taggers)


def _counts(a, b) -> dict:
    """The 2 x 2 counts of two models' 0/1 scores on the same items (A first)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return {
        f"n{i}{j}": int(np.sum((a == i) & (b == j))) for i, j in ((1, 1), (1, 0), (0, 1), (0, 0))
    }


def _beta_above_half(counts: dict) -> float:
    """P(Beta(1 + n10, 1 + n01) > 1/2): the exact paired model's P(A better), no ROPE."""
    return float(stats.beta.sf(0.5, 1 + counts["n10"], 1 + counts["n01"]))


def test_07_llm_evals(tmp_path, monkeypatch):
    res = execute("07_llm_evals", tmp_path, monkeypatch)
    llm = DATA / "llm_evals"
    aime = pd.read_csv(llm / "no_clt_paper" / "matharena_aime_II.csv", dtype={"Question": str})
    models = [c for c in aime.columns if c != "Question"]
    # the AIME accuracies are the columns' means over the 60 answers
    assert len(models) == 19
    expected = aime[models].mean()
    np.testing.assert_allclose(
        [res["aime_accuracy"][m] for m in models], expected.to_numpy(), atol=1e-6
    )
    # items_joint: P(best) a distribution over the 19 models, the chain each model once
    p_best = res["aime_p_best"]
    assert sorted(p_best) == sorted(models)
    assert abs(sum(p_best.values()) - 1) < 1e-9
    assert max(p_best, key=p_best.get) == expected.idxmax() == "o3-mini (high)"
    chain = [s.strip() for s in re.split(r" (?:<|≈|≲|≳|≪|≫|>) ", res["aime_chain"])]
    assert sorted(chain) == sorted(models) and chain[-1] == "o3-mini (high)"
    for low, high in res["aime_rank_interval"].values():
        assert 1 <= low <= high <= 19
    # the pair: the observed difference, McNemar's mid-p on the 60 answers recomputed
    pair = res["pair"]
    a, b = aime[pair["a"]], aime[pair["b"]]
    assert pair["mean_difference"] == pytest.approx(a.mean() - b.mean(), abs=1e-12)
    only_a, only_b = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
    k, n = min(only_a, only_b), only_a + only_b
    midp = min(1.0, 2 * stats.binom.cdf(k, n, 0.5) - stats.binom.pmf(k, n, 0.5))
    assert pair["p_mcnemar_60"] == pytest.approx(midp, abs=1e-12)
    assert pair["p_a_better"] + pair["p_rope"] + pair["p_b_better"] == pytest.approx(1)
    # pairing narrows: the unpaired z-test is the least sure of the difference
    assert pair["p_unpaired"] > pair["p_clustered"] > pair["p_mcnemar_60"]
    # tool use: claude-2.1 right on all 20 items; the exact pair against gpt-4-1106-preview
    # is the Beta closed form of the CSV's counts, and so is the pair of the joint draws
    # (the Dirichlet process prior), whose P(best) of claude is just below it
    tools = pd.read_csv(llm / "no_clt_paper" / "langchain_data_tool_use_FULL.csv")
    assert tools["claude-2.1"].eq(1).all()
    assert abs(sum(res["tools_p_best"].values()) - 1) < 1e-9
    x, y = tools["claude-2.1"], tools["gpt-4-1106-preview (functions)"]
    counts = _counts(x, y)
    top = res["tools_top_pair"]
    assert top["counts"] == counts and top["method"] == "items_exact"
    # Monte Carlo error of a probability from 50 000 exact draws: sd <= 0.0023; 5 sd
    draws = res["ko"]["draws"]
    assert draws == 50_000
    mc = 5 * 0.5 / np.sqrt(draws)
    assert top["p_a_better"] == pytest.approx(_beta_above_half(counts), abs=mc)
    joint = res["tools_joint_pair"]  # 10 000 joint draws: sd <= 0.005
    assert joint["prior"]["alpha"] == 4.0
    assert joint["p_above_0"] == pytest.approx(_beta_above_half(counts), abs=5 * 0.5 / 100)
    # P(best) 0.8744: 10^6 draws of the finite Dirichlet over {0,1}^9 (items/test_items_joint.py)
    assert res["tools_p_best"]["claude-2.1"] == pytest.approx(0.8744, abs=5 * 0.5 / 100)
    # Inspect ARC: the 3 shared samples' C/I scores, and the Beta closed form
    logs = {}
    for name in ("qwen", "sonnet"):
        log = json.loads((llm / "inspect" / f"data_arc_{name}.json").read_text())
        logs[name] = {s["id"]: s["scores"]["choice"]["value"] == "C" for s in log["samples"]}
    shared = sorted(set(logs["qwen"]) & set(logs["sonnet"]))
    assert len(shared) == 3
    son, qw = [logs["sonnet"][i] for i in shared], [logs["qwen"][i] for i in shared]
    arc = _counts(son, qw)
    assert res["arc"]["counts"] == arc
    assert res["arc"]["p_above_0"] == pytest.approx(_beta_above_half(arc), abs=mc)
    # ko_winogrande: the latest samples file of each model, exact_match by doc_id
    ko = llm / "lm_eval" / "ko_winogrande"
    scores = {}
    for folder in ("upstage__SOLAR-10.7B-Instruct-v1.0", "meta-llama__Llama-3.1-8B-Instruct"):
        latest = sorted((ko / folder).glob("samples_*.jsonl"))[-1]
        lines = [json.loads(line) for line in latest.read_text().splitlines() if line.strip()]
        scores[folder] = {r["doc_id"]: r["exact_match"] for r in lines}
    s, m = scores["upstage__SOLAR-10.7B-Instruct-v1.0"], scores["meta-llama__Llama-3.1-8B-Instruct"]
    assert sorted(s) == sorted(m)
    ko_counts = _counts([s[i] for i in sorted(s)], [m[i] for i in sorted(s)])
    assert res["ko"]["counts"] == ko_counts and res["ko"]["method"] == "items_exact"
    assert res["ko"]["p_a_better"] == pytest.approx(_beta_above_half(ko_counts), abs=mc)
