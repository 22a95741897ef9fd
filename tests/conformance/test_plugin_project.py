"""The pytest plugin works from a separate project that tests its own adapter."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ADAPTER = '''
from harness_testkit.fake_harness import FakeHarness


class ThrowawayAdapter(FakeHarness):
    """An adapter defined in this project (the fake runtime under another id)."""

    def __init__(self) -> None:
        super().__init__(profile="codex", harness_id="throwaway")


def make_adapter() -> ThrowawayAdapter:
    return ThrowawayAdapter()


make_adapter.capabilities = {
    "resume": True,
    "json_response_format": True,
    "continuation": "lossy",
    # Scriptable (a FakeHarness), but this project opts out of the scripted tier, and
    # says why (the gate accepts a declared gap only).
    "scripting": False,
    "prompts": ["Hello there."],
    "unsupported": {"scripting": "this project checks the black-box tier only"},
}
'''

CONFTEST = """
import pytest

from throwaway_adapter import make_adapter


@pytest.fixture
def harness_adapter():
    return make_adapter
"""

TESTS = """
from harness_testkit.conformance import ConformanceSuite


class TestThrowaway(ConformanceSuite):
    pass
"""


#: The MUSTs of the claimed `resume` only the scripted tier verifies (the project opts
#: out of it): listed, so the gate accepts them unverified.
BASELINE = "unverified: [ADAPTER-032, LIFECYCLE-033, STOP-008]\n"


def test_a_separate_project_runs_the_suite_through_the_plugin(tmp_path: Path) -> None:
    (tmp_path / "throwaway_adapter.py").write_text(textwrap.dedent(ADAPTER))
    (tmp_path / "baseline.yaml").write_text(BASELINE)
    (tmp_path / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (tmp_path / "test_conformance.py").write_text(textwrap.dedent(TESTS))
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--harness-profile=smoke",
            "--harness-baseline=baseline.yaml",
            "--harness-bundle-dir",
            str(tmp_path / "bundles"),
            "-rs",
            str(tmp_path),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    assert "passed" in output
    assert "test_harness_v1[stream.grammar] PASSED" in output or " passed" in output
    # Scripted checks are skipped with the capability they need, named.
    assert "needs capability `scripting`" in output
    assert "harness-testkit verdict" in output
    assert "PASS WITH UNVERIFIED MUSTS: " in output


@pytest.mark.requirement("DECISION-006")
def test_an_undeclared_gap_fails_the_session_though_no_test_fails(tmp_path: Path) -> None:
    undeclared = ADAPTER.replace(
        '    "unsupported": {"scripting": "this project checks the black-box tier only"},\n', ""
    )
    assert undeclared != ADAPTER
    (tmp_path / "throwaway_adapter.py").write_text(textwrap.dedent(undeclared))
    (tmp_path / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (tmp_path / "test_conformance.py").write_text(textwrap.dedent(TESTS))
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
        "--harness-profile=smoke", "--harness-bundle-dir", str(tmp_path / "bundles"),
        "-k", "surface or steering", str(tmp_path),
    ]  # fmt: skip
    for extra, code, line in (
        ((), 1, "FAIL: 1 unverified (capability 'scripting' not declared)"),
        (("--harness-allow-unverified=true",), 0, "PASS WITH UNVERIFIED MUSTS: "),
    ):
        completed = subprocess.run(
            [*command, *extra], cwd=tmp_path, capture_output=True, text=True, timeout=600
        )
        output = completed.stdout + completed.stderr
        assert completed.returncode == code, output
        assert not [row for row in output.splitlines() if row.startswith("FAILED")], output
        assert line in output


def test_the_plugin_option_names_a_factory(tmp_path: Path) -> None:
    (tmp_path / "throwaway_adapter.py").write_text(textwrap.dedent(ADAPTER))
    (tmp_path / "test_conformance.py").write_text(textwrap.dedent(TESTS))
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--harness-adapter=throwaway_adapter:make_adapter",
            "-k",
            "adapter.surface or session.identity",
            str(tmp_path),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "2 passed" in completed.stdout
