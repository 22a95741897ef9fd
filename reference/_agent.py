"""``HarnessAgent``: the reference agent with the official harness-v1 semantics.

One idea: the agent's public surface (construction checks, sessions, ``stream``/``generate``
and their continuations, the call settings they freeze) in one class; the turn engine,
sessions and results live in their own modules.
"""

from __future__ import annotations

import inspect
import posixpath
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO, TypeAlias

import anyio
from pydantic import BaseModel, TypeAdapter

from harness_testkit.sandbox import LocalSandboxProvider
from harness_testkit.spec import (
    Bootstrap,
    BuiltinTool,
    BuiltinToolFiltering,
    ContinueTurnState,
    HarnessAdapter,
    HarnessCapabilityUnsupportedError,
    HarnessError,
    HarnessUsageError,
    JsonResponseFormat,
    NetworkSandboxSession,
    NoSuchToolError,
    PermissionMode,
    ResponseFormat,
    ResumeSessionState,
    SandboxProvider,
    SandboxSession,
    Skill,
    StartOptions,
    TextResponseFormat,
    ToolSpec,
    TurnSettings,
    UserMessage,
    parse_lifecycle_state,
    parse_stream_part,
    sandbox_bootstrap_identity,
)

from ._continuations import (
    extract_message_continuations,
    normalize_approval_continuations,
    normalize_result_continuations,
)
from ._fast import Trusted
from ._ids import IdGenerator, Timestamps, system_clock
from ._results import GenerateResult
from ._sandbox_setup import (
    SandboxConfig,
    apply_bootstrap_recipe,
    ensure_directory,
    resolve_default_working_directory,
    validate_sandbox_config,
)
from ._session import AgentSession
from ._stream_result import MAX_RETAINED_PARTS, StreamResult
from ._tool import Tool
from ._turn_machine import QUESTIONS_TOOL
from ._turn_state import (
    ApprovalContinuation,
    FrozenTurn,
    ResultContinuation,
    StopCondition,
    TurnCore,
)

__all__ = ["HarnessAgent", "PrepareCall", "compute_tool_filtering"]

#: ``prepare_call(call)`` receives ``{model, skills, instructions, tools, tools_context,
#: prompt, messages, options}`` and returns a replacement (omitted keys become ``None``),
#: or ``None`` to keep the call as it is. It may be async.
PrepareCall: TypeAlias = Callable[
    [dict[str, Any]], dict[str, Any] | Awaitable[dict[str, Any] | None] | None
]

_IMPORT_STDERR = sys.stderr
_MANAGED_HEADERS = ("authorization", "x-api-key", "user-agent", "x-client-app")


def compute_tool_filtering(
    builtin_tools: Mapping[str, BuiltinTool],
    user_tools: Mapping[str, Tool],
    active_tools: Sequence[str] | None,
    inactive_tools: Sequence[str] | None,
) -> tuple[dict[str, Tool], BuiltinToolFiltering | None]:
    """Apply ``active_tools``/``inactive_tools`` (spec 4.1-4.5).

    Returns:
        The active user tools (in user-tool order) and the built-in filter (``None``
        when no built-in is disabled).

    Raises:
        HarnessUsageError: both lists given.
        NoSuchToolError: a listed name is neither a built-in nor a user tool.
    """
    if active_tools is None and inactive_tools is None:
        return dict(user_tools), None  # nothing filtered (every turn of most agents)
    if active_tools is not None and inactive_tools is not None:
        raise HarnessUsageError(
            "HarnessAgent: pass either `activeTools` or `inactiveTools`, not both."
        )
    merged_names = list({**dict.fromkeys(builtin_tools), **dict.fromkeys(user_tools)})
    listed = active_tools if active_tools is not None else inactive_tools
    names = list(dict.fromkeys(listed or ()))
    for name in names:
        if name not in merged_names:
            raise NoSuchToolError(name, merged_names)
    if active_tools is not None:
        active = {key: value for key, value in user_tools.items() if key in names}
        disabled = [key for key in builtin_tools if key not in names]
        allowed = [key for key in builtin_tools if key in names]
        return active, (
            BuiltinToolFiltering(mode="allow", tool_names=allowed) if disabled else None
        )
    active = {key: value for key, value in user_tools.items() if key not in names}
    denied = [key for key in builtin_tools if key in names]
    return active, (BuiltinToolFiltering(mode="deny", tool_names=denied) if denied else None)


