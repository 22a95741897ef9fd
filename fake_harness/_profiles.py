"""Capability profiles: the fake runtime dressed as one of the real adapters.

Each profile reproduces a column of the capability matrix of the real adapters
(``adapters-and-sandboxes.md`` 3.1-3.2): the built-in table with native names and tool
kinds, approvals, filtering, manual compaction, continuation mode, steering, JSON
response formats and which optional parts the runtime emits. ``minimal`` supports
nothing optional. Pass a name or a customised copy to :class:`FakeHarness`::

    profile = get_profile("codex").model_copy(update={"continuation": "lossy"})
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness_testkit.scripting import Fault
from harness_testkit.spec import BuiltinTool, HarnessUsageError, common_tool

__all__ = ["HarnessProfile", "get_profile", "profiles"]


class HarnessProfile(BaseModel):
    """The declared capabilities of a fake runtime (read by the conformance suite).

    Attributes:
        name: The profile's name (``claude-code``, ``codex``, ...).
        description: One line on what it imitates.
        builtin_tools: The built-in table, keyed by ``common_name or native_name``.
        supports_builtin_tool_approvals: Emits ``tool-approval-request`` for built-ins
            and offers ``submit_tool_approval``.
        supports_builtin_tool_filtering: Hides inactive built-ins natively.
        manual_compaction: ``none`` (``do_compact`` raises), ``any-time`` or
            ``between-turns`` (``do_compact`` raises while a turn is unfinished).
        compaction_custom_instructions: Whether ``do_compact`` accepts custom instructions.
        continuation: ``lossless`` (a continued turn resumes exactly at the cursor) or
            ``lossy`` (continuing from a ``continue_from`` state re-emits the in-flight
            step from its start).
        supports_user_messages: Controls offer ``submit_user_message`` (steering).
        json_response_format: ``none`` (a JSON response format raises), ``schema-required``
            (JSON only with a schema) or ``any``.
        emits_file_change: Reports opaque workspace mutations as ``file-change`` parts.
        file_change_events: ``exact`` (create/modify/delete) or ``modify-only`` (every
            mutation is reported as ``modify``, as OpenCode's ``file.edited`` does).
        file_change_for_tool_writes: Also reports writes of visible ``write``/``edit``
            calls as ``file-change`` (Pi does).
        emits_compaction: Emits ``compaction`` parts (a runtime may compact silently).
        emits_stream_start: Starts every prompt turn with ``stream-start``.
        default_model: Model id reported when neither the turn nor the script names one.
        context_budget: Token budget for automatic compaction (``None``: never).
        raw_finish_reasons: The runtime's own finish-reason strings, by unified reason.
        faults: Faults applied to every turn of every session.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    builtin_tools: dict[str, BuiltinTool] = Field(default_factory=dict)
    supports_builtin_tool_approvals: bool = False
    supports_builtin_tool_filtering: bool = False
    manual_compaction: Literal["none", "any-time", "between-turns"] = "none"
    compaction_custom_instructions: bool = False
    continuation: Literal["lossless", "lossy"] = "lossy"
    supports_user_messages: bool = False
    json_response_format: Literal["none", "schema-required", "any"] = "none"
    emits_file_change: bool = False
    file_change_events: Literal["exact", "modify-only"] = "exact"
    file_change_for_tool_writes: bool = False
    emits_compaction: bool = False
    emits_stream_start: bool = False
    default_model: str = "fake-model"
    context_budget: int | None = Field(default=None, ge=1)
    raw_finish_reasons: dict[str, str] = Field(default_factory=dict)
    faults: list[Fault] = Field(default_factory=list)

    @property
    def supports_manual_compaction(self) -> bool:
        """Whether ``do_compact`` can succeed at all."""
        return self.manual_compaction != "none"

    @property
    def supports_json_response_format(self) -> bool:
        """Whether a JSON response format can be honoured (possibly only with a schema)."""
        return self.json_response_format != "none"

    def native_name(self, key: str) -> str | None:
        """The native name to put on ``tool-call`` parts: set only when it differs."""
        tool = self.builtin_tools.get(key)
        if tool is None or tool.native_name in (None, key):
            return None
        return tool.native_name


def _schema(required: list[str], optional: dict[str, str] | None = None) -> dict[str, Any]:
    properties: dict[str, Any] = {name: {"type": "string"} for name in required}
    for name, json_type in (optional or {}).items():
        properties[name] = {"type": json_type}
    return {"type": "object", "properties": properties, "required": required}


def _loose(*names: str) -> dict[str, Any]:
    # OpenCode's schemas are loose objects with every field optional.
    return {"type": "object", "properties": {name: {"type": "string"} for name in names}}


def _native(native_name: str, kind: Literal["readonly", "edit", "bash"] | None) -> BuiltinTool:
    return BuiltinTool(native_name=native_name, tool_use_kind=kind)


def _claude_code() -> HarnessProfile:
    tools = {
        "read": common_tool(
            "read",
            native_name="Read",
            tool_use_kind="readonly",
            input_schema=_schema(["file_path"], {"offset": "integer", "limit": "integer"}),
        ),
        "write": common_tool("write", native_name="Write", tool_use_kind="edit"),
        "edit": common_tool(
            "edit",
            native_name="Edit",
            tool_use_kind="edit",
            input_schema=_schema(
                ["file_path", "old_string", "new_string"], {"replace_all": "boolean"}
            ),
        ),
        "bash": common_tool(
            "bash",
            native_name="Bash",
            tool_use_kind="bash",
            input_schema=_schema(["command"], {"timeout": "number", "description": "string"}),
        ),
        "glob": common_tool(
            "glob",
            native_name="Glob",
            tool_use_kind="readonly",
            input_schema=_schema(["pattern"], {"path": "string"}),
        ),
        "grep": common_tool(
            "grep",
            native_name="Grep",
            tool_use_kind="readonly",
            input_schema=_schema(["pattern"], {"path": "string"}),
        ),
        "webSearch": common_tool("webSearch", native_name="WebSearch", tool_use_kind="readonly"),
        "TodoWrite": _native("TodoWrite", None),
        "WebFetch": _native("WebFetch", None),
    }
    return HarnessProfile(
        name="claude-code",
        description="Claude Code bridge: native approvals and filtering, lossless attach.",
        builtin_tools=tools,
        supports_builtin_tool_approvals=True,
        supports_builtin_tool_filtering=True,
        manual_compaction="any-time",
        compaction_custom_instructions=True,
        continuation="lossless",
        supports_user_messages=True,
        json_response_format="schema-required",
        emits_file_change=False,
        # The real host drops the bridge's compaction part (matrix 3.1, an upstream bug
        # against 1.3.7: a successful do_compact MUST surface one). The fake follows the
        # contract; imitate the bug with model_copy(update={"emits_compaction": False}).
        emits_compaction=True,
        emits_stream_start=True,
        default_model="fake-claude-sonnet",
        context_budget=150_000,
        raw_finish_reasons={
            "stop": "end_turn",
            "tool-calls": "tool_use",
            "length": "max_tokens",
            "content-filter": "refusal",
            "error": "error",
            "other": "other",
        },
    )


def _codex() -> HarnessProfile:
    tools = {
        "bash": common_tool("bash", native_name="shell", tool_use_kind="bash"),
        "webSearch": common_tool("webSearch", native_name="web_search", tool_use_kind="readonly"),
    }
    return HarnessProfile(
        name="codex",
        description="Codex bridge: no approvals or filtering, file changes from patches.",
        builtin_tools=tools,
        continuation="lossless",
        json_response_format="schema-required",
        emits_file_change=True,
        emits_stream_start=True,
        default_model="fake-gpt-codex",
        context_budget=200_000,
        raw_finish_reasons={"stop": "completed", "tool-calls": "tool_calls", "error": "failed"},
    )


def _pi() -> HarnessProfile:
    tools = {
        "read": common_tool("read", native_name="read", tool_use_kind="readonly"),
        "write": common_tool("write", native_name="write", tool_use_kind="edit"),
        "edit": common_tool("edit", native_name="edit", tool_use_kind="edit"),
        "bash": common_tool("bash", native_name="bash", tool_use_kind="bash"),
        "grep": common_tool("grep", native_name="grep", tool_use_kind="readonly"),
        "glob": common_tool("glob", native_name="find", tool_use_kind="readonly"),
        "ls": _native("ls", "readonly"),
    }
    return HarnessProfile(
        name="pi",
        description="Pi (host process): approvals, filtering, steering; lossy rerun across processes.",
        builtin_tools=tools,
        supports_builtin_tool_approvals=True,
        supports_builtin_tool_filtering=True,
        manual_compaction="any-time",
        compaction_custom_instructions=True,
        continuation="lossy",
        supports_user_messages=True,
        json_response_format="none",
        emits_file_change=True,
        file_change_for_tool_writes=True,
        emits_compaction=True,
        emits_stream_start=True,
        default_model="fake-pi-model",
        context_budget=100_000,
        raw_finish_reasons={"stop": "stop", "tool-calls": "toolUse", "length": "length"},
    )


def _opencode() -> HarnessProfile:
    tools = {
        "read": common_tool(
            "read", native_name="view", tool_use_kind="readonly", input_schema=_loose("file_path")
        ),
        "write": common_tool(
            "write",
            native_name="write",
            tool_use_kind="edit",
            input_schema=_loose("file_path", "content"),
        ),
        "edit": common_tool(
            "edit",
            native_name="edit",
            tool_use_kind="edit",
            input_schema=_loose("file_path", "old_string", "new_string"),
        ),
        "bash": common_tool(
            "bash", native_name="bash", tool_use_kind="bash", input_schema=_loose("command")
        ),
        "glob": common_tool(
            "glob", native_name="glob", tool_use_kind="readonly", input_schema=_loose("pattern")
        ),
        "grep": common_tool(
            "grep", native_name="grep", tool_use_kind="readonly", input_schema=_loose("pattern")
        ),
        "ls": _native("ls", None),
        "webfetch": _native("webfetch", None),
        "todowrite": _native("todowrite", None),
    }
    return HarnessProfile(
        name="opencode",
        description="OpenCode bridge: filtering through approvals (auto-deny), compaction between turns.",
        builtin_tools=tools,
        supports_builtin_tool_approvals=True,
        supports_builtin_tool_filtering=False,
        manual_compaction="between-turns",
        compaction_custom_instructions=False,
        continuation="lossless",
        supports_user_messages=True,
        json_response_format="schema-required",
        emits_file_change=True,
        file_change_events="modify-only",
        emits_compaction=True,
        emits_stream_start=True,
        default_model="fake-opencode-model",
        context_budget=120_000,
        raw_finish_reasons={"stop": "stop", "tool-calls": "tool-calls", "length": "length"},
    )


def _minimal() -> HarnessProfile:
    return HarnessProfile(
        name="minimal",
        description="Nothing optional: no built-ins, approvals, filtering, compaction or steering.",
    )


_FACTORIES = {
    "claude-code": _claude_code,
    "codex": _codex,
    "pi": _pi,
    "opencode": _opencode,
    "minimal": _minimal,
}
_CACHE: dict[str, HarnessProfile] = {}


def profiles() -> tuple[str, ...]:
    """The names of the built-in profiles, in matrix order."""
    return tuple(_FACTORIES)


def get_profile(name: str) -> HarnessProfile:
    """Return the built-in profile ``name`` (a frozen model; copy it to customise).

    Args:
        name: One of :func:`profiles`.

    Returns:
        The profile.

    Raises:
        HarnessUsageError: when no profile has that name.
    """
    if name not in _FACTORIES:
        raise HarnessUsageError(
            f"There is no fake harness profile named {name!r}; use one of "
            f"{', '.join(_FACTORIES)} or pass a HarnessProfile."
        )
    if name not in _CACHE:
        _CACHE[name] = _FACTORIES[name]()
    return _CACHE[name]
