"""Handoff (the turn's part hand-off), Signal, trusted consumer deltas and StepContent
(deltas joined once)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_testkit.reference._handoff import Flag, Handoff, HandoffSink, Signal
from harness_testkit.reference._results import ReasoningContent, StepContent, TextContent
from harness_testkit.reference._translate import consumer_delta
from harness_testkit.spec import (
    ConsumerReasoningDeltaPart,
    ConsumerTextDeltaPart,
    ConsumerToolCallPart,
    ProviderMetadata,
    ReasoningDeltaPart,
    TextDeltaPart,
    parse_stream_part,
)

pytestmark = pytest.mark.anyio


async def test_items_come_out_in_order_and_a_reader_waits_only_when_empty() -> None:
    handoff: Handoff[int] = Handoff()
    handoff.put(1)
    handoff.put(2)
    handoff.push_front([-1, 0])
    assert len(handoff) == 4
    assert [await handoff.get() for _ in range(4)] == [-1, 0, 1, 2]
    with pytest.raises(anyio.WouldBlock):
        handoff.get_nowait()
    received: list[int] = []

    async def reader() -> None:
        received.append(await handoff.get())

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(reader)
            await anyio.wait_all_tasks_blocked()
            assert received == []  # waiting: nothing queued
            handoff.put(3)
    assert received == [3]


async def test_close_delivers_what_is_queued_then_ends_the_stream() -> None:
    handoff: Handoff[str] = Handoff()
    handoff.put("a")
    handoff.close()
    assert handoff.closed
    with pytest.raises(anyio.ClosedResourceError):
        handoff.put("b")
    assert await handoff.get() == "a"
    with pytest.raises(anyio.EndOfStream):
        await handoff.get()
    with pytest.raises(anyio.EndOfStream):
        handoff.get_nowait()


async def test_close_wakes_every_waiting_reader_with_end_of_stream() -> None:
    handoff: Handoff[int] = Handoff()
    ended: list[str] = []

    async def reader(name: str) -> None:
        try:
            await handoff.get()
        except anyio.EndOfStream:
            ended.append(name)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(reader, "first")
            group.start_soon(reader, "second")
            await anyio.wait_all_tasks_blocked()
            handoff.close()
    assert sorted(ended) == ["first", "second"]


async def test_a_waiting_reader_is_cancellable_and_the_item_stays_queued() -> None:
    handoff: Handoff[int] = Handoff()
    with anyio.move_on_after(0.01):
        await handoff.get()
    handoff.put(7)
    assert handoff.get_nowait() == 7


async def _wakes_both_waiters(
    wait: Callable[[], Awaitable[None]], wake: Callable[[], None]
) -> None:
    """Two tasks waiting on ``wait()`` stay asleep until ``wake()``, then both wake."""
    woken: list[str] = []

    async def waiter(name: str) -> None:
        await wait()
        woken.append(name)

    async with anyio.create_task_group() as group:
        group.start_soon(waiter, "first")
        group.start_soon(waiter, "second")
        await anyio.wait_all_tasks_blocked()
        assert woken == []
        wake()
    assert sorted(woken) == ["first", "second"]


async def test_a_flag_wakes_its_waiters_once_set_and_stays_set() -> None:
    flag = Flag()

    def set_unset_flag() -> None:
        assert not flag.is_set()
        flag.set()

    with anyio.fail_after(5):
        await _wakes_both_waiters(flag.wait, set_unset_flag)
        await flag.wait()  # already set: returns at once
    assert flag.is_set()
    assert Flag(True).is_set()
    unset = Flag()
    with anyio.move_on_after(0.01) as scope:  # a wait on an unset flag is cancellable
        await unset.wait()
    assert scope.cancelled_caught


async def test_a_signal_wakes_every_task_waiting_and_only_those() -> None:
    signal = Signal()
    signal.fire()  # nobody waits: nothing to remember
    with anyio.fail_after(5):
        await _wakes_both_waiters(signal.wait, signal.fire)
    with anyio.move_on_after(0.01) as scope:  # an earlier fire does not satisfy a new wait
        await signal.wait()
    assert scope.cancelled_caught


async def test_a_cancelled_signal_waiter_leaves_the_others_waiting() -> None:
    signal = Signal()
    woken: list[str] = []

    async def waiter() -> None:
        await signal.wait()
        woken.append("kept")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(waiter)
            with anyio.move_on_after(0.01) as scope:
                await signal.wait()
            assert scope.cancelled_caught
            await anyio.wait_all_tasks_blocked()
            signal.fire()
    assert woken == ["kept"]
    signal.fire()  # nobody waits any more: nothing happens


async def test_cancelled_signal_waits_do_not_pile_up_without_a_fire() -> None:
    signal = Signal()
    for _ in range(100):
        with anyio.move_on_after(0) as scope:
            await signal.wait()
        assert scope.cancelled_caught
    # Cancelled waiters are dropped while waiting (trio) or as they pile up (asyncio).
    assert len(signal._waiters or ()) <= 16
    with anyio.fail_after(5):
        await _wakes_both_waiters(signal.wait, signal.fire)


async def test_a_sink_has_room_up_to_its_capacity_and_an_unbounded_one_always() -> None:
    log: list[int] = []
    bounded = HandoffSink(log.append, log, capacity=3)
    assert bounded.has_room(3)
    assert not bounded.has_room(4)
    await bounded(1)
    bounded.put(2)
    assert log == [1, 2]
    assert bounded.has_room(1)
    assert not bounded.has_room(2)
    # The hot path's inline check reads the same two attributes.
    assert bounded.log is log
    assert bounded.capacity == 3
    unbounded = HandoffSink(log.append)
    assert unbounded.log is None
    assert unbounded.has_room(10**9)


@given(
    st.sampled_from(["text-delta", "reasoning-delta"]),
    st.text(max_size=8),
    st.text(max_size=8),
    st.one_of(st.none(), st.just({"bench": {"n": 1}})),
)
def test_consumer_deltas_are_the_models_their_constructor_makes(
    kind: str, block_id: str, delta: str, metadata: ProviderMetadata | None
) -> None:
    wire: dict[str, object] = {"type": kind, "id": block_id, "delta": delta}
    if metadata is not None:
        wire["harnessMetadata"] = metadata
    part = parse_stream_part(wire)
    assert isinstance(part, TextDeltaPart | ReasoningDeltaPart)
    model = ConsumerTextDeltaPart if kind == "text-delta" else ConsumerReasoningDeltaPart
    expected = model(id=block_id, text=delta, provider_metadata=metadata)
    built = consumer_delta(part)
    assert type(built) is model
    assert built == expected
    assert repr(built) == repr(expected)
    assert built.to_wire() == expected.to_wire()
    assert built.model_fields_set == expected.model_fields_set
    assert built.model_copy(update={"text": "x"}) == expected.model_copy(update={"text": "x"})


def _delta(kind: str, text: str) -> ConsumerTextDeltaPart | ConsumerReasoningDeltaPart:
    if kind == "text":
        return ConsumerTextDeltaPart(id="t", text=text)
    return ConsumerReasoningDeltaPart(id="r", text=text)


@given(st.lists(st.tuples(st.sampled_from(["text", "reasoning", "call"]), st.text(max_size=5))))
def test_step_content_coalesces_runs_of_deltas_like_concatenation(
    items: list[tuple[str, str]],
) -> None:
    content = StepContent()
    expected: list[object] = []
    for kind, text in items:
        if kind == "call":
            part = ConsumerToolCallPart(tool_call_id=text, tool_name="t", input={})
            content.add(part)
            expected.append(part)
            continue
        content.add(_delta(kind, text))
        model = TextContent if kind == "text" else ReasoningContent
        if expected and type(expected[-1]) is model:
            previous = expected.pop()
            assert isinstance(previous, TextContent | ReasoningContent)
            expected.append(model(text=previous.text + text))
        else:
            expected.append(model(text=text))
    parts = content.parts()
    assert list(parts) == expected
    wires = [part.to_wire() for part in parts]
    # The expected list is typed with the models' union, which mypy cannot narrow here.
    assert wires == [part.to_wire() for part in expected]  # type: ignore[attr-defined]
    assert content.parts() == parts  # reading twice changes nothing
