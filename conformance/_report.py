"""Conformance reports: the result model and its JSON, JUnit XML, Markdown and console forms."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from xml.etree import ElementTree

from pydantic import BaseModel, ConfigDict, Field

from harness_testkit.common import make_console
from harness_testkit.spec import load_requirements, requirement_url

from ._capabilities import capability_lines
from ._versions import version_line

if TYPE_CHECKING:
    from ._verdict import Verdict

__all__ = ["STATUSES", "CheckResult", "Report", "Status"]

#: ``error``: the check itself broke (an exception no requirement covers), so it verified
#: nothing; ``blocked``: a prerequisite check failed; ``skip``: a capability is missing.
Status = Literal["pass", "fail", "error", "skip", "xfail", "xpass", "blocked"]
#: Statuses in the order reports list their counts.
STATUSES: tuple[Status, ...] = ("pass", "fail", "error", "xpass", "xfail", "skip", "blocked")
#: Statuses of checks that did not run (a capability skip, a failed prerequisite).
_NOT_RUN = frozenset({"skip", "blocked"})
_LEVEL_ORDER = {"MUST": 0, "SHOULD": 1, "MAY": 2}
#: What ``Report.to_json`` leaves out without ``timings``: the wall time of each check.
_DURATIONS: Any = {"results": {"__all__": {"duration_seconds"}}}


class CheckResult(BaseModel):
    """The outcome of one check."""

    model_config = ConfigDict(frozen=True)

    check_id: str
    title: str
    tier: str
    requirements: tuple[str, ...]
    #: The strongest level among the requirements (MUST > SHOULD > MAY).
    level: str
    areas: tuple[str, ...]
    status: Status
    message: str = ""
    failed_requirement: str | None = None
    #: The level of ``failed_requirement`` (a SHOULD violation does not gate a release).
    failed_level: str | None = None
    duration_seconds: float = 0.0
    examples: int | None = None
    replay_command: str | None = None
    bundle: str | None = None
    #: The formatted traceback of a failure or error (adapter frames first).
    traceback: str | None = None
    #: A capability skip: the capability the adapter does not declare.
    capability: str | None = None
    #: A blocked check: the prerequisite check that failed.
    blocked_by: str | None = None


class Report(BaseModel):
    """A conformance run: what ran, against what, and how each check ended."""

    model_config = ConfigDict(frozen=True)

    suite_version: str
    specification_version: str = "harness-v1"
    adapter: str
    harness_id: str
    profile: str
    max_examples: int
    seed: int
    sandbox: str
    results: tuple[CheckResult, ...] = Field(default_factory=tuple)
    warnings: tuple[str, ...] = Field(default_factory=tuple)
    #: The effective capabilities and their sources (``CapabilityResolution.to_json``).
    capabilities: dict[str, Any] | None = None
    #: What ran, name -> version: ``harness-testkit``, the distribution of the adapter's
    #: factory (when an installed one ships it), then the adapter's own ``versions``
    #: (itself and the runtime it drives).
    versions: dict[str, str] = Field(default_factory=dict)

    # -- verdicts --------------------------------------------------------------------------

    #: True when the run was interrupted (SIGINT/SIGTERM): the results are partial.
    interrupted: bool = False

    @property
    def must_failures(self) -> list[CheckResult]:
        """Checks that break the gate: a failed MUST, a check error, a stale MUST xfail."""
        return [
            r
            for r in self.results
            if (r.status == "fail" and (r.failed_level or r.level) == "MUST")
            or (r.status == "xpass" and r.level == "MUST")
            or (r.status == "error" and r.level == "MUST")
        ]

    @property
    def ok(self) -> bool:
        """True when no MUST fails and no MUST check errs (unverified MUSTs aside).

        Whether unverified MUSTs (skipped, blocked) fail the gate is decided by
        :class:`~harness_testkit.conformance.Gate`; see :func:`verdict`.
        """
        return not self.must_failures and not self.interrupted

    def counts(self) -> Counter[str]:
        """Number of checks per status."""
        return Counter(result.status for result in self.results)

    def by_tier(self) -> dict[str, Counter[str]]:
        """tier -> status counts, tiers sorted by name (black-box before scripted)."""
        grouped: dict[str, Counter[str]] = {}
        for result in self.results:
            grouped.setdefault(result.tier, Counter())[result.status] += 1
        return dict(sorted(grouped.items()))

    def tier_lines(self) -> list[str]:
        """One line per tier: how many of its checks ran (not skipped or blocked), and how
        each ended, e.g. ``scripted: 17 ran of 19 (15 pass, 2 xfail, 2 skip)``."""
        lines = []
        for tier, counts in self.by_tier().items():
            ran = sum(n for status, n in counts.items() if status not in _NOT_RUN)
            detail = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s])
            lines.append(f"{tier}: {ran} ran of {counts.total()} ({detail})")
        return lines

    def by_area_and_level(self) -> dict[str, dict[str, Counter[str]]]:
        """area -> level -> status counts."""
        grouped: dict[str, dict[str, Counter[str]]] = {}
        for result in self.results:
            for area in result.areas:
                grouped.setdefault(area, {}).setdefault(result.level, Counter())[result.status] += 1
        return grouped

    # -- writers -------------------------------------------------------------------------

    def judged(self) -> Verdict:
        """This report alone, judged by the default gate (see :func:`verdict`)."""
        from ._verdict import verdict

        return verdict([self])

    def to_json(self, *, judged: Verdict | None = None, timings: bool = False) -> str:
        """The JSON report (with a summary block).

        Args:
            judged: The gate's verdict on this report (``check`` passes it);
                ``summary.ok`` and ``summary.verdict`` carry it. Without it
                ``summary.ok`` is :attr:`ok` (the sandbox suite's gate).
            timings: Keep each check's ``duration_seconds``; without it, two runs at one
                seed write the same bytes.
        """
        data = self.model_dump(mode="json", exclude=None if timings else _DURATIONS)
        data["summary"] = {
            "ok": judged.ok if judged is not None else self.ok,
            **({"verdict": judged.line} if judged is not None else {}),
            "counts": dict(self.counts()),
            "byTier": {tier: dict(counts) for tier, counts in self.by_tier().items()},
            "errors": [r.check_id for r in self.results if r.status == "error"],
            "mustFailures": [r.check_id for r in self.must_failures],
            "byArea": {
                area: {level: dict(counts) for level, counts in levels.items()}
                for area, levels in self.by_area_and_level().items()
            },
        }
        return json.dumps(data, indent=2, sort_keys=True)

    def to_junit_xml(self, *, judged: Verdict | None = None) -> str:
        """JUnit XML: one testsuite per area, requirement ids as properties."""
        root = ElementTree.Element("testsuites", name=f"harness-v1 conformance: {self.adapter}")
        self.add_junit_suites(root, judged=judged)
        ElementTree.indent(root)
        return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"

    def add_junit_suites(
        self, root: ElementTree.Element, *, prefix: str = "", judged: Verdict | None = None
    ) -> None:
        """Append one ``testsuite`` per area to ``root`` (names prefixed by ``prefix``).

        The cases follow the gate (``judged``; without it, every failure is a ``failure``,
        as the sandbox suite's gate has it): a check that fails
        the run is a ``failure`` (a failed MUST, a failing check a MUST depends on, a
        check whose MUST stays unverified without a declaration); a check that broke is
        an ``error``; everything else that did not pass is ``skipped`` with why (a
        failing SHOULD that gates nothing says so).
        """
        by_area: dict[str, list[CheckResult]] = {}
        for result in self.results:
            by_area.setdefault(result.areas[0] if result.areas else "OTHER", []).append(result)
        for area, results in sorted(by_area.items()):
            outcomes = [
                judged.check_outcome(self, result) if judged else _plain_outcome(result)
                for result in results
            ]
            counts = Counter(kind for kind, _ in outcomes)
            suite = ElementTree.SubElement(
                root,
                "testsuite",
                name=f"{prefix}{area}",
                tests=str(len(results)),
                failures=str(counts["failure"]),
                skipped=str(counts["skipped"] + counts["note"]),
                errors=str(counts["error"]),
            )
            if self.versions:
                suite_properties = ElementTree.SubElement(suite, "properties")
                for name, value in self.versions.items():
                    ElementTree.SubElement(
                        suite_properties, "property", name=f"version:{name}", value=value
                    )
            for result, (kind, message) in zip(results, outcomes, strict=True):
                case = ElementTree.SubElement(
                    suite,
                    "testcase",
                    classname=f"harness_v1.{prefix}{area.lower()}",
                    name=result.check_id,
                    time=f"{result.duration_seconds:.3f}",
                )
                properties = ElementTree.SubElement(case, "properties")
                for requirement in result.requirements:
                    ElementTree.SubElement(
                        properties, "property", name="requirement", value=requirement
                    )
                for requirement in result.requirements:
                    ElementTree.SubElement(
                        properties,
                        "property",
                        name="requirement-url",
                        value=requirement_url(requirement),
                    )
                ElementTree.SubElement(properties, "property", name="level", value=result.level)
                ElementTree.SubElement(properties, "property", name="status", value=result.status)
                if kind == "failure":
                    failure = ElementTree.SubElement(
                        case,
                        "failure",
                        message=message,
                        type=result.failed_requirement or result.status,
                    )
                    failure.text = _failure_text(result)
                elif kind == "error":
                    error = ElementTree.SubElement(case, "error", message=message, type="error")
                    error.text = _failure_text(result)
                elif kind in ("skipped", "note"):
                    ElementTree.SubElement(case, "skipped", message=message)

    def to_markdown(self, *, level: int = 1, judged: Verdict | None = None) -> str:
        """A Markdown report a project can publish (``level``: its top heading level).

        Its verdict line is the gate's (``judged``), else whether a MUST failed.
        """
        catalogue = load_requirements()
        counts = self.counts()
        h = "#" * level
        lines = [
            f"{h} harness-v1 conformance: `{self.adapter}` (harness `{self.harness_id}`, "
            f"profile `{self.profile}`)",
            "",
            f"Verdict: **{judged.line}**"
            if judged is not None
            else f"Checks: **{'no MUST failure' if self.ok else 'a MUST fails or a check erred'}**"
            + (" (interrupted: partial results)" if self.interrupted else "")
            + ".",
            "",
            f"- suite {self.suite_version}, specification {self.specification_version}",
            *([f"- versions: {version_line(self.versions)}"] if self.versions else []),
            f"- profile `{self.profile}` ({self.max_examples} examples per property check), "
            f"seed {self.seed}, sandbox `{self.sandbox}`",
            "- results: " + ", ".join(f"{counts[s]} {s}" for s in STATUSES),
            *(f"- {line}" for line in self.tier_lines()),
            *capability_lines(self.capabilities, bullet="- "),
            "",
            f"{h}# By area and level",
            "",
            "| area | level | pass | fail | error | xfail | skip | blocked |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for area, levels in sorted(self.by_area_and_level().items()):
            for level_name in sorted(levels, key=lambda item: _LEVEL_ORDER.get(item, 9)):
                c = levels[level_name]
                lines.append(
                    f"| {area} | {level_name} | {c['pass']} | {c['fail'] + c['xpass']} | "
                    f"{c['error']} | {c['xfail']} | {c['skip']} | {c['blocked']} |"
                )
        lines += [
            "",
            f"{h}# Checks",
            "",
            "| check | level | requirements | status | note |",
            "|---|---|---|---|---|",
        ]
        for result in self.results:
            note = result.message.splitlines()[0] if result.message else ""
            lines.append(
                f"| `{result.check_id}` | {result.level} | {_markdown_links(result.requirements)} | "
                f"{result.status} | {note.replace('|', '/')} |"
            )
        failures = [r for r in self.results if r.status in ("fail", "xpass", "error")]
        if failures:
            lines += ["", f"{h}# Failures and errors", ""]
            for result in failures:
                requirement = result.failed_requirement
                statement = ""
                if requirement:
                    try:
                        statement = " ".join(catalogue.get(requirement).statement.split())
                    except KeyError:
                        statement = ""
                lines += [
                    f"{h}## `{result.check_id}` "
                    f"({_markdown_links((requirement,)) if requirement else result.status})",
                    "",
                    f"> {statement}" if statement else "",
                    "",
                    "```",
                    result.message,
                    "```",
                    "",
                ]
                if result.traceback:
                    lines += ["```", result.traceback.rstrip(), "```", ""]
                if result.replay_command:
                    lines += [f"Replay: `{result.replay_command}`", ""]
        if self.warnings:
            lines += ["", f"{h}# Warnings", "", *[f"- {warning}" for warning in self.warnings]]
        return "\n".join(lines).rstrip() + "\n"

    def write(
        self,
        *,
        json_path: Path | None = None,
        junit_path: Path | None = None,
        markdown_path: Path | None = None,
    ) -> None:
        """Write the requested report files (this report alone)."""
        for path, text in (
            (json_path, self.to_json),
            (junit_path, self.to_junit_xml),
            (markdown_path, self.to_markdown),
        ):
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text(), encoding="utf-8")

    def print_console(self, *, verbose: bool = False, console: Any = None) -> None:
        """A rich table of this report's checks (the run's verdict line comes after all).

        Args:
            verbose: Also print the traceback of every failure and error.
            console: A ``rich.console.Console`` (default: stdout, as
                :func:`~harness_testkit.common.make_console` sets it up).
        """
        from rich.markup import escape
        from rich.table import Table

        console = console or make_console()
        if self.versions:
            console.print(
                f"  versions: {version_line(self.versions)}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
        for line in capability_lines(self.capabilities, bullet="  "):
            console.print(line, highlight=False, markup=False)
        table = Table(title=f"harness-v1 conformance: {self.adapter} ({self.profile})")
        # Ids never fold mid-word; the lists and notes wrap between words, and not past
        # a readable width on a wide console (a CI log).
        table.add_column("check", no_wrap=True)
        table.add_column("level", no_wrap=True)
        table.add_column("status", no_wrap=True)
        table.add_column("requirements", max_width=64)
        table.add_column("note", overflow="fold", max_width=80)
        styles = {
            "pass": "green",
            "fail": "bold red",
            "error": "bold red",
            "xpass": "bold red",
            "xfail": "yellow",
            "skip": "dim",
            "blocked": "magenta",
        }
        for result in self.results:
            note = result.message.splitlines()[0] if result.message else ""
            table.add_row(
                result.check_id,
                result.level,
                f"[{styles[result.status]}]{result.status}[/]",
                ", ".join(f"[link={requirement_url(r)}]{r}[/link]" for r in result.requirements),
                escape(note[:120]),
            )
        console.print(table)
        counts = self.counts()
        console.print(
            f"{self.adapter} ({self.profile}): "
            + " ".join(f"{counts[s]} {s}" for s in STATUSES)
            + f" | examples per property check: {self.max_examples}"
            + (" | interrupted" if self.interrupted else ""),
            soft_wrap=True,
        )
        for line in self.tier_lines():
            console.print(f"  {line}", soft_wrap=True, highlight=False, markup=False)
        for result in self.results:
            if result.status not in ("fail", "xpass", "error"):
                continue
            label = result.failed_requirement or result.status
            console.print(f"[red]{result.check_id}[/] ({label}): {escape(result.message)}")
            if result.failed_requirement:
                # A plain URL too: CI logs drop the terminal's hyperlinks.
                url = requirement_url(result.failed_requirement)
                console.print(f"  requirement: {url}", soft_wrap=True, markup=False)
            if verbose and result.traceback:
                console.print(result.traceback.rstrip(), markup=False, highlight=False)
            if result.replay_command:
                # soft_wrap keeps the command on one line so it can be copied.
                console.print(
                    f"  replay with [bold]{escape(result.replay_command)}[/]",
                    soft_wrap=True,
                )
        for warning in self.warnings:
            console.print(f"[yellow]warning:[/] {warning}")


def _markdown_links(requirements: Iterable[str]) -> str:
    return ", ".join(f"[{r}]({requirement_url(r)})" for r in requirements)


def _plain_outcome(result: CheckResult) -> tuple[str, str]:
    """How a result shows in JUnit without a gate: every failure fails."""
    first = result.message.splitlines()[0] if result.message else result.status
    if result.status in ("fail", "xpass"):
        return "failure", first
    if result.status == "error":
        return "error", first
    if result.status == "pass":
        return "pass", ""
    return "skipped", f"{result.status}: {result.message}"


def _failure_text(result: CheckResult) -> str:
    text = result.message
    if result.traceback:
        text += f"\n\n{result.traceback.rstrip()}"
    if result.replay_command:
        text += f"\nreplay: {result.replay_command}"
    return text


def strongest_level(requirements: Iterable[str]) -> tuple[str, tuple[str, ...]]:
    """The strongest level and the areas of ``requirements`` (from the catalogue)."""
    catalogue = load_requirements()
    levels: list[str] = []
    areas: list[str] = []
    for requirement in requirements:
        item = catalogue.get(requirement)
        levels.append(str(item.level))
        if item.area not in areas:
            areas.append(item.area)
    level = min(levels, key=lambda value: _LEVEL_ORDER.get(value, 9)) if levels else "MAY"
    return level, tuple(areas)


def dump_json(data: Any) -> str:
    """Stable JSON for bundles."""
    return json.dumps(data, indent=2, sort_keys=True, default=repr)
