"""The approval pause/resume suite as a hypothesis ``RuleBasedStateMachine``.

Rules start turns whose steps call host tools needing approval (or denied, approved,
client-side), answer the pending approvals and client results in random ways (on the same
session, through approval-response messages, or after a JSON round trip of the suspended
turn into a new adapter and agent, like another process), and the invariants are checked
after every rule: no tool executes before its approval, a denied tool never executes, an
approved tool executes exactly once and its result appears exactly once in the continued
streams, and no approval is lost or answered twice.

The machine drives the async agent through an anyio blocking portal (an event loop in a
helper thread), so hypothesis can run it synchronously.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Coroutine
from contextlib import AbstractContextManager
from typing import Any

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from harness_testkit.reference import AgentSession, HarnessAgent
from harness_testkit.spec import (
    ConsumerPart,
    ConsumerToolApprovalRequestPart,
    ConsumerToolErrorPart,
    ConsumerToolResultPart,
)

from .._checks import Check, CheckFailed, property_check
from .._context import CheckContext
from ._recording import RecordingAdapter
from ._support import (
    HostToolCounter,
    make_script,
    require_continue_controls,
    set_script,
    settles,
)

__all__ = ["CHECKS", "ApprovalMachine"]

_KINDS = ("approve", "deny", "auto", "denied", "client")
_STATUS = {
    "approve": "user-approval",
    "deny": "user-approval",
    "auto": "approved",
    "denied": "denied",
    "client": "not-applicable",
}


class ApprovalMachine(RuleBasedStateMachine):
    """See the module docstring. ``context``, ``backend`` and ``hangs`` are set on a
    subclass."""

    context: CheckContext
    backend: str = "asyncio"
    #: The ADAPTER-044 failures (hangs) of this check's runs so far.
    hangs: list[CheckFailed]

    def __init__(self) -> None:
        super().__init__()
        self._portal_cm: AbstractContextManager[BlockingPortal] = start_blocking_portal(
            self.backend
        )
        self.portal = self._portal_cm.__enter__()
        self.turn = 0
        self.kinds: dict[str, str] = {}
        self.approve: dict[str, bool] = {}
        self.counter = HostToolCounter()
        self.agent: HarnessAgent | None = None
        self.session: AgentSession | None = None
        self.script: dict[str, Any] | None = None
        self.tools: dict[str, Any] = {}
        self.statuses: dict[str, str] = {}
        self.outcomes: Counter[str] = Counter()
        self.answered: Counter[str] = Counter()
        self.requested: set[str] = set()
        #: The adapters of this run of the machine: the context's list also holds those
        #: of earlier runs (examples), whose failures must not fail this one.
        self.adapters: list[RecordingAdapter] = []

    # -- plumbing ----------------------------------------------------------------------

    def _call(self, function: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> Any:
        async def bounded() -> Any:
            try:
                with settles(self.context):
                    return await function(*args)
            except CheckFailed as failure:
                if failure.requirement == "ADAPTER-044":
                    self.hangs.append(failure)
                raise

        return self.portal.call(bounded)

    def _new_agent(self) -> HarnessAgent:
        adapter: RecordingAdapter = self.context.adapter()
        self.adapters.append(adapter)
        assert self.script is not None
        set_script(adapter, self.script)
        return self.context.agent(adapter, tools=self.tools, tool_approval=self.statuses)

    def _record(self, parts: list[ConsumerPart]) -> None:
        for part in parts:
            if isinstance(part, ConsumerToolApprovalRequestPart) and not part.is_automatic:
                self.requested.add(part.approval_id)
            if isinstance(part, ConsumerToolResultPart | ConsumerToolErrorPart) and not getattr(
                part, "preliminary", False
            ):
                self.outcomes[part.tool_call_id] += 1

    def _unfinished(self) -> bool:
        return self.session is not None and self.session.has_unfinished_turn()

    # -- rules -------------------------------------------------------------------------

    @precondition(lambda self: not self._unfinished())
    @rule(kinds=st.lists(st.sampled_from(_KINDS), min_size=1, max_size=3))
    def start_turn(self, kinds: list[str]) -> None:
        """A new session whose turn calls host tools of the given kinds."""
        self.turn += 1
        names = [f"t{self.turn}_{i}_{kind}" for i, kind in enumerate(kinds)]
        calls = [f"c{self.turn}_{i}" for i in range(len(kinds))]
        for call, kind in zip(calls, kinds, strict=True):
            self.kinds[call] = kind
        self.tools = {
            name: self.counter.make(name, client_side=kind == "client")
            for name, kind in zip(names, kinds, strict=True)
        }
        self.statuses = {name: _STATUS[kind] for name, kind in zip(names, kinds, strict=True)}
        self.script = make_script(
            [
                {"hostTool": name, "id": call, "input": {"n": i}}
                for i, (name, call) in enumerate(zip(names, calls, strict=True))
            ],
            [{"text": "done"}],
        )
        self.agent = self._new_agent()

        async def start() -> tuple[AgentSession, list[ConsumerPart]]:
            assert self.agent is not None
            session = await self.context.create_session(
                self.agent, session_id=f"machine-{self.turn}"
            )
            result = await self.agent.stream(session=session, prompt="approvals")
            return session, [part async for part in result.full_stream]

        self.session, parts = self._call(start)
        self._record(parts)

    @precondition(lambda self: self._unfinished())
    @rule(
        approve=st.lists(st.booleans(), min_size=3, max_size=3),
        via=st.sampled_from(["continue", "messages", "json"]),
    )
    def answer(self, approve: list[bool], via: str) -> None:
        """Answer every pending approval and client result, in one of three ways."""
        assert self.session is not None
        assert self.agent is not None
        pending = self.session.pending_tool_approvals
        approvals = []
        for index, record in enumerate(pending):
            decision = self.kinds[record.tool_call_id] == "approve" and approve[index % 3]
            self.approve[record.tool_call_id] = decision
            self.answered[record.approval_id] += 1
            approvals.append(
                {
                    "type": "tool-approval-response",
                    "approvalId": record.approval_id,
                    "approved": decision,
                }
            )
        results = [
            {"toolCallId": record.tool_call_id, "output": {"client": record.tool_call_id}}
            for record in self.session.pending_tool_results
        ]
        if via == "json" and not self.context.capabilities.resume:
            via = "continue"
        if via == "messages" and (results or not approvals):
            via = "continue"

        async def go() -> list[ConsumerPart]:
            assert self.session is not None
            assert self.agent is not None
            if via == "json":
                state = json.loads(json.dumps((await self.session.suspend_turn()).to_wire()))
                self.agent = self._new_agent()
                self.session = await self.context.create_session(
                    self.agent, session_id=f"machine-{self.turn}", continue_from=state
                )
            if via == "messages":
                history = [
                    {
                        "role": "assistant",
                        "content": [
                            *(
                                {
                                    "type": "tool-call",
                                    "toolCallId": r.tool_call_id,
                                    "toolName": r.tool_name,
                                    "input": json.loads(r.input or "{}"),
                                }
                                for r in pending
                            ),
                            *(
                                {
                                    "type": "tool-approval-request",
                                    "approvalId": r.approval_id,
                                    "toolCallId": r.tool_call_id,
                                }
                                for r in pending
                            ),
                        ],
                    },
                    {"role": "tool", "content": approvals},
                ]
                result = await self.agent.stream(session=self.session, messages=history)
            else:
                result = await self.agent.continue_stream(
                    session=self.session,
                    tool_approval_continuations=approvals,
                    tool_result_continuations=results,
                )
            return [part async for part in result.full_stream]

        try:
            parts = self._call(go)
        finally:
            require_continue_controls(self.adapters)
        self._record(parts)

    # -- invariants --------------------------------------------------------------------

    @invariant()
    def nothing_runs_before_its_approval_and_denied_never_runs(self) -> None:
        """Pending and denied calls have not executed; nothing ran twice."""
        for call, kind in self.kinds.items():
            ran = self.counter.by_call[call]
            if kind in ("approve", "deny") and not self.approve.get(call, False) and ran:
                raise CheckFailed(
                    "APPROVAL-034", f"call {call} ({kind}) ran before approval or after denial"
                )
            if kind in ("denied", "client") and ran:
                raise CheckFailed("APPROVAL-034", f"call {call} ({kind}) ran on the host")
            if ran > 1:
                raise CheckFailed("APPROVAL-034", f"call {call} ran {ran} times")

    @invariant()
    def every_approval_is_answered_at_most_once(self) -> None:
        """No approval answered twice; no answered approval lost from the session."""
        twice = [approval for approval, count in self.answered.items() if count > 1]
        if twice:
            raise CheckFailed("APPROVAL-020", f"approvals answered twice: {twice}")

    @invariant()
    def a_finished_turn_ran_each_approved_call_once_with_one_result(self) -> None:
        """Once the turn is over: approved calls ran once and their result showed once."""
        if self._unfinished() or self.session is None:
            return
        for call, kind in self.kinds.items():
            if not call.startswith(f"c{self.turn}_"):
                continue
            should_run = kind == "auto" or self.approve.get(call, False)
            ran = self.counter.by_call[call]
            if should_run and ran != 1:
                raise CheckFailed("APPROVAL-034", f"call {call} ({kind}) ran {ran} times")
            if kind == "approve" and should_run and self.outcomes[call] != 1:
                raise CheckFailed(
                    "APPROVAL-034",
                    f"approved call {call}'s result appeared {self.outcomes[call]} times",
                )

    def teardown(self) -> None:
        """Destroy the sessions and stop the portal's event loop."""
        try:
            self.portal.call(self.context.aclose)
        finally:
            self._portal_cm.__exit__(None, None, None)


