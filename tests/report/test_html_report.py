"""The self-contained HTML report: the API, the ``--report`` flag, and the page in a browser.

The browser tests open each subcommand's report in headless Chromium (Debian's
``chromium``; ``.ci/run`` installs it) and read the rendered page: every table
has rows and height, every embedded plot has loaded (natural width > 0) and no
resource came from anywhere but the page itself. A screenshot of each page is
kept under the test's tmp_path. Without Chromium those tests are skipped.
Every result here is cheap: closed-form correlated t-tests, the exact F1 model
on the shipped example, a power analysis with few simulations.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _browser import chromium
from isbetter import InputError, compare, from_arrays
from isbetter.cli import main
from isbetter.report import render
from isbetter.report.html import html_report

ROOT = Path(__file__).resolve().parents[2]
F1_EXAMPLE = ROOT / "data" / "f1_example" / "predictions.csv"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def ttest_result():
    g = np.random.default_rng(11)
    x = g.normal(0.85, 0.01, size=(1, 10))
    y = x - 0.004 + g.normal(0, 0.004, size=(1, 10))
    scores = from_arrays(x, y, names=("svm", "nb"), runs=1)
    return compare(scores, system_a="svm", system_b="nb", rope=0.005, rng=0)


@pytest.fixture(scope="module")
def anneal_csv(tmp_path_factory, uci_long_path):
    """One data set (anneal), three classifiers: closed-form comparisons only."""
    df = pd.read_csv(uci_long_path)
    df = df[(df["dataset_id"] == 1) & df["classifier"].isin(["nbc", "aode", "hnb"])]
    path = tmp_path_factory.mktemp("data") / "anneal.csv"
    df.to_csv(path, index=False)
    return path


def _images(page: str) -> list[bytes]:
    return [base64.b64decode(m) for m in re.findall(r'src="data:image/png;base64,([^"]+)"', page)]


# ------------------------------------------------------------------ the API
def test_html_report_is_one_self_contained_page(ttest_result, tmp_path):
    path = tmp_path / "r.html"
    page = html_report(ttest_result, path=path)
    assert path.read_text(encoding="utf-8") == page
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    # the report pipeline's table fragment, as it is
    assert render(ttest_result, "html").strip() in page
    # metric, direction and ROPE named; settings, diagnostics and signature there
    for text in ("score (higher is better)", "±0.005", "Bayesian correlated t-test"):
        assert text in page
    assert ttest_result.summary().signature in page
    assert "<h2>Settings</h2>" in page and "versions.numpy" in page
    assert "<h2>MCMC diagnostics</h2>" in page and "No MCMC" in page
    # no resource from outside the page: every src/href is a data: URI or a fragment
    refs = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert refs and all(r.startswith("data:") for r in refs)
    assert "<link" not in page and "<script" not in page
    (img,) = _images(page)
    assert img.startswith(PNG)


def test_html_report_plots_argument(ttest_result, tmp_path):
    from matplotlib.figure import Figure

    assert "<img" not in html_report(ttest_result, plots=None)
    assert "<img" not in html_report(ttest_result.summary())  # a summary has no draws
    fig = Figure()
    fig.add_subplot().plot([0, 1], [1, 0])
    png = tmp_path / "p.png"
    fig.savefig(png)
    page = html_report(ttest_result, plots=[fig, png])
    assert len(_images(page)) == 2
    with pytest.raises(InputError, match="`plots` must be 'auto', None or a sequence"):
        html_report(ttest_result, plots="all")
    with pytest.raises(InputError, match="is not an image file"):
        html_report(ttest_result, plots=[tmp_path / "missing.png"])


def test_html_report_of_many_data_sets_draws_the_triangle(uci_long_path):
    df = pd.read_csv(uci_long_path)
    df = df[df["dataset_id"] <= 6]
    wide = df.pivot_table("accuracy", ["classifier", "dataset_id"], ["run", "fold"])
    nbc, aode = wide.loc["nbc"].to_numpy(), wide.loc["aode"].to_numpy()
    scores = from_arrays(nbc, aode, names=("nbc", "aode"), runs=10)
    res = compare(scores, system_a="nbc", system_b="aode", rope=0.01, method="sign", rng=0)
    page = html_report(res)
    (img,) = _images(page)
    assert img.startswith(PNG)
    assert "per-draw region masses in the triangle" in page
    assert "Bayesian sign test" in page and "±0.01" in page


def test_html_report_shows_mcmc_diagnostics(ttest_result):
    import dataclasses

    from isbetter import MCMCDiagnostics

    diag = MCMCDiagnostics(
        r_hat_max=1.0126885604919773,
        ess_bulk_min=87.690803868421,
        ess_tail_min=95.2,
        divergences=3,
        chains=2,
        draws=500,
        variables=("delta0", "std0"),
        backend="nutpie",
        converged=False,
    )
    page = html_report(dataclasses.replace(ttest_result, diagnostics=diag), plots=None)
    table = page[page.index('<table class="isbetter-diagnostics">') :]
    table = table[: table.index("</table>")]
    for text in ("delta0, std0", "R-hat max", "ESS bulk min", "divergences", ">3<", "nutpie"):
        assert text in table, text
    # R-hat to 3 decimals, effective sample sizes as whole draws: no raw floats
    cells = re.findall(r'<td class="num">([^<]*)</td>', table)
    assert cells[:4] == ["1.013", "88", "95", "3"], cells
    assert not re.search(r"\d\.\d{4,}", table)
    assert "POOR CONVERGENCE" in page and "No MCMC" not in page


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("r.txt", "give a file name ending in .html"),
        ("nowhere/r.html", "the folder .* does not exist"),
    ],
)
def test_html_report_path_is_checked(ttest_result, tmp_path, name, message):
    with pytest.raises(InputError, match=f"^path .*{message}"):
        html_report(ttest_result, path=tmp_path / name)


# ------------------------------------------------------------------ the --report flag
@pytest.mark.parametrize(
    ("command", "name", "message"),
    [
        ("cv", "out.txt", "give a file name ending in .html"),
        ("f1", "nowhere/out.html", "the folder .* does not exist"),
        ("rank", "out.pdf", "give a file name ending in .html"),
        ("power", "nowhere/out.html", "the folder .* does not exist"),
        # issue 29: a report format's name points to --format / --output
        ("rank", "rep.md", "writes a whole HTML page .* --format markdown --output '.*rep.md'"),
        ("cv", "rep.tex", "--format latex --output '.*rep.tex' \\(or --output '.*rep.tex' alone"),
    ],
)
def test_report_flag_is_checked_before_any_work(
    anneal_csv, tmp_path, capsys, command, name, message
):
    args = {
        "cv": ["cv", str(anneal_csv), "--a", "nbc", "--b", "aode"],
        "f1": ["f1", str(F1_EXAMPLE), "--a", "svm", "--b", "nb"],
        "rank": ["rank", str(anneal_csv)],
        "power": ["power", "--scenario", "sigir-a"],
    }[command]
    code = main([*args, "--report", str(tmp_path / name)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""  # nothing was computed or printed
    assert re.fullmatch(f"isbetter {command}: error: --report .*{message}.*\n", err)


def _cli_reports(anneal_csv: Path, folder: Path) -> dict[str, Path]:
    cols = ["--dataset-col", "dataset_name", "--system-col", "classifier", "--metric", "accuracy"]
    runs = {
        "cv": ["cv", str(anneal_csv), *cols, "--a", "nbc", "--b", "aode", "--rope", "0.01"],
        "f1": [
            "f1",
            str(F1_EXAMPLE),
            "--a",
            "svm",
            "--b",
            "nb",
            "--draws",
            "4000",
            "--resamples",
            "300",
            "--class",
            "science",
            "--class",
            "macro",
        ],
        "power": [
            "power",
            "--scenario",
            "sigir-a",
            "--sizes",
            "200",
            "400",
            "--replicates",
            "20",
            "--draws",
            "500",
        ],
        "rank": ["rank", str(anneal_csv), *cols, "--rope", "0.01", "--jobs", "1", "--quiet"],
    }
    out = {}
    for name, argv in runs.items():
        out[name] = folder / f"{name}.html"
        assert main([*argv, "--seed", "1", "--report", str(out[name])]) == 0
    return out


@pytest.fixture(scope="module")
def cli_reports(anneal_csv, tmp_path_factory):
    return _cli_reports(anneal_csv, tmp_path_factory.mktemp("reports"))


#: what each page must name: the metric and its direction, and the ROPE
NAMED = {
    "cv": ["accuracy (higher is better)", "±0.01", "Bayesian correlated t-test"],
    "f1": ["f1 (higher is better)", "±0.05", "science", "macro"],
    "power": ["f1 (higher is better)", "±0.05", "SIGIR 2016 scenario (a)"],
    "rank": [
        "metric accuracy",
        "higher is better; ROPE ±0.01",
        "aode, hnb, nbc",
        "every pair by the Bayesian correlated t-test",
    ],
}


def test_cli_report_pages(cli_reports):
    for name, path in cli_reports.items():
        page = path.read_text(encoding="utf-8")
        for text in NAMED[name]:
            assert text in page, (name, text)
        images = _images(page)
        assert len(images) == 1 and images[0].startswith(PNG), name
        assert "Figure 1. " in page  # the CLI's plot, with its caption


def test_cli_report_pages_name_their_input(cli_reports, anneal_csv):
    """A page meant to be kept says what it was computed from: file, rows, SHA-256."""
    digest = hashlib.sha256(anneal_csv.read_bytes()).hexdigest()
    rows = len(pd.read_csv(anneal_csv))
    for name in ("cv", "rank"):
        page = cli_reports[name].read_text(encoding="utf-8")
        facts = page[page.index('<dl class="facts">') : page.index("</dl>")]
        assert f"<dt>input</dt><dd>anneal.csv, {rows} rows, SHA-256 <code>{digest}</code>" in facts
        assert f"input.sha256</th><td>{digest}<" in page  # and in the settings
    f1 = cli_reports["f1"].read_text(encoding="utf-8")
    assert "predictions.csv, 2000 rows" in f1
    assert hashlib.sha256(F1_EXAMPLE.read_bytes()).hexdigest() in f1
    assert "<dt>input</dt>" not in cli_reports["power"].read_text(encoding="utf-8")


def test_page_names_the_rope_one_way_and_keeps_bounds_with_their_numbers(cli_reports):
    """The title says 'ROPE ±0.05' as the page does; a Bayes factor cell ('< 0.0605')
    is a number cell, which never wraps."""
    for name, path in cli_reports.items():
        page = path.read_text(encoding="utf-8")
        assert "+-" not in page, name
    f1 = cli_reports["f1"].read_text(encoding="utf-8")
    title = re.search(r"<title>(.*?)</title>", f1).group(1)
    assert "ROPE ±0.05" in title
    bounds = re.findall(r"<td([^>]*)>&[lg]t; [0-9.e+-]+</td>", f1)
    assert bounds and all(b == ' class="num"' for b in bounds), bounds
    assert re.search(r"td\.num[^{]*\{[^}]*white-space: nowrap", f1)


def test_cli_says_where_the_report_went(anneal_csv, tmp_path, capsys):
    path = tmp_path / "cv.htm"
    argv = ["cv", str(anneal_csv), "--dataset-col", "dataset_name", "--system-col", "classifier"]
    argv += ["--rope", "0.01"]  # without it, stderr also holds the note on the ROPE default
    code = main([*argv, "--metric", "accuracy", "--a", "nbc", "--b", "aode", "--report", str(path)])
    assert code == 0 and path.is_file()
    out, err = capsys.readouterr()
    assert "Bayesian correlated t-test" in out  # the text report still goes to stdout
    assert err == f"wrote report to {path}\n"


# ------------------------------------------------------------------ in a real browser
_CHECK = """<script>
(async () => {
  // every image loaded (the load event), then decoded; a decode that never settles in
  // Chromium's virtual time (seen once in CI) must not keep the result from being written:
  // the sizes below are known once an image has loaded
  if (document.readyState !== "complete") {
    await new Promise(r => window.addEventListener("load", r, {once: true}));
  }
  const imgs = Array.from(document.images);
  const decoded = Promise.all(imgs.map(i => i.decode().catch(() => null)));
  await Promise.race([decoded, new Promise(r => setTimeout(r, 2000))]);
  const tables = Array.from(document.querySelectorAll("table.isbetter-report"));
  const out = {
    images: imgs.map(i => ({w: i.naturalWidth, h: i.naturalHeight, shown: i.width})),
    tables: tables.map(t => ({rows: t.rows.length, height: t.getBoundingClientRect().height,
                              caption: t.caption ? t.caption.innerText : ""})),
    text: document.body.innerText,
    resources: performance.getEntriesByType("resource").map(e => e.name),
  };
  const pre = document.createElement("pre");
  pre.id = "isbetter-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def _browse(browser: str, page: Path, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [
        browser,
        "--headless",
        "--disable-gpu",
        "--no-sandbox",  # CI runs as root
        "--no-first-run",
        "--disable-extensions",
        f"--user-data-dir={tmp / 'chromium-profile'}",
        *extra,
        page.as_uri(),
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.skipif(
    chromium() is None,
    reason="headless Chromium not installed (apt-get install chromium; .ci/run installs it)",
)
@pytest.mark.parametrize("name", ["cv", "f1", "power", "rank"])
def test_report_renders_in_chromium(cli_reports, tmp_path, name):
    browser = chromium()
    assert browser is not None
    report = cli_reports[name]
    # a copy of the page with a script that writes what the browser rendered into the DOM
    check = tmp_path / f"{name}-check.html"
    check.write_text(
        report.read_text(encoding="utf-8").replace("</body>", _CHECK + "</body>"),
        encoding="utf-8",
    )
    # Chromium under load now and then exits without a DOM (only dbus noise on stderr): a
    # flake of the browser, not of the page, so it gets two more tries with more time
    for budget in (10_000, 30_000, 60_000):
        profile = tmp_path / f"try-{budget}"  # a fresh profile: no lock left by a crash
        profile.mkdir()
        done = _browse(browser, check, profile, f"--virtual-time-budget={budget}", "--dump-dom")
        found = re.search(r'<pre id="isbetter-check">(.*?)</pre>', done.stdout, re.S)
        if found:
            break
    assert found, (
        f"no rendered result from Chromium in 3 tries; stdout {len(done.stdout)} characters, "
        f"exit code {done.returncode}; stderr: {done.stderr[-2000:]}"
    )
    seen = json.loads(
        found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    )

    assert seen["tables"], "no report table rendered"
    for table in seen["tables"]:
        assert table["rows"] >= 3 and table["height"] > 0 and table["caption"]
    assert seen["images"], "no plot on the page"
    for img in seen["images"]:
        assert img["w"] > 0 and img["h"] > 0 and img["shown"] > 0, img
    assert all(r.startswith("data:") for r in seen["resources"]), seen["resources"]
    for text in ("Settings", "MCMC diagnostics", "Signature", *NAMED[name]):
        assert text in seen["text"], text

    shot = tmp_path / f"{name}-report.png"
    done = _browse(
        browser,
        report,
        tmp_path,
        "--hide-scrollbars",
        "--window-size=1280,2000",
        f"--screenshot={shot}",
    )
    assert shot.is_file() and shot.read_bytes().startswith(PNG), done.stderr[-2000:]
