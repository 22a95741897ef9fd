"""Detached tasks: started on whichever backend runs, outliving the call that made them."""

from __future__ import annotations

import contextvars

import anyio
import pytest

from harness_testkit.reference._detached import new_event, spawn_detached
from harness_testkit.reference._handoff import Flag

_SEEN: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="unset")


@pytest.mark.anyio
async def test_a_detached_task_runs_on_the_running_backend_with_the_callers_context() -> None:
    ran = Flag()
    seen: list[str] = []

    async def job() -> None:
        seen.append(_SEEN.get())
        ran.set()

    _SEEN.set("caller")
    spawn_detached(job)
    with anyio.fail_after(5):
        await ran.wait()
    assert seen == ["caller"]


def test_outside_an_event_loop_it_says_what_it_needs() -> None:
    async def job() -> None:  # never started
        return None

    with pytest.raises(RuntimeError, match="needs a running asyncio or trio event loop"):
        spawn_detached(job)


@pytest.mark.anyio
async def test_a_turns_abort_event_is_the_running_backends_anyio_event() -> None:
    # Made twice: the first is anyio's own, later ones come from its class directly.
    for _ in range(2):
        event = new_event()
        assert isinstance(event, anyio.Event)
        assert type(event) is type(anyio.Event())
        assert not event.is_set()
        event.set()
        with anyio.fail_after(5):
            await event.wait()
