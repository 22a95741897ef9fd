"""Runs checks against an adapter target and builds the report.

One idea: running a check to its result (the guarded worker, hypothesis, shrinking, the
turn ledger, the replay bundle) and a selection of them to the report.

The CLI and the pytest plugin both call :func:`run_check`; :func:`run_suite` runs a
selection in dependency order, marking dependents of failed checks ``blocked`` instead
of letting them cascade.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import re
import shlex
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio

from harness_testkit import __version__
from harness_testkit.common import InputError, bounded_copy, pid_exited, read_structured
from harness_testkit.spec import (
    HarnessAdapter,
    HarnessUsageError,
    HostProtocolError,
    HostSetupError,
    InvalidLifecycleStateError,
    MissingExtraError,
    SandboxUnavailableError,
)

from ._adapter._registry import REGISTRY, ordered_checks
from ._capabilities import resolve_capabilities
from ._checks import Check, CheckFailed, CheckSkipped
from ._context import PROFILES, AdapterTarget, CheckContext, Profile
from ._hypothesis import database_key, property_settings
from ._replay import BUNDLE_VERSION
from ._report import CheckResult, Report, dump_json, strongest_level
from ._shrinking import ShrinkBudget, ShrinkingCut
from ._tracebacks import format_error
from ._versions import run_versions
from ._watchdog import (
    CheckInterrupted,
    LoopMonitor,
    Stuck,
    Terminated,
    TurnLedger,
    run_guarded,
)

if TYPE_CHECKING:
    from ._parallel import WorkerPool

__all__ = [
    "SETUP_ERRORS",
    "Expectations",
    "RunInterrupted",
    "RunOptions",
    "Selection",
    "SelectionError",
    "blocked_result",
    "run_check",
    "run_suite",
    "run_suites",
    "select_checks",
]

Backend = Literal["asyncio", "trio"]


@dataclass(frozen=True)
class Expectations:
    """Known bugs of the adapter under test: check id -> reason (strict xfail)."""

    xfail: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> Expectations:
        """Read ``{"xfail": {check_id: reason}}`` from YAML or JSON.

        Raises:
            ValueError: naming the file and what is wrong in it.
        """
        try:
            data = read_structured(path, what="expectations file") or {}
        except InputError as error:
            raise ValueError(str(error)) from error
        xfail = data.get("xfail", {}) if isinstance(data, dict) else None
        if not isinstance(xfail, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in xfail.items()
        ):
            raise ValueError(f"{path}: expected a mapping `xfail: {{check_id: reason}}` of strings")
        return cls(xfail=dict(xfail))

    def merged(self, other: Expectations | None) -> Expectations:
        """These entries over ``other``'s (a run's own reasons win over a target's)."""
        if other is None or not other.xfail:
            return self
        return Expectations(xfail={**other.xfail, **self.xfail})


@dataclass(frozen=True)
class RunOptions:
    """How to run: depth, seed, sandbox, backend, and where to put replay bundles."""

    profile: str = "standard"
    seed: int = 0
    sandbox: Literal["local", "docker"] = "local"
    backend: Backend = "asyncio"
    bundle_dir: Path | None = None
    expectations: Expectations = field(default_factory=Expectations)
    #: Hypothesis example database (failures replayed first next time); ``None``: none.
    example_database: Path | None = None
    #: Seconds a failing property check may spend shrinking (then it reports the
    #: smallest scenario found so far and keeps the unshrunk one in the bundle).
    shrink_seconds: float = 30.0
    #: Wall-time cap of one check (seconds); a check over it fails with ADAPTER-044.
    check_timeout: float = 900.0
    #: Seconds the adapter may block the event loop; default: the declared turn timeout
    #: plus 10 s.
    stall_timeout: float | None = None
    #: The run's turn ledger, shared by its checks; :func:`run_suite` gives each run a
    #: fresh one (``None``: turns are neither counted nor refused).
    turns: TurnLedger | None = field(default=None, compare=False, repr=False)
    #: Write replay bundles for declared failures (strict xfails) too, not only for
    #: failures and errors (the version matrix links every failing cell to one).
    bundle_declared: bool = False

    @property
    def profile_settings(self) -> Profile:
        """The profile object."""
        if self.profile not in PROFILES:
            raise ValueError(f"unknown profile {self.profile!r}; use one of {', '.join(PROFILES)}")
        return PROFILES[self.profile]


