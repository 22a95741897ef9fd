"""The gate: every MUST's status across a run, the closing verdict line and the run documents.

A run is one or more :class:`~harness_testkit.conformance.Report` (one per target and
profile). Each MUST a selected check names ends in exactly one status per target:

- ``pass``: a check verified it and no check saw it fail;
- ``fail``: a check's assertion on it failed;
- ``xfail``: it fails, and the failure is declared (strict xfail);
- ``unverified``: no check verified it, with the reason (a capability not declared, a
  prerequisite check that failed, a check that erred or stopped at another requirement).

:class:`Gate` decides whether unverified MUSTs fail the run: by default they do not
(the verdict line says how many and why); ``require_tier`` makes every MUST of the
checks of that tier (and below) required, and a ``baseline`` lists the MUSTs that may
stay unverified (any other unverified MUST fails).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from xml.etree import ElementTree

from harness_testkit.spec import load_requirements

from ._report import CheckResult, Report

__all__ = [
    "TIERS",
    "Gate",
    "RequirementStatus",
    "RunDocuments",
    "Verdict",
    "requirement_statuses",
    "verdict",
]

#: Tiers from the least to the most demanding of the adapter.
TIERS: tuple[str, ...] = ("black-box", "scripted")

MustStatus = Literal["pass", "fail", "xfail", "unverified"]
_PRECEDENCE: dict[str, int] = {"fail": 0, "xfail": 1, "pass": 2, "unverified": 3}


@dataclass(frozen=True)
class RequirementStatus:
    """How one requirement ended for one target (across its profiles)."""

    requirement: str
    level: str
    status: MustStatus
    #: Why it is unverified (or which checks failed it), one entry per check.
    reasons: tuple[str, ...]
    checks: tuple[str, ...]
    #: The least demanding tier among the checks that name it.
    tier: str
    target: str


def _unverified_reason(result: CheckResult) -> str:
    if result.status == "skip":
        if result.capability:
            return f"capability '{result.capability}' not declared"
        return f"skipped by {result.check_id}: {result.message.splitlines()[0] if result.message else ''}"
    if result.status == "blocked":
        return f"blocked: prerequisite {result.blocked_by or '?'} did not pass"
    if result.status == "error":
        return f"check {result.check_id} erred"
    return f"check {result.check_id} stopped at {result.failed_requirement}"


def _tier_rank(tier: str) -> int:
    return TIERS.index(tier) if tier in TIERS else len(TIERS)


def requirement_statuses(reports: Iterable[Report]) -> list[RequirementStatus]:
    """Every requirement named by the reports' checks, per target (profiles merged)."""
    catalogue = load_requirements()
    # (target, requirement) -> [(status, detail, check id)]
    entries: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    tiers: dict[tuple[str, str], str] = {}
    for report in reports:
        for result in report.results:
            named = list(result.requirements)
            if result.failed_requirement and result.failed_requirement not in named:
                named.append(result.failed_requirement)
            first_line = result.message.splitlines()[0] if result.message else ""
            for requirement in named:
                if result.status in ("pass", "xpass"):
                    status, detail = "pass", ""
                elif result.status in ("fail", "xfail") and (
                    result.failed_requirement == requirement
                ):
                    status, detail = result.status, f"{result.check_id}: {first_line}"
                else:
                    status, detail = "unverified", _unverified_reason(result)
                key = (report.adapter, requirement)
                entries.setdefault(key, []).append((status, detail, result.check_id))
                if key not in tiers or _tier_rank(result.tier) < _tier_rank(tiers[key]):
                    tiers[key] = result.tier
    statuses: list[RequirementStatus] = []
    for (target, requirement), outcomes in entries.items():
        status = min((item[0] for item in outcomes), key=lambda item: _PRECEDENCE[item])
        try:
            level = str(catalogue.get(requirement).level)
        except KeyError:
            level = "MUST"
        statuses.append(
            RequirementStatus(
                requirement=requirement,
                level=level,
                status=status,  # type: ignore[arg-type]
                reasons=tuple(dict.fromkeys(d for st, d, _ in outcomes if st == status and d)),
                checks=tuple(dict.fromkeys(check for _, _, check in outcomes)),
                tier=tiers[(target, requirement)],
                target=target,
            )
        )
    return sorted(statuses, key=lambda item: (item.target, item.requirement))


