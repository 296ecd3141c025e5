"""Typed options of compare_f1 and power_analysis, and their old keywords (issue 18).

`compare_f1` took 23 parameters: the measure's parameters (beta, cost_fn, cost_fp,
p_positive), the MCMC's (tune, chains), the classes' (positive, classes, averages),
the baselines' (baselines, resamples) side by side. They are measure objects,
a Sampling, `classes` and Baselines now; the old keywords still work for one release,
with a RenamedArgumentWarning, and give the same numbers.
"""

import inspect
import json

import numpy as np
import pandas as pd
import pytest

import isbetter
from isbetter import InputError, RenamedArgumentWarning
from isbetter.cli import main
from isbetter.f1.baselines import Baselines
from isbetter.f1.compare import compare_f1
from isbetter.f1.legacy import compare_f1_keywords
from isbetter.f1.measures import dcf, fbeta
from isbetter.f1.paired import F1Model, F1Prior
from isbetter.f1.power import SIGIR_SCENARIO_A, power_analysis
from isbetter.f1.predictions import predictions_from_arrays
from isbetter.inference.sampling import Sampling


def _tables():
    g = np.random.default_rng(18)
    gold = g.integers(0, 3, 300)
    a = np.where(g.random(300) < 0.2, (gold + 1) % 3, gold)
    b = np.where(g.random(300) < 0.3, (gold + 2) % 3, gold)
    binary = predictions_from_arrays(1 * (gold > 0), a=1 * (a > 0), b=1 * (b > 0))
    return binary, predictions_from_arrays(gold, a=a, b=b)


BINARY, THREE = _tables()
SMALL = {"draws": 1000, "rng": 7}


def test_compare_f1_and_power_analysis_take_at_most_12_parameters():
    assert len(inspect.signature(compare_f1).parameters) <= 12
    assert len(inspect.signature(power_analysis).parameters) <= 12
    assert "beta" not in inspect.signature(compare_f1).parameters


@pytest.mark.parametrize(
    ("table", "old", "new", "advice"),
    [
        (BINARY, {"metric": "fbeta", "beta": 2.0}, {"metric": fbeta(2.0)}, "metric=fbeta(2.0)"),
        (
            BINARY,
            {"metric": "dcf", "cost_fn": 2.0, "cost_fp": 5.0, "p_positive": 0.3},
            {"metric": dcf(cost_fn=2.0, cost_fp=5.0, p_positive=0.3)},
            "metric=dcf(cost_fn=2, cost_fp=5, p_positive=0.3)",
        ),
        (BINARY, {"positive": 0}, {"classes": 0}, "classes=0"),
        (THREE, {"averages": False}, {"classes": [0, 1, 2]}, "name every class"),
        (BINARY, {"resamples": 200}, {"baselines": Baselines(resamples=200)}, "Baselines("),
        (
            BINARY,
            {"model": "unpaired", "prior": F1Prior(mu=(2, 3))},
            {"model": F1Model("unpaired", prior=F1Prior(mu=(2, 3)))},
            "model=F1Model('unpaired', prior=...)",
        ),
        (THREE, {"measure": "recall"}, {"metric": "recall"}, "`measure` is an alias of `metric`"),
    ],
)
def test_old_keywords_give_the_same_numbers_and_say_what_to_write(table, old, new, advice):
    options = {"baselines": Baselines(resamples=100), **SMALL}
    if "resamples" in old:
        options.pop("baselines")
    current = compare_f1(table, **options, **new)
    with pytest.warns(RenamedArgumentWarning, match=advice.replace("(", r"\(").replace(")", r"\)")):
        before = compare_f1(table, **options, **old)
    assert before.to_dict() == current.to_dict()


def test_old_gold_keyword_reads_the_column():
    frame = pd.DataFrame({"label": THREE.gold, "a": THREE.predictions["a"]})
    frame["b"] = THREE.predictions["b"]
    current = compare_f1(isbetter.read_predictions(frame, gold="label"), baselines=False, **SMALL)
    with pytest.warns(RenamedArgumentWarning, match=r"read_predictions\(data, gold='label'\)"):
        before = compare_f1(frame, gold="label", baselines=False, **SMALL)
    assert before.table.equals(current.table)