#: The requirement of settling an aborted turn: its checks are not blocked by the turn
#: ledger (see ``TurnLedger``).
ABORT_REQUIREMENT = "ADAPTER-042"

#: The name prefix of a check's work directory (in the system's temporary directory); the
#: name goes on with the owning process's pid and ``-`` (``harness-testkit-check-<pid>-...``).
WORKDIR_PREFIX = "harness-testkit-check-"
_swept = threading.Event()
#: The pid that owns this process's work directories: its own, or in a worker process of
#: a parallel run the run's (so the run removes what an interrupted worker left, and a
#: later run sweeps them once the run is gone).
_owner: list[int] = []


def own_workdirs_for(pid: int) -> None:
    """Name this process's work directories after ``pid`` (a parallel run's worker)."""
    _owner[:] = [pid]


def _owner_pid() -> int:
    return _owner[0] if _owner else os.getpid()


@contextlib.contextmanager
def _workdir() -> Iterator[Path]:
    if not _swept.is_set():
        _swept.set()
        sweep_abandoned_workdirs(Path(tempfile.gettempdir()))
    # The owner is in the name, so no moment exists when the directory does not name it.
    with tempfile.TemporaryDirectory(prefix=f"{WORKDIR_PREFIX}{_owner_pid()}-") as directory:
        yield Path(directory)


def _owner_gone(directory: Path) -> bool:
    """Whether the process named in ``directory``'s name has exited (``False`` for a name
    without an owner: a directory of an older kit)."""
    owner, dash, _ = directory.name.removeprefix(WORKDIR_PREFIX).partition("-")
    return bool(dash) and pid_exited(owner)


def sweep_abandoned_workdirs(temporary: Path) -> list[Path]:
    """Remove the check work directories in ``temporary`` whose owning process has exited.

    A run killed outright (``SIGKILL``, a CI job's hard timeout) cannot remove its work
    directory; the first check of a later run does. The owner is the pid in the
    directory's name, looked up in this process's pid namespace; a live process with that
    pid (even one that reused it) keeps the directory. Never raises.

    Returns:
        The directories removed.
    """
    removed: list[Path] = []
    try:
        candidates = sorted(temporary.glob(f"{WORKDIR_PREFIX}*"))
    except OSError:
        return removed
    for directory in candidates:
        if directory.is_dir() and _owner_gone(directory):
            shutil.rmtree(directory, ignore_errors=True)
            if not directory.exists():
                removed.append(directory)
    return removed


def remove_own_workdirs(temporary: Path | None = None) -> None:
    """Remove this process's check work directories (an interrupted run, before it exits).

    A check interrupted by a signal leaves its context manager at once, but a thread or a
    process it started can still write into its directory for a moment and re-create it;
    the run removes what is left as its last act. Never raises.
    """
    folder = temporary if temporary is not None else Path(tempfile.gettempdir())
    try:
        owned = sorted(folder.glob(f"{WORKDIR_PREFIX}{_owner_pid()}-*"))
    except OSError:
        return
    for directory in owned:
        shutil.rmtree(directory, ignore_errors=True)


def _skip_reason(check: Check, target: AdapterTarget) -> tuple[str, str] | None:
    """``(message, capability)`` when the target lacks a capability the check needs."""
    capabilities = target.capabilities
    if check.tier == "scripted" and not capabilities.scripting:
        return "needs capability `scripting` (the kit's scripting extension)", "scripting"
    for name in check.needs:
        value = getattr(capabilities, name)
        if not value:
            return f"needs capability `{name}`", name
    return None


def _replay_command(bundle: Path | None, target: AdapterTarget) -> str | None:
    """The command that reruns ``bundle``, runnable as printed (from the same folder).

    Replay imports no adapter a bundle names unless told to (``--adapter``); the kit's
    own targets (``self:...``) need no import.
    """
    if bundle is None:
        return None
    words = ["harness-testkit", "replay", str(bundle)]
    if not target.name.startswith("self:"):
        words += ["--adapter", target.name]
    return shlex.join(words)


#: Exceptions a requirement covers, so they fail that requirement instead of being an
#: error of the check: (exception type, requirement id, why).
COVERED_EXCEPTIONS: tuple[tuple[type[BaseException], str, str], ...] = (
    (
        InvalidLifecycleStateError,
        "LIFECYCLE-005",
        "the agent refused a lifecycle state the adapter returned",
    ),
)


