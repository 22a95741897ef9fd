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
from typing import Any, Literal, TypeVar

import anyio

from harness_testkit.fake_harness import (
    DropFinishStepFault,
    FakeHarness,
    FakeHarnessCrashError,
    FakeHarnessError,
    FakeHarnessSession,
    HangFault,
    HarnessProfile,
    ObservationLog,
    ToolExecuted,
    Workspace,
    get_profile,
)
from harness_testkit.spec import (
    Bootstrap,
    BootstrapFile,
    BuiltinTool,
    BuiltinToolFiltering,
    CompactionPart,
    ContinueTurnOptions,
    ContinueTurnState,
    FileChangePart,
    FinishPart,
    FinishStepPart,
    HarnessAdapter,
    HarnessCapabilityUnsupportedError,
    HarnessSession,
    HarnessSessionStateError,
    JsonResponseFormat,
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
    ToolInputEndPart,
    ToolInputStartPart,
    ToolResultPart,
)

from ._capabilities import AdapterCapabilities
from ._context import AdapterTarget
from ._self import capabilities_of

__all__ = [
    "AREAS",
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


# -- the registry ------------------------------------------------------------------------

#: The zoo's areas, in the order the kill matrix lists them.
AREAS: tuple[str, ...] = (
    "stream grammar",
    "tool merging",
    "filtering",
    "approvals",
    "dynamic parts",
    "continuations",
    "lifecycle",
    "robustness",
    "session identity",
    "capability honesty",
    "turn settings",
)


def _profile(name: str, **changes: Any) -> HarnessProfile:
    base = get_profile(name)
    return base.model_copy(update=changes) if changes else base


#: Seconds a mutant's turn may take. The fake answers in milliseconds; a short declared
#: timeout keeps a defect that hangs from costing the default 30 s in every check.
_TURN_TIMEOUT = 3.0


@dataclass(frozen=True)
class _Spec:
    """How to build one mutant: a profile, the defect's classes and fake settings.

    ``fake`` are :class:`FakeHarness` keyword arguments (fault hooks, harness id);
    ``profile_changes`` alter what the runtime really does (and so what it claims);
    ``claims`` alter only the declared capabilities.
    """

    name: str
    requirement: str
    area: str
    description: str
    profile: str = "minimal"
    session: type[MutantSession] = MutantSession
    adapter: type[MutantAdapter] = MutantAdapter
    fake: Mapping[str, Any] = field(default_factory=dict)
    profile_changes: Mapping[str, Any] = field(default_factory=dict)
    claims: Mapping[str, Any] = field(default_factory=dict)

    def build(self) -> Mutant:
        """The mutant (a fresh factory over this spec)."""
        profile = _profile(self.profile, **self.profile_changes)
        fake_settings = dict(self.fake)
        adapter_class, session_class = self.adapter, self.session

        def factory() -> HarnessAdapter:
            fake = FakeHarness(profile=profile, **fake_settings)
            return adapter_class(fake, session_class)  # type: ignore[return-value]

        factory.__name__ = f"mutant_{self.name.replace('-', '_')}"
        capabilities = capabilities_of(profile).model_copy(
            update={"turn_timeout": _TURN_TIMEOUT, **self.claims}
        )
        return Mutant(
            name=self.name,
            requirement=self.requirement,
            description=self.description,
            factory=factory,
            profile=self.profile,
            capabilities=capabilities,
            area=self.area,
        )


_ZOO: list[_Spec] = []

_Defect = TypeVar("_Defect", bound=type[MutantSession] | type[MutantAdapter])


def _register(
    name: str,
    requirement: str,
    description: str,
    *,
    area: str,
    profile: str = "minimal",
    session: type[MutantSession] = MutantSession,
    adapter: type[MutantAdapter] = MutantAdapter,
    fake: Mapping[str, Any] | None = None,
    profile_changes: Mapping[str, Any] | None = None,
    claims: Mapping[str, Any] | None = None,
) -> None:
    """Add a mutant to the zoo (see :class:`_Spec` for the arguments)."""
    if area not in AREAS:
        raise ValueError(f"mutant {name!r}: unknown area {area!r}; use one of {AREAS}")
    if any(spec.name == name for spec in _ZOO):
        raise ValueError(f"mutant {name!r} is registered twice")
    _ZOO.append(
        _Spec(
            name=name,
            requirement=requirement,
            area=area,
            description=description,
            profile=profile,
            session=session,
            adapter=adapter,
            fake=dict(fake or {}),
            profile_changes=dict(profile_changes or {}),
            claims=dict(claims or {}),
        )
    )


def _mutant(
    name: str, requirement: str, description: str, **settings: Any
) -> Callable[[_Defect], _Defect]:
    """Register the decorated session or adapter class as the defect of a mutant."""

    def register(defect: _Defect) -> _Defect:
        if issubclass(defect, MutantSession):
            _register(name, requirement, description, session=defect, **settings)
        else:
            _register(name, requirement, description, adapter=defect, **settings)
        return defect

    return register


# -- stream grammar ------------------------------------------------------------------------


_register(
    "step-left-open",
    "STREAM-033",
    "The runtime never emits finish-step, so `finish` arrives with the step still open.",
    area="stream grammar",
    fake={"faults": [DropFinishStepFault()]},
)


@_mutant(
    "result-before-call",
    "STREAM-054",
    "Runtime-executed calls are announced only after their tool-result.",
    area="stream grammar",
    profile="claude-code",
)
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


@_mutant(
    "duplicate-finish", "STREAM-040", "Every `finish` part is emitted twice.", area="stream grammar"
)
class _DuplicateFinish(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        return [part, part] if isinstance(part, FinishPart) else [part]


@_mutant(
    "wrong-field-names",
    "STREAM-004",
    "text-delta parts carry `text` (the AI SDK 4 name) instead of `delta`.",
    area="stream grammar",
)
class _SnakeCaseDelta(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, TextDeltaPart):
            # The AI SDK 4 spelling: `text` where harness-v1 says `delta`.
            return [{"type": "text-delta", "id": part.id, "text": part.delta}]
        return [part]


@_mutant(
    "miscounted-step",
    "STREAM-011",
    "stepToolCallCount announces one tool call more than the step has.",
    area="stream grammar",
    profile="claude-code",
    # The agent waits for the call that never comes; a short timeout keeps that quick.
    claims={"turn_timeout": 1.0},
)
class _MiscountedStep(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolCallPart) and part.step_tool_call_count is not None:
            return [part.model_copy(update={"step_tool_call_count": part.step_tool_call_count + 1})]
        return [part]


@_mutant(
    "foreign-metadata-key",
    "STREAM-024",
    "harnessMetadata is keyed by another harness's id.",
    area="stream grammar",
)
class _ForeignMetadata(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, TextEndPart | FinishStepPart | FinishPart):
            return [part.model_copy(update={"harness_metadata": {"claude-code": {"mutant": True}}})]
        return [part]


@_mutant(
    "truncated-tool-input",
    "STREAM-009",
    "tool-call input loses its last character, so it is not JSON text.",
    area="stream grammar",
    profile="claude-code",
)
class _TruncatedInput(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolCallPart) and len(part.input) > 1:
            return [part.model_copy(update={"input": part.input[:-1]})]
        return [part]


@_mutant(
    "unframed-text",
    "STREAM-038",
    "Text blocks have deltas and an end but no text-start.",
    area="stream grammar",
)
class _UnframedText(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        return [] if isinstance(part, TextStartPart) else [part]


@_mutant(
    "approval-for-unknown-call",
    "STREAM-013",
    "Approval requests name a toolCallId no tool-call carried.",
    area="stream grammar",
    profile="claude-code",
)
class _ApprovalForUnknownCall(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolApprovalRequestPart):
            return [part.model_copy(update={"tool_call_id": f"{part.tool_call_id}-x"})]
        return [part]


@_mutant(
    "abandoned-tool-input",
    "STREAM-026",
    "Every tool call is preceded by tool-input parts of a draft id no tool-call completes.",
    area="stream grammar",
    profile="claude-code",
)
class _AbandonedToolInput(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolCallPart):
            draft = f"{part.tool_call_id}-draft"
            return [
                ToolInputStartPart(id=draft, tool_name=part.tool_name),
                ToolInputEndPart(id=draft),
                part,
            ]
        return [part]


@_mutant(
    "results-after-last-step",
    "STREAM-052",
    "Runtime-executed results are held back until just before `finish`.",
    area="stream grammar",
    profile="claude-code",
)
class _ResultsAfterLastStep(MutantSession):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._provider_calls: set[str] = set()
        self._held: list[Any] = []

    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolCallPart) and part.provider_executed:
            self._provider_calls.add(part.tool_call_id)
        elif isinstance(part, ToolResultPart) and part.tool_call_id in self._provider_calls:
            self._held.append(part)
            return []
        elif isinstance(part, FinishPart):
            held, self._held = self._held, []
            return [*held, part]
        return [part]


# -- tool merging --------------------------------------------------------------------------


@_mutant(
    "native-tool-name",
    "MERGE-004",
    "Built-in calls carry the runtime's native name (`Bash`) instead of the key (`bash`).",
    area="tool merging",
    profile="claude-code",
)
class _NativeToolNames(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolCallPart | ToolInputStartPart | ToolResultPart):
            native = self.adapter.profile.native_name(part.tool_name)
            if native is not None:
                return [part.model_copy(update={"tool_name": native})]
        return [part]


@_mutant(
    "builtin-not-provider-executed",
    "MERGE-009",
    "Built-in calls lack providerExecuted: true.",
    area="tool merging",
    profile="claude-code",
)
class _NotProviderExecuted(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if (
            isinstance(part, ToolCallPart | ToolInputStartPart)
            and part.provider_executed
            and part.tool_name in self.adapter.builtin_tools
        ):
            return [part.model_copy(update={"provider_executed": None})]
        return [part]


@_mutant(
    "host-call-renamed",
    "TOOLSPEC-002",
    "Host tool calls carry `host_<name>` instead of the tool spec's name.",
    area="tool merging",
)
class _RenamedHostCalls(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolCallPart | ToolInputStartPart | ToolResultPart) and not (
            getattr(part, "provider_executed", None)
            or part.tool_name in self.adapter.builtin_tools
            or part.tool_name.startswith("mcp__")
        ):
            return [part.model_copy(update={"tool_name": f"host_{part.tool_name}"})]
        return [part]


@_mutant(
    "mcp-call-not-dynamic",
    "TOOLSPEC-017",
    "Calls of undeclared MCP tools lack dynamic: true.",
    area="tool merging",
)
class _StaticMcpCalls(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, ToolCallPart) and part.tool_name.startswith("mcp__"):
            return [part.model_copy(update={"dynamic": None})]
        return [part]


@_mutant(
    "builtins-keyed-by-native-name",
    "TOOLSPEC-009",
    "Common-named built-ins are keyed by their native names in builtin_tools.",
    area="tool merging",
    profile="claude-code",
)
class _NativeKeyedBuiltins(MutantAdapter):
    @property
    def builtin_tools(self) -> Mapping[str, BuiltinTool]:
        """Common-named built-ins keyed by their native names."""
        return {
            (tool.native_name or key) if tool.common_name else key: tool
            for key, tool in self.fake.builtin_tools.items()
        }


@_mutant(
    "native-only-builtin-mis-keyed",
    "ADAPTER-005",
    "Built-ins without a common name are keyed by a lower-cased native name.",
    area="tool merging",
    profile="claude-code",
)
class _LowercasedNativeKeys(MutantAdapter):
    @property
    def builtin_tools(self) -> Mapping[str, BuiltinTool]:
        """Built-ins without a common name keyed by a lower-cased native name."""
        return {
            key if tool.common_name else key.lower(): tool
            for key, tool in self.fake.builtin_tools.items()
        }


@_mutant(
    "builtin-schema-rejects-baseline",
    "TOOLSPEC-008",
    "The `bash` built-in's input schema requires `cmd`, rejecting the baseline `{command}`.",
    area="tool merging",
    profile="claude-code",
)
class _NarrowBashSchema(MutantAdapter):
    @property
    def builtin_tools(self) -> Mapping[str, BuiltinTool]:
        """`bash` requires `cmd`, so baseline `{command}` inputs do not validate."""
        return {
            key: tool.model_copy(
                update={
                    "input_schema": {
                        "type": "object",
                        "properties": {"cmd": {"type": "string"}},
                        "required": ["cmd"],
                    }
                }
            )
            if key == "bash"
            else tool
            for key, tool in self.fake.builtin_tools.items()
        }


def _replace_tools(
    tools: Mapping[str, BuiltinTool], change: Callable[[BuiltinTool], dict[str, Any]]
) -> dict[str, BuiltinTool]:
    # model_copy skips validation, which is the point for declarations the models reject.
    return {
        key: tool.model_copy(update=change(tool)) if tool.common_name else tool
        for key, tool in tools.items()
    }


@_mutant(
    "unknown-tool-use-kind",
    "TOOLSPEC-010",
    "Common built-ins declare the tool kind `write`, which harness-v1 does not know.",
    area="tool merging",
    profile="claude-code",
)
class _UnknownToolKind(MutantAdapter):
    @property
    def builtin_tools(self) -> Mapping[str, BuiltinTool]:
        """Common built-ins declare the tool kind `write`."""
        return _replace_tools(self.fake.builtin_tools, lambda tool: {"tool_use_kind": "write"})


# -- filtering -----------------------------------------------------------------------------


@_mutant(
    "filter-mode-inverted",
    "FILTER-010",
    "The runtime reads a deny list as an allow list (and an allow list as a deny list).",
    area="filtering",
    profile="claude-code",
)
class _FilterModeInverted(MutantSession):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        given = self.start_options.builtin_tool_filtering
        if given is not None:
            inverted: Literal["allow", "deny"] = "allow" if given.mode == "deny" else "deny"
            _runtime_options(
                self,
                builtin_tool_filtering=BuiltinToolFiltering(
                    mode=inverted, tool_names=list(given.tool_names)
                ),
            )


@_mutant(
    "inactive-builtin-executed",
    "FILTER-011",
    "Without native filtering, excluded built-ins run without an approval request.",
    area="filtering",
    profile="opencode",
)
@_mutant(
    "filtering-claimed-but-ignored",
    "FILTER-010",
    "The profile claims native filtering; the runtime accepts the filter and ignores it.",
    area="filtering",
    profile="codex",
    profile_changes={"supports_builtin_tool_filtering": True},
)
class _FilterIgnored(MutantSession):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        _runtime_options(self, builtin_tool_filtering=None)


@_mutant(
    "filtering-claimed-but-refused",
    "FILTER-019",
    "supports_builtin_tool_filtering is True but do_start refuses every filter.",
    area="filtering",
    profile="codex",
    claims={"builtin_tool_filtering": True},
)
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


@_mutant(
    "runs-before-approval",
    "APPROVAL-004",
    "The runtime asks for approval and runs the built-in without waiting for the answer.",
    area="approvals",
    profile="claude-code",
)
class _RunsBeforeApproval(MutantSession):
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


@_mutant(
    "runs-after-denial",
    "APPROVAL-035",
    "A denial reaches the runtime as an approval.",
    area="approvals",
    profile="claude-code",
)
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


@_mutant(
    "runs-twice-after-approval",
    "APPROVAL-034",
    "An approved built-in is executed twice.",
    area="approvals",
    profile="claude-code",
)
class _RunsTwice(_ApprovalTracking):
    control_class = _ApprovedCallsControl

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.approved: list[str] = []
        self.inner.workspace = _RepeatingWorkspace(self.inner.workspace, self)


@_mutant(
    "approved-result-missing",
    "APPROVAL-034",
    "The tool-result of an approved built-in is never emitted.",
    area="approvals",
    profile="claude-code",
)
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


@_mutant(
    "approval-lost-after-restore",
    "APPROVAL-034",
    "In a session continued from a JSON state, approval decisions never reach the turn.",
    area="approvals",
    profile="claude-code",
)
class _LosesApprovalsAfterRestore(MutantSession):
    control_class = _LosesApprovalsControl


class _NoApprovalMethodControl(MutantControl):
    offers_approval = False


@_mutant(
    "approvals-claimed-without-method",
    "ADAPTER-048",
    "supports_builtin_tool_approvals is True but prompt controls lack submit_tool_approval.",
    area="approvals",
    profile="claude-code",
)
class _NoApprovalMethod(MutantSession):
    control_class = _NoApprovalMethodControl


@_mutant(
    "asks-under-allow-all",
    "APPROVAL-002",
    "Under allow-all the runtime still asks before edits and shell commands.",
    area="approvals",
    profile="claude-code",
)
class _AsksUnderAllowAll(MutantSession):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        if self.start_options.permission_mode == "allow-all":
            _runtime_options(self, permission_mode="allow-reads")


@_mutant(
    "shell-unasked-under-allow-edits",
    "APPROVAL-003",
    "Under allow-edits the runtime runs shell commands without asking.",
    area="approvals",
    profile="claude-code",
)
class _NoApprovalUnderAllowEdits(MutantSession):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        if self.start_options.permission_mode == "allow-edits":
            _runtime_options(self, permission_mode="allow-all")


@_mutant(
    "permission-modes-refused",
    "APPROVAL-040",
    "An approval-capable adapter refuses every permission mode but allow-all.",
    area="approvals",
    profile="claude-code",
)
class _ModesRefused(MutantAdapter):
    def start_options(self, options: StartOptions) -> StartOptions:
        if options.permission_mode != "allow-all":
            raise HarnessCapabilityUnsupportedError(
                f"Harness '{self.harness_id}' only runs with permissionMode 'allow-all'.",
                harness_id=self.harness_id,
            )
        return options


@_mutant(
    "builtins-without-tool-kind",
    "APPROVAL-005",
    "Common built-ins declare no tool_use_kind although the runtime classifies them.",
    area="approvals",
    profile="claude-code",
)
class _UnclassifiedBuiltins(MutantAdapter):
    @property
    def builtin_tools(self) -> Mapping[str, BuiltinTool]:
        """Common built-ins declare no tool kind."""
        return _replace_tools(self.fake.builtin_tools, lambda tool: {"tool_use_kind": None})


# -- dynamic parts -------------------------------------------------------------------------


@_mutant(
    "file-change-wrong-event",
    "STREAM-019",
    "New files are reported as `modify` on a runtime that reports exact events.",
    area="dynamic parts",
    profile="codex",
)
class _CreateAsModify(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, FileChangePart) and part.event == "create":
            return [part.model_copy(update={"event": "modify"})]
        return [part]


@_mutant(
    "file-change-odd-path",
    "STREAM-019",
    "file-change paths lose their leading slash, so the work dir cannot be stripped.",
    area="dynamic parts",
    profile="codex",
)
class _RootRelativePaths(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, FileChangePart):
            return [part.model_copy(update={"path": part.path.lstrip("/")})]
        return [part]


@_mutant(
    "file-change-missing",
    "STREAM-019",
    "Files created by an opaque mutation get no file-change part.",
    area="dynamic parts",
    profile="codex",
)
class _SilentCreates(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        return [] if isinstance(part, FileChangePart) and part.event == "create" else [part]


_register(
    "file-change-for-tool-write",
    "STREAM-018",
    "Writes of visible write/edit calls are also reported as file-change.",
    area="dynamic parts",
    profile="opencode",
    profile_changes={"file_change_for_tool_writes": True},
)


# -- continuations -------------------------------------------------------------------------


_FRAMING = frozenset({"stream-start", "finish-step", "finish"})


@_mutant(
    "replay-duplicates-event",
    "ADAPTER-032",
    "A continued turn delivers the last content part before the suspension again.",
    area="continuations",
    profile="codex",
)
class _CursorBehind(MutantSession):
    """Remembers this turn's emitted part types to re-deliver the last content part."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._types: list[str] = []

    def rewrite(self, part: Any) -> list[Any]:
        self._types.append(str(getattr(part, "type", "")))
        return [part]

    async def do_prompt_turn(self, options: PromptTurnOptions) -> PromptControl:
        self._types = []
        return await super().do_prompt_turn(options)

    def state(self, state: Any) -> Any:
        trailing = 0
        for part_type in reversed(self._types):
            if part_type not in _FRAMING:
                break
            trailing += 1

        def back(turn: dict[str, Any]) -> None:
            # One part too far back: the last content part is delivered again.
            turn["cursor"] = max(0, int(turn["cursor"]) - trailing - 1)
            turn["ended"] = False

        return _with_turn(state, back) if _wire_state(state)["type"] == "continue-turn" else state


@_mutant(
    "replay-skips-event",
    "ADAPTER-032",
    "A turn continued from a state loses the first event it should deliver.",
    area="continuations",
    profile="codex",
)
class _SkipsFirstReplayed(MutantSession):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._skip = self.start_options.continue_from is not None

    def rewrite(self, part: Any) -> list[Any]:
        if self._skip and str(getattr(part, "type", "")) not in _FRAMING:
            # The first event a continued turn delivers is lost.
            self._skip = False
            return []
        return [part]


@_mutant(
    "resume-answers-previous-prompt",
    "LIFECYCLE-040",
    "A resumed session answers its first prompt with the previous turn's answer.",
    area="continuations",
)
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


@_mutant(
    "state-with-foreign-harness-id",
    "LIFECYCLE-005",
    "Lifecycle states claim another harness, so no session of this one accepts them.",
    area="continuations",
)
class _ForeignHarnessId(MutantSession):
    def state(self, state: Any) -> Any:
        wire = _wire_state(state)
        wire["harnessId"] = "other-harness"
        return wire


@_mutant(
    "state-not-json",
    "LIFECYCLE-006",
    "Lifecycle state data holds a Python set.",
    area="continuations",
)
class _NotJsonData(MutantSession):
    def state(self, state: Any) -> Any:
        wire = _wire_state(state)
        data = wire.get("data")
        if isinstance(data, dict):
            wire["data"] = {**data, "openFiles": {"notes.md"}}  # a set: not JSON
        return wire


@_mutant(
    "resume-state-with-pending-list",
    "LIFECYCLE-007",
    "resume-session states carry an empty pendingToolApprovals list.",
    area="continuations",
)
class _PendingInResumeState(MutantSession):
    def state(self, state: Any) -> Any:
        wire = _wire_state(state)
        if wire.get("type") == "resume-session":
            wire["pendingToolApprovals"] = []
        return wire


@_mutant(
    "restored-turn-not-continued",
    "LIFECYCLE-041",
    "A session started from a continue-turn state refuses do_continue_turn.",
    area="continuations",
    profile="codex",
)
class _ContinueRefusedAfterRestore(MutantSession):
    async def do_continue_turn(self, options: ContinueTurnOptions) -> PromptControl:
        if self.start_options.continue_from is not None:
            raise HarnessSessionStateError(
                f"Fake harness session {self.session_id} cannot continue a restored turn."
            )
        return await super().do_continue_turn(options)


@_mutant(
    "suspend-returns-resume-state",
    "ADAPTER-030",
    "do_suspend_turn returns a resume-session state instead of a continue-turn state.",
    area="continuations",
)
class _SuspendReturnsResumeState(MutantSession):
    def state(self, state: Any) -> Any:
        wire = _wire_state(state)
        if wire.get("type") == "continue-turn":
            wire["type"] = "resume-session"
        return wire


# -- lifecycle -----------------------------------------------------------------------------


@_mutant(
    "accepts-calls-after-destroy",
    "ADAPTER-037",
    "do_destroy kills the turn but the session keeps accepting turns.",
    area="lifecycle",
)
class _StaysOpenAfterDestroy(MutantSession):
    async def do_destroy(self) -> None:
        # Kills the running turn but forgets to mark the session ended.
        turn = self.inner.turn
        if turn is not None:
            turn.kill(FakeHarnessError(f"Fake harness session {self.session_id} was destroyed."))


@_mutant(
    "destroy-returns-value",
    "ADAPTER-035",
    "do_destroy returns a dict instead of None.",
    area="lifecycle",
)
class _DestroyReturnsState(MutantSession):
    async def do_destroy(self) -> Any:
        await super().do_destroy()
        return {"destroyed": True}


class _SuspendRaisesControl(MutantControl):
    async def done(self) -> None:
        await super().done()
        session = self.session
        assert isinstance(session, _SuspendRaises)
        if session.suspending:
            raise HarnessSessionStateError("The turn was suspended.")


@_mutant(
    "done-raises-after-suspend",
    "ADAPTER-031",
    "After do_suspend_turn the turn's done() raises instead of returning.",
    area="lifecycle",
    profile="codex",
)
class _SuspendRaises(MutantSession):
    control_class = _SuspendRaisesControl

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.suspending = False

    async def do_prompt_turn(self, options: PromptTurnOptions) -> PromptControl:
        self.suspending = False
        return await super().do_prompt_turn(options)

    async def do_continue_turn(self, options: ContinueTurnOptions) -> PromptControl:
        self.suspending = False
        return await super().do_continue_turn(options)

    async def do_suspend_turn(self) -> ContinueTurnState:
        # Set before suspending: done() of a running turn returns during the suspension.
        self.suspending = True
        return await super().do_suspend_turn()


@_mutant(
    "compaction-claimed-never-emitted",
    "ADAPTER-040",
    "do_compact succeeds but its manual compaction part is never emitted.",
    area="lifecycle",
    profile="pi",
)
class _ManualCompactionHidden(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        if isinstance(part, CompactionPart) and part.trigger == "manual":
            return []
        return [part]


@_mutant(
    "compaction-emitted-twice",
    "STREAM-021",
    "Every compaction part is emitted twice.",
    area="lifecycle",
    profile="pi",
)
class _DoubleCompaction(MutantSession):
    def rewrite(self, part: Any) -> list[Any]:
        return [part, part] if isinstance(part, CompactionPart) else [part]


@_mutant(
    "sandbox-stopped-by-adapter",
    "ADAPTER-017",
    "do_stop also stops the sandbox session the adapter was given.",
    area="lifecycle",
)
class _StopsItsSandbox(MutantSession):
    async def do_stop(self) -> ResumeSessionState:
        state = await super().do_stop()
        stop = getattr(self.start_options.sandbox_session, "stop", None)
        if stop is not None:
            await stop()
        return state


@_mutant(
    "session-without-do-compact",
    "ADAPTER-022",
    "Adapter sessions have no do_compact.",
    area="lifecycle",
)
class _NoCompactMethod(MutantSession):
    do_compact = None  # type: ignore[assignment]


# -- robustness ----------------------------------------------------------------------------


@_mutant(
    "hangs-without-timeout",
    "ADAPTER-042",
    "The runtime stalls before `finish` and the adapter neither times out nor observes abort.",
    area="robustness",
    fake={"faults": [HangFault(before_type="finish")]},
    # Every turn hangs: a short declared timeout keeps the dozen failing checks quick.
    claims={"turn_timeout": 0.5},
)
@_mutant(
    "abort-not-wired",
    "ADAPTER-042",
    "The turn's abort event never reaches the runtime.",
    area="robustness",
)
class _AbortNotWired(MutantSession):
    def prompt_options(self, options: PromptTurnOptions) -> PromptTurnOptions:
        return dataclasses.replace(options, abort=None)

    def continue_options(self, options: ContinueTurnOptions) -> ContinueTurnOptions:
        return dataclasses.replace(options, abort=None)


class _NeverSettlesControl(MutantControl):
    async def done(self) -> None:
        try:
            await super().done()
        except FakeHarnessCrashError:
            # The runtime died; nobody tells the host, so done() never settles.
            await anyio.sleep_forever()


@_mutant(
    "crash-leaves-turn-unsettled",
    "ADAPTER-044",
    "When the runtime fails mid-turn, done() never returns or raises.",
    area="robustness",
    claims={"turn_timeout": 1.0},
)
class _NeverSettlesOnFailure(MutantSession):
    control_class = _NeverSettlesControl


# -- session identity ----------------------------------------------------------------------


@_mutant(
    "wrong-session-id",
    "ADAPTER-023",
    "session_id is the runtime's own id, not the one given to do_start.",
    area="session identity",
)
class _SuffixedSessionId(MutantSession):
    @property
    def session_id(self) -> str:
        """The runtime's own id instead of the one given to do_start."""
        return f"{self.inner.session_id}-runtime"


@_mutant(
    "is-resume-always-false",
    "ADAPTER-024",
    "is_resume is False even for sessions started from a state.",
    area="session identity",
    profile="codex",
)
class _NeverResumed(MutantSession):
    @property
    def is_resume(self) -> bool:
        """Always False."""
        return False


@_mutant(
    "wrong-specification-version",
    "ADAPTER-001",
    "specification_version is `harness-v2`.",
    area="session identity",
)
class _WrongSpecificationVersion(MutantAdapter):
    @property
    def specification_version(self) -> str:
        """Not harness-v1."""
        return "harness-v2"


_register(
    "harness-id-not-kebab-case",
    "ADAPTER-004",
    "harness_id is `Fake_Harness`.",
    area="session identity",
    fake={"harness_id": "Fake_Harness"},
)


@_mutant(
    "harness-id-changes",
    "ADAPTER-003",
    "harness_id alternates between two values from one read to the next.",
    area="session identity",
)
class _FlappingHarnessId(MutantAdapter):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._reads = 0

    @property
    def harness_id(self) -> str:
        """Every other read names another harness."""
        self._reads += 1
        return self.fake.harness_id if self._reads % 2 else f"{self.fake.harness_id}-runtime"


@_mutant(
    "bootstrap-not-deterministic",
    "BOOTSTRAP-003",
    "get_bootstrap() returns a different recipe on every call.",
    area="session identity",
)
class _UnstableBootstrap(MutantAdapter):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._calls = 0

    async def get_bootstrap(self) -> Bootstrap:
        """A recipe whose marker file changes on every call."""
        self._calls += 1
        return Bootstrap(
            harness_id=self.harness_id,
            bootstrap_dir=".harness/fake",
            files=[BootstrapFile(path="marker.txt", content=f"generation {self._calls}\n")],
        )


# -- capability honesty --------------------------------------------------------------------


@_mutant(
    "json-format-accepted-undeclared",
    "ADAPTER-041",
    "A runtime without JSON output runs JSON turns as plain text instead of refusing them.",
    area="capability honesty",
)
class _JsonFormatDropped(MutantSession):
    def prompt_options(self, options: PromptTurnOptions) -> PromptTurnOptions:
        return dataclasses.replace(options, response_format=None)

    def continue_options(self, options: ContinueTurnOptions) -> ContinueTurnOptions:
        return dataclasses.replace(options, response_format=None)


@_mutant(
    "json-schema-ignored",
    "RESULT-020",
    "JSON turns keep the JSON format but lose their schema on the way to the runtime.",
    area="capability honesty",
    profile="codex",
)
class _SchemaIgnored(MutantSession):
    def prompt_options(self, options: PromptTurnOptions) -> PromptTurnOptions:
        response_format = options.response_format
        if isinstance(response_format, JsonResponseFormat) and response_format.schema_:
            # The runtime keeps "JSON" but drops the schema it was given.
            response_format = response_format.model_copy(update={"schema_": {}})
        return dataclasses.replace(options, response_format=response_format)


class _SteeringStubControl(MutantControl):
    offers_steering = True

    async def _submit_user_message(self, text: str) -> None:
        return None  # offered, accepted, and dropped


@_mutant(
    "steering-method-undeclared",
    "ADAPTER-010",
    "Controls offer submit_user_message although the runtime cannot steer (it drops the text).",
    area="capability honesty",
    profile="codex",
)
class _SteeringStub(MutantSession):
    control_class = _SteeringStubControl


@_mutant(
    "compact-undeclared-accepted",
    "ADAPTER-039",
    "do_compact returns normally although the runtime cannot compact.",
    area="capability honesty",
)
class _SilentCompact(MutantSession):
    async def do_compact(self, custom_instructions: str | None = None) -> None:
        return None  # accepted and ignored, although the runtime cannot compact


class _DeferredSteeringControl(MutantControl):
    async def _submit_user_message(self, text: str) -> None:
        session = self.session
        assert isinstance(session, _DeferredSteering)
        session.deferred.append(text)


@_mutant(
    "steering-deferred",
    "STOP-014",
    "A user message sent during a turn reaches the runtime only with the next turn.",
    area="capability honesty",
    profile="claude-code",
)
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


# -- turn settings -------------------------------------------------------------------------


@_mutant(
    "instructions-dropped",
    "PROMPT-007",
    "The turn's instructions never reach the runtime.",
    area="turn settings",
)
class _InstructionsDropped(MutantSession):
    def prompt_options(self, options: PromptTurnOptions) -> PromptTurnOptions:
        return dataclasses.replace(options, instructions=None)


@_mutant(
    "skills-accumulate",
    "ADAPTER-027",
    "Skills of earlier turns stay offered on later turns.",
    area="turn settings",
)
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


@_mutant(
    "host-output-lost",
    "HOSTTOOL-006",
    "Host tool results reach the runtime with a null output.",
    area="turn settings",
)
class _HostOutputLost(MutantSession):
    control_class = _HostOutputLostControl


# -- the zoo -------------------------------------------------------------------------------


def mutants() -> list[Mutant]:
    """Every mutant of the zoo, grouped by area."""
    return [spec.build() for spec in _ordered()]


def get_mutant(name: str) -> Mutant:
    """The mutant called ``name``.

    Raises:
        KeyError: naming the known mutants.
    """
    for spec in _ZOO:
        if spec.name == name:
            return spec.build()
    raise KeyError(f"no mutant named {name!r}; known: {', '.join(mutant_names())}")


def mutant_names() -> tuple[str, ...]:
    """The names of the zoo's mutants, in order."""
    return tuple(spec.name for spec in _ordered())


def _ordered() -> list[_Spec]:
    # Stacked decorators register bottom-up; the matrix lists areas in AREAS order.
    return sorted(_ZOO, key=lambda spec: AREAS.index(spec.area))
