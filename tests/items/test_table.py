"""The item-level table: validation, long and wide forms, pairing two systems, subtasks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from isbetter.core.errors import InputError, InputTypeError
from isbetter.items.table import ItemTable, PairedItems


def _long(**extra: list) -> pd.DataFrame:
    df = pd.DataFrame(
        {
            "task": ["t1"] * 6 + ["t2"] * 4,
            "item": [0, 1, 2, 0, 1, 2, "a", "b", "a", "b"],
            "system": ["x", "x", "x", "y", "y", "y", "x", "x", "y", "y"],
            "score": [1, 0, 1, 1, 1, 0, 1, 1, 0, 1],
        }
    )
    for k, v in extra.items():
        df[k] = v
    return df


def test_long_form_normalises_and_sorts():
    table = ItemTable.from_frame(_long(), metric="acc", source="test")
    assert table.systems == ("x", "y")
    assert table.tasks == ("t1", "t2")
    frame = table.frame
    assert list(frame.columns) == ["task", "item", "system", "run", "score", "cluster"]
    assert frame["item"].tolist()[:3] == ["0", "1", "2"]  # ids are strings
    assert frame["run"].dtype == np.int64 and (frame["run"] == 0).all()
    assert frame["score"].dtype == float
    assert frame["cluster"].isna().all()
    assert table.metric == "acc" and table.source == "test"
    assert "2 systems, 2 tasks, 5 items" in repr(table)
    frame.loc[0, "score"] = 99.0  # a copy: the table is unchanged
    assert table.frame.loc[0, "score"] == 1.0


def test_metric_defaults_to_the_score_column():
    df = _long().rename(columns={"score": "acc_norm"})
    assert ItemTable.from_frame(df, score="acc_norm").metric == "acc_norm"


def test_paired_binary_counts():
    table = ItemTable.from_frame(_long())
    pair = table.paired("x", "y", task="t1")
    assert isinstance(pair, PairedItems)
    assert pair.items.tolist() == ["0", "1", "2"]
    assert pair.a.tolist() == [1, 0, 1] and pair.b.tolist() == [1, 1, 0]
    assert pair.binary and pair.clusters is None
    assert pair.runs.tolist() == [[1, 1]] * 3
    assert pair.counts() == (1, 1, 1, 0)
    reverse = table.paired("y", "x", task="t1")
    assert reverse.counts() == (1, 1, 1, 0) and reverse.a.tolist() == [1, 1, 0]


def test_paired_aligns_items_in_a_different_order():
    df = _long()
    df = pd.concat([df.iloc[:3], df.iloc[3:6].iloc[::-1]])
    pair = ItemTable.from_frame(df).paired("x", "y")
    assert pair.items.tolist() == ["0", "1", "2"]
    assert pair.b.tolist() == [1, 1, 0]


def test_paired_needs_a_task_when_several():
    table = ItemTable.from_frame(_long())
    with pytest.raises(InputError, match=r"2 tasks .*name one"):
        table.paired("x", "y")


def test_paired_errors_name_system_and_task():
    table = ItemTable.from_frame(_long())
    with pytest.raises(InputError, match="no system 'z'"):
        table.paired("x", "z", task="t1")
    with pytest.raises(InputError, match="no task 't3'"):
        table.paired("x", "y", task="t3")
    with pytest.raises(InputError, match="both 'x'"):
        table.paired("x", "x", task="t1")
    only_x = _long().iloc[:-2]  # y has no items of t2
    with pytest.raises(InputError, match="system 'y' has no items of task 't2'"):
        ItemTable.from_frame(only_x).paired("x", "y", task="t2")


def test_paired_different_items_names_the_counts():
    df = _long().iloc[:5]  # y lacks item 2 of t1
    with pytest.raises(InputError, match=r"'x' has 3 items and 'y' 2, 2 in common .*only 'x': '2'"):
        ItemTable.from_frame(df).paired("x", "y", task="t1")


def test_runs_are_averaged_and_not_binary():
    df = pd.DataFrame(
        {
            "item": [1, 1, 2, 2, 1, 1, 2, 2],
            "system": ["x"] * 4 + ["y"] * 4,
            "run": [0, 1, 0, 1, 0, 1, 0, 1],
            "score": [1, 0, 1, 1, 0, 0, 1, 0],
        }
    )
    pair = ItemTable.from_frame(df, task=None, run="run").paired("x", "y")
    assert pair.task == "all"
    assert pair.a.tolist() == [0.5, 1.0] and pair.b.tolist() == [0.0, 0.5]
    assert pair.runs.tolist() == [[2, 2], [2, 2]]
    assert not pair.binary
    with pytest.raises(InputError, match="not binary"):
        pair.counts()


def test_graded_scores_are_not_binary():
    df = _long().astype({"score": float})
    df.loc[0, "score"] = 0.5
    assert not ItemTable.from_frame(df).paired("x", "y", task="t1").binary


def test_nan_score_names_the_row():
    df = _long().astype({"score": float})
    df.loc[4, "score"] = np.nan
    with pytest.raises(
        InputError, match=r"row \d \(task 't1', item '1', system 'y', run 0\).*not a finite"
    ):
        ItemTable.from_frame(df)


def test_duplicate_key_is_an_error():
    df = pd.concat([_long(), _long().iloc[[2]]])
    with pytest.raises(InputError, match="occurs twice"):
        ItemTable.from_frame(df)


def test_missing_columns_and_types():
    with pytest.raises(InputError, match="`score`: no column 'acc'"):
        ItemTable.from_frame(_long(), score="acc")
    with pytest.raises(InputError, match="lacks the column"):
        ItemTable(pd.DataFrame({"task": ["t"], "item": [1]}))
    with pytest.raises(InputTypeError, match="DataFrame"):
        ItemTable.from_frame([1, 2])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="no rows"):
        ItemTable.from_frame(_long().iloc[:0])
    with pytest.raises(InputError, match="run"):
        ItemTable.from_frame(_long(run=[-1] + [0] * 9), run="run")


def test_clusters():
    clusters = ["p", "p", "q", "p", "p", "q", "r", "r", "r", "r"]
    table = ItemTable.from_frame(_long(passage=clusters), cluster="passage")
    assert table.has_clusters
    pair = table.paired("x", "y", task="t1")
    assert pair.clusters is not None and pair.clusters.tolist() == ["p", "p", "q"]
    clusters[3] = "other"
    with pytest.raises(InputError, match="cluster 'p' for 'x' but 'other' for 'y'"):
        ItemTable.from_frame(_long(passage=clusters), cluster="passage").paired("x", "y", task="t1")
    clusters[3] = "p"
    clusters[0] = None
    with pytest.raises(InputError, match="no cluster"):
        ItemTable.from_frame(_long(passage=clusters), cluster="passage").paired("x", "y", task="t1")


def test_subtasks_and_counts():
    table = ItemTable.from_frame(_long())
    per = table.subtasks("x", "y")
    assert list(per) == ["t1", "t2"]
    assert per["t2"].counts() == (1, 1, 0, 0)
    counts = table.subtask_counts("x", "y")
    assert counts.to_dict("list") == {
        "task": ["t1", "t2"],
        "n": [3, 2],
        "n11": [1, 1],
        "n10": [1, 1],
        "n01": [1, 0],
        "n00": [0, 0],
    }
    with pytest.raises(InputError, match="task 't2'"):
        ItemTable.from_frame(_long().iloc[:-1]).subtasks("x", "y")


def test_restrict():
    table = ItemTable.from_frame(_long(), metric="acc")
    t2 = table.restrict(task="t2")
    assert t2.tasks == ("t2",) and len(t2) == 4 and t2.metric == "acc"
    assert table.restrict(systems=["y"]).systems == ("y",)
    with pytest.raises(InputError, match="no task 'zz'"):
        table.restrict(task="zz")
    with pytest.raises(InputError, match="no system 'zz'"):
        table.restrict(systems=["zz"])


def test_wide_with_run_suffix_like_aime():
    df = pd.DataFrame(
        {
            "Question": ["1", "1.1", "1.2", "1.3", "2", "2.1", "2.2", "2.3", "3", "3.10"],
            "m1": [1, 1, 1, 0, 0, 0, 0, 0, 1, 1],
            "m2": [1, 1, 1, 1, 0, 0, 1, 0, 0, 0],
        }
    )
    table = ItemTable.from_wide(df, item="Question", run_suffix=True, metric="correct")
    assert table.metric == "correct"
    pair = table.paired("m1", "m2")
    assert pair.items.tolist() == ["1", "2", "3"]
    assert pair.runs.tolist() == [[4, 4], [4, 4], [2, 2]]
    assert pair.a.tolist() == [0.75, 0.0, 1.0]
    assert pair.b.tolist() == [1.0, 0.25, 0.0]
    assert sorted(table.frame.query("item == '3'")["run"].unique()) == [0, 10]


def test_wide_without_suffix_keeps_items_and_skips_text_columns():
    df = pd.DataFrame(
        {
            "index": [1, 2, 3],
            "reference output": ["a", "aa", "aaa"],
            "m1": [1.0, 0.0, 1.0],
            "m2": [0.0, 0.0, 1.0],
        }
    )
    table = ItemTable.from_wide(df, item="index")
    assert table.systems == ("m1", "m2")
    assert table.notes == ("column 'reference output' holds no numbers: not a system, skipped",)
    assert table.paired("m1", "m2").counts() == (1, 1, 0, 1)
    with pytest.raises(InputError, match="`systems`: no column 'm3'"):
        ItemTable.from_wide(df, item="index", systems=["m1", "m3"])


def test_wide_partly_text_column_is_an_error():
    df = pd.DataFrame({"q": [1, 2], "m1": [1, "oops"], "m2": [0, 1]})
    with pytest.raises(InputError, match="not a finite number"):
        ItemTable.from_wide(df, item="q")


def test_equality():
    assert ItemTable.from_frame(_long()) == ItemTable.from_frame(_long())
    assert ItemTable.from_frame(_long()) != ItemTable.from_frame(_long(), metric="acc")


def test_common_items_drops_and_notes():
    df = _long().drop(index=5)  # y lacks item 2 of t1
    table = ItemTable.from_frame(df, source="s").common_items()
    pair = table.paired("x", "y", task="t1")
    assert pair.items.tolist() == ["0", "1"]
    assert table.notes == (
        "t1: kept the 2 items every system has; dropped 1 item ('2') some systems lack",
    )
    assert len(table.restrict(task="t2")) == 4


def test_groups_are_kept_and_restricted():
    table = ItemTable(ItemTable.from_frame(_long()).frame, groups={"g": ("t1", "t9"), "h": ("t9",)})
    assert table.groups == {"g": ("t1",)}
    assert table.restrict(group="g").tasks == ("t1",)
    with pytest.raises(InputError, match="no group 'h'"):
        table.restrict(group="h")
