"""``harness-testkit check`` and ``harness-testkit replay``.

Exit codes (both commands): 0 conformant (replay: not reproduced), 1 non-conformant
(replay: reproduced), 2 usage or setup error (a one-line message, no traceback),
3 internal error of the kit; 130 / 143 when SIGINT / SIGTERM stopped the run (the
summary and the report files are still written).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn

import click

from harness_testkit.common import InputError, RunProgress, make_console, read_bounded_text
from harness_testkit.sandbox import require_docker_engine
from harness_testkit.spec import MissingExtraError

from ._adapter._registry import REGISTRY, ordered_checks
from ._baseline import write_baseline
from ._capabilities import AdapterCapabilities
from ._checks import Check
from ._context import PROFILES, AdapterTarget, load_target
from ._html import write_html
from ._hypothesis import DEFAULT_EXAMPLE_DATABASE
from ._parallel import default_jobs
from ._replay import BundleError, load_bundle_model
from ._report import CheckResult, Report
from ._runner import (
    SETUP_ERRORS,
    Expectations,
    RunInterrupted,
    RunOptions,
    Selection,
    SelectionError,
    remove_own_workdirs,
    run_check,
    run_suites,
    select_checks,
)
from ._verdict import TIERS, Gate, RunDocuments, verdict
from ._watchdog import Terminated

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "EXIT_CONFORMANT",
    "EXIT_INTERNAL",
    "EXIT_NONCONFORMANT",
    "EXIT_USAGE",
    "check",
    "replay",
]

EXIT_CONFORMANT = 0
EXIT_NONCONFORMANT = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
_EXIT_SIGNAL = {"KeyboardInterrupt": 128 + 2, "Terminated": 128 + 15}


class _SetupError(Exception):
    """A usage or setup problem (exit 2)."""


#: Errors a command reports as one sentence with exit 2 (usage and set-up errors).
_EXIT_2_ERRORS: tuple[type[Exception], ...] = (
    _SetupError,
    SelectionError,
    BundleError,
    *SETUP_ERRORS,
)


def _current_folder_importable() -> None:
    """Put the current folder first on the import path, as pytest does with its rootdir
    (and ``python -m`` with the current folder): ``check fx:make`` imports ./fx.py."""
    here = os.getcwd()
    if "" not in sys.path and here not in sys.path:
        sys.path.insert(0, here)


def _usage_exit(message: str) -> NoReturn:
    click.echo(f"Error: {message}", err=True)
    sys.exit(EXIT_USAGE)


def _internal_exit(error: BaseException, verbose: bool) -> NoReturn:
    click.echo(
        f"internal error of harness-testkit: {type(error).__name__}: {error} "
        "(please report it; -v prints the traceback)",
        err=True,
    )
    if verbose:
        click.echo("".join(traceback.format_exception(error)), err=True)
    sys.exit(EXIT_INTERNAL)


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` in the main thread (so teardown runs)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Terminated()

    try:
        previous: Any = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (embedded use): leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _load_capabilities(path: Path | None) -> AdapterCapabilities | None:
    if path is None:
        return None
    try:
        read_bounded_text(path, what="capability file")  # a regular file, bounded
        return AdapterCapabilities.from_file(path)
    except InputError as error:
        raise _SetupError(str(error)) from None
    except ValueError as error:  # the file's syntax or pydantic's ValidationError
        first = str(error).replace("\n", "; ")
        raise _SetupError(f"capability file {path}: {first}") from None


def self_targets() -> list[AdapterTarget]:
    """The fake harness in every capability profile (the reference run that must pass)."""
    from ._zoo._good_targets import self_test_targets

    return self_test_targets()


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    """Repeated options and comma lists, flattened (``--check a,b --check c``)."""
    return tuple(item.strip() for value in values for item in value.split(",") if item.strip())


def _probe_factory(target: AdapterTarget) -> None:
    try:
        target.factory()
    except SETUP_ERRORS:
        raise  # a set-up error whose one sentence names what is missing
    except Exception as error:
        raise _SetupError(
            f"the adapter factory {target.name} raised {type(error).__name__}: {error}"
        ) from None


_SELECTION_OPTIONS: list[Callable[[Any], Any]] = [
    click.option(
        "--check", "check_ids", multiple=True, help="Only these check ids (comma lists allowed)."
    ),
    click.option("--exclude", multiple=True, help="Leave out these check ids."),
    click.option(
        "--area", "areas", multiple=True, help="Only checks of these areas (STREAM, ...)."
    ),
    click.option(
        "--level",
        "levels",
        multiple=True,
        help="Only checks whose strongest level is one of these.",
    ),
    click.option(
        "--requirement",
        "requirements",
        multiple=True,
        help="Only checks verifying these requirement ids.",
    ),
    click.option(
        "--tier", "tiers", multiple=True, help="Only checks of these tiers (black-box, scripted)."
    ),
]


@click.command("check")
@click.argument("adapter", required=False)
@click.option("--self", "self_test", is_flag=True, help="Check the fake harness in every profile.")
@click.option(
    "--profile",
    type=click.Choice([*sorted(PROFILES), "all"]),
    default="standard",
    show_default=True,
    help="Conformance depth; `all` runs every profile (one verdict over all).",
)
@click.option(
    "--sandbox", type=click.Choice(["local", "docker"]), default="local", show_default=True
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed for generated scenarios."
)
@click.option(
    "--backend", type=click.Choice(["asyncio", "trio"]), default="asyncio", show_default=True
)
@click.option(
    "--capabilities",
    "capabilities_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="YAML/JSON capability declaration (else the factory's `capabilities`).",
)
@click.option(
    "--settings",
    "settings_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="JSON settings for a Node adapter's factory (npm:NAME@VERSION or PATH#EXPORT).",
)
@click.option(
    "--expectations",
    "expectations_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help=(
        "YAML of known bugs: `xfail: {check_id: reason}` (strict); with --self, merged "
        "over each profile's own known deviations."
    ),
)
@click.option(
    "--require-tier",
    type=click.Choice(list(TIERS)),
    help="Every MUST of the checks of this tier (and below) must be verified: unverified "
    "(skipped or blocked) MUSTs fail the run.",
)
@click.option(
    "--baseline",
    "baseline_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="YAML `unverified: [MUST ids]` that may stay unverified; any other unverified "
    "MUST fails the run.",
)
@click.option(
    "--write-baseline",
    "write_baseline_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the MUSTs this run leaves unverified as a --baseline file; without "
    "--baseline, the run is judged against it.",
)
@click.option(
    "--allow-unverified",
    is_flag=True,
    help="Report unverified MUSTs without failing the run (by default a MUST left "
    "unverified fails it unless the capability file declares the gap as `unsupported` "
    "with a reason, or --baseline lists it).",
)
@click.option(
    "--check-timeout",
    type=click.FloatRange(min=1),
    default=900.0,
    show_default=True,
    help="Wall-time cap of one check in seconds (over it: ADAPTER-044, the run goes on).",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=default_jobs,
    show_default="the number of cores",
    help="Run up to this many checks at once, each in a worker process (1: one after "
    "another in this process); the results and reports are the same.",
)
@_SELECTION_OPTIONS[0]
@_SELECTION_OPTIONS[1]
@_SELECTION_OPTIONS[2]
@_SELECTION_OPTIONS[3]
@_SELECTION_OPTIONS[4]
@_SELECTION_OPTIONS[5]
@click.option("--list", "list_only", is_flag=True, help="List the selected checks and exit.")
@click.option("-v", "--verbose", is_flag=True, help="Print the traceback of every failure.")
@click.option("--junit-xml", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--timings",
    is_flag=True,
    help="Put each check's duration into the JSON report (without it, two runs at one "
    "seed write identical reports).",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Markdown report.",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Self-contained HTML report (several targets side by side).",
)
@click.option(
    "--bundle-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("harness-testkit-out/bundles"),
    show_default=True,
    help="Where failures write replay bundles.",
)
def check(
    adapter: str | None,
    self_test: bool,
    profile: str,
    sandbox: str,
    seed: int,
    backend: str,
    capabilities_path: Path | None,
    settings_path: Path | None,
    expectations_path: Path | None,
    require_tier: str | None,
    baseline_path: Path | None,
    write_baseline_path: Path | None,
    allow_unverified: bool,
    check_timeout: float,
    jobs: int,
    check_ids: tuple[str, ...],
    exclude: tuple[str, ...],
    areas: tuple[str, ...],
    levels: tuple[str, ...],
    requirements: tuple[str, ...],
    tiers: tuple[str, ...],
    list_only: bool,
    verbose: bool,
    junit_xml: Path | None,
    json_path: Path | None,
    timings: bool,
    report_path: Path | None,
    html_path: Path | None,
    bundle_dir: Path,
) -> None:
    """Check ADAPTER against harness-v1.

    ADAPTER is a Python factory (package.module:factory), an npm package at an exact
    version (npm:@ai-sdk/harness-pi@1.0.123, run through the Node adapter host) or a local
    Node adapter (./my-adapter#createMyHarness).

    Exit 0 only when every MUST that applies was verified and holds (or its gap is
    declared: `unsupported` in the capability file, --baseline); 1 when one fails, a
    failing check blocks one, a check errs, or one stays unverified undeclared; 2 on a
    usage or setup error; 3 on an internal error of the kit.
    """
    try:
        selection = Selection(
            checks=_split(check_ids),
            exclude=_split(exclude),
            areas=tuple(item.upper() for item in _split(areas)),
            levels=tuple(item.upper() for item in _split(levels)),
            requirements=_split(requirements),
            tiers=_split(tiers),
        )
        selected = select_checks(selection)
        if list_only:
            for item in selected:
                click.echo(f"{item.id:40} {item.tier:9} {', '.join(item.requirements)}")
            return
        if self_test == (adapter is not None):
            raise _SetupError("give exactly one of ADAPTER (package.module:factory) or --self")
        try:
            expectations = (
                Expectations.load(expectations_path) if expectations_path else Expectations()
            )
            gate = (
                Gate.load_baseline(
                    baseline_path, require_tier=require_tier, allow_unverified=allow_unverified
                )
                if baseline_path
                else Gate(require_tier=require_tier, allow_unverified=allow_unverified)
            )
        except ValueError as error:
            raise _SetupError(str(error)) from None
        if self_test:
            targets = self_targets()
        else:
            assert adapter is not None
            _current_folder_importable()
            targets = [
                _load_any_target(adapter, _load_capabilities(capabilities_path), settings_path)
            ]
        for target in targets:
            _probe_factory(target)
        if sandbox == "docker":
            require_docker_engine()
    except _EXIT_2_ERRORS as error:
        _usage_exit(str(error))
    profiles = sorted(PROFILES) if profile == "all" else [profile]
    reports: list[Report] = []
    code: int | None = None
    console = make_console()
    log = make_console(stderr=True)
    runs = [
        (
            target,
            RunOptions(
                profile=name,
                seed=seed,
                sandbox=sandbox,  # type: ignore[arg-type]
                backend=backend,  # type: ignore[arg-type]
                bundle_dir=bundle_dir / _slug(target.name) / name,
                expectations=expectations,
                check_timeout=check_timeout,
                example_database=DEFAULT_EXAMPLE_DATABASE,
            ),
        )
        for target in targets
        for name in profiles
    ]
    bars = _Bars(log, runs, total=len(selected))

    def reported(index: int, report: Report) -> None:
        bars.close()
        report.print_console(verbose=verbose, console=console)
        reports.append(report)

    try:
        with _sigterm_raises():
            try:
                run_suites(
                    runs,
                    selection=selection,
                    jobs=jobs,
                    on_start=bars.started,
                    on_result=bars.finished,
                    on_report=reported,
                )
            finally:
                bars.close()
    except RunInterrupted as interrupted:
        reports.append(interrupted.report)
        interrupted.report.print_console(verbose=verbose, console=console)
        code = _EXIT_SIGNAL.get(type(interrupted.cause).__name__, 130)
    except (KeyboardInterrupt, Terminated) as error:  # between checks: no partial report
        code = _EXIT_SIGNAL[type(error).__name__]
        if not reports:
            click.echo("INTERRUPTED: no check finished", err=True)
            remove_own_workdirs()
            sys.exit(code)
    except SETUP_ERRORS as error:  # the machine, not the adapter: no check is charged
        _close_node_hosts()
        _usage_exit(str(error))
    except Exception as error:
        _internal_exit(error, verbose)
    _close_node_hosts()
    if write_baseline_path is not None:
        gate = _write_baseline(write_baseline_path, reports, gate, given=baseline_path)
    outcome = verdict(reports, gate)
    documents = RunDocuments(reports=tuple(reports), verdict=outcome, timings=timings, gate=gate)
    try:
        documents.write(json_path=json_path, junit_path=junit_xml, markdown_path=report_path)
        if html_path is not None:
            write_html(html_path, [documents.report_json(report) for report in reports])
    except OSError as error:
        _usage_exit(f"cannot write a report: {error}")
    for warning in outcome.warnings:
        click.echo(f"warning: {warning}")
    if gate.baseline is not None and outcome.required_unverified:
        count = len(outcome.required_unverified)
        click.echo(
            f"{count} required MUST{' is' if count == 1 else 's are'} unverified and not in "
            f"the baseline {baseline_path or write_baseline_path}:"
        )
    for detail in outcome.details:
        click.echo(detail)
    click.echo(outcome.line)
    if code is None:
        code = EXIT_CONFORMANT if outcome.ok else EXIT_NONCONFORMANT
    else:  # interrupted: nothing of the run may stay behind
        remove_own_workdirs()
    sys.exit(code)


class _Bars:
    """The progress of several runs, one after another: a run's bar opens as its first
    check starts (or ends) and closes as its report is ready."""

    def __init__(
        self, log: Console, runs: list[tuple[AdapterTarget, RunOptions]], *, total: int
    ) -> None:
        self._log = log
        self._runs = runs
        self._total = total
        self._open: tuple[int, RunProgress] | None = None

    def _bar(self, index: int) -> RunProgress:
        if self._open is None or self._open[0] != index:
            self.close()
            target, options = self._runs[index]
            title = f"{target.name} ({options.profile})"
            bar = RunProgress(self._log, total=self._total, title=title, unit="checks")
            self._open = (index, bar.__enter__())
        return self._open[1]

    def started(self, index: int, check: Check) -> None:
        """A check of run ``index`` started."""
        self._bar(index).started(check.id)

    def finished(self, index: int, result: CheckResult) -> None:
        """A check of run ``index`` ended."""
        _progress_line(self._bar(index), result)

    def close(self) -> None:
        """Close the open bar, if any (idempotent)."""
        if self._open is not None:
            _, bar = self._open
            self._open = None
            bar.__exit__(None, None, None)


def _progress_line(progress: RunProgress, result: CheckResult) -> None:
    """One finished check: how it ended, the requirement it failed or what blocked it."""
    detail = ""
    if result.failed_requirement:
        detail = result.failed_requirement
    elif result.status == "blocked" and result.blocked_by:
        detail = f"by {result.blocked_by}"
    elif result.status == "skip" and result.capability:
        detail = f"needs {result.capability}"
    if result.status not in ("skip", "blocked"):
        detail = f"{detail} ({result.duration_seconds:.1f} s)".strip()
    progress.finished(
        result.check_id,
        result.status,
        detail,
        notable=result.status in ("fail", "error", "xpass"),
    )


def _write_baseline(path: Path, reports: list[Report], gate: Gate, *, given: Path | None) -> Gate:
    """Write the run's baseline; without ``--baseline``, the run is judged against it."""
    if any(report.interrupted for report in reports):
        click.echo(f"warning: the run was interrupted: the baseline {path} was not written")
        return gate
    try:
        ids = write_baseline(path, reports)
    except OSError as error:
        _usage_exit(f"cannot write the baseline: {error}")
    click.echo(
        f"wrote the baseline {path}: {len(ids)} unverified MUST{'' if len(ids) == 1 else 's'}"
    )
    if given is not None:
        return gate
    return dataclasses.replace(gate, baseline=ids)


def _close_node_hosts() -> None:
    """End the Node adapter hosts of the run (and what they started), if it had any."""
    node = sys.modules.get("harness_testkit.adapters.node")
    if node is not None:
        node.close_hosts()


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "-" for c in name)


