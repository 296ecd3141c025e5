"""The `isbetter items` subcommand, in-process: lm-eval folders, tables, bad input."""

import json
from pathlib import Path

import pandas as pd
import pytest

from isbetter.cli import main

DATA = Path(__file__).resolve().parents[1] / "items" / "data"
KO = DATA / "lm_eval" / "ko_winogrande"
AIME = DATA / "no_clt_paper" / "matharena_aime_II.csv"
LLAMA, SOLAR = "meta-llama/Llama-3.1-8B-Instruct", "upstage/SOLAR-10.7B-Instruct-v1.0"
FAST = ["--draws", "5000", "--resamples", "1000", "--seed", "1"]


def test_lm_eval_folders_binary_items_exact_model(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["items", str(KO), "--a", LLAMA, "--b", SOLAR, "--rope", "0.02", *FAST])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert out.startswith(f"exact paired model of binary items: {LLAMA} vs {SOLAR} on task ")
    assert "exact_match (higher is better)" in out and "-0.02 <= d <= 0.02" in out
    assert f"only {LLAMA} n10 = 1, only {SOLAR} n01 = 2" in out
    assert "read the latest of 2 runs" in out  # the reader's choice, said
    assert "unpaired z-test" in out and "mid-p" in out
    assert out.rstrip().splitlines()[-1].startswith("method:items-exact|rope:0.02|draws:5000|")


def test_without_rope_the_note_of_cv_and_the_default_marker(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["items", str(KO), "--a", LLAMA, "--b", SOLAR, *FAST]) == 0
    out, err = capsys.readouterr()
    assert err.startswith("isbetter items: note: no --rope given, so the ROPE is 0")
    assert "--rope in the units of exact_match, e.g. --rope 0.01" in err
    assert "(the default: no --rope given)" in out


def test_wide_table_with_runs_goes_to_the_bootstrap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "aime.json"
    args = ["items", str(AIME), "--a", "o3-mini (high)", "--b", "DeepSeek-R1", "--run-suffix"]
    assert main([*args, "--rope", "0.05", "--output", str(path), *FAST]) == 0
    data = json.loads(path.read_text())
    assert data["method"] == "items_bootstrap" and data["settings"]["runs"] == [4]
    assert data["observed"]["n"] == 15
    assert data["signature"].startswith("method:items-bootstrap|rope:0.05|draws:5000|seed:1")
    assert {t["name"] for t in data["tests"]} == {"paired_bootstrap", "clustered_se", "unpaired_z"}
    assert capsys.readouterr().out == ""


