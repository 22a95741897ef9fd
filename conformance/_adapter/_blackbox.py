"""Black-box checks: any adapter, driven through the reference agent with plain prompts."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import anyio

from harness_testkit.reference import AgentSession, HarnessAgent
from harness_testkit.spec import (
    PERMISSION_MODES,
    TOOL_USE_KINDS,
    Bootstrap,
    ConsumerErrorPart,
    ConsumerPart,
    ConsumerTextDeltaPart,
    ConsumerToolResultPart,
    ContinueTurnState,
    HarnessCapabilityUnsupportedError,
    PromptTurnOptions,
    ResumeSessionState,
    baseline_input_problems,
)

from .._checks import Check, CheckFailed, CheckSkipped, check
from .._context import CheckContext
from ._grammar import consumer_violations, recorded_violations, to_wire
from ._recording import RecordingAdapter
from ._support import (
    judge_recorded_states,
    require_continue_controls,
    returned_state,
    settles,
    turn_already_over,
    validate_state,
)

__all__ = ["CHECKS"]

_KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


def _fail_first(violations: list[Any], *, context: str) -> None:
    if violations:
        first = violations[0]
        more = f" (+{len(violations) - 1} more)" if len(violations) > 1 else ""
        raise CheckFailed(first.requirement, f"{context}: {first}{more}")


def _require_finished(parts: list[ConsumerPart], what: str) -> None:
    last = parts[-1]
    if isinstance(last, ConsumerErrorPart):
        raise CheckFailed(
            "STREAM-040",
            f"{what} failed instead of finishing: {last.error!r}",
            expected="a finish part",
            observed=to_wire(last),
        )
    if last.type != "finish":
        raise CheckFailed(
            "STREAM-040", f"{what} ended with '{last.type}'", expected="finish", observed=last.type
        )


def _check_slices(
    adapter: RecordingAdapter, *, completed: bool, report_missing_finish: bool = True
) -> None:
    violations = recorded_violations(
        adapter.sessions,
        builtin_tools=adapter.builtin_tools,
        harness_id=adapter.harness_id,
        completed="all" if completed else "none",
    )
    if not report_missing_finish:
        # The one violation without a part index is the missing `finish` of a completed
        # turn (STREAM-040); the caller reports that itself, with the turn's error.
        violations = [
            v for v in violations if not (v.requirement == "STREAM-040" and v.index is None)
        ]
    _fail_first(violations, context=f"adapter {adapter.harness_id}")


# -- the adapter object ------------------------------------------------------------------


@check(
    "adapter.surface",
    title="The adapter object declares harness-v1, a stable id and a valid built-in table",
    requirements=(
        "ADAPTER-001",
        "ADAPTER-003",
        "ADAPTER-004",
        "ADAPTER-005",
        "TOOLSPEC-008",
        "TOOLSPEC-009",
        "TOOLSPEC-010",
        "TOOLSPEC-015",
        "APPROVAL-005",
    ),
)
async def adapter_surface(ctx: CheckContext) -> None:
    adapter = ctx.adapter().inner
    if adapter.specification_version != "harness-v1":
        raise CheckFailed(
            "ADAPTER-001",
            "wrong specification_version",
            expected="harness-v1",
            observed=adapter.specification_version,
        )
    harness_id = adapter.harness_id
    if not isinstance(harness_id, str) or not harness_id or adapter.harness_id != harness_id:
        raise CheckFailed(
            "ADAPTER-003", "harness_id must be a stable non-empty string", observed=harness_id
        )
    for key, tool in adapter.builtin_tools.items():
        if tool.common_name is not None:
            if tool.common_name != key:
                raise CheckFailed(
                    "TOOLSPEC-009", f"built-in keyed '{key}' has common_name '{tool.common_name}'"
                )
            if tool.native_name is None:
                raise CheckFailed(
                    "TOOLSPEC-009", f"built-in '{key}' has a common_name but no native_name"
                )
            problems = baseline_input_problems(tool.common_name, tool.input_schema)
            if problems:
                requirement = "TOOLSPEC-015" if key == "askUserQuestions" else "TOOLSPEC-008"
                raise CheckFailed(requirement, f"built-in '{key}': {'; '.join(problems)}")
        elif tool.native_name is not None and tool.native_name != key:
            raise CheckFailed(
                "ADAPTER-005",
                f"built-in without a common name must be keyed by its native name '{tool.native_name}', not '{key}'",
            )
        if tool.tool_use_kind is not None and tool.tool_use_kind not in TOOL_USE_KINDS:
            raise CheckFailed(
                "TOOLSPEC-010", f"built-in '{key}' has tool_use_kind {tool.tool_use_kind!r}"
            )
    if "askUserQuestions" in adapter.builtin_tools:
        problems = baseline_input_problems(
            "askUserQuestions", adapter.builtin_tools["askUserQuestions"].input_schema
        )
        if problems:
            raise CheckFailed("TOOLSPEC-015", "; ".join(problems))
    # SHOULD-level naming rules last, so a MUST failure above is reported first.
    if not _KEBAB.match(harness_id):
        raise CheckFailed("ADAPTER-004", f"harness_id {harness_id!r} is not kebab-case")
    unclassified = [
        key
        for key, tool in adapter.builtin_tools.items()
        if tool.common_name and tool.tool_use_kind is None
    ]
    if unclassified:
        raise CheckFailed(
            "APPROVAL-005", f"built-ins without tool_use_kind: {', '.join(unclassified)}"
        )


@check(
    "adapter.capability-flags",
    title="Declared capabilities match the adapter's flags; declared support accepts every mode",
    requirements=("ADAPTER-048", "APPROVAL-040", "FILTER-019"),
    depends_on=("adapter.surface",),
)
async def capability_flags(ctx: CheckContext) -> None:
    adapter = ctx.adapter()
    declared = ctx.capabilities
    if bool(adapter.supports_builtin_tool_approvals) != declared.builtin_tool_approvals:
        raise CheckFailed(
            "APPROVAL-040",
            "declared builtin_tool_approvals differs from the adapter's supports_builtin_tool_approvals",
            expected=declared.builtin_tool_approvals,
            observed=adapter.supports_builtin_tool_approvals,
        )
    if bool(adapter.supports_builtin_tool_filtering) != declared.builtin_tool_filtering:
        raise CheckFailed(
            "FILTER-019",
            "declared builtin_tool_filtering differs from the adapter's supports_builtin_tool_filtering",
            expected=declared.builtin_tool_filtering,
            observed=adapter.supports_builtin_tool_filtering,
        )
    builtins = list(adapter.builtin_tools)
    if adapter.supports_builtin_tool_approvals:
        await _require_approval_method(ctx, adapter)
    if adapter.supports_builtin_tool_approvals and builtins:
        for mode in PERMISSION_MODES:
            agent = ctx.agent(adapter, permission_mode=mode)
            try:
                await ctx.create_session(agent)
            except HarnessCapabilityUnsupportedError as error:
                raise CheckFailed(
                    "APPROVAL-040",
                    f"permission_mode {mode!r} refused by an approval-capable adapter: {error}",
                ) from error
    if (
        adapter.supports_builtin_tool_filtering or adapter.supports_builtin_tool_approvals
    ) and builtins:
        for settings in ({"active_tools": builtins[:1]}, {"inactive_tools": builtins[:1]}):
            agent = ctx.agent(adapter, **settings)
            try:
                await ctx.create_session(agent)
            except HarnessCapabilityUnsupportedError as error:
                raise CheckFailed(
                    "FILTER-019", f"built-in filtering {settings} refused: {error}"
                ) from error


async def _require_approval_method(ctx: CheckContext, adapter: RecordingAdapter) -> None:
    """ADAPTER-048: an approval-capable adapter's prompt controls offer submit_tool_approval."""
    agent = ctx.agent(adapter)
    await ctx.create_session(agent, session_id="conformance-approval-method")
    live = adapter.live_sessions[-1]
    emitted: list[object] = []
    with anyio.fail_after(ctx.capabilities.turn_timeout):
        # The adapter's own control, not the agent's view of it: the agent only probes
        # for the method when a request arrives, which a plain prompt may never cause.
        control = await live.do_prompt_turn(
            PromptTurnOptions(prompt=ctx.prompts[0], emit=emitted.append, abort=anyio.Event())
        )
        offers = callable(getattr(control, "submit_tool_approval", None))
        with contextlib.suppress(Exception):
            # Only the control's surface matters here; the stream checks judge the turn.
            await control.done()
    if not offers:
        raise CheckFailed(
            "ADAPTER-048",
            "supports_builtin_tool_approvals is True but the prompt control returned by "
            "do_prompt_turn has no submit_tool_approval",
            expected="a callable submit_tool_approval",
            observed=sorted(name for name in dir(control) if not name.startswith("_")),
        )