@click.command("replay")
@click.argument("bundle", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--adapter",
    "adapter_spec",
    help="The adapter to import (package.module:factory); it must match the bundle's.",
)
@click.option(
    "--allow-adapter",
    "allowed",
    multiple=True,
    help="Adapters the bundle may name and replay may import (repeatable).",
)
@click.option("-v", "--verbose", is_flag=True, help="Print the recorded and the new traceback.")
def replay(bundle: Path, adapter_spec: str | None, allowed: tuple[str, ...], verbose: bool) -> None:
    """Rerun the failure recorded in BUNDLE, offline.

    Replay never imports code a bundle names on its own: the bundle's adapter must be a
    ``self:<profile>`` target, the --adapter given, or one of --allow-adapter.
    Exit 1 when the failure reproduces, 0 when it does not, 2 for a bad bundle.
    """
    try:
        data = load_bundle_model(bundle)
        ordered_checks()  # registers the built-in checks
        item = REGISTRY.get(data.check)
        if item is None:
            raise _SetupError(
                f"{bundle}: the bundle's check {data.check!r} is not a check of this suite "
                f"({len(REGISTRY)} known; see harness-testkit check --list)"
            )
        try:
            capabilities = AdapterCapabilities.model_validate(data.capabilities)
        except ValueError as error:
            first = str(error).replace("\n", "; ")
            raise _SetupError(f"{bundle}: invalid capabilities: {first}") from None
        _current_folder_importable()
        # A replay reproduces the recorded failure: the target's declared deviations
        # (strict xfails) do not turn a reproduced failure into an expected one.
        target = dataclasses.replace(
            _replay_target(data.adapter, capabilities, adapter_spec, allowed), expectations=None
        )
        _probe_factory(target)
        if data.sandbox == "docker":
            require_docker_engine()
    except _EXIT_2_ERRORS as error:
        _usage_exit(str(error))
    options = RunOptions(
        profile=data.profile,
        seed=data.seed,
        sandbox=data.sandbox,
        backend=data.backend,
    )
    if verbose and data.traceback:
        click.echo("recorded traceback:", err=True)
        click.echo(data.traceback, err=True)
    try:
        with _sigterm_raises():
            result = run_check(item, target, options, scenario=data.scenario)
    except (KeyboardInterrupt, Terminated) as error:
        remove_own_workdirs()
        sys.exit(_EXIT_SIGNAL.get(type(error).__name__, 130))
    except SETUP_ERRORS as error:  # the machine, not the adapter
        _close_node_hosts()
        _usage_exit(str(error))
    except Exception as error:
        _internal_exit(error, verbose)
    click.echo(result.model_dump_json(indent=2))
    if verbose and result.traceback:
        click.echo("traceback of this run:", err=True)
        click.echo(result.traceback, err=True)
    if result.status == "fail":
        same = result.failed_requirement == data.failed_requirement
        click.echo(f"{'reproduced' if same else 'failed differently'}: {result.message}", err=True)
        sys.exit(EXIT_NONCONFORMANT)
    if result.status == "error":
        click.echo(f"the check erred: {result.message}", err=True)
        sys.exit(EXIT_NONCONFORMANT)
    if result.status == "skip":
        _usage_exit(f"the check does not apply to the bundle's capabilities: {result.message}")
    click.echo("not reproduced: the check passes now", err=True)


