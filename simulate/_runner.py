"""Offline simulation: run a scenario's sessions on the fake harness and record them.

:func:`simulate` runs ``sessions`` copies of the scenario (ids ``sim-<seed>-<n>``),
at most ``concurrency`` at a time, each with its own fake runtime, agent and sandbox
session. Every session writes a JSONL transcript, flushed line by line::

    {"kind": "session-start", "sessionId": "sim-0-0", ...}
    {"kind": "action", "index": 0, "action": {"prompt": "Hello"}}
    {"kind": "part", "action": 0, "part": {"type": "text-delta", ...}}   one per consumer part
    {"kind": "denial", "action": 1, "toolResult": {"type": "tool-result", ...}}  a denied call
    {"kind": "action-end", "index": 0, "turnState": "idle", ...}
    {"kind": "session-end", "status": "completed", "counts": {...}}

The ``session-end`` line is the session's report (with ``error`` when it failed): the run
keeps no report once a session ended, only running totals (see ``_summary``), so memory
follows the concurrency, not the number of sessions.

Same scenario and seed give byte-identical transcripts: ids come from seeded
``IdGenerator`` instances, the agent's clock is fixed, the fake runtime's is virtual and
no wall-clock measurement is written. Slice latencies go to ``summary.json`` (run-wide
percentiles); with :attr:`SimulationOptions.timings` they are also written into the
transcripts (``latencySeconds``, one of the declared :data:`VOLATILE_FIELDS`).
Cancellation (Ctrl-C) destroys every sandbox and keeps what was written.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio

from harness_testkit.reference import AgentSession, IdGenerator, StreamResult
from harness_testkit.spec import (
    ConsumerPart,
    ConsumerToolApprovalResponsePart,
    ConsumerToolResultPart,
    SandboxProvider,
    is_execution_denied,
)

from ._loading import LoadedScenario
from ._scenario import (
    ApproveAction,
    CompactAction,
    ContinueAction,
    DenyAction,
    DetachAction,
    HostAction,
    PromptAction,
    StopAction,
    SuspendAction,
    ToolResultAction,
    action_name,
    selected_tools,
)
from ._summary import (
    VOLATILE_FIELDS,
    SessionCounts,
    SessionReport,
    SessionReports,
    SimulationSummary,
    TranscriptWriter,
    percentile,
    session_id_for,
)

__all__ = [
    "VOLATILE_FIELDS",
    "SessionCounts",
    "SessionReport",
    "SimulationObserver",
    "SimulationOptions",
    "SimulationSummary",
    "denied_tool_result",
    "normalize_transcript_line",
    "percentile",
    "session_id_for",
    "simulate",
]


def _derived_seed(*parts: object) -> int:
    # Independent, reproducible id streams per session and per simulated process.
    digest = hashlib.sha256("/".join(str(part) for part in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def normalize_transcript_line(line: Mapping[str, Any]) -> dict[str, Any]:
    """A transcript or summary object without its :data:`VOLATILE_FIELDS` (recursively)."""

    def strip(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {key: strip(item) for key, item in value.items() if key not in VOLATILE_FIELDS}
        if isinstance(value, list):
            return [strip(item) for item in value]
        return value

    result: dict[str, Any] = strip(line)
    return result


# -- options, observer, reports -----------------------------------------------------------


@dataclass(frozen=True)
class SimulationOptions:
    """How to run a scenario; ``None`` fields take the scenario's values.

    Attributes:
        sandbox: ``local`` or ``docker``.
        sessions: How many sessions.
        concurrency: How many at once.
        seed: The simulation seed.
        out_dir: Where ``sessions/<id>.jsonl`` and ``summary.json`` go.
        sandbox_root: Parent folder of the local sandboxes' temporary root (default:
            the system temp dir); the root is removed when the run ends.
        action_timeout: Seconds one host action may take before the session fails.
        cleanup_timeout: Seconds each sandbox teardown may take.
        timings: Also write wall-clock latencies into the transcripts (``latencySeconds``
            on ``action-end`` and ``session-end`` lines) and per-session latency
            percentiles into ``summary.json``; off, transcripts are byte-identical
            between two runs of one scenario and seed.
    """

    sandbox: Literal["local", "docker"] | None = None
    sessions: int | None = None
    concurrency: int | None = None
    seed: int | None = None
    out_dir: Path = Path("harness-testkit-out/simulate")
    sandbox_root: Path | None = None
    action_timeout: float = 120.0
    cleanup_timeout: float = 30.0
    timings: bool = False


class SimulationObserver:
    """Receives the run's events as they happen (the CLI renders them). No-ops by default.

    Methods are synchronous and called on the event loop: keep them quick.
    """

    def session_started(self, session_id: str) -> None:
        """A session is about to run its first action."""

    def action_started(self, session_id: str, index: int, action: HostAction) -> None:
        """The host starts action ``index``."""

    def part(self, session_id: str, index: int, part: ConsumerPart) -> None:
        """A consumer part of action ``index`` arrived."""

    def action_finished(self, session_id: str, index: int, record: Mapping[str, Any]) -> None:
        """Action ``index`` ended; ``record`` is its ``action-end`` transcript line."""

    def session_finished(self, report: SessionReport) -> None:
        """A session ended (completed, failed or cancelled)."""


# -- one session --------------------------------------------------------------------------


class _ActionFailed(Exception):
    """A host action cannot be applied (the scenario does not match what happened)."""

    #: How reports and transcripts name it (a kind of failure, not an internal class).
    name = "ScenarioMismatch"


def _error_name(error: Exception) -> str:
    return _ActionFailed.name if isinstance(error, _ActionFailed) else type(error).__name__


class _SessionRun:
    """Runs the scenario's actions on one session, switching "processes" on demand."""

    def __init__(
        self,
        loaded: LoadedScenario,
        *,
        index: int,
        seed: int,
        provider: SandboxProvider,
        transcript: TranscriptWriter,
        observer: SimulationObserver,
        options: SimulationOptions,
    ) -> None:
        self.loaded = loaded
        self.index = index
        self.seed = seed
        self.provider = provider
        self.transcript = transcript
        self.observer = observer
        self.options = options
        self.session_id = session_id_for(seed, index)
        self.report = SessionReport(
            self.session_id, transcript=transcript.path, timed=options.timings
        )
        self.process = 0
        self.session: AgentSession | None = None
        self.agent: Any = None
        #: Steps after which the current slice stops (``suspendAfterSteps``), if armed.
        self.stop_after: int | None = None
        #: (turn, tool call id) of the calls denied so far: each denial counts once,
        #: although an automatic one shows both an approval response and a result.
        self.denied: set[tuple[int, str]] = set()

    # -- processes ---------------------------------------------------------------------

    def _new_agent(self) -> None:
        # A new "process": fresh fake runtime and agent, their own reproducible ids.
        self.process += 1
        harness = self.loaded.make_harness(self.seed, self.index)
        self.agent = self.loaded.make_agent(
            harness,
            sandbox=self.provider,
            id_generator=IdGenerator(_derived_seed("sim", self.seed, self.index, self.process)),
            stop_when=[self._armed_stop],
        )

    def _armed_stop(self, context: Mapping[str, Any]) -> bool:
        return self.stop_after is not None and len(context["steps"]) >= self.stop_after

    async def _start(self) -> None:
        self._new_agent()
        self.session = await self.agent.create_session(session_id=self.session_id)

    async def _switch_process(self, kind: Literal["suspend", "detach", "stop"]) -> str:
        """End the handle, carry its state through JSON, recreate it in a fresh agent.

        Shielded (and bounded) so a cancellation cannot land between the two halves and
        leave a sandbox that no handle owns.
        """
        session = self._session()
        carried = ""
        with anyio.CancelScope(shield=True), anyio.fail_after(self.options.action_timeout):
            if kind == "suspend":
                state: Any = await session.suspend_turn()
            elif kind == "detach":
                state = await session.detach()
            else:
                state = await session.stop()
            wire = json.loads(json.dumps(state.to_wire()))
            carried = str(wire.get("type"))
            self._new_agent()
            key = "continue_from" if carried == "continue-turn" else "resume_from"
            self.session = await self.agent.create_session(
                session_id=self.session_id, **{key: wire}
            )
        return carried

    def _session(self) -> AgentSession:
        assert self.session is not None
        return self.session

    # -- transcript --------------------------------------------------------------------

    def _part(self, index: int, part: ConsumerPart) -> None:
        self.report.counts.count_part(part)
        self.transcript.write({"kind": "part", "action": index, "part": part.to_wire()})
        self.observer.part(self.session_id, index, part)
        denial = denied_tool_result(part)
        if denial is not None:
            self._denial(index, denial)

    def _denial(self, index: int, denial: dict[str, Any]) -> None:
        key = (self.report.counts.turns, denial["toolCallId"])
        if key not in self.denied:
            self.denied.add(key)
            self.report.counts.denials += 1
            self.transcript.write({"kind": "denial", "action": index, "toolResult": denial})

    async def _consume(
        self, index: int, result: StreamResult, suspend_after: int | None = None
    ) -> dict[str, Any]:
        """Read a slice to its end; with ``suspend_after``, stop it after that many steps
        and carry the unfinished turn to a new process.

        Returns:
            Extra fields of the action's ``action-end`` line.
        """
        self.report.counts.slices += 1
        started = time.perf_counter()
        self.stop_after = suspend_after
        try:
            # Closing the stream explicitly keeps an early exit (an error, a cancellation)
            # inside this task; left to the garbage collector it would end elsewhere.
            async with result:
                async for part in result.full_stream:
                    self._part(index, part)
        finally:
            self.stop_after = None
        self.report.latencies.append(time.perf_counter() - started)
        if suspend_after is None:
            return {}
        if not self._session().has_unfinished_turn():
            return {"carried": None}  # the turn ended first: nothing to carry
        return {"carried": await self._switch_process("suspend")}

    # -- actions -----------------------------------------------------------------------

    async def run(self) -> SessionReport:
        """Run every action; a failure ends the session, only cancellation propagates."""
        self.transcript.write(
            {
                "kind": "session-start",
                "sessionId": self.session_id,
                "scenario": self.loaded.name,
                "scenarioDigest": self.loaded.digest,
                "seed": self.seed,
                "sessionIndex": self.index,
                "profile": self.loaded.profile.name,
            }
        )
        self.observer.session_started(self.session_id)
        current = -1
        try:
            with anyio.fail_after(self.options.action_timeout):
                await self._start()
            for current, action in enumerate(self.loaded.scenario.actions):
                self.transcript.write(
                    {"kind": "action", "index": current, "action": action.to_wire()}
                )
                self.observer.action_started(self.session_id, current, action)
                started = time.perf_counter()
                try:
                    with anyio.fail_after(self.options.action_timeout):
                        extra = await self._apply(current, action)
                except TimeoutError:
                    raise _ActionFailed(
                        f"action {current} ({action_name(action)}) did not finish within "
                        f"{self.options.action_timeout} s"
                    ) from None
                record = self._action_end(current, time.perf_counter() - started, extra)
                self.transcript.write(record)
                self.observer.action_finished(self.session_id, current, record)
        except anyio.get_cancelled_exc_class():
            self.report.status = "cancelled"
            raise
        except Exception as error:
            self.report.status = "failed"
            self.report.error = f"{_error_name(error)}: {error}"
            self.report.counts.errors += 1
            self.transcript.write(
                {
                    "kind": "error",
                    "action": current,
                    "error": {"name": _error_name(error), "message": str(error)},
                }
            )
        except BaseException:
            self.report.status = "cancelled"  # KeyboardInterrupt: the whole run stops
            raise
        finally:
            with anyio.CancelScope(shield=True):
                await self._teardown()
                self.transcript.write(self.report.end_line())
                self.transcript.close()
                self.observer.session_finished(self.report)
        return self.report

    def _action_end(self, index: int, latency: float, extra: Mapping[str, Any]) -> dict[str, Any]:
        session = self.session
        record: dict[str, Any] = {"kind": "action-end", "index": index, **extra}
        if session is not None:
            record["turnState"] = str(session.turn_state)
            record["pendingApprovals"] = [p.tool_name for p in session.pending_tool_approvals]
            record["pendingToolResults"] = [p.tool_name for p in session.pending_tool_results]
        record["process"] = self.process
        if self.options.timings:
            record["latencySeconds"] = round(latency, 6)
        return record

    async def _apply(self, index: int, action: HostAction) -> dict[str, Any]:
        agent = self.agent
        session = self._session()
        if isinstance(action, PromptAction):
            self.report.counts.turns += 1
            result = await agent.stream(session=session, prompt=action.prompt)
            return await self._consume(index, result, action.suspend_after_steps)
        if isinstance(action, ApproveAction | DenyAction):
            approved = isinstance(action, ApproveAction)
            selector = action.approve if isinstance(action, ApproveAction) else action.deny
            names = selected_tools(selector)
            chosen = [
                pending
                for pending in session.pending_tool_approvals
                if "all" in names or pending.tool_name in names
            ]
            if not chosen:
                raise _ActionFailed(
                    f"action {index} answers approvals of {', '.join(names)}, but the turn "
                    f"waits for none of them (pending: "
                    f"{_names([p.tool_name for p in session.pending_tool_approvals])})"
                )
            responses = [
                {
                    "type": "tool-approval-response",
                    "approvalId": pending.approval_id,
                    "approved": approved,
                    **({"reason": action.reason} if action.reason is not None else {}),
                }
                for pending in chosen
            ]
            result = await agent.continue_stream(
                session=session, tool_approval_continuations=responses
            )
            return await self._consume(index, result)
        if isinstance(action, ToolResultAction):
            spec = self.loaded.scenario.agent.tools[action.tool_result]
            waiting = [
                pending
                for pending in session.pending_tool_results
                if pending.tool_name == action.tool_result
            ]
            if not waiting:
                raise _ActionFailed(
                    f"action {index} answers {action.tool_result!r}, but the turn waits for "
                    f"no result of it (pending: "
                    f"{_names([p.tool_name for p in session.pending_tool_results])})"
                )
            given = "output" in action.model_fields_set
            is_error = action.is_error if action.is_error is not None else spec.error is not None
            output = action.output if given else (spec.error if is_error else spec.output)
            if is_execution_denied(output):
                # The host denies a client-side call: the agent shows no part for it (the
                # runtime's echo of a settled result is suppressed), so record it here.
                assert isinstance(output, Mapping)
                for pending in waiting:
                    self._denial(
                        index,
                        _denied_result(pending.tool_call_id, pending.tool_name, output),
                    )
            result = await agent.continue_stream(
                session=session,
                tool_result_continuations=[
                    {"tool_call_id": pending.tool_call_id, "output": output, "is_error": is_error}
                    for pending in waiting
                ],
            )
            return await self._consume(index, result)
        if isinstance(action, ContinueAction):
            result = await agent.continue_stream(session=session)
            return await self._consume(index, result, action.suspend_after_steps)
        if isinstance(action, SuspendAction | DetachAction | StopAction):
            kind: Literal["suspend", "detach", "stop"] = (
                "suspend"
                if isinstance(action, SuspendAction)
                else "detach"
                if isinstance(action, DetachAction)
                else "stop"
            )
            return {"carried": await self._switch_process(kind)}
        assert isinstance(action, CompactAction)
        await session.compact(None if action.compact is True else action.compact)
        return {}

    async def _teardown(self) -> None:
        """Destroy the session's runtime and sandbox, whatever state the handle is in."""
        with anyio.move_on_after(self.options.cleanup_timeout):
            session = self.session
            if session is not None and str(session.status) == "active":
                await session.destroy()
                return
            # A handle ended by suspend/detach/stop leaves its sandbox running.
            resume = getattr(self.provider, "resume_session", None)
            if session is None or resume is None:
                return
            try:
                sandbox = await resume(session_id=self.session_id)
                await sandbox.destroy()
            except Exception:  # nothing left to destroy
                pass


