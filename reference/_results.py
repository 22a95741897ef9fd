"""Step and turn results: what ``generate()`` returns and ``stream()`` aggregates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness_testkit.spec import (
    ConsumerFinishStepPart,
    ConsumerPart,
    ConsumerReasoningDeltaPart,
    ConsumerTextDeltaPart,
    ConsumerToolApprovalRequestPart,
    ConsumerToolApprovalResponsePart,
    ConsumerToolCallPart,
    ConsumerToolErrorPart,
    ConsumerToolResultPart,
    InputTokenDetails,
    LanguageModelUsage,
    OutputTokenDetails,
    Usage,
)
from harness_testkit.spec._stream_parts import Metadata, serialize_unknown

__all__ = [
    "GenerateResult",
    "StepResult",
    "add_usage",
    "normalize_usage",
    "response_messages",
]


def normalize_usage(usage: Usage | None) -> LanguageModelUsage:
    """Harness usage -> consumer usage (``totalTokens`` = input + output)."""
    if usage is None:
        return LanguageModelUsage()
    input_total = usage.input_tokens.total
    output_total = usage.output_tokens.total
    total = (
        None
        if input_total is None and output_total is None
        else (input_total or 0) + (output_total or 0)
    )
    return LanguageModelUsage(
        input_tokens=input_total,
        input_token_details=InputTokenDetails(
            no_cache_tokens=usage.input_tokens.no_cache,
            cache_read_tokens=usage.input_tokens.cache_read,
            cache_write_tokens=usage.input_tokens.cache_write,
        ),
        output_tokens=output_total,
        output_token_details=OutputTokenDetails(
            text_tokens=usage.output_tokens.text,
            reasoning_tokens=usage.output_tokens.reasoning,
        ),
        total_tokens=total,
        raw=usage.raw,
    )


def _add(left: int | None, right: int | None) -> int | None:
    if left is None and right is None:
        return None
    return (left or 0) + (right or 0)


def add_usage(left: LanguageModelUsage, right: LanguageModelUsage) -> LanguageModelUsage:
    """Sum two usages field by field (``None`` + ``None`` stays ``None``)."""
    return LanguageModelUsage(
        input_tokens=_add(left.input_tokens, right.input_tokens),
        input_token_details=InputTokenDetails(
            no_cache_tokens=_add(
                left.input_token_details.no_cache_tokens, right.input_token_details.no_cache_tokens
            ),
            cache_read_tokens=_add(
                left.input_token_details.cache_read_tokens,
                right.input_token_details.cache_read_tokens,
            ),
            cache_write_tokens=_add(
                left.input_token_details.cache_write_tokens,
                right.input_token_details.cache_write_tokens,
            ),
        ),
        output_tokens=_add(left.output_tokens, right.output_tokens),
        output_token_details=OutputTokenDetails(
            text_tokens=_add(
                left.output_token_details.text_tokens, right.output_token_details.text_tokens
            ),
            reasoning_tokens=_add(
                left.output_token_details.reasoning_tokens,
                right.output_token_details.reasoning_tokens,
            ),
        ),
        total_tokens=_add(left.total_tokens, right.total_tokens),
    )


@dataclass(frozen=True)
class StepResult:
    """One model step of a turn slice.

    Attributes:
        step_number: 0, 1, ... within the slice.
        call_id: The slice's call id; the step's response id is ``<call_id>-<step_number>``.
        provider: ``harness:<harnessId>``.
        model_id: The turn's model (or the runtime-reported one), ``''`` when unknown.
        content: Text, reasoning, tool calls, approval parts, tool results and errors.
        finish_reason: Unified finish reason.
        raw_finish_reason: The runtime's own finish reason.
        usage: Normalized usage of the step.
        provider_metadata: The step's metadata.
        tools_context: The turn's tool context (host-only, never sent to the runtime).
        response: The step's ``finish-step`` response (id, timestamp, model id).
    """

    step_number: int
    call_id: str
    provider: str
    model_id: str
    content: tuple[ConsumerPart, ...]
    finish_reason: str
    raw_finish_reason: str | None
    usage: LanguageModelUsage
    provider_metadata: Metadata | None
    tools_context: Any
    response: ConsumerFinishStepPart | None = None

    @property
    def text(self) -> str:
        """The step's text (all text deltas, coalesced)."""
        return "".join(p.text for p in self.content if isinstance(p, ConsumerTextDeltaPart))

    @property
    def reasoning_text(self) -> str | None:
        """The step's reasoning text, ``None`` when there was none."""
        parts = [p.text for p in self.content if isinstance(p, ConsumerReasoningDeltaPart)]
        return "".join(parts) if parts else None

    @property
    def tool_calls(self) -> list[ConsumerToolCallPart]:
        """The step's tool calls."""
        return [p for p in self.content if isinstance(p, ConsumerToolCallPart)]

    @property
    def tool_results(self) -> list[ConsumerToolResultPart]:
        """The step's final tool results (preliminary results are content, not results)."""
        return [
            p
            for p in self.content
            if isinstance(p, ConsumerToolResultPart) and p.preliminary is not True
        ]


