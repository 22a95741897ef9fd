"""Event checkpoints: pinned, released, and invisible to the part's value."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness_testkit.spec import (
    EventCheckpoint,
    attach_event_checkpoint,
    parse_stream_part,
    pin_event_checkpoint,
)

FINISH_STEP = {
    "type": "finish-step",
    "finishReason": {"unified": "stop"},
    "usage": {"inputTokens": {"total": 1}, "outputTokens": {"total": 2}},
}


def test_a_pin_holds_until_its_own_release() -> None:
    pinned: list[int | None] = [None]
    tokens: list[object] = []

    def checkpoint(cursor: int) -> EventCheckpoint:
        def pin() -> Callable[[], None]:
            token = object()
            tokens.append(token)
            pinned[0] = cursor

            def release() -> None:
                if tokens[-1] is token:
                    pinned[0] = None

            return release

        return pin

    first, second = parse_stream_part(FINISH_STEP), parse_stream_part(FINISH_STEP)
    attach_event_checkpoint(first, checkpoint(3))
    attach_event_checkpoint(second, checkpoint(7))
    release_first = pin_event_checkpoint(first)
    assert pinned == [3]
    assert release_first is not None
    release_second = pin_event_checkpoint(second)
    assert pinned == [7]
    assert release_second is not None
    release_first()  # replaced by a later pin: does nothing
    assert pinned == [7]
    release_second()
    assert pinned == [None]


def test_a_part_without_a_checkpoint_pins_nothing() -> None:
    assert pin_event_checkpoint(parse_stream_part(FINISH_STEP)) is None
    assert pin_event_checkpoint({"type": "finish-step"}) is None
    assert pin_event_checkpoint(None) is None


def test_the_checkpoint_is_not_part_of_the_value() -> None:
    plain, marked = parse_stream_part(FINISH_STEP), parse_stream_part(FINISH_STEP)
    attach_event_checkpoint(marked, lambda: lambda: None)
    assert marked == plain
    assert marked.to_wire() == plain.to_wire()
    assert marked.model_dump_json() == plain.model_dump_json()
    assert repr(marked) == repr(plain)


def test_an_object_without_attributes_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="needs a stream part object, got tuple"):
        attach_event_checkpoint((), lambda: lambda: None)
