"""Fault hooks for robustness suites: off by default, selected by name."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from pydantic import ValidationError

from harness_testkit.fake_harness import (
    CrashFault,
    FakeHarness,
    FakeHarnessCrashError,
    LifecycleEvent,
    Script,
    TurnAbortedError,
    VirtualClock,
    get_profile,
)
from harness_testkit.spec import PromptTurnOptions, parse_stream_part
from tests.fake_harness.support import (
    Collector,
    SandboxEnv,
    continue_turn,
    run_turn,
    start,
    wait_for,
)

pytestmark = pytest.mark.anyio

TWO_STEPS: dict[str, Any] = {
    "chunking": {"mode": "whole"},
    "turns": [{"steps": [{"actions": ["one"]}, {"actions": ["two"]}]}],
}
# Parts of TWO_STEPS on claude-code: stream-start, text x3, finish-step, text x3, finish-step, finish.


def with_faults(*faults: dict[str, Any]) -> Script:
    document = {**TWO_STEPS, "turns": [{**TWO_STEPS["turns"][0], "faults": list(faults)}]}
    return Script.model_validate(document)


async def test_no_faults_by_default(sandbox: SandboxEnv) -> None:
    collected, error = await run_turn(
        await start(FakeHarness(Script.model_validate(TWO_STEPS)), sandbox)
    )
    assert error is None
    assert len(collected.parts) == 10


async def test_delay_part_waits_on_the_clock(sandbox: SandboxEnv) -> None:
    clock = VirtualClock()
    script = with_faults(
        {"kind": "delay-part", "beforeType": "finish-step", "occurrence": 2, "seconds": 7}
    )
    collected, _ = await run_turn(await start(FakeHarness(script, clock=clock), sandbox))
    assert clock.now() == 7
    assert len(collected.parts) == 10


async def test_crash(sandbox: SandboxEnv) -> None:
    harness = FakeHarness(with_faults({"kind": "crash", "atPart": 3, "message": "boom"}))
    collected, error = await run_turn(await start(harness, sandbox))
    assert isinstance(error, FakeHarnessCrashError)
    assert str(error) == "boom"
    assert len(collected.parts) == 3
    assert harness.observations.of_kind(LifecycleEvent)[-1].event == "crashed"


async def test_hang_until_abort(sandbox: SandboxEnv) -> None:
    session = await start(FakeHarness(with_faults({"kind": "hang", "atPart": 5})), sandbox)
    abort = anyio.Event()
    collector = Collector()
    control = await session.do_prompt_turn(
        PromptTurnOptions(prompt="x", emit=collector.emit, abort=abort)
    )
    async with anyio.create_task_group() as group:

        async def stop_waiting() -> None:
            await wait_for(lambda: len(collector.parts) >= 5)
            await anyio.sleep(0.05)
            assert len(collector.parts) == 5
            abort.set()

        group.start_soon(stop_waiting)
        with pytest.raises(TurnAbortedError):
            await control.done()


async def test_hang_then_suspend_continues_past_the_hang(sandbox: SandboxEnv) -> None:
    script = with_faults({"kind": "hang", "atPart": 5})
    session = await start(FakeHarness(script), sandbox)
    collector = Collector()
    control = await session.do_prompt_turn(PromptTurnOptions(prompt="x", emit=collector.emit))
    async with anyio.create_task_group() as group:
        group.start_soon(control.done)
        await wait_for(lambda: len(collector.parts) >= 5)
        # Suspend only once the hang has really begun: five parts out does not mean the
        # runtime has reached the fault yet (the scheduling order differs per backend).
        turn = session.turn
        assert turn is not None
        await wait_for(lambda: 0 in turn.record.faults_fired)
        state = await session.do_suspend_turn()
    continued = await start(FakeHarness(script), sandbox, "c", continue_from=state)
    rest, error = await continue_turn(continued)
    assert error is None
    assert len(collector.parts) + len(rest.parts) == 10


async def test_malformed_part_is_emitted_as_a_wrong_dict(sandbox: SandboxEnv) -> None:
    script = with_faults({"kind": "malformed-part", "atPart": 2})
    collector = Collector(strict=False)
    collected, error = await run_turn(
        await start(FakeHarness(script), sandbox), collector=collector
    )
    assert error is None
    assert len(collected.parts) == 11
    bad = collected.parts[2]
    assert bad == {"type": "text-delta", "ID": "malformed", "text": "oops"}
    with pytest.raises(ValidationError):
        parse_stream_part(bad)


async def test_drop_finish_step_and_close_early(sandbox: SandboxEnv) -> None:
    dropped, _ = await run_turn(
        await start(FakeHarness(with_faults({"kind": "drop-finish-step", "steps": [0]})), sandbox)
    )
    assert dropped.types().count("finish-step") == 1
    assert dropped.types()[-1] == "finish"
    every, _ = await run_turn(
        await start(FakeHarness(with_faults({"kind": "drop-finish-step"})), sandbox, "b")
    )
    assert "finish-step" not in every.types()
    closed, error = await run_turn(
        await start(
            FakeHarness(with_faults({"kind": "close-early", "beforeType": "finish"})), sandbox, "c"
        )
    )
    assert error is None
    assert "finish" not in closed.types()
    assert len(closed.parts) == 9


async def test_profile_and_harness_faults_apply_to_every_turn(sandbox: SandboxEnv) -> None:
    crashing = get_profile("codex").model_copy(update={"faults": [CrashFault(at_part=0)]})
    _, error = await run_turn(
        await start(FakeHarness(Script.model_validate(TWO_STEPS), profile=crashing), sandbox)
    )
    assert isinstance(error, FakeHarnessCrashError)
    harness = FakeHarness(Script.model_validate(TWO_STEPS), faults=[CrashFault(at_part=1)])
    session = await start(harness, sandbox, "h")
    for _ in range(2):
        collected, error = await run_turn(session)
        assert isinstance(error, FakeHarnessCrashError)
        assert len(collected.parts) == 1


async def test_an_emit_that_raises_fails_the_turn(sandbox: SandboxEnv) -> None:
    session = await start(FakeHarness(Script.model_validate(TWO_STEPS)), sandbox)

    def emit(part: Any) -> None:
        raise RuntimeError("consumer broke")

    control = await session.do_prompt_turn(PromptTurnOptions(prompt="x", emit=emit))
    with pytest.raises(RuntimeError, match="consumer broke"):
        await control.done()
    with pytest.raises(RuntimeError, match="consumer broke"):
        await control.done()  # settled: the same outcome every time
