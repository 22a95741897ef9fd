"""Event checkpoints across the adapter host (HOST-014, STOP-008).

An adapter that reads its runtime through upstream's sandbox channel gets a hidden event
checkpoint on each event, and its suspension cursor is the one the agent pinned: the
``finish-step`` a stop condition ended the slice at, so the runtime replays the dropped
tail when the turn is continued. Across the host, the checkpoint stays in Node and the
kit pins it by the part's number. The fixture in ``node_checkpoints/`` returns its
cursor in the continue state, so these tests see which one the suspension took.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_testkit.adapters.node import NodeHarness, close_hosts, load_node_target
from harness_testkit.conformance import AdapterTarget
from harness_testkit.reference import HarnessAgent, LocalSandboxProvider, step_count_is

FIXTURE = Path(__file__).resolve().parent / "node_checkpoints"

pytestmark = pytest.mark.skipif(
    shutil.which("node") is None and os.environ.get("CI") != "true",
    reason="needs Node (any version >= 20) on PATH",
)


@pytest.fixture(scope="module")
def fixture_target() -> Iterator[AdapterTarget]:
    target = load_node_target(f"{FIXTURE}#createCheckpointHarness")
    yield target
    close_hosts()


def _run(target: AdapterTarget, root: Path, steps: int, backend: str) -> tuple[str, Any]:
    async def main() -> tuple[str, Any]:
        adapter = target.factory()
        assert isinstance(adapter, NodeHarness)
        agent = HarnessAgent(
            harness=adapter,
            sandbox=LocalSandboxProvider(root_dir=root),
            stop_when=step_count_is(steps),
        )
        session = await agent.create_session(session_id=f"pin-{steps}")
        with anyio.fail_after(60):
            result = await agent.stream(session=session, prompt="go")
            text = await result.text
            state = await session.suspend_turn() if session.has_unfinished_turn() else None
        await session.destroy()
        return text, None if state is None else state.data

    return anyio.run(main, backend=backend)


@pytest.mark.requirement("HOST-014", "STOP-008")
def test_a_stop_suspends_the_turn_at_the_pinned_finish_step(
    fixture_target: AdapterTarget, tmp_path: Path, anyio_backend: str
) -> None:
    text, data = _run(fixture_target, tmp_path, 1, anyio_backend)
    assert text == "one"
    # Events: stream-start, text-start, text-delta, text-end, finish-step (5). The agent
    # read the next step's text-start as its lookahead, so the adapter had emitted more;
    # without the pin the cursor would be the last event emitted.
    assert data["emitted"] > 5
    assert data["cursor"] == 5


@pytest.mark.requirement("HOST-014", "STOP-008")
def test_a_pinned_step_the_stop_does_not_end_at_lets_the_turn_finish(
    fixture_target: AdapterTarget, tmp_path: Path, anyio_backend: str
) -> None:
    # Stop after two steps: the first finish-step is pinned and the pin released (the
    # condition does not hold there), the second is followed by the turn's finish, so the
    # turn ends with both steps' text and nothing left to suspend. The release itself is
    # not observable from here: a finished turn has no suspension to return a cursor.
    text, data = _run(fixture_target, tmp_path, 2, anyio_backend)
    assert (text, data) == ("two", None)
