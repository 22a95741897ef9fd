"""Language-neutral test vectors and differential replay through the reference agent.

A **vector** is a JSON document: the harness parts one adapter turn emitted (the input)
and the consumer parts the reference agent makes of them (the expected output, with the
declared volatile fields normalised). Any agent implementation, in any language, can load
the committed vectors (``conformance/vectors/*.json``) and check that it translates the
same trace the same way.

:func:`replay_trace` feeds a recorded trace (for example from a replay bundle, or from
:class:`~harness_testkit.conformance.RecordingAdapter`) through the reference agent, so
two adapters' traces can be compared by what consumers would see rather than by their
raw parts.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import anyio

from harness_testkit.reference import HarnessAgent, LocalSandboxProvider
from harness_testkit.spec import (
    ContinueTurnOptions,
    ContinueTurnState,
    PromptTurnOptions,
    ResumeSessionState,
    StartOptions,
)

from ._transcripts import normalize_transcript

__all__ = ["VECTOR_VERSION", "TraceHarness", "load_vector", "make_vector", "replay_trace"]

VECTOR_VERSION = 1


class _TraceControl:
    def __init__(self, parts: Sequence[Mapping[str, Any]], emit: Any) -> None:
        self._parts = list(parts)
        self._emit = emit
        self.submissions: list[dict[str, Any]] = []

    async def submit_tool_result(
        self, tool_call_id: str, output: Any, is_error: bool = False, tool_result: Any = None
    ) -> None:
        self.submissions.append({"toolCallId": tool_call_id, "output": output})

    async def submit_tool_approval(
        self, approval_id: str, approved: bool, reason: str | None = None
    ) -> None:
        self.submissions.append({"approvalId": approval_id, "approved": approved})

    async def done(self) -> None:
        for part in self._parts:
            self._emit(dict(part))
            await anyio.lowlevel.checkpoint()
        self._parts = []


class _TraceSession:
    def __init__(self, harness: TraceHarness, options: StartOptions) -> None:
        self._harness = harness
        self.session_id = options.session_id
        self.is_resume = False

    async def do_prompt_turn(self, options: PromptTurnOptions) -> _TraceControl:
        parts = self._harness.turns.pop(0) if self._harness.turns else []
        return _TraceControl(parts, options.emit)

    async def do_continue_turn(self, options: ContinueTurnOptions) -> _TraceControl:
        return _TraceControl([], options.emit)

    async def do_suspend_turn(self) -> ContinueTurnState:
        return ContinueTurnState(harness_id=self._harness.harness_id)

    async def do_detach(self) -> ResumeSessionState:
        return ResumeSessionState(harness_id=self._harness.harness_id)

    async def do_stop(self) -> ResumeSessionState:
        return ResumeSessionState(harness_id=self._harness.harness_id)

    async def do_destroy(self) -> None:
        return None

    async def do_compact(self, custom_instructions: str | None = None) -> None:
        return None


class TraceHarness:
    """An adapter that replays recorded harness parts, one list per prompt turn."""

    specification_version: Literal["harness-v1"] = "harness-v1"
    supports_builtin_tool_approvals = True
    supports_builtin_tool_filtering = True

    def __init__(
        self, turns: Sequence[Sequence[Mapping[str, Any]]], *, harness_id: str = "trace"
    ) -> None:
        self.turns = [list(turn) for turn in turns]
        self.harness_id = harness_id
        self.builtin_tools: dict[str, Any] = {}

    async def do_start(self, options: StartOptions) -> _TraceSession:
        return _TraceSession(self, options)


def replay_trace(
    turns: Sequence[Sequence[Mapping[str, Any]]], *, harness_id: str = "trace"
) -> list[list[dict[str, Any]]]:
    """Feed recorded harness parts through the reference agent.

    Each inner list is one prompt turn's harness parts as emitted (wire dicts). Host
    tool calls meet no host tools, so the agent answers them as inactive (what it does
    with an unknown tool); approval requests pause the turn as they would live.

    Returns:
        For each turn, the normalised consumer parts (see ``normalize_transcript``).
    """

    async def run() -> list[list[dict[str, Any]]]:
        with tempfile.TemporaryDirectory(prefix="harness-testkit-replay-") as root:
            agent = HarnessAgent(
                harness=TraceHarness(turns, harness_id=harness_id),
                sandbox=LocalSandboxProvider(root_dir=Path(root)),
            )
            session = await agent.create_session(session_id="replay")
            outputs = []
            try:
                for index in range(len(turns)):
                    with anyio.fail_after(30):
                        if session.has_unfinished_turn():
                            await session.destroy()
                            session = await agent.create_session(session_id=f"replay-{index}")
                        result = await agent.stream(session=session, prompt=f"turn {index}")
                        parts = [part async for part in result.full_stream]
                    outputs.append(normalize_transcript(parts))
            finally:
                await session.destroy()
            return outputs

    return anyio.run(run)


def make_vector(
    name: str, description: str, turns: Sequence[Sequence[Mapping[str, Any]]]
) -> dict[str, Any]:
    """A vector document for ``turns`` with the reference agent's output as expectation."""
    return {
        "vectorVersion": VECTOR_VERSION,
        "specificationVersion": "harness-v1",
        "name": name,
        "description": description,
        "harnessParts": [list(turn) for turn in turns],
        "expectedConsumerParts": replay_trace(turns),
    }


