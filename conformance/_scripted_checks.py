"""Scripted checks: the deep property suites, for adapters with the scripting extension.

The adapter's model is replaced by a script (the fake harness's format, see
``harness_testkit.fake_harness.Script``); the runtime's observation log tells what it
really received and executed. Each suite generates JSON scenarios with hypothesis, so a
failure shrinks to a minimal scenario that ``harness-testkit replay`` reruns.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import anyio
from hypothesis import strategies as st

from harness_testkit.reference import (
    AgentSession,
    HarnessAgent,
    SandboxConfig,
    Tool,
    ToolExecutionOptions,
    tool,
)
from harness_testkit.spec import (
    BuiltinToolFiltering,
    ConsumerPart,
    ConsumerTextDeltaPart,
    ConsumerToolApprovalRequestPart,
    ConsumerToolCallPart,
    ConsumerToolErrorPart,
    ConsumerToolResultPart,
    HarnessCapabilityUnsupportedError,
    HarnessUsageError,
    NoSuchToolError,
    SandboxSession,
    is_builtin_tool_included,
)

from ._checks import CheckFailed, CheckSkipped, check, property_check
from ._context import CheckContext
from ._grammar import recorded_violations, to_wire
from ._recording import RecordingAdapter

__all__ = ["HostToolCounter", "builtin_call_actions"]

#: Fixed, deterministic inputs for the built-ins a scripted runtime executes.
_BUILTIN_INPUTS: Mapping[str, dict[str, Any]] = {
    "write": {"file_path": "conformance/w.txt", "content": "written\n"},
    "read": {"file_path": "conformance/r.txt"},
    "edit": {"file_path": "conformance/r.txt", "old_string": "seed", "new_string": "edited"},
    "bash": {"command": "echo conformance"},
    "grep": {"pattern": "seed"},
    "glob": {"pattern": "**/*.txt"},
}
_USER_TOOL_NAMES = ("lookup", "weather", "notes")


class HostToolCounter:
    """Host tools whose executions are counted by name and call id."""

    def __init__(self) -> None:
        self.by_call: Counter[str] = Counter()
        self.by_name: Counter[str] = Counter()

    @staticmethod
    def output(name: str) -> dict[str, Any]:
        """What the tool named ``name`` returns from every execution."""
        return {"tool": name, "ok": True}

    def make(self, name: str, *, client_side: bool = False) -> Tool:
        """A host tool named ``name`` that records every execution."""

        def execute(value: Any, options: ToolExecutionOptions) -> Any:
            self.by_call[options.tool_call_id] += 1
            self.by_name[name] += 1
            return self.output(name)

        return tool(
            description=f"Conformance tool {name}",
            input_schema={"type": "object"},
            execute=None if client_side else execute,
        )


def builtin_call_actions(builtins: Sequence[str], prefix: str = "b") -> list[dict[str, Any]]:
    """Script actions calling each executable built-in once (ids ``<prefix><n>``)."""
    return [
        {"builtin": name, "id": f"{prefix}{index}-{name}", "input": _BUILTIN_INPUTS[name]}
        for index, name in enumerate(builtins)
        if name in _BUILTIN_INPUTS
    ]


def _executable_builtins(adapter: RecordingAdapter) -> list[str]:
    return [key for key in adapter.builtin_tools if key in _BUILTIN_INPUTS]


def _script(*steps: list[dict[str, Any]], announce: bool = True) -> dict[str, Any]:
    return {
        "version": 1,
        "turns": [
            {
                "steps": [
                    {"actions": actions, "announceToolCallCount": announce} for actions in steps
                ]
            }
        ],
        "whenExhausted": "repeat-last",
    }


def _set_script(adapter: RecordingAdapter, script: Mapping[str, Any]) -> None:
    from harness_testkit.fake_harness import Script

    set_script = getattr(adapter, "set_script", None)
    if set_script is None:
        raise CheckFailed("TOOLSPEC-019", "the adapter declares scripting but has no set_script()")
    set_script(Script.model_validate(dict(script)))


def _observations(adapter: RecordingAdapter) -> Any:
    log = getattr(adapter, "observations", None)
    if log is None:
        raise CheckFailed("TOOLSPEC-019", "the adapter declares scripting but has no observations")
    return log


def _executions(*adapters: RecordingAdapter) -> dict[str, list[Any]]:
    """``ToolExecuted`` observations by call id, over every adapter given.

    A turn continued from a JSON state runs in another adapter: what ran before the
    suspension is in the first adapter's log, what ran after in the next one's.
    """
    from harness_testkit.fake_harness import ToolExecuted

    found: dict[str, list[Any]] = {}
    for adapter in adapters:
        for entry in _observations(adapter).of_kind(ToolExecuted):
            found.setdefault(entry.tool_call_id, []).append(entry)
    return found


async def _write_seed_file(session: SandboxSession, work_dir: str) -> None:
    # read/edit/grep built-ins need a file to work on.
    await session.write_text_file(f"{work_dir}/conformance/r.txt", "seed line\n")


#: Sandbox set-up shared by the checks that run built-ins.
SEEDED = SandboxConfig(on_session=_write_seed_file)


def _grammar(ctx: CheckContext, adapters: Sequence[RecordingAdapter] | None = None) -> None:
    """Stream grammar over everything the check's adapters (or ``adapters``) emitted."""
    judged = ctx.adapters if adapters is None else adapters
    if not judged:
        return
    first = judged[0]
    violations = recorded_violations(
        [session for adapter in judged for session in adapter.sessions],
        builtin_tools=first.builtin_tools,
        harness_id=first.harness_id,
    )
    if violations:
        raise CheckFailed(violations[0].requirement, str(violations[0]))


