"""One contract for every result, and every result rendered in every report format."""

import csv
import io
import json
import pickle
import re
import shutil
import subprocess
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import get_args

import numpy as np
import pandas as pd
import pytest

from isbetter import (
    InputError,
    RenamedArgumentWarning,
    compare_f1,
    correlated_ttest,
    from_arrays,
    power_analysis,
    rank,
    read_predictions,
    read_scores,
    sign_test,
    signed_rank_test,
)
from isbetter.f1.baselines import Baselines
from isbetter.f1.power import SIGIR_SCENARIO_A
from isbetter.report import FORMATS, render, summary_from_dict, to_table
from isbetter.report.table import MISSING, CellKind, Column, format_cell
from isbetter.results import ComparisonResult, F1Result, PowerResult

CHEAP = Baselines(resamples=200)
NAMES = ("bert_base", "R&D 100%")  # LaTeX specials in the system names
DATA = Path(__file__).resolve().parents[2] / "data"


def _cv_scores(q, seed=5):
    g = np.random.default_rng(seed)
    x = g.uniform(0.7, 0.9, size=(q, 1)) + g.normal(0, 0.02, size=(q, 10))
    y = x - 0.01 + g.normal(0, 0.01, size=(q, 10))
    return from_arrays(x, y, names=NAMES, runs=1).paired(*NAMES)


def _predictions(n=600, classes=3, seed=3):
    g = np.random.default_rng(seed)
    gold = g.integers(0, classes, n)
    a = np.where(g.random(n) < 0.8, gold, g.integers(0, classes, n))
    b = np.where(g.random(n) < 0.7, gold, g.integers(0, classes, n))
    return pd.DataFrame({"gold": gold, NAMES[0]: a, NAMES[1]: b})


@pytest.fixture(scope="module")
def f1_result():
    return compare_f1(_predictions(), draws=4000, baselines=Baselines(resamples=500), rng=2)


@pytest.fixture(scope="module")
def power_result():
    return power_analysis(SIGIR_SCENARIO_A, sizes=[300, 600], replicates=40, draws=500, rng=1)


@pytest.fixture(scope="module")
def ranking_result():
    g = np.random.default_rng(9)
    base = g.uniform(0.7, 0.9, size=(12, 1))
    rows = []
    for k, name in enumerate(["x_1", "y&2", "z%3"]):
        x = base + 0.004 * k + g.normal(0, 0.01, size=(12, 10))
        rows += [(f"d{i}", name, f, x[i, f]) for i in range(12) for f in range(10)]
    table = read_scores(
        pd.DataFrame(rows, columns=["dataset", "system", "fold", "acc"]), run=None, score="acc"
    )
    return rank(table, rope=0.005, method="signed_rank", jobs=1, rng=2, draws=2000)


@pytest.fixture(scope="module")
def comparisons(hierarchical_fit, f1_result):
    one = _cv_scores(1)
    many = _cv_scores(12)
    out = {
        "correlated_t": correlated_ttest(one, rope=0.01),
        "sign": sign_test(many, rope=0.005, rng=1, draws=2000),
        "signed_rank": signed_rank_test(many, rope=0.005, rng=1, draws=2000),
        "hierarchical": hierarchical_fit,
    }
    for label, row in f1_result.comparisons.items():
        out[f"f1_{label}"] = row
    return out


def _walk(obj):
    """Every value inside a (nested) summary."""
    if is_dataclass(obj) and not isinstance(obj, type):
        for f in fields(obj):
            yield from _walk(getattr(obj, f.name))
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _walk(v)
    elif isinstance(obj, list | tuple):
        for v in obj:
            yield from _walk(v)
    else:
        yield obj


