"""Hard limits for one check: its event loops run in a worker thread the kit can give up on.

An adapter that blocks its event loop (a synchronous ``time.sleep``, a busy loop) or never
settles cannot be interrupted from inside that loop. :func:`run_guarded` runs the check
in a daemon worker thread; each event loop the check starts registers with a
:class:`LoopMonitor` and beats a heartbeat. The calling thread watches: a loop whose
heartbeat is older than the stall limit is blocked, and a check older than its wall-time
cap is over time. Either way the kit takes the stack of the worker thread (where it is
stuck), asks the loop to cancel (so teardown runs if the loop ever wakes), waits a short
grace and goes on; a worker that stays stuck is abandoned (a daemon thread).

SIGINT/SIGTERM arrive in the calling thread while it waits: the check is cancelled, its
teardown gets :data:`TEARDOWN_GRACE` seconds, and the interruption propagates.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

from ._tracebacks import format_stack

__all__ = [
    "HANG_FACTOR",
    "HANG_FLOOR",
    "TEARDOWN_GRACE",
    "CheckInterrupted",
    "LoopMonitor",
    "Stuck",
    "Terminated",
    "TurnCounts",
    "TurnLedger",
    "TurnRefused",
    "run_guarded",
]

T = TypeVar("T")

#: Seconds between heartbeats of a monitored event loop.
HEARTBEAT_SECONDS = 0.2
#: Seconds a cancelled check gets to finish its teardown before it is abandoned.
TEARDOWN_GRACE = 30.0
_POLL_SECONDS = 0.05


class Terminated(BaseException):
    """SIGTERM arrived (raised in the main thread by the CLI's signal handler)."""


class CheckInterrupted(BaseException):
    """Raised inside a check's worker after the kit gave up on it (not an Exception,
    so hypothesis does not mistake it for a failure to shrink)."""


#: A turn is hung once it took this many times the slowest turn the run settled ...
HANG_FACTOR = 20.0
#: ... but never less than this many seconds (see :meth:`TurnLedger.turn_limit`).
HANG_FLOOR = 5.0


class TurnRefused(Exception):
    """Raised instead of starting a turn once the run's turns are known to hang; the
    runner reports the check ``blocked`` by the check that hung."""


@dataclass(frozen=True)
class TurnCounts:
    """A :class:`TurnLedger`'s counts at one moment (picklable: a worker process of a
    parallel run starts its check's ledger from the run's counts and returns its own)."""

    started: int = 0
    settled: int = 0
    refused: int = 0
    #: Turn-starting calls of checks the ledger may refuse (made, or refused).
    attempted: int = 0
    slowest: float = 0.0
    hung_check: str | None = None
    hung_message: str = ""


class TurnLedger:
    """The turns of one run, across its checks: how many started, settled, were refused.

    An adapter that has settled no turn at all in the run, once a check failed because a
    turn hung (ADAPTER-044), would make every later check wait out the turn timeout, one
    turn (and one property example) after another: minutes for a verdict already known.
    From then on the ledger refuses every turn a check tries to start, and the runner
    reports that check ``blocked`` by the one that hung. A run in which any turn settled
    never refuses one: then only some situation hangs, and each check shows which.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.started = 0
        self.settled = 0
        self.refused = 0
        #: Turn-starting calls the ledger could have refused (made, or refused): with
        #: checks run in parallel, whether a check would have been refused.
        self.attempted = 0
        #: Seconds the slowest settled turn took, from its start to its ``done()``.
        self.slowest = 0.0
        #: The check that hung with no turn settled, and the first line of its message.
        self.hung_check: str | None = None
        self.hung_message = ""

    @classmethod
    def from_counts(cls, counts: TurnCounts) -> Self:
        """A ledger that goes on from ``counts``."""
        ledger = cls()
        for name, value in dataclasses.asdict(counts).items():
            setattr(ledger, name, value)
        return ledger

    def counts(self) -> TurnCounts:
        """The counts now."""
        with self._lock:
            return TurnCounts(
                **{
                    field.name: getattr(self, field.name)
                    for field in dataclasses.fields(TurnCounts)
                }
            )

    def add(self, before: TurnCounts, after: TurnCounts) -> None:
        """Count what happened between ``before`` and ``after`` of another ledger (a
        check's, run in a worker process) into this one."""
        with self._lock:
            self.started += after.started - before.started
            self.settled += after.settled - before.settled
            self.refused += after.refused - before.refused
            self.attempted += after.attempted - before.attempted
            self.slowest = max(self.slowest, after.slowest)

    def turn_attempted(self, *, refuse: bool = True) -> None:
        """Note a turn-starting call about to be made, or refuse it.

        Raises:
            TurnRefused: The run's turns hang (see the class), and ``refuse``.
        """
        with self._lock:
            if refuse:
                self.attempted += 1
        if refuse and self.hung_check is not None:
            self.turn_started()

    def turn_started(self, *, refuse: bool = True) -> None:
        """Note a turn the adapter started (its control came back), or refuse it.

        Raises:
            TurnRefused: The run's turns hang (see the class), and ``refuse``.
        """
        with self._lock:
            if refuse and self.hung_check is not None:
                self.refused += 1
                raise TurnRefused(
                    f"no turn of this adapter settled in this run; {self.hung_check} hung"
                )
            self.started += 1

    def turn_settled(self, seconds: float = 0.0) -> None:
        """Note a turn whose ``done()`` returned or raised ``seconds`` after it started."""
        with self._lock:
            self.settled += 1
            self.slowest = max(self.slowest, seconds)

    def turn_limit(self, declared: float) -> float:
        """How long a turn may take before a check calls it hung.

        Before any turn settled: the declared ``turn_timeout``. After: :data:`HANG_FACTOR`
        times the slowest turn this run settled, at least :data:`HANG_FLOOR` seconds and
        at most the declared timeout, so each later hang costs seconds, not the whole
        declared timeout, while a turn as slow as the slowest seen has ample room.
        """
        with self._lock:
            if self.settled == 0:
                return declared
            return min(declared, max(HANG_FLOOR, HANG_FACTOR * self.slowest))

    def check_failed(self, check_id: str, requirement: str | None, message: str) -> None:
        """Note a failed check; a hang (ADAPTER-044) with no turn ever settled opens the
        ledger's refusal."""
        with self._lock:
            if (
                self.hung_check is None
                and requirement == "ADAPTER-044"
                and self.started > 0
                and self.settled == 0
            ):
                self.hung_check = check_id
                self.hung_message = message.splitlines()[0] if message else ""


@dataclass(frozen=True)
class Stuck:
    """Why and where the kit gave up on a check."""

    reason: str
    stack: str
    abandoned: bool


class LoopMonitor:
    """Registers the check's current event loop, its heartbeat and its cancel scope."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._token: Any = None
        self._scope: anyio.CancelScope | None = None
        self.beat: float | None = None
        self.cancel_requested = False

    async def run(self, body: Callable[[], Any]) -> Any:
        """Run ``await body()`` in this loop under the monitor (heartbeat, cancellable)."""
        if self.cancel_requested:
            raise CheckInterrupted("the check was cancelled")
        outcome: list[Any] = []
        with anyio.CancelScope() as scope:
            with self._lock:
                self._token = anyio.lowlevel.current_token()
                self._scope = scope
                self.beat = time.monotonic()
            try:
                async with anyio.create_task_group() as group:
                    group.start_soon(self._heartbeat)
                    try:
                        outcome.append(await body())
                    except Exception as error:
                        outcome.append(_Raised(error))
                    finally:
                        group.cancel_scope.cancel()
            finally:
                with self._lock:
                    self._token = None
                    self._scope = None
                    self.beat = None
        if scope.cancelled_caught or not outcome:
            raise CheckInterrupted("the check was cancelled")
        if isinstance(outcome[0], _Raised):
            raise outcome[0].error.with_traceback(outcome[0].traceback)
        return outcome[0]

    async def _heartbeat(self) -> None:
        while True:
            self.beat = time.monotonic()
            await anyio.sleep(HEARTBEAT_SECONDS)

    def stalled_for(self, now: float) -> float:
        """Seconds since the running loop last beat (0 when no loop runs)."""
        beat = self.beat
        return 0.0 if beat is None else max(0.0, now - beat)

    def request_cancel(self) -> None:
        """Cancel the running loop's check (from another thread; never blocks)."""
        with self._lock:
            self.cancel_requested = True
            token, scope = self._token, self._scope
        if token is None or scope is None:
            return

        def cancel() -> None:
            try:
                anyio.from_thread.run_sync(scope.cancel, token=token)
            except Exception:  # the loop ended meanwhile: nothing left to cancel
                pass

        # The loop may be blocked: ask from a daemon thread that may wait forever.
        threading.Thread(target=cancel, name="harness-testkit-cancel", daemon=True).start()


class _Raised:
    def __init__(self, error: Exception) -> None:
        self.error = error
        self.traceback: TracebackType | None = error.__traceback__


def _stack_of(thread: threading.Thread) -> str:
    frame = sys._current_frames().get(thread.ident or -1)
    if frame is None:
        return "(the worker thread has no frame)"
    return format_stack(traceback.extract_stack(frame))


def run_guarded(
    function: Callable[[], T],
    monitor: LoopMonitor,
    *,
    stall_limit: float,
    wall_limit: float,
    grace: float = 5.0,
) -> T | Stuck:
    """Run ``function`` in a worker thread; return its value or a :class:`Stuck`.

    Exceptions of ``function`` propagate; a stall longer than ``stall_limit`` seconds or a
    run longer than ``wall_limit`` seconds returns :class:`Stuck` with the worker's stack.
    """
    box: dict[str, Any] = {}
    # An Event, not Thread.join: a join interrupted by KeyboardInterrupt can leave the
    # thread reporting itself dead while it still runs (CPython gh-90882).
    finished = threading.Event()

    def body() -> None:
        try:
            box["value"] = function()
        except BaseException as error:
            box["error"] = error
        finally:
            finished.set()

    worker = threading.Thread(target=body, name="harness-testkit-check", daemon=True)
    started = time.monotonic()
    worker.start()
    try:
        while True:
            if finished.wait(_POLL_SECONDS):
                break
            now = time.monotonic()
            stalled = monitor.stalled_for(now)
            if stalled > stall_limit or now - started > wall_limit:
                stack = _stack_of(worker)
                if stalled > stall_limit:
                    reason = (
                        f"the adapter blocked the event loop for more than {stall_limit:g} s "
                        "(a synchronous call inside async code)"
                    )
                else:
                    reason = f"the check ran longer than its wall-time cap of {wall_limit:g} s"
                monitor.request_cancel()
                return Stuck(reason=reason, stack=stack, abandoned=not finished.wait(grace))
    except BaseException:
        # SIGINT/SIGTERM: cancel the check and let its teardown run before going on.
        monitor.request_cancel()
        finished.wait(TEARDOWN_GRACE)
        raise
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]
