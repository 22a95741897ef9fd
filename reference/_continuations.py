"""Turning caller input into continuations: approval responses and client tool results."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness_testkit.spec import HarnessError, HarnessUsageError

from ._turn_state import ApprovalContinuation, ResultContinuation

__all__ = [
    "extract_message_continuations",
    "normalize_approval_continuations",
    "normalize_result_continuations",
]


def _get(obj: Any, *names: str) -> Any:
    for name in names:
        if isinstance(obj, Mapping) and name in obj:
            return obj[name]
        if not isinstance(obj, Mapping) and hasattr(obj, name):
            return getattr(obj, name)
    return None


def normalize_approval_continuations(items: Iterable[Any] | None) -> list[ApprovalContinuation]:
    """Accept ``ApprovalContinuation`` objects or AI SDK ``tool-approval-response`` dicts."""
    out: list[ApprovalContinuation] = []
    for item in items or ():
        if isinstance(item, ApprovalContinuation):
            out.append(item)
            continue
        approval_id = _get(item, "approvalId", "approval_id")
        approved = _get(item, "approved")
        if not isinstance(approval_id, str) or not isinstance(approved, bool):
            raise HarnessUsageError(
                "A tool approval continuation needs `approvalId` (string) and `approved` "
                f"(boolean); got {item!r}."
            )
        reason = _get(item, "reason")
        provider_executed = _get(item, "providerExecuted", "provider_executed")
        out.append(
            ApprovalContinuation(
                approval_id=approval_id,
                approved=approved,
                reason=reason if isinstance(reason, str) else None,
                provider_executed=provider_executed
                if isinstance(provider_executed, bool)
                else None,
            )
        )
    return out


_WRAPPED_OUTPUT_TYPES = ("text", "json", "error-text", "error-json", "execution-denied", "content")


def _unwrap_output(output: Any) -> tuple[bool, Any, bool]:
    """AI SDK tool-result output -> ``(has_output, value, is_error)`` (spec 6.2.5)."""
    if not isinstance(output, Mapping):
        return False, None, False
    kind = output.get("type")
    if kind in ("text", "json"):
        return True, output.get("value"), False
    if kind in ("error-text", "error-json"):
        return True, output.get("value"), True
    if kind == "execution-denied":
        denied: dict[str, Any] = {"type": "execution-denied"}
        if output.get("reason") is not None:
            denied["reason"] = output["reason"]
        return True, denied, False
    if kind == "content":
        return True, dict(output), False
    return False, None, False


def normalize_result_continuations(items: Iterable[Any] | None) -> list[ResultContinuation]:
    """Accept both tool result continuation forms (project decision 2).

    - The AI SDK tool-result part ``{"type": "tool-result", "toolCallId", "toolName",
      "output": {"type": "json" | "text" | "error-json" | ..., "value": ...}}``: the output
      is unwrapped as upstream does and the part travels to the adapter as ``tool_result``.
    - The raw form ``{"toolCallId", "output", "isError"?}`` (also snake_case): the output
      is submitted as it is, with ``is_error``.
    """
    out: list[ResultContinuation] = []
    for item in items or ():
        if isinstance(item, ResultContinuation):
            out.append(item)
            continue
        call_id = _get(item, "toolCallId", "tool_call_id")
        if not isinstance(call_id, str):
            raise HarnessUsageError(
                f"A tool result continuation needs `toolCallId` (string); got {item!r}."
            )
        output = _get(item, "output")
        kind = _get(item, "type")
        if kind is not None and kind != "tool-result":
            raise HarnessUsageError(
                f"Tool result continuation for '{call_id}' has type {kind!r}; use the raw form "
                "(no `type`) or an AI SDK tool-result part (`type: 'tool-result'`)."
            )
        if kind == "tool-result":
            if not isinstance(output, Mapping) or output.get("type") not in _WRAPPED_OUTPUT_TYPES:
                raise HarnessUsageError(
                    f"Tool result continuation for '{call_id}' has an output of unknown type; "
                    f"expected `output.type` to be one of {', '.join(_WRAPPED_OUTPUT_TYPES)}."
                )
            has_output, value, is_error = _unwrap_output(output)
            part = dict(item) if isinstance(item, Mapping) else {"type": "tool-result"}
            part.setdefault("toolCallId", call_id)
            out.append(
                ResultContinuation(
                    tool_call_id=call_id,
                    output=value,
                    has_output=has_output,
                    is_error=is_error,
                    tool_result=part,
                )
            )
        else:
            is_error = _get(item, "isError", "is_error")
            out.append(
                ResultContinuation(tool_call_id=call_id, output=output, is_error=bool(is_error))
            )
    return out


def extract_message_continuations(
    messages: Sequence[Any],
) -> tuple[list[ApprovalContinuation], list[ResultContinuation]] | None:
    """Continuations carried by a trailing ``role: "tool"`` message (spec 5.4.1-5.4.2).

    Returns:
        ``None`` when the last message is not a tool message with approval responses or
        tool results; else the approval and result continuations.

    Raises:
        HarnessError: for an approval response without a prior request, or a request that
            references an unknown tool call.
    """
    if not messages:
        return None
    last = messages[-1]
    if _get(last, "role") != "tool":
        return None
    content = _get(last, "content")
    if not isinstance(content, Sequence) or isinstance(content, str):
        return None
    responses = [p for p in content if _get(p, "type") == "tool-approval-response"]
    results = [p for p in content if _get(p, "type") == "tool-result"]
    if not responses and not results:
        return None
    call_ids: set[str] = set()
    requests: dict[str, str] = {}
    for message in messages[:-1]:
        if _get(message, "role") != "assistant":
            continue
        parts = _get(message, "content")
        if not isinstance(parts, Sequence) or isinstance(parts, str):
            continue
        for part in parts:
            kind = _get(part, "type")
            if kind == "tool-call":
                call_ids.add(str(_get(part, "toolCallId", "tool_call_id")))
            elif kind == "tool-approval-request":
                requests[str(_get(part, "approvalId", "approval_id"))] = str(
                    _get(part, "toolCallId", "tool_call_id")
                )
    answered = {str(_get(p, "toolCallId", "tool_call_id")) for p in results}
    approvals: list[Any] = []
    for response in responses:
        approval_id = str(_get(response, "approvalId", "approval_id"))
        if approval_id not in requests:
            raise HarnessError(
                f"Tool approval response '{approval_id}' does not match a prior tool approval request."
            )
        tool_call_id = requests[approval_id]
        if tool_call_id in answered:
            continue
        if tool_call_id not in call_ids:
            raise HarnessError(
                f"Tool approval request '{approval_id}' references unknown tool call '{tool_call_id}'."
            )
        approvals.append(response)
    return normalize_approval_continuations(approvals), normalize_result_continuations(results)
