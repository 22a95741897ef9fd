"""The gate: every MUST's status across a run, the closing verdict line and the run documents.

A run is one or more :class:`~harness_testkit.conformance.Report` (one per target and
profile). Each MUST a selected check names ends in exactly one status per target:

- ``pass``: a check verified it and no check saw it fail;
- ``fail``: a check's assertion on it failed;
- ``xfail``: it fails, and the failure is declared (strict xfail);
- ``unverified``: no check verified it, with the reason (a capability not declared, a
  prerequisite check that failed, a check that erred or stopped at another requirement).

:func:`verdict` is the one place that judges a run; the console, JSON, JUnit, Markdown,
HTML and the pytest plugin all show what it decides. By default (DECISION-006) the gate
means what it says: a MUST blocked or cut short by a failing check (at any level) fails
the run, naming that check, and a MUST left unverified passes only where the adapter
declares the gap (``unsupported: {name: reason}`` in its capabilities, or a known
failure it declared) or a baseline lists it. :class:`Gate` holds the options:
``require_tier`` (every MUST of that tier and below must be verified, declarations
aside), ``baseline`` and ``allow_unverified`` (the report-only gate of old).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from xml.etree import ElementTree

from harness_testkit.spec import load_requirements

from ._checks import Check
from ._report import CheckResult, Report, strongest_level

__all__ = [
    "ACCEPTED_CAUSES",
    "TIERS",
    "CheckOutcome",
    "Gate",
    "RequirementStatus",
    "RunDocuments",
    "Verdict",
    "failure_label",
    "must_depends_on",
    "requirement_statuses",
    "verdict",
]

#: Tiers from the least to the most demanding of the adapter.
TIERS: tuple[str, ...] = ("black-box", "scripted")

MustStatus = Literal["pass", "fail", "xfail", "unverified"]
_PRECEDENCE: dict[str, int] = {"fail": 0, "xfail": 1, "pass": 2, "unverified": 3}


#: Why a MUST stayed unverified (:attr:`RequirementStatus.cause`), most severe first:
#: ``blocked``: a failing or erring check blocked the check naming it, or cut it short
#: (the check failed on another requirement); ``erred``: its check erred;
#: ``capability``: skipped for a capability the adapter does not declare; ``skipped``:
#: the check found the feature absent; ``claimed``: skipped for ``scripting`` although
#: it verifies a capability the adapter claims; ``unsupported``: the adapter declares the gap,
#: with a reason; ``declared``: a declared known failure (strict xfail) blocked it.
Cause = Literal[
    "blocked", "erred", "claimed", "capability", "skipped", "unsupported", "declared", ""
]
_CAUSE_ORDER: tuple[str, ...] = (
    "blocked",
    "erred",
    "claimed",
    "capability",
    "skipped",
    "unsupported",
    "declared",
    "",
)
#: Causes the adapter itself declared: the gate accepts them (DECISION-006).
ACCEPTED_CAUSES = frozenset({"unsupported", "declared"})


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
    #: Why it is unverified (see :data:`Cause`); ``""`` when it is not.
    cause: str = ""
    #: For ``blocked``: the failing checks that blocked it (``check [REQ, LEVEL]``).
    blocked_by: tuple[str, ...] = ()


def _effective_of(report: Report) -> Mapping[str, Any]:
    block = report.capabilities or {}
    effective = block.get("effective") if isinstance(block, Mapping) else None
    return effective if isinstance(effective, Mapping) else {}


def _unsupported_of(report: Report) -> Mapping[str, str]:
    table = _effective_of(report).get("unsupported")
    return table if isinstance(table, Mapping) else {}


def _root(result: CheckResult, by_id: Mapping[str, CheckResult]) -> CheckResult:
    """The check at the start of ``result``'s chain of blocked prerequisites."""
    seen: set[str] = set()
    current = result
    while (
        current.status == "blocked" and current.blocked_by in by_id and current.check_id not in seen
    ):
        seen.add(current.check_id)
        current = by_id[current.blocked_by or ""]
    return current


def failure_label(result: CheckResult) -> str:
    """``check [REQUIREMENT, LEVEL]`` for a failing check (``check [erred]`` for an error)."""
    if result.status == "error":
        return f"{result.check_id} [erred]"
    return f"{result.check_id} [{result.failed_requirement}, {result.failed_level or result.level}]"


