"""``harness-testkit spec requirements`` reads well at any terminal width."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from harness_testkit._cli import cli


@pytest.mark.parametrize("columns", [40, 60, 100])
def test_narrow_terminals_get_one_block_per_requirement(
    columns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    result = CliRunner().invoke(cli, ["spec", "requirements", "--area", "ADAPTER"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert all(len(line) <= max(columns, 40) for line in lines), max(lines, key=len)
    assert any(line.startswith("ADAPTER-001  MUST  adapter") for line in lines)
    # ids are never split across lines
    assert not any(line.strip() in ("ADAPT", "ER-00", "1") for line in lines)


def test_wide_terminals_keep_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    result = CliRunner().invoke(cli, ["spec", "requirements", "--area", "ADAPTER"])
    assert result.exit_code == 0, result.output
    assert any("ADAPTER-001" in line and "MUST" in line for line in result.output.splitlines())
    assert all(len(line) <= 160 for line in result.output.splitlines())
