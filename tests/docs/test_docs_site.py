"""The documentation site builds with warnings as errors, and its pages render in a browser.

Two ways to run, by where the site comes from:

* ``ISBETTER_DOCS_HTML=DIR``: the site ``.ci/run`` built (``sphinx-build -W --keep-going -n``,
  notebooks executed) is checked as it is; these tests are then quick;
* without it, the site is built here into a temporary folder, with the same flags and the
  notebooks rendered unexecuted (``ISBETTER_DOCS_EXECUTE=off``) — a minute or more, so
  then the tests are marked slow; without Sphinx (``pip install -e ".[docs]"``) they are
  skipped.

In the site: every public name of ``isbetter.__all__`` and of the documented subpackages'
``__all__`` has its page; the front page and one API page, opened in headless Chromium
(as ``tests/report/test_html_report.py`` does; skipped without it), show text without
"undefined" and a screenshot that is not blank.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from _browser import chromium

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PREBUILT = os.environ.get("ISBETTER_DOCS_HTML")

pytestmark = [] if PREBUILT else [pytest.mark.slow]

#: the page of one API object checked in the browser
API_PAGE = "api/generated/isbetter.compare.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The HTML folder of the site: the prebuilt one, or one built here."""
    if PREBUILT:
        html = Path(PREBUILT)
        assert (html / "index.html").is_file(), f"ISBETTER_DOCS_HTML={PREBUILT} has no index.html"
        return html
    if importlib.util.find_spec("sphinx") is None:
        pytest.skip('Sphinx not installed (pip install -e ".[docs]"; .ci/run installs it)')
    out = tmp_path_factory.mktemp("docs")
    env = {
        **os.environ,
        "ISBETTER_DOCS_EXECUTE": "off",
        "ISBETTER_DOCS_CACHE": str(out / "jupyter_cache"),
    }
    # the same flags as .ci/run: warnings are errors, every reference must resolve
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html",
         "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
        capture_output=True, text=True, env=env, timeout=1800, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-5000:]
    return out / "html"


def _documented() -> dict[str, list[str]]:
    """Module -> the names its API page documents, as docs/api_pages.py chooses them."""
    spec = importlib.util.spec_from_file_location("isbetter_api_pages", DOCS / "api_pages.py")
    assert spec is not None and spec.loader is not None
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf.public_names()


def test_every_public_name_has_a_page(site):
    pages = _documented()
    for module in pages:
        exported = set(importlib.import_module(module).__all__) - {"__version__"}
        # each exported name is documented on its module's page or, once, above it
        elsewhere = {n for m, names in pages.items() if m != module for n in names}
        assert exported <= set(pages[module]) | elsewhere, module
    missing = [
        f"{module}.{name}"
        for module, names in pages.items()
        for name in names
        if not (site / "api" / "generated" / f"{module}.{name}.html").is_file()
    ]
    assert not missing


def test_the_site_has_its_pages(site):
    for page in (
        "index.html",
        "paper.html",
        "performance.html",
        "changelog.html",
        "guide/which_ranking.html",
        "guide/cross_validation.html",
        "tutorials/02_ranking.html",
        API_PAGE,
    ):
        assert (site / page).is_file(), page
    changelog = (site / "changelog.html").read_text(encoding="utf-8")
    assert "since 0.1.0" in changelog


def _visible_text(dom: str) -> str:
    body = dom.split("<body", 1)[-1]
    body = re.sub(r"<(script|style|template)\b.*?</\1>", " ", body, flags=re.S | re.I)
    return " ".join(re.sub(r"<[^>]+>", " ", body).split())


def _not_blank(png: Path) -> None:
    import matplotlib.image

    pixels = matplotlib.image.imread(png)[..., :3]
    assert pixels.shape[0] > 100 and pixels.shape[1] > 100
    colours = np.unique((pixels * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    dark = (pixels.mean(axis=2) < 0.5).mean()  # the share of text-coloured pixels
    assert len(colours) > 20 and 0.005 < dark < 0.9, (len(colours), dark)


@pytest.mark.skipif(
    chromium() is None,
    reason="headless Chromium not installed (apt-get install chromium; .ci/run installs it)",
)
@pytest.mark.parametrize(
    ("page", "expected"),
    [
        ("index.html", ("Is system A really better", "What kind of evidence", "Install")),
        (API_PAGE, ("compare", "Parameters", "Returns")),
    ],
)
def test_page_renders_in_chromium(site, tmp_path, page, expected):
    browser = chromium()
    assert browser is not None
    common = [browser, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
              "--disable-extensions", f"--user-data-dir={tmp_path / 'profile'}"]  # fmt: skip
    url = (site / page).as_uri()
    # Chromium under load now and then exits without a DOM: two more tries with more time
    for budget in (10_000, 30_000, 60_000):
        done = subprocess.run(
            [*common, f"--virtual-time-budget={budget}", "--dump-dom", url],
            capture_output=True, text=True, timeout=180, check=False,
        )  # fmt: skip
        if "</body>" in done.stdout:
            break
    assert "</body>" in done.stdout, done.stderr[-2000:]
    text = _visible_text(done.stdout)
    for words in expected:
        assert words in text, words
    assert "undefined" not in text.lower()
    shot = tmp_path / "page.png"
    done = subprocess.run(
        [*common, "--hide-scrollbars", "--window-size=1280,1000", f"--screenshot={shot}", url],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert shot.is_file(), done.stderr[-2000:]
    _not_blank(shot)


@pytest.mark.skipif(not PREBUILT, reason="the site built here does not execute the notebooks")
def test_tutorials_show_their_executed_outputs(site):
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        page = (site / "tutorials" / f"{notebook.stem}.html").read_text(encoding="utf-8")
        assert "cell_output" in page and "<img" in page, notebook.stem