@dataclass(frozen=True)
class Gate:
    """Which unverified MUSTs fail the run.

    Attributes:
        require_tier: Every MUST named by a check of this tier or a lower one must be
            verified (``black-box`` or ``scripted``); ``None``: unverified MUSTs are
            reported but do not fail the run.
        baseline: MUST ids that may stay unverified; when given, every other unverified
            MUST fails the run.
    """

    require_tier: str | None = None
    baseline: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if self.require_tier is not None and self.require_tier not in TIERS:
            raise ValueError(f"unknown tier {self.require_tier!r}; use one of {', '.join(TIERS)}")

    @classmethod
    def load_baseline(cls, path: Path, *, require_tier: str | None = None) -> Gate:
        """A gate whose baseline is read from ``path``: ``unverified: [MUST ids]`` (YAML/JSON).

        Raises:
            ValueError: naming the file and what is wrong in it.
        """
        from harness_testkit.common import read_structured

        data = read_structured(path, what="baseline file")
        ids = data.get("unverified") if isinstance(data, dict) else None
        if not isinstance(ids, list) or not all(isinstance(item, str) for item in ids):
            raise ValueError(
                f"{path}: expected a mapping `unverified: [requirement ids]` of strings"
            )
        catalogue = load_requirements()
        unknown = [item for item in ids if not _known(catalogue, item)]
        if unknown:
            raise ValueError(f"{path}: unknown requirement ids {', '.join(unknown)}")
        return cls(require_tier=require_tier, baseline=frozenset(ids))

    def requires(self, status: RequirementStatus) -> bool:
        """Whether this unverified MUST fails the run."""
        if self.baseline is not None and status.requirement not in self.baseline:
            return True
        if self.require_tier is not None:
            return _tier_rank(status.tier) <= _tier_rank(self.require_tier)
        return False


def _known(catalogue: object, requirement: str) -> bool:
    try:
        catalogue.get(requirement)  # type: ignore[attr-defined]
    except KeyError:
        return False
    return True


@dataclass(frozen=True)
class Verdict:
    """The run's outcome: ``ok`` (exit 0 or 1) and the one closing line."""

    ok: bool
    line: str
    musts: tuple[RequirementStatus, ...]
    errors: tuple[str, ...] = ()
    stale_xfails: tuple[str, ...] = ()
    required_unverified: tuple[RequirementStatus, ...] = ()
    interrupted: bool = False
    warnings: tuple[str, ...] = field(default_factory=tuple)


def _reason_summary(statuses: Sequence[RequirementStatus]) -> str:
    counts: Counter[str] = Counter(
        status.reasons[0] if status.reasons else "?" for status in statuses
    )
    if len(counts) == 1:
        return next(iter(counts))
    shown = [f"{reason}: {count}" for reason, count in counts.most_common(3)]
    if len(counts) > 3:
        shown.append(_plural(len(counts) - 3, "other reason"))
    return "; ".join(shown)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def verdict(reports: Sequence[Report], gate: Gate | None = None) -> Verdict:
    """Judge a run: every MUST that applies must be verified and hold.

    Fails on a failed MUST, a check that erred on a MUST check, a MUST check declared as
    a known failure that passes (stale xfail), an interrupted run, and unverified MUSTs
    the ``gate`` requires. Unverified MUSTs it does not require are named in the line.
    """
    gate = gate or Gate()
    musts = tuple(s for s in requirement_statuses(reports) if s.level == "MUST")
    failed = [s for s in musts if s.status == "fail"]
    xfailed = [s for s in musts if s.status == "xfail"]
    unverified = [s for s in musts if s.status == "unverified"]
    held = [s for s in musts if s.status == "pass"]
    required = [s for s in unverified if gate.requires(s)]
    errors = tuple(
        f"{report.adapter} {report.profile} {r.check_id}"
        for report in reports
        for r in report.results
        if r.status == "error"
    )
    stale = tuple(
        f"{report.adapter} {report.profile} {r.check_id}"
        for report in reports
        for r in report.results
        if r.status == "xpass" and r.level == "MUST"
    )
    interrupted = any(report.interrupted for report in reports)
    warnings: list[str] = []
    if gate.baseline is not None:
        # Verified for every target that names it (a multi-target baseline lists an id
        # that one target leaves unverified).
        unverified_ids = {s.requirement for s in musts if s.status == "unverified"}
        verified = {s.requirement for s in musts if s.status != "unverified"} - unverified_ids
        warnings += [
            f"baseline entry {item} is verified now: remove it from the baseline"
            for item in sorted(gate.baseline & verified)
        ]
    ok = not (failed or errors or stale or required or interrupted)
    parts: list[str] = []
    if failed:
        parts.append(f"{_plural(len(failed), 'MUST')} fail")
    if errors:
        parts.append(f"{_plural(len(errors), 'check')} erred")
    if stale:
        parts.append(f"{_plural(len(stale), 'declared known failure')} passed (stale xfail)")
    if xfailed:
        parts.append(f"{len(xfailed)} xfail (declared)")
    if unverified:
        text = f"{len(unverified)} unverified ({_reason_summary(unverified)})"
        if required:
            text += f", {len(required)} of them required"
            if gate.require_tier:
                text += f" by --require-tier {gate.require_tier}"
            elif gate.baseline is not None:
                text += " (not in the baseline)"
        parts.append(text)
    scope = ""
    targets = sorted({report.adapter for report in reports})
    profiles = sorted({report.profile for report in reports})
    if len(targets) > 1 or len(profiles) > 1:
        scope = f" across {_plural(len(targets), 'target')} x {_plural(len(profiles), 'profile')}"
    if interrupted:
        line = f"INTERRUPTED: partial results, {len(held)} MUSTs held so far" + (
            f"; {', '.join(parts)}" if parts else ""
        )
    elif ok and not unverified:
        line = f"PASS: all {_plural(len(held), 'MUST')} verified and hold{scope}" + (
            f"; {', '.join(parts)}" if parts else ""
        )
    elif ok:
        line = (
            f"PASS WITH UNVERIFIED MUSTS: {len(held)} hold, {', '.join(parts)}{scope}; "
            "use --require-tier to make them fail"
        )
    else:
        line = f"FAIL: {', '.join(parts)}{scope}"
    return Verdict(
        ok=ok,
        line=line,
        musts=musts,
        errors=errors,
        stale_xfails=stale,
        required_unverified=tuple(required),
        interrupted=interrupted,
        warnings=tuple(warnings),
    )


