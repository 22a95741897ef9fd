"""The README's runnable examples run as written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = [
    block
    for block in re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    if "anyio.run(main)" in block
]


def test_the_readme_has_a_runnable_example() -> None:
    assert BLOCKS


@pytest.mark.parametrize("block", BLOCKS, ids=[f"example-{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(block: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(block, encoding="utf-8")
    completed = subprocess.run(
        [sys.executable, "-W", "error", str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert "'type': 'finish'" in completed.stdout
