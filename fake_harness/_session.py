"""A fake harness session: turns, suspension, continuation, compaction and lifecycle."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import anyio

from harness_testkit.common import pattern_search
from harness_testkit.scripting import (
    CompactionPerformed,
    LifecycleEvent,
    McpServer,
    Script,
    TurnStarted,
)
from harness_testkit.spec import (
    ContinueTurnOptions,
    ContinueTurnState,
    HarnessCapabilityUnsupportedError,
    HarnessSessionStateError,
    JsonResponseFormat,
    PromptTurnOptions,
    ResumeSessionState,
    StartOptions,
    prompt_text,
)

from ._errors import FakeHarnessCrashError, FakeHarnessError, ScriptMismatchError
from ._requests import TurnContext
from ._state import Conversation, SessionData, TurnRecord, TurnSettingsRecord, compact_conversation
from ._turn_driver import TERMINAL_STATUSES, FakePromptControl, TurnRuntime, make_control
from ._workspace import Workspace

if TYPE_CHECKING:
    from ._harness import FakeHarness

__all__ = ["FakeHarnessSession"]


def _select_turn(script: Script, text: str, conversation: Conversation) -> tuple[int, int]:
    """Return (script turn index, next sequence position) for a prompt."""
    for index, turn in enumerate(script.turns):
        if turn.prompt_matches is not None and pattern_search(turn.prompt_matches, text):
            return index, conversation.sequence
    sequential = [index for index, turn in enumerate(script.turns) if turn.prompt_matches is None]
    if not sequential:
        raise FakeHarnessError(
            f"No script turn matches the prompt {text[:60]!r} and the script has no turn "
            "without promptMatches; add a catch-all turn."
        )
    position = conversation.sequence
    if position < len(sequential):
        return sequential[position], position + 1
    if script.when_exhausted == "cycle":
        return sequential[position % len(sequential)], position + 1
    if script.when_exhausted == "repeat-last":
        return sequential[-1], position + 1
    raise FakeHarnessError(
        f"The script has no turn left for prompt turn {conversation.turn_count} "
        f"({len(sequential)} sequential turns, whenExhausted: error)."
    )


class FakeHarnessSession:
    """An adapter session of :class:`FakeHarness` (implements ``HarnessSession``).

    Besides the contract's methods it offers :meth:`hold_before_part` to stop a turn
    at an exact part, for tests that suspend at a chosen cursor.
    """

    def __init__(
        self,
        *,
        harness: FakeHarness,
        options: StartOptions,
        script: Script,
        mode: Literal["fresh", "resume", "continue"],
        conversation: Conversation,
        mcp_servers: Mapping[str, McpServer],
    ) -> None:
        self._harness = harness
        self._options = options
        self._script = script
        self._mode = mode
        self._conversation = conversation
        self._mcp_servers = dict(mcp_servers)
        self._ended: str | None = None
        self._turn: TurnRuntime | None = None
        self.workspace = Workspace(options.sandbox_session, options.session_work_dir)

    # -- attributes -------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        """The id given to ``do_start``."""
        return self._options.session_id

    @property
    def is_resume(self) -> bool:
        """Whether the session was started from ``resume_from`` or ``continue_from``."""
        return self._mode != "fresh"

    @property
    def model_id(self) -> str:
        """The model id reported when turns name none."""
        return self._script.model_id or self._harness.profile.default_model

    @property
    def conversation(self) -> Conversation:
        """The runtime's context between turns (a copy)."""
        return self._conversation.model_copy(deep=True)

    @property
    def turn(self) -> TurnRuntime | None:
        """The latest turn's runtime (status, record), if any."""
        return self._turn

    # -- helpers ----------------------------------------------------------------------

    def _check(self, what: str) -> None:
        if self._ended is not None:
            raise HarnessSessionStateError(
                f"Fake harness session {self.session_id} has ended ({self._ended}) and cannot "
                f"{what}; start a new session (resume it from its state if you kept one)."
            )

    def _unsupported(self, what: str) -> HarnessCapabilityUnsupportedError:
        harness = self._harness
        return HarnessCapabilityUnsupportedError(
            f"Harness '{harness.harness_id}' (fake profile '{harness.profile.name}') {what}.",
            harness_id=harness.harness_id,
        )

    def _data(self, record: TurnRecord | None) -> dict[str, Any]:
        return SessionData(
            profile=self._harness.profile.name,
            script_digest=self._script.digest(),
            seed=self._harness.seed,
            session_work_dir=self._options.session_work_dir,
            conversation=record.conversation if record is not None else self._conversation,
            turn=record,
        ).to_wire()

    def _lifecycle(self, event: Any, turn: int | None = None, detail: str | None = None) -> None:
        self._harness.observations.record(
            LifecycleEvent(session_id=self.session_id, event=event, turn=turn, detail=detail)
        )

    def _control(self, turn: TurnRuntime) -> FakePromptControl:
        profile = self._harness.profile
        return make_control(
            turn,
            self._check,
            approvals=profile.supports_builtin_tool_approvals,
            steering=profile.supports_user_messages,
        )

    def _runtime(self, record: TurnRecord) -> TurnRuntime:
        harness = self._harness
        if not 0 <= record.script_turn < len(self._script.turns):
            raise ScriptMismatchError(
                f"The state runs script turn {record.script_turn}, which this script does not have."
            )
        script_turn = self._script.turns[record.script_turn]
        ctx = TurnContext(
            session_id=self.session_id,
            harness_id=harness.harness_id,
            turn_index=record.index,
            script=self._script,
            script_turn=script_turn,
            profile=harness.profile,
            seed=harness.seed,
            settings=record.settings,
            conversation=record.conversation.model_copy(deep=True),
            workspace=self.workspace,
            mcp_servers=self._mcp_servers,
        )
        faults = [
            *harness.profile.faults,
            *harness.faults,
            *self._script.faults,
            *script_turn.faults,
        ]
        return TurnRuntime(
            ctx=ctx,
            record=record,
            clock=harness.clock,
            log=harness.observations,
            faults=faults,
            on_settled=self._settled,
        )

    def _settled(self, turn: TurnRuntime) -> None:
        # The engine's working copy is the runtime's context from now on, whatever the ending.
        self._conversation = turn.ctx.conversation
        leftovers = list(turn.record.inbox.compactions)
        turn.record.inbox.compactions = []
        for instructions in leftovers:
            self._compact_now(instructions)
        event = {
            "finished": "finish",
            "errored": "errored",
            "closed": "closed",
            "aborted": "aborted",
            "failed": "crashed" if isinstance(turn.error, FakeHarnessCrashError) else "failed",
        }[turn.status]
        self._lifecycle(
            event, turn.record.index, str(turn.error) if turn.error is not None else None
        )

    def _compact_now(self, custom_instructions: str | None) -> None:
        profile = self._harness.profile
        part = compact_conversation(
            self._conversation, trigger="manual", custom_instructions=custom_instructions
        )
        if profile.emits_compaction:
            self._conversation.pending_compactions.append(part.to_wire())
        self._harness.observations.record(
            CompactionPerformed(
                session_id=self.session_id,
                trigger="manual",
                summary=part.summary,
                tokens_before=part.tokens_before or 0,
                tokens_after=part.tokens_after or 0,
                custom_instructions=custom_instructions,
                emitted=profile.emits_compaction,
            )
        )

    def restore_turn(self, record: TurnRecord) -> None:
        """Adopt an unfinished turn from a ``continue_from`` state (suspended until continued)."""
        if self._harness.profile.continuation == "lossy" and not record.ended:
            # A rerun recomputes the in-flight step: everything after its start comes again
            # (except host requests already answered, see TurnRuntime._already_answered).
            record.rerun_until = max(record.rerun_until, record.cursor)
            record.cursor = record.step_start
        turn = self._runtime(record)
        turn.status = "suspended"
        turn.captured = True
        self._turn = turn

    # -- turns --------------------------------------------------------------------------

    async def do_prompt_turn(self, options: PromptTurnOptions) -> FakePromptControl:
        """Start a turn: select the script turn for the prompt and return its control.

        Raises:
            HarnessSessionStateError: the session ended, or a turn is unfinished.
            HarnessCapabilityUnsupportedError: a JSON response format the profile cannot
                honour (none at all, or none without a schema).
            FakeHarnessError: the script has no turn for this prompt.
        """
        self._check("start a turn")
        if self._turn is not None and self._turn.unfinished:
            raise HarnessSessionStateError(
                f"Fake harness session {self.session_id} has an unfinished turn; continue it "
                "(do_continue_turn) before starting a new prompt."
            )
        response_format = options.response_format
        profile = self._harness.profile
        if isinstance(response_format, JsonResponseFormat):
            if profile.json_response_format == "none":
                raise self._unsupported("does not support JSON response formats")
            if (
                profile.json_response_format == "schema-required"
                and response_format.schema_ is None
            ):
                raise self._unsupported("supports JSON response formats only with a JSON Schema")
        text = prompt_text(options.prompt)
        script_turn, sequence = _select_turn(self._script, text, self._conversation)
        start_skills = {skill.name: skill for skill in self._options.skills}
        start_skills.update({skill.name: skill for skill in options.skills})
        conversation = self._conversation.model_copy(deep=True)
        conversation.turn_count += 1
        conversation.sequence = sequence
        settings = TurnSettingsRecord(
            prompt=options.prompt,
            prompt_text=text,
            model=options.model,
            instructions=options.instructions,
            skills=list(start_skills),
            tool_names=[tool.name for tool in options.tools],
            response_format=response_format.to_wire() if response_format is not None else None,
            permission_mode=self._options.permission_mode,
            builtin_tool_filtering=self._options.builtin_tool_filtering,
        )
        record = TurnRecord(
            index=self._conversation.turn_count,
            script_turn=script_turn,
            settings=settings,
            conversation=conversation,
        )
        self._conversation = conversation
        self._harness.observations.record(
            TurnStarted(
                session_id=self.session_id,
                turn=record.index,
                call="prompt",
                prompt=settings.prompt,
                script_turn=script_turn,
                tools=list(options.tools),
                skills=settings.skills,
                instructions=options.instructions,
                model=options.model,
                response_format=settings.response_format,
            )
        )
        turn = self._runtime(record)
        self._turn = turn
        control = self._control(turn)
        turn.attach(control, options.emit, options.abort)
        return control

    async def do_continue_turn(self, options: ContinueTurnOptions) -> FakePromptControl:
        """Continue the unfinished turn: a new control bound to the same turn.

        Works for a turn waiting for host input (submissions through the old or the new
        control both reach it), a turn suspended in this process (continues exactly at
        the cursor), and a turn adopted from ``continue_from`` (lossless: from the
        cursor; lossy: from the start of the in-flight step). Earlier controls of the
        turn settle cleanly (their ``done`` returns).

        Raises:
            HarnessSessionStateError: the session ended or has no unfinished turn.
        """
        self._check("continue a turn")
        turn = self._turn
        if turn is None or (turn.status in TERMINAL_STATUSES and not turn.captured):
            raise HarnessSessionStateError(
                f"Fake harness session {self.session_id} has no unfinished turn to continue."
            )
        self._harness.observations.record(
            TurnStarted(
                session_id=self.session_id,
                turn=turn.record.index,
                call="continue",
                script_turn=turn.record.script_turn,
                tools=list(options.tools),
                skills=[skill.name for skill in options.skills],
                instructions=options.instructions,
                model=options.model,
                response_format=options.response_format.to_wire()
                if options.response_format
                else None,
            )
        )
        control = self._control(turn)
        turn.attach(control, options.emit, options.abort)
        return control

    async def do_suspend_turn(self) -> ContinueTurnState:
        """Freeze the turn after the last emitted part and return its ``continue-turn`` state.

        Waits until the driver stops (a running sandbox command is allowed to finish; its
        outcome is journaled, not emitted). The turn's ``done`` resolves cleanly. A turn
        that already emitted ``finish`` is captured at its end (continuing it emits
        nothing more).

        Raises:
            HarnessSessionStateError: the session ended or has no turn to suspend.
        """
        self._check("suspend a turn")
        turn = self._turn
        if turn is None or turn.status in ("errored", "closed", "failed", "aborted"):
            raise HarnessSessionStateError(
                f"Fake harness session {self.session_id} has no unfinished turn to suspend."
            )
        await turn.suspend()
        if turn.status in ("errored", "closed", "failed", "aborted"):
            raise HarnessSessionStateError(
                f"The turn of fake harness session {self.session_id} ended ({turn.status}) "
                "while it was being suspended."
            )
        rewind = turn.take_pinned_cursor()
        if turn.status == "suspended" and rewind is not None and rewind < turn.record.cursor:
            # The agent stopped at a finish-step and dropped what came after (STOP-008):
            # freeze there, so that continuing replays the tail. A fresh runtime replays
            # the record (journaled outcomes are reused, nothing runs twice).
            turn.abandon()
            turn.record.cursor = rewind
            turn = self._runtime(turn.record)
            turn.status = "suspended"
            self._turn = turn
        turn.captured = True
        self._lifecycle("suspend", turn.record.index, f"cursor {turn.record.cursor}")
        return ContinueTurnState(harness_id=self._harness.harness_id, data=self._data(turn.record))

    def hold_before_part(self, part_index: int) -> anyio.Event:
        """Make the current turn stop before emitting part ``part_index`` (0-based).

        The turn waits there (as if the runtime were slow) until it is suspended or
        aborted. Returns an ``anyio.Event`` set when the hold is reached.

        Raises:
            HarnessSessionStateError: when there is no running turn.
        """
        if self._turn is None or self._turn.status != "running":
            raise HarnessSessionStateError(
                f"Fake harness session {self.session_id} has no running turn."
            )
        self._turn.hold_before(part_index)
        return self._turn.held

    # -- lifecycle ---------------------------------------------------------------------

    async def _between_turns_state(self, event: Literal["detach", "stop"]) -> ResumeSessionState:
        self._check(event)
        turn = self._turn
        if turn is not None and turn.unfinished:
            state = ResumeSessionState.mid_turn(await self.do_suspend_turn())
        else:
            state = ResumeSessionState(harness_id=self._harness.harness_id, data=self._data(None))
        self._ended = {"detach": "detached", "stop": "stopped"}[event]
        self._lifecycle(event)
        return state

    async def do_detach(self) -> ResumeSessionState:
        """Return a ``resume-session`` state and end this handle (the runtime keeps going).

        With an unfinished turn the state nests its ``continue-turn`` state.
        """
        return await self._between_turns_state("detach")

    async def do_stop(self) -> ResumeSessionState:
        """Persist, stop the runtime and return a ``resume-session`` state."""
        return await self._between_turns_state("stop")

    async def do_destroy(self) -> None:
        """Stop the runtime; an unfinished turn fails (its ``done`` raises)."""
        self._check("be destroyed")
        self._ended = "destroyed"
        if self._turn is not None:
            self._turn.kill(
                FakeHarnessError(f"Fake harness session {self.session_id} was destroyed.")
            )
        self._lifecycle("destroy")

    async def do_compact(self, custom_instructions: str | None = None) -> None:
        """Compact the context now (between turns) or at the running turn's next step.

        The ``compaction`` part (profiles that emit it) appears on the running turn, or
        at the start of the next turn.

        Raises:
            HarnessCapabilityUnsupportedError: the profile has no manual compaction, takes
                no custom instructions, or compacts only between turns and a turn is
                unfinished.
        """
        self._check("compact")
        profile = self._harness.profile
        if not profile.supports_manual_compaction:
            raise self._unsupported("does not support manual compaction")
        if custom_instructions is not None and not profile.compaction_custom_instructions:
            raise self._unsupported("does not support custom compaction instructions")
        turn = self._turn
        if turn is not None and turn.unfinished:
            if profile.manual_compaction == "between-turns":
                raise self._unsupported(
                    "can compact only between turns, not while a turn is unfinished"
                )
            turn.request_compaction(custom_instructions)
            return
        self._compact_now(custom_instructions)
