"""The minimal scripted adapter: the baseline of the agent's overhead, and the workloads
the official comparison shares with ``benchmarks/official/bench.mjs``.

:class:`ScriptedAdapter` is a harness-v1 adapter that does as little as an adapter can:
every turn emits the same pre-built list of wire dicts (no models, no copying) through
``emit``, one part per event-loop turn (a checkpoint after each part, as an adapter
reading one chunk at a time from its runtime would), inside ``done()``. It declares one
built-in, ``bash`` (Claude Code's ``Bash``), whose calls are provider-executed.
:class:`MemorySandboxProvider` is an in-memory sandbox (files in a dict, every command
exits 0) so no process or directory cost hides the agent's own.

The JavaScript twin in ``benchmarks/official/bench.mjs`` receives the *same* part lists
(this module builds them; the benchmark sends them to Node as JSON), so both agents
consume identical turns.

Workloads (:data:`WORKLOADS`):

- **text-heavy**: one turn of one text block of 20,000 deltas;
- **tool-heavy**: one turn of 200 steps, each a provider-executed ``bash`` call, its
  result and ``finish-step``, then a closing text step;
- **short-turns**: 1,000 sequential short turns (a text block of four deltas) on one
  session;
- **sessions-100** / **sessions-1000**: that many sessions created, each running one
  short turn, all at once, then destroyed.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import sys
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import anyio.lowlevel

from harness_testkit.reference import HarnessAgent
from harness_testkit.spec import (
    BuiltinTool,
    ContinueTurnOptions,
    ContinueTurnState,
    HarnessCapabilityUnsupportedError,
    PortEndpoint,
    PromptTurnOptions,
    ResumeSessionState,
    RunResult,
    StartOptions,
)

from ._measure import Sample, Stopwatch, memory_status

__all__ = [
    "WORKLOADS",
    "MemorySandboxProvider",
    "ScriptedAdapter",
    "Workload",
    "run_python",
    "short_turn",
    "text_turn",
    "tool_turn",
]

_WORDS = ("alpha ", "beta ", "gamma ", "delta ", "epsilon ", "zeta ", "eta ", "theta ")
_BASH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"command": {"type": "string"}},
    "required": ["command"],
}


def _usage(output: int) -> dict[str, Any]:
    return {"inputTokens": {"total": 10}, "outputTokens": {"total": output}}


def _text_block(block_id: str, deltas: int) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "text-start", "id": block_id}]
    parts += [
        {"type": "text-delta", "id": block_id, "delta": _WORDS[index % len(_WORDS)]}
        for index in range(deltas)
    ]
    parts.append({"type": "text-end", "id": block_id})
    return parts


def _finish_step(reason: str, raw: str, output: int) -> dict[str, Any]:
    return {
        "type": "finish-step",
        "finishReason": {"unified": reason, "raw": raw},
        "usage": _usage(output),
    }


def _finish(output: int) -> dict[str, Any]:
    return {
        "type": "finish",
        "finishReason": {"unified": "stop", "raw": "end_turn"},
        "totalUsage": _usage(output),
    }


def text_turn(deltas: int) -> list[dict[str, Any]]:
    """One step: a text block of ``deltas`` deltas, ``finish-step``, ``finish``."""
    return [
        *_text_block("txt-0", deltas),
        _finish_step("stop", "end_turn", deltas),
        _finish(deltas),
    ]


def short_turn() -> list[dict[str, Any]]:
    """A short turn: a text block of four deltas."""
    return text_turn(4)


def tool_turn(steps: int) -> list[dict[str, Any]]:
    """``steps`` steps of one provider-executed ``bash`` call each, then a text step."""
    parts: list[dict[str, Any]] = []
    for step in range(steps):
        call_id = f"call-{step}"
        parts += [
            {
                "type": "tool-call",
                "toolCallId": call_id,
                "toolName": "bash",
                "input": f'{{"command":"echo {step}"}}',
                "providerExecuted": True,
            },
            {
                "type": "tool-result",
                "toolCallId": call_id,
                "toolName": "bash",
                "result": {"exitCode": 0, "stdout": f"{step}\n", "stderr": ""},
            },
            _finish_step("tool-calls", "tool_use", 5),
        ]
    parts += [*_text_block("txt-end", 4), _finish_step("stop", "end_turn", 4)]
    parts.append(_finish(5 * steps + 4))
    return parts


@dataclass(frozen=True)
class Workload:
    """One workload: the turn every session runs, how many turns and sessions.

    Attributes:
        name: Stable name (``text-heavy``).
        kind: ``text`` (deltas), ``tools`` (steps) or ``short``.
        size: Deltas (``text``) or steps (``tools``); unused for ``short``.
        turns: Sequential turns per session.
        sessions: Concurrent sessions (each runs ``turns`` turns).
    """

    name: str
    kind: Literal["text", "tools", "short"]
    size: int = 0
    turns: int = 1
    sessions: int = 1

    def parts(self) -> list[dict[str, Any]]:
        """The harness parts of one turn (built fresh; callers reuse the list)."""
        if self.kind == "text":
            return text_turn(self.size)
        if self.kind == "tools":
            return tool_turn(self.size)
        return short_turn()

    def scaled(self, scale: float) -> Workload:
        """The same workload with sizes, turns and sessions multiplied by ``scale`` (>= 1)."""
        if scale == 1:
            return self

        def times(value: int) -> int:
            return max(1, round(value * scale))

        return Workload(
            name=self.name,
            kind=self.kind,
            size=times(self.size) if self.size else 0,
            turns=times(self.turns) if self.turns > 1 else 1,
            sessions=times(self.sessions) if self.sessions > 1 else 1,
        )

    def to_json(self) -> dict[str, Any]:
        """What the Node benchmark needs besides the parts."""
        return {"name": self.name, "turns": self.turns, "sessions": self.sessions}


#: The five workloads of the official comparison, in report order.
WORKLOADS: tuple[Workload, ...] = (
    Workload("text-heavy", "text", size=20_000),
    Workload("tool-heavy", "tools", size=200),
    Workload("short-turns", "short", turns=1_000),
    Workload("sessions-100", "short", sessions=100),
    Workload("sessions-1000", "short", sessions=1_000),
)


# -- the in-memory sandbox ------------------------------------------------------------------


class MemorySandbox:
    """An in-memory sandbox session: files in a dict, every command exits 0 with no output."""

    def __init__(self, session_id: str) -> None:
        self._id = session_id
        self._files: dict[str, bytes] = {}

    @property
    def id(self) -> str:
        """The session id."""
        return self._id

    @property
    def description(self) -> str:
        """What the environment is."""
        return "in-memory benchmark sandbox"

    @property
    def default_working_directory(self) -> str:
        """Always ``/sandbox``."""
        return "/sandbox"

    @property
    def ports(self) -> Sequence[int]:
        """No ports."""
        return ()

    async def get_port_endpoint(self, port: int, protocol: Any = None) -> PortEndpoint:
        """No ports: always raises."""
        raise HarnessCapabilityUnsupportedError(
            "the in-memory benchmark sandbox exposes no ports", harness_id="bench"
        )

    async def read_text_file(
        self,
        path: str,
        *,
        start_line: int | None = None,
        end_line: int | None = None,
        encoding: str = "utf-8",
    ) -> str | None:
        """The file's text (line ranges are 1-based, inclusive), ``None`` when missing."""
        content = self._files.get(path)
        if content is None:
            return None
        text = content.decode(encoding)
        if start_line is None and end_line is None:
            return text
        lines = text.splitlines(keepends=True)
        return "".join(lines[(start_line or 1) - 1 : end_line])

    async def read_binary_file(self, path: str) -> bytes | None:
        """The file's bytes, ``None`` when missing."""
        return self._files.get(path)

    async def write_text_file(self, path: str, content: str, *, encoding: str = "utf-8") -> None:
        """Store the text."""
        self._files[path] = content.encode(encoding)

    async def write_binary_file(self, path: str, content: bytes) -> None:
        """Store the bytes."""
        self._files[path] = bytes(content)

    async def run(
        self,
        command: str,
        *,
        working_directory: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        abort: anyio.Event | None = None,
    ) -> RunResult:
        """Every command succeeds with no output."""
        return RunResult(exit_code=0, stdout="", stderr="")

    async def spawn(self, command: str, **options: Any) -> Any:
        """Not available: raises."""
        raise HarnessCapabilityUnsupportedError(
            "the in-memory benchmark sandbox cannot spawn processes", harness_id="bench"
        )

    async def stop(self) -> None:
        """Nothing to stop."""

    async def destroy(self) -> None:
        """Drop the files."""
        self._files.clear()

    def restricted(self) -> MemorySandbox:
        """The same object (it has no lifecycle worth hiding)."""
        return self


