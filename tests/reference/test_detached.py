"""Detached tasks: started on whichever backend runs, outliving the call that made them."""

from __future__ import annotations

import contextvars
import gc

import anyio
import anyio.lowlevel
import pytest

from harness_testkit.reference._detached import _DETACHED, spawn_detached
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
async def test_a_detached_task_is_kept_while_it_runs_and_let_go_when_it_ends(
    anyio_backend_name: str,
) -> None:
    # asyncio keeps only weak references to tasks: the module holds each one until it
    # ends (trio's system tasks are the nursery's).
    release, ended = Flag(), Flag()

    async def job() -> None:
        try:
            await release.wait()
        finally:
            ended.set()

    before = len(_DETACHED)
    spawn_detached(job)
    await anyio.lowlevel.checkpoint()
    held = len(_DETACHED) - before
    assert held == (1 if anyio_backend_name == "asyncio" else 0)
    gc.collect()
    release.set()
    with anyio.fail_after(5):
        await ended.wait()
        while len(_DETACHED) > before:  # (the done callback runs next)
            await anyio.lowlevel.checkpoint()
    assert len(_DETACHED) == before