#: Errors of the machine the run is on, not of the adapter: a missing extra, no Docker
#: engine (or no static busybox to build its image from), no Node or npm. A check never
#: reports one as its own error; it ends the run, and the commands exit 2 with its one
#: sentence.
SETUP_ERRORS: tuple[type[Exception], ...] = (
    MissingExtraError,
    SandboxUnavailableError,
    HostSetupError,
)


def setup_error_in(error: BaseException) -> BaseException | None:
    """The set-up error (:data:`SETUP_ERRORS`) ``error`` is, holds or was caused by, if any."""
    for item in _exceptions(error):
        chain: BaseException | None = item
        depth = 0
        while chain is not None and depth < 20:
            if isinstance(chain, SETUP_ERRORS):
                return chain
            # The cause only: an error raised while handling another is not caused by it.
            chain = chain.__cause__
            depth += 1
    return None


def _raise_setup_error_of(contexts: Iterable[CheckContext]) -> None:
    """Raise the first set-up error an adapter of ``contexts`` raised, if any."""
    for context in contexts:
        for adapter in context.adapters:
            for error in adapter.raised():
                setup = setup_error_in(error)
                if setup is not None:
                    raise setup


def _exceptions(error: BaseException) -> Iterator[BaseException]:
    """``error`` and, for groups, their members (depth first)."""
    stack = [error]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        if isinstance(item, BaseExceptionGroup):
            stack.extend(reversed(item.exceptions))


def _is_flaky(error: BaseException) -> bool:
    from hypothesis.errors import Flaky

    return any(isinstance(item, Flaky) for item in _exceptions(error))


def classify(error: BaseException) -> tuple[str, str | None, str]:
    """``(status, failed requirement, message)`` for an exception a check raised.

    A :class:`CheckFailed` (also inside an exception group) fails its requirement; an
    exception a requirement covers (:data:`COVERED_EXCEPTIONS`, also as a cause) fails
    that requirement; any other exception, and an outcome hypothesis could not
    reproduce, is an ``error`` of the check.
    """
    if _is_flaky(error):
        first = str(error).splitlines()[0] if str(error) else ""
        return (
            "error",
            None,
            f"{type(error).__name__}: the check's outcome was not reproducible ({first})",
        )
    for item in _exceptions(error):
        if isinstance(item, CheckFailed):
            return "fail", item.requirement, str(item)
    for item in _exceptions(error):
        chain: BaseException | None = item
        depth = 0
        while chain is not None and depth < 20:
            if isinstance(chain, HostProtocolError):
                # An adapter host broke the host protocol: the rule it broke is the failure.
                return "fail", chain.requirement, str(chain)
            for kind, requirement, why in COVERED_EXCEPTIONS:
                if isinstance(chain, kind):
                    return "fail", requirement, f"[{requirement}] {why}: {chain}"
            chain = chain.__cause__ or chain.__context__
            depth += 1
    return "error", None, f"{type(error).__name__}: {error}"


def _stall_limit(target: AdapterTarget, options: RunOptions) -> float:
    if options.stall_timeout is not None:
        return options.stall_timeout
    return target.capabilities.turn_timeout + 10.0


