"""Async protocols of the harness-v1 contract (anyio: asyncio and trio).

Adapters implement :class:`HarnessAdapter`, :class:`HarnessSession` and
:class:`PromptControl`; sandbox providers implement :class:`SandboxProvider`,
:class:`NetworkSandboxSession`, :class:`SandboxSession` and :class:`SandboxProcess`.
Optional members (``get_bootstrap``, ``lifecycle_state_schema``,
``submit_tool_approval``, ``submit_user_message``, ``resume_session``) are looked up
with ``getattr``; the protocols below list only what is required.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

from ._json import JSONValue
from ._lifecycle import ContinueTurnState, ResumeSessionState
from ._response_format import ResponseFormat
from ._skills import Skill
from ._stream_parts import StreamPart
from ._tools import BuiltinTool, BuiltinToolFiltering, PermissionMode, ToolSpec

if TYPE_CHECKING:
    import anyio
    from anyio.abc import ByteReceiveStream

__all__ = [
    "ContinueTurnOptions",
    "Emit",
    "HarnessAdapter",
    "HarnessSession",
    "NetworkSandboxSession",
    "OnFirstCreate",
    "PortEndpoint",
    "PromptControl",
    "PromptTurnOptions",
    "RunResult",
    "SandboxProcess",
    "SandboxProvider",
    "SandboxSession",
    "StartOptions",
    "UserMessage",
    "prompt_text",
]

#: A user prompt: plain text or one user message ``{"role": "user", "content": ...}``.
UserMessage: TypeAlias = str | dict[str, Any]


def prompt_text(prompt: UserMessage) -> str:
    """The text of a prompt: the string, or the text parts of one user message, joined.

    Args:
        prompt: The prompt a turn was given.

    Returns:
        The text; ``""`` for a message without text parts.
    """
    if isinstance(prompt, str):
        return prompt
    content = prompt.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        )
    return ""


#: The synchronous callback an adapter calls once per stream part, in order. It accepts
#: a part model or the equivalent wire dict; the agent validates what it receives.
Emit: TypeAlias = Callable[[StreamPart | Mapping[str, Any]], None]


# -- sandbox ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RunResult:
    """The outcome of :meth:`SandboxSession.run`; a non-zero exit is not an exception."""

    exit_code: int
    stdout: str
    stderr: str


@dataclass(frozen=True)
class PortEndpoint:
    """Where to reach an exposed sandbox port (send ``headers`` when connecting)."""

    url: str
    headers: Mapping[str, str] | None = None


@runtime_checkable
class SandboxProcess(Protocol):
    """A process started by :meth:`SandboxSession.spawn`."""

    @property
    def pid(self) -> int | None:
        """The process id inside the sandbox, when known."""
        ...

    @property
    def stdout(self) -> ByteReceiveStream:
        """The process's standard output, streamed."""
        ...

    @property
    def stderr(self) -> ByteReceiveStream:
        """The process's standard error, streamed."""
        ...

    async def wait(self) -> int:
        """Wait for the exit code. Raises ``SandboxAbortedError`` when aborted."""
        ...

    async def kill(self) -> None:
        """Kill the process; idempotent."""
        ...


@runtime_checkable
class SandboxSession(Protocol):
    """The bare sandbox surface: files and processes (what host tools receive).

    Paths are absolute or relative to the session's default working directory. Text
    reads take 1-based inclusive line ranges; a missing file reads as ``None``; writes
    create parent directories and overwrite.
    """

    @property
    def description(self) -> str:
        """Human- and model-facing description of the environment."""
        ...

    async def read_text_file(
        self,
        path: str,
        *,
        start_line: int | None = None,
        end_line: int | None = None,
        encoding: str = "utf-8",
    ) -> str | None:
        """Read a text file (optionally lines ``start_line..end_line``), ``None`` if missing."""
        ...

    async def read_binary_file(self, path: str) -> bytes | None:
        """Read a file's bytes, ``None`` if missing."""
        ...

    async def write_text_file(self, path: str, content: str, *, encoding: str = "utf-8") -> None:
        """Write a text file, creating parent directories."""
        ...

    async def write_binary_file(self, path: str, content: bytes) -> None:
        """Write a binary file, creating parent directories."""
        ...

    async def run(
        self,
        command: str,
        *,
        working_directory: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        abort: anyio.Event | None = None,
    ) -> RunResult:
        """Run ``command`` with a shell and collect its output.

        ``env`` merges over the sandbox environment. ``timeout`` (seconds) and ``abort``
        kill the process and raise ``SandboxTimeoutError`` / ``SandboxAbortedError``.
        """
        ...

    async def spawn(
        self,
        command: str,
        *,
        working_directory: str | None = None,
        env: Mapping[str, str] | None = None,
        abort: anyio.Event | None = None,
    ) -> SandboxProcess:
        """Start ``command`` with a shell and return at once with a handle."""
        ...


