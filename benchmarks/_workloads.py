"""The scripts the benchmarks run, and the two ways of running a turn.

Scripts are built in code (deterministic: fixed words, seeded chunking) so the same
parts come out of every run:

- **text-heavy**: one step of reasoning and two long text blocks, chunked into 1-2 word
  deltas (about 300 harness parts a turn).
- **tool-heavy**: four steps of file built-ins that really run in the local sandbox
  (``Write``, ``Read``, ``Edit``), an MCP call and a host tool call, then a closing text
  (about 100 parts a turn). Built-ins that spawn processes (``Bash``, ``Grep``, ``Glob``)
  are left out: their cost is the sandbox's (see the sandbox rows) and would hide the
  agent's own overhead.
- **small**: a short text, one ``Write`` and one ``Read`` (about 30 parts): the turn of
  the concurrency benchmark.
- **continuation**: two steps around a host tool call (``lookup``), so a turn pauses for
  its result when the tool has no ``execute``.

``run_fake_alone`` drives the fake harness with no agent: a null consumer that only
answers host tool calls. ``run_agent_turns`` drives the reference agent and iterates
``full_stream``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio

from harness_testkit.fake_harness import FakeHarness, Script
from harness_testkit.reference import HarnessAgent, LocalSandboxProvider, tool
from harness_testkit.spec import (
    PromptControl,
    PromptTurnOptions,
    StartOptions,
    StreamPart,
    ToolCallPart,
    ToolSpec,
)

from ._measure import Sample, Stopwatch

__all__ = [
    "HOST_OUTPUT",
    "PROFILE",
    "consume",
    "continuation_script",
    "host_tools",
    "make_agent",
    "run_agent_turns",
    "run_fake_alone",
    "small_script",
    "text_heavy_script",
    "tool_heavy_script",
]

#: The fake-harness capability profile every benchmark runs.
PROFILE = "claude-code"
#: What the host tool ``lookup`` returns.
HOST_OUTPUT: dict[str, Any] = {"ok": True, "hits": ["README.md"]}

_WORDS = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta")
_LOOKUP_SPEC = ToolSpec(
    name="lookup",
    description="Look something up.",
    input_schema={"type": "object", "properties": {"q": {"type": "string"}}},
)


def _words(count: int, offset: int = 0) -> str:
    return " ".join(_WORDS[(index + offset) % len(_WORDS)] for index in range(count))


def _script(turn_steps: list[dict[str, Any]], **extra: Any) -> Script:
    return Script.model_validate(
        {"chunking": {"mode": "words", "maxWords": 2}, "turns": [{"steps": turn_steps}], **extra}
    )


def text_heavy_script() -> Script:
    """Reasoning plus two long text blocks in one step (about 300 parts a turn)."""
    actions: list[dict[str, Any]] = [{"type": "reasoning", "text": _words(60)}]
    actions += [{"type": "text", "text": _words(150, offset)} for offset in (1, 2)]
    return _script([{"actions": actions}])


def tool_heavy_script() -> Script:
    """Four steps of file built-ins, an MCP call and a host call each (about 100 parts)."""
    steps: list[dict[str, Any]] = []
    for step in range(4):
        path = f"notes/n{step}.txt"
        steps.append(
            {
                "actions": [
                    {"type": "text", "text": _words(6, step)},
                    {
                        "type": "builtin",
                        "tool": "Write",
                        "id": f"write-{step}",
                        "input": {"file_path": path, "content": _words(20, step) + "\n"},
                    },
                    {
                        "type": "builtin",
                        "tool": "Read",
                        "id": f"read-{step}",
                        "input": {"file_path": path},
                    },
                    {
                        "type": "builtin",
                        "tool": "Edit",
                        "id": f"edit-{step}",
                        "input": {
                            "file_path": path,
                            "old_string": "alpha",
                            "new_string": "ALPHA",
                            "replace_all": True,
                        },
                    },
                    {
                        "type": "mcp",
                        "server": "docs",
                        "tool": "search",
                        "id": f"search-{step}",
                        "input": {"q": _words(2, step)},
                    },
                    {
                        "type": "host-tool",
                        "tool": "lookup",
                        "id": f"lookup-{step}",
                        "input": {"q": _words(2, step)},
                    },
                ]
            }
        )
    steps.append({"actions": [{"type": "text", "text": _words(20)}]})
    return _script(
        steps,
        mcpServers={"docs": {"tools": {"search": {"result": {"hits": ["README.md"]}}}}},
    )


def small_script() -> Script:
    """A short turn: text, one ``Write`` and one ``Read`` (about 30 parts)."""
    return _script(
        [
            {
                "actions": [
                    {"type": "text", "text": _words(16)},
                    {
                        "type": "builtin",
                        "tool": "Write",
                        "id": "write",
                        "input": {"file_path": "note.txt", "content": _words(8) + "\n"},
                    },
                    {
                        "type": "builtin",
                        "tool": "Read",
                        "id": "read",
                        "input": {"file_path": "note.txt"},
                    },
                ]
            },
            {"actions": [{"type": "text", "text": _words(8, 3)}]},
        ]
    )


def continuation_script(words_per_step: int) -> Script:
    """Two steps of text around host call ``lookup`` (id ``lookup-1``)."""
    return _script(
        [
            {
                "actions": [
                    {"type": "text", "text": _words(words_per_step)},
                    {"type": "host-tool", "tool": "lookup", "id": "lookup-1", "input": {"q": "x"}},
                ]
            },
            {
                "actions": [
                    {"type": "text", "text": _words(words_per_step, 3) + " {{result:lookup-1}}"}
                ]
            },
        ]
    )


def host_tools(*, execute: bool = True) -> dict[str, Any]:
    """The host tool ``lookup``; without ``execute`` it is client-side (the turn pauses)."""

    def lookup(tool_input: Any, options: Any) -> dict[str, Any]:
        return dict(HOST_OUTPUT)

    return {
        "lookup": tool(
            description=_LOOKUP_SPEC.description,
            input_schema=dict(_LOOKUP_SPEC.input_schema or {}),
            execute=lookup if execute else None,
        )
    }


class _NullConsumer:
    """The fake harness's only consumer when it runs alone: counts parts, answers host calls."""

    def __init__(self) -> None:
        self.parts = 0
        self._host_calls: list[str] = []
        self._arrived = anyio.Event()

    def emit(self, part: StreamPart | Mapping[str, Any]) -> None:
        """The ``emit`` callback."""
        self.parts += 1
        if isinstance(part, ToolCallPart) and part.provider_executed is not True:
            self._host_calls.append(part.tool_call_id)
            self._arrived.set()

    async def answer(self, control: PromptControl) -> None:
        """Submit :data:`HOST_OUTPUT` for every host call, forever (cancel it)."""
        while True:
            await self._arrived.wait()
            self._arrived = anyio.Event()
            while self._host_calls:
                await control.submit_tool_result(self._host_calls.pop(0), dict(HOST_OUTPUT))


