"""The README and the documentation's pages run as written, and print the numbers they state.

* every Python block as a script of its own (``python block.py`` in a fresh process, from a
  folder outside the repository: the example data comes from the package), and all of them
  in one notebook kernel;
* every ``isbetter`` command of their bash blocks, from the root of a checkout (a folder
  with ``data/``, as the README says);
* the numbers stated beside them — read from the pages' text, not copied here — are
  the numbers printed;
* the README stays a five-minute read (at most 250 lines) whose links all lead somewhere.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: the pages whose code and numbers are checked: the README, then the docs' user pages
#: (the design notes, the changelog and the development page hold no runnable example)
PAGES = [
    ROOT / "README.md",
    ROOT / "docs" / "index.md",
    ROOT / "docs" / "paper.md",
    ROOT / "docs" / "performance.md",
    *sorted((ROOT / "docs" / "guide").glob("*.md")),
]
TEXT = "\n\n".join(page.read_text(encoding="utf-8") for page in PAGES)
PROSE = " ".join(TEXT.split())  # statements wrapped over lines read as one line

# ----------------------------------------------------------------------------- the blocks

#: each Python block, named by a line only it has
PYTHON_BLOCKS = {
    "cv": 'isbetter.compare(table, "nbc", "aode"',
    "f1": "isbetter.compare_f1(",
    "ranking": "isbetter.rank(table",
    "sklearn": "cross_val_scores(",
    "items-subtasks": "isbetter.compare_items(table",
}


def _python_blocks() -> dict[str, str]:
    blocks = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)
    named = {name: [b for b in blocks if key in b] for name, key in PYTHON_BLOCKS.items()}
    assert all(len(found) == 1 for found in named.values()), named
    assert len(blocks) == len(named), "a new Python block: name it in PYTHON_BLOCKS"
    return {name: found[0] for name, found in named.items()}


def _bash_blocks() -> list[tuple[str, str]]:
    """(marker, body) of each bash block; the marker is the HTML comment above it, if any."""
    found = re.findall(r"(?:<!-- ([\w-]+) -->\n)?```bash\n(.*?)```", TEXT, flags=re.S)
    return [(marker, body) for marker, body in found]


def _commands() -> list[str]:
    """Every ``isbetter`` command of the bash blocks that are meant to run as written.

    Not run: the synopsis (placeholders such as FILE and [--flag]; checked against the
    parser below), the test command (it runs this suite) and the tagger study's chain
    (it needs the treebank and the taggers; tests/studies runs its script on a sample).
    Of the main command, the part after the install runs here; test_demo.py installs a
    wheel as it does.
    """
    commands: list[str] = []
    for marker, body in _bash_blocks():
        if marker in ("synopsis", "test-command", "tagger-study"):
            continue
        for line in body.replace("\\\n", " ").splitlines():
            command = " ".join(line.split("&&")[-1].split())
            assert not command or command.startswith("isbetter "), command
            if command and command not in commands:  # a page may repeat the README's
                commands.append(command)
    return commands


def _slow(command: str) -> list:
    # the commands on the UCI and tagger scores fit the hierarchical model (seconds to minutes)
    slow = ("uci_cv_accuracy_long", "ud_ewt_taggers")
    return [pytest.mark.slow] if any(name in command for name in slow) else []


# ----------------------------------------------------------------------------- what it states


def _decimals(stated: str) -> float:
    """Half a unit of the last digit of `stated`: how far a number printed so may be off."""
    places = len(stated.split(".")[1]) if "." in stated else 0
    return 0.5 * 10.0**-places + 1e-12


def _agree(printed: float, stated: str) -> bool:
    return abs(printed - float(stated)) <= _decimals(stated)


def _stated(pattern: str) -> tuple[str, ...]:
    match = re.search(pattern, PROSE)
    assert match, f"the README no longer states {pattern!r}"
    return match.groups()


def _main_probabilities() -> tuple[str, ...]:
    """P(nbc better), P(equivalent), P(aode better) of the main command, seed 1."""
    return _stated(r"— (\d\.\d+) / (\d\.\d+) / (\d\.\d+) with seed 1")


def _rope_table() -> dict[str, tuple[str, ...]]:
    """ROPE -> the three probabilities, from the table in "How to choose a ROPE"."""
    rows = re.findall(r"^\| (0\.\d+) +\| (\d\.\d+) \| (\d\.\d+) \| (\d\.\d+) \|$", TEXT, re.M)
    assert len(rows) == 3, rows
    return {rope: tuple(ps) for rope, *ps in rows}


def _tagger_chains() -> dict[str, str]:
    """Metric -> the chain the README states for the tagger study."""
    found = {
        metric: _stated(rf"\* {label} accuracy: `([^`]+)`")[0]
        for metric, label in (("token", "token"), ("sentence", "sentence"), ("oov", "OOV"))
    }
    return {f"{metric}_accuracy": chain for metric, chain in found.items()}


def _tagger_table2() -> dict[tuple[str, str], str]:
    """(A, B) -> the nine probabilities of the tagger study's likelihood table, as stated."""
    rows = re.findall(r"^\| (\w+) vs (\w+) \| ([\d. /|]+) \|$", TEXT, re.M)
    assert len(rows) == 6, rows
    return {(a, b): " ".join(re.findall(r"\d\.\d{4}", cells)) for a, b, cells in rows}