@runtime_checkable
class NetworkSandboxSession(SandboxSession, Protocol):
    """A provider-created sandbox session: the bare surface plus identity and lifecycle."""

    @property
    def id(self) -> str:
        """Stable id of the underlying resource (``resume_session`` finds it again)."""
        ...

    @property
    def default_working_directory(self) -> str:
        """Absolute default working directory."""
        ...

    @property
    def ports(self) -> Sequence[int]:
        """Exposed ports."""
        ...

    async def get_port_endpoint(
        self, port: int, protocol: Literal["http", "https", "ws"] | None = None
    ) -> PortEndpoint:
        """Resolve an exposed port; raises ``HarnessCapabilityUnsupportedError`` if none."""
        ...

    async def stop(self) -> None:
        """Stop the sandbox; idempotent."""
        ...

    async def destroy(self) -> None:
        """Stop and free the sandbox; works on running and stopped sandboxes."""
        ...

    def restricted(self) -> SandboxSession:
        """The bare session over the same resource, without lifecycle members."""
        ...


#: ``on_first_create(restricted_session)``: runs once per identity on fresh creation.
OnFirstCreate: TypeAlias = Callable[[SandboxSession], Awaitable[None]]


@runtime_checkable
class SandboxProvider(Protocol):
    """Creates sandbox sessions. ``resume_session(session_id)`` is optional."""

    @property
    def provider_id(self) -> str:
        """The provider's id, for example ``local`` or ``docker``."""
        ...

    async def create_session(
        self,
        *,
        session_id: str | None = None,
        identity: str | None = None,
        on_first_create: OnFirstCreate | None = None,
    ) -> NetworkSandboxSession:
        """Create a session (named after ``session_id`` so it can be resumed)."""
        ...


# -- adapter ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class StartOptions:
    """Arguments of :meth:`HarnessAdapter.do_start`.

    Attributes:
        session_id: The session's id.
        sandbox_session: The full sandbox session; the adapter must not stop or destroy it.
        session_work_dir: Absolute path of the session's working directory (exists).
        skills: Session-wide skills (the turn's skills arrive with every turn too).
        resume_from: A ``resume-session`` state to resume.
        continue_from: A ``continue-turn`` state whose turn is to be continued.
        permission_mode: How built-ins are approved.
        builtin_tool_filtering: Which built-ins are usable, when any is disabled.
        headers: Normalized extra request headers, when any.
        abort: Set when the caller aborts session creation.
    """

    session_id: str
    sandbox_session: SandboxSession
    session_work_dir: str
    skills: Sequence[Skill] = ()
    resume_from: ResumeSessionState | None = None
    continue_from: ContinueTurnState | None = None
    permission_mode: PermissionMode = "allow-all"
    builtin_tool_filtering: BuiltinToolFiltering | None = None
    headers: Mapping[str, str] | None = None
    abort: anyio.Event | None = None