def denied_tool_result(part: ConsumerPart) -> dict[str, Any] | None:
    """The official agent's record of a denied call, when ``part`` reveals one.

    A denied approval (``tool-approval-response`` with ``approved: false``) or a host
    tool answered ``execution-denied`` (an automatic denial or an inactive tool, whose
    result the agent forwards) becomes the ``tool-result`` part the agent puts in its
    response messages: ``{type: tool-result, toolCallId, toolName, output: {type:
    execution-denied, reason?}}``.
    """
    if isinstance(part, ConsumerToolApprovalResponsePart):
        if part.approved:
            return None
        reason = {} if part.reason is None else {"reason": part.reason}
        call = part.tool_call
        return _denied_result(call.tool_call_id, call.tool_name, reason)
    if isinstance(part, ConsumerToolResultPart) and is_execution_denied(part.output):
        return _denied_result(part.tool_call_id, part.tool_name, part.output)
    return None


def _denied_result(call_id: str, name: str, given: Mapping[str, Any]) -> dict[str, Any]:
    output: dict[str, Any] = {"type": "execution-denied"}
    if isinstance(given.get("reason"), str):
        output["reason"] = given["reason"]
    return {"type": "tool-result", "toolCallId": call_id, "toolName": name, "output": output}


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"


# -- the run ------------------------------------------------------------------------------


