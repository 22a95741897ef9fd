"""A denied tool looks denied: the script branches on it, the transcript and summary show it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness_testkit.simulate._loading import load_scenario
from harness_testkit.simulate._runner import SimulationOptions, simulate

from .support import read_lines, write_scenario

pytestmark = [pytest.mark.anyio, pytest.mark.requirement("DECISION-018")]

DEPLOY = """
    agent:
      tools:
        deploy: {{description: Deploy., output: {{ok: true}}}}
      {approval}
    harness:
      script:
        turns:
          - steps:
              - actions:
                  - hostTool: deploy
                    id: dep-1
                    input: {{env: prod}}
              - when: {{toolCallId: dep-1, isError: false}}
                actions: ["Deployed."]
              - when: {{toolCallId: dep-1, isError: true, denied: false}}
                actions: ["Deploy failed."]
              - when: {{toolCallId: dep-1, denied: true}}
                actions: ["Not deployed: {{{{result:dep-1}}}}"]
    actions:
      - prompt: Deploy
      {host}
"""


async def _run(tmp_path: Path, approval: str, host: str) -> tuple[list[dict[str, Any]], Any]:
    file = write_scenario(tmp_path, DEPLOY.format(approval=approval, host=host))
    options = SimulationOptions(out_dir=tmp_path / "out", sandbox_root=tmp_path / "sb")
    summary = await simulate(load_scenario(file), options)
    assert summary.status == "completed", summary.failures
    return read_lines(tmp_path / "out" / "sessions" / "sim-0-0.jsonl"), summary


def _text(lines: list[dict[str, Any]]) -> str:
    return "".join(
        line["part"]["text"]
        for line in lines
        if line["kind"] == "part" and line["part"]["type"] == "text-delta"
    )


async def test_a_user_denial_branches_as_denied_and_is_recorded(tmp_path: Path) -> None:
    lines, summary = await _run(
        tmp_path, "toolApproval: {deploy: user-approval}", "- {deny: deploy, reason: not now}"
    )
    # The success branch does not run; the denial branch does, and sees the denial.
    assert _text(lines) == 'Not deployed: {"type":"execution-denied","reason":"not now"}'
    (denial,) = [line for line in lines if line["kind"] == "denial"]
    assert denial == {
        "kind": "denial",
        "action": 1,
        "toolResult": {
            "type": "tool-result",
            "toolCallId": "dep-1",
            "toolName": "deploy",
            "output": {"type": "execution-denied", "reason": "not now"},
        },
    }
    # Right after the consumer part that revealed it: the agent's approval response.
    before = lines[lines.index(denial) - 1]["part"]
    assert (before["type"], before["approved"]) == ("tool-approval-response", False)
    totals = summary.to_wire()["totals"]
    assert (totals["denials"], totals["toolErrors"], totals["approvals"]) == (1, 0, 1)
    assert lines[-1]["counts"]["denials"] == 1


async def test_an_approval_runs_the_success_branch_and_counts_no_denial(tmp_path: Path) -> None:
    lines, summary = await _run(
        tmp_path, "toolApproval: {deploy: user-approval}", "- approve: deploy"
    )
    assert _text(lines) == "Deployed."
    assert not [line for line in lines if line["kind"] == "denial"]
    assert summary.to_wire()["totals"]["denials"] == 0


@pytest.mark.parametrize(
    ("approval", "reason"),
    [
        ("toolApproval: {deploy: denied}", None),
        ("inactiveTools: [deploy]", "Tool 'deploy' is inactive due to the HarnessAgent tool"),
    ],
    ids=["automatic-denial", "inactive-tool"],
)
async def test_automatic_denials_count_once(
    tmp_path: Path, approval: str, reason: str | None
) -> None:
    lines, summary = await _run(tmp_path, approval, "")
    assert _text(lines).startswith("Not deployed: ")
    (denial,) = [line for line in lines if line["kind"] == "denial"]
    output = denial["toolResult"]["output"]
    assert output["type"] == "execution-denied"
    assert (reason is None and "reason" not in output) or output["reason"].startswith(reason or "")
    assert summary.to_wire()["totals"]["denials"] == 1


async def test_a_denied_builtin_is_recorded_once(tmp_path: Path) -> None:
    file = write_scenario(
        tmp_path,
        """
        agent: {permissionMode: allow-reads}
        harness:
          profile: pi
          script:
            turns:
              - steps:
                  - actions:
                      - builtin: write
                        id: w
                        input: {file_path: d.txt, content: "1"}
                  - when: {toolCallId: w, denied: true}
                    actions: ["Left alone."]
        actions:
          - prompt: Write it
          - deny: all
        """,
    )
    options = SimulationOptions(out_dir=tmp_path / "out", sandbox_root=tmp_path / "sb")
    summary = await simulate(load_scenario(file), options)
    lines = read_lines(tmp_path / "out" / "sessions" / "sim-0-0.jsonl")
    assert _text(lines) == "Left alone."
    denials = [line["toolResult"] for line in lines if line["kind"] == "denial"]
    assert denials == [
        {
            "type": "tool-result",
            "toolCallId": "w",
            "toolName": "write",
            "output": {"type": "execution-denied"},
        }
    ]
    assert summary.to_wire()["totals"]["denials"] == 1


async def test_a_client_side_tool_answered_execution_denied_is_a_denial(tmp_path: Path) -> None:
    file = write_scenario(
        tmp_path,
        """
        agent:
          tools:
            lookup: {clientSide: true, output: {city: Lyon}}
        harness:
          script:
            turns:
              - steps:
                  - actions: [{hostTool: lookup, id: l1}]
                  - when: {toolCallId: l1, isError: false}
                    actions: ["Found it."]
                  - when: {toolCallId: l1, denied: true}
                    actions: ["The user kept it to themselves."]
        actions:
          - prompt: Where am I?
          - toolResult: lookup
            output: {type: execution-denied, reason: private}
        """,
    )
    options = SimulationOptions(out_dir=tmp_path / "out", sandbox_root=tmp_path / "sb")
    summary = await simulate(load_scenario(file), options)
    lines = read_lines(tmp_path / "out" / "sessions" / "sim-0-0.jsonl")
    assert _text(lines) == "The user kept it to themselves."
    denials = [line for line in lines if line["kind"] == "denial"]
    assert [(line["action"], line["toolResult"]["output"]) for line in denials] == [
        (1, {"type": "execution-denied", "reason": "private"})
    ]
    assert summary.to_wire()["totals"]["denials"] == 1
