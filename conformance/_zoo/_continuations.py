"""Zoo area "continuations": defects in lifecycle states and in turns continued from them."""

from __future__ import annotations

import dataclasses
from typing import Any

from harness_testkit.spec import (
    ContinueTurnOptions,
    HarnessSessionStateError,
    PromptControl,
    PromptTurnOptions,
    StartOptions,
)

from ._machinery import Defect, MutantAdapter, MutantSession, wire_state, with_turn

__all__ = ["DEFECTS"]

_FRAMING = frozenset({"stream-start", "finish-step", "finish"})


class _CursorBehind(MutantSession):
    """Remembers this turn's emitted part types to re-deliver the last content part."""

    def rewrite(self, part: Any) -> list[Any]:
        self.memo.setdefault("types", []).append(str(getattr(part, "type", "")))
        return [part]

    async def do_prompt_turn(self, options: PromptTurnOptions) -> PromptControl:
        self.memo["types"] = []
        return await super().do_prompt_turn(options)

    def state(self, state: Any) -> Any:
        trailing = 0
        for part_type in reversed(self.memo.get("types", [])):
            if part_type not in _FRAMING:
                break
            trailing += 1

        def back(turn: dict[str, Any]) -> None:
            # One part too far back: the last content part is delivered again.
            turn["cursor"] = max(0, int(turn["cursor"]) - trailing - 1)
            turn["ended"] = False

        return with_turn(state, back) if wire_state(state)["type"] == "continue-turn" else state


def _skips_first_replayed(session: MutantSession, part: Any) -> list[Any]:
    skip = session.memo.setdefault("skip", session.start_options.continue_from is not None)
    if skip and str(getattr(part, "type", "")) not in _FRAMING:
        # The first event a continued turn delivers is lost.
        session.memo["skip"] = False
        return []
    return [part]


def _answers_previous_prompt(
    session: MutantSession, options: PromptTurnOptions
) -> PromptTurnOptions:
    if session.start_options.resume_from is None or session.memo.get("replayed"):
        return options
    session.memo["replayed"] = True
    earlier = [m.text for m in session.inner.conversation.messages if m.role == "user"]
    if not earlier:
        return options
    # The restored runtime re-answers the last prompt it remembers.
    return dataclasses.replace(options, prompt=earlier[-1])


def _foreign_harness_id(session: MutantSession, state: Any) -> Any:
    wire = wire_state(state)
    wire["harnessId"] = "other-harness"
    return wire


def _not_json_data(session: MutantSession, state: Any) -> Any:
    wire = wire_state(state)
    data = wire.get("data")
    if isinstance(data, dict):
        wire["data"] = {**data, "openFiles": {"notes.md"}}  # a set: not JSON
    return wire


def _pending_in_resume_state(session: MutantSession, state: Any) -> Any:
    wire = wire_state(state)
    if wire.get("type") == "resume-session":
        wire["pendingToolApprovals"] = []
    return wire


class _ContinueRefusedAfterRestore(MutantSession):
    async def do_continue_turn(self, options: ContinueTurnOptions) -> PromptControl:
        if self.start_options.continue_from is not None:
            raise HarnessSessionStateError(
                f"Fake harness session {self.session_id} cannot continue a restored turn."
            )
        return await super().do_continue_turn(options)


def _data_off_schema(session: MutantSession, state: Any) -> Any:
    wire = wire_state(state)
    data = wire.get("data")
    if isinstance(data, dict):
        wire["data"] = {**data, "runtimeVersion": 2}  # JSON, but not in the adapter's schema
    return wire


def _suspend_returns_resume_state(session: MutantSession, state: Any) -> Any:
    wire = wire_state(state)
    if wire.get("type") == "continue-turn":
        wire["type"] = "resume-session"
    return wire


class _AcceptsForeignStates(MutantAdapter):
    """Claims every state it is handed as its own before the runtime reads it."""

    def start_options(self, options: StartOptions) -> StartOptions:
        def own(state: Any) -> Any:
            if state is None:
                return None
            wire = wire_state(state)
            wire.update(harnessId=self.harness_id, specificationVersion="harness-v1")
            return wire

        return dataclasses.replace(
            options, resume_from=own(options.resume_from), continue_from=own(options.continue_from)
        )


_AREA = "continuations"

DEFECTS: tuple[Defect, ...] = (
    Defect(
        "replay-duplicates-event",
        "ADAPTER-032",
        _AREA,
        "A continued turn delivers the last content part before the suspension again.",
        profile="codex",
        session=_CursorBehind,
    ),
    Defect(
        "replay-skips-event",
        "ADAPTER-032",
        _AREA,
        "A turn continued from a state loses the first event it should deliver.",
        profile="codex",
        rewrite=_skips_first_replayed,
    ),
    Defect(
        "resume-answers-previous-prompt",
        "LIFECYCLE-040",
        _AREA,
        "A resumed session answers its first prompt with the previous turn's answer.",
        prompt_options=_answers_previous_prompt,
    ),
    Defect(
        "state-with-foreign-harness-id",
        "LIFECYCLE-005",
        _AREA,
        "Lifecycle states claim another harness, so no session of this one accepts them.",
        state=_foreign_harness_id,
    ),
    Defect(
        "state-not-json",
        "LIFECYCLE-006",
        _AREA,
        "Lifecycle state data holds a Python set.",
        state=_not_json_data,
    ),
    Defect(
        "state-data-off-schema",
        "ADAPTER-008",
        _AREA,
        "Lifecycle state data carries a key the adapter's own lifecycle_state_schema rejects.",
        state=_data_off_schema,
    ),
    Defect(
        "resume-state-with-pending-list",
        "LIFECYCLE-007",
        _AREA,
        "resume-session states carry an empty pendingToolApprovals list.",
        state=_pending_in_resume_state,
    ),
    Defect(
        "restored-turn-not-continued",
        "LIFECYCLE-041",
        _AREA,
        "A session started from a continue-turn state refuses do_continue_turn.",
        profile="codex",
        session=_ContinueRefusedAfterRestore,
    ),
    Defect(
        "start-accepts-foreign-states",
        "ADAPTER-059",
        _AREA,
        "do_start takes states of another harness or specification version as its own.",
        adapter=_AcceptsForeignStates,
    ),
    Defect(
        "suspend-returns-resume-state",
        "ADAPTER-030",
        _AREA,
        "do_suspend_turn returns a resume-session state instead of a continue-turn state.",
        state=_suspend_returns_resume_state,
    ),
)
