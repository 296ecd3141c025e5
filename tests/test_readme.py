"""The README's tour runs as written (from the repository root)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
# the README's ranking flags its two near-identical pairs (P(rope) = 1.0) by the ESS rule:
# the warning is part of the output a reader sees, not a failure of the tour
@pytest.mark.filterwarnings("ignore::isbetter.ConvergenceWarning")
def test_readme_python_blocks_run(monkeypatch, tmp_path):
    import matplotlib.pyplot as plt

    # run where a reader would, with the shipped data beside; the pictures the tour
    # saves land in the temporary directory, not in the repository
    (tmp_path / "data").symlink_to(ROOT / "data")
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102
    plt.close("all")
