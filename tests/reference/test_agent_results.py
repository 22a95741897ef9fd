"""Results, stop conditions, prompt input and errors (notes §9, 7.5, §10, §11).

Text/usage/finish-reason aggregation, aborts and failures, ``stop_when``, prompt
normalization, ``prepare_call``, turn settings forwarded to the adapter (instructions,
skills, model, response format) and the error vocabulary.

One idea: what one call returns and how it ends, from the prompt that goes in to the
result, stop condition or error that comes out.
"""

from __future__ import annotations

import gc
import warnings
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from harness_testkit.reference import HarnessAgent, tool
from harness_testkit.spec import (
    ConsumerErrorPart,
    ConsumerFinishPart,
    ConsumerFinishStepPart,
    ConsumerTextDeltaPart,
    FinishPart,
    FinishReason,
    FinishStepPart,
    HarnessCapabilityUnsupportedError,
    HarnessError,
    HarnessSandboxAuthenticationError,
    HarnessSessionStateError,
    HarnessTurnError,
    HarnessUsageError,
    InputTokens,
    InvalidLifecycleStateError,
    JsonResponseFormat,
    NoSuchToolError,
    OutputTokens,
    Skill,
    ToolContextValidationError,
    UnifiedFinishReason,
    Usage,
    get_harness_error_message,
)
from tests.narrowing import of_type
from tests.reference.scripted import (
    Call,
    Hang,
    ScriptedHarness,
    WaitResult,
    finish,
    finish_step,
    text_step,
    tool_call,
)
from tests.reference.test_agent_support import (
    LIMIT,
    OBJECT,
    always_stop,
    client_tool,
    continue_parts,
    drain,
    echo_tool,
    framing_problems,
    kinds,
    make_agent,
    opened,
    stream_parts,
    suspend,
)

pytestmark = pytest.mark.anyio

META = {"mock": {"run": 7}}


def meta_finish_step(
    reason: UnifiedFinishReason, metadata: dict[str, Any] | None = None, **usage: int
) -> Any:
    return FinishStepPart(
        finish_reason=FinishReason(unified=reason, raw=f"raw-{reason}"),
        usage=Usage.of(usage.get("i"), usage.get("o")),
        harness_metadata=metadata,
    )


def meta_finish(
    reason: UnifiedFinishReason, metadata: dict[str, Any] | None = None, **usage: int
) -> Any:
    return FinishPart(
        finish_reason=FinishReason(unified=reason, raw=f"raw-{reason}"),
        total_usage=Usage.of(usage.get("i"), usage.get("o")),
        harness_metadata=metadata,
    )


def text_only(text: str, block: str = "t1") -> list[dict[str, Any]]:
    return [
        {"type": "text-start", "id": block},
        {"type": "text-delta", "id": block, "delta": text},
        {"type": "text-end", "id": block},
    ]


# -- 9.4 text -----------------------------------------------------------------------------------------


@pytest.mark.requirement("RESULT-008", "RESULT-002")
async def test_text_is_the_final_steps_text(tmp_path: Path) -> None:
    script = [*text_step("first "), *text_step("second"), finish()]
    async with opened(ScriptedHarness([script, script]), tmp_path) as (agent, session):
        generated = await agent.generate(session=session, prompt="go")
        streamed, _ = await stream_parts(agent, session=session, prompt="again")
        assert await streamed.text == "second"
    assert generated.text == "second"
    assert [step.text for step in generated.steps] == ["first ", "second"]


@pytest.mark.requirement("RESULT-022")
async def test_text_stream_yields_the_delta_texts(tmp_path: Path) -> None:
    script = [*text_only("Hel"), *text_only("lo"), finish_step(), finish()]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        with anyio.fail_after(LIMIT):
            texts = [text async for text in result.text_stream]
        # A second reader gets its own full copy.
        again = await drain(result)
    assert texts == ["Hel", "lo"]
    assert kinds(again)[0] == "start"


@pytest.mark.requirement("RESULT-003", "RESULT-004", "CONTEXT-009")
async def test_steps_carry_provider_call_id_numbers_and_tools_context(tmp_path: Path) -> None:
    script = [*text_step("a"), *text_step("b"), finish()]
    context = {"echo": {"tenant": "t1"}}
    async with opened(
        ScriptedHarness([script]), tmp_path, tools={"echo": echo_tool()}, tools_context=context
    ) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    assert [step.step_number for step in result.steps] == [0, 1]
    assert {step.provider for step in result.steps} == {"harness:mock"}
    assert len({step.call_id for step in result.steps}) == 1
    assert all(step.tools_context == context for step in result.steps)


# -- 9.5 usage ----------------------------------------------------------------------------------------


@pytest.mark.requirement("RESULT-011")
async def test_usage_is_normalized_field_by_field(tmp_path: Path) -> None:
    usage = Usage(
        input_tokens=InputTokens(total=10, no_cache=4, cache_read=5, cache_write=1),
        output_tokens=OutputTokens(total=40, text=30, reasoning=10),
        raw={"vendor": "x"},
    )
    step = FinishStepPart(finish_reason=FinishReason(unified="stop"), usage=usage)
    end = FinishPart(finish_reason=FinishReason(unified="stop"), total_usage=usage)
    async with opened(ScriptedHarness([[*text_only("a"), step, end]]), tmp_path) as (
        agent,
        session,
    ):
        result = await agent.generate(session=session, prompt="go")
    expected = {
        "inputTokens": 10,
        "inputTokenDetails": {"noCacheTokens": 4, "cacheReadTokens": 5, "cacheWriteTokens": 1},
        "outputTokens": 40,
        "outputTokenDetails": {"textTokens": 30, "reasoningTokens": 10},
        "totalTokens": 50,
        "raw": {"vendor": "x"},
    }
    assert result.usage.to_wire() == expected
    assert result.total_usage.to_wire() == expected
    assert result.steps[0].usage.to_wire() == expected