class MemorySandboxProvider:
    """Creates :class:`MemorySandbox` sessions."""

    provider_id = "memory"

    async def create_session(
        self,
        *,
        session_id: str | None = None,
        identity: str | None = None,
        on_first_create: Any = None,
    ) -> MemorySandbox:
        """A fresh in-memory session (``on_first_create`` runs on it, if given)."""
        session = MemorySandbox(f"sandbox-{session_id or 'anonymous'}")
        if on_first_create is not None:
            await on_first_create(session.restricted())
        return session


# -- the scripted adapter -------------------------------------------------------------------


class _Control:
    """The prompt control of one scripted turn: ``done()`` emits the turn's parts."""

    def __init__(self, parts: Sequence[Mapping[str, Any]], options: ContinueTurnOptions) -> None:
        self._parts = parts
        self._emit = options.emit
        self._abort = options.abort
        self._ran = False

    async def submit_tool_result(
        self,
        tool_call_id: str,
        output: Any,
        is_error: bool = False,
        tool_result: dict[str, Any] | None = None,
    ) -> None:
        """The scripted turns make no host calls; a result is accepted and ignored."""

    async def done(self) -> None:
        """Emit every part, one per event-loop turn; stop early when aborted."""
        if self._ran:
            return
        self._ran = True
        emit, abort, checkpoint = self._emit, self._abort, anyio.lowlevel.checkpoint
        for part in self._parts:
            if abort is not None and abort.is_set():
                return
            emit(part)
            await checkpoint()