def run_check(
    check: Check,
    target: AdapterTarget,
    options: RunOptions,
    *,
    scenario: Any = None,
) -> CheckResult:
    """Run one check (or replay one scenario of a property check) and return its result.

    The check runs in a worker thread under a watchdog (see ``_watchdog``): an adapter
    that blocks its event loop, or a check over ``options.check_timeout``, fails with
    ADAPTER-044 and the stack where it was stuck, and the run goes on.

    Raises:
        MissingExtraError: (or another of :data:`SETUP_ERRORS`) the check needed what the
            machine lacks: that is no result of the adapter's.
    """
    level, areas = strongest_level(check.requirements)
    base: dict[str, Any] = {
        "check_id": check.id,
        "title": check.title,
        "tier": check.tier,
        "requirements": check.requirements,
        "level": level,
        "areas": areas,
    }
    skipped = _skip_reason(check, target)
    if skipped is not None:
        return CheckResult(**base, status="skip", message=skipped[0], capability=skipped[1])
    # The target's known deviations count too, so every caller (CLI, selftest reference
    # run, pytest plugin) judges a target the same way.
    expected = options.expectations.merged(target.expectations).xfail.get(check.id)
    started = time.perf_counter()
    examples: int | None = None
    failing_scenario: Any = None
    unshrunk: Any = None
    trace: str | None = None
    monitor = LoopMonitor()
    # A check of what an adapter does with a turn it is asked to abort (ADAPTER-042) is
    # about exactly the hung turn: it keeps starting turns when the run's turns hang.
    turns = options.turns
    refuse_turns = ABORT_REQUIREMENT not in check.requirements
    refused_before = turns.refused if turns is not None else 0
    with _workdir() as workdir:
        context_holder: list[CheckContext] = []

        def new_context() -> CheckContext:
            context = CheckContext(
                target,
                profile=options.profile_settings,
                seed=options.seed,
                sandbox=options.sandbox,
                workdir=workdir,
                turns=turns,
                refuse_turns=refuse_turns,
            )
            context_holder.append(context)
            return context

        def body() -> int | None:
            if check.is_property and scenario is None:
                # A declared failure needs no minimal example: no shrinking for it.
                return _run_property(check, new_context, options, monitor, shrink=expected is None)
            _run_in_loop(check, new_context(), scenario, options, monitor)
            return None

        try:
            outcome = run_guarded(
                body,
                monitor,
                stall_limit=_stall_limit(target, options),
                wall_limit=options.check_timeout,
            )
            if isinstance(outcome, Stuck):
                status, failed = "fail", "ADAPTER-044"
                message = f"[ADAPTER-044] {outcome.reason}; it was stuck here:"
                if outcome.abandoned:
                    message += " (the worker did not stop and was abandoned)"
                trace = outcome.stack
                failing_scenario = scenario
            else:
                examples = outcome
                status, message, failed = "pass", "", None
        except CheckSkipped as skip:
            status, message, failed = "skip", str(skip), None
        except Exception as error:
            setup = setup_error_in(error)
            if setup is not None:
                raise setup from None
            status, failed, message = classify(error)
            trace = format_error(error)
            failing_scenario = getattr(error, "scenario", scenario)
            unshrunk = getattr(error, "unshrunk_scenario", None)
        if status != "pass":
            # The agent turns what the adapter raises into an error part, so a check sees
            # a failed turn; when that was a set-up error, the machine is to blame.
            _raise_setup_error_of(context_holder)
        transcript = context_holder[-1].transcript() if context_holder else []
    duration = time.perf_counter() - started
    # The work directory's name changes from run to run (a pid, a random part): reports
    # and bundles name it by a placeholder so two runs at one seed write the same bytes.
    message = _without_workdirs(message)
    trace = _without_workdirs(trace) if trace is not None else None
    if turns is not None and turns.refused > refused_before:
        # The check tried to start a turn after the run's turns were found to hang: what
        # it observed says nothing about its own requirements.
        assert turns.hung_check is not None
        return hang_blocked_result(check, turns.hung_check, turns.hung_message, duration)
    if turns is not None and status == "fail":
        turns.check_failed(check.id, failed, message)
    if expected is not None:
        if status == "fail":
            status, message = "xfail", f"known bug: {expected} ({message.splitlines()[0]})"
        elif status == "pass":
            status, message = (
                "xpass",
                f"expected to fail ({expected}) but passed: remove the xfail entry",
            )
    bundle = None
    bundled = ("fail", "error", "xfail") if options.bundle_declared else ("fail", "error")
    if status in bundled and options.bundle_dir is not None:
        bundle = _write_bundle(
            options, target, check, message, failed, failing_scenario, transcript, trace, unshrunk
        )
    failed_level = None
    if failed is not None:
        failed_level, _ = strongest_level([failed]) if _known(failed) else (level, ())
    return CheckResult(
        **base,
        status=status,  # type: ignore[arg-type]
        message=message,
        failed_requirement=failed,
        failed_level=failed_level,
        duration_seconds=duration,
        examples=examples,
        replay_command=_replay_command(bundle, target),
        bundle=str(bundle) if bundle else None,
        traceback=trace,
    )


#: A check's work directory in a message or traceback (``_workdir``), resolved or not.
_WORKDIR_PATH = re.compile(rf"(?:/[^\s'\"/]+)*/{re.escape(WORKDIR_PREFIX)}\d+-[^\s'\"/]+")
#: A directory ``tempfile`` named at random (``mkdtemp()``: ``tmp`` and 8 characters).
_RANDOM_TEMP = re.compile(
    rf"{re.escape(tempfile.gettempdir().rstrip('/'))}/tmp[a-z0-9_]{{8}}(?![A-Za-z0-9_])"
)


#: A local sandbox of a session whose id the agent minted (16 random characters).
_MINTED_SESSION = re.compile(r"<workdir>/sandboxes/sessions/([A-Za-z0-9]{16})(?![A-Za-z0-9])")