# -- turns -------------------------------------------------------------------------------


@check(
    "stream.grammar",
    title="Every part validates and turns follow the stream grammar",
    requirements=(
        "STREAM-004",
        "STREAM-009",
        "STREAM-011",
        "STREAM-013",
        "STREAM-015",
        "STREAM-024",
        "STREAM-026",
        "STREAM-033",
        "STREAM-038",
        "STREAM-040",
        "STREAM-052",
        "STREAM-054",
        "TRANSLATE-019",
        "MERGE-004",
        "MERGE-009",
        "ADAPTER-046",
    ),
    depends_on=("adapter.surface",),
)
async def stream_grammar(ctx: CheckContext) -> None:
    adapter = ctx.adapter()
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    for prompt in ctx.prompts:
        parts = await ctx.run_prompt(agent, session, prompt)
        _fail_first(consumer_violations(parts), context=f"consumer stream of {prompt!r}")
        # The adapter's own parts first: a turn that failed on a grammar violation is
        # reported as that violation, not as the STREAM-040 "did not finish" it causes.
        _check_slices(adapter, completed=True, report_missing_finish=False)
        _require_finished(parts, f"the turn for {prompt!r}")


@check(
    "session.identity",
    title="Adapter sessions report the requested id and is_resume=False when fresh",
    requirements=("ADAPTER-009", "ADAPTER-022", "ADAPTER-023", "ADAPTER-024"),
    depends_on=("adapter.surface",),
)
async def session_identity(ctx: CheckContext) -> None:
    adapter = ctx.adapter()
    agent = ctx.agent(adapter)
    await ctx.create_session(agent, session_id="conformance-identity")
    (live,) = adapter.live_sessions
    if hasattr(adapter.inner, "capabilities"):
        raise CheckFailed(
            "ADAPTER-009",
            "the adapter has a static `capabilities` object; harness-v1 signals optional "
            "features by optional control methods and HarnessCapabilityUnsupportedError",
            observed=repr(adapter.inner.capabilities)[:200],
        )
    for member in (
        "do_prompt_turn",
        "do_continue_turn",
        "do_suspend_turn",
        "do_detach",
        "do_stop",
        "do_destroy",
        "do_compact",
    ):
        if not callable(getattr(live, member, None)):
            raise CheckFailed("ADAPTER-022", f"the adapter session lacks {member}()")
    if live.session_id != "conformance-identity":
        raise CheckFailed(
            "ADAPTER-023",
            "session_id differs from the one passed to do_start",
            expected="conformance-identity",
            observed=live.session_id,
        )
    if live.is_resume is not False:
        raise CheckFailed(
            "ADAPTER-024", "a fresh session must report is_resume=False", observed=live.is_resume
        )