def _claimed_needs(result: CheckResult, effective: Mapping[str, Any]) -> list[str]:
    """The capabilities a scripting-skipped check needs that the adapter claims to have."""
    if result.status != "skip" or result.capability != "scripting":
        return []
    from ._adapter._registry import REGISTRY, ordered_checks

    ordered_checks()  # registers the built-in checks
    check = REGISTRY.get(result.check_id)
    if check is None:
        return []
    return [name for name in check.needs if effective.get(name) not in (None, False)]


def _outcome(
    result: CheckResult,
    requirement: str,
    by_id: Mapping[str, CheckResult],
    unsupported: Mapping[str, str],
    effective: Mapping[str, Any],
) -> tuple[str, str, str, str]:
    """``(status, detail, cause, blocking check label)`` of ``requirement`` in ``result``."""
    first_line = result.message.splitlines()[0] if result.message else ""
    if result.status in ("pass", "xpass"):
        return "pass", "", "", ""
    if result.status in ("fail", "xfail") and result.failed_requirement == requirement:
        return result.status, f"{result.check_id}: {first_line}", "", ""
    if result.status == "fail":
        label = failure_label(result)
        return "unverified", f"cut short: {label} failed", "blocked", label
    if result.status == "xfail":
        return "unverified", f"{result.check_id} is a declared known failure", "declared", ""
    if result.status == "error":
        return "unverified", f"check {result.check_id} erred", "erred", ""
    if result.status == "blocked":
        root = _root(result, by_id)
        if root.status == "xfail":
            return (
                "unverified",
                f"blocked by {root.check_id}, a declared known failure",
                "declared",
                "",
            )
        if root.status in ("fail", "error"):
            label = failure_label(root)
            return "unverified", f"blocked: {label} failed", "blocked", label
        return (
            "unverified",
            f"blocked: prerequisite {result.blocked_by or '?'} did not pass",
            "blocked",
            "",
        )
    # A skip: for a capability, or the check found the feature absent.
    name = result.capability or result.check_id
    claimed = _claimed_needs(result, effective)
    if claimed:
        # Declaring `scripting` unsupported cannot excuse what the adapter claims: a
        # capability it declares is a promise only the scripted tier can verify.
        return (
            "unverified",
            f"capability '{name}' not declared, yet declared {', '.join(claimed)} needs it "
            "to be verified",
            "claimed",
            "",
        )
    if name in unsupported:
        return (
            "unverified",
            f"declared unsupported: {name} ({unsupported[name]})",
            "unsupported",
            "",
        )
    if result.capability:
        return "unverified", f"capability '{result.capability}' not declared", "capability", ""
    return "unverified", f"skipped by {result.check_id}: {first_line}", "skipped", ""


def _tier_rank(tier: str) -> int:
    return TIERS.index(tier) if tier in TIERS else len(TIERS)


def requirement_statuses(reports: Iterable[Report]) -> list[RequirementStatus]:
    """Every requirement named by the reports' checks, per target (profiles merged)."""
    catalogue = load_requirements()
    # (target, requirement) -> [(status, detail, cause, blocker, check id)]
    entries: dict[tuple[str, str], list[tuple[str, str, str, str, str]]] = {}
    tiers: dict[tuple[str, str], str] = {}
    for report in reports:
        by_id = {result.check_id: result for result in report.results}
        unsupported = _unsupported_of(report)
        effective = _effective_of(report)
        for result in report.results:
            named = list(result.requirements)
            if result.failed_requirement and result.failed_requirement not in named:
                named.append(result.failed_requirement)
            for requirement in named:
                outcome = _outcome(result, requirement, by_id, unsupported, effective)
                key = (report.adapter, requirement)
                entries.setdefault(key, []).append((*outcome, result.check_id))
                if key not in tiers or _tier_rank(result.tier) < _tier_rank(tiers[key]):
                    tiers[key] = result.tier
    statuses: list[RequirementStatus] = []
    for (target, requirement), outcomes in entries.items():
        status = min((item[0] for item in outcomes), key=lambda item: _PRECEDENCE[item])
        chosen = [item for item in outcomes if item[0] == status]
        cause = min((item[2] for item in chosen), key=_CAUSE_ORDER.index)
        try:
            level = str(catalogue.get(requirement).level)
        except KeyError:
            level = "MUST"
        statuses.append(
            RequirementStatus(
                requirement=requirement,
                level=level,
                status=status,  # type: ignore[arg-type]
                reasons=tuple(
                    dict.fromkeys(item[1] for item in chosen if item[2] == cause and item[1])
                ),
                checks=tuple(dict.fromkeys(item[4] for item in outcomes)),
                tier=tiers[(target, requirement)],
                target=target,
                cause=cause,
                blocked_by=tuple(
                    dict.fromkeys(item[3] for item in chosen if item[2] == cause and item[3])
                ),
            )
        )
    return sorted(statuses, key=lambda item: (item.target, item.requirement))