def _printed_pairs(stdout: str) -> dict[tuple[str, str], str]:
    """(A, B) -> the nine probabilities of a three-metric ranking's pairwise table."""
    pairs = {}
    for line in stdout.splitlines():
        words = line.split()
        if len(words) > 2 and re.fullmatch(r"\d\.\d{4}", words[2]):
            pairs[words[0], words[1]] = " ".join(w for w in words if re.fullmatch(r"\d\.\d{4}", w))
    return pairs


def _tagger_rank_tests() -> dict[str, tuple[str, str, str]]:
    """Metric -> (mean ranks, Friedman p, joint P(best)), as the tagger guide states them."""
    rows = re.findall(
        r"^\| (token|sentence|OOV) accuracy \| ([^|]+) \| (0\.\d+) \| ([^|]+) \|$", TEXT, re.M
    )
    assert len(rows) == 3, rows
    return {f"{m.lower()}_accuracy": (ranks.strip(), p, best.strip()) for m, ranks, p, best in rows}


def _uci_order() -> str:
    return _stated(r"On the five UCI classifiers: `([^`]+)`")[0]


def _probabilities(text: str) -> tuple[float, float, float]:
    match = re.fullmatch(
        r"Probabilities\(p_a_better=([^,]+), p_rope=([^,]+), p_b_better=([^)]+)\)", text
    )
    assert match, text
    a, r, b = map(float, match.groups())
    return a, r, b


def check_cv(out: str) -> None:
    lines = out.splitlines()
    argmax = [float(x) for x in lines[0].split()]
    assert all(map(_agree, argmax, _main_probabilities())), lines[0]
    table = _rope_table()
    assert all(map(_agree, argmax, table["0.01"])), (lines[0], table)
    (predictive,) = _stated(r"P\(rope\) [\d.]+ by argmax counting, ([\d.]+) predictive")
    assert _agree(_probabilities(lines[1])[1], predictive), lines[1]
    other = [line.split(" ", 1) for line in lines if re.match(r"0\.\d+ Probabilities", line)]
    assert [rope for rope, _ in other] == ["0.005", "0.02"]
    for rope, text in other:
        assert all(map(_agree, _probabilities(text), table[rope])), (rope, text, table[rope])
    mean, low, high = _stated(
        r"posterior mean difference (-?[\d.]+), 95% HDI \[(-?[\d.]+), (-?[\d.]+)\]; seed 1"
    )
    printed = re.search(
        r"posterior mean difference delta0: (-?[\d.]+) .*?95% HDI \[(-?[\d.]+), (-?[\d.]+)\]",
        out,
    )
    assert printed, out
    assert all(map(_agree, map(float, printed.groups()), (mean, low, high))), printed.group(0)


