"""``harness-testkit selftest``: the kill matrix that proves the suite catches bugs.

The whole suite runs against every mutant of the zoo (``_catalog.py``). A mutant is
*killed* when at least one check fails, and *killed by its own requirement* when a
failing check reported the mutant's requirement id or lists it among the requirements
it verifies. A mutant that survives, or dies only of other requirements, points at a
requirement the suite under-tests. The unmutated fake harness runs too, in every
profile (:func:`~harness_testkit.conformance.self_test_targets`): any failure there is
a false positive. Adapter-facing MUSTs and SHOULDs that a check verifies but no mutant
breaks are listed as unproven; SHOULDs no check verifies are listed as unchecked. Every
check runs under the zoo's cap (:data:`ZOO_CHECK_TIMEOUT`): a mutant that hangs is
judged by ADAPTER-044 failures, never by a long wait.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import click

from harness_testkit.common import RunProgress, make_console
from harness_testkit.spec import load_requirements

from .._adapter._registry import ordered_checks, reporting_checks
from .._context import AdapterTarget
from .._report import CheckResult, Report
from .._runner import RunOptions, run_suite
from ._catalog import mutant_names, mutants
from ._good_targets import self_test_targets
from ._machinery import Mutant

__all__ = [
    "ZOO_CHECK_TIMEOUT",
    "FalsePositive",
    "Kill",
    "MutantOutcome",
    "SelftestReport",
    "judge",
    "run_mutant",
    "run_mutant_targeted",
    "run_selftest",
    "selftest",
    "unchecked_requirements",
    "unproven_requirements",
    "zoo_options",
]

Verdict = Literal["killed", "killed-elsewhere", "survived"]


@dataclass(frozen=True)
class Kill:
    """A failing check: which requirement it reported and which ones it verifies."""

    check_id: str
    failed_requirement: str | None
    requirements: tuple[str, ...]
    message: str
    #: The level of the failed requirement (``MUST`` fails the run's gate).
    failed_level: str | None = None

    def names(self, requirement: str) -> bool:
        """Whether this failure reports ``requirement`` itself.

        A check that merely lists the requirement but failed on another one is an
        incidental kill: it does not prove the suite sees the defect.
        """
        return self.failed_requirement == requirement

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "check": self.check_id,
            "failedRequirement": self.failed_requirement,
            "requirements": list(self.requirements),
            "message": self.message,
        }


@dataclass(frozen=True)
class MutantOutcome:
    """How the suite judged one mutant."""

    mutant: Mutant
    kills: tuple[Kill, ...]
    seconds: float

    @property
    def own_kills(self) -> tuple[Kill, ...]:
        """The failures that name the mutant's requirement."""
        return tuple(kill for kill in self.kills if kill.names(self.mutant.requirement))

    @property
    def verdict(self) -> Verdict:
        """``killed`` (by its own requirement), ``killed-elsewhere`` or ``survived``."""
        if self.own_kills:
            return "killed"
        return "killed-elsewhere" if self.kills else "survived"

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        mutant = self.mutant
        return {
            "name": mutant.name,
            "requirement": mutant.requirement,
            "area": mutant.area,
            "profile": mutant.profile,
            "description": mutant.description,
            "verdict": self.verdict,
            "killedBy": [kill.to_json() for kill in self.kills],
            "seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class FalsePositive:
    """A check that failed on the unmutated fake harness."""

    target: str
    kill: Kill

    def to_json(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"target": self.target, **self.kill.to_json()}


@dataclass(frozen=True)
class SelftestReport:
    """The kill matrix, the reference run and the unproven requirements."""

    profile: str
    seed: int
    outcomes: tuple[MutantOutcome, ...]
    reference_targets: tuple[str, ...] = ()
    false_positives: tuple[FalsePositive, ...] = ()
    unproven: tuple[str, ...] = ()
    #: Adapter-facing SHOULDs no check verifies (no mutant could prove them).
    unchecked: tuple[str, ...] = ()
    seconds: float = 0.0
    #: Requirement ids whose mutants (at least one) are all not killed by them.
    under_tested: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Every mutant killed by its own requirement and no false positive."""
        return not self.false_positives and all(o.verdict == "killed" for o in self.outcomes)

    def to_json(self) -> str:
        """The JSON report."""
        counts = {verdict: 0 for verdict in ("killed", "killed-elsewhere", "survived")}
        for outcome in self.outcomes:
            counts[outcome.verdict] += 1
        data = {
            "profile": self.profile,
            "seed": self.seed,
            "ok": self.ok,
            "counts": counts,
            "mutants": [outcome.to_json() for outcome in self.outcomes],
            "reference": {
                "targets": list(self.reference_targets),
                "falsePositives": [item.to_json() for item in self.false_positives],
            },
            "unproven": list(self.unproven),
            "unchecked": list(self.unchecked),
            "underTested": list(self.under_tested),
            "seconds": round(self.seconds, 3),
        }
        return json.dumps(data, indent=2, sort_keys=True)

    def print_console(self) -> None:
        """The kill matrix and the verdict, with rich."""
        from rich.table import Table

        console = make_console()
        table = Table(title=f"harness-v1 suite kill matrix ({self.profile}, seed {self.seed})")
        # Names and ids never fold mid-word; the killers wrap between words.
        for column in ("mutant", "requirement", "verdict"):
            table.add_column(column, no_wrap=True)
        table.add_column("killed by", max_width=80)
        table.add_column("seconds", no_wrap=True)
        styles = {"killed": "green", "killed-elsewhere": "yellow", "survived": "bold red"}
        for outcome in self.outcomes:
            table.add_row(
                outcome.mutant.name,
                outcome.mutant.requirement,
                f"[{styles[outcome.verdict]}]{outcome.verdict}[/]",
                _killers(outcome),
                f"{outcome.seconds:.1f}",
            )
        console.print(table)
        if self.reference_targets:
            if self.false_positives:
                reference = Table(title="false positives on the unmutated fake harness")
                for column in ("target", "check", "requirement", "message"):
                    reference.add_column(column, overflow="fold")
                for item in self.false_positives:
                    reference.add_row(
                        item.target,
                        item.kill.check_id,
                        item.kill.failed_requirement or "",
                        item.kill.message.splitlines()[0][:160] if item.kill.message else "",
                    )
                console.print(reference)
            else:
                console.print(
                    f"[green]no false positives[/] on {', '.join(self.reference_targets)}"
                )
        if self.unproven:
            console.print(
                f"[yellow]unproven[/] (adapter-facing, no mutant): {', '.join(self.unproven)}",
                soft_wrap=True,
            )
        if self.unchecked:
            console.print(
                f"[yellow]unchecked[/] (adapter-facing SHOULD, no check): "
                f"{', '.join(self.unchecked)}",
                soft_wrap=True,
            )
        if self.under_tested:
            console.print(
                f"[red]under-tested[/] (no mutant killed by them): {', '.join(self.under_tested)}",
                soft_wrap=True,
            )
        counts = {verdict: 0 for verdict in styles}
        for outcome in self.outcomes:
            counts[outcome.verdict] += 1
        console.print(
            ", ".join(f"{count} {verdict}" for verdict, count in counts.items())
            + f" of {len(self.outcomes)} mutants; {len(self.false_positives)} false positives"
            + f" ({self.seconds:.0f} s)"
        )
        console.print(
            "[bold green]PASS[/]: every mutant is killed by its own requirement"
            if self.ok
            else "[bold red]FAIL[/]: the suite misses a mutant or fails the unmutated fake"
        )


def _killers(outcome: MutantOutcome, shown: int = 3) -> str:
    # Own kills first (bold), then the others; a long tail is counted, not listed.
    own = outcome.own_kills
    ordered = [*own, *(kill for kill in outcome.kills if kill not in own)]
    lines = [
        f"[bold]{kill.check_id} ({kill.failed_requirement})[/]"
        if kill in own
        else f"{kill.check_id} ({kill.failed_requirement})"
        for kill in ordered[:shown]
    ]
    if len(ordered) > shown:
        lines.append(f"+{len(ordered) - shown} more")
    return "\n".join(lines)


def _kills(results: Iterable[CheckResult]) -> tuple[Kill, ...]:
    return tuple(
        Kill(
            check_id=result.check_id,
            failed_requirement=result.failed_requirement,
            requirements=result.requirements,
            message=result.message,
            failed_level=result.failed_level,
        )
        for result in results
        if result.status == "fail"
    )


def judge(mutant: Mutant, report: Report, seconds: float = 0.0) -> MutantOutcome:
    """The outcome of ``mutant`` from the suite's report on it."""
    return MutantOutcome(mutant=mutant, kills=_kills(report.results), seconds=seconds)


#: Wall-time cap of one check against a mutant (seconds). The fake answers in
#: milliseconds and a mutant declares a turn timeout of a few seconds at most, so a check
#: still running after two minutes is stuck: it fails with ADAPTER-044 and the run goes on.
ZOO_CHECK_TIMEOUT = 120.0


def zoo_options(options: RunOptions) -> RunOptions:
    """``options`` with the per-check cap at most :data:`ZOO_CHECK_TIMEOUT`."""
    if options.check_timeout <= ZOO_CHECK_TIMEOUT:
        return options
    return dataclasses.replace(options, check_timeout=ZOO_CHECK_TIMEOUT)


def run_mutant(
    mutant: Mutant, options: RunOptions, *, check_ids: Iterable[str] | None = None
) -> MutantOutcome:
    """Run the suite (or ``check_ids`` and their prerequisites) against ``mutant``, each
    check capped at :data:`ZOO_CHECK_TIMEOUT` seconds (or ``options``' smaller cap)."""
    started = time.perf_counter()
    report = run_suite(mutant.target, zoo_options(options), check_ids=check_ids)
    return judge(mutant, report, time.perf_counter() - started)


class _OwnKill(Exception):
    """Stops a targeted run at the first failure naming the mutant's requirement."""


def run_mutant_targeted(mutant: Mutant, options: RunOptions) -> MutantOutcome:
    """Judge ``mutant`` by the checks that can report its requirement, until one does.

    The checks are those of :func:`~harness_testkit.conformance._adapter._registry.reporting_checks`
    (the ones verifying the requirement and, for a stream grammar requirement, the
    scripted checks whose grammar pass reports it) plus their prerequisites, in
    dependency order, each capped like :func:`run_mutant`. The run stops at the first
    failure naming the requirement: the verdict cannot change after it (``killed``), so
    the rest would only cost time. Without such a failure every selected check runs and
    the outcome lists what failed instead (``killed-elsewhere``) or nothing
    (``survived``).
    """
    results: list[CheckResult] = []

    def seen(result: CheckResult) -> None:
        results.append(result)
        if result.status == "fail" and result.failed_requirement == mutant.requirement:
            raise _OwnKill

    started = time.perf_counter()
    with contextlib.suppress(_OwnKill):
        run_suite(
            mutant.target,
            zoo_options(options),
            check_ids=reporting_checks(mutant.requirement),
            on_result=seen,
        )
    return MutantOutcome(
        mutant=mutant, kills=_kills(results), seconds=time.perf_counter() - started
    )


def _adapter_facing(levels: Iterable[str]) -> list[Any]:
    wanted = set(levels)
    return [
        requirement
        for requirement in load_requirements().filter(subject="adapter")
        if str(requirement.checkability) in ("black-box", "scripted")
        and str(requirement.level) in wanted
    ]


def _checked() -> set[str]:
    return {requirement for item in ordered_checks() for requirement in item.requirements}


def unproven_requirements(zoo: Sequence[Mutant]) -> list[str]:
    """Adapter-facing MUSTs and SHOULDs that a check verifies but no mutant breaks.

    MAY requirements are optional capabilities: an adapter cannot break one, so no
    mutant can prove it. Requirements no check verifies are :func:`unchecked_requirements`.
    """
    covered = {mutant.requirement for mutant in zoo}
    checked = _checked()
    return [
        requirement.id
        for requirement in _adapter_facing(("MUST", "SHOULD"))
        if requirement.id in checked and requirement.id not in covered
    ]


def unchecked_requirements() -> list[str]:
    """Adapter-facing SHOULDs no check verifies yet (the coverage gate covers MUSTs)."""
    checked = _checked()
    return [
        requirement.id
        for requirement in _adapter_facing(("SHOULD",))
        if requirement.id not in checked
    ]


def _false_positives(target: AdapterTarget, options: RunOptions) -> list[FalsePositive]:
    report = run_suite(target, zoo_options(options))
    return [FalsePositive(target=target.name, kill=kill) for kill in _kills(report.results)]


def run_selftest(
    zoo: Sequence[Mutant] | None = None,
    options: RunOptions | None = None,
    *,
    reference: bool = True,
    on_outcome: Callable[[MutantOutcome], None] | None = None,
    on_start: Callable[[str], None] | None = None,
    on_reference: Callable[[str, int], None] | None = None,
) -> SelftestReport:
    """Run the whole suite against every mutant of ``zoo`` (default: all of them).

    Args:
        zoo: The mutants to judge.
        options: Depth, seed and backend (bundles are never written for mutants).
        reference: Also run the unmutated fake harness in every profile.
        on_outcome: Called as each mutant is judged (progress output).
        on_start: Called with a mutant's name, or a reference target's, as its run starts.
        on_reference: Called with a reference target's name and its number of false
            positives as its run ends.

    Returns:
        The kill matrix.
    """
    options = options or RunOptions(profile="smoke")
    selected = list(zoo) if zoo is not None else mutants()
    started = time.perf_counter()
    outcomes: list[MutantOutcome] = []
    for mutant in selected:
        if on_start is not None:
            on_start(mutant.name)
        outcome = run_mutant(mutant, options)
        outcomes.append(outcome)
        if on_outcome is not None:
            on_outcome(outcome)
    targets = self_test_targets() if reference else []
    false_positives: list[FalsePositive] = []
    for target in targets:
        if on_start is not None:
            on_start(target.name)
        found = _false_positives(target, options)
        false_positives += found
        if on_reference is not None:
            on_reference(target.name, len(found))
    by_requirement: dict[str, list[MutantOutcome]] = {}
    for outcome in outcomes:
        by_requirement.setdefault(outcome.mutant.requirement, []).append(outcome)
    under_tested = sorted(
        requirement
        for requirement, items in by_requirement.items()
        if all(item.verdict != "killed" for item in items)
    )
    return SelftestReport(
        profile=options.profile,
        seed=options.seed,
        outcomes=tuple(outcomes),
        reference_targets=tuple(target.name for target in targets),
        false_positives=tuple(false_positives),
        unproven=tuple(unproven_requirements(mutants())),
        unchecked=tuple(unchecked_requirements()),
        seconds=time.perf_counter() - started,
        under_tested=tuple(under_tested),
    )


@click.command("selftest")
@click.option(
    "--profile",
    type=click.Choice(["smoke", "standard"]),
    default="smoke",
    show_default=True,
    help="Conformance depth for every run.",
)
@click.option(
    "--mutant",
    "names",
    multiple=True,
    metavar="NAME",
    help="Judge only these mutants (repeatable; default: the whole zoo).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--reference/--no-reference",
    default=True,
    show_default=True,
    help="Also run the unmutated fake harness in every profile (false positives).",
)
@click.option("--json", "json_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--list", "list_only", is_flag=True, help="List the mutants and exit.")
def selftest(
    profile: str,
    names: tuple[str, ...],
    seed: int,
    reference: bool,
    json_path: Path | None,
    list_only: bool,
) -> None:
    """Run the suite against the zoo of broken adapters and print the kill matrix.

    Exit status 1 when a mutant survives or is killed only by other requirements, or
    when the unmutated fake harness fails a check.
    """
    zoo = mutants()
    if list_only:
        for mutant in zoo:
            click.echo(f"{mutant.name:36} {mutant.requirement:13} {mutant.description}")
        return
    unknown = [name for name in names if name not in mutant_names()]
    if unknown:
        raise click.BadParameter(
            f"unknown mutants {', '.join(unknown)}; see `harness-testkit selftest --list`",
            param_hint="--mutant",
        )
    if names:
        zoo = [mutant for mutant in zoo if mutant.name in names]

    def judged(outcome: MutantOutcome) -> None:
        progress.finished(
            outcome.mutant.name,
            outcome.verdict,
            f"({outcome.seconds:.1f} s)",
            notable=outcome.verdict != "killed",
        )

    def reference_run(name: str, false_positives: int) -> None:
        outcome = "pass" if not false_positives else f"{false_positives} false positives"
        progress.finished(name, outcome, notable=bool(false_positives))

    references = len(self_test_targets()) if reference else 0
    with RunProgress(
        make_console(stderr=True),
        total=len(zoo) + references,
        title=f"selftest ({profile})",
        unit=f"runs ({len(zoo)} mutants, {references} reference targets)"
        if references
        else "mutants",
    ) as progress:
        report = run_selftest(
            zoo,
            RunOptions(profile=profile, seed=seed),
            reference=reference,
            on_outcome=judged,
            on_start=progress.started,
            on_reference=reference_run,
        )
    report.print_console()
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(report.to_json() + "\n", encoding="utf-8")
    sys.exit(0 if report.ok else 1)