@dataclass(frozen=True)
class Gate:
    """Which unverified MUSTs fail the run.

    By default every unverified MUST fails it except those the adapter declares
    (``unsupported`` in its capabilities, or blocked by a declared known failure).

    Attributes:
        require_tier: Every MUST named by a check of this tier or a lower one must be
            verified, declared gaps included (``black-box`` or ``scripted``).
        baseline: MUST ids that may stay unverified whatever the reason.
        allow_unverified: Report unverified MUSTs without failing the run (the gate
            before issue 38); ``require_tier`` and ``baseline`` still apply.
    """

    require_tier: str | None = None
    baseline: frozenset[str] | None = None
    allow_unverified: bool = False

    def __post_init__(self) -> None:
        if self.require_tier is not None and self.require_tier not in TIERS:
            raise ValueError(f"unknown tier {self.require_tier!r}; use one of {', '.join(TIERS)}")

    @classmethod
    def load_baseline(
        cls, path: Path, *, require_tier: str | None = None, allow_unverified: bool = False
    ) -> Gate:
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
        return cls(
            require_tier=require_tier, baseline=frozenset(ids), allow_unverified=allow_unverified
        )

    def requires(self, status: RequirementStatus) -> bool:
        """Whether this unverified MUST fails the run."""
        if status.status != "unverified":
            return False
        if self.require_tier is not None and _tier_rank(status.tier) <= _tier_rank(
            self.require_tier
        ):
            return True
        if self.baseline is not None and status.requirement in self.baseline:
            return False
        if self.allow_unverified:
            return self.baseline is not None
        return status.cause not in ACCEPTED_CAUSES


def _known(catalogue: object, requirement: str) -> bool:
    try:
        catalogue.get(requirement)  # type: ignore[attr-defined]
    except KeyError:
        return False
    return True


#: How a check shows in JUnit and the pytest plugin, as the gate sees it: ``failure``
#: (it fails the run), ``error``, ``note`` (it failed a SHOULD or MAY that gates
#: nothing: reported, not failing), ``skipped`` (did not run, or a declared failure) or
#: ``pass``.
CheckOutcome = Literal["pass", "failure", "error", "note", "skipped"]


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
    #: Failing checks a MUST depends on (it names one, or a check it blocks does), so
    #: their failure fails the run at any level: ``(target, profile, check id)``. Empty
    #: under ``--allow-unverified``.
    blocking: frozenset[tuple[str, str, str]] = frozenset()
    #: What was not reached and how to reach it, one line per reason (console, Markdown).
    details: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """``PASS``, ``PASS WITH UNVERIFIED MUSTS``, ``FAIL`` or ``INTERRUPTED``."""
        return self.line.split(":", 1)[0]

    def check_outcome(self, report: Report, result: CheckResult) -> tuple[CheckOutcome, str]:
        """How ``result`` (of ``report``) shows in JUnit and pytest, with its message."""
        first = result.message.splitlines()[0] if result.message else result.status
        if result.status == "pass":
            return "pass", ""
        if result.status == "error":
            return "error", first
        if result.status == "xpass":
            return ("failure" if result.level == "MUST" else "note"), first
        if result.status == "fail":
            key = (report.adapter, report.profile, result.check_id)
            if (result.failed_level or result.level) == "MUST" or key in self.blocking:
                return "failure", first
            return "note", (
                f"{result.failed_level or result.level} {result.failed_requirement} does not "
                f"hold (reported; it gates nothing): {first}"
            )
        if result.status == "xfail":
            return "skipped", f"xfail: {first}"
        if result.status == "blocked":
            by_id = {item.check_id: item for item in report.results}
            root = _root(result, by_id)
            if (report.adapter, report.profile, root.check_id) in self.blocking or (
                root.status in ("fail", "error") and (root.failed_level or root.level) == "MUST"
            ):
                return (
                    "skipped",
                    f"blocked: {failure_label(root)} failed (that check fails the run)",
                )
        required = [
            status
            for status in self.required_unverified
            if status.target == report.adapter and status.requirement in result.requirements
        ]
        if required:
            names = ", ".join(status.requirement for status in required)
            reason = required[0].reasons[0] if required[0].reasons else result.status
            return "failure", f"MUST {names} unverified ({reason}): {_HOW_TO_REACH}"
        return "skipped", f"{result.status}: {first}"