@pytest.mark.parametrize(
    ("i", "o", "total"),
    [(None, None, None), (7, None, 7), (None, 3, 3), (0, 0, 0)],
    ids=["none", "input-only", "output-only", "zeros"],
)
@pytest.mark.requirement("RESULT-011")
async def test_total_tokens_is_undefined_only_when_both_sides_are(
    tmp_path: Path, i: int | None, o: int | None, total: int | None
) -> None:
    script = [*text_only("a"), finish_step("stop", i, o), finish("stop", i, o)]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    assert result.usage.total_tokens == total


@pytest.mark.requirement("RESULT-010")
async def test_finish_total_usage_overrides_the_step_sum(tmp_path: Path) -> None:
    script = [*text_step("a"), finish_step("stop", 1, 1), finish("stop", 10, 40)]
    script[3] = finish_step("stop", 3, 4)
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (10, 40)
    assert result.usage.total_tokens == 50


@pytest.mark.requirement("RESULT-010")
async def test_usage_is_the_step_sum_without_a_finish(tmp_path: Path) -> None:
    script = [
        *text_only("a"),
        finish_step("stop", 3, 4),
        *text_only("b"),
        finish_step("stop", 5, 6),
    ]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    assert (result.usage.input_tokens, result.usage.output_tokens, result.usage.total_tokens) == (
        8,
        10,
        18,
    )


# -- 9.7 finish reason / metadata -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ending", "reason", "raw", "metadata"),
    [
        (
            [meta_finish("length", {"mock": {"end": 1}})],
            "length",
            "raw-length",
            {"mock": {"end": 1}},
        ),
        ([], "content-filter", "raw-content-filter", META),
    ],
    ids=["finish-values", "last-step-values"],
)
@pytest.mark.requirement("RESULT-015")
async def test_finish_reason_and_metadata_fallback(
    tmp_path: Path, ending: list[Any], reason: str, raw: str, metadata: Any
) -> None:
    script = [
        *text_only("a"),
        meta_finish_step("stop"),
        *text_only("b"),
        meta_finish_step("content-filter", META),
        *ending,
    ]
    async with opened(ScriptedHarness([script, script]), tmp_path) as (agent, session):
        streamed = await agent.stream(session=session, prompt="go")
        assert (await streamed.finish_reason, await streamed.raw_finish_reason) == (reason, raw)
        assert await streamed.provider_metadata == metadata
        result = await agent.generate(session=session, prompt="go")
    # generate() follows upstream's GenerateTextResult: the final step's values.
    assert (result.finish_reason, result.raw_finish_reason) == (
        "content-filter",
        "raw-content-filter",
    )
    assert result.provider_metadata == META


@pytest.mark.requirement("RESULT-015", "RESULT-016")
async def test_finish_reason_is_other_without_steps_or_finish(tmp_path: Path) -> None:
    async with opened(ScriptedHarness([[]]), tmp_path) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    assert (result.finish_reason, result.raw_finish_reason) == ("other", None)
    assert result.steps == ()
    assert result.text == ""


@pytest.mark.requirement("RESULT-016")
async def test_generate_with_zero_steps_uses_the_finish_values(tmp_path: Path) -> None:
    async with opened(ScriptedHarness([[finish("length", 2, 3)]]), tmp_path) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    assert result.text == ""
    assert result.steps == ()
    assert result.finish_reason == "length"
    assert result.usage.total_tokens == 5
    assert result.response_messages == []


# -- 9.8 response messages --------------------------------------------------------------------------------


@pytest.mark.requirement("RESULT-017")
async def test_response_messages_of_a_text_only_turn(tmp_path: Path) -> None:
    async with opened(ScriptedHarness([[*text_step("Hello, world."), finish()]]), tmp_path) as (
        agent,
        session,
    ):
        result = await agent.generate(session=session, prompt="go")
    assert result.response_messages == [
        {"role": "assistant", "content": [{"type": "text", "text": "Hello, world."}]}
    ]
    assert result.tool_calls == []
    assert result.tool_results == []


@pytest.mark.requirement("RESULT-017")
async def test_response_messages_include_reasoning_and_tool_parts(tmp_path: Path) -> None:
    script = [
        {"type": "reasoning-delta", "id": "r", "delta": "thinking"},
        *text_only("calling"),
        tool_call("c1", "echo", '{"v": 1}'),
        WaitResult("c1"),
        finish_step("tool-calls"),
        *text_step("done"),
        finish(),
    ]
    async with opened(ScriptedHarness([script]), tmp_path, tools={"echo": echo_tool()}) as (
        agent,
        session,
    ):
        result = await agent.generate(session=session, prompt="go")
    # toResponseMessages over the content of every step: one assistant message, in
    # content order (the host result is not content: the runtime did not echo it).
    assert result.response_messages == [
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "thinking"},
                {"type": "text", "text": "calling"},
                {"type": "tool-call", "toolCallId": "c1", "toolName": "echo", "input": {"v": 1}},
                {"type": "text", "text": "done"},
            ],
        }
    ]
    assert [call.tool_call_id for call in result.tool_calls] == ["c1"]


# -- 9.6 / 2.2.6 abort and error settlement ---------------------------------------------------------------


