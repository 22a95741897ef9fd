"""Scripted checks of approvals: permission modes and the host's approval decisions,
answered through continue turns and JSON round trips."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import anyio
from hypothesis import strategies as st

from harness_testkit.reference import (
    AgentSession,
    HarnessAgent,
)
from harness_testkit.spec import (
    ConsumerPart,
    ConsumerToolApprovalRequestPart,
    ConsumerToolErrorPart,
    ConsumerToolResultPart,
)

from .._checks import Check, CheckFailed, CheckSkipped, property_check
from .._context import CheckContext
from ._grammar import to_wire
from ._recording import RecordingAdapter
from ._support import (
    BUILTIN_INPUTS,
    SEEDED,
    HostToolCounter,
    builtin_call_actions,
    executable_builtins,
    executions,
    grammar_first,
    make_script,
    observations,
    set_script,
    settles,
)

__all__ = ["CHECKS"]


# -- smaller scripted requirements ---------------------------------------------------------


_PERMISSION_MODE_NAMES = ("allow-all", "allow-edits", "allow-reads")


#: The requirement of each permission mode's approval rule.
_MODE_RULES = {
    "allow-all": "APPROVAL-002",
    "allow-edits": "APPROVAL-003",
    "allow-reads": "APPROVAL-004",
}


def _fields_are(**fields: Any) -> Callable[[Mapping[str, Any]], bool]:
    """Membership test of a class of scenarios whose ``fields`` have these values."""
    return lambda scenario: all(scenario[key] == value for key, value in fields.items())


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
    classes={
        **{
            f"{mode}, {'approved' if approve else 'denied'}": _fields_are(
                mode=mode, approve=approve
            )
            for mode in _PERMISSION_MODE_NAMES
            for approve in (True, False)
        },
        **{f"answered via {via}": _fields_are(via=via) for via in _APPROVAL_VIAS},
    },
)
async def permission_modes(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    from harness_testkit.spec import requires_approval

    mode, approve = scenario["mode"], bool(scenario["approve"])
    via = scenario.get("via", "continue")
    if via == "json" and not ctx.capabilities.resume:
        via = "continue"  # without resume no session can start from the JSON state
    adapter = ctx.adapter()
    executable = executable_builtins(adapter)
    if not executable:
        raise CheckSkipped(
            "the adapter declares none of the built-ins the scripted suite runs "
            f"({', '.join(BUILTIN_INPUTS)})"
        )
    script = make_script(builtin_call_actions(executable), [{"text": "done"}])

    def make_agent(adapter: RecordingAdapter) -> HarnessAgent:
        return ctx.agent(adapter, permission_mode=mode, sandbox_config=SEEDED)

    set_script(adapter, script)
    agent = make_agent(adapter)
    session = await ctx.create_session(agent, session_id="permission-modes")
    all_parts: list[ConsumerPart] = []
    asked: set[str] = set()
    with grammar_first(ctx):
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
                set_script(adapter, script)
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
    executed = executions(*ctx.adapters)
    for index, name in enumerate(executable):
        call_id = f"b{index}-{name}"
        kind = adapter.builtin_tools[name].tool_use_kind
        needs = requires_approval(mode, kind)
        was_asked = call_id in asked
        if needs != was_asked:
            raise CheckFailed(
                _MODE_RULES[mode],
                f"built-in '{name}' ({kind}) under {mode}: approval asked={was_asked}, expected {needs}",
            )
        ran = sum(1 for entry in executed.get(call_id, []) if entry.executed)
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


_PLAN_KINDS = ("approve", "deny", "auto-deny", "auto", "client")
_PLAN_VIAS = ("continue", "messages", "json")


def _plan_has(kind: str, approved: bool | None = None) -> Any:
    def member(scenario: Mapping[str, Any]) -> bool:
        return any(
            call == kind and (approved is None or bool(scenario["decisions"][i]) == approved)
            for i, call in enumerate(scenario["calls"])
        )

    return member


#: Equivalence classes of the host-approval property (the examples cover each).
HOST_APPROVAL_CLASSES = {
    "user-approval approved": _plan_has("approve", True),
    "user-approval denied": lambda s: _plan_has("approve", False)(s) or _plan_has("deny")(s),
    "denied by the approval setting": _plan_has("auto-deny"),
    "approved by the approval setting": _plan_has("auto"),
    "client-side tool": _plan_has("client"),
    **{f"answered via {via}": _fields_are(via=via) for via in _PLAN_VIAS},
}
_HOST_APPROVAL_EXAMPLES = (
    *(
        {"calls": list(_PLAN_KINDS[:4]), "decisions": [True, False, False, True], "via": via}
        for via in _PLAN_VIAS
    ),
    {"calls": ["approve", "client"], "decisions": [False, True, True, True], "via": "continue"},
)


def _approval_plan_scenarios(ctx: CheckContext) -> st.SearchStrategy[Any]:
    call = st.sampled_from(_PLAN_KINDS)
    return st.fixed_dictionaries(
        {
            "calls": st.lists(call, min_size=1, max_size=4),
            "decisions": st.lists(st.booleans(), min_size=4, max_size=4),
            "via": st.sampled_from(_PLAN_VIAS),
        }
    )


@property_check(
    "scripted.host-approvals",
    title="Host tool approvals pause and resume: nothing runs early, denied never, approved exactly once",
    requirements=("APPROVAL-034", "APPROVAL-020", "HOSTTOOL-006", "LIFECYCLE-041", "ADAPTER-028"),
    scenarios=_approval_plan_scenarios,
    examples=_HOST_APPROVAL_EXAMPLES,
    classes=HOST_APPROVAL_CLASSES,
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
    script = make_script(
        [{"hostTool": name, "id": f"c{i}", "input": {"i": i}} for i, name in enumerate(names)],
        [{"text": "done"}],
    )

    def make_agent(adapter: RecordingAdapter) -> HarnessAgent:
        return ctx.agent(adapter, tools=tools, tool_approval=approval)

    adapter = ctx.adapter()
    set_script(adapter, script)
    agent = make_agent(adapter)
    session = await ctx.create_session(agent, session_id="approvals")
    with grammar_first(ctx):
        all_parts = await _drive_host_approvals(
            ctx, scenario, via, counter, make_agent, script, agent, session
        )
    from harness_testkit.scripting import ToolResultReceived

    # What each host call's execution returned (HostToolCounter) and what the check
    # answered for client-side calls: the runtime must receive exactly that.
    submitted = {
        f"c{index}": counter.output(name) if kind != "client" else {"client": f"c{index}"}
        for index, (name, kind) in enumerate(zip(names, kinds, strict=True))
    }
    received: dict[str, list[Any]] = {}
    for recorded in ctx.adapters:
        for entry in observations(recorded).of_kind(ToolResultReceived):
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
            set_script(adapter, script)
            agent = make_agent(adapter)
            session = await ctx.create_session(agent, session_id="approvals", continue_from=state)
        with settles(ctx, "the continued turn"):
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
    if not re.fullmatch(r"c\d+", tool_call_id) or int(tool_call_id[1:]) >= len(kinds):
        # The scripted calls are c0, c1, ...: any other id is not the model's.
        raise CheckFailed(
            "ADAPTER-057",
            "a host call awaiting approval does not carry the model's tool call id",
            expected=[f"c{index}" for index in range(len(kinds))],
            observed=tool_call_id,
        )
    index = int(tool_call_id[1:])
    return kinds[index] == "approve" and bool(decisions[index])


#: This module's checks, in order (listed by ``_registry.py``).
CHECKS: tuple[Check, ...] = (
    permission_modes,
    host_approvals,
)
