"""Zoo areas "tool merging" and "filtering": defects in built-in declarations, tool
names and built-in filtering."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from harness_testkit.spec import (
    QUESTIONS_TOOL_INPUT_SCHEMA,
    BuiltinTool,
    BuiltinToolFiltering,
    JSONValue,
    ToolCallPart,
    ToolInputStartPart,
    ToolResultPart,
)

from ._machinery import Defect, MutantAdapter, MutantSession, replace_common_tools, runtime_options

__all__ = ["DEFECTS"]


def _native_tool_names(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, ToolCallPart | ToolInputStartPart | ToolResultPart):
        native = session.adapter.profile.native_name(part.tool_name)
        if native is not None:
            return [part.model_copy(update={"tool_name": native})]
    return [part]


def _not_provider_executed(session: MutantSession, part: Any) -> list[Any]:
    if (
        isinstance(part, ToolCallPart | ToolInputStartPart)
        and part.provider_executed
        and part.tool_name in session.adapter.builtin_tools
    ):
        return [part.model_copy(update={"provider_executed": None})]
    return [part]


def _renamed_host_calls(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, ToolCallPart | ToolInputStartPart | ToolResultPart) and not (
        getattr(part, "provider_executed", None)
        or part.tool_name in session.adapter.builtin_tools
        or part.tool_name.startswith("mcp__")
    ):
        return [part.model_copy(update={"tool_name": f"host_{part.tool_name}"})]
    return [part]


def _static_mcp_calls(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, ToolCallPart) and part.tool_name.startswith("mcp__"):
        return [part.model_copy(update={"dynamic": None})]
    return [part]


def _native_keyed(adapter: MutantAdapter) -> Mapping[str, BuiltinTool]:
    return {
        (tool.native_name or key) if tool.common_name else key: tool
        for key, tool in adapter.fake.builtin_tools.items()
    }


def _lowercased_native_keys(adapter: MutantAdapter) -> Mapping[str, BuiltinTool]:
    return {
        key if tool.common_name else key.lower(): tool
        for key, tool in adapter.fake.builtin_tools.items()
    }


_CMD_ONLY = {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]}


def _narrow_bash_schema(adapter: MutantAdapter) -> Mapping[str, BuiltinTool]:
    return {
        key: tool.model_copy(update={"input_schema": _CMD_ONLY}) if key == "bash" else tool
        for key, tool in adapter.fake.builtin_tools.items()
    }


def _unknown_tool_kind(adapter: MutantAdapter) -> Mapping[str, BuiltinTool]:
    return replace_common_tools(adapter.fake.builtin_tools, lambda tool: {"tool_use_kind": "write"})


def _filter_mode_inverted(session: MutantSession) -> None:
    given = session.start_options.builtin_tool_filtering
    if given is not None:
        inverted: Literal["allow", "deny"] = "allow" if given.mode == "deny" else "deny"
        runtime_options(
            session,
            builtin_tool_filtering=BuiltinToolFiltering(
                mode=inverted, tool_names=list(given.tool_names)
            ),
        )


def _filter_ignored(session: MutantSession) -> None:
    runtime_options(session, builtin_tool_filtering=None)


def _failing_builtin_loses_error(session: MutantSession, part: Any) -> list[Any]:
    if (
        isinstance(part, ToolResultPart)
        and part.is_error
        and part.tool_name in session.adapter.builtin_tools
    ):
        return [part.model_copy(update={"is_error": None})]
    return [part]


def _mcp_input_dropped(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, ToolCallPart) and part.tool_name.startswith("mcp__"):
        return [part.model_copy(update={"input": "{}"})]
    return [part]


def _host_error_echoed_as_success(session: MutantSession, part: Any) -> list[Any]:
    if not isinstance(part, ToolResultPart) or not part.is_error or part.dynamic:
        return [part]
    if part.tool_name in session.adapter.builtin_tools:
        return [part]
    return [part.model_copy(update={"is_error": False})]


def _deny_filter_ignored(session: MutantSession) -> None:
    given = session.start_options.builtin_tool_filtering
    if given is not None and given.mode == "deny":
        runtime_options(session, builtin_tool_filtering=None)


_NARROW_QUESTIONS = {
    "type": "object",
    "properties": {"prompt": {"type": "string"}},
    "required": ["prompt"],
}


def _narrow_questions_tool(adapter: MutantAdapter) -> Mapping[str, BuiltinTool]:
    questions = BuiltinTool(native_name="askUserQuestions", input_schema=_NARROW_QUESTIONS)
    return {**adapter.fake.builtin_tools, "askUserQuestions": questions}


def _result_renamed(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, ToolResultPart) and part.tool_name in session.adapter.builtin_tools:
        return [part.model_copy(update={"tool_name": f"{part.tool_name}Result"})]
    return [part]


def _questions_tool(adapter: MutantAdapter) -> Mapping[str, BuiltinTool]:
    schema = dict(QUESTIONS_TOOL_INPUT_SCHEMA)
    questions = BuiltinTool(native_name="askUserQuestions", input_schema=schema)
    return {**adapter.fake.builtin_tools, "askUserQuestions": questions}


def _questions_answered_by_runtime(session: MutantSession, part: Any) -> list[Any]:
    turn = session.inner.turn
    if isinstance(part, ToolCallPart) and part.tool_name == "askUserQuestions" and turn:
        # The runtime answers for the user instead of waiting for the host.
        answer: JSONValue = {"action": "declined"}
        turn.record.inbox.tool_results[part.tool_call_id] = {"output": answer, "isError": False}
    return [part]


class _FilteringClaimed(MutantAdapter):
    @property
    def supports_builtin_tool_filtering(self) -> bool:
        """Claims native filtering the runtime refuses."""
        return True


_MERGING = "tool merging"
_FILTERING = "filtering"

DEFECTS: tuple[Defect, ...] = (
    Defect(
        "native-tool-name",
        "MERGE-004",
        _MERGING,
        "Built-in calls carry the runtime's native name (`Bash`) instead of the key (`bash`).",
        profile="claude-code",
        rewrite=_native_tool_names,
    ),
    Defect(
        "builtin-not-provider-executed",
        "MERGE-009",
        _MERGING,
        "Built-in calls lack providerExecuted: true.",
        profile="claude-code",
        rewrite=_not_provider_executed,
    ),
    Defect(
        "host-call-renamed",
        "TOOLSPEC-002",
        _MERGING,
        "Host tool calls carry `host_<name>` instead of the tool spec's name.",
        rewrite=_renamed_host_calls,
    ),
    Defect(
        "mcp-call-not-dynamic",
        "TOOLSPEC-017",
        _MERGING,
        "Calls of undeclared MCP tools lack dynamic: true.",
        rewrite=_static_mcp_calls,
    ),
    Defect(
        "builtins-keyed-by-native-name",
        "TOOLSPEC-009",
        _MERGING,
        "Common-named built-ins are keyed by their native names in builtin_tools.",
        profile="claude-code",
        tools=_native_keyed,
    ),
    Defect(
        "native-only-builtin-mis-keyed",
        "ADAPTER-005",
        _MERGING,
        "Built-ins without a common name are keyed by a lower-cased native name.",
        profile="claude-code",
        tools=_lowercased_native_keys,
    ),
    Defect(
        "builtin-schema-rejects-baseline",
        "TOOLSPEC-008",
        _MERGING,
        "The `bash` built-in's input schema requires `cmd`, rejecting the baseline `{command}`.",
        profile="claude-code",
        tools=_narrow_bash_schema,
    ),
    Defect(
        "unknown-tool-use-kind",
        "TOOLSPEC-010",
        _MERGING,
        "Common built-ins declare the tool kind `write`, which harness-v1 does not know.",
        profile="claude-code",
        tools=_unknown_tool_kind,
    ),
    Defect(
        "questions-tool-narrow-schema",
        "TOOLSPEC-015",
        _MERGING,
        "The declared askUserQuestions built-in requires `prompt`, rejecting shared question inputs.",
        tools=_narrow_questions_tool,
    ),
    Defect(
        "questions-answered-by-runtime",
        "HOSTTOOL-027",
        _MERGING,
        "The runtime answers a declared askUserQuestions call itself instead of waiting for the host.",
        tools=_questions_tool,
        rewrite=_questions_answered_by_runtime,
    ),
    Defect(
        "result-names-another-tool",
        "STREAM-015",
        _MERGING,
        "Built-in tool-results carry `<name>Result` instead of their call's toolName.",
        profile="claude-code",
        rewrite=_result_renamed,
    ),
    Defect(
        "failing-builtin-loses-is-error",
        "TRANSLATE-012",
        _MERGING,
        "A built-in that fails in the runtime is reported as a tool-result without isError.",
        profile="claude-code",
        rewrite=_failing_builtin_loses_error,
    ),
    Defect(
        "mcp-input-dropped",
        "ADAPTER-057",
        _MERGING,
        "MCP tool-calls carry `{}` instead of the input the model gave.",
        rewrite=_mcp_input_dropped,
    ),
    Defect(
        "host-error-echoed-as-success",
        "HOSTTOOL-007",
        _MERGING,
        "A failed host tool's result is echoed as a tool-result with isError false.",
        rewrite=_host_error_echoed_as_success,
    ),
    Defect(
        "deny-filter-allows-all",
        "FILTER-010",
        _FILTERING,
        "The runtime ignores deny lists: every built-in a deny filter excludes still runs.",
        profile="claude-code",
        on_start=_deny_filter_ignored,
    ),
    Defect(
        "filter-mode-inverted",
        "FILTER-010",
        _FILTERING,
        "The runtime reads a deny list as an allow list (and an allow list as a deny list).",
        profile="claude-code",
        on_start=_filter_mode_inverted,
    ),
    Defect(
        "filtering-claimed-but-ignored",
        "FILTER-010",
        _FILTERING,
        "The profile claims native filtering; the runtime accepts the filter and ignores it.",
        profile="codex",
        profile_changes={"supports_builtin_tool_filtering": True},
        on_start=_filter_ignored,
    ),
    Defect(
        "inactive-builtin-executed",
        "FILTER-011",
        _FILTERING,
        "Without native filtering, excluded built-ins run without an approval request.",
        profile="opencode",
        on_start=_filter_ignored,
    ),
    Defect(
        "filtering-claimed-but-refused",
        "FILTER-019",
        _FILTERING,
        "supports_builtin_tool_filtering is True but do_start refuses every filter.",
        profile="codex",
        adapter=_FilteringClaimed,
        claims={"builtin_tool_filtering": True},
    ),
)