def step_content_parts(step: StepResult) -> list[dict[str, Any]]:
    """The step's content as AI SDK content parts (notes 9.2).

    Text and reasoning deltas become ``{type: 'text' | 'reasoning', text}`` parts (with
    ``providerMetadata`` when the delta had any); every other part keeps its wire form.
    """
    out: list[dict[str, Any]] = []
    for part in step.content:
        if isinstance(part, ConsumerTextDeltaPart | ConsumerReasoningDeltaPart):
            kind = "text" if isinstance(part, ConsumerTextDeltaPart) else "reasoning"
            entry: dict[str, Any] = {"type": kind, "text": part.text}
            if part.provider_metadata is not None:
                entry["providerMetadata"] = part.provider_metadata
            out.append(entry)
        else:
            out.append(part.to_wire())
    return out


def response_messages(steps: Sequence[StepResult]) -> list[dict[str, Any]]:
    """AI SDK response messages derived from the steps' content.

    Each step yields one assistant message (text, reasoning, tool calls, approval
    requests, provider-executed results) and, when the step has host-side outcomes or
    approval responses, one ``tool`` message.
    """
    messages: list[dict[str, Any]] = []
    for step in steps:
        assistant: list[dict[str, Any]] = []
        tool: list[dict[str, Any]] = []
        text = step.text
        reasoning = step.reasoning_text
        if reasoning:
            assistant.append({"type": "reasoning", "text": reasoning})
        if text:
            assistant.append({"type": "text", "text": text})
        for part in step.content:
            if isinstance(part, ConsumerToolCallPart):
                call: dict[str, Any] = {
                    "type": "tool-call",
                    "toolCallId": part.tool_call_id,
                    "toolName": part.tool_name,
                    "input": serialize_unknown(part.input),
                }
                if part.provider_executed is not None:
                    call["providerExecuted"] = part.provider_executed
                assistant.append(call)
            elif isinstance(part, ConsumerToolApprovalRequestPart):
                assistant.append(
                    {
                        "type": "tool-approval-request",
                        "approvalId": part.approval_id,
                        "toolCallId": part.tool_call.tool_call_id,
                    }
                )
            elif isinstance(part, ConsumerToolApprovalResponsePart):
                response: dict[str, Any] = {
                    "type": "tool-approval-response",
                    "approvalId": part.approval_id,
                    "approved": part.approved,
                }
                if part.reason is not None:
                    response["reason"] = part.reason
                tool.append(response)
            elif isinstance(part, ConsumerToolResultPart | ConsumerToolErrorPart):
                if part.preliminary if isinstance(part, ConsumerToolResultPart) else False:
                    continue
                is_error = isinstance(part, ConsumerToolErrorPart)
                value = serialize_unknown(part.error if is_error else part.output)  # type: ignore[union-attr]
                result = {
                    "type": "tool-result",
                    "toolCallId": part.tool_call_id,
                    "toolName": part.tool_name,
                    "output": {"type": "error-json" if is_error else "json", "value": value},
                }
                if part.provider_executed:
                    assistant.append(result)
                else:
                    tool.append(result)
        if assistant:
            messages.append({"role": "assistant", "content": assistant})
        if tool:
            messages.append({"role": "tool", "content": tool})
    return messages


@dataclass(frozen=True)
class GenerateResult:
    """What ``generate()`` / ``continue_generate()`` return.

    Attributes:
        text: The final step's text (``''`` when the slice had no step).
        reasoning_text: The final step's reasoning text.
        steps: The slice's steps.
        usage: The turn's usage (the harness ``finish`` total when present, else the sum).
        total_usage: Same as ``usage``.
        finish_reason: ``finish`` reason, else the last step's, else ``'other'``.
        raw_finish_reason: The runtime's own reason, when known.
        provider_metadata: The ``finish`` (or last step's) metadata.
        response_messages: Assistant and tool messages derived from the steps.
        output: Parsed structured output when the agent was configured with ``output``.
    """

    text: str
    reasoning_text: str | None
    steps: tuple[StepResult, ...]
    usage: LanguageModelUsage
    total_usage: LanguageModelUsage
    finish_reason: str
    raw_finish_reason: str | None
    provider_metadata: Metadata | None
    response_messages: list[dict[str, Any]] = field(default_factory=list)
    output: Any = None

    @property
    def reasoning(self) -> list[dict[str, Any]]:
        """The final step's reasoning as AI SDK reasoning parts (``{"type", "text"}``)."""
        if not self.steps:
            return []
        return [
            {"type": "reasoning", "text": part.text}
            for part in self.steps[-1].content
            if isinstance(part, ConsumerReasoningDeltaPart)
        ]

    @property
    def tool_calls(self) -> list[ConsumerToolCallPart]:
        """Tool calls across all steps."""
        return [call for step in self.steps for call in step.tool_calls]

    @property
    def tool_results(self) -> list[ConsumerToolResultPart]:
        """Tool results across all steps."""
        return [result for step in self.steps for result in step.tool_results]

    @property
    def content(self) -> list[ConsumerPart]:
        """Content parts across all steps."""
        return [part for step in self.steps for part in step.content]