def _check_summary(summary, max_bytes):
    data = summary.to_dict()
    text = json.dumps(data, allow_nan=False)  # strict JSON: no NaN / Infinity
    again = summary_from_dict(json.loads(text))
    assert type(again) is type(summary)
    assert again.to_dict() == data
    blob = pickle.dumps(summary)
    assert pickle.loads(blob).to_dict() == data
    assert len(blob) < max_bytes and len(text) < max_bytes
    assert not any(isinstance(v, np.ndarray) for v in _walk(summary))


def test_every_comparison_satisfies_the_contract(comparisons):
    assert set(comparisons) >= {"correlated_t", "sign", "signed_rank", "hierarchical"}
    assert {"f1_0", "f1_macro", "f1_micro"} <= set(comparisons)
    for name, res in comparisons.items():
        assert isinstance(res, ComparisonResult), name
        names = ("A", "B") if name == "hierarchical" else NAMES  # the shared conftest fit
        assert (res.system_a, res.system_b) == names, name
        assert isinstance(res.metric, str) and res.metric, name
        assert isinstance(res.higher_is_better, bool), name
        assert hasattr(res, "dataset") and hasattr(res, "label"), name
        p = res.probabilities()
        assert all(0 <= x <= 1 for x in p.as_tuple()), name
        assert sum(p.as_tuple()) == pytest.approx(1, abs=1e-9), name
        assert res.counting in ("argmax", "mean"), name
        assert "seed" in res.settings and "versions" in res.settings, name
        assert res.decision() in ("a_better", "equivalent", "b_better", "undecided"), name
        summary = res.summary()
        assert type(summary) is ComparisonResult and summary.posterior is None
        assert summary.probabilities() == p
        _check_summary(summary, max_bytes=6000)
        frame = res.to_frame()
        assert len(frame) == 1
        assert {"system_a", "system_b", "metric", "rope", "p_a_better", "p_rope", "p_b_better"} <= (
            set(frame.columns)
        )


def test_identity_where_it_applies(comparisons):
    assert comparisons["correlated_t"].dataset == "0"
    assert comparisons["f1_macro"].label == "macro" and comparisons["f1_0"].label == "0"
    assert comparisons["hierarchical"].diagnostics is not None
    assert comparisons["hierarchical"].predictive is not None
    assert comparisons["correlated_t"].tests[0].name == "corrected_t"
    assert comparisons["f1_0"].estimate is not None and comparisons["f1_0"].tests


def test_collections_summaries(f1_result, power_result):
    f1s = f1_result.summary()
    assert isinstance(f1s, F1Result) and len(f1s.rows) == 5  # 3 classes, macro, micro
    _check_summary(f1s, max_bytes=40_000)
    assert {t.name for t in f1s.across_classes} == {"t_test", "s_test"}
    assert list(f1_result.to_frame()["label"]) == ["0", "1", "2", "macro", "micro"]
    ps = power_result.summary()
    assert isinstance(ps, PowerResult)
    _check_summary(ps, max_bytes=6000)
    assert list(power_result.to_frame().columns[:3]) == ["size", "model", "power"]


def test_a_summary_is_the_same_type_without_its_draws(comparisons, f1_result):
    """One type per kind of result: summary() drops the draws, not the class."""
    full = comparisons["sign"]
    light = full.summary()
    assert type(light) is ComparisonResult and light == full and light.posterior is None
    assert light.probabilities() == full.probabilities()
    assert light.probabilities(rope=full.rope) == full.probabilities()
    assert full.probabilities(rope=0.02) != full.probabilities()  # re-read from the draws
    with pytest.raises(InputError, match="no posterior"):
        light.probabilities(rope=0.02)
    assert type(comparisons["hierarchical"].summary()) is ComparisonResult
    f1s = f1_result.summary()
    assert type(f1s) is F1Result and f1s.counts is None and f1s.prior_draws is None
    assert f1s.rows == f1_result.rows and all(r.posterior is None for r in f1s.rows)
    assert f1_result.draws("macro").shape == (4000,)
    with pytest.raises(InputError, match="no posterior"):
        f1s.draws("macro")