@pytest.mark.requirement("RESULT-012", "TRANSLATE-017", "SESSION-022")
async def test_abort_before_an_error_part_settles_as_abort(tmp_path: Path) -> None:
    noise = [{"type": "error", "error": "runtime noise"}]
    turns = [noise, noise, [*text_step("next"), finish()]]
    async with opened(ScriptedHarness(turns), tmp_path, abort_grace=0.5) as (agent, session):
        abort = anyio.Event()
        abort.set()
        result, parts = await stream_parts(agent, session=session, prompt="go", abort=abort)
        assert session.turn_state == "idle"
        with pytest.raises(HarnessTurnError):
            await result.text
        with pytest.raises(HarnessTurnError):
            await agent.generate(session=session, prompt="go", abort=abort)
        again = await agent.generate(session=session, prompt="again")
    assert kinds(parts) == ["start", "abort"]
    assert again.text == "next"


@pytest.mark.requirement("RESULT-012", "STREAM-036")
async def test_abort_mid_turn_ends_with_exactly_one_abort_part(tmp_path: Path) -> None:
    script = [*text_step("partial"), Hang()]
    async with opened(ScriptedHarness([script]), tmp_path, abort_grace=0.5) as (agent, session):
        abort = anyio.Event()
        result = await agent.stream(session=session, prompt="go", abort=abort)
        parts = []
        with anyio.fail_after(LIMIT):
            async for part in result.full_stream:
                parts.append(part)
                if part.type == "finish-step":
                    abort.set()
        assert session.turn_state == "idle"
        with pytest.raises(HarnessTurnError):
            await result.steps
    assert kinds(parts)[-2:] == ["finish-step", "abort"]
    assert kinds(parts).count("abort") == 1
    assert "error" not in kinds(parts)
    assert framing_problems(parts) == []


@pytest.mark.requirement("RESULT-012", "STREAM-036")
async def test_parts_emitted_as_the_callers_abort_lands_are_forwarded_before_the_abort(
    tmp_path: Path,
) -> None:
    # The caller's own event is set inside done(), and the adapter emits on before any
    # other task runs: those parts reach the consumer, as the reader's path after an abort
    # forwards what done() still emits, and the turn ends with one abort part.
    abort = anyio.Event()

    def delta(text: str) -> dict[str, str]:
        return {"type": "text-delta", "id": "t1", "delta": text}

    start, _, end, step_end = text_step("")
    script = [start, delta("a"), Call(abort.set), delta("b"), delta("c"), end, step_end]
    async with opened(ScriptedHarness([script]), tmp_path, abort_grace=0.5) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go", abort=abort)
        assert session.turn_state == "idle"
    assert kinds(parts) == [
        "start",
        "start-step",
        "text-start",
        "text-delta",
        "text-delta",
        "text-delta",
        "text-end",
        "finish-step",
        "abort",
    ]
    assert [part.text for part in parts if isinstance(part, ConsumerTextDeltaPart)] == [
        "a",
        "b",
        "c",
    ]
    assert framing_problems(parts) == []


@pytest.mark.requirement("RESULT-013")
async def test_abort_with_a_clean_close_without_finish_settles_as_abort(tmp_path: Path) -> None:
    async with opened(ScriptedHarness([[*text_step("a")]]), tmp_path) as (agent, session):
        abort = anyio.Event()
        abort.set()
        _, parts = await stream_parts(agent, session=session, prompt="go", abort=abort)
        assert session.turn_state == "idle"
    assert kinds(parts)[-1] == "abort"
    assert "finish" not in kinds(parts)


@pytest.mark.requirement(
    "TRANSLATE-017", "TRANSLATE-018", "RESULT-012", "STREAM-036", "SESSION-022"
)
async def test_first_error_part_ends_the_turn_and_later_parts_are_ignored(tmp_path: Path) -> None:
    turns = [
        [
            *text_step("a"),
            {"type": "error", "error": {"message": "first failure"}},
            {"type": "error", "error": "second failure"},
            *text_step("ignored"),
            finish(),
        ],
        [*text_step("fresh"), finish()],
    ]
    async with opened(ScriptedHarness(turns), tmp_path) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        with pytest.raises(Exception, match="first failure"):
            await result.usage
        with pytest.raises(Exception, match="first failure"):
            await result.finish_reason
        assert session.turn_state == "idle"
        again = await agent.generate(session=session, prompt="again")
    assert kinds(parts).count("error") == 1
    assert kinds(parts)[-1] == "error"
    assert "first failure" in str(of_type(ConsumerErrorPart, parts[-1]).error)
    assert again.text == "fresh"


@pytest.mark.requirement("TRANSLATE-017", "HOSTTOOL-002")
async def test_harness_error_waits_for_running_host_tools(tmp_path: Path) -> None:
    slow_done = anyio.Event()

    async def slow(value: Any, options: Any) -> Any:
        await anyio.sleep(0.2)
        slow_done.set()
        return "late"

    script = [tool_call("c1", "slow", "{}"), {"type": "error", "error": "runtime gave up"}]
    harness = ScriptedHarness([script])
    slow_tool = tool(description="slow", input_schema=OBJECT, execute=slow)
    async with opened(harness, tmp_path, tools={"slow": slow_tool}) as (agent, session):
        result = await agent.stream(session=session, prompt="go")
        with anyio.fail_after(LIMIT):
            async for part in result.full_stream:
                if part.type == "error":
                    assert slow_done.is_set(), "the error waits for outstanding executions"
    assert harness.recorder.results == [{"tool_call_id": "c1", "output": "late"}]


