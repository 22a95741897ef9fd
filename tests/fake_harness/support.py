"""Helpers for the fake harness tests: sandboxes, part collection and an auto-responder."""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from harness_testkit.fake_harness import FakeHarness, FakeHarnessSession, FakePromptControl
from harness_testkit.sandbox import LocalSandboxProvider, LocalSandboxSession
from harness_testkit.spec import (
    ContinueTurnOptions,
    PromptTurnOptions,
    StartOptions,
    StreamPart,
    WireModel,
    parse_stream_part,
)

Wire = dict[str, Any]


def approving(control: FakePromptControl) -> Callable[[str, bool, str | None], Awaitable[None]]:
    """The control's ``submit_tool_approval``; fails the test when the profile has none."""
    submit: Callable[[str, bool, str | None], Awaitable[None]] | None = getattr(
        control, "submit_tool_approval", None
    )
    assert submit is not None, "this profile's control has no submit_tool_approval"
    return submit


def steering(control: FakePromptControl) -> Callable[[str], Awaitable[None]]:
    """The control's ``submit_user_message``; fails the test when the profile has none."""
    submit: Callable[[str], Awaitable[None]] | None = getattr(control, "submit_user_message", None)
    assert submit is not None, "this profile's control has no submit_user_message"
    return submit


@dataclass
class SandboxEnv:
    """A sandbox session and the session work dir inside it."""

    provider: LocalSandboxProvider
    session: LocalSandboxSession
    work_dir: str

    @classmethod
    async def create(cls, provider: LocalSandboxProvider, name: str) -> SandboxEnv:
        session = await provider.create_session(session_id=f"sandbox-{name}")
        work_dir = f"{session.default_working_directory}/fake-{name}"
        await session.run(f"mkdir -p '{work_dir}'")
        return cls(provider, session, work_dir)

    def options(self, session_id: str = "s1", **overrides: Any) -> StartOptions:
        return StartOptions(
            session_id=session_id,
            sandbox_session=self.session,
            session_work_dir=self.work_dir,
            **overrides,
        )

    async def read(self, relative: str) -> str | None:
        return await self.session.read_text_file(f"{self.work_dir}/{relative}")


def host_echo(part: Wire) -> tuple[Any, bool]:
    """Default host tool behaviour: echo the input, fail when it asks to."""
    import json

    tool_input = json.loads(part["input"]) if part["input"] else {}
    if isinstance(tool_input, dict) and tool_input.get("fail"):
        return {"error": "host tool failed"}, True
    return {"echo": tool_input, "tool": part["toolName"]}, False


@dataclass
class Responder:
    """How the test host answers: host tool results and approval decisions."""

    results: Callable[[Wire], tuple[Any, bool]] = host_echo
    approve: Callable[[Wire], tuple[bool, str | None]] = lambda part: (True, None)
    auto: bool = True


@dataclass
class Collector:
    """An ``emit`` callback that validates, records and forwards parts needing answers."""

    parts: list[Wire] = field(default_factory=list)
    raw: list[Any] = field(default_factory=list)
    strict: bool = True

    def __post_init__(self) -> None:
        self._pending: deque[Wire] = deque()
        self._wake: anyio.Event | None = None
        self._answering = False

    def idle(self) -> bool:
        """Every forwarded call and approval request has been answered."""
        return not self._pending and not self._answering

    def emit(self, part: StreamPart | Mapping[str, Any]) -> None:
        self.raw.append(part)
        wire = part.to_wire() if isinstance(part, WireModel) else dict(part)
        if self.strict:
            parse_stream_part(wire)
        self.parts.append(wire)
        if (wire.get("type") == "tool-call" and not wire.get("providerExecuted")) or wire.get(
            "type"
        ) == "tool-approval-request":
            self._pending.append(wire)
            if self._wake is not None:
                self._wake.set()

    def types(self) -> list[str]:
        return [part["type"] for part in self.parts]

    def text(self) -> str:
        return "".join(part["delta"] for part in self.parts if part["type"] == "text-delta")

    def of_type(self, kind: str) -> list[Wire]:
        return [part for part in self.parts if part["type"] == kind]

    async def respond(self, control: FakePromptControl, responder: Responder) -> None:
        while True:
            if not self._pending:
                self._wake = anyio.Event()
                await self._wake.wait()
                continue
            part = self._pending.popleft()
            self._answering = True
            try:
                if part["type"] == "tool-call":
                    output, is_error = responder.results(part)
                    await control.submit_tool_result(part["toolCallId"], output, is_error)
                else:
                    approved, reason = responder.approve(part)
                    await approving(control)(part["approvalId"], approved, reason)
            finally:
                self._answering = False


async def drive(
    control: FakePromptControl, collector: Collector, responder: Responder | None = None
) -> BaseException | None:
    """Await ``done`` while answering host calls and approvals; return the turn's error."""
    responder = responder or Responder()
    error: BaseException | None = None
    async with anyio.create_task_group() as group:
        if responder.auto:
            group.start_soon(collector.respond, control, responder)
        try:
            with anyio.fail_after(30):
                await control.done()
        except Exception as caught:
            error = caught
        group.cancel_scope.cancel()
    return error


async def run_turn(
    session: FakeHarnessSession,
    prompt: Any = "hello",
    *,
    collector: Collector | None = None,
    responder: Responder | None = None,
    **options: Any,
) -> tuple[Collector, BaseException | None]:
    """Run one prompt turn to its end."""
    collector = collector or Collector()
    control = await session.do_prompt_turn(
        PromptTurnOptions(prompt=prompt, emit=collector.emit, **options)
    )
    error = await drive(control, collector, responder)
    return collector, error


async def continue_turn(
    session: FakeHarnessSession,
    *,
    collector: Collector | None = None,
    responder: Responder | None = None,
    pending: Mapping[str, Any] | None = None,
    **options: Any,
) -> tuple[Collector, BaseException | None]:
    """Continue the unfinished turn to its end, first submitting ``pending`` host results."""
    collector = collector or Collector()
    control = await session.do_continue_turn(ContinueTurnOptions(emit=collector.emit, **options))
    for tool_call_id, output in (pending or {}).items():
        await control.submit_tool_result(tool_call_id, output)
    error = await drive(control, collector, responder)
    return collector, error


async def start(
    harness: FakeHarness, env: SandboxEnv, session_id: str = "s1", **overrides: Any
) -> FakeHarnessSession:
    return await harness.do_start(env.options(session_id, **overrides))


async def wait_for(predicate: Callable[[], bool], *, limit: float = 10) -> None:
    """Poll until ``predicate()`` holds (bounded)."""
    with anyio.fail_after(limit):
        while not predicate():  # noqa: ASYNC110 -- polling an arbitrary predicate is the point
            await anyio.sleep(0.001)


def normalize(parts: list[Wire], work_dir: str) -> list[str]:
    """Parts as JSON text with the work dir replaced (compare runs on different sandboxes)."""
    import json

    return [json.dumps(part, sort_keys=True).replace(work_dir, "<wd>") for part in parts]