@contextlib.contextmanager
def _grammar_first(
    ctx: CheckContext, adapters: Sequence[RecordingAdapter] | None = None
) -> Iterator[None]:
    """Run the stream grammar when the turns inside are over, before any other verdict.

    A check's own assertions (and the agent's reactions) often trip over a stream the
    adapter got wrong: the grammar names that cause. So it runs when the turns end and
    also when driving them fails, and its violation wins over the failure it caused.

    Args:
        ctx: The check's context.
        adapters: Judge only these adapters' sessions (default: all of the check's),
            read when the block ends.
    """
    try:
        yield
    except Exception:
        _grammar(ctx, adapters)
        raise
    _grammar(ctx, adapters)


# -- 1. tool merging -----------------------------------------------------------------------


def _merging_scenarios(ctx: CheckContext) -> st.SearchStrategy[Any]:
    builtins = list(ctx.target.factory().builtin_tools)
    names = st.sampled_from([*builtins[:4], *_USER_TOOL_NAMES])
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
)
async def tool_merging(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    user_names: list[str] = list(scenario["userTools"])
    adapter = ctx.adapter()
    builtins = _executable_builtins(adapter)
    counter = HostToolCounter()
    host_calls = [
        {"hostTool": name, "id": f"h{i}", "input": {"n": i}} for i, name in enumerate(user_names)
    ]
    builtin_calls = builtin_call_actions(builtins[:1])
    _set_script(adapter, _script([*host_calls, *builtin_calls], [{"text": "done"}]))
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
    with _grammar_first(ctx):
        parts = await ctx.run_prompt(agent, session, "merge tools")
    from harness_testkit.fake_harness import TurnStarted

    started = _observations(adapter).of_kind(TurnStarted)
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
)
async def filtering(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    adapter = ctx.adapter()
    builtins = list(adapter.builtin_tools)
    user_names: list[str] = list(scenario["userTools"])
    mode, names = scenario["mode"], list(scenario["names"])
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
    executable = _executable_builtins(adapter)
    host_calls = [
        {"hostTool": name, "id": f"h{i}-{name}", "input": {}} for i, name in enumerate(user_names)
    ]
    _set_script(
        adapter, _script([*host_calls, *builtin_call_actions(executable)], [{"text": "done"}])
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
    from harness_testkit.fake_harness import SessionStarted

    started = _observations(adapter).of_kind(SessionStarted)[-1]
    if started.builtin_tool_filtering != expected_filter:
        raise CheckFailed(
            "FILTER-007",
            "the built-in filter passed to do_start differs from the rules",
            expected=to_wire(expected_filter),
            observed=to_wire(started.builtin_tool_filtering),
        )
    with _grammar_first(ctx):
        await ctx.run_prompt(agent, session, "filtering")
    executions = _executions(adapter)
    for index, name in enumerate(executable):
        call_id = f"b{index}-{name}"
        ran = any(entry.executed for entry in executions.get(call_id, []))
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


@property_check(
    "scripted.dynamic-parts",
    title="file-change parts become fileChange tool pairs with stripped paths; files really change",
    requirements=("STREAM-019", "STREAM-018", "TRANSLATE-013", "STREAM-043", "STREAM-044"),
    scenarios=_dynamic_scenarios,
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
    _set_script(adapter, _script(*steps, announce=False))
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    with _grammar_first(ctx):
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


# -- 5. serializable continuations ----------------------------------------------------------


def _continuation_scenarios(ctx: CheckContext) -> st.SearchStrategy[Any]:
    from harness_testkit.fake_harness import scripts

    profile = getattr(ctx.target.factory(), "profile", None)
    kinds = ("text", "reasoning", "builtin", "file-change", "raw")
    return st.fixed_dictionaries(
        {
            "script": scripts(
                profile=profile if profile is not None else "minimal",
                host_tools=(),
                kinds=kinds,
                max_turns=1,
                max_steps=3,
                max_actions=3,
            ).map(lambda script: script.to_wire()),
            "cut": st.integers(min_value=1, max_value=40),
        }
    )


_VOLATILE = ("timestamp", "id")


def _normalise(parts: Sequence[ConsumerPart]) -> list[Any]:
    """Content parts only (framing and synthetic ids removed) for stream comparison."""
    out: list[Any] = []
    for part in parts:
        if part.type in ("start", "start-step", "finish-step", "finish", "abort"):
            continue
        wire = to_wire(part)
        call_id = wire.get("toolCallId", "")
        if isinstance(call_id, str) and call_id.startswith(
            ("harness-file-change-", "harness-compaction-")
        ):
            wire["toolCallId"] = call_id.split("-")[1]
        out.append(json.loads(json.dumps(wire)))
    return out


@property_check(
    "scripted.continuations",
    title="A turn suspended at any point and continued after a JSON round trip equals the uninterrupted run",
    requirements=("ADAPTER-032", "LIFECYCLE-041", "LIFECYCLE-006", "STOP-008"),
    scenarios=_continuation_scenarios,
    needs=("resume",),
)
async def continuations(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    # A suspension may cut a text block or a streamed tool input in two, which the
    # per-slice grammar cannot follow: it judges the uninterrupted run, and comparing
    # the slices with that run judges them.
    judged: list[RecordingAdapter] = []
    with _grammar_first(ctx, judged):
        await _split_and_continue(ctx, scenario, judged)


async def _split_and_continue(
    ctx: CheckContext, scenario: Mapping[str, Any], judged: list[RecordingAdapter]
) -> None:
    script = scenario["script"]
    whole_adapter = ctx.adapter()
    judged.append(whole_adapter)
    _set_script(whole_adapter, script)
    whole_agent = ctx.agent(whole_adapter)
    whole_session = await ctx.create_session(whole_agent, session_id="cont-whole")
    whole_parts = await ctx.run_prompt(whole_agent, whole_session, "go")
    whole = _normalise(whole_parts)
    # The drawn cut wraps around the parts before the terminal one, so the suspension
    # is requested while the turn still runs instead of after it mostly finished.
    cut_after = 1 + scenario["cut"] % max(1, len(whole_parts) - 1)

    first_adapter = ctx.adapter()
    _set_script(first_adapter, script)
    first_agent = ctx.agent(first_adapter)
    session = await ctx.create_session(first_agent, session_id="cont-split")
    result = await first_agent.stream(session=session, prompt="go")
    head: list[ConsumerPart] = []
    state: Any = None
    with anyio.fail_after(ctx.capabilities.turn_timeout):
        async with anyio.create_task_group() as group:
            cut = anyio.Event()

            async def consume() -> None:
                async for part in result.full_stream:
                    head.append(part)
                    if len(head) >= cut_after:
                        cut.set()
                cut.set()

            async def suspend() -> None:
                nonlocal state
                await cut.wait()
                try:
                    state = await session.suspend_turn()
                except Exception:
                    state = None  # the turn finished first: nothing to continue

            group.start_soon(consume)
            group.start_soon(suspend)
    if state is None:
        if _normalise(head) != whole:
            raise CheckFailed(
                "ADAPTER-032",
                "two runs of the same script differ",
                expected=whole,
                observed=_normalise(head),
            )
        return
    wire = json.loads(json.dumps(state.to_wire()))
    second_adapter = ctx.adapter()
    _set_script(second_adapter, script)
    second_agent = ctx.agent(second_adapter)
    resumed = await ctx.create_session(second_agent, session_id="cont-split", continue_from=wire)
    with anyio.fail_after(ctx.capabilities.turn_timeout):
        tail = await ctx.collect(await second_agent.continue_stream(session=resumed))
    combined = _normalise(head) + _normalise(tail)
    if ctx.capabilities.continuation == "lossless":
        if combined != whole:
            raise CheckFailed(
                "ADAPTER-032",
                f"suspending after {len(head)} parts and continuing changed the stream (gap or duplicate)",
                expected=whole,
                observed=combined,
            )
        return
    # Lossy: the in-flight step may be recomputed, so parts may repeat, but nothing may be lost.
    remaining = list(combined)
    for item in whole:
        if item in remaining:
            remaining.remove(item)
        else:
            raise CheckFailed(
                "ADAPTER-032",
                f"after a lossy continuation a part is missing: {item!r}",
                expected=whole,
                observed=combined,
            )


# -- smaller scripted requirements ---------------------------------------------------------


_PERMISSION_MODE_NAMES = ("allow-all", "allow-edits", "allow-reads")
_APPROVAL_VIAS = ("continue", "json")

#: Every (mode, answer, route) once, approvals first: twelve scenarios, which the few
#: random draws of a smoke run would not all reach (a defect of one mode would slip).
_PERMISSION_EXAMPLES = tuple(
    {"mode": mode, "approve": approve, "via": via}
    for approve in (True, False)
    for via in _APPROVAL_VIAS
    for mode in _PERMISSION_MODE_NAMES
)


@property_check(
    "scripted.permission-modes",
    title="Built-ins ask for approval exactly as the permission mode and tool kinds require",
    requirements=("APPROVAL-002", "APPROVAL-003", "APPROVAL-004", "APPROVAL-034", "APPROVAL-035"),
    scenarios=lambda ctx: st.fixed_dictionaries(
        {
            "mode": st.sampled_from(_PERMISSION_MODE_NAMES),
            "approve": st.booleans(),
            "via": st.sampled_from(_APPROVAL_VIAS),
        }
    ),
    needs=("builtin_tool_approvals",),
    examples=_PERMISSION_EXAMPLES,
)
async def permission_modes(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    from harness_testkit.spec import requires_approval

    mode, approve = scenario["mode"], bool(scenario["approve"])
    via = scenario.get("via", "continue")
    if via == "json" and not ctx.capabilities.resume:
        via = "continue"  # without resume no session can start from the JSON state
    adapter = ctx.adapter()
    executable = _executable_builtins(adapter)
    if not executable:
        raise CheckSkipped(
            "the adapter declares none of the built-ins the scripted suite runs "
            f"({', '.join(_BUILTIN_INPUTS)})"
        )
    script = _script(builtin_call_actions(executable), [{"text": "done"}])

    def make_agent(adapter: RecordingAdapter) -> HarnessAgent:
        return ctx.agent(adapter, permission_mode=mode, sandbox_config=SEEDED)

    _set_script(adapter, script)
    agent = make_agent(adapter)
    session = await ctx.create_session(agent, session_id="permission-modes")
    all_parts: list[ConsumerPart] = []
    asked: set[str] = set()
    with _grammar_first(ctx):
        parts = await ctx.run_prompt(agent, session, "permission modes")
        all_parts.extend(parts)
        rounds = 0
        while True:
            new = [
                p
                for p in parts
                if isinstance(p, ConsumerToolApprovalRequestPart)
                and not p.is_automatic
                and p.tool_call.tool_call_id not in asked
            ]
            if not new:
                break
            rounds += 1
            if rounds > len(executable) + 1:
                raise CheckFailed(
                    "APPROVAL-034", "approval requests keep coming back after being answered"
                )
            asked.update(request.tool_call.tool_call_id for request in new)
            if via == "json":
                # The answers must reach the runtime through a session restored from the
                # suspended turn's JSON state too, not only through the live control.
                state = json.loads(json.dumps((await session.suspend_turn()).to_wire()))
                adapter = ctx.adapter()
                _set_script(adapter, script)
                agent = make_agent(adapter)
                session = await ctx.create_session(
                    agent, session_id="permission-modes", continue_from=state
                )
            answers = [
                {"type": "tool-approval-response", "approvalId": r.approval_id, "approved": approve}
                for r in new
            ]
            try:
                with anyio.fail_after(ctx.capabilities.turn_timeout):
                    result = await agent.continue_stream(
                        session=session, tool_approval_continuations=answers
                    )
                    parts = await ctx.collect(result)
            except TimeoutError as error:
                raise CheckFailed(
                    "APPROVAL-034" if approve else "APPROVAL-035",
                    f"after {'approving' if approve else 'denying'} "
                    f"{', '.join(sorted(r.tool_call.tool_call_id for r in new))} (via {via}) "
                    f"the turn did not continue within {ctx.capabilities.turn_timeout} s",
                ) from error
            all_parts.extend(parts)
    executions = _executions(*ctx.adapters)
    for index, name in enumerate(executable):
        call_id = f"b{index}-{name}"
        kind = adapter.builtin_tools[name].tool_use_kind
        needs = requires_approval(mode, kind)
        was_asked = call_id in asked
        if needs != was_asked:
            requirement = {
                "allow-all": "APPROVAL-002",
                "allow-edits": "APPROVAL-003",
                "allow-reads": "APPROVAL-004",
            }[mode]
            raise CheckFailed(
                requirement,
                f"built-in '{name}' ({kind}) under {mode}: approval asked={was_asked}, expected {needs}",
            )
        ran = sum(1 for entry in executions.get(call_id, []) if entry.executed)
        if needs and not approve and ran:
            raise CheckFailed("APPROVAL-035", f"denied built-in '{name}' was executed")
        if (not needs or approve) and ran != 1:
            raise CheckFailed(
                "APPROVAL-034", f"built-in '{name}' executed {ran} times, expected exactly once"
            )
        if needs and approve:
            outcomes = [
                p
                for p in all_parts
                if isinstance(p, ConsumerToolResultPart | ConsumerToolErrorPart)
                and p.tool_call_id == call_id
                and not getattr(p, "preliminary", False)
            ]
            # A lossy continuation from a JSON state re-emits the in-flight step from its
            # start (declared, see scripted.continuations), results included: there only
            # a missing outcome is wrong.
            rerun = via == "json" and ctx.capabilities.continuation == "lossy"
            if len(outcomes) != 1 and not (rerun and outcomes):
                raise CheckFailed(
                    "APPROVAL-034",
                    f"approved built-in '{name}' ({call_id}, via {via}) ran once but its "
                    f"outcome reached consumers {len(outcomes)} times across the turn's "
                    "slices, expected exactly one tool-result",
                    observed=[to_wire(p) for p in outcomes],
                )


def _approval_plan_scenarios(ctx: CheckContext) -> st.SearchStrategy[Any]:
    call = st.sampled_from(["approve", "deny", "auto-deny", "auto", "client"])
    return st.fixed_dictionaries(
        {
            "calls": st.lists(call, min_size=1, max_size=4),
            "decisions": st.lists(st.booleans(), min_size=4, max_size=4),
            "via": st.sampled_from(["continue", "messages", "json"]),
        }
    )


@property_check(
    "scripted.host-approvals",
    title="Host tool approvals pause and resume: nothing runs early, denied never, approved exactly once",
    requirements=("APPROVAL-034", "APPROVAL-020", "HOSTTOOL-006", "LIFECYCLE-041"),
    scenarios=_approval_plan_scenarios,
)
async def host_approvals(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    kinds: list[str] = list(scenario["calls"])
    via = scenario["via"]
    if via == "json" and not ctx.capabilities.resume:
        via = "continue"
    statuses = {
        "approve": "user-approval",
        "deny": "user-approval",
        "auto-deny": "denied",
        "auto": "approved",
        "client": "not-applicable",
    }
    names = [f"t{i}_{kind.replace('-', '_')}" for i, kind in enumerate(kinds)]
    counter = HostToolCounter()
    tools = {
        name: counter.make(name, client_side=kind == "client")
        for name, kind in zip(names, kinds, strict=True)
    }
    approval = {name: statuses[kind] for name, kind in zip(names, kinds, strict=True)}
    script = _script(
        [{"hostTool": name, "id": f"c{i}", "input": {"i": i}} for i, name in enumerate(names)],
        [{"text": "done"}],
    )

    def make_agent(adapter: RecordingAdapter) -> HarnessAgent:
        return ctx.agent(adapter, tools=tools, tool_approval=approval)

    adapter = ctx.adapter()
    _set_script(adapter, script)
    agent = make_agent(adapter)
    session = await ctx.create_session(agent, session_id="approvals")
    with _grammar_first(ctx):
        all_parts = await _drive_host_approvals(
            ctx, scenario, via, counter, make_agent, script, agent, session
        )
    from harness_testkit.fake_harness import ToolResultReceived

    # What each host call's execution returned (HostToolCounter) and what the check
    # answered for client-side calls: the runtime must receive exactly that.
    submitted = {
        f"c{index}": counter.output(name) if kind != "client" else {"client": f"c{index}"}
        for index, (name, kind) in enumerate(zip(names, kinds, strict=True))
    }
    received: dict[str, list[Any]] = {}
    for recorded in ctx.adapters:
        for entry in _observations(recorded).of_kind(ToolResultReceived):
            received.setdefault(entry.tool_call_id, []).append(entry.output)
    for index, kind in enumerate(kinds):
        call_id = f"c{index}"
        ran = counter.by_call[call_id]
        approved = _approved(kinds, scenario["decisions"], call_id)
        should_run = kind == "auto" or approved
        if should_run and ran != 1:
            raise CheckFailed(
                "APPROVAL-034", f"call {call_id} ({kind}) ran {ran} times, expected exactly once"
            )
        if not should_run and ran:
            raise CheckFailed(
                "APPROVAL-034", f"call {call_id} ({kind}) ran although it was denied or client-side"
            )
        outcomes = [
            p
            for p in all_parts
            if isinstance(p, ConsumerToolResultPart | ConsumerToolErrorPart)
            and p.tool_call_id == call_id
            and not getattr(p, "preliminary", False)
        ]
        if kind == "approve" and approved and len(outcomes) != 1:
            raise CheckFailed(
                "APPROVAL-034",
                f"approved call {call_id}'s result appears {len(outcomes)} times in the continued streams, expected once",
            )
        if should_run or kind == "client":
            outputs = received.get(call_id, [])
            if not outputs or any(output != submitted[call_id] for output in outputs):
                raise CheckFailed(
                    "HOSTTOOL-006",
                    f"the runtime did not receive call {call_id}'s ({kind}) submitted output "
                    f"as its result (via {via})",
                    expected=submitted[call_id],
                    observed=outputs,
                )


async def _drive_host_approvals(
    ctx: CheckContext,
    scenario: Mapping[str, Any],
    via: str,
    counter: HostToolCounter,
    make_agent: Callable[[RecordingAdapter], HarnessAgent],
    script: Mapping[str, Any],
    agent: HarnessAgent,
    session: AgentSession,
) -> list[ConsumerPart]:
    """The turns of :func:`host_approvals`: the prompt, then one answer round per pause."""
    kinds: list[str] = list(scenario["calls"])
    parts = await ctx.run_prompt(agent, session, "approvals")
    all_parts: list[ConsumerPart] = list(parts)
    for index, kind in enumerate(kinds):
        if kind in ("approve", "deny", "client") and counter.by_call[f"c{index}"]:
            raise CheckFailed(
                "APPROVAL-034", f"call c{index} ({kind}) ran before its approval/result"
            )
    rounds = 0
    while session.has_unfinished_turn():
        rounds += 1
        if rounds > len(kinds) + 2:
            raise CheckFailed("APPROVAL-034", "the turn keeps pausing after every answer")
        pending = session.pending_tool_approvals
        approvals = [
            {
                "type": "tool-approval-response",
                "approvalId": record.approval_id,
                "approved": _approved(kinds, scenario["decisions"], record.tool_call_id),
            }
            for record in pending
        ]
        results = [
            {"toolCallId": record.tool_call_id, "output": {"client": record.tool_call_id}}
            for record in session.pending_tool_results
        ]
        if via == "json":
            state = json.loads(json.dumps((await session.suspend_turn()).to_wire()))
            adapter = ctx.adapter()
            _set_script(adapter, script)
            agent = make_agent(adapter)
            session = await ctx.create_session(agent, session_id="approvals", continue_from=state)
        with anyio.fail_after(ctx.capabilities.turn_timeout):
            if via == "messages" and approvals and not results:
                history = [
                    {
                        "role": "assistant",
                        "content": [
                            *(
                                {
                                    "type": "tool-call",
                                    "toolCallId": r.tool_call_id,
                                    "toolName": r.tool_name,
                                    "input": json.loads(r.input or "{}"),
                                }
                                for r in pending
                            ),
                            *(
                                {
                                    "type": "tool-approval-request",
                                    "approvalId": r.approval_id,
                                    "toolCallId": r.tool_call_id,
                                }
                                for r in pending
                            ),
                        ],
                    },
                    {"role": "tool", "content": approvals},
                ]
                result = await agent.stream(session=session, messages=history)
            else:
                result = await agent.continue_stream(
                    session=session,
                    tool_approval_continuations=approvals,
                    tool_result_continuations=results,
                )
            parts = await ctx.collect(result)
        all_parts.extend(parts)
    return all_parts


def _approved(kinds: Sequence[str], decisions: Sequence[bool], tool_call_id: str) -> bool:
    index = int(tool_call_id[1:])
    return kinds[index] == "approve" and bool(decisions[index])


# -- single-scenario scripted requirements ------------------------------------------------


def _one(ctx: CheckContext) -> st.SearchStrategy[Any]:
    return st.just({})


@property_check(
    "scripted.mcp-tools",
    title="MCP tool calls are runtime-executed: providerExecuted, dynamic when undeclared",
    requirements=("TOOLSPEC-017", "TOOLSPEC-018"),
    scenarios=_one,
)
async def mcp_tools(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    adapter = ctx.adapter()
    script = _script(
        [{"mcp": "docs/search", "id": "m1", "input": {"query": "x"}}], [{"text": "done"}]
    )
    script["mcpServers"] = {"docs": {"tools": {"search": {"result": {"hits": ["a"]}}}}}
    _set_script(adapter, script)
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    with _grammar_first(ctx):
        parts = await ctx.run_prompt(agent, session, "mcp")
    calls = [p for p in parts if isinstance(p, ConsumerToolCallPart) and p.tool_call_id == "m1"]
    if len(calls) != 1:
        raise CheckFailed("TOOLSPEC-017", f"expected one MCP tool-call m1, saw {len(calls)}")
    call = calls[0]
    declared = call.tool_name in adapter.builtin_tools
    if call.provider_executed is not True or (not declared and call.dynamic is not True):
        raise CheckFailed(
            "TOOLSPEC-017",
            "an MCP call must be providerExecuted (and dynamic when undeclared)",
            observed=to_wire(call),
        )
    if call.invalid:
        raise CheckFailed("TOOLSPEC-018", f"the agent rejected the MCP call: {call.error}")
    executed = [e for e in _executions(adapter).get("m1", []) if e.executed]
    if len(executed) != 1 or executed[0].surface != "mcp":
        raise CheckFailed("TOOLSPEC-017", f"the runtime executed MCP call m1 {len(executed)} times")


@property_check(
    "scripted.compaction-once",
    title="Each compaction is reported by exactly one compaction part, on completion",
    requirements=("STREAM-021",),
    scenarios=_one,
)
async def compaction_once(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    from harness_testkit.fake_harness import CompactionPerformed

    adapter = ctx.adapter()
    long_text = " ".join(["context"] * 120)
    script = _script([{"text": long_text}], [{"text": long_text}], [{"text": "done"}])
    script["contextBudget"] = 50
    _set_script(adapter, script)
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    with _grammar_first(ctx):
        parts = await ctx.run_prompt(agent, session, "compaction")
    performed = [e for e in _observations(adapter).of_kind(CompactionPerformed) if e.emitted]
    if not performed:
        raise CheckSkipped("the runtime reported no compaction under a 50-token context budget")
    seen = [
        p for p in parts if isinstance(p, ConsumerToolResultPart) and p.tool_name == "compaction"
    ]
    if len(seen) != len(performed):
        raise CheckFailed(
            "STREAM-021",
            "compaction parts do not match the compactions the runtime performed",
            expected=len(performed),
            observed=len(seen),
        )


@property_check(
    "scripted.turn-settings",
    title="Each turn's skills and instructions reach the runtime; skills of the previous turn are replaced",
    requirements=("ADAPTER-027", "PROMPT-007"),
    scenarios=_one,
)
async def turn_settings(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    from harness_testkit.fake_harness import TurnStarted
    from harness_testkit.spec import Skill

    adapter = ctx.adapter()
    _set_script(adapter, _script([{"text": "ok"}]))
    skills = [
        Skill(name="first", description="one", content="1"),
        Skill(name="second", description="two", content="2"),
    ]
    calls = iter(
        [
            {"skills": [skills[0]], "instructions": "Be brief."},
            {"skills": [skills[1]], "instructions": "Be thorough."},
        ]
    )

    def prepare(call: dict[str, Any]) -> dict[str, Any]:
        return {**call, **next(calls)}

    agent = ctx.agent(adapter, prepare_call=prepare)
    session = await ctx.create_session(agent)
    with _grammar_first(ctx):
        await ctx.run_prompt(agent, session, "first")
        await ctx.run_prompt(agent, session, "second")
    started = _observations(adapter).of_kind(TurnStarted)
    if [entry.skills for entry in started[-2:]] != [["first"], ["second"]]:
        raise CheckFailed(
            "ADAPTER-027",
            "each turn must carry exactly its own skills",
            expected=[["first"], ["second"]],
            observed=[entry.skills for entry in started[-2:]],
        )
    if [entry.instructions for entry in started[-2:]] != ["Be brief.", "Be thorough."]:
        raise CheckFailed(
            "PROMPT-007",
            "each turn's instructions must reach the runtime",
            observed=[entry.instructions for entry in started[-2:]],
        )


@property_check(
    "scripted.steering",
    title="A user message submitted during a running turn reaches that turn",
    requirements=("STOP-014",),
    scenarios=_one,
    needs=("steering",),
)
async def steering_reaches_turn(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    from harness_testkit.fake_harness import UserMessageReceived

    adapter = ctx.adapter()
    _set_script(
        adapter,
        _script(
            [{"text": "waiting"}, {"waitUserMessage": 10}], [{"text": "thanks"}], announce=False
        ),
    )
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    with _grammar_first(ctx), anyio.fail_after(ctx.capabilities.turn_timeout):
        result = await agent.stream(session=session, prompt="steer me")
        async with anyio.create_task_group() as group:
            group.start_soon(ctx.collect, result)
            for _ in range(200):
                try:
                    await session.steer_turn("a steering message")
                    break
                except Exception:
                    await anyio.sleep(0.01)
    received = [e.text for e in _observations(adapter).of_kind(UserMessageReceived)]
    if "a steering message" not in received:
        raise CheckFailed(
            "STOP-014", "the steering message never reached the running turn", observed=received
        )


@property_check(
    "scripted.sandbox-ownership",
    title="The adapter never stops or destroys the sandbox session it was given",
    requirements=("ADAPTER-017",),
    scenarios=_one,
)
async def sandbox_ownership(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    provider = ctx.sandbox_provider()
    network = await provider.create_session(session_id="ownership-spy")
    calls: list[str] = []

    class Spy:
        def __getattr__(self, name: str) -> Any:
            return getattr(network, name)

        async def stop(self) -> None:
            calls.append("stop")

        async def destroy(self) -> None:
            calls.append("destroy")

    try:
        with _grammar_first(ctx):
            for ending in ("detach", "stop", "destroy"):
                adapter = ctx.adapter()
                _set_script(adapter, _script([{"text": "ok"}]))
                agent = ctx.agent(adapter)
                session = await ctx.create_session(agent, sandbox_session=Spy())
                await ctx.run_prompt(agent, session, "ownership")
                await getattr(session, ending)()
        if calls:
            raise CheckFailed(
                "ADAPTER-017", f"the adapter called {calls} on the sandbox it was given"
            )
    finally:
        await network.destroy()


@property_check(
    "scripted.questions",
    title="askUserQuestions calls wait for the host's answer and the answer reaches the runtime",
    requirements=("HOSTTOOL-027",),
    scenarios=_one,
)
async def questions(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    from harness_testkit.fake_harness import ToolResultReceived

    adapter = ctx.adapter()
    if "askUserQuestions" not in adapter.builtin_tools:
        raise CheckSkipped("the adapter declares no askUserQuestions built-in")
    question = {"allowPartialAnswers": False, "questions": [{"id": "q1", "question": "Proceed?"}]}
    _set_script(
        adapter,
        _script([{"hostTool": "askUserQuestions", "id": "q", "input": question}], [{"text": "ok"}]),
    )
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    answer = {"action": "answered", "answers": {"q1": {"optionIds": [], "freeform": "yes"}}}
    with _grammar_first(ctx):
        await ctx.run_prompt(agent, session, "questions")
        if [r.tool_call_id for r in session.pending_tool_results] != ["q"]:
            raise CheckFailed(
                "HOSTTOOL-027", "the questions call did not pause for the host's answer"
            )
        with anyio.fail_after(ctx.capabilities.turn_timeout):
            result = await agent.continue_stream(
                session=session,
                tool_result_continuations=[
                    {
                        "type": "tool-result",
                        "toolCallId": "q",
                        "toolName": "askUserQuestions",
                        "output": {"type": "json", "value": answer},
                    }
                ],
            )
            await ctx.collect(result)
    received = [
        e.output
        for e in _observations(adapter).of_kind(ToolResultReceived)
        if e.tool_call_id == "q"
    ]
    if received != [answer]:
        raise CheckFailed(
            "HOSTTOOL-027",
            "the runtime did not receive the answer",
            expected=[answer],
            observed=received,
        )


# -- held, aborted, crashed and resumed turns ---------------------------------------------
#
# The black-box lifecycle checks can only drive the adapter with plain prompts, whose turns
# a fast runtime often finishes before a suspension or an abort arrives. A script holds
# the turn open (a wait for a user message that never comes: it ends only when the turn
# is suspended or aborted), makes the runtime fail, or tells two prompts apart.


def _held_turn_script() -> dict[str, Any]:
    return _script(
        [{"text": "holding the turn"}, {"waitUserMessage": True}, {"text": "released"}],
        announce=False,
    )


def _text(parts: Sequence[ConsumerPart]) -> str:
    return "".join(part.text for part in parts if isinstance(part, ConsumerTextDeltaPart))


@check(
    "scripted.suspend-running-turn",
    title="do_suspend_turn of a turn the runtime still runs returns a continue-turn state; done() returns",
    requirements=("ADAPTER-031", "ADAPTER-030"),
    tier="scripted",
)
async def suspend_running_turn(ctx: CheckContext) -> None:
    from ._blackbox_checks import _turn_already_over, _validate_state

    adapter = ctx.adapter()
    _set_script(adapter, _held_turn_script())
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent, session_id="conformance-held-suspend")
    state: Any = None
    suspend_error: BaseException | None = None
    requested = anyio.Event()
    with _grammar_first(ctx):
        try:
            with anyio.fail_after(ctx.capabilities.turn_timeout):
                result = await agent.stream(session=session, prompt="hold the turn")
                async with anyio.create_task_group() as group:
                    holding = anyio.Event()

                    async def consume() -> None:
                        async for part in result.full_stream:
                            if part.type == "text-delta":
                                holding.set()
                        holding.set()

                    async def suspend() -> None:
                        nonlocal state, suspend_error
                        await holding.wait()
                        requested.set()
                        try:
                            state = await session.suspend_turn()
                        except Exception as error:
                            suspend_error = error

                    group.start_soon(consume)
                    group.start_soon(suspend)
        except TimeoutError as error:
            raise CheckFailed(
                "ADAPTER-031" if requested.is_set() else "ADAPTER-044",
                "the held turn's stream did not close within "
                f"{ctx.capabilities.turn_timeout} s "
                + (
                    "after do_suspend_turn (done() never returned)"
                    if requested.is_set()
                    else "and never produced its first text"
                ),
            ) from error
    recorded = adapter.sessions[-1]
    if "do_suspend_turn" in recorded.calls and recorded.slices[0].done_error is not None:
        raise CheckFailed(
            "ADAPTER-031",
            "done() of a running turn raised after do_suspend_turn instead of returning: "
            f"{recorded.slices[0].done_error}",
        )
    if state is None:
        if _turn_already_over(suspend_error):
            raise CheckSkipped(
                "the runtime finished a turn its script holds open (a waitUserMessage "
                "without timeout) before it could be suspended"
            )
        raise CheckFailed(
            "ADAPTER-030",
            f"suspend_turn of a running turn failed: {type(suspend_error).__name__}: "
            f"{suspend_error}",
            expected="a valid continue-turn state from do_suspend_turn",
            observed=[item["state"] for item in recorded.states],
        ) from suspend_error
    raw = next(item["state"] for item in recorded.states if item["from"] == "do_suspend_turn")
    _validate_state(adapter, raw, "continue-turn")


#: Two turns told apart by their prompts, so a resumed session that answers the wrong
#: prompt gives itself away.
_TWO_PROMPTS: Mapping[str, Any] = {
    "version": 1,
    "turns": [
        {"promptMatches": "^first", "steps": [{"actions": [{"text": "answer one"}]}]},
        {"promptMatches": "^second", "steps": [{"actions": [{"text": "answer two"}]}]},
    ],
}


@check(
    "scripted.resume-next-prompt",
    title="A session resumed from do_detach/do_stop answers its new prompt, not the previous one",
    requirements=("LIFECYCLE-040", "ADAPTER-024"),
    tier="scripted",
    needs=("resume",),
)
async def resume_next_prompt(ctx: CheckContext) -> None:
    for ending in ("detach", "stop"):
        session_id = f"conformance-resume-{ending}"
        adapter = ctx.adapter()
        _set_script(adapter, _TWO_PROMPTS)
        agent = ctx.agent(adapter)
        session = await ctx.create_session(agent, session_id=session_id)
        with _grammar_first(ctx):
            first = await ctx.run_prompt(agent, session, "first prompt")
            state = await getattr(session, ending)()
            wire = json.loads(json.dumps(state.to_wire()))
            resumed_adapter = ctx.adapter()
            _set_script(resumed_adapter, _TWO_PROMPTS)
            resumed_agent = ctx.agent(resumed_adapter)
            resumed = await ctx.create_session(
                resumed_agent, session_id=session_id, resume_from=wire
            )
            second = await ctx.run_prompt(resumed_agent, resumed, "second prompt")
        if _text(first) != "answer one":
            raise CheckSkipped(
                "the runtime did not follow the script's promptMatches "
                f"(first turn answered {_text(first)!r})"
            )
        if resumed_adapter.live_sessions[-1].is_resume is not True:
            raise CheckFailed(
                "ADAPTER-024", f"a session started from the {ending} state reports is_resume=False"
            )
        if second[-1].type != "finish" or _text(second) != "answer two":
            raise CheckFailed(
                "LIFECYCLE-040",
                f"the session resumed from the {ending} state did not answer its new prompt",
                expected={"text": "answer two", "last": "finish"},
                observed={"text": _text(second), "last": to_wire(second[-1])},
            )


@check(
    "scripted.abort-waiting-turn",
    title="Aborting a turn the runtime holds open settles it within the turn timeout, as `abort`",
    requirements=("ADAPTER-042",),
    tier="scripted",
)
async def abort_waiting_turn(ctx: CheckContext) -> None:
    timeout = ctx.capabilities.turn_timeout
    adapter = ctx.adapter()
    _set_script(adapter, _held_turn_script())
    # After its abort grace the agent stops waiting for done() and closes the stream
    # itself; a grace beyond the check's own bound leaves settling to the adapter alone.
    agent = ctx.agent(adapter, abort_grace=2 * timeout)
    session = await ctx.create_session(agent)
    abort = anyio.Event()
    parts: list[ConsumerPart] = []
    with _grammar_first(ctx):
        # One scope for the whole stream: its deadline restarts when the abort is set,
        # so the turn gets the declared timeout to reach the wait, then again to settle.
        with anyio.CancelScope(deadline=anyio.current_time() + timeout) as scope:
            result = await agent.stream(session=session, prompt="hold the turn", abort=abort)
            async for part in result.full_stream:
                parts.append(part)
                if part.type == "text-delta" and not abort.is_set():
                    abort.set()
                    scope.deadline = anyio.current_time() + timeout
    if scope.cancelled_caught:
        raise CheckFailed(
            "ADAPTER-042" if abort.is_set() else "ADAPTER-044",
            f"a turn aborted while its runtime waited did not settle within {timeout} s "
            "(declared turn_timeout): the abort never reached the runtime or done()"
            if abort.is_set()
            else f"the turn produced no text within {timeout} s (declared turn_timeout)",
        )
    if not abort.is_set():
        raise CheckSkipped(
            "the runtime ended a turn its script holds open (a waitUserMessage without "
            "timeout) before it could be aborted"
        )
    aborts = [part for part in parts if part.type == "abort"]
    if len(aborts) != 1 or parts[-1].type != "abort":
        raise CheckFailed(
            "ADAPTER-042",
            "an aborted turn must end with exactly one abort part",
            expected="... abort",
            observed=[part.type for part in parts],
        )


#: A turn whose runtime dies before its first step ends, then a turn that works.
_CRASHING: Mapping[str, Any] = {
    "version": 1,
    "turns": [
        {
            "steps": [
                {"actions": [{"text": "a partial answer"}]},
                {"actions": [{"text": "never sent"}]},
            ],
            "faults": [{"kind": "crash", "beforeType": "finish-step"}],
        },
        {"steps": [{"actions": [{"text": "recovered"}]}]},
    ],
}


@check(
    "scripted.runtime-crash",
    title="A runtime failing mid-turn makes done() raise at once (one error part); the session goes on",
    requirements=("ADAPTER-044", "ADAPTER-055"),
    tier="scripted",
)
async def runtime_crash(ctx: CheckContext) -> None:
    timeout = ctx.capabilities.turn_timeout
    adapter = ctx.adapter()
    _set_script(adapter, _CRASHING)
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    with _grammar_first(ctx):
        try:
            with anyio.fail_after(timeout):
                parts = await ctx.collect(await agent.stream(session=session, prompt="crash"))
        except TimeoutError as error:
            raise CheckFailed(
                "ADAPTER-044",
                f"the runtime crashed mid-turn but done() neither raised nor returned within "
                f"{timeout} s (declared turn_timeout)",
            ) from error
        crashed = adapter.sessions[-1].slices[0]
        errors = [part for part in parts if part.type == "error"]
        if crashed.done_error is None:
            raise CheckFailed(
                "ADAPTER-044",
                "done() returned normally although the runtime crashed mid-turn",
                expected="done() raises the runtime's error",
                observed=[part.type for part in parts],
            )
        if len(errors) != 1 or parts[-1].type != "error":
            raise CheckFailed(
                "ADAPTER-044",
                "a turn whose runtime crashed must reach consumers as exactly one error part",
                observed=[part.type for part in parts],
            )
        again = await ctx.run_prompt(agent, session, "after the crash")
    if again[-1].type != "finish" or _text(again) != "recovered":
        raise CheckFailed(
            "ADAPTER-055",
            "after a turn failed, the session did not run the next prompt to its end",
            expected={"text": "recovered", "last": "finish"},
            observed={"text": _text(again), "last": to_wire(again[-1])},
        )


@check(
    "scripted.visible-writes",
    title="Files written by visible write/edit calls are not reported again as file-change",
    requirements=("STREAM-018",),
    tier="scripted",
)
async def visible_writes(ctx: CheckContext) -> None:
    adapter = ctx.adapter()
    writers = [name for name in ("write", "edit") if name in adapter.builtin_tools]
    if not writers:
        raise CheckSkipped("the adapter declares no `write` or `edit` built-in")
    actions = builtin_call_actions(writers, prefix="w")
    _set_script(adapter, _script(actions, [{"text": "done"}]))
    agent = ctx.agent(adapter, sandbox_config=SEEDED)
    session = await ctx.create_session(agent)
    with _grammar_first(ctx):
        await ctx.run_prompt(agent, session, "visible writes")
    executed = {
        entry.tool_call_id
        for entries in _executions(adapter).values()
        for entry in entries
        if entry.executed
    }
    if not executed:
        raise CheckSkipped("the runtime executed none of the scripted write/edit calls")
    written = {str(action["input"]["file_path"]) for action in actions if action["id"] in executed}
    work_dir = session.session_work_dir.rstrip("/") + "/"
    reported = [
        wire
        for recorded in adapter.sessions
        for item in recorded.slices
        for part in item.parts
        if isinstance(wire := to_wire(part), dict) and wire.get("type") == "file-change"
    ]
    for wire in reported:
        path = str(wire.get("path", ""))
        relative = path[len(work_dir) :] if path.startswith(work_dir) else path
        if relative in written:
            raise CheckFailed(
                "STREAM-018",
                f"the file {relative} written by a visible write/edit call was also reported "
                "as file-change",
                expected="no file-change for paths of streamed write/edit calls",
                observed=wire,
            )
