"""The Claude Code adapter against the real Claude Code CLI, offline.

The CLI bundled with ``claude-agent-sdk`` runs for real; its model is the kit's scripted
model endpoint on 127.0.0.1. Without the SDK these tests skip, except under ``CI=true``,
where a missing SDK is a failure (``.ci/run`` installs the ``claude-code`` extra).
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import harness_testkit
from harness_testkit.adapters.claude_code import (
    ClaudeCodeHarness,
    ClaudeCodeSession,
    bundled_cli,
    make_adapter,
    sdk_missing_reason,
)
from harness_testkit.conformance import (
    AdapterTarget,
    RunOptions,
    ordered_checks,
    run_check,
    run_suite,
)
from harness_testkit.fake_harness import Script, ToolExecuted
from harness_testkit.reference import HarnessAgent, LocalSandboxProvider, tool
from harness_testkit.spec import (
    ConsumerToolCallPart,
    ConsumerToolErrorPart,
    ConsumerToolResultPart,
)

_MISSING = sdk_missing_reason()
SMOKE = RunOptions(profile="smoke")


@pytest.fixture(autouse=True)
def _runtime_installed() -> None:
    if _MISSING is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"the Claude Code runtime must be installed in CI: {_MISSING}")
    pytest.skip(_MISSING)


def _target(factory: Any = make_adapter) -> AdapterTarget:
    return AdapterTarget(
        factory=factory,
        capabilities=make_adapter.capabilities,  # type: ignore[attr-defined]  # capabilities ride on the factory
        name=f"{factory.__module__}:{factory.__qualname__}",
        expectations=make_adapter.expectations,  # type: ignore[attr-defined]  # capabilities ride on the factory
    )


def _check(check_id: str) -> Any:
    (found,) = [item for item in ordered_checks() if item.id == check_id]
    return found


_SCRIPT = {
    "turns": [
        {
            "steps": [
                {
                    "actions": [
                        {"reasoning": "first write, then ask the host"},
                        {"text": "Writing the file."},
                        {
                            "builtin": "write",
                            "id": "w1",
                            "input": {"file_path": "notes/hello.txt", "content": "hello\n"},
                        },
                        {"hostTool": "lookup", "id": "h1", "input": {"key": "answer"}},
                    ]
                },
                {"actions": [{"text": "Done: {{result:h1}}"}]},
            ]
        }
    ]
}


@pytest.mark.anyio
async def test_a_turn_runs_built_ins_and_host_tools_for_real(tmp_path: Path) -> None:
    adapter = ClaudeCodeHarness(script=Script.model_validate(_SCRIPT))
    looked_up: list[Any] = []

    def lookup(value: Any, options: Any) -> dict[str, Any]:
        looked_up.append(value)
        return {"answer": 42}

    agent = HarnessAgent(
        harness=adapter,
        sandbox=LocalSandboxProvider(root_dir=tmp_path),
        tools={
            "lookup": tool(
                description="Look a key up", input_schema={"type": "object"}, execute=lookup
            )
        },
        error_log=None,
    )
    session = await agent.create_session()
    try:
        result = await agent.generate(session=session, prompt="write and look up")
        written = await session.sandbox_session.read_text_file(
            f"{session.session_work_dir}/notes/hello.txt"
        )
    finally:
        await session.destroy()
    calls = {
        p.tool_call_id: p for p in result.steps[0].content if isinstance(p, ConsumerToolCallPart)
    }
    assert calls["w1"].tool_name == "write"
    assert calls["w1"].provider_executed is True
    assert calls["h1"].tool_name == "lookup"
    assert looked_up == [{"key": "answer"}]
    assert written == "hello\n"
    executed = adapter.observations.of_kind(ToolExecuted)
    assert [(entry.tool_call_id, entry.executed) for entry in executed] == [("w1", True)]
    assert result.text.startswith("Done:")


@pytest.mark.anyio
async def test_tools_declared_with_a_bare_object_schema_accept_their_inputs(
    tmp_path: Path,
) -> None:
    # claude-agent-sdk reads a schema without `properties` as {parameter: type}: the CLI
    # then required a parameter named `type` and refused every call with an input.
    bare = {"type": "object"}
    script = Script.model_validate(
        {
            "turns": [
                {
                    "steps": [
                        {
                            "actions": [
                                {"mcp": "docs/search", "id": "m1", "input": {"q": "x"}},
                                {"hostTool": "lookup", "id": "h1", "input": {"key": "k"}},
                            ]
                        },
                        {"actions": [{"text": "done"}]},
                    ]
                }
            ],
            "mcpServers": {
                "docs": {"tools": {"search": {"result": {"hits": 1}, "inputSchema": bare}}}
            },
        }
    )
    adapter = ClaudeCodeHarness(script=script)
    agent = HarnessAgent(
        harness=adapter,
        sandbox=LocalSandboxProvider(root_dir=tmp_path),
        tools={
            "lookup": tool(
                description="Look a key up", input_schema=bare, execute=lambda value, _: value
            )
        },
        error_log=None,
    )
    session = await agent.create_session()
    try:
        result = await agent.generate(session=session, prompt="search and look up")
    finally:
        await session.destroy()
    content = result.steps[0].content
    errors = [p.tool_call_id for p in content if isinstance(p, ConsumerToolErrorPart)]
    outputs = {p.tool_call_id: p.output for p in content if isinstance(p, ConsumerToolResultPart)}
    assert errors == []
    assert outputs == {"m1": '{"hits": 1}', "h1": {"key": "k"}}


def test_the_black_box_tier_passes() -> None:
    report = run_suite(_target(), SMOKE, tiers=["black-box"])
    failed = [(r.check_id, r.message) for r in report.results if r.status != "pass"]
    assert failed == []


class _RunsDeniedSession(ClaudeCodeSession):
    """The planted defect: a denied approval still lets the CLI run the tool."""

    def permission_result(self, *, allow: Any, **_: Any) -> Any:
        return allow()


class _RunsDenied(ClaudeCodeHarness):
    session_class = _RunsDeniedSession


def make_runs_denied() -> ClaudeCodeHarness:
    """Claude Code with the planted defect."""
    return _RunsDenied()


@pytest.mark.slow
def test_a_denied_approval_that_still_runs_is_caught_by_the_scripted_tier() -> None:
    check = _check("scripted.permission-modes")
    assert run_check(check, _target(), SMOKE).status == "pass"
    result = run_check(check, _target(make_runs_denied), SMOKE)
    assert result.status == "fail"
    assert result.failed_requirement == "APPROVAL-035"
    assert "was executed" in result.message


def test_versions_name_the_sdk_and_the_cli_that_runs(tmp_path: Path) -> None:
    cli = bundled_cli()
    assert cli is not None
    printed = subprocess.run(
        [str(cli), "--version"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert ClaudeCodeHarness().versions == {
        "claude-agent-sdk": importlib.metadata.version("claude-agent-sdk"),
        "claude-code-cli": printed.split()[0],
    }
    # A CLI given by path is the one asked (once: the answer is cached per executable).
    other = tmp_path / "claude"
    count = tmp_path / "asked"
    other.write_text(f"#!/bin/sh\necho x >> {count}\necho '9.8.7 (Claude Code)'\n")
    other.chmod(0o755)
    harness = ClaudeCodeHarness(cli_path=other)
    assert harness.versions["claude-code-cli"] == "9.8.7"
    assert ClaudeCodeHarness(cli_path=other).versions["claude-code-cli"] == "9.8.7"
    assert count.read_text() == "x\n"
    missing = ClaudeCodeHarness(cli_path=tmp_path / "absent").versions["claude-code-cli"]
    assert missing.startswith("unknown (FileNotFoundError"), missing


def test_a_check_report_names_the_claude_code_versions() -> None:
    report = run_suite(_target(), SMOKE, check_ids=["adapter.surface"])
    assert report.versions["harness-testkit"] == harness_testkit.__version__
    assert report.versions["claude-agent-sdk"] == importlib.metadata.version("claude-agent-sdk")
    assert report.versions["claude-code-cli"] == ClaudeCodeHarness().versions["claude-code-cli"]