#: How to reach an unverified MUST, whatever kept it unverified.
_HOW_TO_REACH = (
    "declare the capability it needs, or `unsupported: {name: why}` in the capability "
    "file, or list it in --baseline (--allow-unverified only reports it)"
)
_HINTS: dict[str, str] = {
    "blocked": "fix the failing check named",
    "erred": "fix the check error",
    "claimed": "implement the scripting extension (only the scripted tier verifies what "
    "those claimed capabilities promise)",
    "capability": "declare the capability in the capability file, or declare it "
    "`unsupported: {name: why}`",
    "skipped": "give the adapter what the skip names, or declare `unsupported: {check-id: why}`",
}


def _reason_summary(statuses: Sequence[RequirementStatus]) -> str:
    counts: Counter[str] = Counter(_short(status) for status in statuses)
    if len(counts) == 1:
        return next(iter(counts))
    shown = [f"{reason}: {count}" for reason, count in counts.most_common(3)]
    if len(counts) > 3:
        shown.append(_plural(len(counts) - 3, "other reason"))
    return "; ".join(shown)


def _short(status: RequirementStatus) -> str:
    """A status's first reason, without a declared reason's own words (they vary)."""
    reason = status.reasons[0] if status.reasons else "?"
    if status.cause == "unsupported":
        return reason.split(" (", 1)[0]
    return reason


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def must_depends_on(check_id: str, selected: Iterable[Check]) -> bool:
    """Whether a check of ``selected`` naming a MUST depends on ``check_id`` (directly or
    through other checks): the failure of ``check_id`` then blocks a MUST, which fails the
    run at any level. The pytest plugin decides with it as a test ends; :func:`verdict`
    reaches the same answer from the blocked results of a whole run."""
    checks = list(selected)
    reached = {check_id}
    grew = True
    while grew:
        grew = False
        for item in checks:
            if item.id not in reached and reached & set(item.depends_on):
                reached.add(item.id)
                grew = True
    return any(
        item.id in reached
        and item.id != check_id
        and strongest_level(item.requirements)[0] == "MUST"
        for item in checks
    )


def _blocking_checks(reports: Sequence[Report]) -> frozenset[tuple[str, str, str]]:
    """Failing checks whose failure a MUST depends on: it names one, or a check it blocks
    (directly or not) does. Their failure fails the run at any level."""
    found: set[tuple[str, str, str]] = set()
    for report in reports:
        by_id = {result.check_id: result for result in report.results}
        for result in report.results:
            if result.level != "MUST":
                continue
            root = _root(result, by_id) if result.status == "blocked" else result
            if root.status == "fail" or (root.status == "error" and root is not result):
                found.add((report.adapter, report.profile, root.check_id))
    return frozenset(found)


