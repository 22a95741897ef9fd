"""Step and turn results: what ``generate()`` returns and ``stream()`` aggregates."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

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
    LanguageModelUsage,
    Usage,
    WireModel,
    serialize_unknown,
)
from harness_testkit.spec import ProviderMetadata as Metadata

from ._fast import Trusted, consumer_usage, frozen_dataclass, trusted_usage

__all__ = [
    "ContentPart",
    "GenerateResult",
    "ReasoningContent",
    "StepContent",
    "StepResult",
    "TextContent",
    "add_usage",
    "normalize_usage",
    "response_messages",
    "step_result",
]


def normalize_usage(usage: Usage | None) -> LanguageModelUsage:
    """Harness usage -> consumer usage (``totalTokens`` = input + output)."""
    if usage is None:
        return LanguageModelUsage()
    inputs = usage.input_tokens
    outputs = usage.output_tokens
    return consumer_usage(
        inputs.total,
        inputs.no_cache,
        inputs.cache_read,
        inputs.cache_write,
        outputs.total,
        outputs.text,
        outputs.reasoning,
        usage.raw,
    )


def _add(left: int | None, right: int | None) -> int | None:
    if left is None and right is None:
        return None
    return (left or 0) + (right or 0)


def add_usage(left: LanguageModelUsage, right: LanguageModelUsage) -> LanguageModelUsage:
    """Sum two usages field by field (``None`` + ``None`` stays ``None``; no ``raw``)."""
    left_in, right_in = left.input_token_details, right.input_token_details
    left_out, right_out = left.output_token_details, right.output_token_details
    usage = trusted_usage(
        _add(left.input_tokens, right.input_tokens),
        _add(left_in.no_cache_tokens, right_in.no_cache_tokens),
        _add(left_in.cache_read_tokens, right_in.cache_read_tokens),
        _add(left_in.cache_write_tokens, right_in.cache_write_tokens),
        _add(left.output_tokens, right.output_tokens),
        _add(left_out.text_tokens, right_out.text_tokens),
        _add(left_out.reasoning_tokens, right_out.reasoning_tokens),
        _add(left.total_tokens, right.total_tokens),
        None,
        summed=True,
    )
    return usage


class TextContent(WireModel):
    """A step's coalesced text: consecutive text deltas, whatever their ids (notes 9.2)."""

    type: Literal["text"] = "text"
    text: str


class ReasoningContent(WireModel):
    """A step's coalesced reasoning: consecutive reasoning deltas (notes 9.2)."""

    type: Literal["reasoning"] = "reasoning"
    text: str


#: A coalesced run's ``type``, and the fields it is built with (one set shared by all).
_RUN_TYPES: dict[type[WireModel], str] = {TextContent: "text", ReasoningContent: "reasoning"}
_NEW_RUN: dict[type[WireModel], Trusted[Any]] = {
    TextContent: Trusted(TextContent, "text"),
    ReasoningContent: Trusted(ReasoningContent, "text"),
}


#: A step content part: coalesced text/reasoning, or a tool-call, approval, tool-result
#: or tool-error consumer part as streamed.
ContentPart: TypeAlias = TextContent | ReasoningContent | ConsumerPart


class StepContent:
    """A step's content as it streams, coalescing text and reasoning deltas.

    Like the official agent, consecutive deltas of the same kind become one part; ids and
    metadata of the deltas are not kept. The texts of a run are collected and joined once
    when the run ends (linear in its length, however many deltas it has).
    """

    __slots__ = ("_kind", "_parts", "_texts")

    def __init__(self) -> None:
        self._parts: list[ContentPart] = []
        self._kind: type[TextContent] | type[ReasoningContent] | None = None
        self._texts: list[str] = []

    def add(self, part: ConsumerPart) -> None:
        """Add a streamed consumer part."""
        if isinstance(part, ConsumerTextDeltaPart):
            kind: type[TextContent] | type[ReasoningContent] = TextContent
        elif isinstance(part, ConsumerReasoningDeltaPart):
            kind = ReasoningContent
        else:
            if self._kind is not None:  # tested here: most parts end no run
                self._end_run()
            self._parts.append(part)
            return
        if kind is not self._kind:
            self._end_run()
            self._kind = kind
        self._texts.append(part.text)

    def parts(self) -> tuple[ContentPart, ...]:
        """The content so far (a run of deltas is one part)."""
        if self._kind is not None:
            self._end_run()
        return tuple(self._parts)

    def _end_run(self) -> None:
        if self._kind is not None:
            values = {"type": _RUN_TYPES[self._kind], "text": "".join(self._texts)}
            self._parts.append(_NEW_RUN[self._kind].ordered(values))
            self._kind = None
            self._texts = []


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
    content: tuple[ContentPart, ...]
    finish_reason: str
    raw_finish_reason: str | None
    usage: LanguageModelUsage
    provider_metadata: Metadata | None
    tools_context: Any
    response: ConsumerFinishStepPart | None = None

    @property
    def text(self) -> str:
        """The step's text (all text deltas, coalesced)."""
        return "".join(p.text for p in self.content if isinstance(p, TextContent))

    @property
    def reasoning_text(self) -> str | None:
        """The step's reasoning text, ``None`` when there was none (or only empty text, as
        the AI SDK's ``reasoningText``)."""
        return "".join(p.text for p in self.content if isinstance(p, ReasoningContent)) or None

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


