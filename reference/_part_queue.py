"""The part queue of one adapter turn: what ``emit`` feeds and the turn engine reads."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic import ValidationError

from harness_testkit.spec import (
    ErrorPart,
    HarnessTurnError,
    StreamPart,
    WireModel,
    parse_stream_part,
)

from ._handoff import Handoff

__all__ = ["DONE", "DoneFailed", "PartQueue", "QueueItem"]


class _Done:
    """Queue sentinel: the adapter's ``done()`` resolved."""

    def __repr__(self) -> str:
        return "DONE"


DONE = _Done()


@dataclass(frozen=True)
class DoneFailed:
    """Queue sentinel: the adapter's ``done()`` raised ``error``."""

    error: BaseException


QueueItem = StreamPart | _Done | DoneFailed


class _Wake:
    """Queue sentinel: wake the reader (no part)."""


_WAKE = _Wake()


class PartQueue:
    """The parts of one adapter turn, across slices.

    ``emit`` is the synchronous callback adapters call; it validates what it receives
    (the adapter is an untrusted boundary) and turns an invalid part into an ``error``
    part naming the problem. Parts emitted while no slice is reading (during a pause)
    stay queued for the next slice. One hand-off per part: the reader waits only when
    nothing is queued.
    """

    def __init__(self) -> None:
        self._items: Handoff[QueueItem | _Wake] = Handoff()
        self._queued = self._items.queued
        self._pushback: deque[QueueItem] = deque()
        self.closed = False
        #: Set by the reader while it waits on an empty queue: handles a part at once
        #: (returns ``True``) or declines it (``False``: the part is queued).
        self.translate: Callable[[StreamPart], bool] | None = None
        #: Set with :attr:`translate`: takes a wire dict as it is, before it is parsed
        #: (``False``: parse it and offer the part to ``translate``).
        self.translate_wire: Callable[[dict[str, Any]], bool] | None = None
        #: Called (once: it is cleared first) when something is queued, or the queue
        #: closes, while no reader runs yet: a slice whose reader starts only when
        #: something needs it.
        self.on_queued: Callable[[], None] | None = None

    def emit(self, part: StreamPart | Mapping[str, Any]) -> None:
        """The ``emit`` callback handed to the adapter."""
        if self.closed:
            return  # parts after done() resolved are dropped (spec 1.4.4)
        parsed: StreamPart
        if type(part) is dict:
            wire = self.translate_wire
            if wire is not None and not self._pushback and not self._queued and wire(part):
                return
            parsed = _parse(part)
        elif isinstance(part, WireModel):
            parsed = part
        else:
            parsed = _parse(part)
        translate = self.translate
        if translate is not None and not self._pushback and not self._queued and translate(parsed):
            return
        self._items.put(parsed)
        if self.on_queued is not None:
            self._reader_needed()

    def _reader_needed(self) -> None:
        on_queued, self.on_queued = self.on_queued, None
        if on_queued is not None:
            on_queued()

    @property
    def empty(self) -> bool:
        """Whether nothing is queued (nothing emitted and not yet read)."""
        return not self._queued and not self._pushback

    def finish(self, item: _Done | DoneFailed) -> None:
        """Post the end of the turn's stream (``done()`` settled); later emits are dropped."""
        if not self.closed:
            self.closed = True
            self._items.put(item)
            self._items.close()

    def close(self) -> None:
        """Release the queue (the turn is over; nothing more is read): queued parts are
        dropped and a waiting reader gets ``anyio.EndOfStream``."""
        self.closed = True
        on_queued = self.on_queued
        self.on_queued = self.translate = self.translate_wire = None
        self._items.close()
        self._items.clear()
        if on_queued is not None:
            on_queued()  # a reader not started yet must see the end (the session ended)

    def wake(self) -> None:
        """Wake a reader blocked in :meth:`get_or_wake` (the turn was aborted)."""
        if not self.closed:
            self._items.put(_WAKE)
            self._reader_needed()

    def push_front(self, items: Sequence[QueueItem]) -> None:
        """Re-queue items (a stop condition's unconsumed lookahead) ahead of new ones."""
        self._pushback.extendleft(reversed(list(items)))

    async def get(self) -> QueueItem:
        """Next item (waits; callers bound the wait with their own timeout)."""
        while True:
            item = await self.get_or_wake()
            if item is not None:
                return item

    async def get_or_wake(self) -> QueueItem | None:
        """Next item, or ``None`` when :meth:`wake` was called."""
        if self._pushback:
            return self._pushback.popleft()
        item = await self._items.get()
        return None if isinstance(item, _Wake) else item

    def take_end(self) -> _Done | DoneFailed | None:
        """The end of the stream (``done()`` settled), taken out when nothing else is
        queued; ``None`` (nothing taken) otherwise."""
        queued = self._queued
        if self._pushback or len(queued) != 1 or not isinstance(queued[0], _Done | DoneFailed):
            return None
        end = self._items.get_nowait()
        assert isinstance(end, _Done | DoneFailed)
        return end

    def drain_parts(self) -> list[StreamPart]:
        """Every stream part queued right now, taken out (end-of-stream markers and
        wake-ups dropped): what an unread turn leaves for later."""
        items: list[QueueItem | _Wake] = list(self._pushback)
        self._pushback.clear()
        while True:
            try:
                items.append(self._items.get_nowait())
            except (anyio.WouldBlock, anyio.EndOfStream):
                break
        return [item for item in items if not isinstance(item, _Done | DoneFailed | _Wake)]


def _parse(part: object) -> StreamPart:
    """The validated part, or an ``error`` part naming what was wrong with it."""
    try:
        return parse_stream_part(part)
    except ValidationError as error:
        return ErrorPart(
            error=HarnessTurnError(
                f"The harness emitted an invalid stream part {_short(part)}: "
                f"{_validation_summary(error)}"
            )
        )


def _short(part: object) -> str:
    text = repr(part)
    return text if len(text) <= 200 else text[:197] + "..."


def _validation_summary(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in item['loc']) or '(root)'}: {item['msg']}"
        for item in error.errors()
    )