def _runtime_events(adapter: RecordingAdapter) -> list[str]:
    """The lifecycle events the runtime itself logged (adapters with the scripting
    extension's observation log; empty for others)."""
    log = getattr(adapter.inner, "observations", None)
    if log is None:
        return []
    from harness_testkit.scripting import LifecycleEvent

    return [entry.event for entry in log.of_kind(LifecycleEvent)]


async def _completed_turn(ctx: CheckContext, agent: HarnessAgent, session: AgentSession) -> None:
    parts = await ctx.run_prompt(agent, session, ctx.prompts[0])
    _require_finished(parts, "the first turn")


async def _resume_and_prompt(ctx: CheckContext, state: ResumeSessionState, session_id: str) -> None:
    adapter = ctx.adapter()
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent, session_id=session_id, resume_from=state.to_wire())
    if adapter.live_sessions[-1].is_resume is not True:
        raise CheckFailed(
            "ADAPTER-024", "a session started from resume_from must report is_resume=True"
        )
    parts = await ctx.run_prompt(agent, session, ctx.prompts[-1])
    if parts[-1].type != "finish":
        raise CheckFailed(
            "LIFECYCLE-040", f"the resumed session's turn ended with {to_wire(parts[-1])!r}"
        )


@check(
    "lifecycle.detach-resume",
    title="do_detach returns a valid resume state a new adapter session can resume",
    requirements=(
        "ADAPTER-033",
        "LIFECYCLE-005",
        "LIFECYCLE-006",
        "LIFECYCLE-007",
        "LIFECYCLE-040",
        "ADAPTER-008",
        "ADAPTER-024",
    ),
    depends_on=("stream.grammar",),
)
async def detach_resume(ctx: CheckContext) -> None:
    adapter = ctx.adapter()
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent, session_id="conformance-detach")
    await _completed_turn(ctx, agent, session)
    state = await returned_state(adapter, session.detach, "resume-session")
    if "stop" in _runtime_events(adapter) or "destroy" in _runtime_events(adapter):
        raise CheckFailed(
            "ADAPTER-033",
            "do_detach tore the runtime down (its log records a stop or destroy)",
            observed=_runtime_events(adapter),
        )
    if ctx.capabilities.resume:
        await _resume_and_prompt(ctx, state, "conformance-detach")


