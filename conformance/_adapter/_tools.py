"""Scripted checks of tools: merging, built-in filtering and dynamic parts.

These are the deep property suites, for adapters with the scripting extension.

The adapter's model is replaced by a script (the fake harness's format, see
``harness_testkit.fake_harness.Script``); the runtime's observation log tells what it
really received and executed. Each suite generates JSON scenarios with hypothesis, so a
failure shrinks to a minimal scenario that ``harness-testkit replay`` reruns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import strategies as st

from harness_testkit.spec import (
    BuiltinToolFiltering,
    ConsumerToolCallPart,
    ConsumerToolResultPart,
    HarnessCapabilityUnsupportedError,
    HarnessUsageError,
    NoSuchToolError,
    is_builtin_tool_included,
)

from .._checks import Check, CheckFailed, property_check
from .._context import CheckContext
from ._grammar import to_wire
from ._support import (
    SEEDED,
    USER_TOOL_NAMES,
    HostToolCounter,
    builtin_call_actions,
    executable_builtins,
    executions,
    grammar_first,
    make_script,
    observations,
    set_script,
)

__all__ = ["CHECKS"]


# -- 1. tool merging -----------------------------------------------------------------------


_USER_POOL = frozenset({*USER_TOOL_NAMES, "noSuchTool"})


def _is_builtin(name: str) -> bool:
    """A built-in name of a scenario (drawn, or ``builtin:<n>`` in the examples)."""
    return name not in _USER_POOL


def _resolve_builtins(names: Sequence[str], builtins: Sequence[str]) -> list[str]:
    """``builtin:<n>`` -> the adapter's n-th executable built-in (dropped when it has none)."""
    resolved = []
    for name in names:
        if name.startswith("builtin:"):
            index = int(name.partition(":")[2])
            if index < len(builtins):
                resolved.append(builtins[index])
        else:
            resolved.append(name)
    return resolved


def _lists(mode: str) -> Any:
    return lambda scenario: (
        scenario["mode"] == mode and any(_is_builtin(name) for name in scenario["names"])
    )


def _shadowable(builtins: Sequence[str]) -> list[str]:
    """Built-in names a host tool may shadow: all but ``askUserQuestions``, which notes
    1.1.9 reserve against host tools (the agent refuses it as a host tool name)."""
    return [name for name in builtins if name != "askUserQuestions"]


def _merging_scenarios(ctx: CheckContext) -> st.SearchStrategy[Any]:
    builtins = _shadowable(list(ctx.target.factory().builtin_tools))
    names = st.sampled_from([*builtins[:4], *USER_TOOL_NAMES])
    return st.fixed_dictionaries({"userTools": st.lists(names, unique=True, max_size=4)})


