"""The fake harness adapter: a harness-v1 runtime whose model is a script."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from harness_testkit import __version__
from harness_testkit.scripting import Fault, McpServer, ObservationLog, Script, SessionStarted
from harness_testkit.spec import (
    BuiltinTool,
    HarnessCapabilityUnsupportedError,
    InvalidLifecycleStateError,
    StartOptions,
    parse_lifecycle_state,
)

from ._clock import Clock, VirtualClock
from ._errors import ScriptMismatchError
from ._profiles import HarnessProfile, get_profile
from ._session import FakeHarnessSession
from ._state import Conversation, SessionData, validate_session_data

__all__ = ["FakeHarness"]

ScriptSource = Script | Mapping[str, Any] | str | Path


def _load_script(script: ScriptSource | None) -> Script:
    if script is None:
        return Script.default()
    if isinstance(script, Script):
        return script
    if isinstance(script, str | Path):
        return Script.from_file(script)
    return Script.model_validate(dict(script))


class FakeHarness:
    """A deterministic, scriptable harness-v1 adapter (implements ``HarnessAdapter``).

    Built-ins run for real in the sandbox session given to ``do_start``; host tools,
    approvals and user messages go through the prompt control; everything the runtime
    receives and does is logged in :attr:`observations`.

    Args:
        script: The script (a :class:`Script`, a dict, or a path to a YAML/JSON file);
            by default one turn that echoes the prompt.
        profile: A profile name (see :func:`profiles`) or a :class:`HarnessProfile`.
        seed: Seeds text chunking; same script and seed, same parts.
        harness_id: The id stamped into lifecycle states (default ``"fake"``).
        clock: Time for scripted delays (default a :class:`VirtualClock`).
        mcp_servers: Scripted MCP servers by name (override the script's of that name).
        faults: Faults applied to every turn of every session.

    Raises:
        HarnessUsageError: an unknown profile name.
        pydantic.ValidationError: an invalid script.
    """

    specification_version: Literal["harness-v1"] = "harness-v1"
    #: ``lifecycle_state_schema``: validates and canonicalizes the ``data`` of states.
    lifecycle_state_schema = staticmethod(validate_session_data)

    def __init__(
        self,
        script: ScriptSource | None = None,
        *,
        profile: str | HarnessProfile = "claude-code",
        seed: int = 0,
        harness_id: str | None = None,
        clock: Clock | None = None,
        mcp_servers: Mapping[str, McpServer | Mapping[str, Any]] | None = None,
        faults: Sequence[Fault] | None = None,
    ) -> None:
        self._script = _load_script(script)
        self._profile = profile if isinstance(profile, HarnessProfile) else get_profile(profile)
        self._seed = seed
        self._harness_id = harness_id or "fake"
        self._clock: Clock = clock if clock is not None else VirtualClock()
        self._mcp_servers = {
            name: server
            if isinstance(server, McpServer)
            else McpServer.model_validate(dict(server))
            for name, server in (mcp_servers or {}).items()
        }
        self._faults = list(faults or [])
        self._observations = ObservationLog()
        self._sessions: dict[str, FakeHarnessSession] = {}

    # -- HarnessAdapter attributes ------------------------------------------------------

    @property
    def harness_id(self) -> str:
        """The harness id (default ``"fake"``)."""
        return self._harness_id

    @property
    def versions(self) -> Mapping[str, str]:
        """What runs, name -> version: the fake harness is its own runtime, shipped with
        the kit (the optional ``versions`` attribute reports record)."""
        return MappingProxyType({"fake-harness": __version__})

    @property
    def builtin_tools(self) -> Mapping[str, BuiltinTool]:
        """The profile's built-in table (read-only)."""
        return MappingProxyType(self._profile.builtin_tools)

    @property
    def supports_builtin_tool_approvals(self) -> bool:
        """From the profile."""
        return self._profile.supports_builtin_tool_approvals

    @property
    def supports_builtin_tool_filtering(self) -> bool:
        """From the profile."""
        return self._profile.supports_builtin_tool_filtering

    # -- fake-specific ------------------------------------------------------------------

    @property
    def profile(self) -> HarnessProfile:
        """The capability profile."""
        return self._profile

    @property
    def script(self) -> Script:
        """The script new sessions run."""
        return self._script

    @property
    def seed(self) -> int:
        """The seed."""
        return self._seed

    @property
    def clock(self) -> Clock:
        """The clock scripted delays use."""
        return self._clock

    @property
    def faults(self) -> list[Fault]:
        """Faults applied to every turn (besides the profile's and the script's)."""
        return list(self._faults)

    @property
    def observations(self) -> ObservationLog:
        """Everything the runtime received and did, across sessions."""
        return self._observations

    @property
    def sessions(self) -> Mapping[str, FakeHarnessSession]:
        """Sessions started by this harness, by id (the latest per id)."""
        return MappingProxyType(self._sessions)

    def set_script(self, script: ScriptSource) -> None:
        """Replace the script for sessions started from now on (running ones keep theirs).

        Args:
            script: A :class:`Script`, a dict, or a path to a YAML/JSON file.
        """
        self._script = _load_script(script)

    # -- do_start -----------------------------------------------------------------------

    def _parse(
        self, state: object, expected: Literal["resume-session", "continue-turn"]
    ) -> SessionData:
        # A model is the agent's parse of the state (StartOptions carry models): only
        # what is this harness's to check is checked again, not the whole shape.
        parsed = parse_lifecycle_state(
            state,
            expected_type=expected,
            harness_id=self._harness_id,
            data_validator=validate_session_data,
            shape_checked=True,
        )
        data = SessionData.model_validate(parsed.data)
        if data.profile != self._profile.name:
            raise InvalidLifecycleStateError(
                f"Lifecycle state was produced by fake profile '{data.profile}' but this harness "
                f"runs profile '{self._profile.name}'."
            )
        return data

    async def do_start(self, options: StartOptions) -> FakeHarnessSession:
        """Start, resume (``resume_from``) or continue (``continue_from``) a session.

        Raises:
            HarnessCapabilityUnsupportedError: a built-in filter on a profile with neither
                filtering nor approvals, or a permission mode other than ``allow-all`` on
                a profile with built-ins but no approvals.
            InvalidLifecycleStateError: a state of another harness, version or profile, or
                whose ``data`` is not fake-harness data.
            ScriptMismatchError: a ``continue-turn`` state made with another script or seed.
        """
        profile = self._profile
        if (
            options.builtin_tool_filtering is not None
            and not profile.supports_builtin_tool_filtering
            and not profile.supports_builtin_tool_approvals
        ):
            raise HarnessCapabilityUnsupportedError(
                f"Harness '{self._harness_id}' does not support built-in tool filtering controls.",
                harness_id=self._harness_id,
            )
        if (
            options.permission_mode != "allow-all"
            and profile.builtin_tools
            and not profile.supports_builtin_tool_approvals
        ):
            raise HarnessCapabilityUnsupportedError(
                f"Harness '{self._harness_id}' does not support built-in tool approval requests; "
                "use permissionMode: 'allow-all'.",
                harness_id=self._harness_id,
            )
        mode: Literal["fresh", "resume", "continue"] = "fresh"
        conversation = Conversation()
        continuation: SessionData | None = None
        if options.continue_from is not None:
            continuation = self._parse(options.continue_from, "continue-turn")
            if (
                continuation.script_digest != self._script.digest()
                or continuation.seed != self._seed
            ):
                raise ScriptMismatchError(
                    "This continue-turn state was produced with another script or seed "
                    f"(digest {continuation.script_digest}, seed {continuation.seed}); the "
                    f"harness runs digest {self._script.digest()}, seed {self._seed}. A turn "
                    "continues only with the script that started it."
                )
            conversation = continuation.conversation
            mode = "continue"
        elif options.resume_from is not None:
            data = self._parse(options.resume_from, "resume-session")
            conversation = data.conversation
            if data.script_digest != self._script.digest():
                # A new script starts from its first turn; the context is kept.
                conversation.sequence = 0
            mode = "resume"
        servers = {**self._script.mcp_servers, **self._mcp_servers}
        session = FakeHarnessSession(
            harness=self,
            options=options,
            script=self._script,
            mode=mode,
            conversation=conversation,
            mcp_servers=servers,
        )
        self._observations.record(
            SessionStarted(
                session_id=options.session_id,
                mode=mode,
                profile=profile.name,
                permission_mode=options.permission_mode,
                builtin_tool_filtering=options.builtin_tool_filtering,
                skills=[skill.name for skill in options.skills],
                session_work_dir=options.session_work_dir,
            )
        )
        if continuation is not None and continuation.turn is not None:
            session.restore_turn(continuation.turn)
        self._sessions[options.session_id] = session
        return session
