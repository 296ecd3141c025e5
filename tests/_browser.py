"""Headless Chromium for the tests that look at rendered pages (HTML reports, the docs site)."""

from __future__ import annotations

import shutil


def chromium() -> str | None:
    """The Chromium executable on PATH, or None (the browser tests are then skipped)."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None