#: anyio names a cancel scope by its address in a cancellation's message.
_CANCEL_SCOPE = re.compile(r"(?<=cancel scope )[0-9a-f]{6,16}\b")


def _without_workdirs(text: str) -> str:
    """``text`` with the run's random temporary paths as ``<workdir>`` and ``<tmp>``, the
    ids the agent minted for sessions with a local sandbox as ``<session>``, and the
    addresses of cancel scopes as ``<id>``."""
    text = _RANDOM_TEMP.sub("<tmp>", _WORKDIR_PATH.sub("<workdir>", text))
    text = _CANCEL_SCOPE.sub("<id>", text)
    for session in sorted(set(_MINTED_SESSION.findall(text))):
        text = text.replace(session, "<session>")
    return text


def _known(requirement: str) -> bool:
    from harness_testkit.spec import load_requirements

    try:
        load_requirements().get(requirement)
    except KeyError:
        return False
    return True


async def _run_once(check: Check, context: CheckContext, scenario: Any) -> None:
    try:
        if check.run_scenario is not None:
            await check.run_scenario(context, scenario)
        else:
            assert check.run is not None
            await check.run(context)
    except Exception as error:
        broken = _boundary_failure(context)
        if broken is not None:
            raise broken from error
        raise
    broken = _boundary_failure(context)
    if broken is not None:
        raise broken


def _boundary_failure(context: CheckContext) -> HostProtocolError | None:
    """The host protocol failure an out-of-process adapter of the check recorded.

    The agent turns a failed turn into an ``error`` part, so a check would judge the
    adapter's stream where the boundary to it broke (parts lost on the way: HOST-013);
    the adapter's ``boundary_failure`` names the rule instead.
    """
    for adapter in context.adapters:
        failure = getattr(adapter.inner, "boundary_failure", None)
        if isinstance(failure, HostProtocolError):
            return failure
    return None


def _run_in_loop(
    check: Check,
    context: CheckContext,
    scenario: Any,
    options: RunOptions,
    monitor: LoopMonitor,
) -> None:
    async def main() -> None:
        try:
            await monitor.run(lambda: _run_once(check, context, scenario))
        finally:
            # A cancelled check still tears down what it created.
            await context.aclose()

    anyio.run(main, backend=options.backend)


def _run_property(
    check: Check,
    new_context: Callable[[], CheckContext],
    options: RunOptions,
    monitor: LoopMonitor,
    *,
    shrink: bool = True,
) -> int:
    from hypothesis import example, given
    from hypothesis import seed as hypothesis_seed

    assert check.scenarios is not None
    assert check.run_scenario is not None
    probe = new_context()
    strategy = check.scenarios(probe)
    count = [0]
    last_failure: list[Any] = [None]
    budget = ShrinkBudget(options.shrink_seconds)

    turn_timeout = probe.capabilities.turn_timeout

    @given(strategy)
    def run(scenario: Any) -> None:
        budget.check()
        count[0] += 1
        began = time.monotonic()
        try:
            _run_in_loop(check, new_context(), scenario, options, monitor)
        except Exception as error:
            last_failure[0] = scenario
            # A failure that waited out the turn timeout is a hang: every smaller
            # scenario tried would likely wait it out again, so none is tried.
            budget.failed(scenario, error, hung=time.monotonic() - began >= turn_timeout)
            raise

    # Hypothesis runs explicit examples last-decorated first: decorate in reverse so
    # they run in the order the check lists them.
    for scenario in reversed(check.examples):
        run = example(scenario)(run)
    # The seed first (it turns the database off), then the named profile with the
    # database; one key per check and adapter (the hook hypothesis' own `find` uses).
    run = hypothesis_seed(options.seed)(run)
    run = property_settings(options.profile, options.example_database, shrink=shrink)(run)
    run._hypothesis_internal_database_key = database_key(check.id, probe.target.name)  # type: ignore[attr-defined]

    try:
        run()
    except CheckInterrupted:
        raise
    except ShrinkingCut:
        raise budget.cut_error() from None
    except CheckFailed as failure:
        failure.scenario = last_failure[0]
        raise
    except Exception as error:
        # Any other exception (the adapter's own) carries its scenario the same way.
        error.scenario = last_failure[0]  # type: ignore[attr-defined]
        raise
    return count[0]


