"""The pytest plugin: light to load, ini options, markers, capability files, --tb."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ADAPTER = '''
from harness_testkit.fake_harness import FakeHarness


def make_adapter():
    """A bare factory: no `capabilities` attribute (the adapter shows approvals)."""
    return FakeHarness(profile="claude-code", harness_id="bare")
'''

TESTS = """
from harness_testkit.conformance import ConformanceSuite


class TestBare(ConformanceSuite):
    pass
"""


def _pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _project(tmp_path: Path, ini: str) -> Path:
    (tmp_path / "bare_adapter.py").write_text(textwrap.dedent(ADAPTER))
    (tmp_path / "test_conformance.py").write_text(textwrap.dedent(TESTS))
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --strict-markers\n" + ini)
    return tmp_path


def test_loading_the_plugin_imports_no_part_of_the_kit_but_itself() -> None:
    # The entry point is loaded in every pytest run of an environment with the kit:
    # it must not pull in the conformance package (pydantic, hypothesis, rich, ...).
    code = (
        "import sys, pytest; before = set(sys.modules); "
        "import harness_testkit._pytest_plugin; "
        "print(sorted(set(sys.modules) - before))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    added = set(json.loads(completed.stdout.replace("'", '"')))
    kit = {name for name in added if name.startswith("harness_testkit")}
    assert kit == {"harness_testkit", "harness_testkit._pytest_plugin"}, kit
    heavy = {"pydantic", "hypothesis", "rich", "anyio", "ruamel", "jsonschema", "click"}
    assert not {name.partition(".")[0] for name in added} & heavy, added


def test_ini_options_capability_file_and_markers(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        "harness_adapter = bare_adapter:make_adapter\n"
        "harness_capabilities = caps.yaml\n"
        "harness_profile = smoke\n"
        "harness_bundle_dir = out/bundles\n",
    )
    # YAML 1.2: `yes` would be a string, so booleans are spelled true/false.
    (project / "caps.yaml").write_text("resume: true\nprompts: [Hello there.]\n")
    completed = _pytest(
        project,
        "-v",
        "-m",
        "harness_v1 and harness_black_box and harness_must",
        "-k",
        "adapter.surface or adapter.capability-flags",
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    assert "2 passed" in output
    # The effective capabilities: declared from the file, the rest inferred or default.
    assert (
        "capabilities (declaration: harness_capabilities (--harness-capabilities FILE))" in output
    )
    assert "resume = true (declared)" in output
    assert "builtin_tool_approvals = true (inferred)" in output
    assert "steering = false (default)" in output


def test_a_bare_factory_gets_what_the_adapter_shows_and_says_what_it_assumed(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path, "harness_adapter = bare_adapter:make_adapter\n")
    completed = _pytest(project, "-k", "adapter.capability-flags or scripted.steering")
    output = completed.stdout + completed.stderr
    # Without inference the bare factory got all-false capabilities and failed here.
    assert "1 passed" in output, output
    assert "declaration: none (assumed" in output
    # A skip resting on an undeclared capability says so and how to declare it.
    assert "not declared: assumed steering = False (default)" in output


def test_a_declared_mismatch_fails_and_tb_line_keeps_one_line(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        "harness_adapter = bare_adapter:make_adapter\nharness_capabilities = caps.json\n",
    )
    (project / "caps.json").write_text('{"builtin_tool_approvals": false}')
    selection = ("-k", "adapter.capability-flags")
    long = _pytest(project, *selection)
    assert long.returncode == 1, long.stdout
    assert "MISMATCH: `builtin_tool_approvals` is declared false but the adapter shows true" in (
        long.stdout
    )
    assert "replay: harness-testkit replay" in long.stdout
    line = _pytest(project, "--tb=line", *selection)
    assert line.returncode == 1
    assert "MUST [APPROVAL-040] declared builtin_tool_approvals differs" in line.stdout
    assert "replay: harness-testkit replay" not in line.stdout


def test_a_bad_ini_choice_and_a_bad_capability_file_are_usage_errors(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        "harness_adapter = bare_adapter:make_adapter\nharness_capabilities = caps.yaml\n",
    )
    (project / "caps.yaml").write_text("resume: maybe\n")
    completed = _pytest(project, "-k", "adapter.surface")
    assert completed.returncode != 0
    assert "caps.yaml: resume: Input should be a valid boolean" in completed.stderr + (
        completed.stdout
    )
    (project / "pytest.ini").write_text(
        "[pytest]\nharness_adapter = bare_adapter:make_adapter\nharness_profile = deep\n"
    )
    completed = _pytest(project, "-k", "adapter.surface")
    assert "ini option harness_profile = 'deep': use one of smoke, standard, exhaustive" in (
        completed.stdout + completed.stderr
    )


@pytest.mark.parametrize("style", ["no", "line", "short", "long"])
def test_failure_text_follows_tb_style(style: str) -> None:
    from harness_testkit.conformance._suite import _failure_text

    class Result:
        failed_level = "MUST"
        level = "MUST"
        status = "fail"
        message = "[X-1] broke\n  expected: 1"
        replay_command = "harness-testkit replay b.json"
        traceback = "Traceback (most recent call last):\n  File 'a.py'\nValueError: boom"

    text = _failure_text(Result(), style)  # type: ignore[arg-type]  # only the fields it reads
    assert text.startswith("MUST [X-1] broke")
    assert ("ValueError: boom" in text) == (style in ("short", "long"))
    assert ("replay:" in text) == (style != "line")