@check(
    "lifecycle.stop-resume",
    title="do_stop returns a valid resume state a new adapter session can resume",
    requirements=(
        "ADAPTER-034",
        "LIFECYCLE-005",
        "LIFECYCLE-006",
        "LIFECYCLE-007",
        "LIFECYCLE-040",
        "ADAPTER-024",
    ),
    depends_on=("stream.grammar",),
)
async def stop_resume(ctx: CheckContext) -> None:
    adapter = ctx.adapter()
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent, session_id="conformance-stop")
    await _completed_turn(ctx, agent, session)
    state = await returned_state(adapter, session.stop, "resume-session")
    events = _runtime_events(adapter)
    if events and "stop" not in events:
        raise CheckFailed(
            "ADAPTER-034",
            "do_stop returned a state but did not stop the runtime (its log records no stop)",
            observed=events,
        )
    if ctx.capabilities.resume:
        await _resume_and_prompt(ctx, state, "conformance-stop")


@check(
    "lifecycle.refused-after-end",
    title="After do_detach, do_stop or do_destroy the adapter session refuses further calls",
    requirements=("ADAPTER-037", "ADAPTER-035"),
    depends_on=("stream.grammar",),
)
async def refused_after_end(ctx: CheckContext) -> None:
    for ending in ("do_detach", "do_stop", "do_destroy"):
        adapter = ctx.adapter()
        agent = ctx.agent(adapter)
        await ctx.create_session(agent, session_id=f"conformance-end-{ending}")
        live = adapter.live_sessions[-1]
        result = await getattr(live, ending)()
        if ending == "do_destroy" and result is not None:
            raise CheckFailed("ADAPTER-035", f"do_destroy returned {result!r} instead of None")
        emitted: list[object] = []
        try:
            with anyio.fail_after(ctx.capabilities.turn_timeout):
                control = await live.do_prompt_turn(
                    PromptTurnOptions(
                        prompt=ctx.prompts[0], emit=emitted.append, abort=anyio.Event()
                    )
                )
                await control.done()
        except Exception:
            continue  # refused, as it should be
        raise CheckFailed(
            "ADAPTER-037",
            f"do_prompt_turn after {ending} was accepted (emitted {len(emitted)} parts)",
            expected="an error",
            observed="accepted",
        )


@contextlib.contextmanager
def _suspended_turn_settles(suspended: Callable[[], object]) -> Iterator[None]:
    """A turn that did not settle although ``do_suspend_turn`` returned its state breaks
    ADAPTER-031 (the suspension must close the turn), not only ADAPTER-044."""
    try:
        yield
    except CheckFailed as failure:
        if failure.requirement != "ADAPTER-044" or suspended() is None:
            raise
        raise CheckFailed(
            "ADAPTER-031",
            "do_suspend_turn returned the continue state, but "
            + failure.message.replace("the turn being suspended", "the suspended turn", 1),
        ) from failure


