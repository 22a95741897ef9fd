"""The agent's deadline and ``abort_grace`` hold even when the adapter ignores cancellation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_testkit.conformance._zoo._machinery import Defect, MutantAdapter, MutantControl
from harness_testkit.fake_harness import FakeHarness
from harness_testkit.reference import HarnessAgent, LocalSandboxProvider

pytestmark = pytest.mark.anyio

# A turn that never finishes on its own: the model waits on a clock nobody advances.
HANGING = {"turns": [{"steps": [{"actions": [{"text": "thinking"}, {"delay": 3600}]}]}]}


class _Stubborn(MutantControl):
    """done() shields itself from cancellation until the test releases it."""

    entered = 0
    release: anyio.Event

    async def done(self) -> None:
        type(self).entered += 1
        with anyio.CancelScope(shield=True):
            await type(self).release.wait()


_STUBBORN = Defect(
    name="",
    requirement="ADAPTER-044",
    area="robustness",
    description="done() shields itself from cancellation",
    control=_Stubborn,
)


async def test_a_done_that_ignores_cancellation_cannot_hold_the_turn(tmp_path: Path) -> None:
    _Stubborn.entered = 0
    _Stubborn.release = anyio.Event()
    agent = HarnessAgent(
        # a mutant's specification_version is typed str (one defect reports "harness-v2")
        harness=MutantAdapter(FakeHarness(script=HANGING), _STUBBORN),  # type: ignore[arg-type]
        sandbox=LocalSandboxProvider(tmp_path / "sandboxes"),
        abort_grace=0.2,
        error_log=None,
    )
    session = await agent.create_session(session_id="stubborn")
    parts: list[Any] = []
    try:
        with anyio.fail_after(30):  # a bound for the test, far above 0.2 + 0.2 s
            result = await agent.stream(session=session, prompt="go", timeout=0.2)
            async for part in result.full_stream:
                parts.append(part.type)
        # The stream ended while done() still sits in its shield: nobody waited for it.
        assert not _Stubborn.release.is_set()
        assert parts[-1] in ("abort", "error", "finish"), parts
        assert _Stubborn.entered == 1, "done() was entered more than once"
    finally:
        _Stubborn.release.set()
        await session.destroy()
