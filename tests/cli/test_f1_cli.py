"""The `isbetter f1` and `isbetter power` subcommands, in-process."""

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from isbetter.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "f1_example" / "predictions.csv"


def test_f1_json_rows(capsys):
    code = main(
        [
            "f1",
            str(EXAMPLE),
            "--a",
            "svm",
            "--b",
            "logreg",
            "--seed",
            "3",
            "--draws",
            "5000",
            "--resamples",
            "1000",
            "--format",
            "json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["rows"]
    assert [r["label"] for r in rows] == ["politics", "science", "sport", "tech", "macro", "micro"]
    for row in rows:
        assert {"p_a_better", "p_rope", "p_b_better", "system_a", "system_b"} <= set(row)
        est = row["estimate"]
        assert {"mean", "sd", "mcse", "p_below_0", "p_above_0", "bf01", "decision"} <= set(est)
        assert {"low", "high", "prob", "kind"} <= set(est["interval"])
        assert {"sign", "mcnemar", "bootstrap"} <= {t["name"] for t in row["tests"]}
        assert row["seed"] == 3
    assert out["signature"].startswith("method:paired-f1|rope:0.05")
    assert rows[0]["estimate"]["decision"] in {
        "a_better",
        "a_leaning",
        "equivalent",
        "b_leaning",
        "b_better",
    }
    # regression: the JSON form dropped the across-class T- and S-tests
    assert {t["name"] for t in out["across_classes"]} == {"t_test", "s_test"}
    assert out["title"].startswith("paired Bayesian comparison of f1 (higher is better)")


def test_f1_text_report_shows_the_bayes_factors(capsys):
    """Regression: the report's BF01 and BF(ROPE) columns printed "–" on every row.

    The report must show each row's Savage–Dickey BF01 and ROPE Bayes factor as the
    result holds them, with "<" where the value is a bound.
    """
    from isbetter import compare_f1
    from isbetter.report import render

    res = compare_f1(
        pd.read_csv(EXAMPLE), system_a="svm", system_b="nb", rope=0.02, draws=5000, rng=1
    )
    frame = res.to_frame().set_index("label")
    text = render(res)
    lines = {line.split()[0]: line for line in text.splitlines()[2:8]}
    for label, row in frame.iterrows():
        for value, bound in ((row.bf01, row.bf01_bound), (row.bf_rope, row.bf_rope_bound)):
            assert value == value  # the example's rows all have both Bayes factors
            shown = f"{bound + ' ' if bound else ''}{value:.3g}"
            assert shown in lines[str(label)], (label, shown, lines[str(label)])


def test_f1_binary_text_and_markdown(tmp_path, capsys):
    df = pd.read_csv(EXAMPLE)
    binary = pd.DataFrame(
        {
            "label": (df.gold == "science").astype(int),
            "x": (df.nb == "science").astype(int),
            "y": (df.svm == "science").astype(int),
        }
    )
    path = tmp_path / "bin.csv"
    binary.to_csv(path, index=False)
    out = tmp_path / "report.md"
    code = main(
        [
            "f1",
            str(path),
            "--gold",
            "label",
            "--a",
            "x",
            "--b",
            "y",
            "--seed",
            "1",
            "--draws",
            "4000",
            "--resamples",
            "500",
            "--format",
            "markdown",
            "--output",
            str(out),
        ]
    )
    assert code == 0
    text = out.read_text()
    assert text.count("\n| 1 |") == 1  # one row: the positive class
    assert "≪" in text  # nb is far worse on science
    assert "`method:paired-f1|rope:0.05|draws:4000|seed:1" in text
    assert (
        main(
            [
                "f1",
                str(path),
                "--gold",
                "label",
                "--seed",
                "1",
                "--draws",
                "3000",
                "--no-baselines",
                "--metric",
                "dcf",
                "--cost-fp",
                "2",
            ]
        )
        == 0
    )
    assert "dcf(1,2,0.5)" in capsys.readouterr().out


def test_f1_plot_written(tmp_path):
    plot = tmp_path / "f1.png"
    assert (
        main(
            [
                "f1",
                str(EXAMPLE),
                "--a",
                "svm",
                "--b",
                "nb",
                "--seed",
                "1",
                "--draws",
                "3000",
                "--no-baselines",
                "--plot",
                str(plot),
            ]
        )
        == 0
    )
    assert plot.stat().st_size > 1000


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gold", "label"], "Column 'label' (--gold) not found"),
        (["--a", "svm", "--b", "bert"], "Column 'bert' (--b) not found"),
        (["--rope", "-1"], "--rope must be a non-negative number"),
        (["--positive", "sport"], "--positive is for binary tasks"),
    ],
)
def test_f1_bad_input_one_line_exit_2(args, message, capsys):
    code = main(
        [
            "f1",
            str(EXAMPLE),
            "--draws",
            "100",
            "--no-baselines",
            *(args if "--a" in args else ["--a", "svm", "--b", "nb", *args]),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_f1_unknown_prediction_labels(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"gold": ["a", "b", "a"], "x": ["a", "c", "a"], "y": ["a", "b", "b"]}).to_csv(
        path, index=False
    )
    assert main(["f1", str(path)]) == 2
    assert "Predicted labels absent from the gold labels ('x': 'c')" in capsys.readouterr().err


def test_power_cli(tmp_path, capsys):
    plot = tmp_path / "power.png"
    code = main(
        [
            "power",
            "--scenario",
            "sigir-b",
            "--sizes",
            "500",
            "3500",
            "--replicates",
            "60",
            "--draws",
            "1000",
            "--seed",
            "2",
            "--format",
            "json",
            "--plot",
            str(plot),
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["rows"]
    assert {(r["size"], r["model"]) for r in rows} == {
        (500, "paired"),
        (500, "unpaired"),
        (3500, "paired"),
        (3500, "unpaired"),
    }
    assert out["goal"] == "equivalent" and out["scenario"] == "SIGIR 2016 scenario (b)"
    assert plot.stat().st_size > 1000
    code = main(
        [
            "power",
            "--mu",
            "0.5",
            "--theta-pos",
            "0.3",
            "0.3",
            "0.2",
            "0.2",
            "--theta-neg",
            "0.2",
            "0.2",
            "0.3",
            "0.3",
            "--sizes",
            "200",
            "--replicates",
            "20",
            "--draws",
            "500",
            "--seed",
            "1",
        ]
    )
    assert code == 0 and "power paired" in capsys.readouterr().out


def test_power_cli_bad_input(capsys):
    assert main(["power", "--mu", "0.5"]) == 2
    assert "Give a generating distribution" in capsys.readouterr().err
    assert (
        main(
            [
                "power",
                "--mu",
                "0.5",
                "--theta-pos",
                "0.5",
                "0.5",
                "0.5",
                "0.5",
                "--theta-neg",
                "0.25",
                "0.25",
                "0.25",
                "0.25",
                "--sizes",
                "100",
            ]
        )
        == 2
    )
    assert "sum to 1" in capsys.readouterr().err


TWENTY = Path(__file__).resolve().parents[2] / "data" / "f1_20class" / "predictions.csv"


@pytest.mark.slow  # compiles the ICDM model (numba) once
def test_f1_hierarchical_model_on_20_classes(capsys):
    code = main(
        [
            "f1",
            str(TWENTY),
            "--a",
            "svm",
            "--b",
            "nb",
            "--model",
            "hierarchical",
            "--seed",
            "1",
            "--draws",
            "4000",
            "--no-baselines",
            "--format",
            "json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    labels = [r["label"] for r in out["rows"]]
    assert len(labels) == 22 and labels[-2:] == ["macro", "micro"]
    assert out["model"] == "hierarchical" and out["diagnostics"]["converged"]
    for row in out["rows"][-2:]:
        assert row["diagnostics"]["divergences"] == 0
        assert row["estimate"]["mean"] > 0  # svm is the better classifier
    assert out["signature"].startswith("method:hierarchical-f1")


def _f1_args(*extra):
    base = ["f1", str(EXAMPLE), "--a", "svm", "--b", "nb", "--draws", "2000", "--no-baselines"]
    return [*base, *extra]


@pytest.mark.parametrize(
    ("classes", "drawn"),
    [
        ([], None),
        (["science", "macro"], ["science", "macro"]),
        (["micro"], ["micro"]),
        (["all"], ["politics", "science", "sport", "tech", "macro", "micro"]),
    ],
)
def test_f1_class_chooses_what_is_plotted(tmp_path, monkeypatch, capsys, classes, drawn):
    """`--plot` used to draw the first class only; --class picks rows, macro and micro too."""
    import isbetter.plots.f1 as f1_plots

    calls = []
    monkeypatch.setattr(f1_plots, "save_f1_plot", lambda r, path, label: calls.append(label))
    flags = [x for c in classes for x in ("--class", c)]
    assert main(_f1_args(*flags, "--plot", str(tmp_path / "p.png"))) == 0
    assert calls == [drawn]
    assert "wrote plot to" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--class", "nope", "--plot", "p.png"], "--class 'nope': no such row; choose from"),
        (["--class", "macro"], "--class chooses what is plotted; give --plot FILE or --report"),
    ],
)
def test_f1_class_errors(tmp_path, monkeypatch, capsys, extra, message):
    monkeypatch.chdir(tmp_path)
    assert main(_f1_args(*extra)) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and message in err


@pytest.mark.parametrize("fmt", ["text", "markdown", "latex", "html", "json", "csv"])
def test_f1_reports_lead_with_bf_rope_and_name_the_bf01_bandwidth(fmt):
    """Regression (statistical review): BF01 is a ratio of kernel density estimates whose
    value depends on the bandwidth (the prior density of delta diverges at 0), yet no
    report named it, and it came first. Every format puts BF(ROPE) first, shows Monte
    Carlo errors and names BF01's bandwidths (a note; per row in JSON and CSV)."""
    from isbetter import compare_f1
    from isbetter.report import render

    res = compare_f1(EXAMPLE, system_a="svm", system_b="logreg", draws=5000, rng=1)
    e = res.comparison("politics").estimate
    h0 = f"{e.bf01_prior_bandwidth:.3g}"
    out = render(res, fmt)
    if fmt == "json":
        data = json.loads(out)
        est = data["rows"][0]["estimate"]
        assert list(est).index("bf_rope") < list(est).index("bf01")
        assert est["bf01_prior_bandwidth"] == e.bf01_prior_bandwidth
        assert est["bf01_bandwidth"] == e.bf01_bandwidth
        assert est["bf01_mcse"] == e.bf01_mcse and e.bf01_mcse > 0
        assert any(f"h0 = {h0}" in n for n in data["notes"])
    elif fmt == "csv":
        frame = pd.read_csv(io.StringIO(out))
        cols = list(frame.columns)
        assert cols.index("bf_rope") < cols.index("bf01")
        assert {"bf_rope_mcse", "bf01_mcse", "bf01_bandwidth", "bf01_prior_bandwidth"} <= set(cols)
        assert frame.loc[0, "bf01_prior_bandwidth"] == pytest.approx(e.bf01_prior_bandwidth)
    else:
        assert out.index("BF(ROPE)") < out.index("BF01")
        assert f"h0 = {h0}" in out
        assert f"{e.bf01:.3g}" in out and f"{e.bf01_mcse:.2g}" in out
        assert ("$\\pm$" if fmt == "latex" else "±") in out