class _Session:
    def __init__(self, adapter: ScriptedAdapter, session_id: str) -> None:
        self._adapter = adapter
        self._id = session_id

    @property
    def session_id(self) -> str:
        return self._id

    @property
    def is_resume(self) -> bool:
        return False

    async def do_prompt_turn(self, options: PromptTurnOptions) -> _Control:
        return _Control(self._adapter.turn, options)

    async def do_continue_turn(self, options: ContinueTurnOptions) -> _Control:
        return _Control((), options)

    def _state(self) -> dict[str, Any]:
        return {
            "specificationVersion": "harness-v1",
            "harnessId": self._adapter.harness_id,
            "data": {},
        }

    async def do_suspend_turn(self) -> ContinueTurnState:
        return ContinueTurnState.model_validate({"type": "continue-turn", **self._state()})

    async def do_detach(self) -> ResumeSessionState:
        return ResumeSessionState.model_validate({"type": "resume-session", **self._state()})

    async def do_stop(self) -> ResumeSessionState:
        return await self.do_detach()

    async def do_destroy(self) -> None:
        return None

    async def do_compact(self, custom_instructions: str | None = None) -> None:
        raise HarnessCapabilityUnsupportedError(
            "no compaction", harness_id=self._adapter.harness_id
        )


class ScriptedAdapter:
    """A harness-v1 adapter whose every turn emits ``turn`` (wire dicts, reused as they are).

    Args:
        turn: The harness parts of one turn.
    """

    specification_version: Literal["harness-v1"] = "harness-v1"
    harness_id = "bench"
    supports_builtin_tool_approvals = False
    supports_builtin_tool_filtering = False

    def __init__(self, turn: Sequence[Mapping[str, Any]]) -> None:
        self.turn = turn
        self.builtin_tools = {
            "bash": BuiltinTool(
                description="Run a shell command.",
                input_schema=_BASH_SCHEMA,
                native_name="Bash",
                common_name="bash",
                tool_use_kind="bash",
            )
        }

    async def do_start(self, options: StartOptions) -> _Session:
        """A session (nothing to start)."""
        return _Session(self, options.session_id)


