"""Shared fixtures; every random test is seeded from here."""

import os
import signal

os.environ.setdefault("MPLBACKEND", "Agg")

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

from _uci import UCI  # noqa: E402

settings.register_profile("fast", max_examples=15, deadline=None)
settings.register_profile("thorough", max_examples=300, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = Path(__file__).resolve().parent / "reference"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240917)


@pytest.fixture(scope="session")
def uci_long_path() -> Path:
    return UCI


# ------------------------------------------------------------------ one compiled model
HIER_SEED = 20240917
HIER_Q = 8  # every small hierarchical fit uses this many data sets: one compiled model
HIER_SMALL = {"draws": 300, "tune": 300, "chains": 2}


@pytest.fixture(scope="session")
def hierarchical_scores():
    """8 data sets x 10 folds; A better than B by 0.03 on average."""
    from isbetter import from_arrays

    g = np.random.default_rng(HIER_SEED)
    base = g.uniform(0.6, 0.9, size=(HIER_Q, 1))
    x = base + g.normal(0, 0.02, size=(HIER_Q, 10))
    effect = g.normal(0.03, 0.01, size=(HIER_Q, 1))
    y = x - effect + g.normal(0, 0.01, size=(HIER_Q, 10))
    return from_arrays(x, y, names=("A", "B"), runs=1).paired("A", "B")


@pytest.fixture(scope="session")
def hierarchical_model():
    """The compiled model that `hierarchical_test` itself reuses for 8 data sets.

    Compiling costs ~15 s on 2 cores; the whole suite shares this one.
    """
    from isbetter.cv.hierarchical import model as hm
    from isbetter.inference.sampling import resolve_backend

    # "auto", as hierarchical_test asks for it (integrated at 8 data sets)
    return hm._shared_model(HIER_Q, resolve_backend("auto"), "auto").compile()


@pytest.fixture(scope="session")
def hierarchical_fit(hierarchical_model, hierarchical_scores):
    import warnings

    from isbetter import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # small run; diagnostics tested
        return hierarchical_model.fit(hierarchical_scores, rope=0.01, rng=7, **HIER_SMALL)


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler for the test, whatever the process inherited.

    A process started in the background by a non-interactive shell (``cmd &``, as CI
    scripts may) inherits SIGINT ignored, and then Python installs no handler at all.
    """
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)