def fresh_sessions_dir(out_dir: Path) -> Path:
    """``out_dir/sessions``, created, without the transcripts of an earlier run (an
    earlier, larger run's would be mistaken for this run's)."""
    sessions_dir = out_dir / "sessions"
    sessions_dir.mkdir(parents=True, exist_ok=True)
    for stale in sessions_dir.glob("*.jsonl"):
        stale.unlink()
    return sessions_dir


def run_counts(loaded: LoadedScenario, options: SimulationOptions) -> tuple[int, int, int]:
    """The run's seed, session count and concurrency: the options', else the scenario's."""
    scenario = loaded.scenario
    return (
        options.seed if options.seed is not None else scenario.seed,
        options.sessions if options.sessions is not None else scenario.sessions,
        options.concurrency if options.concurrency is not None else scenario.concurrency,
    )


async def simulate(
    loaded: LoadedScenario,
    options: SimulationOptions | None = None,
    observer: SimulationObserver | None = None,
    *,
    provider: SandboxProvider | None = None,
) -> SimulationSummary:
    """Run a scenario's sessions and write their transcripts and ``summary.json``.

    Args:
        loaded: The scenario (see :func:`load_scenario`).
        options: Overrides and output folder.
        observer: Receives events as they happen (rendering).
        provider: A sandbox provider to use instead of the one ``sandbox`` names (the
            caller keeps it: it is not closed).

    Returns:
        The summary (also written to ``<out_dir>/summary.json``).

    Raises:
        BaseException: The cancellation (or ``KeyboardInterrupt``) that interrupted the
            run, after every sandbox was destroyed and ``summary.json`` was written with
            status ``interrupted``.
    """
    return await run_sessions(loaded, options, observer, provider=provider)