def test_the_metric_of_f1_and_power_results_by_its_old_name_warns(f1_result, power_result):
    for res in (f1_result, f1_result.summary(), power_result):
        with pytest.warns(RenamedArgumentWarning, match="`.measure` is the old name of `.metric`"):
            assert res.measure == res.metric  # noqa: B018


def test_a_rankings_rows_name_their_metric_in_a_field(ranking_result):
    pairs = ranking_result.pairs
    assert {p.ranking_metric for p in pairs} == {"acc"} and ranking_result.metrics == ("acc",)
    assert all("ranking_metric" not in p.settings for p in pairs)
    again = summary_from_dict(json.loads(json.dumps(ranking_result.to_dict())))
    assert [p.ranking_metric for p in again.pairs] == [p.ranking_metric for p in pairs]
    assert again.pairs == pairs


def test_the_summary_classes_by_their_old_names_warn():
    import isbetter.results

    for old, new in (
        ("ComparisonSummary", ComparisonResult),
        ("F1Summary", F1Result),
        ("PowerSummary", PowerResult),
    ):
        with pytest.warns(RenamedArgumentWarning, match=f"`{old}` is now `{new.__name__}`"):
            assert getattr(isbetter.results, old) is new
    with pytest.raises(AttributeError):
        isbetter.results.NoSuchSummary  # noqa: B018


def _all_results(comparisons, f1_result, power_result, ranking_result):
    yield from comparisons.items()
    yield "f1", f1_result
    yield "power", power_result
    yield "ranking", ranking_result


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_result_renders_in_every_format(
    comparisons, f1_result, power_result, ranking_result, fmt
):
    for name, res in _all_results(comparisons, f1_result, power_result, ranking_result):
        out = render(res, fmt)
        assert out.endswith("\n") and out.strip(), name
        # a summary renders exactly like its result
        assert render(res.summary(), fmt) == out, name
        table = to_table(res)
        if fmt == "json":
            data = json.loads(out)
            assert data["signature"] == table.signature and data["title"] == table.title
        elif fmt == "csv":
            rows = list(csv.DictReader(io.StringIO(out)))
            assert len(rows) == len(table.records) and rows[0]["signature"] == table.signature
        elif fmt == "latex":
            _check_latex(out)
        elif fmt == "html":
            assert out.startswith('<table class="isbetter-report">') and "</table>" in out
            assert "R&amp;D 100%" in out or name in ("power", "hierarchical", "ranking")
        else:
            assert table.signature in out
            assert table.title.split(":")[0] in out.replace("\\|", "|")


def _check_latex(out):
    assert out.startswith("% requires: ")
    out = out.split("\n", 1)[1]
    assert out.count(r"\begin{table}") == out.count(r"\end{table}") == 1
    assert out.count(r"\begin{tabular}") == out.count(r"\end{tabular}") >= 1  # panels, headers
    assert out.count("\\toprule") == out.count("\\bottomrule") >= 1
    body = re.sub(r"\\[&%_$#{}]", "", out)  # escaped specials are fine
    assert "%" not in body and "_" not in body.replace("\\_", "")
    assert "#" not in body
    # regression: percent cells came pre-escaped and were escaped again ("0.0\textbackslash{}\%")
    assert "\\textbackslash" not in out, out
    # nothing a LaTeX engine without extra Unicode set-up would reject
    assert all(ord(ch) < 128 or ch.isalpha() for ch in out), sorted(
        {c for c in out if ord(c) > 127}
    )


def test_latex_escapes_system_names_and_typesets_decisions(f1_result):
    out = render(f1_result, "latex")
    assert r"bert\_base" in out and r"R\&D 100\%" in out
    assert any(sym in out for sym in (r"$\gg$", r"$\ll$", r"$\approx$", "$>$", "$<$"))


# system names as long as a paper's (model cards), and the shipped examples' names
LONG = ("roberta-large-finetuned-conll03-english", "bert-base-multilingual-cased-ner-hrl")