def test_long_csv_table_and_html_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = tmp_path / "items.csv"
    pd.DataFrame(
        {
            "task": "qa",
            "item": list(range(40)) * 2,
            "system": ["x"] * 40 + ["y"] * 40,
            "score": [1] * 30 + [0] * 10 + [1] * 20 + [0] * 20,
        }
    ).to_csv(csv, index=False)
    report = tmp_path / "report.html"
    code = main(
        [
            "items",
            str(csv),
            "--a",
            "x",
            "--b",
            "y",
            "--rope",
            "0.02",
            "--report",
            str(report),
            *FAST,
        ]
    )
    assert code == 0
    assert "exact paired model of binary items: x vs y on task qa" in capsys.readouterr().out
    page = report.read_text()
    assert "n10 = 10" in page and "80 rows" in page


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--a", "nobody", "--b", SOLAR], "--a 'nobody': no such model in the input; its models:"),
        (["--a", LLAMA, "--b", LLAMA], "--a and --b are both"),
        (["--a", LLAMA, "--b", SOLAR, "--task", "nope"], "--task 'nope': no such task"),
        (["--a", LLAMA, "--b", SOLAR, "--metric", "acc"], "--metric: no metric 'acc'"),
        (["--a", LLAMA, "--b", SOLAR, "--filter", "nope"], "--filter: no filter 'nope'"),
        (["--a", LLAMA, "--b", SOLAR, "--rope", "-1"], "--rope must be a non-negative number"),
        (["--a", LLAMA, "--b", SOLAR, "--draws", "0"], "--draws must be an integer >= 1"),
    ],
)
def test_bad_input_one_line_exit_2_nothing_written(
    extra: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.json"
    assert main(["items", str(KO), *extra, "--output", str(out), "--seed", "1"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], captured.err
    assert not out.exists()


def test_several_tasks_one_task_or_pooled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--task compares one task, --pool micro all items as one (the hierarchical model's
    own tests are in tests/items/test_items_subtasks.py)."""
    csv = tmp_path / "two.csv"
    pd.DataFrame(
        {"task": ["t1"] * 4 + ["t2"] * 4, "item": [1, 2] * 4, "system": ["x", "x", "y", "y"] * 2}
    ).assign(score=[1, 0, 1, 1] * 2).to_csv(csv, index=False)
    assert main(["items", str(csv), "--a", "x", "--b", "y", "--task", "t2", *FAST]) == 0
    assert "on task t2" in capsys.readouterr().out
    assert main(["items", str(csv), "--a", "x", "--b", "y", "--pool", "micro", *FAST]) == 0
    assert "on the items of 2 tasks pooled (t1, t2)," in capsys.readouterr().out


def test_exact_model_on_graded_items_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["items", str(AIME), "--a", "o3-mini (high)", "--b", "DeepSeek-R1", "--run-suffix"]
    assert main([*args, "--model", "exact"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("isbetter items: error: --model exact needs binary items")
    assert "--model bootstrap" in err


def test_a_folder_without_samples_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["items", str(tmp_path / "empty"), "--a", "x", "--b", "y"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_common_items_pairs_models_on_different_items(capsys: pytest.CaptureFixture[str]) -> None:
    logs = [str(DATA / "inspect" / f"data_arc_{m}.json") for m in ("sonnet", "qwen")]
    pair = ["--a", "anthropic/claude-sonnet-4-0", "--b", "ollama/qwen2.5:0.5b", *FAST]
    assert main(["items", *logs, *pair]) == 2
    assert "(--common-items keeps those both have)" in capsys.readouterr().err
    assert main(["items", *logs, *pair, "--common-items", "--rope", "0.02"]) == 0
    out = capsys.readouterr().out
    assert "kept the 3 items every system has; dropped 2 items" in out and "(3 items)" in out


@pytest.mark.parametrize(
    "command",
    [["items", str(KO), "--a", LLAMA, "--b", SOLAR], ["rank", str(KO), "--items"]],
)
def test_the_readers_notes_name_flags(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """Before: 'read the latest of 2 runs (...); `runs='all'` reads every run' (Python)."""
    assert main([*command, "--rope", "0.02", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "read the latest of 2 runs" in out and "; --runs all reads every run" in out
    assert "runs=" not in out


@pytest.mark.parametrize("column", ["system", "score"])
def test_a_long_table_without_its_system_or_score_column_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str
) -> None:
    """Before, it was read as a wide table (a model named 'score') and failed on repeated
    rows: "row 1 (task 'all', item 'q0', system 'score', run 0) occurs twice"."""
    csv = tmp_path / "long.csv"
    frame = pd.DataFrame(
        {
            "task": ["t1", "t1", "t2", "t2"] * 2,
            "item": ["q0", "q1"] * 4,
            "system": ["x"] * 4 + ["y"] * 4,
            "score": [1, 0, 0.5, 1, 0, 0, 1, 0.25],
        }
    )
    frame.drop(columns=column).to_csv(csv, index=False)
    assert main(["items", str(csv), "--a", "x", "--b", "y"]) == 2
    out, err = capsys.readouterr()
    kept = "score" if column == "system" else "system"
    assert out == "" and len(err.splitlines()) == 1
    assert err.startswith(
        f"isbetter items: error: {str(csv)!r} has a column {kept!r} but none {column!r}: a "
        "long table needs both"
    )


@pytest.mark.parametrize(
    "command", [["items", "--a", "x", "--b", "y"], ["rank", "--items"]], ids=["items", "rank"]
)
def test_run_suffix_on_a_long_table_names_that_flag_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """Before: '... --systems and --run-suffix are for wide tables' (items has no --systems)."""
    csv = tmp_path / "long.csv"
    pd.DataFrame({"item": [1, 2] * 2, "system": list("xxyy"), "score": [1, 0, 0, 1]}).to_csv(
        csv, index=False
    )
    assert main([command[0], str(csv), *command[1:], "--run-suffix"]) == 2
    assert capsys.readouterr().err == (
        f"isbetter {command[0]}: error: {str(csv)!r} is a long table (columns 'system' and "
        "'score'): --run-suffix is for wide tables (a column per system)\n"
    )


def test_a_folder_of_inspect_logs_is_read_as_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Inspect writes its logs to a folder (logs/): before, 'holds no lm-evaluation-harness
    output'."""
    import shutil

    logs = tmp_path / "logs"
    logs.mkdir()
    for name in ("data_arc_qwen.json", "data_arc_sonnet.json"):
        shutil.copy(DATA / "inspect" / name, logs)
    (logs / "notes.txt").write_text("not a log\n")
    qwen, sonnet = "ollama/qwen2.5:0.5b", "anthropic/claude-sonnet-4-0"
    args = ["--a", qwen, "--b", sonnet, "--common-items", "--rope", "0.05", *FAST]
    assert main(["items", str(logs), *args]) == 0
    from_folder = capsys.readouterr().out
    assert main(["items", *(str(p) for p in sorted(logs.glob("*.json"))), *args]) == 0
    assert from_folder == capsys.readouterr().out
    assert from_folder.startswith(f"exact paired model of binary items: {qwen} vs {sonnet}")


def test_long_table_columns_named_by_flags(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A long table whose columns are not task, item, system, score had no flags: it was
    read as a wide table of three 'models' (question, model, correct). Now --item-col,
    --system-col, --score-col, --task-col name them, for items and rank --items alike, and a
    column that is not there is one line naming the flag."""
    csv = tmp_path / "graded.csv"
    pd.DataFrame(
        {
            "subject": ["s1"] * 8,
            "question": [1, 2, 3, 4] * 2,
            "model": ["x"] * 4 + ["y"] * 4,
            "correct": [1, 1, 1, 0, 0, 1, 0, 0],
        }
    ).to_csv(csv, index=False)
    flags = ["--item-col", "question", "--system-col", "model", "--score-col", "correct"]
    assert main(["items", str(csv), "--a", "x", "--b", "y", *flags, *FAST]) == 0
    out = capsys.readouterr().out
    assert out.startswith("exact paired model of binary items: x vs y on all items, correct")
    assert "only x n10 = 2, only y n01 = 0" in out
    ranked = ["rank", str(csv), "--items", *flags, "--task-col", "subject", "--seed", "1"]
    assert main(ranked) == 0
    assert "Ranking of 2 systems on correct" in capsys.readouterr().out
    wrong = ["items", str(csv), "--a", "x", "--b", "y", *flags[:4], "--score-col", "right"]
    assert main(wrong) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"isbetter items: error: --score-col 'right': {str(csv)!r} has no such column; its "
        "columns: 'subject', 'question', 'model', 'correct'"
    )
    assert main(["rank", str(csv), "--items", "--item-col", "q"]) == 2
    assert "--item-col 'q': " in capsys.readouterr().err
