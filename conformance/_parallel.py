"""Checks in parallel (``check --jobs N``): worker processes, each running whole checks.

The fake harness and most adapters are CPU-bound Python, so threads would take turns on
one core: each worker is a process (``spawn``, so no lock or thread of the run is copied
into it). A worker builds the target again from its picklable ``recipe`` (see
``AdapterTarget``) and runs :func:`run_check` exactly as a sequential run does; the run
process schedules, owns the turn ledger and the report.

What stays as at ``--jobs 1``:

- **Order.** Results are committed in the order of the sequential run, whatever order
  they finish in; ``on_result`` is called at commit, so progress lines come in that order.
  Several runs (targets, profiles) share the workers: a later run's checks start while
  an earlier run's last checks finish, and its results are committed after the earlier
  run's.
- **Dependencies.** A check starts once all its prerequisites finished and none failed;
  a prerequisite that failed (after commit) makes it ``blocked``, as before.
- **The turn ledger.** The run process owns the run's :class:`TurnLedger` and merges
  each check's counts into it in commit order. A worker starts its check's ledger from
  the run's counts at the moment the check starts. A check that started before an earlier
  check's hang opened the ledger's refusal runs to its end, but when it tried to start a
  turn (the sequential run would have refused that turn) its result is replaced by the
  same ``blocked`` result the sequential run reports, and its replay bundle is removed.
  What differs: such a check costs its running time, and the hang limit a check's turns
  get (``TurnLedger.turn_limit``) counts only the turns of checks committed before it
  started.
- **Hypothesis' example database.** Every check has its own key, and one check runs in
  one process; hypothesis writes each entry to a new file and renames it into place, so
  workers writing at once do not corrupt the directory.
- **Exclusive checks** (``Check.exclusive``) start when no other check runs, and no other
  check starts until they end.

SIGINT and SIGTERM: workers ignore SIGINT (a terminal sends it to the whole process
group; the run decides). The interrupted run sends SIGTERM to every busy worker, whose
check tears down as in a sequential run (``run_guarded``), waits for them, kills what
is left and reaps every worker; the report holds the committed results. A worker whose
run process died exits by itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from ._capabilities import AdapterCapabilities
from ._checks import Check
from ._context import AdapterTarget
from ._report import CheckResult
from ._runner import (
    ABORT_REQUIREMENT,
    SETUP_ERRORS,
    Expectations,
    RunOptions,
    blocked_result,
    hang_blocked_result,
    own_workdirs_for,
    result_of,
    run_check,
)
from ._watchdog import TEARDOWN_GRACE, Terminated, TurnCounts, TurnLedger

__all__ = ["SuiteRun", "WorkerPool", "default_jobs", "run_parallel"]

#: Seconds between two looks of a worker at whether its run process still lives.
_PARENT_POLL = 0.5
#: Seconds an idle worker gets to exit after it was told to.
_EXIT_GRACE = 10.0


def default_jobs() -> int:
    """The cores this process may run on (``--jobs``' default)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not every platform has affinity
        return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class _Task:
    check_id: str
    recipe: Callable[[], AdapterTarget]
    name: str
    capabilities: AdapterCapabilities
    expectations: Expectations | None
    options: RunOptions
    counts: TurnCounts


@dataclass(frozen=True)
class _Done:
    result: CheckResult
    before: TurnCounts
    after: TurnCounts
    #: What the check reported to its ledger's ``check_failed`` (requirement, message).
    failure: tuple[str | None, str] | None


@dataclass(frozen=True)
class _Broke:
    """A worker could not give a result: a set-up error, an interruption, a kit error."""

    kind: str
    error_type: type[BaseException] | None
    args: tuple[Any, ...]
    state: dict[str, Any]
    text: str

    def error(self) -> BaseException:
        """The exception again (built without its ``__init__``: its args and attributes)."""
        if self.error_type is None:
            return RuntimeError(self.text)
        error = self.error_type.__new__(self.error_type)
        error.args = self.args
        error.__dict__.update(self.state)
        return error


class _CheckLedger(TurnLedger):
    """A worker's ledger for one check: notes what the check reported as failed."""

    failure: tuple[str | None, str] | None = None

    def check_failed(self, check_id: str, requirement: str | None, message: str) -> None:
        self.failure = (requirement, message)
        super().check_failed(check_id, requirement, message)


def _broke(kind: str, error: BaseException) -> _Broke:
    state = {key: value for key, value in vars(error).items() if _picklable(value)}
    error_type = type(error) if _picklable(type(error)) and _picklable(error.args) else None
    return _Broke(
        kind=kind,
        error_type=error_type,
        args=error.args if error_type is not None else (),
        state=state if error_type is not None else {},
        text=f"{type(error).__name__}: {error}",
    )


def _picklable(value: object) -> bool:
    import pickle

    try:
        pickle.dumps(value)
    except Exception:  # anything pickle refuses stays behind
        return False
    return True


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


def _watch_parent(parent: int) -> None:
    """End this worker once its run process is gone (it was killed outright)."""
    while True:
        time.sleep(_PARENT_POLL)
        if os.getppid() != parent:
            os._exit(1)


def _worker_main(connection: Connection, run_pid: int) -> None:
    """A worker process: run the checks it is sent until told to stop (``spawn`` gave it
    the run's import path, so ``check fx:make`` finds ./fx.py here too)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminate)
    own_workdirs_for(run_pid)
    threading.Thread(
        target=_watch_parent, args=(os.getppid(),), name="harness-testkit-parent", daemon=True
    ).start()
    targets: dict[str, AdapterTarget] = {}
    try:
        while True:
            try:
                task = connection.recv()
            except EOFError:
                return
            if task is None:
                return
            try:
                outcome: _Done | _Broke = _run_task(task, targets)
            except Terminated as error:
                connection.send(_broke("interrupted", error))
                return
            except SETUP_ERRORS as error:
                outcome = _broke("setup", error)
            except Exception as error:
                outcome = _broke("internal", error)
                outcome = dataclasses.replace(
                    outcome, text="".join(traceback.format_exception(error))
                )
            connection.send(outcome)
    except Terminated:
        return
    finally:
        node = sys.modules.get("harness_testkit.adapters.node")
        if node is not None:
            node.close_hosts()


def _run_task(task: _Task, targets: dict[str, AdapterTarget]) -> _Done:
    from ._adapter._registry import REGISTRY

    target = targets.get(task.name)
    if target is None:
        target = dataclasses.replace(
            task.recipe(),
            name=task.name,
            capabilities=task.capabilities,
            expectations=task.expectations,
        )
        targets[task.name] = target
    ledger = _CheckLedger.from_counts(task.counts)
    before = ledger.counts()
    options = dataclasses.replace(task.options, turns=ledger)
    result = run_check(REGISTRY[task.check_id], target, options)
    return _Done(result=result, before=before, after=ledger.counts(), failure=ledger.failure)


#: A check of a run: the run's index among the runs scheduled together, the check's id.
Job = tuple[int, str]


@dataclass
class _Worker:
    process: BaseProcess
    connection: Connection
    #: The check it runs (``None``: idle) and when it started.
    job: Job | None = None
    started: float = 0.0


class WorkerPool:
    """Up to ``jobs`` worker processes, started as checks need them, shared by the runs
    of one command (every target and profile of ``check --self``).

    Use it as a context manager: leaving it ends every worker (busy ones get SIGTERM and
    their teardown, then are killed) and reaps them all.

    Raises:
        ValueError: ``jobs`` is below 1.
    """

    def __init__(self, jobs: int) -> None:
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, not {jobs}; use --jobs 1 or more")
        self.jobs = jobs
        self._context = multiprocessing.get_context("spawn")
        self._workers: list[_Worker] = []
        #: ``(check id, start, end)`` in ``time.monotonic`` seconds, per check a worker
        #: ran, in the order they ended (what ran beside what).
        self.history: list[tuple[str, float, float]] = []
        #: Worker processes started so far.
        self.started = 0

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def busy(self) -> int:
        """How many workers run a check now."""
        return sum(1 for worker in self._workers if worker.job is not None)

    def _idle_worker(self) -> _Worker | None:
        for worker in self._workers:
            if worker.job is None:
                return worker
        if len(self._workers) >= self.jobs:
            return None
        mine, theirs = self._context.Pipe()
        process = self._context.Process(
            target=_worker_main,
            args=(theirs, os.getpid()),
            name=f"harness-testkit-worker-{self.started + 1}",
            daemon=True,
        )
        process.start()
        theirs.close()
        self.started += 1
        worker = _Worker(process=process, connection=mine)
        self._workers.append(worker)
        return worker

    def submit(self, job: Job, task: _Task) -> bool:
        """Send ``task`` to an idle worker (starting one if allowed); ``False``: none free."""
        worker = self._idle_worker()
        if worker is None:
            return False
        worker.connection.send(task)
        worker.job = job
        worker.started = time.monotonic()
        return True

    def collect(self, timeout: float) -> list[tuple[Job, _Done | _Broke | None]]:
        """What busy workers finished within ``timeout`` seconds: ``(job, outcome)``;
        ``None`` for a worker that died (it is removed; a new one starts when needed)."""
        busy = {worker.connection: worker for worker in self._workers if worker.job}
        if not busy:
            return []
        finished: list[tuple[Job, _Done | _Broke | None]] = []
        for ready in wait(list(busy), timeout):
            worker = busy[ready]  # type: ignore[index]  # wait returns what it was given
            job = worker.job
            assert job is not None
            outcome: _Done | _Broke | None
            try:
                outcome = worker.connection.recv()
            except (EOFError, OSError):
                outcome = None
                self._workers.remove(worker)
                worker.connection.close()
                worker.process.join(_EXIT_GRACE)
            worker.job = None
            self.history.append((job[1], worker.started, time.monotonic()))
            finished.append((job, outcome))
        return finished

    def close(self) -> None:
        """End every worker: idle ones are told to exit, busy ones get SIGTERM (their
        check tears down, at most ``TEARDOWN_GRACE`` seconds); what still runs after
        that is killed. Every worker is reaped. Idempotent."""
        workers, self._workers = self._workers, []
        try:
            for worker in workers:
                if worker.job is None:
                    with contextlib.suppress(OSError):
                        worker.connection.send(None)
                elif worker.process.pid is not None:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(worker.process.pid, signal.SIGTERM)
            deadline = time.monotonic() + TEARDOWN_GRACE + _EXIT_GRACE
            for worker in workers:
                worker.process.join(max(0.0, deadline - time.monotonic()))
        finally:
            for worker in workers:
                if worker.process.is_alive():
                    worker.process.kill()
                worker.process.join(_EXIT_GRACE)
                worker.connection.close()


def _died(check: Check) -> CheckResult:
    """``check``'s result when the worker process running it exited mid-check."""
    return result_of(
        check,
        status="error",
        message=(
            "the worker process running the check exited before the check ended (did the "
            "adapter end its process? rerun with --jobs 1 to see it in the run's process)"
        ),
    )


@dataclass
class SuiteRun:
    """One run of a selection against a target (at one profile) for :func:`run_parallel`.

    Attributes:
        target: The target (with a ``recipe``).
        options: The run's options, with the run's own turn ledger.
        checks: The selection, in dependency order.
        results: Where the committed results go, in that order.
    """

    target: AdapterTarget
    options: RunOptions
    checks: Sequence[Check]
    results: list[CheckResult] = field(default_factory=list)


class _RunState:
    """What the scheduler knows of one run."""

    def __init__(self, run: SuiteRun) -> None:
        assert run.target.recipe is not None
        self.run = run
        self.ledger = run.options.turns if run.options.turns is not None else TurnLedger()
        self.task_options = dataclasses.replace(run.options, turns=None)
        self.position = {check.id: index for index, check in enumerate(run.checks)}
        self.finished: dict[str, _Done] = {}
        self.running: set[str] = set()
        self.broken: dict[str, str] = {}
        self.committed: set[str] = set()

    @property
    def complete(self) -> bool:
        return len(self.run.results) == len(self.run.checks)

    def dependencies_clear(self, check: Check) -> bool | None:
        """``True``: it may start; ``False``: a prerequisite broke; ``None``: wait."""
        verdict: bool | None = True
        for dependency in check.depends_on:
            if dependency not in self.position:
                continue
            if dependency in self.broken:
                return False
            done = self.finished.get(dependency)
            if dependency in self.committed or (
                done is not None and done.result.status not in ("fail", "xfail", "error")
            ):
                continue
            verdict = None
        return verdict

    def waiting(self) -> list[Check]:
        """The checks that may start now; property checks first: they take longest, and
        one started last would leave the other workers idle at the end."""
        checks = self.run.checks[len(self.run.results) :]
        return [
            check
            for check in sorted(checks, key=lambda check: not check.is_property)
            if check.id not in self.running
            and check.id not in self.finished
            and self.dependencies_clear(check) is True
        ]

    def task(self, check: Check) -> _Task:
        target = self.run.target
        return _Task(
            check_id=check.id,
            recipe=target.recipe,  # type: ignore[arg-type]  # asserted in __init__
            name=target.name,
            capabilities=target.capabilities,
            expectations=target.expectations,
            options=self.task_options,
            counts=self.ledger.counts(),
        )

    def commit_next(self) -> CheckResult | None:
        """Commit the next check in order when its result is known."""
        check = self.run.checks[len(self.run.results)]
        blockers = [dep for dep in check.depends_on if dep in self.broken]
        if blockers:
            result = blocked_result(check, blockers[0], self.broken[blockers[0]])
            self.broken[check.id] = "is blocked"
        elif check.id in self.finished:
            result = self._merged(check, self.finished.pop(check.id))
            if result.status in ("fail", "xfail", "error"):
                self.broken[check.id] = "erred" if result.status == "error" else "failed"
        else:
            return None
        self.committed.add(check.id)
        self.run.results.append(result)
        return result

    def _merged(self, check: Check, done: _Done) -> CheckResult:
        """The check's result as the sequential run reports it; its turns counted."""
        ledger = self.ledger
        refused = (
            ledger.hung_check is not None
            and done.before.hung_check is None
            and ABORT_REQUIREMENT not in check.requirements
            and done.after.attempted > done.before.attempted
        )
        if not refused:
            ledger.add(done.before, done.after)
            if done.failure is not None:
                ledger.check_failed(check.id, *done.failure)
            return done.result
        # The sequential run refuses this check's first turn: it is blocked.
        assert ledger.hung_check is not None
        if done.result.bundle is not None:
            Path(done.result.bundle).unlink(missing_ok=True)
        ledger.refused += 1
        return hang_blocked_result(
            check, ledger.hung_check, ledger.hung_message, done.result.duration_seconds
        )


def run_parallel(
    runs: Sequence[SuiteRun],
    pool: WorkerPool,
    *,
    on_start: Callable[[int, Check], None] | None = None,
    on_result: Callable[[int, CheckResult], None] | None = None,
    on_done: Callable[[int], None] | None = None,
) -> None:
    """Run ``runs`` on ``pool``, committing each run's results in its order, run after
    run; see the module docstring for what stays as in a sequential run.

    Checks of a later run start while an earlier one finishes (no worker waits for the
    last check of a run). Callbacks get the run's index: ``on_start`` as a check of the
    run being reported starts, ``on_result`` as a result is committed, ``on_done`` once
    a run's last result is.

    Raises:
        KeyboardInterrupt: (or ``Terminated``) the run was interrupted; the results
            committed so far are in the runs, and every busy worker was stopped.
        MissingExtraError: (or another of ``SETUP_ERRORS``) a check needed what the
            machine lacks.
    """
    states = [_RunState(run) for run in runs]
    exclusive: list[Job] = []
    current = 0

    def dispatch() -> None:
        if exclusive:
            return
        for index in range(current, len(states)):
            state = states[index]
            for check in state.waiting():
                if check.exclusive and pool.busy:
                    return  # nothing more starts until it can run alone
                if not pool.submit((index, check.id), state.task(check)):
                    return
                state.running.add(check.id)
                if on_start is not None and index == current:
                    on_start(index, check)
                if check.exclusive:
                    exclusive.append((index, check.id))
                    return

    try:
        while current < len(states):
            state = states[current]
            if state.complete:
                if on_done is not None:
                    on_done(current)
                current += 1
                continue
            result = state.commit_next()
            if result is not None:
                if on_result is not None:
                    on_result(current, result)
                continue
            dispatch()
            for job, outcome in pool.collect(timeout=1.0):
                index, check_id = job
                owner = states[index]
                owner.running.discard(check_id)
                check = owner.run.checks[owner.position[check_id]]
                if job in exclusive:
                    exclusive.remove(job)
                if isinstance(outcome, _Done):
                    owner.finished[check_id] = outcome
                elif outcome is None:
                    counts = owner.ledger.counts()
                    owner.finished[check_id] = _Done(_died(check), counts, counts, None)
                elif outcome.kind == "internal":
                    raise RuntimeError(f"a worker failed running {check_id}: {outcome.text}")
                else:  # a set-up error, or a SIGTERM sent to the worker itself
                    raise outcome.error()
    except BaseException:
        pool.close()
        raise