@pytest.mark.requirement("RESULT-012")
async def test_generate_raises_the_turn_error(tmp_path: Path) -> None:
    async with opened(ScriptedHarness([[{"type": "error", "error": "boom"}]]), tmp_path) as (
        agent,
        session,
    ):
        with pytest.raises(Exception, match="boom"):
            await agent.generate(session=session, prompt="go")


@pytest.mark.requirement("STREAM-005")
async def test_invalid_emitted_part_fails_the_turn_naming_the_field(tmp_path: Path) -> None:
    script = [{"type": "text-delta", "id": "t"}, finish_step(), finish()]
    async with opened(ScriptedHarness([script]), tmp_path) as (agent, session):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert kinds(parts) == ["start", "error"]
    assert "delta" in str(of_type(ConsumerErrorPart, parts[-1]).error)


# -- 7.5 stop conditions -------------------------------------------------------------------------------


@pytest.mark.requirement("STOP-001")
async def test_without_stop_when_every_step_runs(tmp_path: Path) -> None:
    script = [part for n in range(21) for part in text_step(f"s{n}")] + [finish()]
    harness = ScriptedHarness([script])
    async with opened(harness, tmp_path) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
        assert session.turn_state == "idle"
    assert len(result.steps) == 21
    assert "do_suspend_turn" not in harness.recorder.calls


@pytest.mark.requirement("STOP-005")
async def test_lookahead_is_processed_exactly_once_when_no_predicate_matches(
    tmp_path: Path,
) -> None:
    seen: list[int] = []

    def never(context: Any) -> bool:
        seen.append(len(context["steps"]))
        return False

    script = [*text_step("first"), *text_step("second"), finish()]
    async with opened(ScriptedHarness([script]), tmp_path, stop_when=never) as (agent, session):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        steps = await result.steps
    assert seen == [1]
    assert [p.text for p in parts if p.type == "text-delta"] == ["first", "second"]
    assert [s.text for s in steps] == ["first", "second"]


@pytest.mark.requirement("STOP-002")
async def test_terminal_step_finishes_naturally_even_when_a_predicate_would_match(
    tmp_path: Path,
) -> None:
    called: list[Any] = []
    harness = ScriptedHarness([[*text_step("done"), finish()]])
    async with opened(harness, tmp_path, stop_when=always_stop(called)) as (
        agent,
        session,
    ):
        result = await agent.generate(session=session, prompt="go")
        assert not session.has_unfinished_turn()
    assert called == []
    assert result.finish_reason == "stop"
    assert "do_suspend_turn" not in harness.recorder.calls


def suspendable_turn(text: str, next_block: str) -> list[Any]:
    """A step, then the first part of the next one, then a wait a suspension ends."""
    return [*text_step(text), {"type": "text-start", "id": next_block}, WaitResult("never")]


@pytest.mark.requirement("STOP-003", "STOP-007", "SESSION-023")
async def test_matching_predicate_suspends_via_do_suspend_turn_once(tmp_path: Path) -> None:
    async def after_one(context: Any) -> bool:
        await anyio.lowlevel.checkpoint()
        return len(context["steps"]) >= 1

    harness = ScriptedHarness([suspendable_turn("one", "t2")])
    async with opened(harness, tmp_path, stop_when=[lambda c: False, after_one]) as (
        agent,
        session,
    ):
        result, parts = await stream_parts(agent, session=session, prompt="go")
        steps = await result.steps
        assert session.turn_state == "suspended"
        assert session.has_unfinished_turn()
        state = await suspend(session)
    assert [s.text for s in steps] == ["one"]
    assert kinds(parts)[-2:] == ["finish-step", "finish"]
    assert of_type(ConsumerFinishPart, parts[-1]).finish_reason == "stop"
    assert harness.recorder.calls.count("do_suspend_turn") == 1
    assert state.type == "continue-turn"


@pytest.mark.requirement("STOP-006", "STOP-008")
async def test_each_slice_counts_its_steps_from_zero(tmp_path: Path) -> None:
    seen: list[int] = []

    def one_step(context: Any) -> bool:
        seen.append(len(context["steps"]))
        return len(context["steps"]) >= 1

    turns = [
        suspendable_turn("one", "t2"),
        # The lookahead of each stop is dropped (STOP-008): each continuation's runtime
        # replays its step from the start.
        [
            {"type": "text-start", "id": "t2"},
            {"type": "text-delta", "id": "t2", "delta": "two"},
            finish_step(),
            {"type": "text-start", "id": "t3"},
            WaitResult("never"),
        ],
        [
            {"type": "text-start", "id": "t3"},
            {"type": "text-delta", "id": "t3", "delta": "three"},
            finish_step(),
            finish(),
        ],
    ]
    harness = ScriptedHarness(turns)
    async with opened(harness, tmp_path, stop_when=one_step) as (agent, session):
        first = await agent.generate(session=session, prompt="go")
        second = await agent.continue_generate(session=session)
        third, _ = await continue_parts(agent, session=session)
        assert session.turn_state == "idle"
        third_steps = await third.steps
    assert [s.text for s in first.steps] == ["one"]
    assert [s.text for s in second.steps] == ["two"]
    assert [s.text for s in third_steps] == ["three"]
    assert seen == [1, 1]
    assert harness.recorder.calls.count("do_suspend_turn") == 2