def _data_validator(harness: HarnessAdapter) -> Callable[[Any], Any] | None:
    schema = getattr(harness, "lifecycle_state_schema", None)
    if schema is None:
        return None
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        model = schema
        return lambda data: model.model_validate(data).model_dump(mode="json")
    if isinstance(schema, TypeAdapter):
        adapter = schema
        return lambda data: adapter.dump_python(adapter.validate_python(data), mode="json")
    if callable(schema):
        return schema  # type: ignore[no-any-return]
    raise HarnessUsageError(
        "harness.lifecycle_state_schema must be a pydantic model class, a TypeAdapter or a "
        f"callable that parses `data`; got {type(schema).__name__}."
    )


@dataclass  # (not frozen: a frozen dataclass writes each field through object.__setattr__)
class _PreparedCall:
    prompt: UserMessage
    model: str | None
    skills: list[Skill]
    instructions: str | None
    tools: dict[str, Tool]
    tools_context: Mapping[str, Any]


class HarnessAgent:
    """Runs harness-v1 adapters with the official agent semantics.

    Args:
        harness: The adapter.
        sandbox: A sandbox provider; ``None`` uses the embedded local provider (a
            temporary directory per session, no Docker needed).
        sandbox_session: A caller-owned sandbox session used for every session (the
            agent never stops or destroys it).
        tools: Host tools by name (see :func:`harness_testkit.reference.tool`).
        active_tools: Allow list of tool names (built-in and host); exclusive with
            ``inactive_tools``.
        inactive_tools: Deny list of tool names.
        tool_approval: Host tool name -> ``"not-applicable" | "approved" |
            "user-approval" | "denied"`` (or ``{"type": ..., "reason": ...}``).
        permission_mode: Built-in approvals: ``allow-all`` (default), ``allow-edits``,
            ``allow-reads``.
        instructions: System instructions (a string or ``{"role": "system", "content"}``).
        skills: Skills sent with every turn (and available for the whole session).
        tools_context: Tool name -> context value, validated by each tool's
            ``context_schema`` before execution; never sent to the runtime.
        prepare_call: Per-prompt preparation hook (see :data:`PrepareCall`).
        stop_when: One predicate or a list; evaluated between steps.
        model: The default model id sent with every turn.
        output: ``"text"``, a JSON Schema dict for JSON output, or a ``ResponseFormat``.
        headers: Extra request headers for the runtime (managed ones are refused).
        sandbox_config: Work dir and setup hooks (:class:`SandboxConfig`).
        id_generator: Mints ids (seed it for reproducible transcripts).
        clock: Timestamps of step responses.
        abort_grace: Seconds to wait for an aborted adapter turn to settle.
        drain_timeout: Seconds ``suspend_turn``/``detach``/``stop`` wait for a suspended
            turn's stream to close.
        max_stream_parts: The most consumer parts one stream result retains for its
            readers (late readers see every part from the start); a slice that would
            exceed it fails with ``PartLimitExceededError``.
        error_log: Where failed turns are reported as
            ``[harness:<id>:error session=<id>] ...`` lines (default stderr; ``None`` for
            silence).
        id: The agent's id (the AI SDK ``Agent.id``), exposed as ``agent.id``.

    Raises:
        HarnessUsageError, NoSuchToolError, HarnessCapabilityUnsupportedError: invalid
            settings, in the specification's order (11.9).
    """

    def __init__(
        self,
        *,
        harness: HarnessAdapter,
        sandbox: SandboxProvider | None = None,
        sandbox_session: SandboxSession | None = None,
        tools: Mapping[str, Tool] | None = None,
        active_tools: Sequence[str] | None = None,
        inactive_tools: Sequence[str] | None = None,
        tool_approval: Mapping[str, Any] | None = None,
        permission_mode: PermissionMode = "allow-all",
        instructions: str | Mapping[str, Any] | None = None,
        skills: Sequence[Skill] | None = None,
        tools_context: Mapping[str, Any] | None = None,
        prepare_call: PrepareCall | None = None,
        stop_when: StopCondition | Sequence[StopCondition] | None = None,
        model: str | None = None,
        output: str | Mapping[str, Any] | ResponseFormat | None = None,
        headers: Mapping[str, str | None] | None = None,
        sandbox_config: SandboxConfig | None = None,
        id_generator: IdGenerator | None = None,
        clock: Timestamps | None = None,
        abort_grace: float = 10.0,
        drain_timeout: float = 30.0,
        max_stream_parts: int = MAX_RETAINED_PARTS,
        error_log: TextIO | None = sys.stderr,
        id: str | None = None,
    ) -> None:
        version = getattr(harness, "specification_version", None)
        if version != "harness-v1":
            raise HarnessError(
                f"HarnessAgent: harness '{getattr(harness, 'harness_id', '?')}' implements "
                f"specificationVersion '{version}'; expected 'harness-v1'."
            )
        self.harness = harness
        #: The agent's id setting (AI SDK ``Agent.id``), ``None`` when not given.
        self.id = id
        self.harness_id: str = harness.harness_id
        self.work_dir_setting = validate_sandbox_config(sandbox_config)
        self.sandbox_config = sandbox_config
        self.headers = self._normalize_headers(headers)
        user_tools = dict(tools or {})
        builtins = dict(harness.builtin_tools)
        self._check_reserved(user_tools, builtins)
        active, builtin_filter = compute_tool_filtering(
            builtins, user_tools, active_tools, inactive_tools
        )
        if builtin_filter is not None and not (
            getattr(harness, "supports_builtin_tool_filtering", None) is True
            or getattr(harness, "supports_builtin_tool_approvals", None) is True
        ):
            raise HarnessCapabilityUnsupportedError(
                f"Harness '{self.harness_id}' does not support built-in tool filtering controls.",
                harness_id=self.harness_id,
            )
        if (
            builtins
            and permission_mode != "allow-all"
            and getattr(harness, "supports_builtin_tool_approvals", None) is not True
        ):
            raise HarnessCapabilityUnsupportedError(
                f"Harness '{self.harness_id}' does not support built-in tool approval requests; "
                "use permissionMode: 'allow-all'.",
                harness_id=self.harness_id,
            )
        self.sandbox = sandbox
        self.sandbox_session = sandbox_session
        self.user_tools = user_tools
        #: Built-in tools merged with host tools; a host tool wins a name collision.
        self.tools: dict[str, Tool | BuiltinTool] = {**builtins, **user_tools}
        self.active_tools = None if active_tools is None else list(active_tools)
        self.inactive_tools = None if inactive_tools is None else list(inactive_tools)
        self.builtin_filter = builtin_filter
        self.static_active_tools = active
        self.tool_approval = dict(tool_approval or {})
        self.permission_mode: PermissionMode = permission_mode
        self.instructions = _instructions_text(instructions)
        self.skills = list(skills or [])
        self._skills_given = skills is not None
        self.tools_context = dict(tools_context or {})
        self.prepare_call = prepare_call
        if stop_when is None:
            self.stop_when: list[StopCondition] = []
        elif callable(stop_when):
            self.stop_when = [stop_when]
        else:
            self.stop_when = list(stop_when)
        self.model = model
        self.response_format = _response_format(output)
        self.has_output = output is not None
        self.ids = id_generator or IdGenerator()
        self.clock = clock or system_clock
        self.abort_grace = abort_grace
        self.drain_timeout = drain_timeout
        if isinstance(max_stream_parts, bool) or not isinstance(max_stream_parts, int):
            raise HarnessUsageError(
                f"HarnessAgent: max_stream_parts must be an int, got {max_stream_parts!r}."
            )
        if max_stream_parts < 2:
            raise HarnessUsageError(
                f"HarnessAgent: max_stream_parts must be at least 2 (start and a terminal "
                f"part), got {max_stream_parts}."
            )
        self.max_stream_parts = max_stream_parts
        # The default is the stderr of import time; use the one of now (redirected since?).
        self.error_log = sys.stderr if error_log is _IMPORT_STDERR else error_log
        self.data_validator = _data_validator(harness)

    # -- settings helpers ----------------------------------------------------------------

    @staticmethod
    def _normalize_headers(headers: Mapping[str, str | None] | None) -> dict[str, str]:
        normalized: dict[str, str] = {}
        for key, value in (headers or {}).items():
            lowered = key.lower()
            if lowered in _MANAGED_HEADERS:
                raise HarnessUsageError(
                    f"HarnessAgent: `headers` must not include the managed header `{lowered}`."
                )
            if value is not None:
                normalized[lowered] = value
        return normalized

    def _check_reserved(
        self, user_tools: Mapping[str, Tool], builtins: Mapping[str, BuiltinTool]
    ) -> None:
        if QUESTIONS_TOOL in builtins and QUESTIONS_TOOL in user_tools:
            raise HarnessUsageError(
                "HarnessAgent tool name 'askUserQuestions' is reserved for harness question requests."
            )

    def _frozen_turn(
        self,
        *,
        user_tools: Mapping[str, Tool],
        model: str | None,
        skills: Sequence[Skill],
        instructions: str | None,
        tools_context: Mapping[str, Any],
    ) -> FrozenTurn:
        builtins = dict(self.harness.builtin_tools)
        self._check_reserved(user_tools, builtins)
        active, builtin_filter = compute_tool_filtering(
            builtins, user_tools, self.active_tools, self.inactive_tools
        )
        specs = [
            ToolSpec(name=name, description=tool.description, input_schema=tool.json_schema())
            for name, tool in active.items()
        ]
        return FrozenTurn(
            settings=_turn_settings(model, list(skills), instructions, specs),
            merged_tools={**builtins, **user_tools},
            executable_tools=dict(active),
            tools_context=tools_context,
            builtin_filter=builtin_filter,
            response_format=self.response_format,
            tool_approval=self.tool_approval,
        )

    # -- sessions ----------------------------------------------------------------------

    async def create_session(
        self,
        *,
        session_id: str | None = None,
        resume_from: ResumeSessionState | Mapping[str, Any] | None = None,
        continue_from: ContinueTurnState | Mapping[str, Any] | None = None,
        sandbox_session: SandboxSession | None = None,
        tools_context: Mapping[str, Any] | None = None,
        abort: anyio.Event | None = None,
    ) -> AgentSession:
        """Create (or resume) a session.

        Args:
            session_id: Stable id; pass the original id back when resuming.
            resume_from: A ``resume-session`` state (possibly with ``continueFrom``).
            continue_from: A ``continue-turn`` state.
            sandbox_session: A caller-owned sandbox session for this session.
            tools_context: Rebinds the tool context of the unfinished turn.
            abort: Set it to abort the adapter's start-up (passed as ``StartOptions.abort``).

        Raises:
            HarnessUsageError: both states given, or ``tools_context`` without a turn.
            InvalidLifecycleStateError: a state of the wrong shape, type, version or
                harness.
        """
        if resume_from is not None and continue_from is not None:
            raise HarnessUsageError(
                "HarnessAgent.createSession: pass either `resumeFrom` or `continueFrom`, not both."
            )
        resume_state: ResumeSessionState | None = None
        continue_state: ContinueTurnState | None = None
        if resume_from is not None:
            parsed = parse_lifecycle_state(
                resume_from,
                expected_type="resume-session",
                harness_id=self.harness_id,
                data_validator=self.data_validator,
            )
            assert isinstance(parsed, ResumeSessionState)
            resume_state = parsed
            continue_state = parsed.continue_from
        elif continue_from is not None:
            parsed = parse_lifecycle_state(
                continue_from,
                expected_type="continue-turn",
                harness_id=self.harness_id,
                data_validator=self.data_validator,
            )
            assert isinstance(parsed, ContinueTurnState)
            continue_state = parsed
        if tools_context is not None and continue_state is None:
            raise HarnessUsageError(
                "HarnessAgent.createSession: `toolsContext` can only rebind an unfinished turn "
                "from `continueFrom` or `resumeFrom`."
            )
        session_id = session_id or self.ids()
        resumed = resume_state is not None or continue_state is not None
        recipe: Bootstrap | None = None
        get_bootstrap = getattr(self.harness, "get_bootstrap", None)
        if get_bootstrap is not None:
            recipe = await get_bootstrap()

        sandbox: SandboxSession
        network: NetworkSandboxSession | None = None  # an agent-owned sandbox
        provided = sandbox_session or self.sandbox_session
        if provided is not None:
            sandbox = provided
            restricted = _restricted(sandbox)
            cwd = await resolve_default_working_directory(sandbox)
            if recipe is not None:
                await apply_bootstrap_recipe(restricted, recipe, cwd)
        else:
            provider = self.sandbox or _default_provider()
            sandbox = network = await self._acquire(provider, session_id, resumed, recipe)
        owned = network is not None
        try:
            if network is not None:
                restricted = network.restricted()
                cwd = network.default_working_directory
                if recipe is not None:
                    await apply_bootstrap_recipe(restricted, recipe, cwd)
            work_dir = posixpath.join(
                cwd, self.work_dir_setting or f"{self.harness_id}-{session_id}"
            )
            await ensure_directory(sandbox, work_dir)
            if self.sandbox_config is not None and self.sandbox_config.on_session is not None:
                await self.sandbox_config.on_session(restricted, work_dir)
            harness_session = await self.harness.do_start(
                StartOptions(
                    session_id=session_id,
                    sandbox_session=sandbox,
                    session_work_dir=work_dir,
                    skills=tuple(self.skills),
                    resume_from=resume_state,
                    continue_from=continue_state,
                    permission_mode=self.permission_mode,
                    builtin_tool_filtering=self.builtin_filter,
                    headers=self.headers or None,
                    abort=abort,
                )
            )
        except BaseException:
            if owned:
                stop = getattr(sandbox, "stop", None)
                if stop is not None:
                    with anyio.CancelScope(shield=True):
                        try:
                            await stop()
                        except Exception:  # the original failure is what matters
                            pass
            raise
        core = TurnCore(
            harness_id=self.harness_id,
            session_id=session_id,
            work_dir=work_dir,
            harness_builtins=dict(self.harness.builtin_tools),
            ids=self.ids,
            clock=self.clock,
        )
        if continue_state is not None:
            core.restore(continue_state, _buffered(continue_state))
        session = AgentSession(
            agent=self,
            harness_session=harness_session,
            core=core,
            sandbox=sandbox,
            tool_sandbox=restricted,
            owns_sandbox=owned,
            restored_turn=lambda: self._frozen_from_state(continue_state, tools_context),
        )
        return session

    async def _acquire(
        self,
        provider: SandboxProvider,
        session_id: str,
        resumed: bool,
        recipe: Bootstrap | None,
    ) -> NetworkSandboxSession:
        if resumed:
            resume = getattr(provider, "resume_session", None)
            if resume is None:
                raise HarnessCapabilityUnsupportedError(
                    f"Sandbox provider '{provider.provider_id}' does not support resume.",
                    harness_id=self.harness_id,
                )
            session: NetworkSandboxSession = await resume(session_id=session_id)
            return session
        recipe_identity = recipe.identity() if recipe is not None else None
        config = self.sandbox_config
        identity = sandbox_bootstrap_identity(
            recipe_identity,
            bootstrap_hash=config.bootstrap_hash if config else None,
            work_dir=self.work_dir_setting,
            has_on_bootstrap=bool(config and config.on_bootstrap),
        )
        on_first_create = None
        if identity is not None:

            async def first_create(restricted: SandboxSession) -> None:
                cwd = await resolve_default_working_directory(restricted)
                if recipe is not None:
                    await apply_bootstrap_recipe(restricted, recipe, cwd)
                if config is not None and config.on_bootstrap is not None:
                    target = (
                        posixpath.join(cwd, self.work_dir_setting) if self.work_dir_setting else cwd
                    )
                    await ensure_directory(restricted, target)
                    await config.on_bootstrap(restricted, target)

            on_first_create = first_create
        return await provider.create_session(
            session_id=session_id, identity=identity, on_first_create=on_first_create
        )

    # -- turns -------------------------------------------------------------------------

    async def stream(
        self,
        *,
        session: AgentSession,
        prompt: UserMessage | Sequence[Any] | None = None,
        messages: Sequence[Any] | None = None,
        abort: anyio.Event | None = None,
        timeout: float | None = None,
        options: Any = None,
    ) -> StreamResult:
        """Run a prompt turn (or a message-derived continuation) and stream it.

        Returns once the adapter's turn is ready; iterate ``result.full_stream``.

        Args:
            session: The session to run on.
            prompt: A string, one user message, or a message list.
            messages: A message list; a trailing ``role: "tool"`` message with approval
                responses or tool results continues the unfinished turn instead.
            abort: Set it to abort the turn (cancelling the consumer does too).
            timeout: Seconds after which the turn is aborted.
            options: Call options handed to ``prepare_call``.
        """
        raw_messages = (
            messages if messages is not None else (prompt if isinstance(prompt, list) else None)
        )
        if raw_messages is not None:
            continuation = extract_message_continuations(raw_messages)
            if continuation is not None:
                approvals, results = continuation
                return await self._continue(session, approvals, results, abort, timeout)
        prepared = await self._prepare(prompt, messages, options)
        frozen = self._frozen_turn(
            user_tools=prepared.tools,
            model=prepared.model,
            skills=prepared.skills,
            instructions=prepared.instructions,
            tools_context=prepared.tools_context,
        )
        session.check_can_prompt()
        result = await session.start_prompt_turn(
            frozen, prepared.prompt, abort=abort, timeout=timeout, structured=self._structured
        )
        result.output_format = self.response_format
        return result

    @property
    def _structured(self) -> bool:
        return isinstance(self.response_format, JsonResponseFormat)

    async def generate(
        self,
        *,
        session: AgentSession,
        prompt: UserMessage | Sequence[Any] | None = None,
        messages: Sequence[Any] | None = None,
        abort: anyio.Event | None = None,
        timeout: float | None = None,
        options: Any = None,
    ) -> GenerateResult:
        """Run a turn to its end (or pause) and return the aggregated result.

        Raises:
            Exception: The turn's error when it failed or was aborted.
        """
        result = await self.stream(
            session=session,
            prompt=prompt,
            messages=messages,
            abort=abort,
            timeout=timeout,
            options=options,
        )
        return await result.to_generate_result()

    async def continue_stream(
        self,
        *,
        session: AgentSession,
        tool_result_continuations: Sequence[Any] | None = None,
        tool_approval_continuations: Sequence[Any] | None = None,
        abort: anyio.Event | None = None,
        timeout: float | None = None,
    ) -> StreamResult:
        """Continue the session's unfinished turn and stream it.

        Args:
            session: The session with an unfinished turn.
            tool_result_continuations: Client tool results: ``{tool_call_id, output,
                is_error}`` (raw form) or AI SDK tool-result parts.
            tool_approval_continuations: AI SDK ``tool-approval-response`` parts.
            abort: Set it to abort the turn.
            timeout: Seconds after which the turn is aborted.
        """
        # The session's state is checked before the continuations are read: a malformed
        # continuation on a session with no unfinished turn reports the turn (as upstream).
        session.check_can_continue()
        return await self._continue(
            session,
            normalize_approval_continuations(tool_approval_continuations),
            normalize_result_continuations(tool_result_continuations),
            abort,
            timeout,
        )

    async def continue_generate(
        self,
        *,
        session: AgentSession,
        tool_result_continuations: Sequence[Any] | None = None,
        tool_approval_continuations: Sequence[Any] | None = None,
        abort: anyio.Event | None = None,
        timeout: float | None = None,
    ) -> GenerateResult:
        """Continue the unfinished turn and return the aggregated result."""
        result = await self.continue_stream(
            session=session,
            tool_result_continuations=tool_result_continuations,
            tool_approval_continuations=tool_approval_continuations,
            abort=abort,
            timeout=timeout,
        )
        return await result.to_generate_result()

    async def steer(self, session: AgentSession, text: str) -> None:
        """Send a user message into the session's running turn (experimental).

        Equivalent to ``session.steer_turn(text)``.
        """
        await session.steer_turn(text)

    experimental_steer = steer

    async def _continue(
        self,
        session: AgentSession,
        approvals: Sequence[ApprovalContinuation],
        results: Sequence[ResultContinuation],
        abort: anyio.Event | None,
        timeout: float | None,
    ) -> StreamResult:
        session.check_can_continue()
        result = await session.start_continuation(
            approvals=approvals,
            results=results,
            abort=abort,
            timeout=timeout,
            structured=self._structured,
        )
        result.output_format = self.response_format
        return result

    def _frozen_from_state(self, state: ContinueTurnState | None, rebound: Any) -> FrozenTurn:
        """Settings of a turn continued on a recreated session (7.7.3)."""
        tools_context = rebound if rebound is not None else self.tools_context
        persisted = state.turn_settings if state is not None else None
        if persisted is None:
            return self._frozen_turn(
                user_tools=self.user_tools,
                model=self.model,
                skills=self.skills,
                instructions=self.instructions,
                tools_context=tools_context,
            )
        current = self._frozen_turn(
            user_tools=self.user_tools,
            model=persisted.model,
            skills=persisted.skills,
            instructions=persisted.instructions,
            tools_context=tools_context,
        )
        executable: dict[str, Tool] = {}
        for spec in persisted.tools:
            tool = current.executable_tools.get(spec.name)
            if tool is None:
                raise HarnessUsageError(
                    f"HarnessAgent cannot continue turn because tool '{spec.name}' is no longer available."
                )
            executable[spec.name] = tool
        current.settings = persisted
        current.executable_tools = executable
        return current

    async def _prepare(
        self,
        prompt: UserMessage | Sequence[Any] | None,
        messages: Sequence[Any] | None,
        options: Any,
    ) -> _PreparedCall:
        if self.prepare_call is None:
            # The agent's own settings, copied once (what the general path below computes
            # without the intermediate dictionaries).
            return _PreparedCall(
                prompt=_normalize_prompt(prompt, messages),
                model=self.model,
                skills=list(self.skills) if self._skills_given else [],
                instructions=_instructions_text(self.instructions),
                tools=dict(self.user_tools),
                tools_context=dict(self.tools_context),
            )
        base: dict[str, Any] = {
            "model": self.model,
            # As upstream, prepare_call sees the setting as given (None when absent).
            "skills": list(self.skills) if self._skills_given else None,
            "instructions": self.instructions,
            "tools": dict(self.user_tools),
            "tools_context": dict(self.tools_context),
            "prompt": prompt,
            "messages": messages,
            "options": options,
        }
        call = base
        returned = self.prepare_call(dict(base))
        if inspect.isawaitable(returned):
            returned = await returned
        if returned is not None:
            # Overrides, key by key (SESSION-027): an omitted or None key keeps the base.
            call = {key: base[key] if returned.get(key) is None else returned[key] for key in base}
            if returned.get("prompt") is not None and returned.get("messages") is None:
                call["messages"] = None
            if returned.get("messages") is not None and returned.get("prompt") is None:
                call["prompt"] = None
            tail = call["messages"] if call["messages"] is not None else call["prompt"]
            if isinstance(tail, list) and extract_message_continuations(tail) is not None:
                raise HarnessUsageError(
                    "HarnessAgent.prepareCall must return a fresh user prompt, not a tool continuation."
                )
        return _PreparedCall(
            prompt=_normalize_prompt(call["prompt"], call["messages"]),
            model=call["model"],
            skills=list(call["skills"] or []),
            instructions=_instructions_text(call["instructions"]),
            tools=dict(call["tools"] or {}),
            tools_context=dict(call["tools_context"] or {}),
        )


