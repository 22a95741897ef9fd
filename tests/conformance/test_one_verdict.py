"""One planted-bug adapter, one verdict: CLI, JSON, JUnit, Markdown, HTML and pytest agree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from xml.etree import ElementTree

import pytest
from click.testing import CliRunner

from harness_testkit._cli import cli

FACTORY = "tests.conformance.gate_adapters:no_tool_kind"
#: The planted bug: built-ins without tool_use_kind (a SHOULD every black-box MUST
#: check depends on through adapter.surface).
NAMED = "adapter.surface [APPROVAL-005, SHOULD]"

CONFTEST = """
import pytest

from tests.conformance.gate_adapters import no_tool_kind


@pytest.fixture
def harness_adapter():
    return no_tool_kind
"""

TESTS = """
from harness_testkit.conformance import ConformanceSuite


class TestPlanted(ConformanceSuite):
    pass
"""


def _pytest_project(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """Run the planted-bug adapter's black-box tier through the plugin, in a new project."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "conftest.py").write_text(textwrap.dedent(CONFTEST), encoding="utf-8")
    (project / "test_planted.py").write_text(textwrap.dedent(TESTS), encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [
            sys.executable, "-m", "pytest", "-q", "-rfEx", "-p", "no:cacheprovider",
            "-p", "no:randomly", "-p", "no:xdist", "-m", "harness_black_box",
            "--harness-profile", "smoke", f"--harness-bundle-dir={tmp_path / 'bundles'}",
            "-W", "error", "--rootdir", str(project), *options, str(project),
        ],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=900,
    )  # fmt: skip


@pytest.mark.requirement("DECISION-004", "DECISION-006")
def test_every_face_of_a_run_shows_the_gate_s_verdict(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        cli,
        [
            "check", FACTORY, "--profile", "smoke", "--tier", "black-box",
            "--bundle-dir", str(out / "bundles"),
            "--json", str(out / "r.json"), "--junit-xml", str(out / "r.xml"),
            "--report", str(out / "r.md"), "--html", str(out / "r.html"),
        ],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    line = result.output.splitlines()[-1]
    assert line.startswith("FAIL: ")
    assert NAMED in line

    data = json.loads((out / "r.json").read_text(encoding="utf-8"))
    assert data["verdict"]["ok"] is False
    assert data["verdict"]["line"] == line
    assert data["reports"][0]["summary"]["ok"] is False
    assert data["reports"][0]["summary"]["verdict"] == line

    junit = ElementTree.fromstring((out / "r.xml").read_text(encoding="utf-8"))
    assert int(junit.get("failures", "0")) >= 1
    failed = [
        case.get("name") for case in junit.iter("testcase") if case.find("failure") is not None
    ]
    assert failed == ["adapter.surface"]
    failure = next(case for case in junit.iter("testcase") if case.find("failure") is not None)
    assert failure.find("failure").get("type") == "APPROVAL-005"  # type: ignore[union-attr]  # the document has one

    markdown = (out / "r.md").read_text(encoding="utf-8")
    assert f"**{line}**" in markdown
    assert f"Verdict: **{line}**" in markdown

    html = (out / "r.html").read_text(encoding="utf-8")
    assert 'data-verdict="FAIL"' in html
    assert 'data-verdict="PASS"' not in html

    # The same adapter through the pytest plugin: exit 1, the same failing check and
    # requirement, no misleading extra failures, and the same verdict line.
    completed = _pytest_project(tmp_path)
    output = completed.stdout + completed.stderr
    assert completed.returncode == 1, output
    failures = [row for row in output.splitlines() if row.startswith("FAILED ")]
    assert len(failures) == 1, output
    assert "adapter.surface" in failures[0]
    assert "APPROVAL-005" in output
    assert line in output.splitlines(), output


@pytest.mark.requirement("DECISION-006")
def test_allow_unverified_reports_the_blocked_musts_and_passes(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "check", FACTORY, "--profile", "smoke", "--tier", "black-box", "--allow-unverified",
            "--bundle-dir", str(tmp_path / "bundles"), "--junit-xml", str(tmp_path / "r.xml"),
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    line = result.output.splitlines()[-1]
    assert line.startswith("PASS WITH UNVERIFIED MUSTS: 0 hold, ")
    assert "blocked: adapter.surface [APPROVAL-005, SHOULD] failed" in line
    junit = ElementTree.fromstring((tmp_path / "r.xml").read_text(encoding="utf-8"))
    assert junit.get("failures") == "0"
    assert junit.get("errors") == "0"
    # The plugin agrees: the SHOULD failure is an xfail that says so, the session passes.
    completed = _pytest_project(tmp_path, "--harness-allow-unverified=true")
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    assert "XFAIL" in output
    assert "SHOULD APPROVAL-005 does not hold" in output
    assert line in output.splitlines(), output
