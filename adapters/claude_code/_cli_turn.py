"""One Claude Code turn: the CLI process, host input, and the turn's control.

A turn runs one Claude Code CLI process (through ``claude-agent-sdk``) inside the
``done()`` of its current prompt control; ``_parts.TurnParts`` turns the CLI's messages
into harness-v1 parts. Approvals go through ``can_use_tool`` (a ``PreToolUse`` hook
forces the prompt for gated calls, and lets every other call through, because
``bypassPermissions`` is refused when the CLI runs as root); host tools are the tools of
an in-process MCP server whose handlers wait for ``submit_tool_result``.

The CLI process must outlive the ``done()`` call that started it (the agent cancels
``done()`` when a turn pauses for host input, then continues with a new control), so it
runs on the session's runtime thread (an event loop of its own, see ``_runner``). Parts
cross back to the caller's event loop into an outbox that the current control's
``done()`` forwards to its ``emit``, in order; host input crosses the other way through
plain fields, and the writer wakes the runtime side's waits (``RuntimeThread.notify``).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import anyio

from harness_testkit.scripting import (
    ApprovalReceived,
    ApprovalRequested,
    LifecycleEvent,
    ToolResultReceived,
)
from harness_testkit.spec import (
    Emit,
    HarnessSessionStateError,
    JSONValue,
    requires_approval,
)

from ._builtins import BUILTIN_TOOLS
from ._parts import Call, TurnParts

if TYPE_CHECKING:
    from ._runner import RuntimeThread
    from ._session import ClaudeCodeSession

__all__ = ["ClaudeCodePromptControl", "ClaudeCodeTurn", "TurnStatus"]

TurnStatus = Literal["ready", "running", "suspended", "finished", "errored", "aborted", "failed"]
TERMINAL: frozenset[str] = frozenset({"finished", "errored", "aborted", "failed"})

#: How long a hook waits for the stream reader to announce the call it is about.
_ANNOUNCE_TIMEOUT = 60.0
#: How long stopping a running CLI may take (its disconnect is bounded at 15 s).
_STOP_TIMEOUT = 30.0

#: How often the runtime side re-checks the abort signal when no ``done()`` runs to
#: report it (seconds): an anyio event of the caller's loop cannot wake another loop.
_ABORT_RECHECK = 0.5


@dataclass(frozen=True)
class _End:
    status: TurnStatus
    error: BaseException | None = None


class ClaudeCodeTurn:
    """The runtime side of one turn (see the module docstring)."""

    def __init__(
        self,
        session: ClaudeCodeSession,
        *,
        index: int,
        prompt: JSONValue,
        prompt_text: str,
        approvals: Mapping[str, dict[str, JSONValue]] | None = None,
        results: Mapping[str, tuple[JSONValue, bool]] | None = None,
        executed: Mapping[str, tuple[JSONValue, bool]] | None = None,
        reply_start: int = 0,
        finished: bool = False,
        echoed: Iterable[str] = (),
    ) -> None:
        self.session = session
        self.index = index
        self.prompt = prompt
        self.prompt_text = prompt_text
        self.status: TurnStatus = "finished" if finished else "ready"
        self.error: BaseException | None = None
        self.control: ClaudeCodePromptControl | None = None
        self.captured = finished
        # A turn continued from a state reruns: the CLI resumes its own transcript.
        self.rerun = False
        self.drives = 0
        self.approvals: dict[str, dict[str, JSONValue]] = dict(approvals or {})
        self.results: dict[str, tuple[JSONValue, bool]] = dict(results or {})
        # Outcomes of runtime-executed calls that ran: a rerun replays them instead.
        self.executed: dict[str, tuple[JSONValue, bool]] = dict(executed or {})
        # Host calls whose result was echoed: a rerun of the step does not echo them again.
        self.echoed: set[str] = set(echoed)
        self.reply_start = reply_start
        self._emit: Emit | None = None
        self._abort: anyio.Event | None = None
        # Caller side: parts waiting for a done() to forward them, and its wake-up.
        self._outbox: deque[dict[str, Any] | _End] = deque()
        self._call_parts: dict[str, dict[str, Any]] = {}
        self._slice_calls: set[str] = set()
        self._wake = anyio.Event()
        self._token: Any = None
        # Runtime side: the turn's tool calls (across drives) and whether the stream started.
        self.calls: dict[str, Call] = {}
        self.started_stream = False
        # Runtime side, written by the caller: stop requests.
        self._stop_requested = False
        self._driving = False
        self._drive_ended: anyio.Event | None = None
        self._last_drive_status: TurnStatus | None = None
        self._reset_stream()

    # -- host-facing (caller's event loop) ---------------------------------------------------

    @property
    def unfinished(self) -> bool:
        """Not ended: ready to run, running, or suspended."""
        return self.status in ("ready", "running", "suspended")

    def attach(
        self, control: ClaudeCodePromptControl, emit: Emit, abort: anyio.Event | None
    ) -> None:
        """Make ``control`` current; parts go to ``emit`` from now on."""
        self.control = control
        self._emit = emit
        self._abort = abort
        self._slice_calls = set()
        if self.status == "suspended":
            self.status = "ready"
        self._notify()

    def _notify(self) -> None:
        wake, self._wake = self._wake, anyio.Event()
        wake.set()

    def _require_live(self, what: str) -> None:
        if self.status in TERMINAL:
            raise HarnessSessionStateError(
                f"Turn {self.index} of Claude Code session {self.session.session_id} has ended "
                f"({self.status}); cannot {what}."
            )

    def submit_tool_result(
        self, tool_call_id: str, output: JSONValue, is_error: bool, tool_result: Any
    ) -> None:
        """Store a host result; the waiting MCP handler hands it to the CLI."""
        self._require_live("submit a tool result")
        self.session.record(
            ToolResultReceived.of_submission(
                self.session.session_id, tool_call_id, output, is_error, tool_result
            )
        )
        self.results[tool_call_id] = (output, is_error)
        if tool_call_id not in self._slice_calls:
            # Submitted in a later slice than its call (an approval's or a client tool's
            # continuation): the agent shows this result itself in this slice, and drops
            # an adapter's echo only within the slice (as upstream's agent does). The CLI
            # hands the result back later, maybe in another slice: it is not echoed.
            self.echoed.add(tool_call_id)
        self.session.wake_runtime()

    def submit_tool_approval(self, approval_id: str, approved: bool, reason: str | None) -> None:
        """Store an approval decision; the waiting ``can_use_tool`` answers the CLI."""
        self._require_live("submit a tool approval")
        self.session.record(
            ApprovalReceived(
                session_id=self.session.session_id,
                approval_id=approval_id,
                approved=approved,
                reason=reason,
            )
        )
        self.approvals[approval_id] = {"approved": approved, "reason": reason}
        self.session.wake_runtime()

    async def _stop_drive(self) -> None:
        ended = self._drive_ended
        if self._driving and ended is not None:
            self._stop_requested = True
            self.session.wake_runtime()
            with anyio.move_on_after(_STOP_TIMEOUT):
                await ended.wait()
            self._stop_requested = False
            if not ended.is_set():
                raise HarnessSessionStateError(
                    f"The Claude Code CLI of turn {self.index} (session "
                    f"{self.session.session_id}) did not stop within {_STOP_TIMEOUT:g} s."
                )

    def _pending_end(self) -> _End | None:
        return next((item for item in self._outbox if isinstance(item, _End)), None)

    async def suspend(self) -> None:
        """Stop the CLI process now; the turn can be continued (the CLI resumes it)."""
        await self._stop_drive()
        end = self._pending_end()
        if end is not None and end.status == "finished":
            # It ended before the suspension took hold: captured at its end.
            self._outbox.clear()
            self._settle("finished")
            self.captured = True
            return
        if self.status in ("ready", "running"):
            self.status = "suspended"
        if self.drives > 0:
            self.rerun = True
        self._notify()

    async def kill(self, error: BaseException) -> None:
        """Stop the turn for good (session destroyed)."""
        await self._stop_drive()
        if self.unfinished:
            self._settle("failed", error)

    def _settle(self, status: TurnStatus, error: BaseException | None = None) -> None:
        if self.status in TERMINAL:
            return
        self.status = status
        self.error = error
        event = {
            "finished": "finish",
            "errored": "errored",
            "aborted": "aborted",
            "failed": "failed",
        }[status]
        self.session.record(
            LifecycleEvent(
                session_id=self.session.session_id,
                event=event,  # type: ignore[arg-type]
                turn=self.index,
                detail=str(error) if error is not None else None,
            )
        )
        self._notify()

    async def done_for(self, control: ClaudeCodePromptControl) -> None:
        """``done()`` of ``control``: forward parts while ``control`` is current."""
        while True:
            if control is not self.control:
                return
            if self._outbox:
                item = self._outbox.popleft()
                if isinstance(item, _End):
                    self._settle(item.status, item.error)
                else:
                    self._forward(item)
                continue
            if self.status in TERMINAL:
                if self.error is not None:
                    raise self.error
                return
            if self.status == "suspended":
                return
            if self.status == "ready":
                await self._start_drive()
                continue
            # The runtime side stops the CLI on an abort; its end arrives through the outbox.
            await self._wait_for_wake_or_abort()

    async def _wait_for_wake_or_abort(self) -> None:
        abort, wake = self._abort, self._wake
        if abort is None:
            await wake.wait()
            return
        if not abort.is_set():
            async with anyio.create_task_group() as group:

                async def woken() -> None:
                    await wake.wait()
                    group.cancel_scope.cancel()

                group.start_soon(woken)
                await abort.wait()
                group.cancel_scope.cancel()
        if abort.is_set():
            self.session.wake_runtime()
            # The runtime side reports the aborted end through the outbox.
            await wake.wait()

    def _forward(self, part: dict[str, Any]) -> None:
        assert self._emit is not None
        kind = part.get("type")
        if kind == "tool-call":
            self._call_parts[str(part["toolCallId"])] = part
            self._slice_calls.add(str(part["toolCallId"]))
        elif kind == "tool-approval-request":
            call_id = str(part["toolCallId"])
            if call_id not in self._slice_calls and call_id in self._call_parts:
                # The CLI asks one approval at a time; a later one arrives in a later slice,
                # whose approval requests must name a call of that slice (STREAM-013).
                self._emit(self._call_parts[call_id])
                self._slice_calls.add(call_id)
        self._emit(part)

    async def _start_drive(self) -> None:
        self.status = "running"
        self.drives += 1
        self._reset_stream()
        self._token = anyio.lowlevel.current_token()
        # A drive counts as running from here: a suspend or kill while the awaits below
        # wait must find it and stop it (else the CLI would start after it, unowned).
        self._driving = True
        self._drive_ended = anyio.Event()
        runner: RuntimeThread | None = None
        try:
            if self.rerun:
                await self.session.rewind(self.reply_start)
            if not self._stop_requested and self.status == "running":
                runner = await self.session.runner()
        finally:
            if runner is None or self._stop_requested or self.status != "running":
                # Stopped (or failed) before the CLI started: no process to stop.
                self.drives -= 1
                self._drive_finished()
                runner = None
        if runner is not None:
            runner.start(self._drive, self._abort)

    def _deliver(self, *items: dict[str, Any] | _End) -> None:
        self._outbox.extend(items)
        self._notify()

    def _drive_finished(self) -> None:
        self._driving = False
        if self._drive_ended is not None:
            self._drive_ended.set()
        if self.status == "running" and self._pending_end() is None:
            # Stopped on request (suspend) before any end: the turn waits to continue.
            self.status = "suspended"
            if self.drives > 0:
                self.rerun = True
        self._notify()

    # -- the runtime thread ------------------------------------------------------------------

    def emit(self, part: dict[str, Any]) -> None:
        """Send one part towards the current control (runtime thread)."""
        anyio.from_thread.run_sync(self._deliver, part, token=self._token)

    def emit_many(self, parts: list[dict[str, Any]]) -> None:
        """Send parts that must reach the same slice, at once (runtime thread)."""
        anyio.from_thread.run_sync(self._deliver, *parts, token=self._token)

    def end(self, status: TurnStatus, error: BaseException | None = None) -> None:
        self._finished_on_runtime = True
        anyio.from_thread.run_sync(self._deliver, _End(status, error), token=self._token)

    async def _drive(self, abort: anyio.Event | None) -> None:
        self._finished_on_runtime = False
        try:
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as group:
                    group.start_soon(self._watch_stop, abort, scope)
                    try:
                        await self._run_cli()
                    finally:
                        group.cancel_scope.cancel()
            if not self._finished_on_runtime:
                if abort is not None and abort.is_set():
                    self.end("aborted")
                elif not self._stop_requested:
                    self.end(
                        "failed",
                        HarnessSessionStateError(
                            "The Claude Code CLI ended the turn without a result message."
                        ),
                    )
        except Exception as error:
            if not self._finished_on_runtime:
                if abort is not None and abort.is_set():
                    self.end("aborted")
                elif not self._stop_requested:
                    self.end("failed", error)
        finally:
            anyio.from_thread.run_sync(self._drive_finished, token=self._token)

    async def _wait(
        self, predicate: Callable[[], bool], timeout: float | None, recheck: float | None = None
    ) -> bool:
        """Wait on the runtime thread until ``predicate()`` holds (woken by its writers)."""
        runtime = self.session.runtime
        assert runtime is not None, "runtime-side waits run on the session's runtime thread"
        return await runtime.wait_until(predicate, timeout, recheck=recheck)

    async def _watch_stop(self, abort: anyio.Event | None, scope: anyio.CancelScope) -> None:
        # Both flags belong to the caller's loop: a stop request notifies, an abort is
        # reported by a running done() and re-checked every _ABORT_RECHECK seconds.
        await self._wait(
            lambda: self._stop_requested or (abort is not None and abort.is_set()),
            None,
            recheck=None if abort is None else _ABORT_RECHECK,
        )
        scope.cancel()

    async def _run_cli(self) -> None:
        from claude_agent_sdk import ClaudeSDKClient

        options = self.session.sdk_options(self)
        client = ClaudeSDKClient(options)
        stderr = self.session.stderr_lines
        try:
            await client.connect()
            # A rerun sends the turn's prompt again: the scripted model answers the turn
            # from its first step, and calls that already ran are replayed, not rerun.
            await client.query(self.prompt_text)
            async for message in client.receive_response():
                self._parts.on_message(message)
                if self._finished_on_runtime:
                    break
        except Exception as error:
            if not self._finished_on_runtime and not self._stop_requested:
                tail = "\n".join(stderr[-5:])
                raise HarnessSessionStateError(
                    f"The Claude Code CLI failed: {error}" + (f"\n{tail}" if tail else "")
                ) from error
            raise
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(15):
                await client.disconnect()

    def _reset_stream(self) -> None:
        self._parts = TurnParts(self)
        self._host_waiting: dict[str, deque[str]] = {}

    # -- runtime callbacks (hooks, permissions, host tools) -------------------------------

    async def _announced(self, tool_use_id: str | None) -> Call | None:
        if tool_use_id is None:
            return None
        await self._wait(
            lambda: tool_use_id in self.calls and self.calls[tool_use_id].announced,
            _ANNOUNCE_TIMEOUT,
        )
        return self.calls.get(tool_use_id)

    def _gated(self, call: Call) -> bool:
        mode = self.session.permission_mode
        if call.surface == "host":
            return False
        if call.surface == "mcp":
            return requires_approval(mode, self.session.mcp_tool_kind(call.native))
        tool = BUILTIN_TOOLS.get(call.key)
        return requires_approval(mode, tool.tool_use_kind if tool is not None else None)

    async def pre_tool_use(self, data: Any, tool_use_id: str | None, context: Any) -> Any:
        """``PreToolUse`` hook: ask for gated calls, allow the rest."""
        call = await self._announced(tool_use_id)
        if call is None:
            return {}
        if call.surface != "host" and call.tool_use_id in self.executed:
            # A rerun of a step whose call already ran: keep its outcome, do not run it.
            call.replayed = True
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": json.dumps(
                        self.executed[call.tool_use_id][0], ensure_ascii=False
                    ),
                }
            }
        if call.surface == "host":
            self._host_waiting.setdefault(call.key, deque()).append(call.tool_use_id)
            self.session.wake_runtime()
        call.gated = self._gated(call)
        return {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask" if call.gated else "allow",
                "permissionDecisionReason": "harness-v1 permission mode"
                if call.gated
                else "allowed by the harness-v1 permission mode",
            }
        }

    async def post_tool_use(self, data: Any, tool_use_id: str | None, context: Any) -> Any:
        """``PostToolUse``/``PostToolUseFailure`` hook: the call ran."""
        call = self.calls.get(tool_use_id or "")
        if call is not None:
            call.ran = True
        return {}

    async def can_use_tool(self, name: str, tool_input: dict[str, Any], context: Any) -> Any:
        """The CLI's permission prompt: a harness-v1 approval request for gated calls."""
        from claude_agent_sdk import PermissionResultAllow, PermissionResultDeny

        call = await self._announced(getattr(context, "tool_use_id", None))
        if call is None or not call.gated:
            return PermissionResultAllow()
        approval_id = f"approval-{call.tool_use_id}"
        if approval_id not in self.approvals:
            self.session.record(
                ApprovalRequested(
                    session_id=self.session.session_id,
                    turn=self.index,
                    approval_id=approval_id,
                    tool_call_id=call.tool_use_id,
                    tool_name=call.key,
                    because="permission-mode",
                )
            )
            self.emit(
                {
                    "type": "tool-approval-request",
                    "approvalId": approval_id,
                    "toolCallId": call.tool_use_id,
                }
            )
            await self._wait(lambda: approval_id in self.approvals, None)
        decision = self.approvals[approval_id]
        reason = decision.get("reason")
        return self.session.permission_result(
            call_key=call.key,
            approved=bool(decision.get("approved")),
            reason=reason if isinstance(reason, str) else None,
            deny=lambda message: self._deny(call, message, PermissionResultDeny),
            allow=PermissionResultAllow,
        )

    @staticmethod
    def _deny(call: Call, message: str, deny: Callable[..., Any]) -> Any:
        call.refused = "denied"
        return deny(message=message)

    def host_handler(self, name: str) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
        """The MCP handler of host tool ``name``: wait for the host's result."""

        async def handle(arguments: dict[str, Any]) -> dict[str, Any]:
            queue = self._host_waiting.setdefault(name, deque())
            await self._wait(lambda: bool(queue), _ANNOUNCE_TIMEOUT)
            if not queue:
                return {
                    "content": [{"type": "text", "text": f"No call of '{name}' is pending."}],
                    "is_error": True,
                }
            call_id = queue.popleft()
            await self._wait(lambda: call_id in self.results, None)
            output, is_error = self.results[call_id]
            text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
            return {"content": [{"type": "text", "text": text}], "is_error": is_error}

        return handle


class ClaudeCodePromptControl:
    """The handle of a running Claude Code turn (implements ``PromptControl``).

    Offers ``submit_tool_approval`` (built-in approvals) besides the required members.
    """

    def __init__(self, turn: ClaudeCodeTurn) -> None:
        self._turn = turn

    async def submit_tool_result(
        self,
        tool_call_id: str,
        output: JSONValue,
        is_error: bool = False,
        tool_result: dict[str, Any] | None = None,
    ) -> None:
        """Deliver a host tool's result to the waiting MCP handler."""
        self._turn.session.check_live("submit a tool result")
        self._turn.submit_tool_result(tool_call_id, output, is_error, tool_result)

    async def submit_tool_approval(
        self, approval_id: str, approved: bool, reason: str | None = None
    ) -> None:
        """Answer a built-in approval request."""
        self._turn.session.check_live("submit a tool approval")
        self._turn.submit_tool_approval(approval_id, approved, reason)

    async def done(self) -> None:
        """Run the turn (the CLI process) until it ends, is suspended or aborted."""
        await self._turn.done_for(self)
