"""The pytest plugin works from a separate project that tests its own adapter."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

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
    # Scriptable (a FakeHarness), but this project opts out of the scripted tier.
    "scripting": False,
    "prompts": ["Hello there."],
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


def test_a_separate_project_runs_the_suite_through_the_plugin(tmp_path: Path) -> None:
    (tmp_path / "throwaway_adapter.py").write_text(textwrap.dedent(ADAPTER))
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
