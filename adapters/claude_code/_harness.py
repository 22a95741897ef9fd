"""The Claude Code adapter: the real CLI (through ``claude-agent-sdk``) as a harness-v1 runtime."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import anyio

from harness_testkit.scripting import ObservationLog, Script, SessionStarted
from harness_testkit.spec import (
    BuiltinTool,
    HarnessCapabilityUnsupportedError,
    StartOptions,
    ToolUseKind,
    parse_lifecycle_state,
)

from ._builtins import BUILTIN_TOOLS, HOST_SERVER
from ._endpoint import ScriptedEndpoint
from ._session import ClaudeCodeSession, cli_session_id
from ._state import SessionData, validate_session_data
from ._versions import SDK_DISTRIBUTION, cli_version, require_sdk, sdk_version

__all__ = ["HARNESS_ID", "ClaudeCodeHarness", "sdk_missing_reason"]

HARNESS_ID = "claude-code"

#: What the CLI is given as API key when it talks to a local endpoint (never a secret).
OFFLINE_API_KEY = "harness-testkit-offline"


def sdk_missing_reason() -> str | None:
    """Why the runtime cannot run here (``None`` when ``claude-agent-sdk`` is importable)."""
    try:
        import claude_agent_sdk  # noqa: F401
    except ImportError as error:
        return (
            f"claude-agent-sdk is not installed ({error}); install the extra: "
            "pip install 'harness-testkit[claude-code]'"
        )
    return None


EndpointOpener = Callable[[Script], Awaitable[tuple[str, Callable[[], Any]]]]


class ClaudeCodeHarness:
    """A harness-v1 adapter for Claude Code (implements ``HarnessAdapter``).

    Each turn runs the Claude Code CLI bundled with ``claude-agent-sdk`` on the host, with
    its working directory in the session's sandbox work dir (the embedded local sandbox).
    Its model is either the kit's scripted model endpoint serving :meth:`set_script`'s
    script (the default: fully offline, the scripting extension) or the
    Anthropic-compatible endpoint at ``base_url``.

    Args:
        base_url: An Anthropic Messages endpoint to use instead of the scripted one
            (scripting is then unavailable).
        api_key: The API key the CLI sends (default: a fixed non-secret placeholder).
        model: The model id when a turn names none (default: the CLI's default).
        cli_path: The ``claude`` executable (default: the one bundled with the SDK).
        mcp_servers: MCP servers for every session (``claude-agent-sdk``
            ``McpServerConfig`` dicts by name); ``harness-tools`` is reserved.
        mcp_tool_kinds: How the permission mode treats MCP tools, by ``mcp__server__tool``
            name (unlisted: ``None``, approved like edits).
        env: Extra environment variables for the CLI.
        script: The first script to serve (default: echo the prompt).

    Raises:
        MissingExtraError: ``claude-agent-sdk`` is not installed (the ``claude-code``
            extra).
        HarnessCapabilityUnsupportedError: an MCP server named ``harness-tools``.
    """

    specification_version: Literal["harness-v1"] = "harness-v1"
    #: ``lifecycle_state_schema``: validates and canonicalizes the ``data`` of states.
    lifecycle_state_schema = staticmethod(validate_session_data)
    #: The session class ``do_start`` creates (a subclass can change session behaviour).
    session_class: type[ClaudeCodeSession] = ClaudeCodeSession

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        model: str | None = None,
        cli_path: str | Path | None = None,
        mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
        mcp_tool_kinds: Mapping[str, ToolUseKind | None] | None = None,
        env: Mapping[str, str] | None = None,
        script: Script | None = None,
    ) -> None:
        require_sdk()
        if mcp_servers and HOST_SERVER in mcp_servers:
            raise HarnessCapabilityUnsupportedError(
                f"The MCP server name '{HOST_SERVER}' is reserved for host tools; rename it.",
                harness_id=HARNESS_ID,
            )
        self._base_url = base_url
        self.api_key = api_key or OFFLINE_API_KEY
        self.model = model
        self.cli_path = cli_path
        self._mcp_servers = {name: dict(config) for name, config in (mcp_servers or {}).items()}
        self._mcp_tool_kinds = dict(mcp_tool_kinds or {})
        self.env = dict(env or {})
        self._script = script if script is not None else Script.default()
        self._observations = ObservationLog()

    # -- HarnessAdapter attributes ---------------------------------------------------------

    @property
    def harness_id(self) -> str:
        """``claude-code``."""
        return HARNESS_ID

    @property
    def versions(self) -> Mapping[str, str]:
        """The SDK's version and the version of the CLI that runs (``cli_path`` or the
        SDK's bundled one), as conformance reports record them."""
        return {
            SDK_DISTRIBUTION: sdk_version() or "not installed",
            "claude-code-cli": cli_version(self.cli_path),
        }

    @property
    def builtin_tools(self) -> Mapping[str, BuiltinTool]:
        """The CLI's built-ins offered to the model (read-only)."""
        return BUILTIN_TOOLS

    @property
    def supports_builtin_tool_approvals(self) -> bool:
        """True: ``can_use_tool`` asks the host."""
        return True

    @property
    def supports_builtin_tool_filtering(self) -> bool:
        """True: the CLI's ``tools``/``disallowedTools`` lists hide built-ins natively."""
        return True

    # -- scripting extension ---------------------------------------------------------------

    @property
    def observations(self) -> ObservationLog:
        """What the runtime received and did, across sessions."""
        return self._observations

    @property
    def script(self) -> Script:
        """The script new sessions' model endpoint serves."""
        return self._script

    def set_script(self, script: Script) -> None:
        """Serve ``script`` to sessions started from now on."""
        self._script = script

    # -- configuration used by sessions ------------------------------------------------------

    def mcp_server_configs(self) -> Mapping[str, Any]:
        """The configured MCP servers plus the script's scripted ones."""
        from ._scripted_mcp import scripted_mcp_servers

        servers: dict[str, Any] = {}
        if self._base_url is None:
            servers.update(scripted_mcp_servers(self._script))
        servers.update(self._mcp_servers)
        return servers

    def mcp_tool_kind(self, native: str) -> ToolUseKind | None:
        """The approval kind of MCP tool ``native`` (``mcp__server__tool``)."""
        if native in self._mcp_tool_kinds:
            return self._mcp_tool_kinds[native]
        from ._scripted_mcp import scripted_tool_kind

        return scripted_tool_kind(self._script, native)

    async def _open_endpoint(
        self, data: SessionData, mode: Literal["fresh", "resume", "continue"]
    ) -> tuple[str, ScriptedEndpoint | None]:
        if self._base_url is not None:
            return self._base_url, None
        offset = data.next_reply
        if mode == "continue" and data.turn is not None:
            offset = data.turn.reply_start if not data.turn.finished else data.next_reply
        endpoint = await ScriptedEndpoint.open(
            self._script, work_dir=data.session_work_dir, offset=offset
        )
        return endpoint.base_url, endpoint

    # -- do_start --------------------------------------------------------------------------

    async def do_start(self, options: StartOptions) -> ClaudeCodeSession:
        """Start, resume (``resume_from``) or continue (``continue_from``) a session.

        Raises:
            HarnessCapabilityUnsupportedError: a sandbox other than the embedded local one,
                or ``claude-agent-sdk`` missing.
            InvalidLifecycleStateError: a state of another harness or version, or whose
                ``data`` is not Claude Code adapter data.
        """
        missing = sdk_missing_reason()
        if missing is not None:
            raise HarnessCapabilityUnsupportedError(
                f"Harness '{HARNESS_ID}' cannot run: {missing}.", harness_id=HARNESS_ID
            )
        if not await anyio.Path(options.session_work_dir).is_dir():
            raise HarnessCapabilityUnsupportedError(
                f"Harness '{HARNESS_ID}' runs the Claude Code CLI on this host with its working "
                "directory in the sandbox, so it needs a sandbox whose files are on this host "
                f"(the embedded local sandbox); the session work dir {options.session_work_dir} "
                "is not a directory here (the Docker sandbox image has no Claude Code runtime, "
                "and the scripted model endpoint listens on this host's 127.0.0.1, which a "
                "container without a bridge network cannot reach).",
                harness_id=HARNESS_ID,
            )
        mode: Literal["fresh", "resume", "continue"] = "fresh"
        work_dir = options.session_work_dir
        data = SessionData(
            cli_session_id=cli_session_id(options.session_id),
            home=str(Path(work_dir).parent / f".claude-code-{options.session_id}"),
            session_work_dir=work_dir,
        )
        state = options.continue_from or options.resume_from
        if state is not None:
            expected: Literal["resume-session", "continue-turn"] = (
                "continue-turn" if options.continue_from is not None else "resume-session"
            )
            parsed = parse_lifecycle_state(
                state,
                expected_type=expected,
                harness_id=HARNESS_ID,
                data_validator=validate_session_data,
            )
            data = SessionData.model_validate(parsed.data)
            if options.resume_from is not None:
                data = data.model_copy(update={"turn": None})
            mode = "continue" if options.continue_from is not None else "resume"
        base_url, endpoint = await self._open_endpoint(data, mode)
        session = self.session_class(
            harness=self,
            options=options,
            data=data,
            mode=mode,
            base_url=base_url,
            endpoint=endpoint,
        )
        self._observations.record(
            SessionStarted(
                session_id=options.session_id,
                mode=mode,
                profile=HARNESS_ID,
                permission_mode=options.permission_mode,
                builtin_tool_filtering=options.builtin_tool_filtering,
                skills=[skill.name for skill in options.skills],
                session_work_dir=work_dir,
            )
        )
        await anyio.lowlevel.checkpoint()
        return session
