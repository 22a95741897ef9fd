"""Zoo area "approvals": defects in how a runtime asks for, waits for and obeys approvals."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio

from harness_testkit.fake_harness import ToolExecuted, Workspace
from harness_testkit.spec import (
    BuiltinTool,
    HarnessCapabilityUnsupportedError,
    JSONValue,
    StartOptions,
    ToolApprovalRequestPart,
    ToolCallPart,
    ToolResultPart,
)

from ._machinery import (
    Defect,
    MutantAdapter,
    MutantControl,
    MutantSession,
    replace_common_tools,
    runtime_options,
)

__all__ = ["DEFECTS"]


def _tracked(session: MutantSession, part: Any) -> None:
    """Remember the calls and the approval ids the runtime asked for (session-wide)."""
    calls: dict[str, ToolCallPart] = session.memo.setdefault("calls", {})
    asked: dict[str, str] = session.memo.setdefault("asked", {})  # approval id -> call id
    if isinstance(part, ToolCallPart):
        calls[part.tool_call_id] = part
    elif isinstance(part, ToolApprovalRequestPart):
        asked[part.approval_id] = part.tool_call_id


def _track(session: MutantSession, part: Any) -> list[Any]:
    _tracked(session, part)
    return [part]


def _edits_unasked_under_allow_reads(session: MutantSession) -> None:
    if session.start_options.permission_mode == "allow-reads":
        runtime_options(session, permission_mode="allow-edits")


class _IgnoresDenialControl(MutantControl):
    async def _submit_tool_approval(
        self, approval_id: str, approved: bool, reason: str | None = None
    ) -> None:
        await super()._submit_tool_approval(approval_id, True, None)


class _ApprovedCallsControl(MutantControl):
    async def _submit_tool_approval(
        self, approval_id: str, approved: bool, reason: str | None = None
    ) -> None:
        asked = self.session.memo.get("asked", {})
        if approved and approval_id in asked:
            self.session.memo.setdefault("approved", []).append(asked[approval_id])
        await super()._submit_tool_approval(approval_id, approved, reason)


class _RepeatingWorkspace(Workspace):
    """Runs an approved call's command a second time (and logs it, as the runtime did)."""

    def __init__(self, base: Workspace, session: MutantSession) -> None:
        super().__init__(base.sandbox, base.work_dir)
        self._session = session

    async def execute(
        self, tool: str, tool_input: dict[str, JSONValue], abort: anyio.Event | None
    ) -> Any:
        outcome = await super().execute(tool, tool_input, abort)
        session = self._session
        approved: list[str] = session.memo.setdefault("approved", [])
        calls: dict[str, ToolCallPart] = session.memo.setdefault("calls", {})
        for call_id in list(approved):
            call = calls.get(call_id)
            if call is None or call.tool_name != tool or json.loads(call.input) != tool_input:
                continue
            approved.remove(call_id)
            again = await super().execute(tool, tool_input, abort)
            turn = session.inner.turn
            session.adapter.observations.record(
                ToolExecuted(
                    session_id=session.session_id,
                    turn=turn.record.index if turn is not None else 0,
                    tool_call_id=call_id,
                    tool_name=tool,
                    surface="builtin",
                    input=tool_input,
                    executed=True,
                    result=again.get("result"),
                    is_error=bool(again.get("isError")),
                )
            )
        return outcome


def _repeat_approved(session: MutantSession) -> None:
    session.inner.workspace = _RepeatingWorkspace(session.inner.workspace, session)


def _drops_approved_results(session: MutantSession, part: Any) -> list[Any]:
    _tracked(session, part)
    asked: dict[str, str] = session.memo["asked"]
    if isinstance(part, ToolResultPart) and part.tool_call_id in asked.values():
        return []
    return [part]


class _LosesApprovalsControl(MutantControl):
    async def _submit_tool_approval(
        self, approval_id: str, approved: bool, reason: str | None = None
    ) -> None:
        if self.session.start_options.continue_from is None:
            await super()._submit_tool_approval(approval_id, approved, reason)


class _NoApprovalMethodControl(MutantControl):
    offers_approval = False


def _asks_under_allow_all(session: MutantSession) -> None:
    if session.start_options.permission_mode == "allow-all":
        runtime_options(session, permission_mode="allow-reads")


def _no_approval_under_allow_edits(session: MutantSession) -> None:
    if session.start_options.permission_mode == "allow-edits":
        runtime_options(session, permission_mode="allow-all")


class _ModesRefused(MutantAdapter):
    def start_options(self, options: StartOptions) -> StartOptions:
        if options.permission_mode != "allow-all":
            raise HarnessCapabilityUnsupportedError(
                f"Harness '{self.harness_id}' only runs with permissionMode 'allow-all'.",
                harness_id=self.harness_id,
            )
        return options


class _ApprovalsUndeclared(MutantAdapter):
    """Declares no built-in approvals (so the agent only ever asks for allow-all)."""

    @property
    def supports_builtin_tool_approvals(self) -> bool:
        """Claimed False, although the runtime asks."""
        return False


def _runtime_asks_before_shell(session: MutantSession) -> None:
    # The runtime keeps its own default policy (ask before edits and shell commands)
    # instead of the allow-all it was started with.
    runtime_options(session, permission_mode="allow-reads")


def _unclassified(adapter: MutantAdapter) -> Mapping[str, BuiltinTool]:
    return replace_common_tools(adapter.fake.builtin_tools, lambda tool: {"tool_use_kind": None})


_AREA = "approvals"

DEFECTS: tuple[Defect, ...] = (
    Defect(
        "edits-unasked-under-allow-reads",
        "APPROVAL-004",
        _AREA,
        "Under allow-reads the runtime runs edit-kind built-ins without asking.",
        profile="claude-code",
        on_start=_edits_unasked_under_allow_reads,
    ),
    Defect(
        "runs-after-denial",
        "APPROVAL-035",
        _AREA,
        "A denial reaches the runtime as an approval.",
        profile="claude-code",
        control=_IgnoresDenialControl,
    ),
    Defect(
        "runs-twice-after-approval",
        "APPROVAL-034",
        _AREA,
        "An approved built-in is executed twice.",
        profile="claude-code",
        rewrite=_track,
        control=_ApprovedCallsControl,
        on_start=_repeat_approved,
    ),
    Defect(
        "approved-result-missing",
        "APPROVAL-034",
        _AREA,
        "The tool-result of an approved built-in is never emitted.",
        profile="claude-code",
        rewrite=_drops_approved_results,
    ),
    Defect(
        "approval-lost-after-restore",
        "APPROVAL-034",
        _AREA,
        "In a session continued from a JSON state, approval decisions never reach the turn.",
        profile="claude-code",
        control=_LosesApprovalsControl,
        # The continued turn waits for decisions that never come: a short timeout ends it.
        claims={"turn_timeout": 1.0},
    ),
    Defect(
        "approvals-claimed-without-method",
        "ADAPTER-048",
        _AREA,
        "supports_builtin_tool_approvals is True but prompt controls lack submit_tool_approval.",
        profile="claude-code",
        control=_NoApprovalMethodControl,
    ),
    Defect(
        "relays-unanswerable-approvals",
        "ADAPTER-046",
        _AREA,
        "Declares no approvals, yet relays the runtime's approval requests with no "
        "submit_tool_approval to answer them.",
        profile="claude-code",
        adapter=_ApprovalsUndeclared,
        control=_NoApprovalMethodControl,
        on_start=_runtime_asks_before_shell,
        claims={"builtin_tool_approvals": False},
    ),
    Defect(
        "asks-under-allow-all",
        "APPROVAL-002",
        _AREA,
        "Under allow-all the runtime still asks before edits and shell commands.",
        profile="claude-code",
        on_start=_asks_under_allow_all,
    ),
    Defect(
        "shell-unasked-under-allow-edits",
        "APPROVAL-003",
        _AREA,
        "Under allow-edits the runtime runs shell commands without asking.",
        profile="claude-code",
        on_start=_no_approval_under_allow_edits,
    ),
    Defect(
        "permission-modes-refused",
        "APPROVAL-040",
        _AREA,
        "An approval-capable adapter refuses every permission mode but allow-all.",
        profile="claude-code",
        adapter=_ModesRefused,
    ),
    Defect(
        "builtins-without-tool-kind",
        "APPROVAL-005",
        _AREA,
        "Common built-ins declare no tool_use_kind although the runtime classifies them.",
        profile="claude-code",
        tools=_unclassified,
    ),
)