def check_f1(out: str) -> None:
    block = _python_blocks()["f1"]
    (shown,) = re.search(r'comparisons\["sport"\]\.p_rope\).*\((0\.\d+)\)', block).groups()
    (caption,) = _stated(r'class "sport" .*?P\(ROPE\) (\d+)%')
    printed = [float(line) for line in out.splitlines() if re.fullmatch(r"0\.\d+", line)]
    assert len(printed) == 1, out
    assert _agree(printed[0], shown) and _agree(100 * printed[0], caption), (printed, shown)


def check_ranking(out: str) -> None:
    assert out.splitlines()[0] == _uci_order()
    assert out.splitlines()[1] == _stated(r"On the five UCI classifiers the chain is `([^`]+)`")[0]
    # the three answers side by side: the rows printed are the README's table
    printed = [line for line in out.splitlines() if line.startswith("| ")]
    table = re.findall(r"^\| (?:pairwise|joint|Plackett–Luce) \|.*$", TEXT, re.M)
    assert len(table) == 3 and printed == table, (printed, table)
    (p_best,) = _stated(r"in one fit: P\(best\) ((?:hnb|aode) \d\.\d+, (?:hnb|aode) \d\.\d+)")
    assert f"| {p_best}, " in printed[1], (p_best, printed[1])


def check_sklearn(out: str) -> None:
    block = _python_blocks()["sklearn"]
    (stated,) = re.search(r'\.order\("accuracy"\)\)\n# (.+)\n', block).groups()
    assert out.strip() == stated


def check_items_subtasks(out: str) -> None:
    """The guide's output of two models over subtasks, line by line ("…": lines left out)."""
    (stated,) = re.search(
        r"isbetter\.compare_items\(table.*?```\n```\n(.*?)```", TEXT, flags=re.S
    ).groups()
    printed = out.splitlines()
    for line in stated.splitlines():
        if line.strip() == "…":
            continue
        if line.endswith("|…"):  # the signature: its versions left out
            assert any(p.startswith(line[:-1]) for p in printed), (line, out)
        else:
            assert line in printed, (line, out)


CHECKS = {
    "cv": check_cv,
    "f1": check_f1,
    "ranking": check_ranking,
    "sklearn": check_sklearn,
    "items-subtasks": check_items_subtasks,
}

# ----------------------------------------------------------------------------- the tests


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    run = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("cv", marks=pytest.mark.slow),
        "f1",
        pytest.param("ranking", marks=pytest.mark.slow),
        "sklearn",
        pytest.param("items-subtasks", marks=pytest.mark.slow),  # an MCMC fit
    ],
)
def test_python_block_runs_as_a_script(name, tmp_path):
    """`python example.py` of one block, pasted as it is, in a folder outside the repository."""
    (tmp_path / "example.py").write_text(_python_blocks()[name], encoding="utf-8")
    run = _run([sys.executable, "example.py"], cwd=tmp_path)
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    CHECKS[name](run.stdout)


