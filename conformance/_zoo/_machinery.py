"""The zoo's machinery: wrappers around the fake harness that inject exactly one defect.

A conformance suite is only as good as the bugs it catches. Each :class:`Mutant` is the
fake harness (``harness_testkit.fake_harness``) with one departure from harness-v1,
documented by the one requirement id it breaks; ``harness-testkit selftest`` runs the
whole suite against every mutant and prints the kill matrix (see ``_selftest.py``).

A defect is data: a :class:`Defect` table entry naming its requirement and area plus
the one hook it changes, most often a small function:

- ``rewrite(session, part)``: the parts emitted instead of ``part``;
- ``state(session, state)``: the lifecycle state returned by suspend, detach or stop;
- ``turn_options`` / ``prompt_options``: what the runtime receives for a turn;
- ``on_start(session)``: what the runtime really runs with (``runtime_options``);
- ``tools(adapter)``: the adapter's ``builtin_tools``;
- ``control``: a :class:`MutantControl` subclass mishandling submissions or ``done()``;
- ``session`` / ``adapter``: a subclass for defects of a lifecycle method or attribute;
- the fake's own fault hooks (``fake=``) or a profile that claims what it cannot do.

Per-session memory of a defect lives in :attr:`MutantSession.memo`. The defects live in
the area modules, never in the fake's own code paths; ``_catalog.py`` lists them.
Every mutant declares the capabilities it *claims* (normally exactly those of its
fake-harness profile), so the suite judges it like any adapter.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from harness_testkit.fake_harness import (
    FakeHarness,
    FakeHarnessSession,
    HarnessProfile,
    ObservationLog,
    get_profile,
)
from harness_testkit.spec import (
    BuiltinTool,
    ContinueTurnOptions,
    ContinueTurnState,
    HarnessAdapter,
    HarnessSession,
    JSONValue,
    PromptControl,
    PromptTurnOptions,
    ResumeSessionState,
    StartOptions,
)

from .._capabilities import AdapterCapabilities
from .._context import AdapterTarget
from ._good_targets import capabilities_of

__all__ = [
    "AREAS",
    "Defect",
    "Mutant",
    "MutantAdapter",
    "MutantControl",
    "MutantSession",
    "mutant_target",
    "replace_common_tools",
    "runtime_options",
    "wire_state",
    "with_turn",
]

_Options = TypeVar("_Options", PromptTurnOptions, ContinueTurnOptions)

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

#: Seconds a mutant's turn may take. The fake answers in milliseconds; a short declared
#: timeout keeps a defect that hangs from costing the default 30 s in every check.
_TURN_TIMEOUT = 3.0


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
            factory=self.factory,
            capabilities=self.capabilities,
            name=f"mutant:{self.name}",
            recipe=functools.partial(mutant_target, self.name),
        )


def mutant_target(name: str) -> AdapterTarget:
    """The target of the mutant called ``name`` (how a worker process of a parallel run
    builds it again).

    Raises:
        KeyError: naming the known mutants.
    """
    from ._catalog import get_mutant

    return get_mutant(name).target


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
    """An adapter session forwarding to a :class:`FakeHarnessSession` through the defect.

    The hooks (:meth:`rewrite`, :meth:`prompt_options`, :meth:`continue_options`,
    :meth:`state`, :attr:`control_class`) apply the adapter's :class:`Defect`;
    subclasses may override them or a lifecycle method instead. Anything else
    (``hold_before_part``, ``workspace``, ``turn``) reaches the fake session.
    """

    #: The control wrapper; ``None`` returns the fake's controls unwrapped (or the
    #: defect's ``control``).
    control_class: type[MutantControl] | None = None

    def __init__(self, inner: FakeHarnessSession, adapter: MutantAdapter, options: StartOptions):
        self.inner = inner
        self.adapter = adapter
        self.start_options = options
        self.defect = adapter.defect
        #: Per-session memory of the defect (calls seen, parts held back, ...).
        self.memo: dict[str, Any] = {}
        if self.defect.control is not None:
            self.control_class = self.defect.control
        if self.defect.on_start is not None:
            self.defect.on_start(self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    # -- hooks -------------------------------------------------------------------------

    def rewrite(self, part: Any) -> list[Any]:
        """The parts to emit instead of ``part`` (default: ``part`` unchanged)."""
        if self.defect.rewrite is not None:
            return self.defect.rewrite(self, part)
        return [part]

    def prompt_options(self, options: PromptTurnOptions) -> PromptTurnOptions:
        """The prompt-turn options the runtime receives."""
        if self.defect.prompt_options is not None:
            options = self.defect.prompt_options(self, options)
        if self.defect.turn_options is not None:
            options = self.defect.turn_options(self, options)
        return options

    def continue_options(self, options: ContinueTurnOptions) -> ContinueTurnOptions:
        """The continue-turn options the runtime receives."""
        if self.defect.turn_options is not None:
            options = self.defect.turn_options(self, options)
        return options

    def state(self, state: Any) -> Any:
        """The lifecycle state returned instead of ``state`` (suspend, detach, stop)."""
        if self.defect.state is not None:
            return self.defect.state(self, state)
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
    """A :class:`FakeHarness` behind a thin wrapper whose sessions carry the defect.

    It forwards the adapter contract and the kit's scripting extension (``set_script``,
    ``observations``, ``profile``), so the scripted suites run against it too.
    Subclasses override one adapter attribute, or :meth:`start_options`.

    Args:
        fake: The fake harness doing the real work.
        defect: The defect (default: none, a transparent wrapper).
    """

    def __init__(self, fake: FakeHarness, defect: Defect | None = None) -> None:
        self.fake = fake
        self.defect = defect if defect is not None else _NO_DEFECT
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
        """The fake profile's built-ins (through the defect's ``tools``)."""
        if self.defect.tools is not None:
            return self.defect.tools(self)
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
        return self.defect.session(inner, self, options)


# -- the table entry -----------------------------------------------------------------------


@dataclass(frozen=True)
class Defect:
    """One mutant of the zoo as data: what it breaks and the one hook it changes.

    ``fake`` are :class:`FakeHarness` keyword arguments (fault hooks, harness id);
    ``profile_changes`` alter what the runtime really does (and so what it claims);
    ``claims`` alter only the declared capabilities. The hooks are described in the
    module docstring.
    """

    name: str
    requirement: str
    area: str
    description: str
    profile: str = "minimal"
    rewrite: Callable[[MutantSession, Any], list[Any]] | None = None
    state: Callable[[MutantSession, Any], Any] | None = None
    turn_options: Callable[[MutantSession, Any], Any] | None = None
    prompt_options: Callable[[MutantSession, PromptTurnOptions], PromptTurnOptions] | None = None
    on_start: Callable[[MutantSession], None] | None = None
    tools: Callable[[MutantAdapter], Mapping[str, BuiltinTool]] | None = None
    control: type[MutantControl] | None = None
    session: type[MutantSession] = MutantSession
    adapter: type[MutantAdapter] = MutantAdapter
    fake: Mapping[str, Any] = field(default_factory=dict)
    profile_changes: Mapping[str, Any] = field(default_factory=dict)
    claims: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.area not in AREAS and self.name:
            raise ValueError(
                f"mutant {self.name!r}: unknown area {self.area!r}; use one of {AREAS}"
            )

    def build(self) -> Mutant:
        """The mutant (a fresh factory over this entry)."""
        base = get_profile(self.profile)
        profile = (
            base.model_copy(update=dict(self.profile_changes)) if self.profile_changes else base
        )
        fake_settings = dict(self.fake)
        defect = self

        def factory() -> HarnessAdapter:
            fake = FakeHarness(profile=profile, **fake_settings)
            return defect.adapter(fake, defect)  # type: ignore[return-value]

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


#: The transparent wrapper's "defect": every hook unchanged.
_NO_DEFECT = Defect(name="", requirement="", area="", description="")


# -- helpers the defects share ----------------------------------------------------------------


def runtime_options(session: MutantSession, **changes: Any) -> None:
    """Change the start options the runtime works from, after ``do_start``.

    The fake reads the start options again for every turn; changing them after
    do_start models a runtime that misreads what it was given, while SessionStarted
    (the log of what it received) stays truthful.
    """
    inner = session.inner
    inner._options = dataclasses.replace(inner._options, **changes)


def wire_state(state: Any) -> dict[str, Any]:
    """A lifecycle state (model or dict) as a wire dict."""
    wire = state.to_wire() if hasattr(state, "to_wire") else dict(state)
    assert isinstance(wire, dict)
    return wire


def with_turn(state: Any, change: Callable[[dict[str, Any]], None]) -> Any:
    """A continue-turn state with ``change`` applied to its ``data.turn``."""
    wire = wire_state(state)
    data = wire.get("data")
    if isinstance(data, dict) and isinstance(data.get("turn"), dict):
        change(data["turn"])
    return ContinueTurnState.model_validate(wire)


def replace_common_tools(
    tools: Mapping[str, BuiltinTool], change: Callable[[BuiltinTool], dict[str, Any]]
) -> dict[str, BuiltinTool]:
    """Common-named built-ins with ``change`` applied (model_copy: no validation, which is
    the point for declarations the models reject)."""
    return {
        key: tool.model_copy(update=change(tool)) if tool.common_name else tool
        for key, tool in tools.items()
    }
