"""Scripted checks of single scenarios: MCP tools, compaction, turn settings, steering,
sandbox ownership, questions, and turns that are held, aborted, crashed or resumed."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import anyio
from hypothesis import strategies as st

from harness_testkit.spec import (
    ConsumerPart,
    ConsumerTextDeltaPart,
    ConsumerToolCallPart,
    ConsumerToolResultPart,
)

from .._checks import (
    Check,
    CheckFailed,
    CheckSkipped,
    check,
    property_check,
)
from .._context import CheckContext
from ._grammar import to_wire
from ._support import (
    SEEDED,
    builtin_call_actions,
    executions,
    grammar_first,
    make_script,
    observations,
    set_script,
    settles,
    turn_already_over,
    validate_state,
)

__all__ = ["CHECKS"]


# -- single-scenario scripted requirements ------------------------------------------------


def _one(ctx: CheckContext) -> st.SearchStrategy[Any]:
    return st.just({})


#: The single-scenario checks have one class: their one scenario, run every time.
_ONE = {"the one scenario": lambda scenario: True}


@property_check(
    "scripted.mcp-tools",
    title="MCP tool calls are runtime-executed: providerExecuted, dynamic when undeclared",
    requirements=("TOOLSPEC-017", "TOOLSPEC-018"),
    scenarios=_one,
    classes=_ONE,
)
async def mcp_tools(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    adapter = ctx.adapter()
    script = make_script(
        [{"mcp": "docs/search", "id": "m1", "input": {"query": "x"}}], [{"text": "done"}]
    )
    script["mcpServers"] = {"docs": {"tools": {"search": {"result": {"hits": ["a"]}}}}}
    set_script(adapter, script)
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    with grammar_first(ctx):
        parts = await ctx.run_prompt(agent, session, "mcp")
    calls = [p for p in parts if isinstance(p, ConsumerToolCallPart) and p.tool_call_id == "m1"]
    if len(calls) != 1:
        raise CheckFailed("TOOLSPEC-017", f"expected one MCP tool-call m1, saw {len(calls)}")
    call = calls[0]
    declared = call.tool_name in adapter.builtin_tools
    # The adapter's own part decides (the agent marks any call it rejects dynamic).
    wires = [
        to_wire(part)
        for recorded in adapter.sessions
        for piece in recorded.slices
        for part in piece.parts
    ]
    emitted = [w for w in wires if w.get("type") == "tool-call" and w.get("toolCallId") == "m1"]
    if any(
        wire.get("providerExecuted") is not True
        or (not declared and wire.get("dynamic") is not True)
        for wire in emitted
    ):
        raise CheckFailed(
            "TOOLSPEC-017",
            "the adapter's MCP tool-call must carry providerExecuted: true (and dynamic: true "
            "when the tool is not declared)",
            observed=emitted,
        )
    if call.provider_executed is not True or (not declared and call.dynamic is not True):
        raise CheckFailed(
            "TOOLSPEC-017",
            "an MCP call must be providerExecuted (and dynamic when undeclared)",
            observed=to_wire(call),
        )
    if call.invalid:
        raise CheckFailed("TOOLSPEC-018", f"the agent rejected the MCP call: {call.error}")
    executed = [e for e in executions(adapter).get("m1", []) if e.executed]
    if len(executed) != 1 or executed[0].surface != "mcp":
        raise CheckFailed("TOOLSPEC-017", f"the runtime executed MCP call m1 {len(executed)} times")


@property_check(
    "scripted.compaction-once",
    title="Each compaction is reported by exactly one compaction part, on completion",
    requirements=("STREAM-021",),
    scenarios=_one,
    classes=_ONE,
)
async def compaction_once(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    from harness_testkit.scripting import CompactionPerformed

    adapter = ctx.adapter()
    long_text = " ".join(["context"] * 120)
    script = make_script([{"text": long_text}], [{"text": long_text}], [{"text": "done"}])
    script["contextBudget"] = 50
    set_script(adapter, script)
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    with grammar_first(ctx):
        parts = await ctx.run_prompt(agent, session, "compaction")
    performed = [e for e in observations(adapter).of_kind(CompactionPerformed) if e.emitted]
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
    classes=_ONE,
)
async def turn_settings(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    from harness_testkit.scripting import TurnStarted
    from harness_testkit.spec import Skill

    adapter = ctx.adapter()
    set_script(adapter, make_script([{"text": "ok"}]))
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
    with grammar_first(ctx):
        await ctx.run_prompt(agent, session, "first")
        await ctx.run_prompt(agent, session, "second")
    started = observations(adapter).of_kind(TurnStarted)
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
    classes=_ONE,
    needs=("steering",),
)
async def steering_reaches_turn(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    from harness_testkit.scripting import UserMessageReceived

    adapter = ctx.adapter()
    set_script(
        adapter,
        make_script(
            [{"text": "waiting"}, {"waitUserMessage": 10}], [{"text": "thanks"}], announce=False
        ),
    )
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    with grammar_first(ctx), settles(ctx, "the steered turn"):
        result = await agent.stream(session=session, prompt="steer me")
        async with anyio.create_task_group() as group:
            group.start_soon(ctx.collect, result)
            for _ in range(200):
                try:
                    await session.steer_turn("a steering message")
                    break
                except Exception:
                    await anyio.sleep(0.01)
    received = [e.text for e in observations(adapter).of_kind(UserMessageReceived)]
    if "a steering message" not in received:
        raise CheckFailed(
            "STOP-014", "the steering message never reached the running turn", observed=received
        )


@property_check(
    "scripted.sandbox-ownership",
    title="The adapter never stops or destroys the sandbox session it was given",
    requirements=("ADAPTER-017",),
    scenarios=_one,
    classes=_ONE,
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
        with grammar_first(ctx):
            for ending in ("detach", "stop", "destroy"):
                adapter = ctx.adapter()
                set_script(adapter, make_script([{"text": "ok"}]))
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
    classes=_ONE,
)
async def questions(ctx: CheckContext, scenario: Mapping[str, Any]) -> None:
    from harness_testkit.scripting import ToolResultReceived

    adapter = ctx.adapter()
    if "askUserQuestions" not in adapter.builtin_tools:
        raise CheckSkipped("the adapter declares no askUserQuestions built-in")
    question = {"allowPartialAnswers": False, "questions": [{"id": "q1", "question": "Proceed?"}]}
    set_script(
        adapter,
        make_script(
            [{"hostTool": "askUserQuestions", "id": "q", "input": question}], [{"text": "ok"}]
        ),
    )
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    answer = {"action": "answered", "answers": {"q1": {"optionIds": [], "freeform": "yes"}}}
    with grammar_first(ctx):
        await ctx.run_prompt(agent, session, "questions")
        if [r.tool_call_id for r in session.pending_tool_results] != ["q"]:
            raise CheckFailed(
                "HOSTTOOL-027", "the questions call did not pause for the host's answer"
            )
        with settles(ctx, "the continued turn"):
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
        # The check's own verdicts inside the block: a SHOULD slip of the grammar never
        # hides them (see grammar_first).
        echoed = [
            wire.get("result")
            for recorded in adapter.sessions
            for piece in recorded.slices
            for wire in map(to_wire, piece.parts)
            if wire.get("type") == "tool-result" and wire.get("toolCallId") == "q"
        ]
        if echoed and echoed[-1] != answer:
            raise CheckFailed(
                "HOSTTOOL-027",
                "the runtime went on with an answer the host never gave (it did not wait for "
                "submit_tool_result)",
                expected=answer,
                observed=echoed[-1],
            )
        received = [
            e.output
            for e in observations(adapter).of_kind(ToolResultReceived)
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
    return make_script(
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
    adapter = ctx.adapter()
    set_script(adapter, _held_turn_script())
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent, session_id="conformance-held-suspend")
    state: Any = None
    suspend_error: BaseException | None = None
    requested = anyio.Event()
    with grammar_first(ctx):
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
        if turn_already_over(suspend_error):
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
    validate_state(adapter, raw, "continue-turn")


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
        set_script(adapter, _TWO_PROMPTS)
        agent = ctx.agent(adapter)
        session = await ctx.create_session(agent, session_id=session_id)
        with grammar_first(ctx):
            first = await ctx.run_prompt(agent, session, "first prompt")
            state = await getattr(session, ending)()
            wire = json.loads(json.dumps(state.to_wire()))
            resumed_adapter = ctx.adapter()
            set_script(resumed_adapter, _TWO_PROMPTS)
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
    set_script(adapter, _held_turn_script())
    # After its abort grace the agent stops waiting for done() and closes the stream
    # itself; a grace beyond the check's own bound leaves settling to the adapter alone.
    agent = ctx.agent(adapter, abort_grace=2 * timeout)
    session = await ctx.create_session(agent)
    abort = anyio.Event()
    parts: list[ConsumerPart] = []
    with grammar_first(ctx):
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
            f"a turn aborted while its runtime waited did not settle within {timeout:g} s "
            f"{ctx.turn_limit_note}: the abort never reached the runtime or done()"
            if abort.is_set()
            else f"the turn produced no text within {timeout:g} s {ctx.turn_limit_note}",
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
    set_script(adapter, _CRASHING)
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    with grammar_first(ctx):
        try:
            with anyio.fail_after(timeout):
                parts = await ctx.collect(await agent.stream(session=session, prompt="crash"))
        except TimeoutError as error:
            raise CheckFailed(
                "ADAPTER-044",
                f"the runtime crashed mid-turn but done() neither raised nor returned within "
                f"{timeout:g} s {ctx.turn_limit_note}",
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
    set_script(adapter, make_script(actions, [{"text": "done"}]))
    agent = ctx.agent(adapter, sandbox_config=SEEDED)
    session = await ctx.create_session(agent)
    with grammar_first(ctx):
        await ctx.run_prompt(agent, session, "visible writes")
    executed = {
        entry.tool_call_id
        for entries in executions(adapter).values()
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


#: This module's checks, in order (listed by ``_registry.py``).
CHECKS: tuple[Check, ...] = (
    mcp_tools,
    compaction_once,
    turn_settings,
    steering_reaches_turn,
    sandbox_ownership,
    questions,
    suspend_running_turn,
    resume_next_prompt,
    abort_waiting_turn,
    runtime_crash,
    visible_writes,
)
