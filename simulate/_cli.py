"""``harness-testkit simulate``: run a scenario offline and watch it in the terminal.

One session is rendered live (text as it arrives, tool calls and results, approvals,
file changes, compactions, steps and usage); many sessions show a progress bar. Exit
status: 0 when every session completed, 1 when one failed, 2 for a bad scenario or
usage, 130 when interrupted.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, Literal

import anyio
import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from harness_testkit.common import RunProgress, make_console
from harness_testkit.sandbox import require_docker_engine
from harness_testkit.spec import (
    ConsumerPart,
    MissingExtraError,
    SandboxUnavailableError,
    is_execution_denied,
)

from ._engine import ClusterUnavailableError, DaskEngine, require_dask, simulate_sharded
from ._loading import LoadedScenario, builtin_scenario_path, builtin_scenarios, load_scenario
from ._runner import (
    SessionReport,
    SimulationObserver,
    SimulationOptions,
    SimulationSummary,
)
from ._runner import (
    simulate as run_simulation,
)
from ._scenario import HostAction, ScenarioError, action_name, render_json_schema

__all__ = ["simulate"]

_STARTER = "quickstart"
_EXIT_BAD_SCENARIO = 2
_EXIT_SETUP = 2
_EXIT_INTERRUPTED = 130
_SCHEMA_FILE = "scenario.schema.json"


def _short(value: Any, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


class LiveRenderer(SimulationObserver):
    """Renders one session's stream as it arrives."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._inline = False  # a text or reasoning block is being written
        self._closed = False

    def _print(self, *objects: Any, **options: Any) -> None:
        if self._closed:
            return
        try:
            self.console.print(*objects, **options)
        except SystemExit:
            # rich turns a closed stdout (`| head`) into SystemExit; the run goes on and
            # its transcripts are still written.
            self._closed = True

    def _line(self, text: str) -> None:
        if self._inline:
            self._print()
            self._inline = False
        self._print(text, highlight=False)

    def action_started(self, session_id: str, index: int, action: HostAction) -> None:
        """Print the host action."""
        wire = action.to_wire()
        name = action_name(action)
        value = wire.pop(name if name in wire else next(iter(wire)))
        rest = f" {_short(wire)}" if wire else ""
        shown = "" if value is True else f": {escape(_short(value))}"
        self._line(f"[bold cyan]» {name}{shown}[/]{escape(rest)}")

    def part(self, session_id: str, index: int, part: ConsumerPart) -> None:
        """Print one consumer part."""
        wire = part.to_wire()
        kind = part.type
        if kind in ("text-delta", "reasoning-delta"):
            style = None if kind == "text-delta" else "dim italic"
            self._print(wire["text"], end="", style=style, markup=False, highlight=False)
            self._inline = True
        elif kind in ("text-end", "reasoning-end"):
            if self._inline:
                self._print()
                self._inline = False
        elif kind == "tool-call":
            name = wire["toolName"]
            if name == "fileChange":
                change = wire.get("input", {})
                self._line(
                    f"[magenta]✎ file {escape(str(change.get('event')))}[/] "
                    f"{escape(str(change.get('path')))}"
                )
            elif name != "compaction":
                where = " (runtime)" if wire.get("providerExecuted") else ""
                self._line(f"[blue]→ {escape(name)}[/]{where} {escape(_short(wire.get('input')))}")
        elif kind == "tool-result":
            name = wire["toolName"]
            if name == "compaction":
                output = wire.get("output") or {}
                self._line(
                    f"[magenta]⟳ compaction[/] {escape(str(output.get('tokensBefore')))} → "
                    f"{escape(str(output.get('tokensAfter')))} tokens"
                )
            elif is_execution_denied(wire.get("output")):
                reason = wire["output"].get("reason")
                shown = f" {escape(_short(reason))}" if isinstance(reason, str) else ""
                self._line(f"[red]⊘ {escape(name)} denied[/]{shown}")
            elif name != "fileChange":
                self._line(f"[green]← {escape(name)}[/] {escape(_short(wire.get('output')))}")
        elif kind == "tool-error":
            self._line(f"[red]✗ {escape(wire['toolName'])}[/] {escape(_short(wire.get('error')))}")
        elif kind == "tool-approval-request":
            call = wire.get("toolCall", {})
            self._line(
                f"[yellow]? approval requested[/] {escape(str(call.get('toolName')))} "
                f"{escape(_short(call.get('input')))}"
            )
        elif kind == "tool-approval-response":
            verdict = "[green]approved[/]" if wire.get("approved") else "[red]denied[/]"
            self._line(f"  {verdict} {escape(str(wire.get('toolCall', {}).get('toolName')))}")
        elif kind == "finish-step":
            usage = wire.get("usage", {})
            self._line(
                f"[dim]· step {escape(str(wire.get('finishReason')))} "
                f"(in {usage.get('inputTokens', '-')}, out {usage.get('outputTokens', '-')})[/]"
            )
        elif kind == "finish":
            usage = wire.get("totalUsage", {})
            self._line(
                f"[dim]■ finish {escape(str(wire.get('finishReason')))} "
                f"(in {usage.get('inputTokens', '-')}, out {usage.get('outputTokens', '-')})[/]"
            )
        elif kind in ("error", "abort"):
            self._line(
                f"[bold red]! {kind}[/] {escape(_short(wire.get('error') or wire.get('reason')))}"
            )
        elif kind == "raw":
            self._line(f"[dim]raw {escape(_short(wire.get('rawValue')))}[/]")

    def action_finished(self, session_id: str, index: int, record: Mapping[str, Any]) -> None:
        """Say where the turn is when it is not idle."""
        state = record.get("turnState")
        if record.get("carried"):
            self._line(
                f"[dim]  (state carried as {record['carried']} to process {record['process']})[/]"
            )
        if state and state != "idle":
            self._line(f"[dim]  turn {escape(str(state))}[/]")

    def session_finished(self, report: SessionReport) -> None:
        """Report a failure."""
        if report.error:
            self._line(f"[bold red]session {report.session_id} failed:[/] {escape(report.error)}")