def step_result(
    step_number: int,
    call_id: str,
    provider: str,
    model_id: str,
    content: tuple[ContentPart, ...],
    finish_reason: str,
    raw_finish_reason: str | None,
    usage: LanguageModelUsage,
    provider_metadata: Metadata | None,
    tools_context: Any,
    response: ConsumerFinishStepPart | None,
) -> StepResult:
    """The step with every field given, in declaration order (one step per model step)."""
    return frozen_dataclass(
        StepResult,
        step_number=step_number,
        call_id=call_id,
        provider=provider,
        model_id=model_id,
        content=content,
        finish_reason=finish_reason,
        raw_finish_reason=raw_finish_reason,
        usage=usage,
        provider_metadata=provider_metadata,
        tools_context=tools_context,
        response=response,
    )


def _with_options(entry: dict[str, Any], metadata: Metadata | None) -> dict[str, Any]:
    if metadata is not None:
        entry["providerOptions"] = metadata
    return entry


def _error_message(error: Any) -> str:
    # The AI SDK's getErrorMessage: strings as they are, errors by message, else JSON.
    if error is None:
        return "unknown error"
    if isinstance(error, str):
        return error
    if isinstance(error, BaseException):
        return str(error)
    return json.dumps(serialize_unknown(error), separators=(",", ":"))


def _model_output(value: Any, mode: str) -> dict[str, Any]:
    if mode == "text":
        return {"type": "error-text", "value": _error_message(value)}
    if mode == "json":
        return {"type": "error-json", "value": serialize_unknown(value)}
    if isinstance(value, str):
        return {"type": "text", "value": value}
    return {"type": "json", "value": serialize_unknown(value)}


def _result_entry(
    part: ConsumerToolResultPart | ConsumerToolErrorPart, *, error_mode: str
) -> dict[str, Any]:
    # A tool outcome as a model-message tool-result (createToolModelOutput): errors as
    # error-json in the assistant message, error-text in the tool message.
    if isinstance(part, ConsumerToolErrorPart):
        output = _model_output(part.error, error_mode)
    else:
        output = _model_output(part.output, "none")
    entry = {
        "type": "tool-result",
        "toolCallId": part.tool_call_id,
        "toolName": part.tool_name,
        "output": output,
    }
    return _with_options(entry, part.provider_metadata)


def _preliminary(part: ConsumerToolResultPart | ConsumerToolErrorPart) -> bool:
    # HOSTTOOL-009 (decision): only a call's final result counts, unlike toResponseMessages.
    return isinstance(part, ConsumerToolResultPart) and part.preliminary is True