_new_settings = Trusted(TurnSettings, *TurnSettings.model_fields)


def _turn_settings(
    model: Any, skills: list[Any], instructions: Any, tools: list[ToolSpec]
) -> TurnSettings:
    """``TurnSettings(...)`` of these values; not validated again when they are what
    validating would keep as they are (a ``str`` or ``None``, ``Skill`` objects: an
    agent's own settings, every turn)."""
    if (
        (model is None or type(model) is str)
        and (instructions is None or type(instructions) is str)
        and all(isinstance(skill, Skill) for skill in skills)
    ):
        values = {"model": model, "skills": skills, "instructions": instructions, "tools": tools}
        return _new_settings.ordered(values)
    return TurnSettings(model=model, skills=skills, instructions=instructions, tools=tools)


def _normalize_prompt(prompt: Any, messages: Sequence[Any] | None) -> UserMessage:
    if isinstance(prompt, str):
        return prompt
    source = prompt if isinstance(prompt, list) else messages
    if isinstance(prompt, dict):
        source = [prompt]
    if source is None:
        raise HarnessUsageError("HarnessAgent: either `prompt` or `messages` is required.")
    for message in reversed(list(source)):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return dict(message)
    raise HarnessUsageError(
        'HarnessAgent: messages must contain at least one `role: "user"` entry.'
    )