@property_check(
    "scripted.tool-merging",
    title="agent.tools, the specs the adapter receives and the names on calls obey the merge rules",
    requirements=(
        "MERGE-001",
        "TOOLSPEC-003",
        "TOOLSPEC-002",
        "MERGE-010",
        "MERGE-004",
        "MERGE-009",
    ),
    scenarios=_merging_scenarios,
    examples=(
        {"userTools": []},
        {"userTools": ["lookup", "weather"]},
        {"userTools": ["builtin:0", "notes"]},
    ),
    classes={
        "no host tool": lambda scenario: not scenario["userTools"],
        "host tools": lambda scenario: bool(scenario["userTools"]),
        "host tool named like a built-in": lambda scenario: any(
            _is_builtin(name) for name in scenario["userTools"]
        ),
    },
)
async def tool_merging(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    adapter = ctx.adapter()
    user_names = _resolve_builtins(scenario["userTools"], _shadowable(list(adapter.builtin_tools)))
    builtins = executable_builtins(adapter)
    counter = HostToolCounter()
    host_calls = [
        {"hostTool": name, "id": f"h{i}", "input": {"n": i}} for i, name in enumerate(user_names)
    ]
    builtin_calls = builtin_call_actions(builtins[:1])
    set_script(adapter, make_script([*host_calls, *builtin_calls], [{"text": "done"}]))
    tools = {name: counter.make(name) for name in user_names}
    agent = ctx.agent(adapter, tools=tools, sandbox_config=SEEDED)
    expected_keys = list({**dict.fromkeys(adapter.builtin_tools), **dict.fromkeys(user_names)})
    if list(agent.tools) != expected_keys or any(
        agent.tools[name] is not tools[name] for name in user_names
    ):
        raise CheckFailed(
            "MERGE-001",
            "agent.tools is not the built-ins merged with the host tools (host tool wins)",
            expected=expected_keys,
            observed=list(agent.tools),
        )
    session = await ctx.create_session(agent)
    with grammar_first(ctx):
        parts = await ctx.run_prompt(agent, session, "merge tools")
    from harness_testkit.scripting import TurnStarted

    started = observations(adapter).of_kind(TurnStarted)
    received = [spec.name for spec in started[-1].tools] if started else []
    if received != user_names:
        raise CheckFailed(
            "TOOLSPEC-003",
            "the adapter did not receive exactly the active host tools, in order",
            expected=user_names,
            observed=received,
        )
    consumer_calls = {p.tool_call_id: p for p in parts if isinstance(p, ConsumerToolCallPart)}
    for index, name in enumerate(user_names):
        call = consumer_calls.get(f"h{index}")
        if call is None or call.tool_name != name:
            raise CheckFailed(
                "TOOLSPEC-002",
                f"host call h{index} should carry toolName '{name}'",
                observed=None if call is None else call.tool_name,
            )
        if counter.by_call[f"h{index}"] != 1:
            raise CheckFailed(
                "MERGE-010",
                f"host tool '{name}' (call h{index}) ran {counter.by_call[f'h{index}']} times, expected once",
            )


# -- 2. filtering --------------------------------------------------------------------------


def _filtering_scenarios(ctx: CheckContext) -> st.SearchStrategy[Any]:
    builtins = list(ctx.target.factory().builtin_tools)
    pool = [*builtins, "lookup", "weather", "noSuchTool"]
    return st.fixed_dictionaries(
        {
            "mode": st.sampled_from(["active", "inactive", "both", "none"]),
            "names": st.lists(st.sampled_from(pool), max_size=5),
            "userTools": st.lists(st.sampled_from(["lookup", "weather"]), unique=True, max_size=2),
        }
    )


def _filter_model(
    builtins: Sequence[str], user_tools: Sequence[str], mode: str, names: Sequence[str]
) -> tuple[str | None, list[str], BuiltinToolFiltering | None]:
    """The executable model of 4.1-4.7: (error kind, active user tools, built-in filter)."""
    if mode == "both":
        return "usage", [], None
    if mode == "none":
        return None, list(user_tools), None
    merged = set(builtins) | set(user_tools)
    if any(name not in merged for name in names):
        return "no-such-tool", [], None
    listed = list(dict.fromkeys(names))
    if mode == "active":
        active = [name for name in user_tools if name in listed]
        disabled = [name for name in builtins if name not in listed]
        allowed = [name for name in builtins if name in listed]
        return (
            None,
            active,
            BuiltinToolFiltering(mode="allow", tool_names=allowed) if disabled else None,
        )
    active = [name for name in user_tools if name not in listed]
    denied = [name for name in builtins if name in listed]
    return None, active, BuiltinToolFiltering(mode="deny", tool_names=denied) if denied else None


#: Equivalence classes of the filtering property (the examples cover each).
FILTERING_CLASSES = {
    "inactive built-in": _lists("inactive"),
    "active built-in": _lists("active"),
    "allow list without built-ins": lambda scenario: (
        scenario["mode"] == "active" and not any(_is_builtin(name) for name in scenario["names"])
    ),
    "both lists": lambda scenario: scenario["mode"] == "both",
    "unknown tool": lambda scenario: (
        "noSuchTool" in scenario["names"] and scenario["mode"] in ("active", "inactive")
    ),
    "no filter": lambda scenario: scenario["mode"] == "none",
    "host tool": lambda scenario: bool(scenario["userTools"]),
}
_FILTERING_EXAMPLES = (
    {"mode": "inactive", "names": ["builtin:0"], "userTools": ["lookup"]},
    {"mode": "active", "names": ["builtin:0", "lookup"], "userTools": ["lookup", "weather"]},
    {"mode": "active", "names": ["weather"], "userTools": ["weather"]},
    {"mode": "both", "names": ["lookup"], "userTools": ["lookup"]},
    {"mode": "inactive", "names": ["noSuchTool"], "userTools": []},
    {"mode": "none", "names": [], "userTools": ["lookup"]},
)


@property_check(
    "scripted.filtering",
    title="activeTools/inactiveTools: errors, do_start filtering and execution match the rules' model",
    requirements=(
        "FILTER-001",
        "FILTER-002",
        "FILTER-004",
        "FILTER-005",
        "FILTER-007",
        "FILTER-009",
        "FILTER-010",
        "FILTER-011",
        "FILTER-012",
        "FILTER-015",
    ),
    scenarios=_filtering_scenarios,
    examples=_FILTERING_EXAMPLES,
    classes=FILTERING_CLASSES,
)
async def filtering(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    adapter = ctx.adapter()
    builtins = list(adapter.builtin_tools)
    user_names: list[str] = list(scenario["userTools"])
    mode = scenario["mode"]
    names = _resolve_builtins(scenario["names"], executable_builtins(adapter) or builtins)
    error, active, expected_filter = _filter_model(builtins, user_names, mode, names)
    if (
        error is None
        and expected_filter is not None
        and not (adapter.supports_builtin_tool_filtering or adapter.supports_builtin_tool_approvals)
    ):
        error = "capability"
    counter = HostToolCounter()
    tools = {name: counter.make(name) for name in user_names}
    settings: dict[str, Any] = {}
    if mode in ("active", "both"):
        settings["active_tools"] = names
    if mode in ("inactive", "both"):
        settings["inactive_tools"] = names
    executable = executable_builtins(adapter)
    host_calls = [
        {"hostTool": name, "id": f"h{i}-{name}", "input": {}} for i, name in enumerate(user_names)
    ]
    set_script(
        adapter, make_script([*host_calls, *builtin_call_actions(executable)], [{"text": "done"}])
    )
    expected_error = {
        "usage": HarnessUsageError,
        "no-such-tool": NoSuchToolError,
        "capability": HarnessCapabilityUnsupportedError,
    }.get(error or "")
    try:
        agent = ctx.agent(adapter, tools=tools, sandbox_config=SEEDED, **settings)
    except Exception as raised:
        if expected_error is not None and isinstance(raised, expected_error):
            return
        requirement = {
            "usage": "FILTER-001",
            "no-such-tool": "FILTER-002",
            "capability": "FILTER-009",
        }.get(error or "", "FILTER-007")
        raise CheckFailed(
            requirement,
            f"the agent raised {type(raised).__name__}: {raised}",
            expected=None if expected_error is None else expected_error.__name__,
        ) from raised
    if expected_error is not None:
        requirement = {
            "usage": "FILTER-001",
            "no-such-tool": "FILTER-002",
            "capability": "FILTER-009",
        }[error or ""]
        raise CheckFailed(
            requirement, f"expected {expected_error.__name__} at construction; none was raised"
        )
    session = await ctx.create_session(agent)
    from harness_testkit.scripting import SessionStarted

    started = observations(adapter).of_kind(SessionStarted)[-1]
    if started.builtin_tool_filtering != expected_filter:
        raise CheckFailed(
            "FILTER-007",
            "the built-in filter passed to do_start differs from the rules",
            expected=to_wire(expected_filter),
            observed=to_wire(started.builtin_tool_filtering),
        )
    with grammar_first(ctx):
        await ctx.run_prompt(agent, session, "filtering")
    executed = executions(adapter)
    for index, name in enumerate(executable):
        call_id = f"b{index}-{name}"
        ran = any(entry.executed for entry in executed.get(call_id, []))
        included = is_builtin_tool_included(expected_filter, name)
        if ran and not included:
            requirement = "FILTER-010" if adapter.supports_builtin_tool_filtering else "FILTER-011"
            raise CheckFailed(
                requirement, f"inactive built-in '{name}' was executed by the runtime"
            )
    for index, name in enumerate(user_names):
        call_id = f"h{index}-{name}"
        runs = counter.by_call[call_id]
        if name in active and runs != 1:
            raise CheckFailed(
                "FILTER-005", f"active host tool '{name}' ran {runs} times, expected once"
            )
        if name not in active and runs:
            raise CheckFailed("FILTER-015", f"inactive host tool '{name}' ran on the host")


# -- 4. dynamic parts ------------------------------------------------------------------------

_PATHS = ("notes/a.md", "notes/b.md", "src/x.py", "deep/er/y.txt")


def _dynamic_scenarios(ctx: CheckContext) -> st.SearchStrategy[Any]:
    change = st.fixed_dictionaries(
        {
            "path": st.sampled_from(_PATHS),
            "op": st.sampled_from(["write", "delete"]),
            "content": st.text(max_size=8),
        }
    )
    item = st.one_of(
        st.fixed_dictionaries({"text": st.sampled_from(["one", "two words", "three more words"])}),
        st.fixed_dictionaries(
            {"changes": st.lists(change, min_size=1, max_size=3, unique_by=lambda c: c["path"])}
        ),
    )
    return st.fixed_dictionaries(
        {"steps": st.lists(st.lists(item, min_size=1, max_size=3), min_size=1, max_size=3)}
    )


def _ops(scenario: Mapping[str, Any]) -> set[str]:
    return {
        change["op"]
        for step in scenario["steps"]
        for item in step
        for change in item.get("changes", [])
    }


@property_check(
    "scripted.dynamic-parts",
    title="file-change parts become fileChange tool pairs with stripped paths; files really change",
    requirements=("STREAM-019", "STREAM-018", "TRANSLATE-013", "STREAM-043", "STREAM-044"),
    scenarios=_dynamic_scenarios,
    examples=(
        {
            "steps": [
                [
                    {"text": "one"},
                    {"changes": [{"path": "notes/a.md", "op": "write", "content": "x"}]},
                ],
                [{"changes": [{"path": "notes/a.md", "op": "delete", "content": ""}]}],
            ]
        },
    ),
    classes={
        "file written": lambda scenario: "write" in _ops(scenario),
        "file deleted": lambda scenario: "delete" in _ops(scenario),
        "text beside changes": lambda scenario: any(
            "text" in item for step in scenario["steps"] for item in step
        ),
        "several steps": lambda scenario: len(scenario["steps"]) > 1,
    },
)
async def dynamic_parts(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    adapter = ctx.adapter()
    from harness_testkit.fake_harness import get_profile

    steps: list[list[dict[str, Any]]] = []
    expected_events: list[tuple[str, str]] = []
    state: dict[str, str | None] = {}
    for step in scenario["steps"]:
        actions: list[dict[str, Any]] = []
        for item in step:
            if "text" in item:
                actions.append({"text": item["text"]})
                continue
            changes = []
            for change in item["changes"]:
                path = change["path"]
                if change["op"] == "delete":
                    if state.get(path) is None:
                        continue  # deleting a missing file is no mutation
                    changes.append({"path": path, "delete": True})
                    expected_events.append(("delete", path))
                    state[path] = None
                else:
                    event = "create" if state.get(path) is None else "modify"
                    changes.append({"path": path, "content": change["content"]})
                    expected_events.append((event, path))
                    state[path] = change["content"]
            if changes:
                actions.append({"fileChange": changes})
        if actions:
            steps.append(actions)
    if not steps:
        return
    set_script(adapter, make_script(*steps, announce=False))
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    with grammar_first(ctx):
        parts = await ctx.run_prompt(agent, session, "dynamic parts")
    profile_name = getattr(getattr(adapter.inner, "profile", None), "name", None)
    emits = True
    modify_only = False
    if profile_name is not None:
        profile = get_profile(profile_name)
        emits, modify_only = profile.emits_file_change, profile.file_change_events == "modify-only"
    pairs = [
        p for p in parts if isinstance(p, ConsumerToolCallPart) and p.tool_name == "fileChange"
    ]
    results = {
        p.tool_call_id: p
        for p in parts
        if isinstance(p, ConsumerToolResultPart) and p.tool_name == "fileChange"
    }
    observed = [(p.input["event"], p.input["path"]) for p in pairs]
    wanted = (
        [("modify" if modify_only else event, path) for event, path in expected_events]
        if emits
        else []
    )
    if observed != wanted:
        raise CheckFailed(
            "STREAM-019",
            "consumers did not see one fileChange per mutated path, in order",
            expected=wanted,
            observed=observed,
        )
    for call in pairs:
        if (
            not call.tool_call_id.startswith("harness-file-change-")
            or call.dynamic is not True
            or call.provider_executed is not True
        ):
            raise CheckFailed("TRANSLATE-013", f"malformed fileChange call {to_wire(call)!r}")
        result = results.get(call.tool_call_id)
        if result is None or result.output != call.input:
            raise CheckFailed(
                "TRANSLATE-013", f"fileChange {call.tool_call_id} lacks its matching result"
            )
        if call.input["path"].startswith("/"):
            raise CheckFailed(
                "STREAM-044", f"fileChange path was not work-dir stripped: {call.input['path']}"
            )
    sandbox = session.sandbox_session
    for path, content in state.items():
        text = await sandbox.read_text_file(f"{session.session_work_dir}/{path}")
        if text != content:
            raise CheckFailed(
                "STREAM-018",
                f"the sandbox file {path} does not hold what the runtime wrote",
                expected=content,
                observed=text,
            )


#: This module's checks, in order (listed by ``_registry.py``).
CHECKS: tuple[Check, ...] = (
    tool_merging,
    filtering,
    dynamic_parts,
)
