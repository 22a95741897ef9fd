"""Zoo areas "lifecycle" and "robustness": defects in destroy, stop, suspend, compaction,
abort, hangs and crashes."""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio

from harness_testkit.fake_harness import FakeHarnessCrashError, FakeHarnessError, HangFault
from harness_testkit.spec import (
    CompactionPart,
    ContinueTurnOptions,
    ContinueTurnState,
    HarnessSessionStateError,
    PromptControl,
    PromptTurnOptions,
    ResumeSessionState,
)

from ._machinery import Defect, MutantControl, MutantSession

__all__ = ["DEFECTS"]


class _StaysOpenAfterDestroy(MutantSession):
    async def do_destroy(self) -> None:
        # Kills the running turn but forgets to mark the session ended.
        turn = self.inner.turn
        if turn is not None:
            turn.kill(FakeHarnessError(f"Fake harness session {self.session_id} was destroyed."))


class _DestroyReturnsState(MutantSession):
    async def do_destroy(self) -> Any:
        await super().do_destroy()
        return {"destroyed": True}


class _SuspendRaisesControl(MutantControl):
    async def done(self) -> None:
        await super().done()
        if self.session.memo.get("suspending"):
            raise HarnessSessionStateError("The turn was suspended.")


class _SuspendRaises(MutantSession):
    async def do_prompt_turn(self, options: PromptTurnOptions) -> PromptControl:
        self.memo["suspending"] = False
        return await super().do_prompt_turn(options)

    async def do_continue_turn(self, options: ContinueTurnOptions) -> PromptControl:
        self.memo["suspending"] = False
        return await super().do_continue_turn(options)

    async def do_suspend_turn(self) -> ContinueTurnState:
        # Set before suspending: done() of a running turn returns during the suspension.
        self.memo["suspending"] = True
        return await super().do_suspend_turn()


def _manual_compaction_hidden(session: MutantSession, part: Any) -> list[Any]:
    if isinstance(part, CompactionPart) and part.trigger == "manual":
        return []
    return [part]


def _double_compaction(session: MutantSession, part: Any) -> list[Any]:
    return [part, part] if isinstance(part, CompactionPart) else [part]


class _DetachTearsDown(MutantSession):
    async def do_detach(self) -> ResumeSessionState:
        # A valid resume state, but the runtime is stopped as by do_stop.
        return await super().do_stop()


class _StopLeavesRuntime(MutantSession):
    async def do_stop(self) -> ResumeSessionState:
        # A valid resume state, but the runtime keeps running as after do_detach.
        return await super().do_detach()


class _StopsItsSandbox(MutantSession):
    async def do_stop(self) -> ResumeSessionState:
        state = await super().do_stop()
        stop = getattr(self.start_options.sandbox_session, "stop", None)
        if stop is not None:
            await stop()
        return state


class _CannotContinue(MutantSession):
    async def do_continue_turn(self, options: ContinueTurnOptions) -> PromptControl:
        # The method exists (the surface looks complete) but was never implemented.
        raise NotImplementedError("continuing an unfinished turn is not implemented")


class _NoCompactMethod(MutantSession):
    do_compact = None  # type: ignore[assignment]


def _abort_not_wired(session: MutantSession, options: Any) -> Any:
    return dataclasses.replace(options, abort=None)


class _NeverSettlesControl(MutantControl):
    async def done(self) -> None:
        try:
            await super().done()
        except FakeHarnessCrashError:
            # The runtime died; nobody tells the host, so done() never settles.
            await anyio.sleep_forever()


class _NeverSettlesAtAllControl(MutantControl):
    async def done(self) -> None:
        # The turn streams its parts, but done() neither returns nor raises, aborted or not.
        await anyio.sleep_forever()


class _SuspendedNeverSettlesControl(MutantControl):
    async def done(self) -> None:
        await super().done()
        if self.session.memo.get("suspending"):
            # The suspension succeeded, but the suspended turn never settles.
            await anyio.sleep_forever()


class _RefusesAfterFailureControl(MutantControl):
    async def done(self) -> None:
        try:
            await super().done()
        except FakeHarnessCrashError:
            self.session.memo["failed"] = True
            raise


class _RefusesAfterFailure(MutantSession):
    async def do_prompt_turn(self, options: PromptTurnOptions) -> PromptControl:
        if self.memo.get("failed"):
            raise HarnessSessionStateError(
                f"Fake harness session {self.session_id} is broken after a failed turn."
            )
        return await super().do_prompt_turn(options)