@pytest.mark.slow
def test_python_blocks_run_in_a_notebook(tmp_path):
    """All blocks one after the other in one Jupyter kernel, as a reader pastes them."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    blocks = _python_blocks()
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(code) for code in blocks.values()]
    )
    client = nbclient.NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    for name, cell in zip(blocks, nb.cells, strict=True):
        out = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")
        CHECKS[name](out)
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert pngs == ["cd.png", "hasse.png", "subtasks.png", "triangle.png"]


@pytest.mark.parametrize(
    "command", [pytest.param(c, marks=_slow(c), id=c.split()[1]) for c in _commands()]
)
def test_command_runs_from_the_checkout(command, tmp_path):
    """Each ``isbetter`` command from a checkout's root (``data/`` there; outputs land here)."""
    (tmp_path / "data").symlink_to(ROOT / "data")
    argv = shlex.split(command)
    run = _run([sys.executable, "-m", "isbetter", *argv[1:]], cwd=tmp_path)
    if argv[1] == "cv" and "--output" in argv:  # the main command into a report file
        written = (tmp_path / argv[argv.index("--output") + 1]).read_text(encoding="utf-8")
        assert all(p in written for p in _main_probabilities()), written
    elif argv[1] == "cv":  # the main command
        row = re.findall(r"^\S.*?\s(\d\.\d{4})\s+\d\.\d{4}$", run.stdout, re.M)
        assert tuple(row) == _main_probabilities(), run.stdout
    if argv[1] == "rank" and "--plot" in argv:
        assert f"accuracy, next data set (ROPE ±0.01): {_uci_order()}" in run.stdout
        # the ranking guide's numbers: aode vs j48 leaning, j48 and j48gr above nbc
        ropes, better = _stated(r"P\(ROPE\) = (0\.\d{4}), P\(aode\s+better\) = (0\.\d{4})")
        assert re.search(rf"^aode +j48 +{better} +{ropes} +0\.\d{{4}} +≳", run.stdout, re.M)
        j48, j48gr = _stated(r"which the model puts above it \(P = (0\.\d{4}) and (0\.\d{4})\)")
        assert re.search(rf"^j48 +nbc +{j48} ", run.stdout, re.M), run.stdout
        assert re.search(rf"^j48gr +nbc +{j48gr} ", run.stdout, re.M), run.stdout
    if argv[1] == "rank" and "ud_ewt_taggers" in command and "joint" not in argv:
        for metric, chain in _tagger_chains().items():  # the tagger study's three chains
            line = f"{metric} chain, next data set: {chain}"
            assert line in run.stdout, (metric, chain, run.stdout)
        assert _printed_pairs(run.stdout) == _tagger_table2(), run.stdout  # its Table 2
    if argv[1] == "rank" and "ud_ewt_taggers" in command and "joint" in argv:
        for metric, (_, _, best) in _tagger_rank_tests().items():  # P(best) of the leader
            system, value = best.split()
            assert re.search(
                rf"{metric}, mean effects, .*P\(best\).*: {system} {value} ", run.stdout
            )
    if argv[1] == "items":  # the AIME pair: P(A better by more than the ROPE), as stated
        (stated,) = _stated(r"P\(o3-mini \(high\) better by more than 5 points\) (0\.\d{4})")
        assert re.search(rf"o3-mini \(high\) better \(d > 0\.05\) +{stated}$", run.stdout, re.M)
    if argv[1] == "rank" and "--items" in argv:  # AIME's 19 models: the leader's P(best)
        assert "P(best)" in run.stdout and "o3-mini (high) 0.994 " in run.stdout, run.stdout
        assert "o3-mini (high) 0.994 [0.992, 0.995]" in TEXT
    if argv[1] == "rank" and "--wide" in argv:  # Demšar's Table 6, as the README states it
        assert "C4.5 ≈ C4.5+cf < C4.5+m ≈ C4.5+m+cf" in run.stdout, run.stdout
    for flag in ("--plot", "--report"):
        if flag in argv:
            assert (tmp_path / argv[argv.index(flag) + 1]).stat().st_size > 1000


def test_every_runnable_command_is_tested():
    """The runnable commands: the main one, the rankings, the two reports, the LaTeX table."""
    subcommands = ["cv", "rank", "rank", "f1", "rank", "rank", "items", "cv", "rank", "rank"]
    assert [c.split()[1] for c in _commands()] == subcommands


