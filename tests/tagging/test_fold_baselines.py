"""Per-fold baselines (mid-p McNemar, Wilson) and the study API (score_study, read_study)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from isbetter.core.errors import InputError
from isbetter.cv.scores import ScoreTable
from isbetter.tagging import (
    METRICS,
    Fold,
    TaggingScores,
    fold_baselines,
    mcnemar_midp,
    read_study,
    score,
    score_study,
    split,
    wilson_interval,
)

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(("b", "c"), [(1, 7), (7, 1), (0, 5), (12, 20), (40, 41)])
def test_mid_p_is_the_exact_test_less_the_observed_point(b: int, c: int) -> None:
    exact = mcnemar([[0, b], [c, 0]], exact=True).pvalue  # statsmodels: 2 P(X <= min)
    point = stats.binom.pmf(min(b, c), b + c, 0.5)
    assert mcnemar_midp(b, c) == pytest.approx(min(exact - point, 1.0), abs=1e-12)
    assert mcnemar_midp(b, c) < exact


def test_mid_p_of_equal_counts_is_one() -> None:
    # 2 P(X <= 3) - P(X = 3) for X ~ Bin(6, 1/2): (2 * 42 - 20) / 64 = 1
    assert mcnemar_midp(3, 3) == 1.0 and mcnemar_midp(0, 0) == 1.0


def test_mid_p_of_fagerland_et_al() -> None:
    # Fagerland, Lydersen & Laake (2013), Table 1 (Bentur et al.): 1 and 7 discordant pairs,
    # exact conditional p 0.070, mid-p 0.039
    assert round(mcnemar(np.array([[0, 1], [7, 0]]), exact=True).pvalue, 3) == 0.070
    assert round(mcnemar_midp(1, 7), 3) == 0.039


@pytest.mark.parametrize(("k", "n"), [(81, 263), (0, 10), (10, 10), (24_000, 25_000)])
def test_wilson_interval_is_the_closed_form(k: int, n: int) -> None:
    z = stats.norm.ppf(0.975)
    p = k / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    assert wilson_interval(k, n) == pytest.approx((centre - half, centre + half), abs=1e-12)


def _scores(correct: list[bool]) -> TaggingScores:
    c = np.array(correct)
    return TaggingScores(len(c), int(c.sum()), 1, int(c.all()), None, None, correct=c)


def test_fold_baselines_count_the_discordant_tokens() -> None:
    fold = Fold("c", 1, 1, Path("train"), None, Path("test"))
    a = _scores([True, True, True, False, True, True])
    b = _scores([True, False, False, False, True, False])
    base = fold_baselines([(fold, {"a": a, "b": b})])
    row = base.mcnemar.iloc[0]
    assert (row.only_a, row.only_b) == (3, 0)
    assert row.p_value == pytest.approx(mcnemar_midp(3, 0))  # 2/8 - 1/8 = 0.125
    assert row.p_value == pytest.approx(0.125) and not row.significant and row.better == ""
    table = base.table()
    assert table.loc[0, "accuracy_a"] == 5 / 6 and table.loc[0, "accuracy_b"] == 2 / 6
    assert (table.loc[0, "low_a"], table.loc[0, "high_a"]) == wilson_interval(5, 6)
    summary = base.summary().iloc[0]
    assert (summary.folds, summary.a_better, summary.b_better, summary.no_difference) == (
        1, 0, 0, 1,
    )  # fmt: skip


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory):
    out = tmp_path_factory.mktemp("api") / "splits"
    return split([DATA / "reviews.conllu.gz"], runs=1, folds=2, seed=3, out=out)


def test_score_study_is_a_score_table_of_the_three_metrics(manifest) -> None:
    # gold as its own prediction: every metric 1; a mapping gives each system its template
    gold = "{corpus}/{run}/{fold}/test.conllu"
    table = score_study(manifest.path, {"same": gold, "again": gold})
    assert isinstance(table, ScoreTable) and table.metrics == METRICS
    assert table.systems == ("again", "same") and table.datasets == ("reviews",)
    assert (table.data[list(METRICS)] == 1.0).all().all()
    assert table.source["source"] == "manifest.csv"
    study = read_study(manifest, {"same": gold, "again": gold})
    first = next(manifest.folds())
    direct = score(first.test, first.test, first.train)
    row = study.frame.iloc[0]
    assert row["oov_tokens"] == direct.oov_tokens > 0 and row["tokens"] == direct.tokens


def test_a_template_may_leave_out_what_the_manifest_holds_once(manifest, tmp_path) -> None:
    # one corpus, one run: {system}/{fold} is enough; {fold} is not
    for system in ("a", "b"):
        for fold in manifest.folds():
            target = manifest.root / "p" / system / f"{fold.fold}.conllu"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(fold.test.read_bytes())
    table = score_study(manifest, "p/{system}/{fold}.conllu", systems=["a", "b"])
    assert len(table.data) == 4
    with pytest.raises(InputError, match="has no {fold}"):
        score_study(manifest, "p/{system}/1.conllu", systems=["a", "b"])


def test_score_study_needs_systems_for_a_template(manifest) -> None:
    with pytest.raises(InputError, match="name the systems"):
        score_study(manifest, "{corpus}/{run}/{fold}/test.conllu")
    with pytest.raises(InputError, match="no template for system 'b'"):
        score_study(manifest, {"a": "{run}/{fold}.conllu"}, systems=["b"])
