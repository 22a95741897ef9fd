"""The Claude Code turn's drive start against a suspend or kill that lands mid-start.

A turn rerun first rewinds the scripted model, then starts the CLI on the session's
runtime thread; both are awaits. A suspend or a session destroy that arrives during them
must stop the start: before the fix the stop found no drive running, and the CLI started
afterwards with nobody to stop it (it outlived its check, and the check's directory was
recreated under the removed one). No CLI runs here: the session is a stand-in that counts
runtime starts.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from harness_testkit.adapters.claude_code._cli_turn import ClaudeCodeTurn
from harness_testkit.spec import HarnessSessionStateError

pytestmark = pytest.mark.anyio


class _Runtime:
    def __init__(self) -> None:
        self.started: list[Any] = []

    def start(self, function: Any, *args: Any) -> None:
        self.started.append(function)


class _Session:
    """What a turn's drive start uses of its session; ``rewind`` waits for a release."""

    session_id = "s1"

    def __init__(self) -> None:
        self.rewinding = anyio.Event()
        self.release = anyio.Event()
        self.runtime = _Runtime()
        self.runners = 0
        self.recorded: list[Any] = []

    async def rewind(self, reply: int) -> None:
        self.rewinding.set()
        await self.release.wait()

    async def runner(self) -> _Runtime:
        self.runners += 1
        return self.runtime

    def wake_runtime(self) -> None:
        pass

    def record(self, entry: Any) -> None:
        self.recorded.append(entry)


def _rerun_turn(session: _Session) -> ClaudeCodeTurn:
    turn = ClaudeCodeTurn(session, index=0, prompt="go", prompt_text="go")  # type: ignore[arg-type]  # a stand-in session
    turn.rerun = True  # a continued turn: its drive rewinds first
    turn.drives = 1
    return turn


async def _start_then(session: _Session, turn: ClaudeCodeTurn, stop: Any) -> None:
    """Start a drive, run ``stop`` while it rewinds, then let the rewind return."""
    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(turn._start_drive)
            await session.rewinding.wait()

            async def stopping() -> None:
                await stop()

            group.start_soon(stopping)
            await anyio.wait_all_tasks_blocked()
            session.release.set()


async def test_a_kill_during_the_rewind_keeps_the_cli_from_starting() -> None:
    session = _Session()
    turn = _rerun_turn(session)
    await _start_then(session, turn, lambda: turn.kill(HarnessSessionStateError("destroyed")))
    assert session.runtime.started == []
    assert session.runners == 0
    assert turn.status == "failed"
    assert not turn._driving


async def test_a_suspend_during_the_rewind_leaves_the_turn_suspended_for_a_rerun() -> None:
    session = _Session()
    turn = _rerun_turn(session)
    await _start_then(session, turn, turn.suspend)
    assert session.runtime.started == []
    assert turn.status == "suspended"
    assert turn.rerun  # the next drive rewinds again
    assert turn.drives == 1  # the abandoned start is not counted
    assert not turn._driving


async def test_an_unhindered_start_runs_the_cli_on_the_runtime() -> None:
    session = _Session()
    turn = _rerun_turn(session)
    session.release.set()
    with anyio.fail_after(10):
        await turn._start_drive()
    assert session.runtime.started == [turn._drive]
    assert turn.status == "running"
    assert turn._driving
    assert turn.drives == 2


async def test_an_ended_session_starts_no_runtime_thread() -> None:
    """After a destroy (which closed the thread) a late start must not open a new one."""
    from types import SimpleNamespace

    from harness_testkit.adapters.claude_code import ClaudeCodeSession

    session = object.__new__(ClaudeCodeSession)  # no CLI, no sandbox: only the guard runs
    session._options = SimpleNamespace(session_id="s1")  # type: ignore[assignment]  # only the id is read
    session._ended = "destroyed"
    session._runtime = None
    with pytest.raises(HarnessSessionStateError, match="has ended \\(destroyed\\)"):
        await session.runner()
    assert session._runtime is None
