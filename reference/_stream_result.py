"""``StreamResult``: the consumer side of one turn slice."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import jsonschema

from harness_testkit.spec import (
    ConsumerErrorPart,
    ConsumerFinishPart,
    ConsumerPart,
    ConsumerStartPart,
    ConsumerTextDeltaPart,
    ConsumerToolCallPart,
    ConsumerToolResultPart,
    HarnessError,
    HarnessTurnError,
    HarnessUsageError,
    JsonResponseFormat,
    LanguageModelUsage,
    TextResponseFormat,
)

from ._detached import spawn_detached
from ._fast import Trusted
from ._handoff import HandoffSink, Signal
from ._output_chunks import NO_PARTIAL, OutputChunker
from ._results import (
    ContentPart,
    GenerateResult,
    StepResult,
    add_usage,
    response_messages,
)
from ._tool import validate_json_schema
from ._turn_state import SliceOutcome

__all__ = [
    "MAX_RETAINED_PARTS",
    "NoObjectGeneratedError",
    "PartLimitExceededError",
    "StreamResult",
    "parse_output",
]

SliceRun = Callable[[Callable[[ConsumerPart], Awaitable[None]]], Awaitable[SliceOutcome]]


#: Default bound of the parts one result retains for its readers (see StreamResult).
MAX_RETAINED_PARTS = 1_000_000


class PartLimitExceededError(HarnessError):
    """A slice produced more consumer parts than its result retains (the turn fails)."""


class StreamResult:
    """The result of ``agent.stream()`` / ``agent.continue_stream()``.

    The slice is *eager*: it runs from the moment ``stream()``/``continue_stream()``
    returns, whether or not anyone reads (host tools run, continuations are submitted,
    approvals are recorded), as the official agent's. :attr:`full_stream` tees: every
    access is a new reader that starts at the first part, so several readers and late
    readers all see the whole sequence; the first part is always ``start`` and the last is
    exactly one of ``finish``, ``error`` or ``abort``. The aggregates (``await
    result.text`` ...) wait for the slice to end.

    Memory policy: the result retains every consumer part of its slice (that is what lets
    a late reader start from the first part) until the result itself is released; the
    adapter's queue holds only parts not yet translated. A slice is bounded by its turn
    (it ends at ``finish``, a host-input pause, a stop condition or a failure), and the
    retained parts are capped at ``max_parts`` (default :data:`MAX_RETAINED_PARTS`): a
    slice that would exceed it fails with :class:`PartLimitExceededError` naming the
    limit (raise it with ``HarnessAgent(max_stream_parts=...)``).

    Leaving a reader early (``break``) only ends that reader, as a tee's branch does.
    Cancelling a caller while it waits for parts or for the result aborts the turn (the
    caller gave up); so does :meth:`aclose` (``async with result:``), which then waits up
    to the agent's ``abort_grace`` for the slice to settle.
    """

    def __init__(
        self,
        run: SliceRun,
        *,
        structured: bool = False,
        abort: Callable[[], None] | None = None,
        abort_grace: float = 10.0,
        max_parts: int = MAX_RETAINED_PARTS,
        start: bool = True,
    ) -> None:
        self._run = run
        self._parts: list[ConsumerPart] = [_start_part()]
        self._outcome: SliceOutcome | None = None
        # Plain flag and loop-native signals: the log grows by one part per hand-off, and
        # an anyio event per part (or per check) would weigh on every part.
        self._done = False
        self._finished = Signal()
        self._progress = Signal()
        self._abort = abort
        self._abort_grace = abort_grace
        self._max_parts = max_parts
        self._structured = structured
        #: The agent's ``output`` format (``None``: no output, and ``output`` raises).
        self.output_format: TextResponseFormat | JsonResponseFormat | None = (
            JsonResponseFormat() if structured else None
        )
        #: Re-chunks the first text block when there is an ``output`` (RESULT-019);
        #: made at the first part, once the agent has set :attr:`output_format`.
        self._chunker: OutputChunker | None = None
        #: ``(index of the part that carries it, partial output)``, in stream order.
        self._partials: list[tuple[int, Any]] = []
        #: What the slice puts its consumer parts into (the run receives it); dropped
        #: when the slice ends (it holds the result: kept, the two would be a cycle).
        self.sink: HandoffSink[ConsumerPart] | None = HandoffSink(self._put, self._parts, max_parts)
        self._started = False
        if start:
            self.start()

    def start(self) -> None:
        """Run the slice in a task of its own, unless it runs already (the constructor
        does this, unless told not to: the session may start it later)."""
        if not self._started:
            self._started = True
            spawn_detached(self._drive)

    async def drive_here(self) -> None:
        """Run the slice in the calling task, unless it was started already; never raises."""
        if not self._started:
            self._started = True
            await self._drive()

    # -- streaming ---------------------------------------------------------------------

    @property
    def full_stream(self) -> AsyncIterator[ConsumerPart]:
        """Consumer parts. Each access is a new reader that yields every part from the start."""
        return _Reader(self)

    @property
    def text_stream(self) -> AsyncIterator[str]:
        """The text deltas' text (a reader of its own, like :attr:`full_stream`)."""
        return _TextReader(_Reader(self))

    async def _drive(self) -> None:
        """Run the slice (in a detached task of its own, see :meth:`start`, or in the
        caller's, see :meth:`drive_here`); never raises."""
        sink, self.sink = self.sink, None
        assert sink is not None, "a slice runs once"
        try:
            self._outcome = await self._run(sink)
        except Exception as error:  # a bug below the slice runner: never lose it
            self._outcome = SliceOutcome(error=error)
            if not _is_terminal(self._parts[-1]):
                self._parts.append(ConsumerErrorPart(error=error))
        finally:
            if self._outcome is None:  # cancelled (the event loop is shutting down)
                self._outcome = SliceOutcome(aborted=True, error=_abort_error())
            self._done = True
            self._finished.fire()
            self._progress.fire()

    def _put(self, part: ConsumerPart) -> None:
        if self.output_format is not None:
            chunker = self._chunker
            if chunker is None:
                chunker = self._chunker = OutputChunker(self.output_format)
            for emitted, partial in chunker.feed(part):
                if partial is not NO_PARTIAL:
                    self._partials.append((len(self._parts), partial))
                self._append(emitted)
            return
        self._append(part)

    def _append(self, part: ConsumerPart) -> None:
        parts = self._parts
        if len(parts) >= self._max_parts and not _is_terminal(part):
            raise PartLimitExceededError(
                f"The turn produced more than {self._max_parts} consumer parts in one "
                "result, the most a result retains for its readers; raise "
                "HarnessAgent(max_stream_parts=...) if such turns are expected."
            )
        parts.append(part)
        # Wakes readers waiting for this part (nothing to do when none waits).
        self._progress.fire()

    async def _wait(self, signal: Signal) -> None:
        """Wait for ``signal``; a caller cancelled meanwhile aborts the turn (it gave up)."""
        try:
            await signal.wait()
        except anyio.get_cancelled_exc_class():
            await self._gave_up()
            raise

    async def _gave_up(self) -> None:
        """The caller waiting was cancelled: abort the turn and let it settle (shielded)."""
        with anyio.CancelScope(shield=True):
            await self._abort_and_settle()

    async def _abort_and_settle(self) -> None:
        if self._done:
            return
        if self._abort is not None:
            self._abort()
        # The slice bounds its own waits after an abort by abort_grace (adapter done(),
        # then its settling); this bound only guards against a bug there.
        with anyio.move_on_after(2 * self._abort_grace + 1):
            while not self._done:
                await self._finished.wait()

    async def consume(self) -> None:
        """Wait for the slice to end without looking at the parts."""
        while not self._done:
            await self._wait(self._finished)

    async def aclose(self) -> None:
        """Abort the turn if its slice is still running, and wait for it to settle."""
        await self._abort_and_settle()

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
        """The partial outputs the re-chunked text deltas carry, in order (RESULT-019).

        Each access is a reader of its own, like :attr:`full_stream`. A partial is
        yielded once the part that carries it is in the stream; without an ``output``
        nothing carries one and the reader ends with the slice, as upstream's.
        """
        return _PartialReader(self)

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
            empty_response=None if steps else outcome.empty_response,
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