@pytest.mark.requirement("STOP-004")
async def test_an_error_lookahead_is_never_hidden_by_a_stop_condition(tmp_path: Path) -> None:
    called: list[Any] = []
    script = [*text_step("a"), {"type": "error", "error": "late failure"}]
    harness = ScriptedHarness([script])
    async with opened(harness, tmp_path, stop_when=always_stop(called)) as (
        agent,
        session,
    ):
        _, parts = await stream_parts(agent, session=session, prompt="go")
    assert kinds(parts)[-1] == "error"
    assert called == []
    assert "do_suspend_turn" not in harness.recorder.calls


# -- 10.1 prompt normalization -------------------------------------------------------------------------

LAST_USER = {"role": "user", "content": [{"type": "text", "text": "second"}]}
CONVERSATION = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "first"},
    {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
    LAST_USER,
    {"role": "assistant", "content": "trailing"},
]


@pytest.mark.parametrize(
    ("call", "forwarded"),
    [
        ({"prompt": "just text"}, "just text"),
        ({"messages": CONVERSATION}, LAST_USER),
        ({"prompt": CONVERSATION}, LAST_USER),
        ({"prompt": LAST_USER}, LAST_USER),
    ],
    ids=["string", "messages", "prompt-list", "single-message"],
)
@pytest.mark.requirement("PROMPT-002")
async def test_prompt_input_is_reduced_to_one_user_prompt(
    tmp_path: Path, call: dict[str, Any], forwarded: Any
) -> None:
    harness = ScriptedHarness([[finish()]])
    async with opened(harness, tmp_path) as (agent, session):
        await agent.generate(session=session, **call)
    assert harness.recorder.prompts[0].prompt == forwarded


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            {
                "messages": [
                    {"role": "system", "content": "x"},
                    {"role": "assistant", "content": "y"},
                ]
            },
            'HarnessAgent: messages must contain at least one `role: "user"` entry.',
        ),
        ({}, "HarnessAgent: either `prompt` or `messages` is required."),
    ],
    ids=["no-user-message", "no-input"],
)
@pytest.mark.requirement("PROMPT-003", "PROMPT-004", "SESSION-026", "ERROR-010")
async def test_prompt_input_errors_reject_directly(
    tmp_path: Path, call: dict[str, Any], message: str
) -> None:
    harness = ScriptedHarness([[finish()]])
    async with opened(harness, tmp_path) as (agent, session):
        with pytest.raises(HarnessUsageError) as caught:
            await agent.stream(session=session, **call)
        assert session.turn_state == "idle"
    assert str(caught.value) == message
    assert harness.recorder.prompts == []


@pytest.mark.requirement("PROMPT-005")
async def test_prepare_call_must_not_return_a_tool_continuation(tmp_path: Path) -> None:
    continuation = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool-call", "toolCallId": "c", "toolName": "pick", "input": {}},
                {"type": "tool-approval-request", "approvalId": "a", "toolCallId": "c"},
            ],
        },
        {
            "role": "tool",
            "content": [{"type": "tool-approval-response", "approvalId": "a", "approved": True}],
        },
    ]
    harness = ScriptedHarness([[finish()]])
    async with opened(harness, tmp_path, prepare_call=lambda call: {"messages": continuation}) as (
        agent,
        session,
    ):
        with pytest.raises(HarnessUsageError) as caught:
            await agent.stream(session=session, prompt="hello")
    assert str(caught.value) == (
        "HarnessAgent.prepareCall must return a fresh user prompt, not a tool continuation."
    )


# -- 10.2 / 10.3 / 10.6 turn settings forwarded ------------------------------------------------------

SKILL = Skill(name="review", description="Review code", content="Look for bugs.")


@pytest.mark.parametrize(
    "instructions",
    ["Answer in French.", {"role": "system", "content": "Answer in French."}],
    ids=["string", "system-message"],
)
@pytest.mark.requirement("ADAPTER-026", "PROMPT-006", "PROMPT-008", "PROMPT-023")
async def test_turn_settings_reach_do_prompt_turn_and_not_do_start(
    tmp_path: Path, instructions: Any
) -> None:
    harness = ScriptedHarness([[finish()]])
    async with opened(
        harness, tmp_path, instructions=instructions, skills=[SKILL], model="model-a"
    ) as (agent, session):
        await agent.generate(session=session, prompt="go")
    (options,) = harness.recorder.prompts
    assert options.instructions == "Answer in French."
    assert list(options.skills) == [SKILL]
    assert options.model == "model-a"
    assert list(options.tools) == []
    (start,) = harness.recorder.starts
    assert not hasattr(start, "model")
    assert not hasattr(start, "instructions")


@pytest.mark.requirement("ADAPTER-026", "PROMPT-008")
async def test_defaults_send_no_model_no_instructions_and_no_skills(tmp_path: Path) -> None:
    harness = ScriptedHarness([[finish()]])
    async with opened(harness, tmp_path) as (agent, session):
        await agent.generate(session=session, prompt="go")
    (options,) = harness.recorder.prompts
    assert (options.model, options.instructions, list(options.skills)) == (None, None, [])
    assert options.response_format is None