def _write_bundle(
    options: RunOptions,
    target: AdapterTarget,
    check: Check,
    message: str,
    requirement: str | None,
    scenario: Any,
    transcript: list[dict[str, Any]],
    trace: str | None,
    unshrunk: Any = None,
) -> Path:
    assert options.bundle_dir is not None
    options.bundle_dir.mkdir(parents=True, exist_ok=True)
    path = options.bundle_dir / f"{check.id}.replay.json"
    bundle = {
        "bundleVersion": BUNDLE_VERSION,
        "suiteVersion": __version__,
        "specificationVersion": "harness-v1",
        "adapter": target.name,
        "capabilities": target.capabilities.model_dump(mode="json"),
        "profile": options.profile,
        "seed": options.seed,
        "sandbox": options.sandbox,
        "backend": options.backend,
        "check": check.id,
        "requirements": list(check.requirements),
        "failedRequirement": requirement,
        "message": message,
        "traceback": trace,
        # Evidence stays writable whatever the adapter emitted (deep, huge, not JSON).
        "scenario": bounded_copy(scenario),
        "transcript": bounded_copy(transcript),
    }
    if unshrunk is not None:
        bundle["unshrunkScenario"] = unshrunk
    path.write_text(dump_json(bundle), encoding="utf-8")
    return path


class SelectionError(HarnessUsageError):
    """A selection names a check, area, level, tier or requirement that does not exist."""

    #: The name error parts and reports show for it (its own, not ``Error``).
    name = "SelectionError"


@dataclass(frozen=True)
class Selection:
    """Which checks a run includes; every field is a set of names (empty: no filter).

    A check is selected when it matches every non-empty filter (``checks`` by id,
    ``areas`` by any of its requirements' areas, ``levels`` by its strongest level,
    ``requirements`` by any id it verifies, ``tiers`` by tier) and is not in ``exclude``.
    Prerequisites of selected checks run too (so dependents can be reported blocked).
    """

    checks: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    areas: tuple[str, ...] = ()
    levels: tuple[str, ...] = ()
    requirements: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()


def select_checks(selection: Selection) -> list[Check]:
    """The checks of ``selection`` in dependency order.

    Raises:
        SelectionError: naming the unknown names and where to find the known ones.
    """
    everything = ordered_checks()
    known_areas = {area for item in everything for area in strongest_level(item.requirements)[1]}
    known_requirements = {req for item in everything for req in item.requirements}
    for names, known, what, hint in (
        (selection.checks, set(REGISTRY), "check ids", "harness-testkit check --list"),
        (selection.exclude, set(REGISTRY), "check ids", "harness-testkit check --list"),
        (selection.areas, known_areas, "areas", ", ".join(sorted(known_areas))),
        (selection.levels, {"MUST", "SHOULD", "MAY"}, "levels", "MUST, SHOULD, MAY"),
        (selection.tiers, {"black-box", "scripted"}, "tiers", "black-box, scripted"),
        (
            selection.requirements,
            known_requirements,
            "requirement ids (of any check)",
            "harness-testkit spec requirements",
        ),
    ):
        unknown = [name for name in names if name not in known]
        if unknown:
            raise SelectionError(f"unknown {what}: {', '.join(unknown)}; see {hint}")

    def wanted(item: Check) -> bool:
        level, areas = strongest_level(item.requirements)
        return (
            (not selection.checks or item.id in selection.checks)
            and (not selection.areas or bool(set(areas) & set(selection.areas)))
            and (not selection.levels or level in selection.levels)
            and (
                not selection.requirements
                or bool(set(item.requirements) & set(selection.requirements))
            )
            and (not selection.tiers or item.tier in selection.tiers)
        )

    chosen = [item.id for item in everything if wanted(item)]
    excluded = set(selection.exclude)
    return [item for item in ordered_checks(chosen) if item.id not in excluded]


def result_of(check: Check, **fields: Any) -> CheckResult:
    """A result of ``check``: its id, title, tier, requirements and level, and ``fields``."""
    level, areas = strongest_level(check.requirements)
    return CheckResult(
        check_id=check.id,
        title=check.title,
        tier=check.tier,
        requirements=check.requirements,
        level=level,
        areas=areas,
        **fields,
    )


def blocked_result(check: Check, prerequisite: str, how: str) -> CheckResult:
    """The result of ``check`` when its ``prerequisite`` check did not pass (``how``:
    ``failed``, ``erred`` or ``is blocked``)."""
    return result_of(
        check,
        status="blocked",
        message=f"blocked: prerequisite {prerequisite} {how}",
        blocked_by=prerequisite,
    )


