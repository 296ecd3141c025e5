"""The files a release carries beside the code: CITATION.cff, CHANGELOG.md, one version."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

import isbetter

ROOT = Path(__file__).resolve().parents[2]


def test_citation_file_names_the_software_and_the_four_papers():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["authors"] == [{"name": "isbetter developers"}]
    assert "version" not in cff  # the one version is isbetter.__version__
    assert {"cff-version", "message", "title", "authors"} <= set(cff)
    years = sorted((ref["authors"][0]["family-names"], ref["year"]) for ref in cff["references"])
    assert years == [("Benavoli", 2017), ("Corani", 2017), ("Szymański", 2020), ("Zhang", 2016)]


def test_the_version_comes_from_one_place():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    dynamic = project["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "isbetter.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+(\.dev\d+|rc\d+)?", isbetter.__version__)


def test_changelog_names_what_changed_since_the_first_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n")
    assert "changes since 0.1.0" in text
    # a heading for the current version, or the changes not released yet
    assert f"## {isbetter.__version__}" in text or "## Unreleased" in text
