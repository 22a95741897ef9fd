"""The mutant zoo: the fake harness with exactly one deliberate defect each.

A conformance suite is only as good as the bugs it catches. Each :class:`Mutant` is the
fake harness (``harness_testkit.fake_harness``) with one departure from harness-v1,
documented by the one requirement id it breaks; ``harness-testkit selftest`` runs the
whole suite against every mutant and prints the kill matrix (see ``_selftest.py``).

The defects live here, never in the fake's own code paths. A mutant is one of:

- a :class:`MutantAdapter` subclass (the adapter object lies about itself);
- a :class:`MutantSession` subclass, installed by a plain :class:`MutantAdapter`, that
  rewrites the parts the runtime emits, the lifecycle states it returns, or the start
  and turn options it passes on;
- a :class:`MutantControl` subclass (the prompt control mishandles submissions or
  ``done()``);
- the fake's own fault hooks (``faults=``) or a profile that claims what it cannot do.

Every mutant declares the capabilities it *claims* (normally exactly those of its
fake-harness profile), so the suite judges it like any adapter.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio

from harness_testkit.fake_harness import (
    DropFinishStepFault,
    FakeHarness,
    FakeHarnessError,
    FakeHarnessSession,
    HangFault,
    HarnessProfile,
    ObservationLog,
    ToolExecuted,
    get_profile,
)
from harness_testkit.fake_harness._workspace import Workspace
from harness_testkit.spec import (
    BuiltinTool,
    BuiltinToolFiltering,
    CompactionPart,
    ContinueTurnOptions,
    ContinueTurnState,
    FileChangePart,
    FinishPart,
    FinishStepPart,
    HarnessAdapter,
    HarnessSession,
    HarnessSessionStateError,
    JSONValue,
    PromptControl,
    PromptTurnOptions,
    ResumeSessionState,
    StartOptions,
    TextDeltaPart,
    TextEndPart,
    TextStartPart,
    ToolApprovalRequestPart,
    ToolCallPart,
    ToolInputStartPart,
    ToolResultPart,
)

from ._capabilities import AdapterCapabilities
from ._context import AdapterTarget
from ._self import capabilities_of

__all__ = [
    "Mutant",
    "MutantAdapter",
    "MutantControl",
    "MutantSession",
    "get_mutant",
    "mutant_names",
    "mutants",
]

_Options = TypeVar("_Options", PromptTurnOptions, ContinueTurnOptions)


@dataclass(frozen=True)
class Mutant:
    """A broken adapter: the fake harness with exactly one defect.

    Attributes:
        name: A kebab-case name (``--mutant NAME``).
        requirement: The one requirement id the defect breaks.
        description: What the defect is, in one sentence.
        factory: Returns a fresh mutated adapter each call.
        profile: The fake-harness profile the mutant is built on.
        capabilities: What the mutant claims (normally its profile's capabilities).
        area: The zoo area it belongs to (for the matrix and the coverage test).
    """

    name: str
    requirement: str
    description: str
    factory: Callable[[], HarnessAdapter]
    profile: str
    capabilities: AdapterCapabilities
    area: str = ""

    @property
    def target(self) -> AdapterTarget:
        """The adapter target the suite runs against (named ``mutant:<name>``)."""
        return AdapterTarget(
            factory=self.factory, capabilities=self.capabilities, name=f"mutant:{self.name}"
        )


# -- the wrappers --------------------------------------------------------------------------


class MutantControl:
    """A prompt control forwarding to the fake's; subclasses mishandle one thing.

    It offers exactly the optional methods of the control it wraps (the agent probes
    them with ``getattr``), unless a subclass says otherwise through
    :attr:`offers_approval` / :attr:`offers_steering`.
    """

    #: ``None``: offer ``submit_tool_approval`` exactly when the wrapped control does.
    offers_approval: bool | None = None
    #: ``None``: offer ``submit_user_message`` exactly when the wrapped control does.
    offers_steering: bool | None = None

    def __init__(self, inner: PromptControl, session: MutantSession) -> None:
        self.inner = inner
        self.session = session
        approval = self.offers_approval
        if approval is None:
            approval = hasattr(inner, "submit_tool_approval")
        if approval:
            self.submit_tool_approval = self._submit_tool_approval
        steering = self.offers_steering
        if steering is None:
            steering = hasattr(inner, "submit_user_message")
        if steering:
            self.submit_user_message = self._submit_user_message

    async def submit_tool_result(
        self,
        tool_call_id: str,
        output: JSONValue,
        is_error: bool = False,
        tool_result: dict[str, Any] | None = None,
    ) -> None:
        """Forward a host result."""
        await self.inner.submit_tool_result(tool_call_id, output, is_error, tool_result)

    async def _submit_tool_approval(
        self, approval_id: str, approved: bool, reason: str | None = None
    ) -> None:
        await self.inner.submit_tool_approval(approval_id, approved, reason)  # type: ignore[attr-defined]

    async def _submit_user_message(self, text: str) -> None:
        await self.inner.submit_user_message(text)  # type: ignore[attr-defined]

    async def done(self) -> None:
        """Forward ``done()``."""
        await self.inner.done()


class MutantSession:
    """An adapter session forwarding to a :class:`FakeHarnessSession`.

    Subclasses override one hook: :meth:`rewrite` (parts on their way to ``emit``),
    :meth:`prompt_options`/:meth:`continue_options` (turn options), :meth:`state`
    (lifecycle states returned), :attr:`control_class`, or a lifecycle method.
    Anything else (``hold_before_part``, ``workspace``, ``turn``) reaches the fake session.
    """

    #: The control wrapper; ``None`` returns the fake's controls unwrapped.
    control_class: type[MutantControl] | None = None

    def __init__(self, inner: FakeHarnessSession, adapter: MutantAdapter, options: StartOptions):
        self.inner = inner
        self.adapter = adapter
        self.start_options = options

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    # -- hooks -------------------------------------------------------------------------

    def rewrite(self, part: Any) -> list[Any]:
        """The parts to emit instead of ``part`` (default: ``part`` unchanged)."""
        return [part]

    def prompt_options(self, options: PromptTurnOptions) -> PromptTurnOptions:
        """The prompt-turn options the runtime receives."""
        return options

    def continue_options(self, options: ContinueTurnOptions) -> ContinueTurnOptions:
        """The continue-turn options the runtime receives."""
        return options

    def state(self, state: Any) -> Any:
        """The lifecycle state returned instead of ``state`` (suspend, detach, stop)."""
        return state

    # -- HarnessSession ------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        """The fake session's id."""
        return self.inner.session_id

    @property
    def is_resume(self) -> bool:
        """The fake session's ``is_resume``."""
        return self.inner.is_resume

    def _rewired(self, options: _Options) -> _Options:
        emit = options.emit

        def rewritten(part: Any) -> None:
            for item in self.rewrite(part):
                emit(item)

        return dataclasses.replace(options, emit=rewritten)

    def _control(self, control: PromptControl) -> PromptControl:
        if self.control_class is None:
            return control
        return self.control_class(control, self)

    async def do_prompt_turn(self, options: PromptTurnOptions) -> PromptControl:
        """Start a turn through the hooks."""
        control = await self.inner.do_prompt_turn(self._rewired(self.prompt_options(options)))
        return self._control(control)

    async def do_continue_turn(self, options: ContinueTurnOptions) -> PromptControl:
        """Continue the turn through the hooks."""
        control = await self.inner.do_continue_turn(self._rewired(self.continue_options(options)))
        return self._control(control)

    async def do_suspend_turn(self) -> ContinueTurnState:
        """Suspend; the state passes through :meth:`state`."""
        return self.state(await self.inner.do_suspend_turn())  # type: ignore[no-any-return]

    async def do_detach(self) -> ResumeSessionState:
        """Detach; the state passes through :meth:`state`."""
        return self.state(await self.inner.do_detach())  # type: ignore[no-any-return]

    async def do_stop(self) -> ResumeSessionState:
        """Stop; the state passes through :meth:`state`."""
        return self.state(await self.inner.do_stop())  # type: ignore[no-any-return]

    async def do_destroy(self) -> None:
        """Destroy the fake session."""
        await self.inner.do_destroy()

    async def do_compact(self, custom_instructions: str | None = None) -> None:
        """Compact through the fake session."""
        await self.inner.do_compact(custom_instructions)


class MutantAdapter:
    """A :class:`FakeHarness` behind a thin wrapper whose sessions are ``session_class``.

    It forwards the adapter contract and the kit's scripting extension (``set_script``,
    ``observations``, ``profile``), so the scripted suites run against it too.
    Subclasses override one adapter attribute, or :meth:`start_options`.

    Args:
        fake: The fake harness doing the real work.
        session_class: Wraps each fake session (default: a transparent wrapper).
    """

    def __init__(
        self, fake: FakeHarness, session_class: type[MutantSession] = MutantSession
    ) -> None:
        self.fake = fake
        self.session_class = session_class
        self.lifecycle_state_schema = fake.lifecycle_state_schema

    @property
    def specification_version(self) -> str:
        """The fake's ``harness-v1``."""
        return self.fake.specification_version

    @property
    def harness_id(self) -> str:
        """The fake's harness id."""
        return self.fake.harness_id

    @property
    def builtin_tools(self) -> Mapping[str, BuiltinTool]:
        """The fake profile's built-ins."""
        return self.fake.builtin_tools

    @property
    def supports_builtin_tool_approvals(self) -> bool:
        """The fake profile's flag."""
        return self.fake.supports_builtin_tool_approvals

    @property
    def supports_builtin_tool_filtering(self) -> bool:
        """The fake profile's flag."""
        return self.fake.supports_builtin_tool_filtering

    @property
    def profile(self) -> HarnessProfile:
        """The fake's profile (the scripted suites read it)."""
        return self.fake.profile

    @property
    def observations(self) -> ObservationLog:
        """The fake's observation log."""
        return self.fake.observations

    def set_script(self, script: Any) -> None:
        """Replace the fake's script."""
        self.fake.set_script(script)

    def start_options(self, options: StartOptions) -> StartOptions:
        """The start options the fake receives (default: unchanged)."""
        return options

    async def do_start(self, options: StartOptions) -> HarnessSession:
        """Start a fake session and wrap it."""
        inner = await self.fake.do_start(self.start_options(options))
        return self.session_class(inner, self, options)


def _runtime_options(session: MutantSession, **changes: Any) -> None:
    # The fake reads the start options again for every turn; changing them after
    # do_start models a runtime that misreads what it was given, while SessionStarted
    # (the log of what it received) stays truthful.
    inner = session.inner
    inner._options = dataclasses.replace(inner._options, **changes)


def _wire_state(state: Any) -> dict[str, Any]:
    wire = state.to_wire() if hasattr(state, "to_wire") else dict(state)
    assert isinstance(wire, dict)
    return wire


def _with_turn(state: Any, change: Callable[[dict[str, Any]], None]) -> Any:
    wire = _wire_state(state)
    data = wire.get("data")
    if isinstance(data, dict) and isinstance(data.get("turn"), dict):
        change(data["turn"])
    return ContinueTurnState.model_validate(wire)


# -- stream grammar ------------------------------------------------------------------------


class _DuplicateFinish(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        return [part, part] if isinstance(part, FinishPart) else [part]


class _SnakeCaseDelta(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, TextDeltaPart):
            # The AI SDK 4 spelling: `text` where harness-v1 says `delta`.
            return [{"type": "text-delta", "id": part.id, "text": part.delta}]
        return [part]


class _ResultBeforeCall(MutantSession):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._held: dict[str, Any] = {}

    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolCallPart) and part.provider_executed:
            self._held[part.tool_call_id] = part
            return []
        if isinstance(part, ToolResultPart) and part.tool_call_id in self._held:
            return [part, self._held.pop(part.tool_call_id)]
        return [part]


class _MiscountedStep(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolCallPart) and part.step_tool_call_count is not None:
            return [part.model_copy(update={"step_tool_call_count": part.step_tool_call_count + 1})]
        return [part]


class _ForeignMetadata(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, TextEndPart | FinishStepPart | FinishPart):
            return [part.model_copy(update={"harness_metadata": {"claude-code": {"mutant": True}}})]
        return [part]


class _TruncatedInput(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolCallPart) and len(part.input) > 1:
            return [part.model_copy(update={"input": part.input[:-1]})]
        return [part]


class _UnframedText(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        return [] if isinstance(part, TextStartPart) else [part]


class _ApprovalForUnknownCall(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolApprovalRequestPart):
            return [part.model_copy(update={"tool_call_id": f"{part.tool_call_id}-x"})]
        return [part]


# -- tool merging --------------------------------------------------------------------------


class _NativeToolNames(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolCallPart | ToolInputStartPart | ToolResultPart):
            native = self.adapter.profile.native_name(part.tool_name)
            if native is not None:
                return [part.model_copy(update={"tool_name": native})]
        return [part]


class _NotProviderExecuted(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if (
            isinstance(part, ToolCallPart | ToolInputStartPart)
            and part.provider_executed
            and part.tool_name in self.adapter.builtin_tools
        ):
            return [part.model_copy(update={"provider_executed": None})]
        return [part]


class _RenamedHostCalls(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolCallPart | ToolInputStartPart | ToolResultPart) and not (
            getattr(part, "provider_executed", None)
            or part.tool_name in self.adapter.builtin_tools
            or part.tool_name.startswith("mcp__")
        ):
            return [part.model_copy(update={"tool_name": f"host_{part.tool_name}"})]
        return [part]


class _StaticMcpCalls(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolCallPart) and part.tool_name.startswith("mcp__"):
            return [part.model_copy(update={"dynamic": None})]
        return [part]


# -- filtering -----------------------------------------------------------------------------


class _DenyAsAllow(MutantSession):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        given = self.start_options.builtin_tool_filtering
        if given is not None and given.mode == "deny":
            _runtime_options(
                self,
                builtin_tool_filtering=BuiltinToolFiltering(
                    mode="allow", tool_names=list(given.tool_names)
                ),
            )


class _FilterIgnored(MutantSession):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        _runtime_options(self, builtin_tool_filtering=None)


class _FilteringClaimed(MutantAdapter):
    @property
    def supports_builtin_tool_filtering(self) -> bool:
        """Claims native filtering the runtime refuses."""
        return True


# -- approvals -----------------------------------------------------------------------------


class _ApprovalTracking(MutantSession):
    """Remembers the built-in calls the runtime asked approval for (session-wide)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.calls: dict[str, ToolCallPart] = {}
        self.asked: dict[str, str] = {}  # approval id -> tool call id

    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolCallPart):
            self.calls[part.tool_call_id] = part
        elif isinstance(part, ToolApprovalRequestPart):
            self.asked[part.approval_id] = part.tool_call_id
        return [part]


class _RunsBeforeApproval(_ApprovalTracking):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolApprovalRequestPart):
            turn = self.inner.turn
            if turn is not None:
                # The runtime goes ahead at once instead of waiting for the host.
                turn.record.inbox.approvals[part.approval_id] = {"approved": True, "reason": None}
        return super().rewrite(part)


class _IgnoresDenialControl(MutantControl):
    async def _submit_tool_approval(
        self, approval_id: str, approved: bool, reason: str | None = None
    ) -> None:
        await super()._submit_tool_approval(approval_id, True, None)


class _IgnoresDenial(MutantSession):
    control_class = _IgnoresDenialControl


class _ApprovedCallsControl(MutantControl):
    async def _submit_tool_approval(
        self, approval_id: str, approved: bool, reason: str | None = None
    ) -> None:
        session = self.session
        assert isinstance(session, _RunsTwice)
        if approved and approval_id in session.asked:
            session.approved.append(session.asked[approval_id])
        await super()._submit_tool_approval(approval_id, approved, reason)


class _RepeatingWorkspace(Workspace):
    """Runs an approved call's command a second time (and logs it, as the runtime did)."""

    def __init__(self, base: Workspace, session: _RunsTwice) -> None:
        super().__init__(base.sandbox, base.work_dir)
        self._session = session

    async def execute(
        self, tool: str, tool_input: dict[str, JSONValue], abort: anyio.Event | None
    ) -> Any:
        outcome = await super().execute(tool, tool_input, abort)
        session = self._session
        for call_id in list(session.approved):
            call = session.calls.get(call_id)
            if call is None or call.tool_name != tool or json.loads(call.input) != tool_input:
                continue
            session.approved.remove(call_id)
            again = await super().execute(tool, tool_input, abort)
            turn = session.inner.turn
            session.adapter.observations.record(
                ToolExecuted(
                    session_id=session.session_id,
                    turn=turn.record.index if turn is not None else 0,
                    tool_call_id=call_id,
                    tool_name=tool,
                    surface="builtin",
                    input=tool_input,
                    executed=True,
                    result=again.get("result"),
                    is_error=bool(again.get("isError")),
                )
            )
        return outcome


class _RunsTwice(_ApprovalTracking):
    control_class = _ApprovedCallsControl

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.approved: list[str] = []
        self.inner.workspace = _RepeatingWorkspace(self.inner.workspace, self)


class _DropsApprovedResults(_ApprovalTracking):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolResultPart) and part.tool_call_id in self.asked.values():
            return []
        return super().rewrite(part)


class _LosesApprovalsControl(MutantControl):
    async def _submit_tool_approval(
        self, approval_id: str, approved: bool, reason: str | None = None
    ) -> None:
        if self.session.start_options.continue_from is None:
            await super()._submit_tool_approval(approval_id, approved, reason)
        # Restored from a state, the runtime no longer routes decisions to the turn.


class _LosesApprovalsAfterRestore(MutantSession):
    control_class = _LosesApprovalsControl


class _NoApprovalMethodControl(MutantControl):
    offers_approval = False


class _NoApprovalMethod(MutantSession):
    control_class = _NoApprovalMethodControl


# -- dynamic parts -------------------------------------------------------------------------


class _CreateAsModify(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, FileChangePart) and part.event == "create":
            return [part.model_copy(update={"event": "modify"})]
        return [part]


class _RootRelativePaths(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, FileChangePart):
            return [part.model_copy(update={"path": part.path.lstrip("/")})]
        return [part]


class _SilentCreates(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        return [] if isinstance(part, FileChangePart) and part.event == "create" else [part]


# -- continuations -------------------------------------------------------------------------


class _CursorBehind(MutantSession):
    def state(self, state: Any) -> Any:
        def back(turn: dict[str, Any]) -> None:
            turn["cursor"] = max(0, int(turn["cursor"]) - 1)

        return _with_turn(state, back) if _wire_state(state)["type"] == "continue-turn" else state


class _CursorAhead(MutantSession):
    def state(self, state: Any) -> Any:
        def ahead(turn: dict[str, Any]) -> None:
            turn["cursor"] = int(turn["cursor"]) + 1

        return _with_turn(state, ahead) if _wire_state(state)["type"] == "continue-turn" else state


class _AnswersPreviousPrompt(MutantSession):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._replayed = False

    def prompt_options(self, options: PromptTurnOptions) -> PromptTurnOptions:
        if self.start_options.resume_from is None or self._replayed:
            return options
        self._replayed = True
        earlier = [m.text for m in self.inner.conversation.messages if m.role == "user"]
        if not earlier:
            return options
        # The restored runtime re-answers the last prompt it remembers.
        return dataclasses.replace(options, prompt=earlier[-1])


class _ForeignHarnessId(MutantSession):
    def state(self, state: Any) -> Any:
        wire = _wire_state(state)
        wire["harnessId"] = "other-harness"
        return wire


class _NotJsonData(MutantSession):
    def state(self, state: Any) -> Any:
        wire = _wire_state(state)
        data = wire.get("data")
        if isinstance(data, dict):
            wire["data"] = {**data, "openFiles": {"notes.md"}}  # a set: not JSON
        return wire


class _PendingInResumeState(MutantSession):
    def state(self, state: Any) -> Any:
        wire = _wire_state(state)
        if wire.get("type") == "resume-session":
            wire["pendingToolApprovals"] = []
        return wire


# -- lifecycle -----------------------------------------------------------------------------


class _StaysOpenAfterDestroy(MutantSession):
    async def do_destroy(self) -> None:
        # Kills the running turn but forgets to mark the session ended.
        turn = self.inner.turn
        if turn is not None:
            turn.kill(FakeHarnessError(f"Fake harness session {self.session_id} was destroyed."))


class _DestroyReturnsState(MutantSession):
    async def do_destroy(self) -> Any:
        await super().do_destroy()
        return {"destroyed": True}


class _SuspendRaisesControl(MutantControl):
    async def done(self) -> None:
        await super().done()
        session = self.session
        assert isinstance(session, _SuspendRaises)
        if session.suspended:
            raise HarnessSessionStateError("The turn was suspended.")


class _SuspendRaises(MutantSession):
    control_class = _SuspendRaisesControl

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.suspended = False

    async def do_suspend_turn(self) -> ContinueTurnState:
        state = await super().do_suspend_turn()
        self.suspended = True
        return state


class _ManualCompactionHidden(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, CompactionPart) and part.trigger == "manual":
            return []
        return [part]


class _DoubleCompaction(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        return [part, part] if isinstance(part, CompactionPart) else [part]


class _SilentCompact(MutantSession):
    async def do_compact(self, custom_instructions: str | None = None) -> None:
        return None  # accepted and ignored, although the runtime cannot compact


class _StopsItsSandbox(MutantSession):
    async def do_stop(self) -> ResumeSessionState:
        state = await super().do_stop()
        stop = getattr(self.start_options.sandbox_session, "stop", None)
        if stop is not None:
            await stop()
        return state


# -- robustness ----------------------------------------------------------------------------


class _AbortNotWired(MutantSession):
    def prompt_options(self, options: PromptTurnOptions) -> PromptTurnOptions:
        return dataclasses.replace(options, abort=None)

    def continue_options(self, options: ContinueTurnOptions) -> ContinueTurnOptions:
        return dataclasses.replace(options, abort=None)


class _NeverSettlesControl(MutantControl):
    async def done(self) -> None:
        try:
            await super().done()
        except Exception:
            # The runtime died; nobody tells the host, so done() never settles.
            await anyio.sleep_forever()


class _NeverSettlesOnFailure(MutantSession):
    control_class = _NeverSettlesControl


# -- session identity, capability honesty, turn settings ----------------------------------


class _SuffixedSessionId(MutantSession):
    @property
    def session_id(self) -> str:
        """The runtime's own id instead of the one given to do_start."""
        return f"{self.inner.session_id}-runtime"


class _NeverResumed(MutantSession):
    @property
    def is_resume(self) -> bool:
        """Always False."""
        return False


class _JsonFormatDropped(MutantSession):
    def prompt_options(self, options: PromptTurnOptions) -> PromptTurnOptions:
        return dataclasses.replace(options, response_format=None)

    def continue_options(self, options: ContinueTurnOptions) -> ContinueTurnOptions:
        return dataclasses.replace(options, response_format=None)


class _SteeringStubControl(MutantControl):
    offers_steering = True

    async def _submit_user_message(self, text: str) -> None:
        return None  # offered, accepted, and dropped


class _SteeringStub(MutantSession):
    control_class = _SteeringStubControl


class _DeferredSteeringControl(MutantControl):
    async def _submit_user_message(self, text: str) -> None:
        session = self.session
        assert isinstance(session, _DeferredSteering)
        session.deferred.append(text)


class _DeferredSteering(MutantSession):
    control_class = _DeferredSteeringControl

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.deferred: list[str] = []

    async def do_prompt_turn(self, options: PromptTurnOptions) -> PromptControl:
        control = await super().do_prompt_turn(options)
        # Messages sent during the previous turn reach the runtime with the next one.
        for text in self.deferred:
            await self.inner.turn.control.submit_user_message(text)  # type: ignore[union-attr]
        self.deferred.clear()
        return control


class _InstructionsDropped(MutantSession):
    def prompt_options(self, options: PromptTurnOptions) -> PromptTurnOptions:
        return dataclasses.replace(options, instructions=None)


class _SkillsAccumulate(MutantSession):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._skills: dict[str, Any] = {}

    def prompt_options(self, options: PromptTurnOptions) -> PromptTurnOptions:
        self._skills.update({skill.name: skill for skill in options.skills})
        return dataclasses.replace(options, skills=tuple(self._skills.values()))


class _HostOutputLostControl(MutantControl):
    async def submit_tool_result(
        self,
        tool_call_id: str,
        output: JSONValue,
        is_error: bool = False,
        tool_result: dict[str, Any] | None = None,
    ) -> None:
        await super().submit_tool_result(tool_call_id, None, is_error, tool_result)


class _HostOutputLost(MutantSession):
    control_class = _HostOutputLostControl


class _WrongSpecificationVersion(MutantAdapter):
    @property
    def specification_version(self) -> str:
        """Not harness-v1."""
        return "harness-v2"


class _NativeKeyedBuiltins(MutantAdapter):
    @property
    def builtin_tools(self) -> Mapping[str, BuiltinTool]:
        """Common-named built-ins keyed by their native names."""
        return {
            (tool.native_name or key) if tool.common_name else key: tool
            for key, tool in self.fake.builtin_tools.items()
        }


# -- the zoo -------------------------------------------------------------------------------


def _profile(name: str, **changes: Any) -> HarnessProfile:
    base = get_profile(name)
    return base.model_copy(update=changes) if changes else base


@dataclass(frozen=True)
class _Spec:
    name: str
    requirement: str
    area: str
    description: str
    profile: str = "minimal"
    session: type[MutantSession] = MutantSession
    adapter: type[MutantAdapter] = MutantAdapter
    fake: Mapping[str, Any] = field(default_factory=dict)
    #: Profile fields the runtime really has (the claim follows them unless ``claims`` says).
    profile_changes: Mapping[str, Any] = field(default_factory=dict)
    #: Capability fields the mutant claims beyond its profile's.
    claims: Mapping[str, Any] = field(default_factory=dict)

    def build(self) -> Mutant:
        profile = _profile(self.profile, **self.profile_changes)
        fake_settings = dict(self.fake)
        adapter_class, session_class = self.adapter, self.session

        def factory() -> HarnessAdapter:
            fake = FakeHarness(profile=profile, **fake_settings)
            return adapter_class(fake, session_class)  # type: ignore[return-value]

        factory.__name__ = f"mutant_{self.name.replace('-', '_')}"
        capabilities = capabilities_of(profile)
        if self.claims:
            capabilities = capabilities.model_copy(update=dict(self.claims))
        return Mutant(
            name=self.name,
            requirement=self.requirement,
            description=self.description,
            factory=factory,
            profile=self.profile,
            capabilities=capabilities,
            area=self.area,
        )


_ZOO: tuple[_Spec, ...] = (
    # stream grammar
    _Spec(
        "step-left-open",
        "STREAM-033",
        "stream grammar",
        "The runtime never emits finish-step, so `finish` arrives with the step still open.",
        fake={"faults": [DropFinishStepFault()]},
    ),
    _Spec(
        "result-before-call",
        "STREAM-054",
        "stream grammar",
        "Runtime-executed calls are announced only after their tool-result.",
        profile="claude-code",
        session=_ResultBeforeCall,
    ),
    _Spec(
        "duplicate-finish",
        "STREAM-040",
        "stream grammar",
        "Every `finish` part is emitted twice.",
        session=_DuplicateFinish,
    ),
    _Spec(
        "wrong-field-names",
        "STREAM-004",
        "stream grammar",
        "text-delta parts carry `text` (the AI SDK 4 name) instead of `delta`.",
        session=_SnakeCaseDelta,
    ),
    _Spec(
        "miscounted-step",
        "STREAM-011",
        "stream grammar",
        "stepToolCallCount announces one tool call more than the step has.",
        profile="claude-code",
        session=_MiscountedStep,
    ),
    _Spec(
        "foreign-metadata-key",
        "STREAM-024",
        "stream grammar",
        "harnessMetadata is keyed by another harness's id.",
        session=_ForeignMetadata,
    ),
    _Spec(
        "truncated-tool-input",
        "STREAM-009",
        "stream grammar",
        "tool-call input loses its last character, so it is not JSON text.",
        profile="claude-code",
        session=_TruncatedInput,
    ),
    _Spec(
        "unframed-text",
        "STREAM-038",
        "stream grammar",
        "Text blocks have deltas and an end but no text-start.",
        session=_UnframedText,
    ),
    _Spec(
        "approval-for-unknown-call",
        "STREAM-013",
        "stream grammar",
        "Approval requests name a toolCallId no tool-call carried.",
        profile="claude-code",
        session=_ApprovalForUnknownCall,
    ),
    # tool merging
    _Spec(
        "native-tool-name",
        "MERGE-004",
        "tool merging",
        "Built-in calls carry the runtime's native name (`Bash`) instead of the key (`bash`).",
        profile="claude-code",
        session=_NativeToolNames,
    ),
    _Spec(
        "builtin-not-provider-executed",
        "MERGE-009",
        "tool merging",
        "Built-in calls lack providerExecuted: true.",
        profile="claude-code",
        session=_NotProviderExecuted,
    ),
    _Spec(
        "host-call-renamed",
        "TOOLSPEC-002",
        "tool merging",
        "Host tool calls carry `host_<name>` instead of the tool spec's name.",
        session=_RenamedHostCalls,
    ),
    _Spec(
        "mcp-call-not-dynamic",
        "TOOLSPEC-017",
        "tool merging",
        "Calls of undeclared MCP tools lack dynamic: true.",
        session=_StaticMcpCalls,
    ),
    _Spec(
        "builtins-keyed-by-native-name",
        "TOOLSPEC-009",
        "tool merging",
        "Common-named built-ins are keyed by their native names in builtin_tools.",
        profile="claude-code",
        adapter=_NativeKeyedBuiltins,
    ),
    # filtering
    _Spec(
        "deny-list-as-allow-list",
        "FILTER-010",
        "filtering",
        "The runtime reads a deny filter as an allow filter of the same names.",
        profile="claude-code",
        session=_DenyAsAllow,
    ),
    _Spec(
        "inactive-builtin-executed",
        "FILTER-011",
        "filtering",
        "Without native filtering, excluded built-ins run without an approval request.",
        profile="opencode",
        session=_FilterIgnored,
    ),
    _Spec(
        "filtering-claimed-but-refused",
        "FILTER-019",
        "filtering",
        "supports_builtin_tool_filtering is True but do_start refuses every filter.",
        profile="codex",
        adapter=_FilteringClaimed,
        claims={"builtin_tool_filtering": True},
    ),
    _Spec(
        "filtering-claimed-but-ignored",
        "FILTER-010",
        "filtering",
        "The profile claims native filtering; the runtime accepts the filter and ignores it.",
        profile="codex",
        session=_FilterIgnored,
        profile_changes={"supports_builtin_tool_filtering": True},
    ),
    # approvals
    _Spec(
        "runs-before-approval",
        "APPROVAL-004",
        "approvals",
        "The runtime asks for approval and runs the built-in without waiting for the answer.",
        profile="claude-code",
        session=_RunsBeforeApproval,
    ),
    _Spec(
        "runs-after-denial",
        "APPROVAL-035",
        "approvals",
        "A denial reaches the runtime as an approval.",
        profile="claude-code",
        session=_IgnoresDenial,
    ),
    _Spec(
        "runs-twice-after-approval",
        "APPROVAL-034",
        "approvals",
        "An approved built-in is executed twice.",
        profile="claude-code",
        session=_RunsTwice,
    ),
    _Spec(
        "approved-result-missing",
        "APPROVAL-034",
        "approvals",
        "The tool-result of an approved built-in is never emitted.",
        profile="claude-code",
        session=_DropsApprovedResults,
    ),
    _Spec(
        "approval-lost-after-restore",
        "APPROVAL-034",
        "approvals",
        "In a session continued from a JSON state, approval decisions never reach the turn.",
        profile="claude-code",
        session=_LosesApprovalsAfterRestore,
    ),
    _Spec(
        "approvals-claimed-without-method",
        "ADAPTER-048",
        "approvals",
        "supports_builtin_tool_approvals is True but prompt controls lack submit_tool_approval.",
        profile="claude-code",
        session=_NoApprovalMethod,
    ),
    # dynamic parts
    _Spec(
        "file-change-wrong-event",
        "STREAM-019",
        "dynamic parts",
        "New files are reported as `modify` on a runtime that reports exact events.",
        profile="codex",
        session=_CreateAsModify,
    ),
    _Spec(
        "file-change-odd-path",
        "STREAM-019",
        "dynamic parts",
        "file-change paths lose their leading slash, so the work dir cannot be stripped.",
        profile="codex",
        session=_RootRelativePaths,
    ),
    _Spec(
        "file-change-missing",
        "STREAM-019",
        "dynamic parts",
        "Files created by an opaque mutation get no file-change part.",
        profile="codex",
        session=_SilentCreates,
    ),
    _Spec(
        "file-change-for-tool-write",
        "STREAM-018",
        "dynamic parts",
        "Writes of visible write/edit calls are also reported as file-change.",
        profile="opencode",
        profile_changes={"file_change_for_tool_writes": True},
    ),
    # continuations
    _Spec(
        "replay-duplicates-event",
        "ADAPTER-032",
        "continuations",
        "A continued turn re-emits the last part delivered before the suspension.",
        profile="codex",
        session=_CursorBehind,
    ),
    _Spec(
        "replay-skips-event",
        "ADAPTER-032",
        "continuations",
        "A continued turn skips the first part not yet delivered.",
        profile="codex",
        session=_CursorAhead,
    ),
    _Spec(
        "resume-answers-previous-prompt",
        "LIFECYCLE-040",
        "continuations",
        "A resumed session answers its first prompt with the previous turn's answer.",
        session=_AnswersPreviousPrompt,
    ),
    _Spec(
        "state-with-foreign-harness-id",
        "LIFECYCLE-005",
        "continuations",
        "Lifecycle states claim another harness, so no session of this one accepts them.",
        session=_ForeignHarnessId,
    ),
    _Spec(
        "state-not-json",
        "LIFECYCLE-006",
        "continuations",
        "Lifecycle state data holds a Python set.",
        session=_NotJsonData,
    ),
    _Spec(
        "resume-state-with-pending-list",
        "LIFECYCLE-007",
        "continuations",
        "resume-session states carry an empty pendingToolApprovals list.",
        session=_PendingInResumeState,
    ),
    # lifecycle
    _Spec(
        "accepts-calls-after-destroy",
        "ADAPTER-037",
        "lifecycle",
        "do_destroy kills the turn but the session keeps accepting turns.",
        session=_StaysOpenAfterDestroy,
    ),
    _Spec(
        "destroy-returns-value",
        "ADAPTER-035",
        "lifecycle",
        "do_destroy returns a dict instead of None.",
        session=_DestroyReturnsState,
    ),
    _Spec(
        "done-raises-after-suspend",
        "ADAPTER-031",
        "lifecycle",
        "After do_suspend_turn the turn's done() raises instead of returning.",
        profile="codex",
        session=_SuspendRaises,
    ),
    _Spec(
        "compaction-claimed-never-emitted",
        "ADAPTER-040",
        "lifecycle",
        "do_compact succeeds but its manual compaction part is never emitted.",
        profile="pi",
        session=_ManualCompactionHidden,
    ),
    _Spec(
        "compaction-emitted-twice",
        "STREAM-021",
        "lifecycle",
        "Every compaction part is emitted twice.",
        profile="pi",
        session=_DoubleCompaction,
    ),
    _Spec(
        "sandbox-stopped-by-adapter",
        "ADAPTER-017",
        "lifecycle",
        "do_stop also stops the sandbox session the adapter was given.",
        session=_StopsItsSandbox,
    ),
    # robustness
    _Spec(
        "hangs-without-timeout",
        "ADAPTER-042",
        "robustness",
        "The runtime stalls before `finish` and the adapter neither times out nor observes abort.",
        session=_AbortNotWired,
        fake={"faults": [HangFault(before_type="finish")]},
        claims={"turn_timeout": 1.0},
    ),
    _Spec(
        "abort-not-wired",
        "ADAPTER-042",
        "robustness",
        "The turn's abort event never reaches the runtime.",
        session=_AbortNotWired,
    ),
    _Spec(
        "crash-leaves-turn-unsettled",
        "ADAPTER-044",
        "robustness",
        "When the runtime fails mid-turn, done() never returns or raises.",
        session=_NeverSettlesOnFailure,
        claims={"turn_timeout": 1.0},
    ),
    # session identity
    _Spec(
        "wrong-session-id",
        "ADAPTER-023",
        "session identity",
        "session_id is the runtime's own id, not the one given to do_start.",
        session=_SuffixedSessionId,
    ),
    _Spec(
        "is-resume-always-false",
        "ADAPTER-024",
        "session identity",
        "is_resume is False even for sessions started from a state.",
        profile="codex",
        session=_NeverResumed,
    ),
    _Spec(
        "wrong-specification-version",
        "ADAPTER-001",
        "session identity",
        "specification_version is `harness-v2`.",
        adapter=_WrongSpecificationVersion,
    ),
    _Spec(
        "harness-id-not-kebab-case",
        "ADAPTER-004",
        "session identity",
        "harness_id is `Fake_Harness`.",
        fake={"harness_id": "Fake_Harness"},
    ),
    # capability honesty
    _Spec(
        "json-format-accepted-undeclared",
        "ADAPTER-041",
        "capability honesty",
        "A runtime without JSON output runs JSON turns as plain text instead of refusing them.",
        session=_JsonFormatDropped,
    ),
    _Spec(
        "steering-method-undeclared",
        "ADAPTER-010",
        "capability honesty",
        "Controls offer submit_user_message although the runtime cannot steer (it drops the text).",
        profile="codex",
        session=_SteeringStub,
    ),
    _Spec(
        "compact-undeclared-accepted",
        "ADAPTER-039",
        "capability honesty",
        "do_compact returns normally although the runtime cannot compact.",
        session=_SilentCompact,
    ),
    _Spec(
        "steering-deferred",
        "STOP-014",
        "capability honesty",
        "A user message sent during a turn reaches the runtime only with the next turn.",
        profile="claude-code",
        session=_DeferredSteering,
    ),
    # turn settings and host tools
    _Spec(
        "instructions-dropped",
        "PROMPT-007",
        "turn settings",
        "The turn's instructions never reach the runtime.",
        session=_InstructionsDropped,
    ),
    _Spec(
        "skills-accumulate",
        "ADAPTER-027",
        "turn settings",
        "Skills of earlier turns stay offered on later turns.",
        session=_SkillsAccumulate,
    ),
    _Spec(
        "host-output-lost",
        "HOSTTOOL-006",
        "turn settings",
        "Host tool results reach the runtime with a null output.",
        session=_HostOutputLost,
    ),
)


def mutants() -> list[Mutant]:
    """Every mutant of the zoo, grouped by area."""
    return [spec.build() for spec in _ZOO]


def get_mutant(name: str) -> Mutant:
    """The mutant called ``name``.

    Raises:
        KeyError: naming the known mutants.
    """
    for spec in _ZOO:
        if spec.name == name:
            return spec.build()
    raise KeyError(f"no mutant named {name!r}; known: {', '.join(s.name for s in _ZOO)}")


def mutant_names() -> tuple[str, ...]:
    """The names of the zoo's mutants, in order."""
    return tuple(spec.name for spec in _ZOO)
