import numpy as np
import pandas as pd
import pytest

from isbetter import InputError, InputTypeError
from isbetter.f1.predictions import JointCounts, predictions_from_arrays, read_predictions


def test_read_predictions_dataframe_and_csv(tmp_path):
    df = pd.DataFrame(
        {
            "doc": [1, 2, 3, 4],
            "gold": ["x", "y", "x", "y"],
            "svm": ["x", "y", "y", "y"],
            "nb": ["x", "x", "x", "y"],
        }
    )
    t = read_predictions(df, id="doc")
    assert t.systems == ("svm", "nb")
    assert t.labels == ("x", "y")
    assert t.ids.tolist() == [1, 2, 3, 4]
    path = tmp_path / "p.csv"
    df.to_csv(path, index=False)
    t2 = read_predictions(path, systems=["nb"], id="doc")
    assert t2.systems == ("nb",)
    np.testing.assert_array_equal(t2.predictions["nb"], t.predictions["nb"])


def test_read_predictions_parquet(tmp_path):
    pytest.importorskip("pyarrow")
    df = pd.DataFrame({"gold": [0, 1, 1], "a": [0, 1, 0]})
    df.to_parquet(tmp_path / "p.parquet")
    assert read_predictions(tmp_path / "p.parquet").n_documents == 3


def test_read_predictions_iv():
    df = pd.DataFrame({"gold": [0, 1, 1], "a": [0, 1, 0]})
    with pytest.raises(
        InputError, match="Column 'label' not found. Available columns: 'gold', 'a'"
    ):
        read_predictions(df, gold="label")
    with pytest.raises(InputError, match="No prediction columns"):
        read_predictions(df[["gold"]])
    with pytest.raises(InputError, match="empty"):
        read_predictions(df.iloc[:0])
    with pytest.raises(InputTypeError, match="DataFrame or the path"):
        read_predictions(42)


def test_missing_values_are_listed():
    df = pd.DataFrame({"gold": [0, 1, None, 1], "a": [0, 1, 0, None], "b": [0, 1, 1, 1]})
    with pytest.raises(InputError, match=r"Missing labels in 'gold' \(1\), 'a' \(1\)"):
        read_predictions(df)


def test_unknown_predicted_labels_are_listed():
    with pytest.raises(
        InputError, match=r"absent from the gold labels \('a': 'z'; 'b': 'q', 'w'\)"
    ):
        predictions_from_arrays(["x", "y"], a=["x", "z"], b=["q", "w"])


def test_single_class_and_lengths():
    with pytest.raises(InputError, match="single class"):
        predictions_from_arrays([1, 1, 1], a=[1, 1, 1])
    with pytest.raises(InputError, match=r"unequal lengths: gold \(3\), a \(2\)"):
        predictions_from_arrays([0, 1, 1], a=[0, 1])
    with pytest.raises(InputError, match="empty"):
        predictions_from_arrays([], a=[])
    with pytest.raises(InputError, match="No predictions"):
        predictions_from_arrays([0, 1])
    with pytest.raises(InputTypeError, match="sequence of labels"):
        predictions_from_arrays("01", a=[0, 1])


def test_label_types_normalised():
    t = predictions_from_arrays([True, False, True], a=[1, 0, 0])
    assert t.labels == (0, 1)
    t = predictions_from_arrays([1.0, 0.0, 2.0], a=[1, 0, 2])
    assert t.labels == (0, 1, 2) and not t.is_binary
    assert t.check_label("2") == 2
    with pytest.raises(InputError, match="is not a gold label"):
        t.check_label(5)


def test_joint_counts_by_hand():
    gold = [1, 1, 1, 1, 0, 0, 0]
    a = [1, 1, 0, 0, 1, 0, 0]
    b = [1, 0, 1, 0, 1, 1, 0]
    c = JointCounts.from_labels(gold, a, b)
    assert c.pos.tolist() == [1, 1, 1, 1]
    assert c.neg.tolist() == [1, 0, 1, 1]
    assert c.n == 7
    (ca, cb) = c.cells()
    assert [int(x) for x in ca] == [2, 1, 2, 2]  # tp, fp, fn, tn of A
    assert [int(x) for x in cb] == [2, 2, 2, 1]
    assert c.correctness() == (2, 2, 1, 2)  # both right, only A, only B, neither
    s = c.swapped()
    assert s.pos.tolist() == [1, 1, 1, 1] and s.neg.tolist() == [1, 1, 0, 1]


def test_one_vs_rest_counts_and_confusion():
    t = predictions_from_arrays(
        ["a", "b", "c", "a"], x=["a", "b", "a", "a"], y=["b", "b", "c", "a"]
    )
    c = t.joint_counts("x", "y", "a")
    # class 'a': docs 0 and 3 positive; x predicts a on 0,2,3; y on 3
    assert c.pos.tolist() == [1, 1, 0, 0] and c.neg.tolist() == [0, 1, 0, 1]
    assert t.confusion("x").tolist() == [[2, 0, 0], [0, 1, 0], [1, 0, 0]]
    with pytest.raises(InputError, match="unknown system 'z'. Available systems: 'x', 'y'"):
        t.joint_counts("z", "y", "a")
