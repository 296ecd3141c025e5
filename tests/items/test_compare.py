"""compare_items: the model chosen, the result, its signature, baselines and reports."""

import json

import numpy as np
import pandas as pd
import pytest

import isbetter
from isbetter.core.errors import InputError, InputTypeError
from isbetter.items.compare import compare_items
from isbetter.items.paired import ItemCounts, p_a_better_exact
from isbetter.items.table import ItemTable
from isbetter.report import render, summary_from_dict


def _binary(n11: int, n10: int, n01: int, n00: int, task: str = "arc") -> pd.DataFrame:
    a = [1] * n11 + [1] * n10 + [0] * n01 + [0] * n00
    b = [1] * n11 + [0] * n10 + [1] * n01 + [0] * n00
    n = len(a)
    return pd.DataFrame(
        {
            "task": task,
            "item": list(range(n)) * 2,
            "system": ["llama"] * n + ["mistral"] * n,
            "score": a + b,
        }
    )


@pytest.fixture(scope="module")
def binary() -> ItemTable:
    return ItemTable.from_frame(_binary(300, 60, 35, 105), metric="acc")


def test_binary_items_get_the_exact_model(binary: ItemTable) -> None:
    res = compare_items(binary, "llama", "mistral", rope=0.02, rng=1, draws=100_000)
    assert res.method == "items_exact"
    assert res.signature.startswith("method:items-exact|rope:0.02|draws:100000|seed:1|")
    assert res.settings["counts"] == {"n11": 300, "n10": 60, "n01": 35, "n00": 105}
    assert res.metric == "acc" and res.dataset == "arc" and res.higher_is_better
    assert res.observed.difference == pytest.approx((60 - 35) / 500)
    exact = p_a_better_exact(ItemCounts(300, 60, 35, 105))
    p_above = res.estimate.p_above_0
    assert abs(p_above - exact) <= 4 * np.sqrt(exact * (1 - exact) / 100_000)
    assert res.estimate.bf_rope == res.estimate.bf_rope  # a Bayes factor against Dir(1,1,1,1)
    names = [t.name for t in res.tests]
    assert names == ["mcnemar_midp", "paired_bootstrap", "clustered_se", "unpaired_z"]
    assert res is not None and isbetter.compare_items is compare_items


def test_graded_items_and_runs_get_the_bootstrap() -> None:
    gen = np.random.default_rng(0)
    n = 200
    frame = pd.concat(
        pd.DataFrame(
            {"item": np.arange(n), "system": s, "run": r, "score": 1.0 * (gen.random(n) < p)}
        )
        for s, p in (("a", 0.7), ("b", 0.6))
        for r in range(3)
    )
    table = ItemTable.from_frame(frame, task=None, run="run", metric="acc")
    res = compare_items(table, "a", "b", rope=0.02, rng=3, draws=20_000)
    assert res.method == "items_bootstrap"
    assert res.signature.startswith("method:items-bootstrap|rope:0.02|draws:20000|seed:3|")
    assert "counts" not in res.settings and res.settings["runs"] == [3]
    assert [t.name for t in res.tests] == ["paired_bootstrap", "clustered_se", "unpaired_z"]
    assert np.isnan(res.estimate.bf_rope)  # no proper prior, no Bayes factor
    with pytest.raises(InputError, match="binary items"):
        compare_items(table, "a", "b", model="exact")


def test_binary_items_in_clusters_get_the_clustered_bootstrap() -> None:
    frame = _binary(30, 10, 4, 16)
    frame["passage"] = [f"p{i // 5}" for i in range(60)] * 2
    table = ItemTable.from_frame(frame, cluster="passage", metric="acc")
    res = compare_items(table, "llama", "mistral", rng=1, draws=10_000)
    assert res.method == "items_bootstrap" and res.settings["clusters"] == 12
    assert "in 12 clusters" in render(res)
    with pytest.raises(InputError, match="clusters"):
        compare_items(table, "llama", "mistral", model="exact")
    exact = compare_items(table, "llama", "mistral", model="bootstrap", rng=1, draws=10_000)
    assert exact.p_a_better == res.p_a_better