async def run_sessions(
    loaded: LoadedScenario,
    options: SimulationOptions | None = None,
    observer: SimulationObserver | None = None,
    *,
    provider: SandboxProvider | None = None,
    indices: range | None = None,
) -> SimulationSummary:
    """:func:`simulate`, or with ``indices`` one shard of a run: only those sessions,
    their transcripts in ``out_dir/sessions``, and no ``summary.json`` (the sharded run's
    client merges the shards' reports, see ``_engine``)."""
    options = options or SimulationOptions()
    observer = observer or SimulationObserver()
    scenario = loaded.scenario
    seed, count, concurrency = run_counts(loaded, options)
    out_dir = options.out_dir
    sessions_dir = fresh_sessions_dir(out_dir)
    root: Path | None = None
    sandbox: SandboxProvider
    if provider is not None:
        sandbox = provider
    elif (options.sandbox or scenario.sandbox) == "docker":
        from harness_testkit.sandbox import DockerSandboxProvider

        sandbox = DockerSandboxProvider()
    else:
        from harness_testkit.sandbox import LocalSandboxProvider

        if options.sandbox_root is not None:
            options.sandbox_root.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="harness-testkit-sim-", dir=options.sandbox_root))
        sandbox = LocalSandboxProvider(root)
    planned = count if indices is None else len(indices)
    summary = SimulationSummary(
        scenario=loaded.name,
        digest=loaded.digest,
        seed=seed,
        sandbox=sandbox.provider_id,
        concurrency=min(concurrency, planned),
        planned=planned,
        out_dir=out_dir,
    )
    started = time.perf_counter()
    # Sessions are produced lazily: `concurrency` workers take the next index, so memory
    # follows the concurrency, not the session count (no task waits for its turn), and a
    # session's report is folded into the summary's totals as it ends, then dropped.
    next_index = iter(range(count) if indices is None else indices)
    taken = 0

    async def worker() -> None:
        nonlocal taken
        for index in next_index:
            taken += 1
            await run_one(index)

    async def run_one(index: int) -> None:
        run = _SessionRun(
            loaded,
            index=index,
            seed=seed,
            provider=sandbox,
            transcript=TranscriptWriter(sessions_dir / f"{session_id_for(seed, index)}.jsonl"),
            observer=observer,
            options=options,
        )
        try:
            await run.run()
        finally:
            summary.record(run.report)

    try:
        async with anyio.create_task_group() as group:
            for _ in range(max(1, min(concurrency, planned))):
                group.start_soon(worker)
    except BaseException:
        summary.interrupted = True
        raise
    finally:
        # Indices are taken in order, so the sessions that started are 0 .. taken - 1.
        if indices is None:
            summary.sessions = SessionReports(sessions_dir, seed, taken)
        summary.duration_seconds = round(time.perf_counter() - started, 6)
        with anyio.CancelScope(shield=True):
            if root is not None:
                await anyio.to_thread.run_sync(lambda: shutil.rmtree(root, ignore_errors=True))
            prune = getattr(sandbox, "prune", None) if provider is None else None
            owner = getattr(sandbox, "owner", None)
            if prune is not None and owner is not None:
                # Whatever an interrupted session left (a container mid-creation or
                # detached) carries this provider's owner label: remove it.
                with anyio.move_on_after(options.cleanup_timeout):
                    try:
                        await anyio.to_thread.run_sync(lambda: prune(owner=owner))
                    except Exception:  # the engine went away: nothing left to remove
                        pass
            aclose = getattr(sandbox, "aclose", None) if provider is None else None
            if aclose is not None:
                with anyio.move_on_after(options.cleanup_timeout):
                    await aclose()
        if indices is None:
            summary.write()
    return summary
