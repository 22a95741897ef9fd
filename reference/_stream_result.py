"""``StreamResult``: the consumer side of one turn slice."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import jsonschema

from harness_testkit.spec import (
    ConsumerFinishPart,
    ConsumerPart,
    ConsumerStartPart,
    ConsumerTextDeltaPart,
    ConsumerToolCallPart,
    ConsumerToolResultPart,
    HarnessError,
    HarnessUsageError,
    JsonResponseFormat,
    LanguageModelUsage,
    TextResponseFormat,
)

from ._handoff import Handoff, HandoffSink
from ._results import (
    ContentPart,
    GenerateResult,
    StepResult,
    add_usage,
    response_messages,
)
from ._tool import validate_json_schema
from ._turn_state import SliceOutcome

__all__ = ["StreamResult"]

SliceRun = Callable[[Callable[[ConsumerPart], Awaitable[None]]], Awaitable[SliceOutcome]]


class StreamResult:
    """The result of ``agent.stream()`` / ``agent.continue_stream()``.

    Iterate :attr:`full_stream` to receive consumer parts as the runtime emits them; the
    first is always ``start`` and the last is exactly one of ``finish``, ``error`` or
    ``abort``. The aggregates (``await result.text`` ...) consume the stream when nobody
    else does. Breaking out of ``full_stream`` early aborts the turn; use
    ``async with result:`` (or ``await result.aclose()``) to make that deterministic.
    """

    def __init__(self, run: SliceRun, *, structured: bool = False) -> None:
        self._run = run
        self._parts: list[ConsumerPart] = []
        self._outcome: SliceOutcome | None = None
        self._started = False
        self._finished = anyio.Event()
        self._progress = anyio.Event()
        self._replay_waiters = 0
        self._generator: AsyncIterator[ConsumerPart] | None = None
        self._structured = structured
        #: The agent's ``output`` format (``None``: no output, and ``output`` raises).
        self.output_format: TextResponseFormat | JsonResponseFormat | None = (
            JsonResponseFormat() if structured else None
        )

    # -- streaming ---------------------------------------------------------------------

    @property
    def full_stream(self) -> AsyncIterator[ConsumerPart]:
        """Consumer parts. Each access yields the whole sequence from the start."""
        if not self._started:
            self._started = True
            self._generator = self._drive()
            return self._generator
        return self._replay()

    @property
    def text_stream(self) -> AsyncIterator[str]:
        """The text deltas' text."""

        async def texts() -> AsyncIterator[str]:
            async for part in self.full_stream:
                if isinstance(part, ConsumerTextDeltaPart):
                    yield part.text

        return texts()

    async def _drive(self) -> AsyncIterator[ConsumerPart]:
        parts: Handoff[ConsumerPart] = Handoff()

        async def run() -> None:
            try:
                self._outcome = await self._run(HandoffSink(parts))
            finally:
                parts.close()

        self._record(ConsumerStartPart())
        yield self._parts[0]
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            try:
                while True:
                    try:
                        part = await parts.get()
                    except anyio.EndOfStream:
                        break
                    self._record(part)
                    yield part
            except GeneratorExit:
                # The consumer stopped early (aclose): abort the slice and let the task
                # group unwind here, in the consumer's own task.
                group.cancel_scope.cancel()
        self._finished.set()
        self._bump()

    def _record(self, part: ConsumerPart) -> None:
        self._parts.append(part)
        self._bump()

    def _bump(self) -> None:
        # Only replay readers wait for progress: no event per part when nobody waits.
        if self._replay_waiters:
            progress, self._progress = self._progress, anyio.Event()
            progress.set()

    async def _replay(self) -> AsyncIterator[ConsumerPart]:
        index = 0
        while True:
            while index < len(self._parts):
                yield self._parts[index]
                index += 1
            if self._finished.is_set():
                return
            self._replay_waiters += 1
            try:
                await self._progress.wait()
            finally:
                self._replay_waiters -= 1

    async def consume(self) -> None:
        """Run the slice to its end without looking at the parts."""
        if not self._started:
            async for _ in self.full_stream:
                pass
        await self._finished.wait()

    async def aclose(self) -> None:
        """Stop iterating: aborts the turn if it is still running."""
        if self._generator is not None and hasattr(self._generator, "aclose"):
            await self._generator.aclose()

    async def __aenter__(self) -> StreamResult:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- aggregates --------------------------------------------------------------------

    async def outcome(self) -> SliceOutcome:
        """The slice's outcome (consumes the stream if needed)."""
        await self.consume()
        assert self._outcome is not None
        return self._outcome

    async def _settled(self) -> SliceOutcome:
        outcome = await self.outcome()
        if outcome.error is not None:
            raise outcome.error
        return outcome

    @property
    def parts(self) -> list[ConsumerPart]:
        """The consumer parts seen so far."""
        return list(self._parts)

    @property
    def steps(self) -> Awaitable[list[StepResult]]:
        """The slice's steps (raises the turn's error)."""

        async def get() -> list[StepResult]:
            return list((await self._settled()).steps)

        return get()

    @property
    def text(self) -> Awaitable[str]:
        """The final step's text, ``''`` without steps."""

        async def get() -> str:
            steps = (await self._settled()).steps
            return steps[-1].text if steps else ""

        return get()

    @property
    def usage(self) -> Awaitable[LanguageModelUsage]:
        """The harness ``finish`` total, else the sum of step usages."""

        async def get() -> LanguageModelUsage:
            return _usage(self._parts, await self._settled())

        return get()

    @property
    def finish_reason(self) -> Awaitable[str]:
        """The unified finish reason of the result."""

        async def get() -> str:
            await self._settled()
            return _finish_part(self._parts).finish_reason

        return get()

    @property
    def reasoning(self) -> Awaitable[list[dict[str, Any]]]:
        """Always ``[]`` on a stream result, as upstream (use ``generate()`` for reasoning)."""

        async def get() -> list[dict[str, Any]]:
            await self._settled()
            return []

        return get()

    @property
    def reasoning_text(self) -> Awaitable[str | None]:
        """Always ``None`` on a stream result, as upstream."""

        async def get() -> str | None:
            await self._settled()
            return None

        return get()

    @property
    def total_usage(self) -> Awaitable[LanguageModelUsage]:
        """Same as :attr:`usage` (the AI SDK's ``totalUsage``)."""
        return self.usage

    @property
    def raw_finish_reason(self) -> Awaitable[str | None]:
        """The runtime's own finish reason of the result."""

        async def get() -> str | None:
            await self._settled()
            return _finish_part(self._parts).raw_finish_reason

        return get()

    @property
    def provider_metadata(self) -> Awaitable[dict[str, Any] | None]:
        """The result's provider metadata (from the harness ``finish``)."""

        async def get() -> dict[str, Any] | None:
            await self._settled()
            return _finish_part(self._parts).provider_metadata

        return get()

    @property
    def content(self) -> Awaitable[list[ContentPart]]:
        """Content of every step (text and reasoning coalesced, notes 9.2)."""

        async def get() -> list[ContentPart]:
            steps = (await self._settled()).steps
            return [part for step in steps for part in step.content]

        return get()

    @property
    def tool_calls(self) -> Awaitable[list[ConsumerToolCallPart]]:
        """Tool calls of every step."""

        async def get() -> list[ConsumerToolCallPart]:
            steps = (await self._settled()).steps
            return [call for step in steps for call in step.tool_calls]

        return get()

    @property
    def tool_results(self) -> Awaitable[list[ConsumerToolResultPart]]:
        """Final tool results of every step."""

        async def get() -> list[ConsumerToolResultPart]:
            steps = (await self._settled()).steps
            return [result for step in steps for result in step.tool_results]

        return get()

    @property
    def warnings(self) -> Awaitable[list[Any] | None]:
        """Call warnings: ``None``, as upstream drops the runtime's warnings."""

        async def get() -> list[Any] | None:
            await self._settled()
            return None

        return get()

    @property
    def request(self) -> Awaitable[dict[str, Any]]:
        """The request metadata: always ``{}`` (the runtime owns the request)."""

        async def get() -> dict[str, Any]:
            await self._settled()
            return {}

        return get()

    @property
    def response(self) -> Awaitable[dict[str, Any]]:
        """The final step's response: ``{id, timestamp, modelId, messages: []}``."""

        async def get() -> dict[str, Any]:
            outcome = await self._settled()
            if outcome.steps and outcome.steps[-1].response is not None:
                return outcome.steps[-1].response.response.to_wire()
            return dict(outcome.empty_response or {})

        return get()

    @property
    def response_messages(self) -> Awaitable[list[dict[str, Any]]]:
        """Assistant and tool messages derived from the steps (``toResponseMessages``)."""

        async def get() -> list[dict[str, Any]]:
            return response_messages((await self._settled()).steps)

        return get()

    @property
    def output(self) -> Awaitable[Any]:
        """The parsed structured output; raises when the agent has no ``output`` (9.10)."""

        async def get() -> Any:
            steps = (await self._settled()).steps
            if self.output_format is None:
                raise HarnessUsageError(
                    "HarnessAgent: structured output is not implemented yet. "
                    "Track the foundation review for follow-up."
                )
            return parse_output(self.output_format, steps[-1].text if steps else "")

        return get()

    @property
    def partial_output_stream(self) -> AsyncIterator[Any]:
        """Not implemented (raises the specification's not-implemented error)."""
        raise HarnessUsageError(
            "HarnessAgent: partialOutputStream is not implemented yet. "
            "Track the foundation review for follow-up."
        )

    async def to_generate_result(self) -> GenerateResult:
        """Aggregate into the ``generate()`` result (raises the turn's error)."""
        outcome = await self._settled()
        finish = _finish_part(self._parts)
        steps = tuple(outcome.steps)
        text = steps[-1].text if steps else ""
        output: Any = None
        if self.output_format is not None:
            output = parse_output(self.output_format, text)
        return GenerateResult(
            text=text,
            reasoning_text=steps[-1].reasoning_text if steps else None,
            steps=steps,
            usage=finish.total_usage,
            total_usage=finish.total_usage,
            # generate() reads these from the final step, as upstream; a step-less
            # slice reports the finish part's reasons (RESULT-016).
            finish_reason=steps[-1].finish_reason if steps else finish.finish_reason,
            raw_finish_reason=steps[-1].raw_finish_reason if steps else finish.raw_finish_reason,
            provider_metadata=steps[-1].provider_metadata if steps else None,
            response_messages=response_messages(steps),
            output=output,
        )


