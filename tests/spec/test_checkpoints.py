"""Event checkpoints: pinned, released, and invisible to the part's value."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness_testkit.spec import (
    attach_event_checkpoint,
    parse_stream_part,
    pin_event_checkpoint,
)

FINISH_STEP = {
    "type": "finish-step",
    "finishReason": {"unified": "stop"},
    "usage": {"inputTokens": {"total": 1}, "outputTokens": {"total": 2}},
}


def test_pinning_calls_the_attached_pin_once_and_returns_its_release() -> None:
    # What a pin means (which cursor, which release wins) is the adapter's; the spec
    # carries the adapter's pin on the part and hands back what it returns.
    calls: list[str] = []

    def release() -> None:
        calls.append("release")

    def pin() -> Callable[[], None]:
        calls.append("pin")
        return release

    part = parse_stream_part(FINISH_STEP)
    attach_event_checkpoint(part, pin)
    assert calls == []
    assert pin_event_checkpoint(part) is release
    assert calls == ["pin"]
    attach_event_checkpoint(part, lambda: lambda: None)  # attaching again replaces the pin
    pin_event_checkpoint(part)
    assert calls == ["pin"]


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