@pytest.mark.parametrize(
    ("model", "script", "expected"),
    [
        ("model-a", [*text_step("x"), finish()], "model-a"),
        (None, [*text_step("x"), finish()], ""),
        (
            "model-a",
            [{"type": "stream-start", "modelId": "runtime-b"}, *text_step("x"), finish()],
            "runtime-b",
        ),
        (
            "model-a",
            [
                *text_step("x"),
                {"type": "stream-start", "modelId": "late"},
                *text_step("y"),
                finish(),
            ],
            "model-a",
        ),
    ],
    ids=["turn-model", "no-model", "stream-start", "stream-start-after-a-step"],
)
@pytest.mark.requirement("RESULT-005", "STREAM-028", "PROMPT-023")
async def test_step_model_id(
    tmp_path: Path, model: str | None, script: list[Any], expected: str
) -> None:
    async with opened(ScriptedHarness([script]), tmp_path, model=model) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    assert {step.model_id for step in result.steps} == {expected}
    assert {
        of_type(ConsumerFinishStepPart, step.response).response.model_id for step in result.steps
    } == {expected}


# -- 10.7 prepare_call -----------------------------------------------------------------------------------


@pytest.mark.requirement("PROMPT-025")
async def test_prepare_call_receives_the_base_values_and_call_parameters(tmp_path: Path) -> None:
    received: list[dict[str, Any]] = []
    echo = echo_tool()

    def prepare(call: dict[str, Any]) -> None:
        received.append(call)

    async with opened(
        ScriptedHarness([[finish()]]),
        tmp_path,
        tools={"echo": echo},
        tools_context={"echo": {"k": 1}},
        instructions="base",
        skills=[SKILL],
        model="model-a",
        prepare_call=prepare,
    ) as (agent, session):
        await agent.generate(session=session, prompt="hello", options={"tier": "gold"})
    (call,) = received
    assert call["model"] == "model-a"
    assert call["instructions"] == "base"
    assert call["skills"] == [SKILL]
    assert call["tools"] == {"echo": echo}
    assert call["tools_context"] == {"echo": {"k": 1}}
    assert call["prompt"] == "hello"
    assert call["options"] == {"tier": "gold"}
    assert "session" not in call
    assert "abort" not in call


@pytest.mark.requirement("PROMPT-025", "PROMPT-026", "PROMPT-006", "MERGE-002", "SESSION-027")
async def test_prepare_call_overrides_reach_the_turn(tmp_path: Path) -> None:
    seen_context: list[Any] = []

    def execute(value: Any, options: Any) -> Any:
        seen_context.append(options.context)
        return "ok"

    special = tool(description="special", input_schema=OBJECT, execute=execute)
    other_skill = Skill(name="plan", description="Plan", content="Plan first.")

    async def prepare(call: dict[str, Any]) -> dict[str, Any]:
        await anyio.lowlevel.checkpoint()
        return {
            "model": "model-b",
            "instructions": {"role": "system", "content": "prepared"},
            "skills": [other_skill],
            "tools": {"special": special},
            "tools_context": {"special": "ctx"},
            "prompt": f"{call['prompt']} (prepared)",
        }

    script = [tool_call("c1", "special", "{}"), WaitResult("c1"), finish_step(), finish()]
    harness = ScriptedHarness([script])
    async with opened(
        harness, tmp_path, tools={"echo": echo_tool()}, model="model-a", prepare_call=prepare
    ) as (agent, session):
        await agent.generate(session=session, prompt="hello")
    (options,) = harness.recorder.prompts
    assert options.prompt == "hello (prepared)"
    assert options.model == "model-b"
    assert options.instructions == "prepared"
    assert list(options.skills) == [other_skill]
    assert [spec.name for spec in options.tools] == ["special"]
    assert seen_context == ["ctx"]
    assert list(agent.tools) == ["echo"], "agent.tools does not follow prepare_call"


@pytest.mark.requirement("SESSION-027")
async def test_prepare_call_omitted_keys_keep_the_base_values(tmp_path: Path) -> None:
    harness = ScriptedHarness([[finish()]])
    async with opened(
        harness,
        tmp_path,
        tools={"echo": echo_tool()},
        instructions="base",
        skills=[SKILL],
        model="model-a",
        prepare_call=lambda call: {"model": "model-b"},
    ) as (agent, session):
        await agent.generate(session=session, prompt="hello")
    (options,) = harness.recorder.prompts
    assert options.model == "model-b"
    assert (options.instructions, list(options.skills)) == ("base", [SKILL])
    assert [spec.name for spec in options.tools] == ["echo"]
    assert options.prompt == "hello"


@pytest.mark.requirement("SESSION-027")
async def test_prepare_call_returning_none_keeps_the_call(tmp_path: Path) -> None:
    harness = ScriptedHarness([[finish()]])
    async with opened(harness, tmp_path, model="model-a", prepare_call=lambda call: None) as (
        agent,
        session,
    ):
        await agent.generate(session=session, prompt="hello")
    assert (harness.recorder.prompts[0].model, harness.recorder.prompts[0].prompt) == (
        "model-a",
        "hello",
    )


@pytest.mark.parametrize(
    ("settings", "call"),
    [
        ({}, {"prompt": "hello"}),
        (
            {"model": "model-a", "skills": [SKILL], "instructions": "base"},
            {"prompt": [{"role": "user", "content": "first"}, {"role": "user", "content": "x"}]},
        ),
        (
            {"skills": [], "instructions": {"role": "system", "content": "sys"}},
            {"messages": [{"role": "user", "content": "from messages"}]},
        ),
        ({"instructions": {"role": "system"}}, {"prompt": {"role": "user", "content": "one"}}),
    ],
    ids=["defaults", "settings-and-message-list", "messages-and-system-message", "one-message"],
)
@pytest.mark.requirement("SESSION-027")
async def test_an_agent_without_prepare_call_prepares_what_a_none_returning_one_keeps(
    tmp_path: Path, settings: dict[str, Any], call: dict[str, Any]
) -> None:
    # The agent without prepare_call takes a shorter path to the same call (no
    # intermediate dictionaries): it must prepare exactly what the general path keeps.
    tools = {"echo": echo_tool()}
    context = {"tenant": "t1"}
    plain = make_agent(
        ScriptedHarness([]), tmp_path, tools=tools, tools_context=context, **settings
    )
    general = make_agent(
        ScriptedHarness([]),
        tmp_path,
        tools=tools,
        tools_context=context,
        prepare_call=lambda base: None,
        **settings,
    )
    arguments = (call.get("prompt"), call.get("messages"), None)
    prepared = await plain._prepare(*arguments)
    assert prepared == await general._prepare(*arguments)
    # Copies: changing the agent's settings afterwards does not reach the prepared call.
    assert prepared.tools is not plain.user_tools
    assert prepared.tools_context is not plain.tools_context
    assert prepared.skills is not plain.skills