_LIFECYCLE = "lifecycle"
_ROBUSTNESS = "robustness"

DEFECTS: tuple[Defect, ...] = (
    Defect(
        "accepts-calls-after-destroy",
        "ADAPTER-037",
        _LIFECYCLE,
        "do_destroy kills the turn but the session keeps accepting turns.",
        session=_StaysOpenAfterDestroy,
    ),
    Defect(
        "destroy-returns-value",
        "ADAPTER-035",
        _LIFECYCLE,
        "do_destroy returns a dict instead of None.",
        session=_DestroyReturnsState,
    ),
    Defect(
        "done-raises-after-suspend",
        "ADAPTER-031",
        _LIFECYCLE,
        "After do_suspend_turn the turn's done() raises instead of returning.",
        profile="codex",
        session=_SuspendRaises,
        control=_SuspendRaisesControl,
    ),
    Defect(
        "compaction-claimed-never-emitted",
        "ADAPTER-040",
        _LIFECYCLE,
        "do_compact succeeds but its manual compaction part is never emitted.",
        profile="pi",
        rewrite=_manual_compaction_hidden,
    ),
    Defect(
        "compaction-emitted-twice",
        "STREAM-021",
        _LIFECYCLE,
        "Every compaction part is emitted twice.",
        profile="pi",
        rewrite=_double_compaction,
    ),
    Defect(
        "detach-tears-down-runtime",
        "ADAPTER-033",
        _LIFECYCLE,
        "do_detach stops the runtime (as do_stop would) before returning its state.",
        session=_DetachTearsDown,
    ),
    Defect(
        "stop-leaves-runtime-running",
        "ADAPTER-034",
        _LIFECYCLE,
        "do_stop returns a resume state but leaves the runtime running.",
        session=_StopLeavesRuntime,
    ),
    Defect(
        "sandbox-stopped-by-adapter",
        "ADAPTER-017",
        _LIFECYCLE,
        "do_stop also stops the sandbox session the adapter was given.",
        session=_StopsItsSandbox,
    ),
    Defect(
        "continue-turn-not-implemented",
        "ADAPTER-028",
        _LIFECYCLE,
        "do_continue_turn exists but raises, so a suspended turn can never be continued.",
        session=_CannotContinue,
    ),
    Defect(
        "session-without-do-compact",
        "ADAPTER-022",
        _LIFECYCLE,
        "Adapter sessions have no do_compact.",
        session=_NoCompactMethod,
    ),
    Defect(
        "unusable-after-failed-turn",
        "ADAPTER-055",
        _ROBUSTNESS,
        "After a turn failed, the session refuses every further prompt turn.",
        session=_RefusesAfterFailure,
        control=_RefusesAfterFailureControl,
    ),
    Defect(
        "abort-not-wired",
        "ADAPTER-042",
        _ROBUSTNESS,
        "The turn's abort event never reaches the runtime.",
        turn_options=_abort_not_wired,
        # The aborted turn waits out the abort grace (twice the turn timeout): keep it short.
        claims={"turn_timeout": 1.0},
    ),
    Defect(
        "hangs-without-timeout",
        "ADAPTER-042",
        _ROBUSTNESS,
        "The runtime stalls before `finish` and the adapter neither times out nor observes abort.",
        turn_options=_abort_not_wired,
        fake={"faults": [HangFault(before_type="finish")]},
        # Every turn hangs: a short declared timeout keeps the dozen failing checks quick.
        claims={"turn_timeout": 0.5},
    ),
    Defect(
        "turn-never-settles",
        "ADAPTER-044",
        _ROBUSTNESS,
        "No turn's done() ever returns or raises, even when the turn is aborted.",
        control=_NeverSettlesAtAllControl,
        claims={"turn_timeout": 1.0},
    ),
    Defect(
        "suspended-turn-never-settles",
        "ADAPTER-031",
        _LIFECYCLE,
        "After do_suspend_turn the suspended turn's done() never returns or raises.",
        profile="codex",
        session=_SuspendRaises,
        control=_SuspendedNeverSettlesControl,
        claims={"turn_timeout": 1.0},
    ),
    Defect(
        "crash-leaves-turn-unsettled",
        "ADAPTER-044",
        _ROBUSTNESS,
        "When the runtime fails mid-turn, done() never returns or raises.",
        control=_NeverSettlesControl,
        claims={"turn_timeout": 1.0},
    ),
)
