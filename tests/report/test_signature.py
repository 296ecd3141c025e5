"""The signature says what was done, on every route (issue 29, item 5).

Pairwise and joint rankings printed the same ``method:ranking|...``; the signature now
names the method (``pairwise-<method>`` for a ranking fitted pair by pair), the ROPE,
the draws (x chains), the tuning steps, the seed and the versions of isbetter, PyMC,
nutpie and numba.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from _joint_data import SMALL, score_table, small_joint_rank, study_scores
from isbetter import ConvergenceWarning, compare, compare_f1, power_analysis, rank, read_scores
from isbetter.core.provenance import signature, versions
from isbetter.cv.joint.spec import JointPriors
from isbetter.f1.power import SIGIR_SCENARIO_A

#: the joint model's former default prior (one nu, the inverse-Wishart)
SHARED = JointPriors(tails="shared")

#: the versions every new signature ends with
VERSIONS = r"\|isbetter:[^|]+\|pymc:[^|]+\|nutpie:[^|]+\|numba:[^|]+"


def _check(result, head):
    """The signature is `head` (a regular expression), then the four versions, nothing else."""
    sig = result.signature
    assert re.fullmatch(head + VERSIONS, sig), sig
    assert sig.count("method:") == 1
    return sig


@pytest.fixture(scope="module")
def uci(uci_long_path):
    return read_scores(uci_long_path, dataset="dataset_id", system="classifier", score="accuracy")


@pytest.fixture(scope="module")
def anneal(uci_long_path):
    df = pd.read_csv(uci_long_path)
    one = df[df["dataset_id"] == 1]
    return read_scores(one, dataset="dataset_id", system="classifier", score="accuracy")


@pytest.fixture(scope="module")
def predictions():
    g = np.random.default_rng(1)
    gold = g.integers(0, 2, 400)
    guess = {
        s: np.where(g.random(400) < p, gold, 1 - gold)
        for s, p in zip("abc", (0.9, 0.8, 0.7), strict=True)
    }
    return pd.DataFrame({"gold": gold, **guess})


def test_versions_name_the_sampler_and_the_compiler():
    assert {"isbetter", "pymc", "nutpie", "numba"} <= set(versions())


def test_a_record_saved_before_keeps_its_signature():
    """Settings without ``signature_method`` (an older isbetter's JSON) sign as they did."""
    old = {"method": "ranking", "rope": 0.01, "seed": 1, "tune": 500, "versions": {"pymc": "5"}}
    assert signature(old) == "method:ranking|rope:0.01|seed:1|pymc:5"


def test_cv_routes(anneal, uci, hierarchical_fit):
    _check(
        compare(anneal, "nbc", "aode", rope=0.01, rng=1), r"method:correlated-t\|rope:0.01\|seed:1"
    )
    for method, name in (("sign", "sign"), ("signed_rank", "signed-rank")):
        res = compare(uci, "nbc", "aode", rope=0.01, method=method, rng=1)
        _check(res, rf"method:{name}\|rope:0.01\|draws:50000\|seed:1")
    _check(hierarchical_fit, r"method:hierarchical\|rope:0.01\|draws:300x2\|tune:300\|seed:7")


def test_f1_routes(predictions):
    res = compare_f1(predictions, "a", "b", draws=2000, baselines=False, rng=3)
    _check(res, r"method:paired-f1\|rope:0.05\|draws:2000\|seed:3")
    res = compare_f1(predictions, "a", "b", model="unpaired", draws=2000, baselines=False, rng=3)
    _check(res, r"method:unpaired-f1\|rope:0.05\|draws:2000\|seed:3")
    res = power_analysis(SIGIR_SCENARIO_A, sizes=[100], replicates=5, draws=200, rng=4)
    _check(res, r"method:power-f1\|rope:0.05\|draws:200\|seed:4")


def test_pairwise_rankings_name_their_method(anneal, uci, predictions):
    res = rank(anneal, systems=["nbc", "aode", "hnb"], rope=0.01, rng=1, progress=False)
    _check(res, r"method:pairwise-correlated-t\|rope:0.01\|seed:1")
    res = rank(uci, rope=0.01, method="signed_rank", rng=1, jobs=1, progress=False)
    _check(res, r"method:pairwise-signed-rank\|rope:0.01\|draws:50000\|seed:1")
    res = rank(predictions, rope=0.02, draws=1000, baselines=False, rng=2, progress=False)
    _check(res, r"method:pairwise-paired-f1\|rope:0.02\|draws:1000\|seed:2")


def test_pairwise_hierarchical_ranking(uci):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # a small run: the signature only
        res = rank(uci, systems=["nbc", "aode"], rope=0.01, rng=1, jobs=1, progress=False, **SMALL)
    _check(res, r"method:pairwise-hierarchical\|rope:0.01\|draws:300x2\|tune:300\|seed:1")


def test_one_model_rankings_name_their_model():
    """The joint and pairwise rankings of the same scores no longer sign alike."""
    table = score_table(study_scores(np.random.default_rng(5), [0.0, 0.001, 0.05], q=6))
    joint, shared = small_joint_rank(table), small_joint_rank(table, priors=SHARED)
    with warnings.catch_warnings():  # a signature test: 2 x 300 draws may mix poorly
        warnings.simplefilter("ignore", ConvergenceWarning)
        pl = rank(table, method="plackett_luce", rng=2, **SMALL)
    # the joint model's signature names its prior's form (tails, spread prior)
    _check(joint, r"method:joint-components-huang-wand\|rope:0.01\|draws:300x2\|tune:300\|seed:2")
    _check(shared, r"method:joint-shared-inverse-wishart\|rope:0.01\|draws:300x2\|tune:300\|seed:2")
    # Plackett–Luce has no ROPE: its signature names none (it printed rope:0)
    _check(pl, r"method:plackett-luce\|draws:300x2\|tune:300\|seed:2")
    # and its pairs, read off that one fit (they signed method:plackett_luce|rope:0|...)
    _check(pl.pairs[0], r"method:plackett-luce\|draws:300x2\|tune:300\|seed:\d+")
    pairwise = rank(table, rope=0.01, method="signed_rank", rng=2, jobs=1, progress=False)
    assert pairwise.signature.split("|")[0] == "method:pairwise-signed-rank"