@pytest.mark.requirement(
    "PROMPT-001", "PROMPT-025", "PROMPT-026", "ADAPTER-029", "RESULT-018", "LIFECYCLE-043"
)
async def test_prepare_call_never_runs_for_continuations_and_its_values_stay_frozen(
    tmp_path: Path,
) -> None:
    runs: list[int] = []

    def prepare(call: dict[str, Any]) -> dict[str, Any]:
        runs.append(1)
        return {"model": f"model-{len(runs)}", "instructions": "frozen"}

    script = [
        tool_call("c1", "pick", "{}"),
        WaitResult("c1"),
        finish_step(),
        tool_call("c2", "pick", "{}"),
        WaitResult("c2"),
        finish_step(),
        *text_step("end"),
        finish(),
    ]
    harness = ScriptedHarness([script])
    async with opened(
        harness,
        tmp_path,
        tools={"pick": client_tool()},
        model="base",
        prepare_call=prepare,
        output="text",
    ) as (agent, session):
        first = await agent.generate(session=session, prompt="go")
        request = [
            {"role": "user", "content": "go"},
            *first.response_messages,
            {
                "role": "tool",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": "c1",
                        "toolName": "pick",
                        "output": {"type": "json", "value": 1},
                    }
                ],
            },
        ]
        await agent.generate(session=session, messages=request)
        final = await agent.continue_generate(
            session=session, tool_result_continuations=[{"toolCallId": "c2", "output": 2}]
        )
    assert runs == [1]
    assert final.text == "end"
    assert len(harness.recorder.continues) == 2
    for options in harness.recorder.continues:
        assert (options.model, options.instructions) == ("model-1", "frozen")
        assert [spec.name for spec in options.tools] == ["pick"]
        assert options.response_format is not None
        assert options.response_format.to_wire() == {"type": "text"}


# -- 9.9 response format -------------------------------------------------------------------------------

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"answer": {"type": "string"}}}


@pytest.mark.parametrize(
    ("output", "wire"),
    [
        (None, None),
        ("text", {"type": "text"}),
        ("json", {"type": "json"}),
        (SCHEMA, {"type": "json", "schema": SCHEMA}),
        (
            JsonResponseFormat(schema=SCHEMA, name="Answer", description="The answer"),
            {"type": "json", "schema": SCHEMA, "name": "Answer", "description": "The answer"},
        ),
    ],
    ids=["none", "text", "json", "schema", "named"],
)
@pytest.mark.requirement("RESULT-018", "RESULT-023")
async def test_response_format_is_sent_on_every_turn(
    tmp_path: Path, output: Any, wire: dict[str, Any] | None
) -> None:
    script = [
        tool_call("c1", "pick", "{}"),
        WaitResult("c1"),
        finish_step(),
        *text_step("{}"),
        finish(),
    ]
    harness = ScriptedHarness([script])
    async with opened(harness, tmp_path, tools={"pick": client_tool()}, output=output) as (
        agent,
        session,
    ):
        # stream(), not generate(): a paused slice has no JSON text to parse, so its
        # generate() raises NoObjectGeneratedError as upstream's does.
        paused = await agent.stream(session=session, prompt="go")
        await paused.consume()
        await agent.continue_generate(
            session=session, tool_result_continuations=[{"toolCallId": "c1", "output": 1}]
        )
        assert agent.has_output is (output is not None)
    sent = [
        harness.recorder.prompts[0].response_format,
        harness.recorder.continues[0].response_format,
    ]
    assert [f.to_wire() if f is not None else None for f in sent] == [wire, wire]


@pytest.mark.requirement("RESULT-019")
async def test_structured_output_parses_the_final_steps_text(tmp_path: Path) -> None:
    script = [*text_step('{"answer": "no"}'), *text_step('{"answer": "yes"}'), finish()]
    async with opened(ScriptedHarness([script]), tmp_path, output=SCHEMA) as (agent, session):
        result = await agent.generate(session=session, prompt="go")
    assert result.output == {"answer": "yes"}


# -- §11 errors ------------------------------------------------------------------------------------------


class _UnreviewedError(HarnessError):
    name = "AI_SomethingElse"