class _Reader:
    """One reader of a result's parts (a tee branch): an iterator over the retained log.

    A plain class rather than an async generator: a reader left early holds nothing and
    needs no finalisation.
    """

    def __init__(self, result: StreamResult) -> None:
        self._result = result
        self._index = 0
        self._closed = False

    def __aiter__(self) -> _Reader:
        return self

    async def __anext__(self) -> ConsumerPart:
        # The hot path of every consumer: one call per part, awaiting only when the part
        # does not exist yet.
        if self._closed:
            raise StopAsyncIteration
        index = self._index
        result = self._result
        parts = result._parts
        while index >= len(parts):
            if result._done:
                self._closed = True
                raise StopAsyncIteration
            try:  # StreamResult._wait, inlined: a reader waits once per part
                await result._progress.wait()
            except anyio.get_cancelled_exc_class():
                await result._gave_up()
                raise
        self._index = index + 1
        return parts[index]

    async def aclose(self) -> None:
        """End this reader only (the slice and other readers go on)."""
        self._closed = True


class _PartialReader:
    """One reader of a result's partial outputs (see ``partial_output_stream``)."""

    def __init__(self, result: StreamResult) -> None:
        self._result = result
        self._index = 0

    def __aiter__(self) -> _PartialReader:
        return self

    async def __anext__(self) -> Any:
        result = self._result
        while self._index >= len(result._partials):
            if result._done:
                raise StopAsyncIteration
            await result._wait(result._progress)
        self._index += 1
        return result._partials[self._index - 1][1]


class _TextReader:
    """The text of a reader's ``text-delta`` parts."""

    def __init__(self, reader: _Reader) -> None:
        self._reader = reader

    def __aiter__(self) -> _TextReader:
        return self

    async def __anext__(self) -> str:
        while True:
            part = await self._reader.__anext__()
            if isinstance(part, ConsumerTextDeltaPart):
                return part.text

    async def aclose(self) -> None:
        """End this reader only."""
        await self._reader.aclose()


def _start_part() -> ConsumerStartPart:
    """``ConsumerStartPart()`` without validating its constant field."""
    return _new_start.ordered({"type": "start"})


_new_start = Trusted(ConsumerStartPart)


def _is_terminal(part: ConsumerPart) -> bool:
    return part.type in ("finish", "error", "abort")


def _abort_error() -> BaseException:
    return HarnessTurnError("The turn was cancelled before it settled.")


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
