"""Conformance reports: the result model and its JSON, JUnit XML, Markdown and console forms."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal
from xml.etree import ElementTree

from pydantic import BaseModel, ConfigDict, Field

from harness_testkit.spec import load_requirements

from ._capabilities import capability_lines

__all__ = ["CheckResult", "Report", "Status"]

Status = Literal["pass", "fail", "skip", "xfail", "xpass", "blocked"]
_LEVEL_ORDER = {"MUST": 0, "SHOULD": 1, "MAY": 2}


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

    # -- verdicts --------------------------------------------------------------------------

    @property
    def must_failures(self) -> list[CheckResult]:
        """Failed (or unexpectedly passing strict-xfail) checks that verify a MUST."""
        return [
            r
            for r in self.results
            if (r.status == "fail" and (r.failed_level or r.level) == "MUST")
            or (r.status == "xpass" and r.level == "MUST")
        ]

    @property
    def ok(self) -> bool:
        """True when every MUST holds (CI gates on this)."""
        return not self.must_failures

    def counts(self) -> Counter[str]:
        """Number of checks per status."""
        return Counter(result.status for result in self.results)

    def by_area_and_level(self) -> dict[str, dict[str, Counter[str]]]:
        """area -> level -> status counts."""
        grouped: dict[str, dict[str, Counter[str]]] = {}
        for result in self.results:
            for area in result.areas:
                grouped.setdefault(area, {}).setdefault(result.level, Counter())[result.status] += 1
        return grouped

    # -- writers -------------------------------------------------------------------------

    def to_json(self) -> str:
        """The JSON report (with a summary block)."""
        data = self.model_dump(mode="json")
        data["summary"] = {
            "ok": self.ok,
            "counts": dict(self.counts()),
            "mustFailures": [r.check_id for r in self.must_failures],
            "byArea": {
                area: {level: dict(counts) for level, counts in levels.items()}
                for area, levels in self.by_area_and_level().items()
            },
        }
        return json.dumps(data, indent=2, sort_keys=True)

    def to_junit_xml(self) -> str:
        """JUnit XML: one testsuite per area, requirement ids as properties."""
        root = ElementTree.Element("testsuites", name=f"harness-v1 conformance: {self.adapter}")
        by_area: dict[str, list[CheckResult]] = {}
        for result in self.results:
            by_area.setdefault(result.areas[0] if result.areas else "OTHER", []).append(result)
        for area, results in sorted(by_area.items()):
            counts = Counter(r.status for r in results)
            suite = ElementTree.SubElement(
                root,
                "testsuite",
                name=area,
                tests=str(len(results)),
                failures=str(counts["fail"] + counts["xpass"]),
                skipped=str(counts["skip"] + counts["blocked"] + counts["xfail"]),
                errors="0",
            )
            for result in results:
                case = ElementTree.SubElement(
                    suite,
                    "testcase",
                    classname=f"harness_v1.{area.lower()}",
                    name=result.check_id,
                    time=f"{result.duration_seconds:.3f}",
                )
                properties = ElementTree.SubElement(case, "properties")
                for requirement in result.requirements:
                    ElementTree.SubElement(
                        properties, "property", name="requirement", value=requirement
                    )
                ElementTree.SubElement(properties, "property", name="level", value=result.level)
                if result.status in ("fail", "xpass"):
                    failure = ElementTree.SubElement(
                        case,
                        "failure",
                        message=result.message.splitlines()[0] if result.message else result.status,
                        type=result.failed_requirement or result.status,
                    )
                    failure.text = _failure_text(result)
                elif result.status in ("skip", "blocked", "xfail"):
                    ElementTree.SubElement(
                        case, "skipped", message=f"{result.status}: {result.message}"
                    )
        ElementTree.indent(root)
        return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"

    def to_markdown(self) -> str:
        """A Markdown report a project can publish."""
        catalogue = load_requirements()
        counts = self.counts()
        lines = [
            f"# harness-v1 conformance: `{self.adapter}` (harness `{self.harness_id}`)",
            "",
            f"Verdict: **{'PASS' if self.ok else 'FAIL'}** (every MUST {'holds' if self.ok else 'does not hold'}).",
            "",
            f"- suite {self.suite_version}, specification {self.specification_version}",
            f"- profile `{self.profile}` ({self.max_examples} examples per property check), "
            f"seed {self.seed}, sandbox `{self.sandbox}`",
            "- results: "
            + ", ".join(
                f"{counts[s]} {s}" for s in ("pass", "fail", "xpass", "xfail", "skip", "blocked")
            ),
            *capability_lines(self.capabilities, bullet="- "),
            "",
            "## By area and level",
            "",
            "| area | level | pass | fail | xfail | skip | blocked |",
            "|---|---|---|---|---|---|---|",
        ]
        for area, levels in sorted(self.by_area_and_level().items()):
            for level in sorted(levels, key=lambda item: _LEVEL_ORDER.get(item, 9)):
                c = levels[level]
                lines.append(
                    f"| {area} | {level} | {c['pass']} | {c['fail'] + c['xpass']} | {c['xfail']} | "
                    f"{c['skip']} | {c['blocked']} |"
                )
        lines += [
            "",
            "## Checks",
            "",
            "| check | level | requirements | status | note |",
            "|---|---|---|---|---|",
        ]
        for result in self.results:
            note = result.message.splitlines()[0] if result.message else ""
            lines.append(
                f"| `{result.check_id}` | {result.level} | {', '.join(result.requirements)} | "
                f"{result.status} | {note.replace('|', '/')} |"
            )
        failures = [r for r in self.results if r.status in ("fail", "xpass")]
        if failures:
            lines += ["", "## Failures", ""]
            for result in failures:
                requirement = result.failed_requirement
                statement = ""
                if requirement:
                    try:
                        statement = " ".join(catalogue.get(requirement).statement.split())
                    except KeyError:
                        statement = ""
                lines += [
                    f"### `{result.check_id}` ({requirement or result.status})",
                    "",
                    f"> {statement}" if statement else "",
                    "",
                    "```",
                    result.message,
                    "```",
                    "",
                    f"Replay: `{result.replay_command}`" if result.replay_command else "",
                    "",
                ]
        if self.warnings:
            lines += ["", "## Warnings", "", *[f"- {warning}" for warning in self.warnings]]
        return "\n".join(lines).rstrip() + "\n"

    def write(
        self,
        *,
        json_path: Path | None = None,
        junit_path: Path | None = None,
        markdown_path: Path | None = None,
    ) -> None:
        """Write the requested report files."""
        for path, text in (
            (json_path, self.to_json),
            (junit_path, self.to_junit_xml),
            (markdown_path, self.to_markdown),
        ):
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text(), encoding="utf-8")

    def print_console(self) -> None:
        """A rich summary on the terminal."""
        from rich.console import Console
        from rich.table import Table

        console = Console()
        for line in capability_lines(self.capabilities, bullet="  "):
            console.print(line, highlight=False, markup=False)
        table = Table(title=f"harness-v1 conformance: {self.adapter} ({self.profile})")
        for column in ("check", "level", "status", "requirements", "note"):
            table.add_column(column, overflow="fold")
        styles = {
            "pass": "green",
            "fail": "bold red",
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
                ", ".join(result.requirements),
                note[:120],
            )
        console.print(table)
        counts = self.counts()
        console.print(
            " ".join(
                f"{counts[s]} {s}" for s in ("pass", "fail", "xpass", "xfail", "skip", "blocked")
            )
            + f" | examples per property check: {self.max_examples}"
        )
        for result in self.results:
            if result.status in ("fail", "xpass") and result.replay_command:
                # soft_wrap keeps the command on one line so it can be copied.
                console.print(
                    f"[red]{result.check_id}[/]: replay with [bold]{result.replay_command}[/]",
                    soft_wrap=True,
                )
        for warning in self.warnings:
            console.print(f"[yellow]warning:[/] {warning}")
        console.print(
            "[bold green]PASS[/]: every MUST holds"
            if self.ok
            else "[bold red]FAIL[/]: a MUST does not hold"
        )


def _failure_text(result: CheckResult) -> str:
    text = result.message
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