@pytest.fixture(scope="module")
def long_name_results():
    """Every kind of table with long system names, and the shipped examples as they come."""
    g = np.random.default_rng(4)
    x = g.uniform(0.7, 0.9, size=(12, 1)) + g.normal(0, 0.02, size=(12, 10))
    y = x - 0.01 + g.normal(0, 0.01, size=(12, 10))
    scores = from_arrays(x, y, names=LONG, runs=1).paired(*LONG)
    frame = _predictions().set_axis(["gold", *LONG], axis=1)
    rows = [
        (f"d{i}", name, f, x[i, f] + 0.003 * k)
        for k, name in enumerate((*LONG, "a-third-system-with-a-long-name"))
        for i in range(12)
        for f in range(10)
    ]
    table = read_scores(
        pd.DataFrame(rows, columns=["dataset", "system", "fold", "acc"]), run=None, score="acc"
    )
    uci = read_scores(
        DATA / "uci_benavoli2017" / "uci_cv_accuracy_long.csv",
        dataset="dataset_id",
        system="classifier",
        score="accuracy",
    )
    shipped = read_predictions(DATA / "f1_example" / "predictions.csv", id="doc_id")
    return {
        "long correlated_t": correlated_ttest(
            from_arrays(x[:1], y[:1], names=LONG, runs=1).paired(*LONG), rope=0.01
        ),
        "long signed_rank": signed_rank_test(scores, rope=0.005, rng=1, draws=1000),
        "long f1": compare_f1(frame, draws=1000, baselines=Baselines(resamples=100), rng=1),
        "long ranking": rank(table, rope=0.005, method="sign", jobs=1, rng=2, draws=1000),
        "uci ranking": rank(uci, rope=0.01, method="sign", jobs=1, rng=1, draws=2000),
        # P(best) with its interval, ranks, orders: the longest notes of a ranking
        "uci plackett-luce": rank(uci, method="plackett-luce", rng=1),
        "uci sign": sign_test(uci.paired("nbc", "aode"), rope=0.01, rng=1, draws=2000),
        "f1_example": compare_f1(
            shipped, system_a="svm", system_b="nb", draws=2000, baselines=CHEAP, rng=1
        ),
        "f1_example logreg": compare_f1(
            shipped, system_a="svm", system_b="logreg", draws=2000, baselines=CHEAP, rng=1
        ),
    }


def _latex_documents(results):
    """One article per table, with exactly the packages each table's first line names."""
    docs = {}
    for name, res in results:
        out = render(res, "latex")
        first, _, rest = out.partition("\n")
        needs = re.fullmatch(r"% requires: (\\usepackage\{[a-z,]+\})", first)
        assert needs, f"{name}: the first line does not name the packages: {first!r}"
        docs[name] = f"\\documentclass{{article}}\n{needs.group(1)}\n\\begin{{document}}\n{out}"
    return docs


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no TeX engine (Debian texlive)")
def test_latex_tables_compile_in_a_plain_article_and_fit_the_column(
    tmp_path, comparisons, f1_result, power_result, ranking_result, long_name_results
):
    """Every result's table, in a default article (OT1, one column) with only the packages
    it names: it compiles, every control sequence is defined, no line is too wide."""
    results = [
        *_all_results(comparisons, f1_result, power_result, ranking_result),
        *long_name_results.items(),
    ]
    docs = _latex_documents(results)
    names = list(docs)
    # one document, one page per table; each table's first line is remembered to name it
    text, starts = "", []
    for name in names:
        preamble, _, body = docs[name].partition("\\begin{document}\n")
        starts.append((text.count("\n") + 1, name))
        text += body + "\\clearpage\n"
    assert {d.partition("\\begin{document}")[0] for d in docs.values()} == {preamble}
    (tmp_path / "t.tex").write_text(f"{preamble}\\begin{{document}}\n{text}\\end{{document}}\n")
    run = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (tmp_path / "t.log").read_text(encoding="latin-1")
    assert run.returncode == 0, run.stdout[-2000:]
    assert "Undefined control sequence" not in log and "Missing character" not in log
    head = len(preamble.splitlines()) + 1  # lines before the first table
    too_wide = [
        (next(n for line, n in reversed(starts) if line <= int(at) - head), width)
        for width, at in re.findall(r"Overfull \\hbox \(([\d.]+)pt too wide\).*?lines (\d+)", log)
    ]
    assert not too_wide, f"tables wider than the column: {too_wide}"
    assert (tmp_path / "t.pdf").stat().st_size > 1000