def verdict(reports: Sequence[Report], gate: Gate | None = None) -> Verdict:
    """Judge a run: every MUST that applies must be verified and hold.

    Fails on a failed MUST, a failing check a MUST depends on (any level), a check that
    erred, a MUST check declared as a known failure that passes (stale xfail), an
    interrupted run, and unverified MUSTs the ``gate`` requires (by default: every one
    the adapter did not declare). The line names what was not reached and why.
    """
    gate = gate or Gate()
    musts = tuple(s for s in requirement_statuses(reports) if s.level == "MUST")
    failed = [s for s in musts if s.status == "fail"]
    xfailed = [s for s in musts if s.status == "xfail"]
    unverified = [s for s in musts if s.status == "unverified"]
    held = [s for s in musts if s.status == "pass"]
    required = [s for s in unverified if gate.requires(s)]
    accepted = [s for s in unverified if not gate.requires(s)]
    blocked = [s for s in required if s.cause == "blocked"]
    blocking = _blocking_checks(reports) if not gate.allow_unverified else frozenset()
    gating_roots = sorted(
        {
            f"{report.adapter} {report.profile} {r.check_id}"
            for report in reports
            for r in report.results
            if (report.adapter, report.profile, r.check_id) in blocking
            and r.status == "fail"
            and (r.failed_level or r.level) != "MUST"
        }
    )
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
    ok = not (failed or errors or stale or required or interrupted or gating_roots)
    parts: list[str] = []
    if failed:
        parts.append(f"{_plural(len(failed), 'MUST')} fail")
    if blocked:
        roots = list(dict.fromkeys(label for s in blocked for label in s.blocked_by))
        shown = ", ".join(roots[:3]) + (f" and {len(roots) - 3} more" if len(roots) > 3 else "")
        parts.append(f"{_plural(len(blocked), 'MUST')} blocked by failing checks ({shown})")
    elif gating_roots:
        parts.append(f"{_plural(len(gating_roots), 'failing check')} a MUST depends on")
    if errors:
        parts.append(f"{_plural(len(errors), 'check')} erred")
    if stale:
        parts.append(f"{_plural(len(stale), 'declared known failure')} passed (stale xfail)")
    if xfailed:
        parts.append(f"{len(xfailed)} xfail (declared)")
    others = [s for s in required if s.cause != "blocked"]
    if others:
        text = f"{len(others)} unverified ({_reason_summary(others)})"
        if gate.require_tier:
            text += f", required by --require-tier {gate.require_tier}"
        elif gate.baseline is not None:
            text += " (not in the baseline)"
        parts.append(text)
    if accepted:
        parts.append(f"{len(accepted)} unverified, accepted ({_reason_summary(accepted)})")
    scope = ""
    targets = sorted({report.adapter for report in reports})
    profiles = sorted({report.profile for report in reports})
    if len(targets) > 1 or len(profiles) > 1:
        scope = f" across {_plural(len(targets), 'target')} x {_plural(len(profiles), 'profile')}"
    hints = [
        _HINTS[cause]
        for cause in _CAUSE_ORDER
        if cause in _HINTS and any(s.cause == cause for s in required)
    ]
    if interrupted:
        line = f"INTERRUPTED: partial results, {len(held)} MUSTs held so far" + (
            f"; {', '.join(parts)}" if parts else ""
        )
    elif ok and not unverified:
        line = f"PASS: all {_plural(len(held), 'MUST')} verified and hold{scope}" + (
            f"; {', '.join(parts)}" if parts else ""
        )
    elif ok:
        line = f"PASS WITH UNVERIFIED MUSTS: {len(held)} hold, {', '.join(parts)}{scope}"
    else:
        line = f"FAIL: {', '.join(parts)}{scope}"
        if required:
            line += f"; to reach them: {'; '.join(hints) or 'see above'}"
            if not gate.allow_unverified and not gate.require_tier:
                line += " (or list them in --baseline; --allow-unverified only reports them)"
    grouped: dict[tuple[str, str], list[str]] = {}
    for s in required:
        grouped.setdefault((s.target, _short(s) if s.reasons else s.cause), []).append(
            s.requirement
        )
    details = tuple(
        f"not verified ({reason}): {target} {', '.join(ids)}"
        for (target, reason), ids in grouped.items()
    )
    return Verdict(
        ok=ok,
        line=line,
        musts=musts,
        errors=errors,
        stale_xfails=stale,
        required_unverified=tuple(required),
        interrupted=interrupted,
        warnings=tuple(warnings),
        blocking=blocking,
        details=details,
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
    #: The gate the verdict was judged by (each section's own verdict uses it too).
    gate: Gate = field(default_factory=Gate)

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
                "label": self.verdict.label,
                "details": list(self.verdict.details),
            },
            "musts": [
                {
                    "target": s.target,
                    "requirement": s.requirement,
                    "status": s.status,
                    "cause": s.cause,
                    "blockedBy": list(s.blocked_by),
                    "reasons": list(s.reasons),
                    "checks": list(s.checks),
                    "tier": s.tier,
                }
                for s in self.verdict.musts
            ],
            "reports": [self.report_json(report) for report in self.reports],
        }
        return json.dumps(data, indent=2, sort_keys=True)

    def report_verdict(self, report: Report) -> Verdict:
        """The verdict of one section (the run's own when the run has one section)."""
        if len(self.reports) == 1:
            return self.verdict
        return verdict([report], self.gate)

    def report_json(self, report: Report) -> dict[str, Any]:
        """One section's JSON report, its ``summary`` carrying the gate's verdict."""
        return dict(
            json.loads(report.to_json(judged=self.report_verdict(report), timings=self.timings))
        )

    def to_junit_xml(self) -> str:
        """One ``testsuites`` document; suites are named ``<target> <profile> <area>``."""
        root = ElementTree.Element("testsuites", name="harness-v1 conformance")
        single = len(self.reports) == 1
        for report in self.reports:
            prefix = "" if single else f"{report.adapter} {report.profile} "
            report.add_junit_suites(root, prefix=prefix, judged=self.verdict)
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
        if self.verdict.details:
            lines += [f"- {detail}" for detail in self.verdict.details] + [""]
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
            lines.append(report.to_markdown(level=2, judged=self.report_verdict(report)))
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