def _instructions_text(value: str | Mapping[str, Any] | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    content = value.get("content")
    return content if isinstance(content, str) else None


def _response_format(
    output: str | Mapping[str, Any] | ResponseFormat | None,
) -> ResponseFormat | None:
    if output is None:
        return None
    if isinstance(output, TextResponseFormat | JsonResponseFormat):
        return output
    if output == "text":
        return TextResponseFormat()
    if output == "json":
        return JsonResponseFormat()
    if isinstance(output, Mapping):
        kind = output.get("type")
        if kind == "text":
            return TextResponseFormat()
        if kind == "json":
            # The AI SDK's responseFormat form {type: 'json', schema?, name?, description?}.
            return JsonResponseFormat.model_validate(dict(output))
        return JsonResponseFormat(schema=dict(output))
    raise HarnessUsageError(
        f"HarnessAgent: `output` must be 'text', 'json', a JSON Schema dict or a ResponseFormat; got {output!r}."
    )


def _restricted(session: SandboxSession) -> SandboxSession:
    restricted = getattr(session, "restricted", None)
    if callable(restricted):
        view: SandboxSession = restricted()
        return view
    return session


def _buffered(state: ContinueTurnState) -> list[Any]:
    return [parse_stream_part(part) for part in state.buffered_parts or []]


def _default_provider() -> SandboxProvider:
    # Project decision 1: no sandbox given means the embedded local provider.
    provider: SandboxProvider = LocalSandboxProvider()
    return provider