def load_vector(path: Path) -> dict[str, Any]:
    """Read a vector file, with a clear error when it is not one."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("vectorVersion") != VECTOR_VERSION:
        raise ValueError(
            f"{path} is not a harness-testkit test vector (vectorVersion {VECTOR_VERSION})"
        )
    return data


def _finish_step(reason: str = "stop") -> dict[str, Any]:
    return {
        "type": "finish-step",
        "finishReason": {"unified": reason, "raw": reason},
        "usage": {"inputTokens": {"total": 3}, "outputTokens": {"total": 2}},
    }


def _finish(reason: str = "stop") -> dict[str, Any]:
    return {
        "type": "finish",
        "finishReason": {"unified": reason, "raw": reason},
        "totalUsage": {"inputTokens": {"total": 3}, "outputTokens": {"total": 2}},
    }


#: The traces behind the committed vectors: name -> (description, turns).
BUILTIN_TRACES: dict[str, tuple[str, list[list[dict[str, Any]]]]] = {
    "text-and-reasoning": (
        "Text and reasoning blocks become consumer parts with the same ids; metadata is renamed.",
        [
            [
                {"type": "stream-start", "modelId": "m-1"},
                {"type": "reasoning-start", "id": "r1"},
                {"type": "reasoning-delta", "id": "r1", "delta": "thinking"},
                {"type": "reasoning-end", "id": "r1"},
                {"type": "text-start", "id": "t1", "harnessMetadata": {"trace": {"k": 1}}},
                {"type": "text-delta", "id": "t1", "delta": "Hello, "},
                {"type": "text-delta", "id": "t1", "delta": "world."},
                {"type": "text-end", "id": "t1"},
                _finish_step(),
                _finish(),
            ]
        ],
    ),
    "provider-tools": (
        "A runtime-executed call and its result, and a failed one that becomes tool-error; "
        "results are held until the step boundary.",
        [
            [
                {
                    "type": "tool-call",
                    "toolCallId": "c1",
                    "toolName": "read",
                    "input": '{"file_path":"a"}',
                    "providerExecuted": True,
                    "dynamic": True,
                },
                {
                    "type": "tool-call",
                    "toolCallId": "c2",
                    "toolName": "bash",
                    "input": '{"command":"false"}',
                    "providerExecuted": True,
                    "dynamic": True,
                },
                {
                    "type": "tool-result",
                    "toolCallId": "c1",
                    "toolName": "read",
                    "result": "content",
                },
                {
                    "type": "tool-result",
                    "toolCallId": "c2",
                    "toolName": "bash",
                    "result": "exit 1",
                    "isError": True,
                },
                {"type": "text-start", "id": "t"},
                {"type": "text-delta", "id": "t", "delta": "done"},
                {"type": "text-end", "id": "t"},
                _finish_step("tool-calls"),
                _finish("tool-calls"),
            ]
        ],
    ),
    "dynamic-parts": (
        "file-change and compaction become dynamic provider-executed fileChange / compaction "
        "tool pairs; raw parts pass through.",
        [
            [
                {"type": "file-change", "event": "create", "path": "notes/a.md"},
                {"type": "file-change", "event": "delete", "path": "old.txt"},
                {
                    "type": "compaction",
                    "trigger": "auto",
                    "summary": "short",
                    "tokensBefore": 100,
                    "tokensAfter": 10,
                },
                {"type": "raw", "rawValue": {"vendor": "event"}},
                _finish_step(),
                _finish(),
            ]
        ],
    ),
    "unclosed-step": (
        "Content followed by finish without finish-step fails the turn with the exact error.",
        [[{"type": "text-delta", "id": "t", "delta": "dangling"}, _finish()]],
    ),
    "finish-only": (
        "A turn with only finish succeeds with no step.",
        [[_finish()]],
    ),
    "unknown-host-call": (
        "A host-dispatched call to a tool the agent does not have is answered as inactive and "
        "still shown as an invalid dynamic call.",
        [
            [
                {"type": "tool-call", "toolCallId": "h1", "toolName": "ghost", "input": "{}"},
                _finish_step("tool-calls"),
                _finish("tool-calls"),
            ]
        ],
    ),
}


def write_builtin_vectors(directory: Path) -> list[Path]:
    """Regenerate the committed vectors from :data:`BUILTIN_TRACES`."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (description, turns) in BUILTIN_TRACES.items():
        path = directory / f"{name}.json"
        vector = make_vector(name, description, turns)
        path.write_text(
            json.dumps(vector, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8"
        )
        written.append(path)
    return written