@check(
    "lifecycle.suspend-continue",
    title="do_suspend_turn freezes a running turn; done() settles cleanly; the turn continues",
    requirements=(
        "ADAPTER-030",
        "ADAPTER-031",
        "ADAPTER-028",
        "LIFECYCLE-005",
        "LIFECYCLE-041",
        "ADAPTER-024",
    ),
    depends_on=("stream.grammar",),
)
async def suspend_continue(ctx: CheckContext) -> None:
    adapter = ctx.adapter()
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent, session_id="conformance-suspend")
    result = await agent.stream(session=session, prompt=ctx.prompts[0])
    state: ContinueTurnState | None = None
    suspend_error: BaseException | None = None
    with _suspended_turn_settles(lambda: state), settles(ctx, "the turn being suspended"):
        async with anyio.create_task_group() as group:
            seen_first = anyio.Event()

            async def consume() -> None:
                async for part in result.full_stream:
                    if part.type not in ("start",):
                        seen_first.set()
                seen_first.set()

            async def suspend() -> None:
                nonlocal state, suspend_error
                await seen_first.wait()
                try:
                    state = await session.suspend_turn()
                except Exception as error:
                    suspend_error = error

            group.start_soon(consume)
            group.start_soon(suspend)
    recorded = adapter.sessions[-1]
    if "do_suspend_turn" in recorded.calls and recorded.slices[0].done_error is not None:
        raise CheckFailed(
            "ADAPTER-031", f"done() raised after do_suspend_turn: {recorded.slices[0].done_error}"
        )
    if state is None:
        # The agent refuses an invalid state: the rule the state broke comes first.
        judge_recorded_states(adapter, "continue-turn")
        if turn_already_over(suspend_error):
            raise CheckSkipped(
                f"the turn finished before it could be suspended ({suspend_error}); "
                "declare a prompt that takes several parts to answer"
            )
        raise CheckFailed(
            "ADAPTER-030",
            f"suspend_turn of a running turn failed: {type(suspend_error).__name__}: "
            f"{suspend_error}",
            expected="a valid continue-turn state from do_suspend_turn",
            observed=[
                item["state"] for item in recorded.states if item["from"] == "do_suspend_turn"
            ],
        ) from suspend_error
    raw = next(item["state"] for item in recorded.states if item["from"] == "do_suspend_turn")
    validate_state(adapter, raw, "continue-turn")
    if not ctx.capabilities.resume:
        return
    second = ctx.adapter()
    agent2 = ctx.agent(second)
    resumed = await ctx.create_session(
        agent2,
        session_id="conformance-suspend",
        continue_from=json.loads(json.dumps(state.to_wire())),
    )
    if second.live_sessions[-1].is_resume is not True:
        raise CheckFailed(
            "ADAPTER-024", "a session started from continue_from must report is_resume=True"
        )
    parts: list[ConsumerPart] = []
    try:
        with settles(ctx, "the continued turn"):
            continued = await agent2.continue_stream(session=resumed)
            parts = await ctx.collect(continued)
    finally:
        # Whatever the agent made of it: a do_continue_turn that did not hand back a
        # prompt control is the adapter's own failure, named before its consequences.
        require_continue_controls([second])
    if parts[-1].type != "finish":
        raise CheckFailed("LIFECYCLE-041", f"the continued turn ended with {to_wire(parts[-1])!r}")


@check(
    "turn.abort",
    title="An aborted turn settles promptly with exactly one abort part",
    requirements=("ADAPTER-042",),
    depends_on=("stream.grammar",),
)
async def abort_turn(ctx: CheckContext) -> None:
    adapter = ctx.adapter()
    agent = ctx.agent(adapter, abort_grace=ctx.capabilities.turn_timeout)
    session = await ctx.create_session(agent)
    abort = anyio.Event()
    abort.set()
    with anyio.move_on_after(ctx.capabilities.turn_timeout) as scope:
        result = await agent.stream(session=session, prompt=ctx.prompts[0], abort=abort)
        parts = await ctx.collect(result)
    if scope.cancelled_caught:
        raise CheckFailed("ADAPTER-042", "the aborted turn did not settle within the turn timeout")
    if parts[-1].type not in ("abort", "finish"):
        raise CheckFailed(
            "ADAPTER-042", f"an aborted turn ended with '{parts[-1].type}'", expected="abort"
        )
    await _abort_mid_turn(ctx, adapter, agent)