@property_check(
    "scripted.approval-machine",
    title="Stateful approval pause/resume: random interleavings keep every approval invariant",
    requirements=("APPROVAL-034", "APPROVAL-020", "APPROVAL-035", "LIFECYCLE-041", "ADAPTER-028"),
    scenarios=lambda ctx: st.just({}),
    # One scenario: the state machine draws its own rules inside it.
    classes={"the state machine run": lambda scenario: True},
)
async def approval_machine(ctx: CheckContext, scenario: Any) -> None:
    hangs: list[CheckFailed] = []
    machine = type("BoundApprovalMachine", (ApprovalMachine,), {"context": ctx, "hangs": hangs})
    machine_settings = settings(
        max_examples=max(3, ctx.profile.max_examples),
        stateful_step_count=6,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    # First without shrinking: a hang (a turn that did not settle) is reported as found,
    # since every smaller run tried would likely wait out the turn timeout again. Any
    # other failure is found again, deterministically, by a second run that shrinks it.
    unshrunk = settings(machine_settings, phases=(Phase.explicit, Phase.reuse, Phase.generate))
    try:
        await anyio.to_thread.run_sync(
            lambda: run_state_machine_as_test(machine, settings=unshrunk)
        )
    except Exception:
        if hangs:
            raise
        await anyio.to_thread.run_sync(
            lambda: run_state_machine_as_test(machine, settings=machine_settings)
        )
        raise


#: This module's checks, in order (listed by ``_registry.py``).
CHECKS: tuple[Check, ...] = (approval_machine,)