# -- running a workload ---------------------------------------------------------------------


class _Counter:
    """The null consumer of the adapter alone: counts parts."""

    def __init__(self) -> None:
        self.parts = 0

    def emit(self, part: Any) -> None:
        self.parts += 1


class _FloorHandoff:
    """The least a reader woken per part costs: a deque, and the cheapest wait the loop has
    while it is empty (under asyncio one future, under trio the task itself, parked with
    ``wait_task_rescheduled``: what the agent's own hand-off waits on).

    ``put`` is the adapter's ``emit``; :meth:`drain` is the reader, in another task,
    taking everything queued each time it wakes (so it never waits for a part that is
    already there) until :meth:`close`.
    """

    __slots__ = ("closed", "items", "trio", "waiter")

    def __init__(self, trio: Any = None) -> None:
        self.items: deque[Any] = deque()
        #: The waiting reader: an asyncio future, or a trio task (``trio`` is the module).
        self.waiter: Any = None
        self.closed = False
        self.trio = trio

    def put(self, part: Any) -> None:
        self.items.append(part)
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None:
            self.waiter = None
            if self.trio is None:
                waiter.set_result(None)
            else:
                self.trio.lowlevel.reschedule(waiter)

    async def drain(self) -> int:
        """Read until closed; returns how many parts were read."""
        trio = self.trio
        loop = asyncio.get_running_loop() if trio is None else None
        count = 0
        while True:
            while self.items:
                self.items.popleft()
                count += 1
            if self.closed:
                return count
            if loop is not None:
                self.waiter = loop.create_future()
                await self.waiter
            else:
                self.waiter = trio.lowlevel.current_task()
                await trio.lowlevel.wait_task_rescheduled(self._cancelled)

    def _cancelled(self, raise_cancel: Any) -> Any:
        """A trio reader cancelled while it waits (the run interrupted): it stops waiting."""
        self.waiter = None
        return self.trio.lowlevel.Abort.SUCCEEDED


async def _floor_turn(session: _Session) -> int:
    """One turn of the hand-off floor: ``done()`` in a task of its own, every part handed
    to this task, which wakes for it (what an eager agent's streaming needs at least, with
    nothing done to the parts). Returns the parts read.

    The task is the cheapest the loop has for work nobody waits on (an asyncio task, a
    trio system task: what the agent spawns its ``done()`` watcher as)."""
    trio = None if asyncio._get_running_loop() is not None else sys.modules["trio"]
    handoff = _FloorHandoff(trio)
    control = await session.do_prompt_turn(
        PromptTurnOptions(prompt="go", emit=handoff.put, abort=anyio.Event())
    )

    async def run_done() -> None:
        try:
            await control.done()
        finally:
            handoff.close()

    if trio is not None:
        # No join: the task closes the hand-off as the last thing it does.
        trio.lowlevel.spawn_system_task(run_done)
        return await handoff.drain()
    task = asyncio.get_running_loop().create_task(run_done())
    parts = await handoff.drain()
    await task
    return parts


async def _adapter_turns(
    adapter: ScriptedAdapter, sessions: int, turns: int, *, handoff: bool = False
) -> Sample:
    """The adapter alone: ``sessions`` sessions, ``turns`` turns each, a null consumer
    called inside ``emit`` or, with ``handoff``, the hand-off floor's reader task."""
    provider = MemorySandboxProvider()
    counter = _Counter()

    async def one(index: int) -> None:
        sandbox = await provider.create_session(session_id=str(index))
        session = await adapter.do_start(
            StartOptions(
                session_id=str(index),
                sandbox_session=sandbox,
                session_work_dir=sandbox.default_working_directory,
            )
        )
        for _ in range(turns):
            if handoff:
                # (awaited first: `+=` would read the count before other sessions add)
                parts = await _floor_turn(session)
                counter.parts += parts
                continue
            control = await session.do_prompt_turn(
                PromptTurnOptions(prompt="go", emit=counter.emit, abort=anyio.Event())
            )
            await control.done()
        await session.do_destroy()
        await sandbox.destroy()

    watch = Stopwatch()
    if sessions == 1:
        await one(0)
    else:
        async with anyio.create_task_group() as group:
            for index in range(sessions):
                group.start_soon(one, index)
    return watch.sample(parts=counter.parts, turns=sessions * turns)


