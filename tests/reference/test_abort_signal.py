"""The turn's abort signal: an ``anyio.Event`` whose setting wakes the reader directly."""

from __future__ import annotations

import anyio
import pytest

from harness_testkit.reference._abort import AbortSignal

pytestmark = pytest.mark.anyio


async def test_it_is_an_anyio_event_that_waits_and_reports_like_one() -> None:
    signal = AbortSignal()
    assert isinstance(signal, anyio.Event)
    assert not signal.is_set()
    assert signal.statistics().tasks_waiting == 0
    async with anyio.create_task_group() as group:
        group.start_soon(signal.wait)
        await anyio.wait_all_tasks_blocked()
        assert signal.statistics().tasks_waiting == 1
        signal.set()
    assert signal.is_set()


async def test_listeners_are_called_once_and_late_listeners_at_once() -> None:
    signal = AbortSignal()
    calls: list[str] = []
    signal.listen(lambda: calls.append("first"))
    remove = signal.listen(lambda: calls.append("removed"))
    remove()
    signal.set()
    signal.set()
    assert calls == ["first"]
    signal.listen(lambda: calls.append("late"))
    assert calls == ["first", "late"]