async def _abort_mid_turn(ctx: CheckContext, adapter: Any, agent: HarnessAgent) -> None:
    """Abort a running turn at its first text delta: the runtime must stop producing.

    An adapter that ignores the abort lets its runtime answer on, emitting more text and
    its ``finish`` after the abort was set. One that finished before the abort reached
    it (all its parts were emitted already) is not charged.
    """
    session = await ctx.create_session(agent)
    abort = anyio.Event()
    result = await agent.stream(session=session, prompt=ctx.prompts[0], abort=abort)
    recorded = adapter.sessions[-1]
    emitted_before: int | None = None
    with anyio.move_on_after(ctx.capabilities.turn_timeout) as scope:
        async for part in result.full_stream:
            if part.type == "text-delta" and emitted_before is None:
                emitted_before = sum(len(item.parts) for item in recorded.slices)
                abort.set()
    if scope.cancelled_caught:
        raise CheckFailed(
            "ADAPTER-042", "a turn aborted mid-answer did not settle within the turn timeout"
        )
    if emitted_before is None:
        return  # no text to abort at: the first phase already covered this adapter
    after = [part for item in recorded.slices for part in item.parts][emitted_before:]
    kinds = [str(getattr(part, "type", "")) for part in after]
    if "finish" in kinds and "text-delta" in kinds:
        raise CheckFailed(
            "ADAPTER-042",
            "the turn was aborted at its first text delta, yet the runtime went on answering "
            "and finished normally: the abort never reached the runtime",
            expected="the runtime stops; the turn ends with an abort part",
            observed=kinds,
        )


# -- capability honesty ----------------------------------------------------------------


@check(
    "capability.manual-compaction",
    title="Manual compaction works exactly when declared (else HarnessCapabilityUnsupportedError)",
    requirements=("ADAPTER-038", "ADAPTER-039", "ADAPTER-040"),
    depends_on=("stream.grammar",),
)
async def manual_compaction(ctx: CheckContext) -> None:
    adapter = ctx.adapter()
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    declared = ctx.capabilities.manual_compaction
    try:
        with anyio.fail_after(ctx.capabilities.turn_timeout):
            await session.compact()
    except HarnessCapabilityUnsupportedError as error:
        if declared:
            raise CheckFailed(
                "ADAPTER-040", f"declared manual compaction failed: {error}"
            ) from error
        return
    except Exception as error:
        raise CheckFailed(
            "ADAPTER-039",
            f"do_compact raised {type(error).__name__} instead of HarnessCapabilityUnsupportedError",
        ) from error
    if not declared:
        raise CheckFailed(
            "ADAPTER-039",
            "do_compact succeeded although manual compaction is not declared (capability honesty)",
        )
    parts = await ctx.run_prompt(agent, session, ctx.prompts[0])
    compactions = [
        p for p in parts if isinstance(p, ConsumerToolResultPart) and p.tool_name == "compaction"
    ]
    manual = [
        p for p in compactions if isinstance(p.output, dict) and p.output.get("trigger") == "manual"
    ]
    if len(manual) != 1:
        raise CheckFailed(
            "ADAPTER-040",
            f"expected exactly one manual compaction on the next turn, saw {len(manual)}",
        )