@dataclass(frozen=True, kw_only=True)
class ContinueTurnOptions:
    """Arguments of :meth:`HarnessSession.do_continue_turn` (the frozen turn settings).

    Attributes:
        emit: Called once per stream part, in order.
        tools: Host tool specs (active user tools only).
        instructions: System instructions for the turn.
        response_format: Requested output format.
        skills: The turn's skills.
        model: The turn's model id.
        abort: Set when the caller aborts the turn; the adapter must stop and end it.
    """

    emit: Emit
    tools: Sequence[ToolSpec] = ()
    instructions: str | None = None
    response_format: ResponseFormat | None = None
    skills: Sequence[Skill] = ()
    model: str | None = None
    abort: anyio.Event | None = None


@dataclass(frozen=True, kw_only=True)
class PromptTurnOptions(ContinueTurnOptions):
    """Arguments of :meth:`HarnessSession.do_prompt_turn`: the continue options plus ``prompt``."""

    prompt: UserMessage


@runtime_checkable
class PromptControl(Protocol):
    """The handle of a running turn.

    Optional members: ``submit_tool_approval(approval_id, approved, reason=None)`` and
    ``submit_user_message(text)``.
    """

    async def submit_tool_result(
        self,
        tool_call_id: str,
        output: JSONValue,
        is_error: bool = False,
        tool_result: dict[str, Any] | None = None,
    ) -> None:
        """Deliver a host tool's result to the runtime."""
        ...

    async def done(self) -> None:
        """Return when the turn has ended; raise the turn's error if it failed."""
        ...


@runtime_checkable
class HarnessSession(Protocol):
    """An adapter session. After ``do_detach``/``do_stop``/``do_destroy`` nothing may be called."""

    @property
    def session_id(self) -> str:
        """The session's id (equal to the one passed to ``do_start``)."""
        ...

    @property
    def is_resume(self) -> bool:
        """Whether the session was started from ``resume_from`` or ``continue_from``."""
        ...

    async def do_prompt_turn(self, options: PromptTurnOptions) -> PromptControl:
        """Start a turn with a new prompt."""
        ...

    async def do_continue_turn(self, options: ContinueTurnOptions) -> PromptControl:
        """Continue the unfinished turn (no new prompt)."""
        ...

    async def do_suspend_turn(self) -> ContinueTurnState:
        """Freeze the active turn at a precise cursor; its ``done`` resolves cleanly."""
        ...

    async def do_detach(self) -> ResumeSessionState:
        """Return a resume state without tearing the runtime down."""
        ...

    async def do_stop(self) -> ResumeSessionState:
        """Persist, stop the runtime and return a resume state."""
        ...

    async def do_destroy(self) -> None:
        """Stop the runtime; nothing to resume."""
        ...

    async def do_compact(self, custom_instructions: str | None = None) -> None:
        """Compact the context, or raise ``HarnessCapabilityUnsupportedError``."""
        ...


@runtime_checkable
class HarnessAdapter(Protocol):
    """A harness-v1 adapter (TypeScript ``HarnessV1``).

    Optional members: ``lifecycle_state_schema`` (a callable that parses ``data`` and
    returns the parsed value, or a pydantic model class),
    ``async get_bootstrap() -> Bootstrap | None``, and ``versions: Mapping[str, str]``
    (name -> version of the adapter and of the runtime it drives, for example
    ``{"claude-agent-sdk": "0.2.190", "claude-code-cli": "2.1.337"}``), which every
    conformance report records beside the kit's version and the version of the
    distribution that ships the adapter's factory.
    """

    @property
    def specification_version(self) -> Literal["harness-v1"]:
        """Always ``"harness-v1"``."""
        ...

    @property
    def harness_id(self) -> str:
        """Kebab-case id, stamped into lifecycle states."""
        ...

    @property
    def builtin_tools(self) -> Mapping[str, BuiltinTool]:
        """Runtime-executed tools keyed by ``common_name or native_name``."""
        ...

    @property
    def supports_builtin_tool_approvals(self) -> bool:
        """Whether the runtime can ask for built-in approvals."""
        ...

    @property
    def supports_builtin_tool_filtering(self) -> bool:
        """Whether the runtime can hide every inactive built-in natively."""
        ...

    async def do_start(self, options: StartOptions) -> HarnessSession:
        """Start (or resume) a session."""
        ...
