"""The real Claude Code CLI (bundled in ``claude-agent-sdk``) against the endpoint.

Skipped when the ``claude-code`` extra is not installed, except under ``CI=true``, where
that is a failure. The CLI runs offline: its base URL is the endpoint, ``HOME`` a
temporary directory, non-essential traffic off.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness_testkit.adapters.claude_code import bundled_cli
from harness_testkit.model_endpoint import EndpointScript, ModelEndpoint, from_kit_script

_FOUND = bundled_cli()
if _FOUND is None:
    _WHY = "no Claude Code CLI here (install the extra: pip install 'harness-testkit[claude-code]')"
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"CI=true requires the Claude Code CLI: {_WHY}")
    pytest.skip(_WHY, allow_module_level=True)
CLAUDE: Path = _FOUND


def run_claude(endpoint: ModelEndpoint, tmp_path: Path, prompt: str) -> list[dict[str, Any]]:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": endpoint.base_url,
        "ANTHROPIC_API_KEY": "sk-test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    command = [str(CLAUDE), "-p", prompt, "--output-format", "stream-json", "--verbose"]
    done = subprocess.run(
        [*command, "--allowedTools", "Write"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_claude_code_runs_a_converted_kit_script(tmp_path: Path) -> None:
    from harness_testkit.fake_harness import Script

    kit = Script.model_validate(
        {
            "turns": [
                {
                    "promptMatches": "^write",
                    "steps": [
                        {
                            "actions": [
                                {"reasoning": "I write the note."},
                                {
                                    "builtin": "write",
                                    "id": "toolu_note",
                                    "input": {
                                        "file_path": "{{workdir}}/note.txt",
                                        "content": "scripted\n",
                                    },
                                },
                            ]
                        },
                        {
                            "when": {"toolCallId": "toolu_note", "isError": False},
                            "actions": [{"text": "Wrote it for: {{prompt}}"}],
                        },
                    ],
                }
            ],
            "whenExhausted": "error",
        }
    )
    script = from_kit_script(kit, tool_names={"write": "Write"}, workdir=str(tmp_path / "work"))
    with ModelEndpoint(script, raise_on_error=True) as endpoint:
        lines = run_claude(endpoint, tmp_path, "write the note")
    assert (tmp_path / "work" / "note.txt").read_text(encoding="utf-8") == "scripted\n"
    result = lines[-1]
    assert (result["type"], result["subtype"]) == ("result", "success")
    assert result["result"] == "Wrote it for: write the note"
    first, second = endpoint.requests
    assert (first.path, first.query, first.stream) == ("/v1/messages", {"beta": "true"}, True)
    assert "Write" in first.tools
    assert first.last_user_text == "write the note"  # the injected reminders left out
    sent_back = second.tool_result("toolu_note")
    assert sent_back is not None
    assert sent_back.is_error is False


def test_an_unforeseen_request_ends_the_run_with_the_endpoint_message(tmp_path: Path) -> None:
    script = EndpointScript.model_validate(
        {
            "replies": [
                {
                    "content": [
                        {
                            "toolCall": "Write",
                            "id": "toolu_1",
                            "input": {
                                "file_path": str(tmp_path / "work" / "a.txt"),
                                "content": "a",
                            },
                        }
                    ]
                }
            ]
        }
    )
    with ModelEndpoint(script) as endpoint:
        lines = run_claude(endpoint, tmp_path, "write a")
    # The CLI may retry; every retry is unforeseen too, and the run ends (no hang).
    errors = endpoint.errors
    assert errors
    assert {e.kind for e in errors} == {"unforeseen-request"}
    assert errors[0].request_index == 1
    assert "was not foreseen" in json.dumps(lines)


def test_scripted_errors_end_claude_codes_turn_despite_its_retries(tmp_path: Path) -> None:
    from harness_testkit.fake_harness import Script

    kit = Script.model_validate(
        {
            "turns": [
                {"steps": [{"actions": [{"error": "boom"}]}]},
                {"steps": [{"actions": [{"text": "partial"}, {"error": "mid-stream boom"}]}]},
                {"steps": [{"actions": [{"text": "third fine"}]}]},
            ],
            "whenExhausted": "error",
        }
    )
    with ModelEndpoint(from_kit_script(kit), raise_on_error=True) as endpoint:
        results = [run_claude(endpoint, tmp_path, prompt)[-1] for prompt in ("one", "two", "3")]
    assert [(r["is_error"], r["result"]) for r in results] == [
        (True, "API Error: 400 boom"),
        (True, "API Error: mid-stream boom"),
        (False, "third fine"),
    ]
    served = [(r.last_user_text, r.reply_index) for r in endpoint.requests]
    assert {reply for prompt, reply in served if prompt == "one"} == {0}  # retries included
    assert served[-2:] == [("two", 1), ("3", 2)]