class ProgressRenderer(SimulationObserver):
    """Progress over sessions: a bar on a terminal, a line per finished session in a log."""

    def __init__(self, progress: RunProgress) -> None:
        self.progress = progress

    def session_started(self, session_id: str) -> None:
        """Name the session on the bar."""
        self.progress.started(session_id)

    def session_finished(self, report: SessionReport) -> None:
        """Advance the bar (a failure is shown with why)."""
        failed = report.status == "failed"
        why = (report.error or "").splitlines()[0] if failed and report.error else ""
        self.progress.finished(report.session_id, report.status, why, notable=failed)


def _print_summary(console: Console, summary: SimulationSummary) -> None:
    wire = summary.to_wire(with_sessions=False)
    table = Table(title=f"simulation {summary.scenario} (seed {summary.seed})", show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    table.add_row("status", str(wire["status"]))
    table.add_row("sessions", f"{wire['sessionsRun']} of {wire['sessionsPlanned']}")
    for key, value in wire["totals"].items():
        table.add_row(key, str(value))
    latency = wire["latency"]
    for key in ("p50", "p90", "p99"):
        value = latency[key]
        table.add_row(f"turn latency {key}", "-" if value is None else f"{value * 1000:.1f} ms")
    # The run's wall time, printed so that any duration quoted for a run comes from here.
    table.add_row("wall time", f"{wire['durationSeconds']:.2f} s")
    console.print(table)
    console.print(
        f"transcripts: {summary.out_dir / 'sessions'}   summary: {summary.out_dir / 'summary.json'}",
        highlight=False,
    )


def _sigterm_interrupts() -> Any:
    """Make SIGTERM interrupt like SIGINT (main thread only); returns the old handler."""

    def interrupt(signum: int, frame: Any) -> None:
        # Re-raised as SIGINT, which the event loop (asyncio's runner, trio) turns into a
        # clean cancellation of the run.
        os.kill(os.getpid(), signal.SIGINT)

    try:
        return signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: leave signals alone
        return None


def _restore_sigterm(previous: Any) -> None:
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


def _interrupted(error: BaseException) -> bool:
    if isinstance(error, KeyboardInterrupt):
        return True
    if isinstance(error, BaseExceptionGroup):
        return any(_interrupted(inner) for inner in error.exceptions)
    return False


def _exit_code(error: BaseException) -> int | None:
    """The status of a ``SystemExit`` raised inside the run (rich on a broken pipe)."""
    if isinstance(error, SystemExit):
        return error.code if isinstance(error.code, int) else 1
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            code = _exit_code(inner)
            if code is not None:
                return code
    return None


def _write_example(path: Path, force: bool) -> None:
    if path.exists() and not force:
        raise click.UsageError(f"{path} exists; pass --force to overwrite it.")
    text = builtin_scenario_path(_STARTER).read_text(encoding="utf-8")
    # The starter's `$schema` names scenario.schema.json next to it: write that too.
    schema_path = path.with_name(_SCHEMA_FILE)
    schema = render_json_schema()
    if schema_path.exists() and not force and schema_path.read_text(encoding="utf-8") != schema:
        raise click.UsageError(f"{schema_path} exists; pass --force to overwrite it.")
    path.write_text(text, encoding="utf-8")
    schema_path.write_text(schema, encoding="utf-8")
    click.echo(
        f"Wrote {path} (and {schema_path}, its $schema). "
        f"Run it with: harness-testkit simulate {path}"
    )


def _load(scenario: Path | None, builtin: str | None) -> LoadedScenario:
    if builtin is not None:
        return load_scenario(builtin_scenario_path(builtin))
    assert scenario is not None
    return load_scenario(scenario)


@click.command("simulate")
@click.argument("scenario", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--builtin",
    metavar="NAME",
    help="Run a scenario shipped with the kit (see --list), e.g. quickstart.",
)
@click.option("--list", "list_only", is_flag=True, help="List the shipped scenarios and exit.")
@click.option(
    "--sandbox",
    type=click.Choice(["local", "docker"]),
    default=None,
    help="Sandbox provider (default: the scenario's, else local).",
)
@click.option("--sessions", type=click.IntRange(min=1), default=None, help="Number of sessions.")
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=None,
    help="Sessions run at once.",
)
@click.option("--seed", type=click.IntRange(min=0), default=None, help="Simulation seed.")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("harness-testkit-out/simulate"),
    show_default=True,
    help="Where sessions/<id>.jsonl and summary.json are written.",
)
@click.option(
    "--example",
    "example",
    is_flag=False,
    flag_value="scenario.yaml",
    default=None,
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="[PATH]",
    help="Write a starter scenario (default scenario.yaml) and exit.",
)
@click.option("--force", is_flag=True, help="With --example: overwrite an existing file.")
@click.option(
    "--schema", "print_schema", is_flag=True, help="Print the scenario JSON Schema and exit."
)
@click.option(
    "--backend",
    type=click.Choice(["asyncio", "trio"]),
    default="asyncio",
    show_default=True,
    help="anyio backend.",
)
@click.option(
    "--quiet", is_flag=True, help="No live rendering; the summary and why sessions failed."
)
@click.option(
    "--engine",
    type=click.Choice(["local", "dask"]),
    default="local",
    show_default=True,
    help="local: this process. dask: sessions sharded over a Dask cluster (the `dask` "
    "extra); same transcripts.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="With --engine dask and no --scheduler: worker processes of the local cluster "
    "(default: the number of cores).",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    default=None,
    help="With --engine dask: a running scheduler (e.g. tcp://10.0.0.5:8786) instead of "
    "a local cluster; its workers need harness-testkit[dask].",
)
@click.option(
    "--timings",
    is_flag=True,
    help="Also write wall-clock latencies into the transcripts (latencySeconds) and "
    "per-session latencies into summary.json; without it two runs at one seed write "
    "byte-identical transcripts.",
)
def simulate(
    scenario: Path | None,
    builtin: str | None,
    list_only: bool,
    sandbox: Literal["local", "docker"] | None,
    sessions: int | None,
    concurrency: int | None,
    seed: int | None,
    out_dir: Path,
    example: Path | None,
    force: bool,
    print_schema: bool,
    backend: Literal["asyncio", "trio"],
    quiet: bool,
    engine: Literal["local", "dask"],
    workers: int | None,
    scheduler: str | None,
    timings: bool,
) -> None:
    """Run the reference agent on the fake harness as SCENARIO describes.

    One session is rendered live; many run concurrently with a progress bar. Every
    session writes OUT/sessions/<session-id>.jsonl; the run writes OUT/summary.json.
    """
    if example is not None:
        _write_example(example, force)
        return
    if print_schema:
        click.echo(render_json_schema(), nl=False)
        return
    if list_only:
        for name in builtin_scenarios():
            click.echo(name)
        return
    if engine != "dask" and (workers is not None or scheduler is not None):
        raise click.UsageError("--workers and --scheduler need --engine dask.")
    if (scenario is None) == (builtin is None):
        raise click.UsageError(
            "Give a SCENARIO file or --builtin NAME (try `--builtin quickstart`, or "
            "`--example` to write a starter scenario)."
        )
    try:
        loaded = _load(scenario, builtin)
    except ScenarioError as error:
        click.echo(f"Error: invalid scenario {error.file}:", err=True)
        for line in str(error).splitlines():
            click.echo(f"  {line}", err=True)
        sys.exit(_EXIT_BAD_SCENARIO)
    try:  # set-up errors (no extra, no engine), before any session starts
        if (sandbox or loaded.scenario.sandbox) == "docker":
            require_docker_engine()
        if engine == "dask":
            require_dask()
    except (MissingExtraError, SandboxUnavailableError) as error:
        click.echo(f"Error: {error}", err=True)
        sys.exit(_EXIT_SETUP)
    options = SimulationOptions(
        sandbox=sandbox,
        sessions=sessions,
        concurrency=concurrency,
        seed=seed,
        out_dir=out_dir,
        timings=timings,
    )
    console = make_console()
    count = sessions if sessions is not None else loaded.scenario.sessions
    progress: RunProgress | None = None
    observer: SimulationObserver | None = None
    if not quiet and count == 1 and engine == "local":
        observer = LiveRenderer(console)
    elif not quiet:
        progress = RunProgress(
            make_console(stderr=True), total=count, title=loaded.name, unit="sessions"
        )
        observer = ProgressRenderer(progress)
    # SIGTERM takes the KeyboardInterrupt path: sessions cancelled, sandboxes destroyed,
    # summary.json written with status interrupted.
    previous_term = _sigterm_interrupts()
    run: Callable[[], SimulationSummary]
    if engine == "dask":
        # Every worker of the local cluster is stopped before this returns or raises.
        run = partial(
            simulate_sharded,
            loaded,
            options,
            observer,
            engine=DaskEngine(scheduler=scheduler, workers=workers),
            backend=backend,
        )
    else:
        run = partial(
            anyio.run, partial(run_simulation, loaded, options, observer), backend=backend
        )
    try:
        if progress is not None:
            with progress:
                summary = run()
        else:
            summary = run()
    except ClusterUnavailableError as error:  # a set-up error: nothing ran
        _restore_sigterm(previous_term)
        click.echo(f"Error: {error}", err=True)
        sys.exit(_EXIT_SETUP)
    except BaseException as error:
        _restore_sigterm(previous_term)
        code = _exit_code(error)
        if code is not None:
            sys.exit(code)  # the terminal went away (a closed pipe): nothing to report
        if not _interrupted(error):
            raise
        console.print(
            f"\n[yellow]Interrupted.[/] Sandboxes destroyed; transcripts so far kept in "
            f"{out_dir / 'sessions'}.",
            highlight=False,
        )
        sys.exit(_EXIT_INTERRUPTED)
    _restore_sigterm(previous_term)
    _print_summary(console, summary)
    if quiet:
        # Nothing was rendered live: say why sessions failed (the first few, which the
        # summary keeps; the others are in their transcripts).
        for report in summary.failures:
            console.print(
                f"[red]session {report.session_id} failed:[/] {escape(report.error or '')}"
            )
        more = summary.ended["failed"] - len(summary.failures)
        if more > 0:
            console.print(f"... and {more} more failed sessions")
    if summary.status != "completed":
        sys.exit(1)