def _replay_target(
    name: str,
    capabilities: AdapterCapabilities,
    adapter_spec: str | None,
    allowed: tuple[str, ...],
) -> AdapterTarget:
    if name.startswith("self:"):
        matches = [t for t in self_targets() if t.name == name]
        if not matches:
            known = ", ".join(t.name for t in self_targets())
            raise _SetupError(f"the bundle names {name!r}, not a self target ({known})")
        return matches[0]
    if name != adapter_spec and name not in allowed:
        raise _SetupError(
            f"the bundle names adapter {name!r}; replay imports it only when you pass "
            f"--adapter {name} (or --allow-adapter {name})"
        )
    return _load_any_target(name, capabilities, None)


def _load_any_target(
    spec: str, capabilities: AdapterCapabilities | None, settings_path: Path | None
) -> AdapterTarget:
    """A Python factory, or a Node adapter through the adapter host (set-up errors: exit 2)."""
    from harness_testkit.spec import HostProtocolError, HostSetupError

    try:
        from harness_testkit.adapters.node import is_node_target, load_node_target, read_settings
    except ImportError as error:
        raise _SetupError(
            str(MissingExtraError("Checking a Node adapter", "node", missing=error.name))
        ) from None
    if not is_node_target(spec):
        if settings_path is not None:
            raise _SetupError("--settings applies to Node adapters only (npm:... or PATH#EXPORT)")
        try:
            return load_target(spec, capabilities)
        except ValueError as error:
            raise _SetupError(str(error)) from None
    try:
        settings = read_settings(settings_path) if settings_path is not None else None
        return load_node_target(spec, settings=settings, capabilities=capabilities)
    except (HostSetupError, HostProtocolError) as error:
        raise _SetupError(f"{spec}: {error}") from None