def hang_blocked_result(
    check: Check, hung_check: str, hung_message: str, duration: float
) -> CheckResult:
    """The result of ``check`` when it tried to start a turn after ``hung_check`` hung
    with no turn of the run settled (see ``TurnLedger``)."""
    return result_of(
        check,
        status="blocked",
        message=(
            f"blocked: no turn of this adapter settled in this run and "
            f"{hung_check} hung ({hung_message}); fix that first"
        ),
        blocked_by=hung_check,
        duration_seconds=duration,
    )


class RunInterrupted(BaseException):
    """SIGINT or SIGTERM stopped a run; ``report`` holds the results so far."""

    def __init__(self, report: Report, cause: BaseException) -> None:
        super().__init__(f"interrupted by {type(cause).__name__}")
        self.report = report
        self.cause = cause


def run_suite(
    target: AdapterTarget,
    options: RunOptions,
    *,
    check_ids: Iterable[str] | None = None,
    tiers: Iterable[str] | None = None,
    selection: Selection | None = None,
    on_result: Callable[[CheckResult], None] | None = None,
    on_start: Callable[[Check], None] | None = None,
    jobs: int = 1,
    pool: WorkerPool | None = None,
) -> Report:
    """Run checks in dependency order; dependents of failures are ``blocked``.

    ``on_start`` is called as each check starts and ``on_result`` as each ends (blocked
    checks only end), for progress output.

    With ``jobs`` above 1 (or a ``pool``), checks run in up to that many worker
    processes at once; the results, their order and the report are those of a
    sequential run (see ``_parallel``). A target without a ``recipe`` (one built by
    hand, not by a loader) runs sequentially.

    Raises:
        SelectionError: the selection names an unknown check (or area, level, ...).
        RunInterrupted: SIGINT/SIGTERM arrived; it carries the partial report.
        MissingExtraError: (or another of :data:`SETUP_ERRORS`) the machine lacks what
            the run needs; no check is charged with it.
        ValueError: ``jobs`` is below 1.
    """
    selection = selection or Selection()
    if check_ids is not None:
        selection = Selection(**{**selection.__dict__, "checks": tuple(check_ids)})
    if tiers is not None:
        selection = Selection(**{**selection.__dict__, "tiers": tuple(tiers)})
    checks = select_checks(selection)
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    if (pool is not None or jobs > 1) and target.recipe is not None and len(checks) > 1:
        return _run_suites(
            [(target, options)],
            checks,
            jobs=jobs,
            pool=pool,
            on_start=None if on_start is None else lambda _, check: on_start(check),
            on_result=None if on_result is None else lambda _, result: on_result(result),
        )[0]
    return _run_one(target, options, checks, on_start, on_result)


def _run_one(
    target: AdapterTarget,
    options: RunOptions,
    checks: Sequence[Check],
    on_start: Callable[[Check], None] | None,
    on_result: Callable[[CheckResult], None] | None,
) -> Report:
    """Run ``checks`` one after another in this process."""
    options = _fresh(options)
    results: list[CheckResult] = []
    try:
        _run_sequential(checks, target, options, results, on_start, on_result)
    except (KeyboardInterrupt, Terminated, CheckInterrupted) as error:
        raise RunInterrupted(_report(target, options, results, interrupted=True), error) from None
    return _report(target, options, results)


def _fresh(options: RunOptions) -> RunOptions:
    """``options`` with a fresh turn ledger, its bundle folder rid of an earlier run's."""
    if options.bundle_dir is not None and options.bundle_dir.is_dir():
        # Bundles of an earlier run would be mistaken for this run's failures.
        for stale in options.bundle_dir.glob("*.replay.json"):
            stale.unlink()
    return dataclasses.replace(options, turns=TurnLedger())


def run_suites(
    runs: Sequence[tuple[AdapterTarget, RunOptions]],
    *,
    selection: Selection | None = None,
    jobs: int = 1,
    pool: WorkerPool | None = None,
    on_start: Callable[[int, Check], None] | None = None,
    on_result: Callable[[int, CheckResult], None] | None = None,
    on_report: Callable[[int, Report], None] | None = None,
) -> list[Report]:
    """Run ``selection`` against each ``(target, options)`` of ``runs``: one report each,
    in order, as :func:`run_suite` run after run would give them.

    With ``jobs`` above 1 (or a ``pool``) and every target with a ``recipe``, the checks
    of all runs share the workers: a later run's checks start while an earlier run
    finishes; results and reports still come run after run, in order. The callbacks get
    the run's index; ``on_report`` is called as each run's report is ready.

    Raises:
        SelectionError: the selection names an unknown check (or area, level, ...).
        RunInterrupted: SIGINT/SIGTERM arrived; it carries the partial report of the run
            it stopped (the reports before it went to ``on_report``).
        MissingExtraError: (or another of :data:`SETUP_ERRORS`) the machine lacks what
            the run needs; no check is charged with it.
        ValueError: ``jobs`` is below 1.
    """
    checks = select_checks(selection or Selection())
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    return _run_suites(
        runs,
        checks,
        jobs=jobs,
        pool=pool,
        on_start=on_start,
        on_result=on_result,
        on_report=on_report,
    )