def test_readme_is_a_five_minute_read_whose_links_lead_somewhere():
    """At most 250 lines; every relative link and image names a file or folder that exists."""
    assert len(README.splitlines()) <= 250
    targets = re.findall(r"\]\(([^)\s]+)\)", README) + re.findall(r'src="([^"]+)"', README)
    local = [t.split("#")[0] for t in targets if not re.match(r"[a-z]+:", t) and t[0] != "#"]
    assert local and all((ROOT / t).exists() for t in local), [
        t for t in local if not (ROOT / t).exists()
    ]
    # the guide pages it links are pages of the documentation site
    site = {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert {t for t in local if t.startswith("docs/") and t.endswith(".md")} <= site


def test_tagger_study_numbers_are_the_shipped_tables():
    """The mean token accuracies the README states are those of data/ud_ewt_taggers."""
    import pandas as pd

    scores = pd.read_csv(ROOT / "data" / "ud_ewt_taggers" / "scores.csv")
    means = scores.groupby("system")["token_accuracy"].mean()
    (stated,) = _stated(r"mean token accuracy over the (?:\d+) folds: ([^)]+)\)")
    pairs = dict(item.rsplit(" ", 1) for item in stated.split(", "))
    assert sorted(pairs) == sorted(means.index), (pairs, means)
    for system, value in pairs.items():
        assert _agree(means[system], value), (system, value, means[system])
    (folds,) = _stated(r"mean token accuracy over the (\d+) folds")
    assert int(folds) == len(scores) // scores["system"].nunique()
    # one split's McNemar claims on tnt vs perceptron, counted over the shipped folds
    mcnemar = pd.read_csv(ROOT / "data" / "ud_ewt_taggers" / "mcnemar.csv")
    pair = mcnemar[(mcnemar["system_a"] == "tnt") & (mcnemar["system_b"] == "perceptron")]
    none, total, tnt, perceptron = _stated(
        r"no difference on (\d+) of the (\d+) folds, tnt better on (\d+) and the "
        r"perceptron better on (\d+)"
    )
    counts = (
        int((~pair["significant"]).sum()),
        int((pair["significant"] & pair["better"].eq("tnt")).sum()),
        int((pair["significant"] & pair["better"].eq("perceptron")).sum()),
    )
    assert (int(none), int(tnt), int(perceptron)) == counts and int(total) == len(pair)


def test_tagger_study_rank_tests_are_the_shipped_tables():
    """The mean ranks and Friedman p the README's tagger table states, recomputed (fast)."""
    import isbetter

    table = isbetter.read_scores(
        ROOT / "data" / "ud_ewt_taggers" / "scores.csv",
        score=["token_accuracy", "sentence_accuracy", "oov_accuracy"],
    )
    for metric, (ranks, p, _) in _tagger_rank_tests().items():
        b = isbetter.friedman_nemenyi(table, metric=metric)
        assert ranks == ", ".join(f"{s} {b.mean_ranks[s]:.1f}" for s in b.by_rank), metric
        assert _agree(b.friedman.p_value, p), (metric, p, b.friedman.p_value)
        (cd,) = _stated(r"Nemenyi's critical difference \((\d\.\d+) ranks at α 0\.05")
        assert _agree(b.critical_difference(0.05).cd, cd)


def test_synopsis_names_real_subcommands_and_flags():
    """The command-line synopsis (placeholders, not run) names only flags that exist."""
    from isbetter.cli import _build_parser

    (synopsis,) = [body for marker, body in _bash_blocks() if marker == "synopsis"]
    parser = _build_parser()
    sub = next(a for a in parser._actions if hasattr(a, "choices") and a.choices)
    for line in synopsis.replace("\\\n", " ").splitlines():
        words = line.split()
        assert words[0] == "isbetter" and words[1] in sub.choices, line
        known = set(sub.choices[words[1]]._option_string_actions)
        flags = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", line))
        assert flags <= known, (line, flags - known)


def test_readme_states_the_tagger_chains_the_guide_checks():
    """The tour's one-line summary of the tagger study is the guide's three chains."""
    chains = _tagger_chains()  # checked against the ranking's output in the slow step
    assert chains["token_accuracy"] == chains["oov_accuracy"]
    readme = " ".join(README.split())
    assert (
        f"prints the chains `{chains['token_accuracy']}` on token and OOV accuracy and "
        f"`{chains['sentence_accuracy']}` on sentence accuracy"
    ) in readme
