"""isbetter.items.read: lm-evaluation-harness folders, Inspect logs, tables — real files, trimmed.

The fixtures under data/ are real logs (MIT, LICENSE beside each), trimmed to a few items
(data/README.md says how); the bad-input cases are built from them in tmp_path.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from isbetter.core.errors import InputError
from isbetter.items import ItemTable, read

DATA = Path(__file__).parent / "data"
KO = DATA / "lm_eval" / "ko_winogrande"
META = KO / "meta-llama__Llama-3.1-8B-Instruct"
SOLAR = KO / "upstage__SOLAR-10.7B-Instruct-v1.0"
PRO16 = KO / "llama3.1-pro16-0827-Inst_241016"
MATH = DATA / "lm_eval" / "math_perturbed"
ARC_QWEN = DATA / "inspect" / "data_arc_qwen.json"
ARC_SONNET = DATA / "inspect" / "data_arc_sonnet.json"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _copy(tmp_path: Path, *folders: Path) -> list[Path]:
    out = []
    for folder in folders:
        shutil.copytree(folder, tmp_path / folder.name)
        out.append(tmp_path / folder.name)
    return out


# ------------------------------------------------------------------ lm-evaluation-harness
def test_lm_eval_three_models_latest_run():
    table = read([META, SOLAR, PRO16])
    assert isinstance(table, ItemTable)
    assert table.systems == (
        "llama3.1-pro16-0827-Inst_241016",  # model_name is a path: its last component
        "meta-llama/Llama-3.1-8B-Instruct",
        "upstage/SOLAR-10.7B-Instruct-v1.0",
    )
    assert table.tasks == ("ko_winogrande",) and table.metric == "exact_match"
    assert "metric exact_match (the only one), filter get-answer (the only one)" in table.source
    assert "runs: latest" in table.source
    # scores as logged: the latest SOLAR run's exact_match per doc_id
    solar = _lines(SOLAR / "samples_ko_winogrande_2024-11-19T16-01-11.737538.jsonl")
    pair = table.paired("upstage/SOLAR-10.7B-Instruct-v1.0", "meta-llama/Llama-3.1-8B-Instruct")
    assert pair.items.tolist() == [str(r["doc_id"]) for r in solar]
    assert pair.a.tolist() == [r["exact_match"] for r in solar]
    assert pair.binary and pair.runs.tolist() == [[1, 1]] * 6
    # the choices are recorded: the earlier runs left out, the all-zero run kept
    notes = "\n".join(table.notes)
    assert "SOLAR-10.7B-Instruct-v1.0: ko_winogrande: read the latest of 2 runs" in notes
    assert "samples_ko_winogrande_2024-11-19T15-02-18.944403.jsonl" in notes
    assert "every item scores 0 on exact_match; kept" in notes


def test_lm_eval_all_runs_numbered_in_time_order():
    table = read([SOLAR], runs="all")
    frame = table.frame
    assert sorted(frame["run"].unique()) == [0, 1]
    first = _lines(SOLAR / "samples_ko_winogrande_2024-11-19T15-57-16.853832.jsonl")
    assert frame.query("run == 0")["score"].tolist() == [r["exact_match"] for r in first]
    assert not frame.query("run == 0")["score"].any()  # the prompt-bug run: all zero, kept
    assert any("every item scores 0" in n for n in table.notes)
    assert "runs: all" in table.source


def _old_run(tmp_path: Path) -> Path:
    """PRO16 with only its run of 14-38: lines of 3 filters, no "filter" key (lm-eval 2024)."""
    [folder] = _copy(tmp_path, PRO16)
    for path in folder.glob("*15-02-18*"):
        path.unlink()
    return folder


def test_lm_eval_blocks_without_filter_key_follow_the_results_file(tmp_path):
    folder = _old_run(tmp_path)
    table = read([folder], filter="get-answer2")
    assert len(table) == 6 and "filter get-answer2 (asked)" in table.source
    assert any(
        "blocks of 6 lines taken as the filters get-option, get-answer1, get-answer2" in n
        for n in table.notes
    )
    with pytest.raises(
        InputError, match=r"holds 3 filters \(get-option, get-answer1, get-answer2\)"
    ):
        read([folder])
    # the blocks' means must agree with the results file, else the filters are unknown
    results = next(folder.glob("results_*.json"))
    data = json.loads(results.read_text())
    data["results"]["ko_winogrande"]["exact_match,get-answer1"] = 0.5
    results.write_text(json.dumps(data))
    with pytest.raises(InputError, match="block 2 of 3 has mean exact_match 0 where the results"):
        read([folder], filter="get-answer2")


def test_lm_eval_runs_under_different_filters_are_an_error():
    with pytest.raises(
        InputError, match=r"`filter`: no filter 'get-answer2' in .*15-02-18.*present: get-answer"
    ):
        read([PRO16], runs="all", filter="get-answer2")


def test_lm_eval_missing_filter_lists_those_present():
    with pytest.raises(InputError, match=r"`filter`: no filter 'get-answer2' in .*15-02-18"):
        read([PRO16, META], filter="get-answer2")
    with pytest.raises(InputError, match=r"`filter`: no filter 'strict' in .*present: get-answer"):
        read([META], filter="strict")


def test_lm_eval_missing_metric_lists_those_present():
    with pytest.raises(InputError, match=r"`metric`: no metric 'acc' in .*present: exact_match"):
        read([META], metric="acc")


def test_lm_eval_subtask_and_cluster_from_the_doc():
    table = read([MATH], subtask="type", cluster="level")
    assert table.tasks == ("math_perturbed_full/Algebra",)
    assert table.groups == {"math_perturbed_full": ("math_perturbed_full/Algebra",)}
    frame = table.frame
    levels = [r["doc"]["level"] for r in _lines(next(MATH.glob("samples_*")))]
    assert frame["cluster"].tolist() == levels
    with pytest.raises(InputError, match="`cluster`: .*line 1: the doc has no field 'passage'"):
        read([MATH], cluster="passage")


def test_lm_eval_model_name_and_parent_folder(tmp_path):
    table = read([KO])  # a folder of model folders
    assert len(table.systems) == 3
    assert read([MATH]).systems == (
        "RylanSchaeffer/mem_Qwen3-93M_minerva_math_rep_0_sbst_1.0000_epch_1_ot_1",
    )
    [folder] = _copy(tmp_path, META)
    for results in folder.glob("results_*.json"):
        results.unlink()  # no results file: the folder's name
    assert read([folder]).systems == ("meta-llama__Llama-3.1-8B-Instruct",)
    assert read([folder], names={folder.name: "llama"}).systems == ("llama",)


def test_lm_eval_group_subtasks(tmp_path):
    [folder] = _copy(tmp_path, MATH)
    results = next(folder.glob("results_*.json"))
    data = json.loads(results.read_text())
    data["group_subtasks"] = {"math": ["math_perturbed_full", "math_rephrased_full"]}
    results.write_text(json.dumps(data))
    table = read([folder])
    assert table.groups == {"math": ("math_perturbed_full",)}
    assert table.restrict(group="math").tasks == ("math_perturbed_full",)


# ---------------------------------------------------------------- bad lm-eval input
def test_folder_without_samples_file():
    with pytest.raises(InputError, match=r"has 1 results file but no samples_<task>_<time>.jsonl"):
        read([DATA / "lm_eval" / "results_only"])
    with pytest.raises(InputError, match="holds no lm-evaluation-harness output"):
        read([DATA / "no_clt_paper"])


def test_a_file_that_is_not_one_json_object_a_line():
    with pytest.raises(
        InputError,
        match=r"samples_ko_winogrande_2024-11-19T14-19-15.115705.jsonl' line 1: not a JSON object",
    ):
        read([DATA / "lm_eval" / "ko_broken"])


def test_different_documents_under_one_doc_id(tmp_path):
    meta, solar = _copy(tmp_path, META, SOLAR)
    path = next(solar.glob("samples_*16-01-11*.jsonl"))
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[2])
    record["doc_hash"] = "0" * 64
    lines[2] = json.dumps(record, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read([meta, solar])
    message = str(info.value)
    assert "doc_id 2: different documents in" in message
    assert path.name in message and "line 3" in message
    assert "samples_ko_winogrande_2024-11-19T15-07-36.131394.jsonl" in message


def test_a_task_only_one_model_has():
    with pytest.raises(
        InputError, match="task 'ko_winogrande' is only in the input of 'meta-llama/Llama-3.1-8B"
    ):
        read([META, MATH])


def test_nan_score_names_the_file_and_line(tmp_path):
    [folder] = _copy(tmp_path, META)
    path = next(folder.glob("samples_*.jsonl"))
    text = path.read_text(encoding="utf-8").splitlines()
    text[1] = (
        text[1]
        .replace('"exact_match": 1.0', '"exact_match": NaN')
        .replace('"exact_match": 0.0', '"exact_match": NaN')
    )
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 2: metric 'exact_match' is nan, not a finite"):
        read([folder])


def test_f1_style_pairs_point_to_the_paired_f1_model(tmp_path):
    [folder] = _copy(tmp_path, META)
    path = next(folder.glob("samples_*.jsonl"))
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in lines:
        record["f1"] = [record["target"], "1"]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in lines) + "\n")
    with pytest.raises(
        InputError, match=r"line 1: metric 'f1' .*\[gold, prediction\] pairs.*isbetter f1"
    ):
        read([folder], metric="f1")
    assert read([folder], metric="exact_match").metric == "exact_match"
    with pytest.raises(InputError, match=r"holds 2 metrics \(exact_match, f1\)"):
        read([folder])


def test_the_fast_path_agrees_with_full_parsing(tmp_path):
    # lines written with other separators take the slow path; the table is the same
    [folder] = _copy(tmp_path, META)
    fast = read([META])
    path = next(folder.glob("samples_*.jsonl"))
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    path.write_text("\n".join(json.dumps(r, separators=(",", ":")) for r in lines) + "\n")
    assert read([folder]).frame.equals(fast.frame)
    # with a cluster from the doc: the doc parsed alone, or the line whole
    by_answer = read([META], cluster="answer").frame
    assert by_answer["cluster"].tolist() == [r["doc"]["answer"] for r in lines]
    assert read([folder], cluster="answer").frame.equals(by_answer)


# ---------------------------------------------------------------------------- Inspect
def test_inspect_json_logs():
    table = read([ARC_QWEN, ARC_SONNET])
    assert table.systems == ("anthropic/claude-sonnet-4-0", "ollama/qwen2.5:0.5b")
    assert table.tasks == ("inspect_evals/arc_easy",) and table.metric == "choice"
    qwen = json.loads(ARC_QWEN.read_text())["samples"]
    expected = [{"C": 1.0, "I": 0.0}[s["scores"]["choice"]["value"]] for s in qwen]
    frame = table.frame.query("system == 'ollama/qwen2.5:0.5b'")
    assert frame["score"].tolist() == expected and frame["item"].tolist() == ["1", "2", "3"]
    assert "C/I/P/N = 1/0/0.5/0" in table.source
    # the two logs share 3 of sonnet's 5 samples: pairing says so; common_items keeps 3
    with pytest.raises(
        InputError,
        match=r"has 3 items and .* 5, 3 in common \(only 'anthropic/claude-sonnet-4-0': '4', '5'\)",
    ):
        table.paired("ollama/qwen2.5:0.5b", "anthropic/claude-sonnet-4-0")
    pair = table.common_items().paired("ollama/qwen2.5:0.5b", "anthropic/claude-sonnet-4-0")
    assert pair.counts() == (1, 0, 2, 0)


def _eval_zip(tmp_path: Path, log: dict, name: str = "log.eval") -> Path:
    path = tmp_path / name
    samples = log.pop("samples", [])
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("header.json", json.dumps(log))
        for s in samples:
            zf.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
    return path


def test_inspect_eval_zip_epochs_partial_credit_and_clusters(tmp_path):
    log = json.loads(ARC_QWEN.read_text())
    base = log["samples"]
    samples = []
    for epoch, values in ((1, ["C", "P", 0.25]), (2, ["I", "N", 1])):
        for s, v in zip(base, values, strict=True):
            s = json.loads(json.dumps(s))
            s["epoch"], s["scores"]["choice"]["value"] = epoch, v
            s["metadata"] = {"passage": f"p{s['id'] % 2}"}
            samples.append(s)
    log["samples"] = samples
    table = read([_eval_zip(tmp_path, log)], cluster="passage")
    frame = table.frame.sort_values(["run", "item"])
    assert frame["run"].tolist() == [0, 0, 0, 1, 1, 1]
    assert frame["score"].tolist() == [1.0, 0.5, 0.25, 0.0, 0.0, 1.0]
    assert frame["cluster"].tolist() == ["p1", "p0", "p1"] * 2
    with pytest.raises(InputError, match="`cluster`: .*no metadata key 'doc'"):
        read(
            [_eval_zip(tmp_path, json.loads(json.dumps(log)) | {"samples": samples})], cluster="doc"
        )


def test_inspect_without_scores_or_samples(tmp_path):
    log = json.loads(ARC_QWEN.read_text())
    for s in log["samples"]:
        s["scores"] = {}
    (tmp_path / "noscores.json").write_text(json.dumps(log))
    with pytest.raises(InputError, match=r"noscores.json' has no scores"):
        read([tmp_path / "noscores.json"])
    log["samples"] = []
    with pytest.raises(InputError, match=r"log.eval' has no samples"):
        read([_eval_zip(tmp_path, log)])


def test_inspect_one_sample_failed(tmp_path):
    log = json.loads(ARC_QWEN.read_text())
    log["samples"][1]["scores"] = {}
    log["samples"][1]["error"] = {"message": "timeout"}
    (tmp_path / "failed.json").write_text(json.dumps(log))
    with pytest.raises(
        InputError, match=r"sample 2 epoch 1 has no 'choice' score \(it failed: timeout\)"
    ):
        read([tmp_path / "failed.json"])


def test_inspect_scorer_choice(tmp_path):
    log = json.loads(ARC_QWEN.read_text())
    for s in log["samples"]:
        s["scores"]["judge"] = {"value": 0.7}
    (tmp_path / "two.json").write_text(json.dumps(log))
    with pytest.raises(InputError, match=r"2 scorers \(choice, judge\): choose one with `scorer`"):
        read([tmp_path / "two.json"])
    assert read([tmp_path / "two.json"], scorer="judge").frame["score"].tolist() == [0.7] * 3
    with pytest.raises(InputError, match="`scorer`: no scorer 'x'"):
        read([tmp_path / "two.json"], scorer="x")


# ------------------------------------------------------------------------------ tables
def test_aime_wide_with_runs():
    table = read(DATA / "no_clt_paper" / "matharena_aime_II.csv", item="Question", run_suffix=True)
    assert len(table.systems) == 19 and table.tasks == ("all",)
    raw = pd.read_csv(DATA / "no_clt_paper" / "matharena_aime_II.csv", dtype={"Question": str})
    pair = table.paired("o3-mini (high)", "DeepSeek-R1")
    assert len(pair) == 15 and (pair.runs == 4).all() and not pair.binary
    problem = raw["Question"].str.split(".").str[0]
    expected = raw.groupby(problem, sort=False)["DeepSeek-R1"].mean()
    np.testing.assert_array_equal(pair.b, expected.to_numpy())


def test_aime_without_run_suffix_says_how():
    table = read(DATA / "no_clt_paper" / "matharena_aime_II.csv")
    assert len(table.paired("o3-mini (high)", "DeepSeek-R1")) == 60
    assert any("pass `run_suffix=True`" in n for n in table.notes)


def test_tool_use_wide_skips_the_reference_column():
    table = read(DATA / "no_clt_paper" / "langchain_data_tool_use_FULL.csv")
    assert len(table.systems) == 9 and "reference output" not in table.systems
    assert any("'reference output' holds no numbers" in n for n in table.notes)
    assert table.paired("claude-2.1", "llama-v2-70b-chat").binary


def test_long_tables_in_every_format(tmp_path):
    long = read(DATA / "no_clt_paper" / "langchain_data_tool_use_FULL.csv").frame
    long = long.drop(columns="cluster")
    number = long["item"].astype(int)
    long["task"] = np.where(number > 10, "t2", "t1")
    long["run"] = number % 2
    long = ItemTable.from_frame(long, run="run").frame.drop(columns="cluster")
    long.to_csv(tmp_path / "t.csv", index=False)
    long.to_json(tmp_path / "t.jsonl", orient="records", lines=True)
    expected = read(tmp_path / "t.csv").frame  # its task and run columns found by name
    pd.testing.assert_frame_equal(expected.drop(columns="cluster"), long)
    got = read(tmp_path / "t.jsonl", task="task", run="run").frame
    pd.testing.assert_frame_equal(got, expected)
    pytest.importorskip("pyarrow")
    long.to_parquet(tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(read(tmp_path / "t.parquet").frame, expected)


def test_data_frames_and_mixed_inputs():
    table = read([pd.DataFrame({"item": [1, 2], "m1": [1, 0], "m2": [0, 0]}), ARC_QWEN, ARC_SONNET])
    assert table.tasks == ("all", "inspect_evals/arc_easy")
    assert table.metric == "choice, score"
    with pytest.raises(InputError, match="task 'all' is only in the input of"):
        read([pd.DataFrame({"item": [1], "m1": [1]}), ARC_QWEN, ARC_SONNET])


def test_options_for_another_kind_and_bad_paths(tmp_path):
    with pytest.raises(InputError, match="`filter` applies to lm-evaluation-harness folders"):
        read([ARC_QWEN], filter="none")
    with pytest.raises(InputError, match="`scorer` applies to Inspect logs"):
        read([META], scorer="choice")
    with pytest.raises(InputError, match="no such file or folder"):
        read([tmp_path / "nope.csv"])
    (tmp_path / "x.bin").write_bytes(b"\0")
    with pytest.raises(InputError, match="not an lm-evaluation-harness folder"):
        read([tmp_path / "x.bin"])
    with pytest.raises(InputError, match="`runs` must be 'latest' or 'all'"):
        read([META], runs="first")


def test_a_filter_key_inside_the_doc_does_not_fool_the_fast_path(tmp_path):
    # ko_winogrande's lines name no filter; a doc field called "filter" is the last
    # ', "filter": ' of the line, and the fast path must notice and parse lines whole
    [folder] = _copy(tmp_path, META)
    path = next(folder.glob("samples_*.jsonl"))
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for record in lines:
        record["doc"]["filter"] = "x"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in lines) + "\n")
    assert read([folder]).frame.equals(read([META]).frame)


def test_json_tables_are_not_taken_for_inspect_logs(tmp_path):
    df = pd.DataFrame({"item": [1, 2], "system": ["a", "b"], "score": [1, 0], "version": [1, 1]})
    df.to_json(tmp_path / "records.json", orient="records")
    df.to_json(tmp_path / "lines.json", orient="records", lines=True)
    for name in ("records.json", "lines.json"):
        table = read(tmp_path / name)
        assert table.systems == ("a", "b") and "long table" in table.source


def test_nan_in_a_table_names_the_file(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text("item,m1,m2\n1,1,0\n2,,1\n")
    with pytest.raises(
        InputError,
        match=r"wide.csv': row \d \(task 'all', item '2', system 'm1'.*not a finite number",
    ):
        read(path)


@pytest.mark.parametrize("text", ["", "\n\n", "  \n"])
def test_an_empty_samples_file(tmp_path, text):
    [folder] = _copy(tmp_path, META)
    next(folder.glob("samples_*.jsonl")).write_text(text)
    with pytest.raises(InputError, match="has no lines: an empty samples file"):
        read([folder])