def test_old_tune_and_chains_become_a_sampling():
    arguments: dict = {}
    advice = compare_f1_keywords({"tune": 300, "chains": 2}, arguments)
    assert arguments == {"sampling": Sampling(tune=300, chains=2)}
    assert advice == ["Write sampling=Sampling(tune=..., chains=...) for `tune` and `chains`."]


def test_unknown_keywords_are_a_type_error_and_old_with_new_an_input_error():
    with pytest.raises(TypeError, match="'bogus'"):
        compare_f1(BINARY, bogus=1)
    with pytest.raises(TypeError, match="'beta'"):
        power_analysis(SIGIR_SCENARIO_A, sizes=[100], beta=2.0)
    with pytest.raises(InputError, match="`positive` is the old name of `classes`"):
        compare_f1(BINARY, positive=1, classes=1)
    with pytest.raises(InputError, match="give `sampling` only"):
        compare_f1(BINARY, chains=2, sampling=Sampling())


def test_classes_names_the_positive_class_of_a_binary_task():
    one = compare_f1(BINARY, classes=0, baselines=False, **SMALL)
    assert one.classes == ("0",) and one.settings["positive"] == "0"
    assert compare_f1(BINARY, classes=[0], baselines=False, **SMALL).table.equals(one.table)
    with pytest.raises(InputError, match="names 2 classes of a binary task"):
        compare_f1(BINARY, classes=[0, 1])
    # a multi-class task: one label is one row, no averages; any iterable of labels
    assert compare_f1(THREE, classes=2, baselines=False, **SMALL).classes == ("2",)
    for labels in (np.array([2, 0]), pd.Index([2, 0]), (2, 0)):
        assert compare_f1(THREE, classes=labels, baselines=False, **SMALL).classes == ("2", "0")


def test_sampling_and_baselines_check_their_values():
    with pytest.raises(InputError, match="`chains` must be an integer >= 1"):
        Sampling(chains=0)
    with pytest.raises(InputError, match="`tune` must be an integer >= 0"):
        Sampling(tune=-1)
    with pytest.raises(InputError, match="`resamples` must be an integer >= 1"):
        Baselines(resamples=0)
    assert Sampling().tune_or(1000) == 1000 and Sampling(tune=5).tune_or(1000) == 5
    with pytest.raises(InputError, match="Unknown model"):
        F1Model("joint")


def test_cli_flags_map_to_the_typed_options_without_warnings(tmp_path, capsys):
    path = tmp_path / "p.csv"
    frame = {"gold": BINARY.gold, "a": BINARY.predictions["a"], "b": BINARY.predictions["b"]}
    pd.DataFrame(frame).astype(int).to_csv(path, index=False)
    argv = ["f1", str(path), "--draws", "500", "--resamples", "50", "--seed", "1"]
    argv += ["--metric", "dcf", "--cost-fp", "3", "--positive", "0", "--format", "json"]
    argv += ["--rope", "0.05"]  # without it, a note on the default ROPE
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == ""
    settings = json.loads(out)["settings"]
    assert settings["metric"] == "dcf(1,3,0.5)" and settings["positive"] == "0"
    assert settings["resamples"] == 50


def test_systems_by_position_as_compare_takes_them():
    """compare(scores, "a", "b") took the systems by position, compare_f1 only by keyword."""
    named = compare_f1(THREE, system_a="b", system_b="a", **SMALL)
    assert compare_f1(THREE, "b", "a", **SMALL).to_dict() == named.to_dict()
    with pytest.warns(RenamedArgumentWarning):  # the old keywords bind beside positions too
        old = compare_f1(THREE, "b", "a", measure="f1", **SMALL)
    assert old.to_dict() == named.to_dict()
    for func in (compare_f1, isbetter.compare):
        first = list(inspect.signature(func).parameters.values())[1:3]
        assert [(p.name, p.kind.name) for p in first] == [
            ("system_a", "POSITIONAL_OR_KEYWORD"), ("system_b", "POSITIONAL_OR_KEYWORD")
        ]  # fmt: skip