def test_same_seed_same_result_and_swap_mirrors(binary: ItemTable) -> None:
    one = compare_items(binary, "llama", "mistral", rope=0.01, rng=5, draws=10_000)
    two = compare_items(binary, "llama", "mistral", rope=0.01, rng=5, draws=10_000)
    assert one.to_dict() == two.to_dict()
    swapped = compare_items(binary, "mistral", "llama", rope=0.01, rng=5, draws=10_000)
    assert swapped.p_a_better == one.p_b_better and swapped.p_b_better == one.p_a_better
    assert np.array_equal(swapped.posterior.draws, -one.posterior.draws)


def test_an_evaluation_without_named_tasks_is_on_all_items() -> None:
    """A table with no task column said "llama vs mistral on task all": no task a reader
    knows. Its one task is all the items; messages about it say "the items"."""
    frame = _binary(30, 6, 3, 11).drop(columns="task")
    table = ItemTable.from_frame(frame, task=None, metric="acc")
    text = render(compare_items(table, "llama", "mistral", rope=0.02, rng=1, draws=1_000))
    assert text.startswith("exact paired model of binary items: llama vs mistral on all items, acc")
    assert "task all" not in text
    graded = frame.assign(score=frame["score"] * 0.5)
    graded = ItemTable.from_frame(graded, task=None, metric="acc")
    with pytest.raises(InputError, match=r"^the items: the scores of 'llama' and 'mistral' are"):
        graded.paired("llama", "mistral").check_binary()


def test_baselines_do_not_move_the_posterior(binary: ItemTable) -> None:
    with_tests = compare_items(binary, "llama", "mistral", rng=2, draws=5_000)
    without = compare_items(binary, "llama", "mistral", rng=2, draws=5_000, baselines=False)
    assert without.tests == ()
    assert np.array_equal(with_tests.posterior.draws, without.posterior.draws)


def test_reports_name_the_metric_the_task_the_rope_and_show_the_counts(binary: ItemTable) -> None:
    res = compare_items(binary, "llama", "mistral", rope=0.02, rng=1, draws=10_000)
    text = render(res)
    assert text.startswith("exact paired model of binary items: llama vs mistral on task arc, acc")
    assert "higher is better" in text and "-0.02 <= d <= 0.02" in text
    assert "only llama n10 = 60, only mistral n01 = 35" in text
    assert "(500 items)" in text and "unpaired" in text and "Miller" in text
    for fmt in ("markdown", "latex", "html"):
        assert "n01 = 35" in render(res, fmt)
    data = json.loads(render(res, "json"))
    assert data["settings"]["counts"]["n10"] == 60
    light = summary_from_dict(data)
    assert render(light) == render(res)


def test_bad_input() -> None:
    with pytest.raises(InputTypeError, match="ItemTable"):
        compare_items(pd.DataFrame(), "a", "b")
    table = ItemTable.from_frame(_binary(3, 1, 1, 1), metric="acc")
    with pytest.raises(InputError):
        compare_items(table, "llama", "nobody")
    with pytest.raises(InputError, match="rope"):
        compare_items(table, "llama", "mistral", rope=-1)


def test_the_readers_notes_on_the_pair_are_reported() -> None:
    frame = pd.concat([_binary(5, 2, 1, 2), _binary(5, 2, 1, 2).assign(system="org/other")])
    frame = frame.drop_duplicates(["item", "system"])
    notes = (
        "org__other: arc: read the latest of 2 runs",
        "llama: arc: every item scores 0 on acc; kept",
        "the first column 'item' taken as the items",
    )
    table = ItemTable.from_frame(frame, metric="acc", source="test", notes=notes)
    res = compare_items(table, "llama", "mistral", rng=1, draws=2_000)
    assert res.settings["reading"] == list(notes[1:])  # not the other model's
    assert res.settings["input"]["rows"] == len(table.data)
    text = render(res)
    assert "read: llama: arc: every item scores 0" in text and "org__other" not in text
    mirrored = compare_items(table, "org/other", "llama", rng=1, draws=2_000)
    assert mirrored.settings["reading"] == list(notes)