async def _agent_turns(adapter: ScriptedAdapter, sessions: int, turns: int) -> Sample:
    """The reference agent on the adapter.

    One session: created before the clock starts, ``turns`` turns timed. Several
    sessions: creation, one turn each and destruction all timed, run concurrently; the
    sample's ``extra`` carries ``rss_growth_bytes`` (RSS after a full collection with
    every session alive, minus RSS before).
    """
    agent = HarnessAgent(harness=adapter, sandbox=MemorySandboxProvider(), error_log=None)
    parts = 0
    if sessions == 1:
        session = await agent.create_session()
        try:
            watch = Stopwatch()
            for _ in range(turns):
                result = await agent.stream(session=session, prompt="go")
                async for _part in result.full_stream:
                    parts += 1
            sample = watch.sample(parts=parts, turns=turns)
        finally:
            await session.destroy()
        return sample

    counts = [0] * sessions
    alive = [0]
    all_done = anyio.Event()
    release = anyio.Event()

    async def one(index: int) -> None:
        session = await agent.create_session()
        try:
            for _ in range(turns):
                result = await agent.stream(session=session, prompt="go")
                async for _part in result.full_stream:
                    counts[index] += 1
            alive[0] += 1
            if alive[0] == sessions:
                all_done.set()
            await release.wait()
        finally:
            await session.destroy()

    gc.collect()
    before = memory_status().get("rss")
    watch = Stopwatch()
    peak_rss: int | None = None
    async with anyio.create_task_group() as group:
        for index in range(sessions):
            group.start_soon(one, index)
        await all_done.wait()
        gc.collect()
        peak_rss = memory_status().get("rss")
        release.set()
    sample = watch.sample(parts=sum(counts), turns=sessions * turns)
    if before is not None and peak_rss is not None:
        sample.extra["rss_growth_bytes"] = float(max(0, peak_rss - before))
    return sample


def run_python(
    workload: Workload,
    *,
    mode: Literal["agent", "adapter", "floor"] = "agent",
    backend: str = "asyncio",
    turn: Sequence[Mapping[str, Any]] | None = None,
    use_uvloop: bool = False,
) -> Sample:
    """Run ``workload`` once in a fresh event loop; only the workload itself is timed.

    Args:
        workload: What to run.
        mode: ``agent`` (the reference agent on the scripted adapter), ``adapter`` (the
            scripted adapter alone, a null consumer) or ``floor`` (the hand-off floor:
            the adapter's ``done()`` in a task of its own and a reader task woken for its
            parts, nothing done to them).
        backend: The anyio backend (``asyncio`` or ``trio``).
        turn: The turn's parts (built from ``workload`` when not given).
        use_uvloop: Run asyncio on uvloop's event loop (``uvloop`` must be installed).

    Raises:
        ValueError: ``use_uvloop`` with a backend other than asyncio.
    """
    if use_uvloop and backend != "asyncio":
        raise ValueError(f"use_uvloop needs the asyncio backend, not {backend!r}")
    adapter = ScriptedAdapter(workload.parts() if turn is None else turn)
    run: Callable[[ScriptedAdapter, int, int], Awaitable[Sample]] = (
        _agent_turns
        if mode == "agent"
        else functools.partial(_adapter_turns, handoff=mode == "floor")
    )
    options = {"use_uvloop": True} if use_uvloop else {}
    sample: Sample = anyio.run(
        run, adapter, workload.sessions, workload.turns, backend=backend, backend_options=options
    )
    return sample
