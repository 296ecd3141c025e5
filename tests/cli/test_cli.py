import json
import re
import subprocess
import sys

import pandas as pd
import pytest

from _reference import expected_probabilities
from isbetter.cli import main


@pytest.fixture
def anneal_csv(tmp_path, uci_long_path):
    df = pd.read_csv(uci_long_path)
    df = df[df["dataset_id"] == 1].copy()
    df["acc"] = df["percent_correct_3dp"].round(2) / 100
    path = tmp_path / "anneal.csv"
    df.to_csv(path, index=False)
    return path


def _anneal_args(path):
    return [
        "cv",
        str(path),
        "--metric",
        "acc",
        "--dataset-col",
        "dataset_name",
        "--system-col",
        "classifier",
    ]


def test_cv_one_dataset_json_is_the_correlated_t_test(anneal_csv, capsys):
    code = main(
        [
            *_anneal_args(anneal_csv),
            "--a",
            "nbc",
            "--b",
            "aode",
            "--rope",
            "0.01",
            "--format",
            "json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "correlated_t"
    assert (out["system_a"], out["system_b"], out["rope"]) == ("nbc", "aode", 0.01)
    expected = expected_probabilities("ctt_anneal_nbc_aode")
    got = (out["p_a_better"], out["p_rope"], out["p_b_better"])
    assert got == pytest.approx(expected, abs=1e-9)
    assert "seed" in out
    # exact, but the seed is recorded as for every method (drawn when none is given)
    assert re.match(r"method:correlated-t\|rope:0.01\|seed:\d+\|isbetter:", out["signature"])


def test_cv_sign_methods_text_and_markdown(uci_long_path, capsys, tmp_path):
    common = [
        "cv",
        str(uci_long_path),
        "--a",
        "nbc",
        "--b",
        "aode",
        "--metric",
        "accuracy",
        "--dataset-col",
        "dataset_id",
        "--system-col",
        "classifier",
        "--rope",
        "0.01",
        "--seed",
        "3",
    ]
    assert main([*common, "--method", "signed-rank", "--prior", "0.6"]) == 0
    text = capsys.readouterr().out
    assert "aode better (d < -0.01)" in text
    assert "method:signed-rank|rope:0.01|draws:50000|seed:3" in text
    out = tmp_path / "r.md"
    assert main([*common, "--method", "sign", "--format", "markdown", "--output", str(out)]) == 0
    assert capsys.readouterr().out == ""
    markdown = out.read_text()
    assert markdown.startswith("**Bayesian sign test: nbc vs aode, accuracy (higher is better)**")
    assert "| region | P (argmax count) |" in markdown
    # every table row has as many cells as the header: no stray pipes from |d|
    rows = [line for line in markdown.splitlines() if line.startswith("|")]
    assert {len(r.replace("\\|", "").split("|")) for r in rows} == {4}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--a", "nbc", "--b", "zzz"], "unknown system 'zzz'"),
        (["--a", "nbc", "--b", "aode", "--metric", "f1"], "Column 'f1' (--metric) not found"),
        (["--a", "nbc", "--b", "aode", "--rope", "-1"], "--rope must be a non-negative"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(anneal_csv, capsys, argv, message):
    base = _anneal_args(anneal_csv)
    if "--metric" in argv:  # a flag is given once (twice is an error of its own)
        i = base.index("--metric")
        base = base[:i] + base[i + 2 :]
    code = main([*base, *argv])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_missing_file_and_usage_errors(capsys, tmp_path):
    assert main(["cv", str(tmp_path / "nope.csv"), "--a", "x", "--b", "y"]) == 2
    assert "No such file" in capsys.readouterr().err
    assert main(["cv"]) == 2
    assert main(["cv", "f.csv", "--a", "x", "--b", "y", "--method", "magic"]) == 2
    assert main(["--version"]) == 0


def test_python_dash_m_and_light_import():
    run = subprocess.run(
        [sys.executable, "-m", "isbetter", "--help"], capture_output=True, text=True, check=True
    )
    assert "cv" in run.stdout
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, isbetter, isbetter.cli; isbetter.cli._build_parser();"
            "print(sorted(m for m in ('pymc', 'matplotlib', 'pytensor', 'pandas', 'scipy')"
            " if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip() == "[]"
    bare = subprocess.run(
        [sys.executable, "-c", "import sys, isbetter; print('numpy' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert bare.stdout.strip() == "False"  # import isbetter loads nothing heavy


@pytest.mark.parametrize(("code", "frozen"), [(0, True), (1, True), (2, True), (130, False)])
def test_the_program_collects_rarely_and_skips_the_last_collection(monkeypatch, code, frozen):
    """program() raises the collector's first threshold to GC_THRESHOLD (the others kept)
    before main, and freezes the collector before it exits (0.5 s after a ranking); after
    Ctrl-C it ends through interrupt.exiting, which does that itself."""
    import gc

    import isbetter.cli as cli

    calls = []
    monkeypatch.setattr(cli, "main", lambda: calls.append("main") or code)
    monkeypatch.setattr(gc, "freeze", lambda: calls.append("freeze"))
    monkeypatch.setattr(gc, "set_threshold", lambda *t: calls.append(t))
    monkeypatch.setattr(cli.interrupt, "exiting", lambda: calls.append("exiting"))
    with pytest.raises(SystemExit) as exit_:
        cli.program()
    assert exit_.value.code == code
    threshold = (cli.GC_THRESHOLD, *gc.get_threshold()[1:])
    assert calls == [threshold, "main", "freeze" if frozen else "exiting"]
    assert cli.GC_THRESHOLD > gc.get_threshold()[0]  # rarer than Python's default


def test_options_that_do_not_apply_are_one_line_errors(anneal_csv, capsys):
    base = [*_anneal_args(anneal_csv), "--a", "nbc", "--b", "aode"]
    assert main([*base, "--prior", "0.5"]) == 2
    err = capsys.readouterr().err
    assert "--prior does not apply to --method correlated-t; it takes --rho, --dataset." in err
    assert main([*base, "--method", "sign", "--draws", "1000", "--seed", "2"]) == 0
    assert "draws:1000|seed:2" in capsys.readouterr().out


def test_correlated_t_test_imports_no_heavy_modules(uci_long_path):
    """One data set from the command line: no PyMC, numba, ArviZ or scipy.stats."""
    code = (
        "import sys\n"
        "from isbetter.cli import main\n"
        f"code = main(['cv', {str(uci_long_path)!r}, '--dataset-col', 'dataset_id',"
        " '--system-col', 'classifier', '--metric', 'accuracy', '--a', 'nbc', '--b', 'aode',"
        " '--dataset', '1', '--rope', '0.01'])\n"
        "heavy = ('pymc', 'pytensor', 'numba', 'arviz', 'nutpie', 'scipy.stats', 'matplotlib')\n"
        "print(code, sorted(m for m in heavy if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip().splitlines()[-1] == "0 []"


def test_tune_help_states_the_models_own_defaults(capsys):
    """--help says what --tune defaults to; the numbers are the models' constants."""
    from isbetter.cli.common import HIERARCHICAL_TUNE_HELP
    from isbetter.cli.rank import JOINT_TUNE_HELP
    from isbetter.cv.hierarchical import model as hm
    from isbetter.cv.joint.model import COMPONENTS_SAMPLER, SHARED_SAMPLER

    first, last = hm.AUTO_INTEGRATED_MAX_DATASETS + 1, hm.LOW_RANK_MAX_DATASETS
    assert HIERARCHICAL_TUNE_HELP == (
        f"hierarchical: {hm.TUNE}, {hm.DRAW_VARIANCE_TUNE} where it samples its centred "
        f"model of {first}-{last} data sets"
    )
    joint = f"--method joint: {COMPONENTS_SAMPLER.tune}"  # the default form's
    if SHARED_SAMPLER.tune != COMPONENTS_SAMPLER.tune:
        joint += f" ({SHARED_SAMPLER.tune} with --joint-tails shared or per-system)"
    assert JOINT_TUNE_HELP == joint
    for command, tail in (("cv", ")"), ("rank", f"; {joint})")):
        assert main([command, "--help"]) == 0
        shown = " ".join(capsys.readouterr().out.split())  # argparse wraps the lines
        assert f"MCMC tuning steps per chain (default {HIERARCHICAL_TUNE_HELP}{tail}" in shown


def _help(command, capsys):
    assert main([command, "--help"]) == 0
    return " ".join(capsys.readouterr().out.split())  # argparse's line breaks undone


def test_chains_help_states_the_defaults_the_code_uses(capsys):
    """--help said "MCMC chains (default 4)", but rank --items over more than 20 subtasks of
    binary items fits each pair with 2 chains (and cv's closed-form methods sample none)."""
    import inspect

    from isbetter.cv.hierarchical.model import hierarchical_test
    from isbetter.cv.joint.model import joint_fit
    from isbetter.cv.plackett_luce import plackett_luce
    from isbetter.items.hierarchical.route import LOW_RANK_MAX_SUBTASKS
    from isbetter.ranking.items import RANK_CHAINS

    for fit in (hierarchical_test, joint_fit, plackett_luce):
        assert inspect.signature(fit).parameters["chains"].default == 4, fit.__name__
    rank = _help("rank", capsys)
    assert (
        "--chains CHAINS MCMC chains (default 4: the hierarchical, joint and Plackett–Luce "
        f"models; rank --items over more than {LOW_RANK_MAX_SUBTASKS} subtasks of binary "
        f"items: {RANK_CHAINS} a pair)"
    ) in rank
    cv = _help("cv", capsys)
    assert "MCMC chains (default 4, for the hierarchical model; the other methods" in cv