def _run_suites(
    runs: Sequence[tuple[AdapterTarget, RunOptions]],
    checks: Sequence[Check],
    *,
    jobs: int,
    pool: WorkerPool | None,
    on_start: Callable[[int, Check], None] | None = None,
    on_result: Callable[[int, CheckResult], None] | None = None,
    on_report: Callable[[int, Report], None] | None = None,
) -> list[Report]:
    reports: list[Report] = []
    parallel = pool is not None or jobs > 1
    if not parallel or any(target.recipe is None for target, _ in runs):
        for index, (target, options) in enumerate(runs):
            report = _run_one(
                target,
                options,
                checks,
                None if on_start is None else functools.partial(on_start, index),
                None if on_result is None else functools.partial(on_result, index),
            )
            reports.append(report)
            if on_report is not None:
                on_report(index, report)
        return reports
    from ._parallel import SuiteRun, WorkerPool, run_parallel

    suites = [SuiteRun(target, _fresh(options), checks) for target, options in runs]

    def done(index: int) -> None:
        suite = suites[index]
        report = _report(suite.target, suite.options, suite.results)
        reports.append(report)
        if on_report is not None:
            on_report(index, report)

    try:
        with contextlib.ExitStack() as stack:
            if pool is None:
                pool = stack.enter_context(WorkerPool(jobs))
            run_parallel(suites, pool, on_start=on_start, on_result=on_result, on_done=done)
    except (KeyboardInterrupt, Terminated, CheckInterrupted) as error:
        stopped = suites[min(len(reports), len(suites) - 1)]
        partial = _report(stopped.target, stopped.options, stopped.results, interrupted=True)
        raise RunInterrupted(partial, error) from None
    return reports


def _run_sequential(
    checks: Iterable[Check],
    target: AdapterTarget,
    options: RunOptions,
    results: list[CheckResult],
    on_start: Callable[[Check], None] | None,
    on_result: Callable[[CheckResult], None] | None,
) -> None:
    broken: dict[str, str] = {}
    for check in checks:
        blockers = [dep for dep in check.depends_on if dep in broken]
        if blockers:
            result = blocked_result(check, blockers[0], broken[blockers[0]])
            broken[check.id] = "is blocked"
        else:
            if on_start is not None:
                on_start(check)
            result = run_check(check, target, options)
            if result.status in ("fail", "xfail", "error"):
                broken[check.id] = "erred" if result.status == "error" else "failed"
        results.append(result)
        if on_result is not None:
            on_result(result)


def _report(
    target: AdapterTarget,
    options: RunOptions,
    results: list[CheckResult],
    *,
    interrupted: bool = False,
) -> Report:
    warnings = [
        f"expectations entry {name!r} names no check of this suite (stale?)"
        for name in options.expectations.merged(target.expectations).xfail
        if name not in REGISTRY
    ]
    capabilities = resolve_capabilities(
        target.factory, target.capabilities, origin="declared fields, the rest inferred"
    )
    adapter: HarnessAdapter | None = None
    try:
        adapter = target.factory()
        harness_id = str(adapter.harness_id)
    except Exception as error:  # the report still names the failure
        harness_id = f"<factory failed: {type(error).__name__}: {error}>"
    versions, version_warnings = run_versions(target.factory, adapter)
    return Report(
        suite_version=__version__,
        adapter=target.name,
        harness_id=harness_id,
        profile=options.profile,
        max_examples=options.profile_settings.max_examples,
        seed=options.seed,
        sandbox=options.sandbox,
        results=tuple(results),
        warnings=(
            *warnings,
            *(f"capability mismatch: {m}" for m in capabilities.mismatches),
            *version_warnings,
        ),
        capabilities=capabilities.to_json(),
        versions=versions,
        interrupted=interrupted,
    )