async def run_fake_alone(script: Script, base: Path, turns: int) -> Sample:
    """``turns`` turns of the fake harness alone (null consumer), on a fresh session.

    Session set-up is not timed. The consumer counts parts and answers host tool calls
    with :data:`HOST_OUTPUT`, as the agent's ``execute`` would.
    """
    provider = LocalSandboxProvider(base)
    sandbox = await provider.create_session()
    harness = FakeHarness(script=script, profile=PROFILE)
    session = await harness.do_start(
        StartOptions(
            session_id=sandbox.id,
            sandbox_session=sandbox,
            session_work_dir=sandbox.default_working_directory,
        )
    )
    consumer = _NullConsumer()
    try:
        watch = Stopwatch()
        for _ in range(turns):
            control = await session.do_prompt_turn(
                PromptTurnOptions(
                    prompt="go", emit=consumer.emit, tools=(_LOOKUP_SPEC,), abort=anyio.Event()
                )
            )
            async with anyio.create_task_group() as group:
                group.start_soon(consumer.answer, control)
                await control.done()
                group.cancel_scope.cancel()
        sample = watch.sample(parts=consumer.parts, turns=turns)
    finally:
        await session.do_destroy()
        await sandbox.destroy()
    return sample


def make_agent(
    script: Script, provider: LocalSandboxProvider, *, execute: bool = True
) -> HarnessAgent:
    """The reference agent on the fake harness and ``provider``, with host tool ``lookup``."""
    return HarnessAgent(
        harness=FakeHarness(script=script, profile=PROFILE),
        sandbox=provider,
        tools=host_tools(execute=execute),
    )


async def consume(result: Any) -> int:
    """Iterate ``result.full_stream`` to its end; return the number of parts."""
    count = 0
    async for _ in result.full_stream:
        count += 1
    return count


async def run_agent_turns(script: Script, base: Path, turns: int) -> Sample:
    """``turns`` turns through the reference agent on a fresh session (set-up not timed)."""
    agent = make_agent(script, LocalSandboxProvider(base))
    session = await agent.create_session()
    parts = 0
    try:
        watch = Stopwatch()
        for _ in range(turns):
            parts += await consume(await agent.stream(session=session, prompt="go"))
        sample = watch.sample(parts=parts, turns=turns)
    finally:
        await session.destroy()
    return sample
