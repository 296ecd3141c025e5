"""Shared fixtures; every random test is seeded from here."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

settings.register_profile("fast", max_examples=15, deadline=None)
settings.register_profile("thorough", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
REFERENCE = Path(__file__).resolve().parent / "reference"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240917)


@pytest.fixture(scope="session")
def uci_long_path() -> Path:
    return DATA / "uci_benavoli2017" / "uci_cv_accuracy_long.csv"