@pytest.mark.parametrize(
    ("error", "shown"),
    [
        (HarnessError("plain harness failure"), "plain harness failure"),
        (HarnessCapabilityUnsupportedError("no steering", harness_id="x"), "no steering"),
        (HarnessSandboxAuthenticationError("bad token", sandbox_provider_id="p"), "bad token"),
        (InvalidLifecycleStateError("bad state"), "bad state"),
        (_UnreviewedError("secret detail"), "An error occurred."),
        (RuntimeError("internal"), "An error occurred."),
        (NoSuchToolError("ghost", ["a"]), "An error occurred."),
        (HarnessUsageError("usage"), "An error occurred."),
        ("not even an exception", "An error occurred."),
        (None, "An error occurred."),
    ],
    ids=[
        "harness",
        "capability",
        "sandbox-auth",
        "lifecycle",
        "unreviewed-subclass",
        "plain",
        "no-such-tool",
        "usage",
        "string",
        "none",
    ],
)
@pytest.mark.requirement("ERROR-005")
def test_get_harness_error_message(error: Any, shown: str) -> None:
    assert get_harness_error_message(error) == shown


@pytest.mark.requirement("ERROR-001", "ERROR-002", "ERROR-003")
def test_error_classes_names_fields_and_hierarchy() -> None:
    cause = OSError("socket closed")
    base = HarnessError("base", cause=cause)
    capability = HarnessCapabilityUnsupportedError("cap", harness_id="claude-code", cause=cause)
    auth = HarnessSandboxAuthenticationError("auth", sandbox_provider_id="docker")
    assert (base.name, base.message, base.cause, base.__cause__) == (
        "AI_HarnessError",
        "base",
        cause,
        cause,
    )
    assert capability.name == "AI_HarnessCapabilityUnsupportedError"
    assert (capability.harness_id, capability.cause) == ("claude-code", cause)
    assert auth.name == "AI_HarnessSandboxAuthenticationError"
    assert (auth.sandbox_provider_id, auth.cause) == ("docker", None)
    assert HarnessError.is_instance(capability)
    assert HarnessError.is_instance(auth)
    assert not HarnessCapabilityUnsupportedError.is_instance(base)
    assert not HarnessCapabilityUnsupportedError.is_instance(None)
    assert not HarnessError.is_instance(RuntimeError("x"))
    assert HarnessCapabilityUnsupportedError("no id").harness_id is None
    assert ToolContextValidationError("t", "bad").name == "AI_TypeValidationError"


@pytest.mark.parametrize(
    ("available", "message"),
    [
        (
            ["read", "bash"],
            "Model tried to call unavailable tool 'ghost'. Available tools: read, bash.",
        ),
        (None, "Model tried to call unavailable tool 'ghost'. No tools are available."),
    ],
    ids=["with-tools", "no-tools"],
)
def test_no_such_tool_error(available: list[str] | None, message: str) -> None:
    error = NoSuchToolError("ghost", available)
    assert str(error) == message
    assert (error.name, error.tool_name, error.available_tools) == (
        "AI_NoSuchToolError",
        "ghost",
        available,
    )


@pytest.mark.parametrize("version", ["harness-v2", None])
@pytest.mark.requirement("ADAPTER-002")
def test_agent_refuses_an_adapter_of_another_specification_version(
    tmp_path: Path, version: str | None
) -> None:
    harness = ScriptedHarness()
    harness.specification_version = version  # type: ignore[assignment]  # deliberately not harness-v1
    with pytest.raises(HarnessError) as caught:
        make_agent(harness, tmp_path)
    assert str(caught.value) == (
        f"HarnessAgent: harness 'mock' implements specificationVersion '{version}'; "
        "expected 'harness-v1'."
    )


@pytest.mark.requirement("ERROR-007")
def test_settings_errors_are_not_harness_errors(tmp_path: Path) -> None:
    with pytest.raises(HarnessUsageError) as caught:
        make_agent(ScriptedHarness(), tmp_path, active_tools=[], inactive_tools=[])
    assert not isinstance(caught.value, HarnessError)


@pytest.mark.requirement("ADAPTER-019", "ERROR-011")
def test_constructor_checks_managed_headers_before_tools(tmp_path: Path) -> None:
    harness = ScriptedHarness(builtin_tools={})
    with pytest.raises(HarnessUsageError) as caught:
        HarnessAgent(
            harness=harness,
            headers={"X-Api-Key": None},
            active_tools=[],
            inactive_tools=[],
        )
    assert (
        str(caught.value)
        == "HarnessAgent: `headers` must not include the managed header `x-api-key`."
    )


@pytest.mark.requirement("SESSION-018")
async def test_state_errors_use_the_quoted_messages(tmp_path: Path) -> None:
    script = [tool_call("c1", "pick", "{}"), WaitResult("c1")]
    async with opened(ScriptedHarness([script]), tmp_path, tools={"pick": client_tool()}) as (
        agent,
        session,
    ):
        await agent.generate(session=session, prompt="go")
        with pytest.raises(HarnessSessionStateError) as caught:
            await agent.stream(session=session, prompt="again")
    assert str(caught.value) == (
        "Harness session s1 has an unfinished turn and must be continued before accepting "
        "a new prompt."
    )


async def test_turn_failures_are_logged_to_stderr(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    async with opened(ScriptedHarness([[{"type": "error", "error": "boom"}]]), tmp_path) as (
        agent,
        session,
    ):
        await stream_parts(agent, session=session, prompt="go")
    assert "[harness:mock:error session=s1] " in capfd.readouterr().err


# -- resource hygiene ------------------------------------------------------------------------------------


async def test_a_finished_turn_leaves_no_unclosed_streams(tmp_path: Path) -> None:
    harness = ScriptedHarness([[*text_step("x"), finish()]])
    agent = make_agent(harness, tmp_path)
    with anyio.fail_after(LIMIT):
        session = await agent.create_session(session_id="s1")
        try:
            await agent.generate(session=session, prompt="go")
        finally:
            await session.destroy()
    del agent, session, harness
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaks == []
