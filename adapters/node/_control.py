"""The prompt control of a Node adapter's turn: what the agent calls while the turn runs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from harness_testkit.scripting import ApprovalReceived, ToolResultReceived, UserMessageReceived
from harness_testkit.spec import JSONValue

if TYPE_CHECKING:
    from ._harness import NodeSession, Turn

__all__ = ["NodePromptControl", "prompt_control"]


class NodePromptControl:
    """The prompt control of a turn in the host (implements ``PromptControl``).

    ``submit_tool_approval`` and ``submit_user_message`` exist exactly when the adapter's
    own control has them (:func:`prompt_control` picks the class): in harness-v1 a missing
    method is how a runtime says it cannot take approvals or mid-turn messages.
    """

    def __init__(self, session: NodeSession, turn: Turn) -> None:
        self._session = session
        self._turn = turn

    async def submit_tool_result(
        self,
        tool_call_id: str,
        output: JSONValue,
        is_error: bool = False,
        tool_result: dict[str, Any] | None = None,
    ) -> None:
        """Send a host tool's result to the adapter (a JSON output: it crosses the wire).

        Raises:
            HarnessUsageError: ``output`` is not JSON; the message names the call.
        """
        self._session.record(
            ToolResultReceived.of_submission(
                self._session.session_id, tool_call_id, output, is_error, tool_result
            )
        )
        params: dict[str, Any] = {"toolCallId": tool_call_id, "output": output, "isError": is_error}
        if tool_result is not None:
            params["toolResult"] = tool_result
        await self._session.submit(self._turn, "submitToolResult", params)

    async def done(self) -> None:
        """Return when the adapter's ``done`` settles; raise the turn's error."""
        await self._session.wait_done(self._turn)


class _Approvals(NodePromptControl):
    async def submit_tool_approval(
        self, approval_id: str, approved: bool, reason: str | None = None
    ) -> None:
        """Send an approval decision to the adapter."""
        self._session.record(
            ApprovalReceived(
                session_id=self._session.session_id,
                approval_id=approval_id,
                approved=approved,
                reason=reason,
            )
        )
        if not approved:
            self._session.deny(approval_id)
        params: dict[str, Any] = {"approvalId": approval_id, "approved": approved}
        if reason is not None:
            params["reason"] = reason
        await self._session.submit(self._turn, "submitToolApproval", params)


class _Messages(NodePromptControl):
    async def submit_user_message(self, text: str) -> None:
        """Send a mid-turn user message to the adapter."""
        self._session.record(UserMessageReceived(session_id=self._session.session_id, text=text))
        await self._session.submit(self._turn, "submitUserMessage", {"text": text})


class _ApprovalsAndMessages(_Approvals, _Messages):
    pass


def prompt_control(
    session: NodeSession, turn: Turn, controls: Mapping[str, Any]
) -> NodePromptControl:
    """The control class with exactly the optional methods the adapter's control has."""
    approvals = bool(controls.get("submitToolApproval"))
    messages = bool(controls.get("submitUserMessage"))
    kind: type[NodePromptControl] = (
        _ApprovalsAndMessages
        if approvals and messages
        else _Approvals
        if approvals
        else _Messages
        if messages
        else NodePromptControl
    )
    return kind(session, turn)
