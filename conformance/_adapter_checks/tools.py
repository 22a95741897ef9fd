"""Scripted checks: the deep property suites, for adapters with the scripting extension.

The adapter's model is replaced by a script (the fake harness's format, see
``harness_testkit.fake_harness.Script``); the runtime's observation log tells what it
really received and executed. Each suite generates JSON scenarios with hypothesis, so a
failure shrinks to a minimal scenario that ``harness-testkit replay`` reruns.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
from hypothesis import strategies as st

from harness_testkit.reference import (
    AgentSession,
    HarnessAgent,
)
from harness_testkit.spec import (
    BuiltinToolFiltering,
    ConsumerPart,
    ConsumerToolApprovalRequestPart,
    ConsumerToolCallPart,
    ConsumerToolErrorPart,
    ConsumerToolResultPart,
    HarnessCapabilityUnsupportedError,
    HarnessUsageError,
    NoSuchToolError,
    is_builtin_tool_included,
)

from ._checks import CheckFailed, CheckSkipped, property_check
from ._context import CheckContext
from ._grammar import to_wire
from ._recording import RecordingAdapter
from ._scripted_support import (
    _BUILTIN_INPUTS,
    _USER_TOOL_NAMES,
    SEEDED,
    HostToolCounter,
    _executable_builtins,
    _executions,
    _grammar_first,
    _observations,
    _script,
    _set_script,
    builtin_call_actions,
)

__all__: list[str] = []


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