@check(
    "capability.json-response-format",
    title="JSON response formats are honoured exactly when declared",
    requirements=("ADAPTER-041", "RESULT-020"),
    depends_on=("stream.grammar",),
)
async def json_response_format(ctx: CheckContext) -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }
    adapter = ctx.adapter()
    agent = ctx.agent(adapter, output=schema)
    session = await ctx.create_session(agent)
    parts = await ctx.run_prompt(agent, session, ctx.prompts[0])
    last = parts[-1]
    if not ctx.capabilities.json_response_format:
        if isinstance(last, ConsumerErrorPart) and isinstance(
            last.error, HarnessCapabilityUnsupportedError
        ):
            return
        raise CheckFailed(
            "ADAPTER-041",
            "a JSON response format was not refused although it is not declared (capability honesty)",
            expected="HarnessCapabilityUnsupportedError from do_prompt_turn",
            observed=to_wire(last),
        )
    if last.type != "finish":
        raise CheckFailed("RESULT-020", f"a declared JSON turn ended with {to_wire(last)!r}")
    text = "".join(p.text for p in parts if isinstance(p, ConsumerTextDeltaPart))
    try:
        value = json.loads(text)
    except ValueError as error:
        raise CheckFailed("RESULT-020", f"the final text is not JSON: {text[:120]!r}") from error
    import jsonschema

    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as error:
        raise CheckFailed(
            "RESULT-020", f"the JSON does not match the schema: {error.message}"
        ) from error


@check(
    "capability.steering",
    title="submit_user_message exists exactly when steering is declared",
    requirements=("STOP-013", "ADAPTER-010", "ADAPTER-044"),
    depends_on=("stream.grammar",),
)
async def steering(ctx: CheckContext) -> None:
    adapter = ctx.adapter()
    agent = ctx.agent(adapter)
    session = await ctx.create_session(agent)
    await ctx.run_prompt(agent, session, ctx.prompts[0])
    live = adapter.live_sessions[-1]
    emitted: list[object] = []
    with anyio.fail_after(ctx.capabilities.turn_timeout):
        control = await live.do_prompt_turn(
            PromptTurnOptions(prompt=ctx.prompts[0], emit=emitted.append, abort=anyio.Event())
        )
        has_steering = callable(getattr(control, "submit_user_message", None))
        if not callable(getattr(control, "submit_tool_result", None)) or not callable(
            getattr(control, "done", None)
        ):
            raise CheckFailed("ADAPTER-044", "the prompt control lacks submit_tool_result or done")
        await control.done()
    if has_steering and not ctx.capabilities.steering:
        raise CheckFailed(
            "ADAPTER-010",
            "the prompt control offers submit_user_message although steering is not "
            "declared: a runtime that cannot steer omits the method",
        )
    if ctx.capabilities.steering and not has_steering:
        raise CheckFailed(
            "STOP-013",
            "steering is declared but the prompt control has no submit_user_message",
        )


@check(
    "bootstrap.recipe",
    title="get_bootstrap() (when present) returns a deterministic recipe of this harness",
    requirements=("BOOTSTRAP-001", "BOOTSTRAP-002", "BOOTSTRAP-003"),
    depends_on=("adapter.surface",),
)
async def bootstrap_recipe(ctx: CheckContext) -> None:
    adapter = ctx.adapter().inner
    get_bootstrap = getattr(adapter, "get_bootstrap", None)
    if get_bootstrap is None:
        return
    first = await get_bootstrap()
    second = await get_bootstrap()
    if first is None:
        return
    if not isinstance(first, Bootstrap):
        try:
            first = Bootstrap.model_validate(to_wire(first), by_alias=True, by_name=False)
            second = Bootstrap.model_validate(to_wire(second), by_alias=True, by_name=False)
        except Exception as error:
            raise CheckFailed(
                "BOOTSTRAP-001", f"get_bootstrap() returned an invalid recipe: {error}"
            ) from error
    if first.identity() != second.identity():
        raise CheckFailed(
            "BOOTSTRAP-003", "two calls of get_bootstrap() gave different recipe identities"
        )
    if first.harness_id != adapter.harness_id or first.bootstrap_dir.startswith("/"):
        raise CheckFailed(
            "BOOTSTRAP-002",
            "the recipe should name this harness and use a relative bootstrap dir",
            observed={"harnessId": first.harness_id, "bootstrapDir": first.bootstrap_dir},
        )


#: This module's checks, in order (listed by ``_registry.py``).
CHECKS: tuple[Check, ...] = (
    adapter_surface,
    capability_flags,
    stream_grammar,
    session_identity,
    detach_resume,
    stop_resume,
    refused_after_end,
    suspend_continue,
    abort_turn,
    manual_compaction,
    json_response_format,
    steering,
    bootstrap_recipe,
)