def response_messages(steps: Sequence[StepResult]) -> list[dict[str, Any]]:
    """AI SDK response messages of a slice: ``toResponseMessages`` over all steps' content.

    One assistant message (text, reasoning, tool calls, approval requests and
    provider-executed outcomes, in content order) and one ``tool`` message (approval
    responses, an ``execution-denied`` result per denial, and host-side outcomes sorted by
    the order of their calls), each only when it has content.
    """
    content = [part for step in steps for part in step.content]
    order: dict[str, int] = {}
    assistant: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, TextContent | ReasoningContent):
            if part.text or isinstance(part, ReasoningContent):
                assistant.append({"type": part.type, "text": part.text})
        elif isinstance(part, ConsumerToolCallPart):
            order.setdefault(part.tool_call_id, len(order))
            call_input = part.input
            if part.invalid and not isinstance(call_input, dict | list):
                call_input = {}
            call: dict[str, Any] = {
                "type": "tool-call",
                "toolCallId": part.tool_call_id,
                "toolName": part.tool_name,
                "input": serialize_unknown(call_input),
            }
            if part.provider_executed is not None:
                call["providerExecuted"] = part.provider_executed
            assistant.append(_with_options(call, part.provider_metadata))
        elif isinstance(part, ConsumerToolResultPart | ConsumerToolErrorPart):
            if part.provider_executed and not _preliminary(part):
                assistant.append(_result_entry(part, error_mode="json"))
        elif isinstance(part, ConsumerToolApprovalRequestPart):
            request: dict[str, Any] = {
                "type": "tool-approval-request",
                "approvalId": part.approval_id,
                "toolCallId": part.tool_call.tool_call_id,
            }
            if part.is_automatic is not None:
                request["isAutomatic"] = part.is_automatic
            assistant.append(request)
    tool: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, ConsumerToolApprovalResponsePart):
            response: dict[str, Any] = {
                "type": "tool-approval-response",
                "approvalId": part.approval_id,
                "approved": part.approved,
            }
            if part.reason is not None:
                response["reason"] = part.reason
            if part.provider_executed is not None:
                response["providerExecuted"] = part.provider_executed
            tool.append(response)
            if not part.approved:
                denied: dict[str, Any] = {"type": "execution-denied"}
                if part.reason is not None:
                    denied["reason"] = part.reason
                tool.append(
                    {
                        "type": "tool-result",
                        "toolCallId": part.tool_call.tool_call_id,
                        "toolName": part.tool_call.tool_name,
                        "output": denied,
                    }
                )
        elif (
            isinstance(part, ConsumerToolResultPart | ConsumerToolErrorPart)
            and not part.provider_executed
            and not _preliminary(part)
        ):
            tool.append(_result_entry(part, error_mode="text"))
    messages: list[dict[str, Any]] = []
    if assistant:
        messages.append({"role": "assistant", "content": assistant})
    if tool:
        messages.append({"role": "tool", "content": _sorted_results(tool, order)})
    return messages


def _sorted_results(
    content: list[dict[str, Any]], order: Mapping[str, int]
) -> list[dict[str, Any]]:
    # Tool results follow the order of their calls (unknown calls last, stable); approval
    # responses keep their places.
    results = [part for part in content if part["type"] == "tool-result"]
    ranked = sorted(
        enumerate(results),
        key=lambda item: (
            order.get(item[1]["toolCallId"]) is None,
            order.get(item[1]["toolCallId"], 0),
            item[0],
        ),
    )
    queue = iter(part for _, part in ranked)
    return [next(queue) if part["type"] == "tool-result" else part for part in content]


@dataclass(frozen=True)
class GenerateResult:
    """What ``generate()`` / ``continue_generate()`` return.

    Attributes:
        text: The final step's text (``''`` when the slice had no step).
        reasoning_text: The final step's reasoning text.
        steps: The slice's steps.
        usage: The turn's usage (the harness ``finish`` total when present, else the sum).
        total_usage: Same as ``usage``.
        finish_reason: The final step's reason (the ``finish`` part's without steps).
        raw_finish_reason: The final step's raw reason, when known.
        provider_metadata: The final step's metadata.
        response_messages: Assistant and tool messages derived from the steps.
        output: Parsed structured output when the agent was configured with ``output``.
        empty_response: The response of a step-less slice's synthetic final step
            (``{id: <callId>-0, timestamp, modelId, messages: []}``, RESULT-016).
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
    empty_response: dict[str, Any] | None = None

    @property
    def reasoning(self) -> list[dict[str, Any]]:
        """The final step's reasoning as AI SDK reasoning parts (``{"type", "text"}``)."""
        if not self.steps:
            return []
        return [
            {"type": "reasoning", "text": part.text}
            for part in self.steps[-1].content
            if isinstance(part, ReasoningContent)
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
    def warnings(self) -> list[Any]:
        """Call warnings of every step: always empty (upstream drops runtime warnings)."""
        return []

    @property
    def request(self) -> dict[str, Any]:
        """The final step's request metadata: ``{}`` (the runtime owns the request)."""
        return {}

    @property
    def response(self) -> dict[str, Any]:
        """The final step's response ``{id, timestamp, modelId, messages: []}``."""
        if self.steps and self.steps[-1].response is not None:
            return self.steps[-1].response.response.to_wire()
        return dict(self.empty_response or {})

    @property
    def content(self) -> list[ContentPart]:
        """Content parts across all steps."""
        return [part for step in self.steps for part in step.content]