@dataclass(frozen=True)
class RunDocuments:
    """One JSON, one JUnit and one Markdown document for a whole run.

    Each holds a section per report (target and profile) and the run's verdict.
    """

    reports: tuple[Report, ...]
    verdict: Verdict
    #: Keep each check's duration in the JSON document (two runs then differ).
    timings: bool = False

    def to_json(self) -> str:
        """``{"verdict": {...}, "musts": [...], "reports": [...]}``."""
        data = {
            "verdict": {
                "ok": self.verdict.ok,
                "line": self.verdict.line,
                "errors": list(self.verdict.errors),
                "staleXfails": list(self.verdict.stale_xfails),
                "requiredUnverified": [
                    f"{s.target} {s.requirement}" for s in self.verdict.required_unverified
                ],
                "interrupted": self.verdict.interrupted,
                "warnings": list(self.verdict.warnings),
            },
            "musts": [
                {
                    "target": s.target,
                    "requirement": s.requirement,
                    "status": s.status,
                    "reasons": list(s.reasons),
                    "checks": list(s.checks),
                    "tier": s.tier,
                }
                for s in self.verdict.musts
            ],
            "reports": [
                json.loads(report.to_json(timings=self.timings)) for report in self.reports
            ],
        }
        return json.dumps(data, indent=2, sort_keys=True)

    def to_junit_xml(self) -> str:
        """One ``testsuites`` document; suites are named ``<target> <profile> <area>``."""
        root = ElementTree.Element("testsuites", name="harness-v1 conformance")
        single = len(self.reports) == 1
        for report in self.reports:
            prefix = "" if single else f"{report.adapter} {report.profile} "
            report.add_junit_suites(root, prefix=prefix)
        totals: Counter[str] = Counter()
        for suite in root:
            for key in ("tests", "failures", "errors", "skipped"):
                totals[key] += int(suite.get(key, "0"))
        for key, value in totals.items():
            root.set(key, str(value))
        ElementTree.indent(root)
        return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"

    def to_markdown(self) -> str:
        """The verdict, the MUSTs that are not verified-pass, then a section per report."""
        lines = ["# harness-v1 conformance", "", f"**{self.verdict.line}**", ""]
        open_musts = [s for s in self.verdict.musts if s.status != "pass"]
        if open_musts:
            lines += [
                "## MUSTs not verified as holding",
                "",
                "| target | requirement | status | why |",
                "|---|---|---|---|",
            ]
            for s in open_musts:
                why = "; ".join(s.reasons).replace("|", "/")
                lines.append(f"| `{s.target}` | {s.requirement} | {s.status} | {why} |")
            lines.append("")
        for report in self.reports:
            lines.append(report.to_markdown(level=2))
        return "\n".join(lines).rstrip() + "\n"

    def write(
        self,
        *,
        json_path: Path | None = None,
        junit_path: Path | None = None,
        markdown_path: Path | None = None,
    ) -> None:
        """Write each requested document to exactly the named file."""
        for path, text in (
            (json_path, self.to_json),
            (junit_path, self.to_junit_xml),
            (markdown_path, self.to_markdown),
        ):
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text(), encoding="utf-8")
