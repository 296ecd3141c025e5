"""Every result says what it was computed from: file name, rows and SHA-256 of the input."""

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from isbetter import (
    compare,
    compare_f1,
    from_arrays,
    predictions_from_arrays,
    rank,
    read_predictions,
    read_scores,
)
from isbetter.f1.baselines import Baselines
from isbetter.report import render

DATA = Path(__file__).resolve().parents[2] / "data"
UCI = DATA / "uci_benavoli2017" / "uci_cv_accuracy_long.csv"
F1_EXAMPLE = DATA / "f1_example" / "predictions.csv"
UCI_COLUMNS = {"dataset": "dataset_id", "system": "classifier", "score": "accuracy"}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_is_named_counted_and_checksummed_into_every_result(tmp_path):
    table = read_scores(UCI, **UCI_COLUMNS)
    record = {"source": UCI.name, "rows": 27_000, "sha256": _sha256(UCI)}
    assert table.source == record
    res = compare(table, "nbc", "aode", rope=0.01, method="sign", rng=1, draws=1000)
    assert res.settings["input"] == record
    assert json.loads(render(res, "json"))["settings"]["input"] == record
    # the one-data-set test and a swapped pair keep it too
    one = compare(table, "aode", "nbc", rope=0.01, method="correlated_t", dataset="1")
    assert one.settings["input"] == record
    # a ranking records it once, not in every pair (a cached pair may come from another file)
    ranking = rank(table, systems=["nbc", "aode", "j48"], method="sign", jobs=1, rng=1, draws=500)
    assert ranking.settings["input"] == record
    assert json.loads(render(ranking, "json"))["settings"]["input"] == record
    assert all("input" not in p.settings for p in ranking.pairs)


def test_predictions_file_is_recorded_in_every_row():
    table = read_predictions(F1_EXAMPLE, id="doc_id")
    record = {"source": F1_EXAMPLE.name, "rows": 2000, "sha256": _sha256(F1_EXAMPLE)}
    assert table.source == record
    res = compare_f1(
        table, system_a="svm", system_b="nb", draws=500, baselines=Baselines(resamples=50), rng=1
    )
    assert res.settings["input"] == record
    assert all(row.settings["input"] == record for row in res.comparisons.values())
    assert json.loads(render(res, "json"))["settings"]["input"] == record


def test_a_dataframe_or_arrays_are_checksummed_by_content():
    df = pd.read_csv(UCI)
    a = read_scores(df, **UCI_COLUMNS).source
    b = read_scores(df.copy(), **UCI_COLUMNS).source
    assert a == b and a["source"] == "DataFrame" and a["rows"] == len(df)
    changed = df.copy()
    changed.loc[5, "accuracy"] += 1e-9
    assert read_scores(changed, **UCI_COLUMNS).source["sha256"] != a["sha256"]
    x = np.array([[0.8, 0.82, 0.81]])
    arrays = from_arrays(x, x - 0.01, runs=1).source
    assert arrays["source"] == "arrays" and arrays["rows"] == 6
    assert from_arrays(x, x - 0.02, runs=1).source["sha256"] != arrays["sha256"]
    preds = predictions_from_arrays([1, 0, 1], a=[1, 0, 0], b=[1, 1, 1]).source
    assert preds["source"] == "arrays" and preds["rows"] == 3 and len(preds["sha256"]) == 64