def test_latex_typesets_what_plain_text_writes(
    comparisons, f1_result, power_result, ranking_result
):
    """<=, +-, | and the signature print as written in any font encoding (OT1 turns
    a text | into an em dash, < and > into inverted marks)."""
    for name, res in _all_results(comparisons, f1_result, power_result, ranking_result):
        out = render(res, "latex")
        signature = to_table(res).signature
        tt = r"\texttt{" + signature.replace("_", r"\_").replace("|", "|\\allowbreak ") + "}"
        assert tt in out, name
        body = out.replace(tt, "").replace("$|$", "")
        assert "|" not in body, name
        assert "<=" not in body and "+-" not in body and ">=" not in body, name
        # the notes are left-aligned paragraphs, not centred lines
        notes = out.split("\\par\\smallskip\n", 1)[1]
        assert notes.startswith("{\\footnotesize\\raggedright\n") and "\\\\" not in notes, name
    assert r"$\le$ d $\le$" in render(comparisons["correlated_t"], "latex")
    assert r"ROPE $\pm$0.05" in render(f1_result, "latex")
    assert r"$\pm$ se" in render(power_result, "latex")


def test_latex_splits_a_wide_table_into_panels_that_repeat_the_labels(f1_result):
    """The F1 table (16 columns) is set as panels, each starting with the class column
    and keeping a group (the p-values, the Bayes factors) together."""
    out = render(f1_result, "latex")
    panels = [p.split("\\bottomrule")[0] for p in out.split("\\begin{tabular}{@{}l")[1:]]
    assert len(panels) >= 2
    for panel in panels:
        assert "\nclass & " in panel and "\\multicolumn" in panel
    assert sum(p.count("McNemar") for p in panels) == 1
    together = [p for p in panels if "BF01" in p]
    assert len(together) == 1 and "BF(ROPE)" in together[0]


def test_markdown_cells_never_break_the_table(comparisons):
    out = render(comparisons["hierarchical"], "markdown")
    rows = [line for line in out.splitlines() if line.startswith("|")]
    widths = {len(re.split(r"(?<!\\)\|", r)) for r in rows}
    assert len(widths) == 1 and len(rows) == 5  # header, separator, three regions


def test_missing_values_are_one_token_in_every_format(comparisons, ranking_result):
    """'–' in every kind of cell (text, Markdown, HTML), '--' in LaTeX, an empty CSV field:
    never 'nan', never an empty cell beside '–' cells."""
    missing = (None, float("nan"), np.float64("nan"))
    for kind in get_args(CellKind):
        column = Column("x", "x", kind)
        values = missing + (((None, None), (float("nan"), 0.1)) if kind == "interval" else ())
        for value in values:
            assert format_cell(column, value) == MISSING, (kind, value)
            assert format_cell(column, value, "latex") == "--", (kind, value)
    for name, res in [*comparisons.items(), ("ranking", ranking_result)]:
        rows = list(csv.DictReader(io.StringIO(render(res, "csv"))))
        assert not [k for r in rows for k, v in r.items() if v.lower() == "nan"], name
        for fmt in ("text", "markdown"):
            assert not re.search(r"\bnan\b", render(res, fmt), re.IGNORECASE), (name, fmt)
