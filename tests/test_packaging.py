"""Release-ready: a wheel and an sdist that ``twine check`` passes, one version, data inside.

``python -m build`` makes both from a copy of the checkout (the checkout gets no build/,
dist/ or egg-info); the wheel is installed with pip into a fresh virtual environment whose
dependencies come from this environment's site-packages (a ``.pth`` line, so no download
and no editable isbetter: pip resolves the wheel's requirements against them, offline) and
runs the README's main command — its part after ``pip install .`` — on the example data
inside the wheel, from a folder with no ``data/``. Slow (a build and a hierarchical fit);
skipped without ``build`` and ``twine`` (``pip install -e ".[release]"``; .ci/run installs
them).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import isbetter
from isbetter import example_data

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("build") is None or importlib.util.find_spec("twine") is None,
        reason='build and twine not installed (pip install -e ".[release]"; .ci/run installs them)',
    ),
]


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("release")
    tree = tmp / "tree"
    shutil.copytree(
        ROOT,
        tree,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "__pycache__", "*.egg-info", "build", "dist", "_build", ".*cache*"
        ),
    )
    out = tmp / "dist"
    done = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(tree)],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def test_build_makes_a_wheel_and_an_sdist_of_the_one_version(dist):
    version = isbetter.__version__
    (wheel,) = dist.glob("isbetter-*.whl")
    (sdist,) = dist.glob("isbetter-*.tar.gz")
    assert wheel.name.startswith(f"isbetter-{version}-") and sdist.name == (
        f"isbetter-{version}.tar.gz"
    )
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert f"Version: {version}\n" in meta
    shipped = {n.rsplit("/", 1)[1] for n in names if n.startswith("isbetter/example_data/")}
    assert {f"{name}" for name in example_data.NAMES.values()} <= shipped
    assert "isbetter/py.typed" in names
    with tarfile.open(sdist) as tf:
        members = {m.name.split("/", 1)[1] for m in tf.getmembers() if "/" in m.name}
    assert {"pyproject.toml", "README.md", "LICENSE", "src/isbetter/__init__.py"} <= members


def test_twine_check_passes(dist):
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(dist.iterdir()))],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


def _main_command() -> list[str]:
    """The README's main command after its install: ``isbetter cv ...``."""
    block = re.search(r"<!-- main-command -->\n```bash\n(.*?)```", README, re.S)
    assert block, "the README has no main command"
    command = block.group(1).strip().split("&&")[-1].split()
    assert command[0] == "isbetter", command
    return command


def test_wheel_runs_the_main_command_in_a_fresh_environment(dist, tmp_path):
    (wheel,) = dist.glob("isbetter-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    # this environment's dependencies, after the fresh environment's own site-packages
    (site / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    pip = [python, "-m", "pip", "--disable-pip-version-check", "-q"]
    done = subprocess.run(
        [*pip, "install", "--no-index", str(wheel)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    isbetter_cmd = venv / "bin" / "isbetter"
    work = tmp_path / "work"  # no data/ here: the command's file comes from the wheel
    work.mkdir()
    version = subprocess.run(
        [isbetter_cmd, "--version"], capture_output=True, text=True, check=True, cwd=work
    )
    assert version.stdout.strip() == f"isbetter {isbetter.__version__}"
    command = _main_command()
    data = command.index("data/uci_benavoli2017/uci_cv_accuracy_long.csv")
    where = subprocess.run(
        [python, "-c", "from isbetter import example_data as e; print(e.path('uci'))"],
        capture_output=True, text=True, check=True, cwd=work,
    ).stdout.strip()  # fmt: skip
    assert where.startswith(str(site)), where  # the wheel's copy, not the checkout's
    command[data] = where
    done = subprocess.run(
        [isbetter_cmd, *command[1:]], capture_output=True, text=True, cwd=work, timeout=900,
        check=False, env={"PATH": str(venv / "bin"), "HOME": str(Path.home())},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    signature = [line for line in done.stdout.splitlines() if line.startswith("method:")]
    assert signature and f"isbetter:{isbetter.__version__}" in signature[-1], done.stdout[-2000:]
    stated = re.search(r"— (\d\.\d+) / (\d\.\d+) / (\d\.\d+) with seed 1", " ".join(README.split()))
    assert stated, "the README no longer states the main command's probabilities"
    for value in stated.groups():
        assert value in done.stdout, value
