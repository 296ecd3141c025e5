"""The floor plan holds: import-linter checks the contracts declared in pyproject.toml."""

import ast
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports(config: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which(
        "lint-imports"
    )
    assert exe, "lint-imports not found: install the test extra (pip install -e '.[test]')"
    return subprocess.run(
        [exe, "--no-cache", str(config)], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_import_contracts_are_kept():
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    assert len(contracts["contracts"]) >= 3
    run = _lint_imports(ROOT / "pyproject.toml")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "0 broken" in run.stdout


def test_an_upward_import_would_be_caught(tmp_path):
    # the same package with the layers upside down: every real import now runs upward, so
    # the tool must report the contract broken (it reads isbetter, not an empty graph)
    config = tmp_path / "upside_down.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "isbetter"\n\n'
        "[[tool.importlinter.contracts]]\n"
        'name = "upside down"\ntype = "layers"\ncontainers = ["isbetter"]\n'
        'layers = ["core", "inference", "results", "cv | f1", "ranking", "report | plots", "cli"]\n'
    )
    run = _lint_imports(config)
    assert run.returncode != 0
    assert "upside down BROKEN" in run.stdout.replace("\n", " ")


#: the most code lines a function may have (docstring, comments and blank lines not counted)
MAX_FUNCTION_LINES = 60


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> int:
    """Count a function's lines that hold code: not its docstring, a comment or blank."""
    counted = set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        if isinstance(first.value.value, str):  # the docstring
            counted -= set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    code = (lines[i - 1].strip() for i in counted)
    return sum(1 for line in code if line and not line.startswith("#"))


def long_functions(package: Path) -> dict[str, int]:
    """Return ``{"path:name": code lines}`` of every function of `package` over the limit."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                n = _code_lines(node, lines)
                if n > MAX_FUNCTION_LINES:
                    found[f"{path.relative_to(package).as_posix()}:{node.name}"] = n
    return found


def test_no_function_is_longer_than_60_code_lines():
    found = long_functions(ROOT / "src" / "isbetter")
    assert not found, f"split these functions (code lines > {MAX_FUNCTION_LINES}): {found}"


def test_a_long_function_would_be_caught(tmp_path):
    body = "".join(f"    x{i} = {i}  # a comment\n\n" for i in range(MAX_FUNCTION_LINES + 1))
    (tmp_path / "m.py").write_text(f'def f():\n    """Doc.\n\n    More.\n    """\n{body}')
    assert long_functions(tmp_path) == {"m.py:f": MAX_FUNCTION_LINES + 2}
    short = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES - 1))
    (tmp_path / "m.py").write_text(f'def f():\n    """Doc."""\n{short}')
    assert long_functions(tmp_path) == {}