class NoObjectGeneratedError(HarnessError):
    """The final step's text is not the structured output the agent asked for."""

    name = "AI_NoObjectGeneratedError"


def parse_output(output_format: TextResponseFormat | JsonResponseFormat, text: str) -> Any:
    """The AI SDK's ``parseCompleteOutput`` of the final step's text.

    Text output is the text itself; JSON output is the parsed text, validated against the
    schema when there is one.

    Raises:
        NoObjectGeneratedError: the text is not JSON, or does not match the schema.
    """
    if isinstance(output_format, TextResponseFormat):
        return text
    try:
        value = json.loads(text)
    except ValueError:
        raise NoObjectGeneratedError("No object generated: could not parse the response.") from None
    if output_format.schema_ is not None:
        try:
            validate_json_schema(value, output_format.schema_)
        except jsonschema.ValidationError:
            raise NoObjectGeneratedError(
                "No object generated: response did not match schema."
            ) from None
    return value


def _finish_part(parts: list[ConsumerPart]) -> ConsumerFinishPart:
    for part in reversed(parts):
        if isinstance(part, ConsumerFinishPart):
            return part
    raise RuntimeError("The result finished without a finish part.")


def _usage(parts: list[ConsumerPart], outcome: SliceOutcome) -> LanguageModelUsage:
    for part in reversed(parts):
        if isinstance(part, ConsumerFinishPart):
            return part.total_usage
    usage = LanguageModelUsage()
    for step in outcome.steps:
        usage = add_usage(usage, step.usage)
    return usage
