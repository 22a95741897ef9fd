"""Self-contained HTML conformance reports, and several runs side by side.

Built from JSON reports (``harness-testkit check --json``), read defensively: unknown
statuses get a neutral colour, missing fields are left out. One report gives a page
with the verdict, the effective capabilities, the requirement matrix by area and level,
the failures (message, traceback, replay command, evidence transcript from the replay
bundle) and the checks; several reports give a comparison (one column per run: adapters,
profiles or versions of one adapter), like Bowtie's summary. No network asset: the CSS
is inline and there is no script.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

import click

from ._versions import KIT, version_line

__all__ = ["ReportRun", "load_report", "render_html", "report", "run_from_json", "write_html"]

#: Worst first: a requirement takes the worst status among the checks that verify it.
STATUS_ORDER = ("fail", "xpass", "error", "blocked", "unverified", "xfail", "skip", "pass")
COLOURS = {
    "pass": "#1a7f37",
    "fail": "#cf222e",
    "xpass": "#a40e26",
    "error": "#e16f24",
    "blocked": "#8250df",
    "unverified": "#9fb3c8",
    "xfail": "#d4a72c",
    "skip": "#d0d7de",
}
_UNKNOWN_COLOUR = "#6e7781"
MEANINGS = {
    "pass": "holds",
    "fail": "broken",
    "xpass": "known bug no longer fails (remove the xfail entry)",
    "error": "the check itself could not run",
    "blocked": "a prerequisite check failed",
    "unverified": "not verified (its check stopped at another requirement, or none ran)",
    "xfail": "known bug (strict xfail)",
    "skip": "does not apply (capability not declared)",
}
_LEVELS = ("MUST", "SHOULD", "MAY")
_TRANSCRIPT_LINES = 400


@dataclass(frozen=True)
class ResultRow:
    """One check's outcome, as read from a JSON report."""

    check_id: str
    title: str
    level: str
    areas: tuple[str, ...]
    requirements: tuple[str, ...]
    status: str
    message: str = ""
    failed_requirement: str | None = None
    traceback: str | None = None
    replay_command: str | None = None
    bundle: str | None = None
    evidence: Any = None


@dataclass(frozen=True)
class ReportRun:
    """One conformance run (one JSON report, or one target section of it)."""

    label: str
    adapter: str
    harness_id: str
    profile: str
    suite_version: str
    seed: Any
    sandbox: str
    ok: bool | None
    results: tuple[ResultRow, ...]
    capabilities: Mapping[str, Any] | None = None
    warnings: tuple[str, ...] = ()
    base_dir: Path = field(default_factory=Path.cwd)
    #: What ran, name -> version (the kit, the adapter, its runtime).
    versions: Mapping[str, str] = field(default_factory=dict)
    #: The gate's verdict line (``summary.verdict``), when the report carries one.
    verdict_line: str | None = None

    def counts(self) -> Counter[str]:
        """Checks per status."""
        return Counter(result.status for result in self.results)


def _text(value: Any, default: str = "") -> str:
    return default if value is None else str(value)


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Iterable):
        return tuple(str(item) for item in value)
    return ()


def run_from_json(
    data: Mapping[str, Any], *, source: str, base_dir: Path, file: str | None = None
) -> list[ReportRun]:
    """The runs of a JSON report (one, or one per ``targets`` section).

    Each run's label names its target, profile, versions and ``file`` (the report file it
    came from, when it came from one), so that compared columns never look alike.

    Raises:
        ValueError: ``data`` is not a conformance report (naming ``source``).
    """
    sections = data.get("targets") or data.get("reports")
    if isinstance(sections, list) and sections and "results" not in data:
        return [
            run
            for index, section in enumerate(sections)
            if isinstance(section, Mapping)
            for run in run_from_json(
                section, source=f"{source}[{index}]", base_dir=base_dir, file=file
            )
        ]
    results = data.get("results")
    if not isinstance(results, list):
        raise ValueError(
            f"{source} is not a harness-testkit conformance report (no `results` list); "
            "write one with `harness-testkit check ... --json FILE`"
        )
    rows = []
    for item in results:
        if not isinstance(item, Mapping) or "check_id" not in item:
            continue
        traceback = item.get("traceback")
        rows.append(
            ResultRow(
                check_id=str(item["check_id"]),
                title=_text(item.get("title")),
                level=_text(item.get("level"), "MAY").upper(),
                areas=_strings(item.get("areas")) or ("OTHER",),
                requirements=_strings(item.get("requirements")),
                status=_text(item.get("status"), "unknown").lower(),
                message=_text(item.get("message")),
                failed_requirement=item.get("failed_requirement"),
                traceback="".join(traceback) if isinstance(traceback, list) else traceback,
                replay_command=item.get("replay_command"),
                bundle=item.get("bundle"),
                evidence=item.get("evidence", item.get("transcript")),
            )
        )
    summary = data.get("summary") if isinstance(data.get("summary"), Mapping) else {}
    ok = summary.get("ok") if isinstance(summary, Mapping) else None
    line = summary.get("verdict") if isinstance(summary, Mapping) else None
    adapter = _text(data.get("adapter"), "adapter")
    profile = _text(data.get("profile"), "?")
    version = _text(data.get("suite_version"), "?")
    capabilities = data.get("capabilities")
    raw_versions = data.get("versions")
    versions = (
        {str(name): str(value) for name, value in raw_versions.items()}
        if isinstance(raw_versions, Mapping)
        else {}
    )
    return [
        ReportRun(
            label=_label(adapter, profile, version, versions, file),
            adapter=adapter,
            harness_id=_text(data.get("harness_id"), "?"),
            profile=profile,
            suite_version=version,
            seed=data.get("seed"),
            sandbox=_text(data.get("sandbox"), "?"),
            ok=ok if isinstance(ok, bool) else None,
            results=tuple(rows),
            capabilities=capabilities if isinstance(capabilities, Mapping) else None,
            warnings=_strings(data.get("warnings")),
            base_dir=base_dir,
            versions=versions,
            verdict_line=line if isinstance(line, str) else None,
        )
    ]


def _label(
    adapter: str, profile: str, suite: str, versions: Mapping[str, str], file: str | None
) -> str:
    """``target (profile, versions) from file``: the adapter's and its runtime's versions
    when the report names them, else the suite's."""
    own = {name: value for name, value in versions.items() if name != KIT}
    version_text = version_line(own) if own else f"suite {suite}"
    return f"{adapter} ({profile}, {version_text})" + (f" from {file}" if file else "")


def load_report(path: Path) -> list[ReportRun]:
    """Read a JSON report file.

    Raises:
        ValueError: naming the file and what is wrong with it.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ValueError(f"cannot read report {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}:{error.lineno}: not JSON: {error.msg}") from None
    if not isinstance(data, Mapping):
        raise ValueError(f"{path} is not a harness-testkit conformance report (not an object)")
    return run_from_json(data, source=str(path), base_dir=path.parent, file=str(path))


# -- requirement statuses -----------------------------------------------------------------


def _worst(statuses: Iterable[str]) -> str:
    known = [s for s in statuses if s in STATUS_ORDER]
    unknown = [s for s in statuses if s not in STATUS_ORDER]
    if known:
        return min(known, key=STATUS_ORDER.index)
    return unknown[0] if unknown else "unverified"


def requirement_statuses(run: ReportRun) -> dict[str, tuple[str, list[str]]]:
    """Requirement id -> (status, the checks that verify it)."""
    seen: dict[str, list[tuple[str, str]]] = {}
    for result in run.results:
        for requirement in result.requirements:
            status = result.status
            if status in ("fail", "xfail") and result.failed_requirement not in (
                None,
                requirement,
            ):
                # The check failed on another requirement before it verified this one.
                status = "unverified"
            seen.setdefault(requirement, []).append((status, result.check_id))
    return {
        requirement: (_worst(s for s, _ in entries), [c for _, c in entries])
        for requirement, entries in seen.items()
    }


@dataclass(frozen=True)
class _Requirement:
    id: str
    area: str
    level: str
    statement: str


def _failed_ids(runs: Sequence[ReportRun]) -> set[str]:
    return {
        result.failed_requirement
        for run in runs
        for result in run.results
        if result.failed_requirement is not None
    }


def _catalogue(ids: Iterable[str], runs: Sequence[ReportRun]) -> dict[str, _Requirement]:
    """Area, level and statement of each id (the catalogue, else what the reports say)."""
    from harness_testkit.spec import load_requirements

    catalogue = load_requirements()
    found: dict[str, _Requirement] = {}
    fallback: dict[str, tuple[str, str]] = {}
    for run in runs:
        for result in run.results:
            for requirement in result.requirements:
                fallback.setdefault(requirement, (result.areas[0], result.level))
    for requirement in ids:
        try:
            item = catalogue.get(requirement)
        except KeyError:
            area, level = fallback.get(requirement, ("OTHER", "MAY"))
            found[requirement] = _Requirement(requirement, area, level, "")
        else:
            found[requirement] = _Requirement(
                requirement, item.area, str(item.level), " ".join(item.statement.split())
            )
    return found


# -- rendering -----------------------------------------------------------------------------

_CSS = """
:root { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; }
body { margin: 24px; max-width: 1400px; }
h1 { font-size: 22px; margin: 0 0 8px; } h2 { font-size: 18px; margin: 28px 0 8px; }
h3 { font-size: 15px; margin: 16px 0 6px; }
.verdict { display: inline-block; padding: 4px 12px; border-radius: 6px; color: #fff;
  font-weight: 700; }
.meta { color: #59636e; margin: 6px 0; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top;
  font-size: 13px; }
th { background: #f6f8fa; }
.sq { display: inline-block; width: 22px; height: 22px; margin: 2px; border-radius: 3px;
  text-decoration: none; }
.cell { min-width: 120px; }
.pill { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff;
  font-size: 12px; font-weight: 600; }
.legend span { margin-right: 14px; font-size: 13px; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; padding: 8px; overflow-x: auto;
  font-size: 12px; max-height: 480px; }
code { font-size: 12px; }
details { margin: 8px 0; } summary { cursor: pointer; }
.cmp td.status { width: 90px; text-align: center; color: #fff; font-weight: 600; }
.area-row th { background: #eaeef2; }
.muted { color: #59636e; }
"""


def _colour(status: str) -> str:
    return COLOURS.get(status, _UNKNOWN_COLOUR)


def _pill(status: str) -> str:
    text_colour = "#1f2328" if status in ("skip", "unverified", "xfail") else "#fff"
    return (
        f'<span class="pill" data-status="{escape(status)}" style="background:{_colour(status)};'
        f'color:{text_colour}">{escape(status)}</span>'
    )


#: The badge of each verdict label (the gate's line starts with it), and its colour.
_BADGES = {
    "PASS": "#1a7f37",
    "PASS WITH UNVERIFIED MUSTS": "#9a6700",
    "FAIL": "#cf222e",
    "INTERRUPTED": "#6e7781",
}


def _verdict(run: ReportRun) -> str:
    """The badge: the gate's label, as the console's verdict line starts."""
    if run.verdict_line is not None:
        text = run.verdict_line.split(":", 1)[0]
        if text not in _BADGES:
            text = "PASS" if run.ok else "FAIL"
    elif run.ok is None:
        return '<span class="verdict" style="background:#6e7781">UNKNOWN</span>'
    else:
        text = "PASS" if run.ok else "FAIL"
    return f'<span class="verdict" data-verdict="{text}" style="background:{_BADGES[text]}">{text}</span>'


def _legend() -> str:
    items = "".join(
        f'<span><span class="sq" style="background:{_colour(s)};width:12px;height:12px">'
        f"</span> {escape(s)}: {escape(MEANINGS[s])}</span>"
        for s in STATUS_ORDER
    )
    return f'<p class="legend">{items}</p>'


def _counts_line(run: ReportRun) -> str:
    counts = run.counts()
    return " ".join(f"{_pill(status)} {counts[status]}" for status in sorted(counts, key=_order))


def _order(status: str) -> int:
    return STATUS_ORDER.index(status) if status in STATUS_ORDER else len(STATUS_ORDER)


def _capabilities(block: Mapping[str, Any] | None) -> str:
    if not block:
        return '<p class="muted">The report names no capabilities.</p>'
    effective = block.get("effective", {}) if isinstance(block.get("effective"), Mapping) else {}
    sources = block.get("sources", {}) if isinstance(block.get("sources"), Mapping) else {}
    rows = "".join(
        f"<tr><td><code>{escape(str(name))}</code></td>"
        f"<td><code>{escape(json.dumps(effective.get(name)))}</code></td>"
        f"<td>{escape(str(source))}</td></tr>"
        for name, source in sorted(sources.items())
    )
    parts = [
        f'<p class="meta">Declaration: {escape(str(block.get("origin", "?")))}</p>',
        f"<table><tr><th>capability</th><th>value</th><th>source</th></tr>{rows}</table>",
    ]
    builtins = block.get("builtins")
    if builtins:
        parts.append(f'<p class="meta">Built-in tools: {escape(", ".join(map(str, builtins)))}</p>')
    for mismatch in block.get("mismatches") or []:
        parts.append(f"<p>{_pill('fail')} mismatch: {escape(str(mismatch))}</p>")
    return "".join(parts)


def _matrix(run: ReportRun, requirements: Mapping[str, _Requirement]) -> str:
    statuses = requirement_statuses(run)
    grid: dict[str, dict[str, list[str]]] = {}
    for requirement in sorted(statuses):
        info = requirements[requirement]
        grid.setdefault(info.area, {}).setdefault(info.level, []).append(requirement)
    header = "".join(f"<th>{level}</th>" for level in _LEVELS)
    rows = []
    for area in sorted(grid):
        cells = []
        for level in _LEVELS:
            ids = grid[area].get(level, [])
            squares = "".join(
                f'<a class="sq" href="#req-{escape(req)}" data-requirement="{escape(req)}" '
                f'data-status="{escape(statuses[req][0])}" style="background:'
                f'{_colour(statuses[req][0])}" title="{escape(req)}: {escape(statuses[req][0])}'
                f' ({escape(", ".join(statuses[req][1]))}) {escape(requirements[req].statement)}">'
                "</a>"
                for req in ids
            )
            held = sum(1 for req in ids if statuses[req][0] == "pass")
            summary = f'<div class="muted">{held}/{len(ids)} hold</div>' if ids else ""
            cells.append(f'<td class="cell">{squares}{summary}</td>')
        rows.append(f"<tr><th>{escape(area)}</th>{''.join(cells)}</tr>")
    return (
        f'<table class="matrix" id="matrix"><tr><th>area</th>{header}</tr>{"".join(rows)}</table>'
    )


def _evidence(result: ResultRow, base_dir: Path) -> str:
    evidence = result.evidence
    scenario = None
    if evidence is None and result.bundle:
        for candidate in (Path(result.bundle), base_dir / result.bundle):
            try:
                bundle = json.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(bundle, Mapping):
                evidence = bundle.get("transcript")
                scenario = bundle.get("scenario")
                break
    parts = []
    if scenario is not None:
        parts.append(
            "<details><summary>Minimal failing scenario</summary>"
            f"<pre>{escape(json.dumps(scenario, indent=2, default=str))}</pre></details>"
        )
    if evidence:
        lines = json.dumps(evidence, indent=2, default=str).splitlines()
        shown = "\n".join(lines[:_TRANSCRIPT_LINES])
        more = (
            f"\n… {len(lines) - _TRANSCRIPT_LINES} more lines in the bundle"
            if len(lines) > _TRANSCRIPT_LINES
            else ""
        )
        parts.append(
            "<details><summary>Evidence: the recorded transcript</summary>"
            f"<pre>{escape(shown + more)}</pre></details>"
        )
    elif result.bundle:
        parts.append(f'<p class="muted">Bundle {escape(result.bundle)} not found.</p>')
    return "".join(parts)


def _failures(run: ReportRun, requirements: Mapping[str, _Requirement]) -> str:
    failing = [r for r in run.results if r.status in ("fail", "xpass", "error")]
    if not failing:
        return '<p class="muted">No failures.</p>'
    blocks = []
    for result in failing:
        requirement = result.failed_requirement
        statement = (
            requirements[requirement].statement
            if requirement is not None and requirement in requirements
            else ""
        )
        parts = [
            f'<h3 id="check-{escape(result.check_id)}">{_pill(result.status)} '
            f"<code>{escape(result.check_id)}</code> "
            f"{_requirement_link(requirement) if requirement else ''} ({escape(result.level)})</h3>",
        ]
        if statement:
            parts.append(f"<blockquote>{escape(statement)}</blockquote>")
        parts.append(f"<pre>{escape(result.message)}</pre>")
        if result.traceback:
            parts.append(
                f"<details open><summary>Traceback</summary><pre>{escape(result.traceback)}"
                "</pre></details>"
            )
        if result.replay_command:
            parts.append(f"<p>Replay: <code>{escape(result.replay_command)}</code></p>")
        parts.append(_evidence(result, run.base_dir))
        blocks.append("".join(parts))
    return "".join(blocks)


def _checks(run: ReportRun) -> str:
    rows = []
    skipped: dict[str, list[str]] = {}
    for result in run.results:
        if result.status == "skip":
            skipped.setdefault(result.message or "skipped", []).append(result.check_id)
            continue
        note = result.message.splitlines()[0] if result.message else ""
        rows.append(
            f'<tr><td><a href="#check-{escape(result.check_id)}"><code>'
            f"{escape(result.check_id)}</code></a><div class='muted'>{escape(result.title)}</div>"
            f"</td><td>{escape(result.level)}</td><td>{_pill(result.status)}</td>"
            f"<td>{', '.join(map(_requirement_link, result.requirements))}</td>"
            f"<td>{escape(note)}</td></tr>"
        )
    for reason, ids in skipped.items():
        rows.append(
            f"<tr><td>{len(ids)} checks</td><td></td><td>{_pill('skip')}</td>"
            f"<td><code>{escape(', '.join(ids))}</code></td><td>{escape(reason)}</td></tr>"
        )
    return (
        "<table><tr><th>check</th><th>level</th><th>status</th><th>requirements</th>"
        f"<th>note</th></tr>{''.join(rows)}</table>"
    )


def _requirement_list(
    run: ReportRun, requirements: Mapping[str, _Requirement], statuses: Mapping[str, Any]
) -> str:
    rows = "".join(
        f'<tr id="req-{escape(req)}"><td>{_requirement_link(req)}</td>'
        f"<td>{escape(requirements[req].level)}</td><td>{_pill(statuses[req][0])}</td>"
        f"<td>{escape(requirements[req].statement)}</td>"
        f"<td><code>{escape(', '.join(statuses[req][1]))}</code></td></tr>"
        for req in sorted(statuses)
    )
    return (
        "<details><summary>Every requirement</summary><table><tr><th>id</th><th>level</th>"
        f"<th>status</th><th>statement</th><th>checks</th></tr>{rows}</table></details>"
    )


def _requirement_link(requirement: str) -> str:
    """The id linked to its anchor on the docs site's requirement page."""
    from harness_testkit.spec import requirement_url

    try:
        url = requirement_url(requirement)
    except ValueError:
        # Not a catalogue-shaped id (a hand-edited report): shown, not linked.
        return f"<code>{escape(requirement)}</code>"
    return f'<a href="{escape(url)}"><code>{escape(requirement)}</code></a>'


def _page(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>{body}</body></html>\n"
    )


def _single(run: ReportRun) -> str:
    statuses = requirement_statuses(run)
    requirements = _catalogue({*statuses, *_failed_ids([run])}, [run])
    meta = (
        f"harness <code>{escape(run.harness_id)}</code> · profile <code>"
        f"{escape(run.profile)}</code> · seed {escape(_text(run.seed, '?'))} · sandbox "
        f"<code>{escape(run.sandbox)}</code> · suite {escape(run.suite_version)}"
        + (f" · versions {escape(version_line(run.versions))}" if run.versions else "")
    )
    warnings = "".join(f"<li>{escape(w)}</li>" for w in run.warnings)
    body = [
        f"<h1>harness-v1 conformance: <code>{escape(run.adapter)}</code> {_verdict(run)}</h1>",
        f'<p class="meta">{meta}</p><p>{_counts_line(run)}</p>',
        "<h2>Capabilities</h2>",
        _capabilities(run.capabilities),
        "<h2>Requirements by area and level</h2>",
        _legend(),
        _matrix(run, requirements),
        _requirement_list(run, requirements, statuses),
        "<h2>Failures</h2>",
        _failures(run, requirements),
        "<h2>Checks</h2>",
        _checks(run),
    ]
    if warnings:
        body += ["<h2>Warnings</h2>", f"<ul>{warnings}</ul>"]
    return _page(f"harness-v1 conformance: {run.adapter}", "".join(body))


def _status_cell(status: str | None, tooltip: str, href: str | None = None) -> str:
    if status is None:
        return '<td class="status muted" style="background:#fff;color:#59636e">—</td>'
    text_colour = "#1f2328" if status in ("skip", "unverified", "xfail") else "#fff"
    text = escape(status)
    if href is not None:
        text = f'<a href="{escape(href)}" style="color:inherit">{text}</a>'
    return (
        f'<td class="status" data-status="{escape(status)}" title="{escape(tooltip)}" '
        f'style="background:{_colour(status)};color:{text_colour}">{text}</td>'
    )


def _bundle_link(run: ReportRun, checks: Sequence[str], link_base: Path | None) -> str | None:
    """A link (relative to ``link_base``) to the replay bundle of the first of ``checks``
    that wrote one, or ``None``."""
    if link_base is None:
        return None
    bundles = {r.check_id: r.bundle for r in run.results if r.bundle}
    for check in checks:
        if check in bundles:
            path = Path(str(bundles[check]))
            if not path.is_absolute():
                path = Path.cwd() / path
            return os.path.relpath(path, link_base)
    return None


def _compare(runs: Sequence[ReportRun], link_base: Path | None = None) -> str:
    per_run = [requirement_statuses(run) for run in runs]
    ids = sorted({req for statuses in per_run for req in statuses})
    requirements = _catalogue({*ids, *_failed_ids(runs)}, runs)
    heads = "".join(f"<th>{escape(run.label)}</th>" for run in runs)
    verdicts = "".join(f"<td>{_verdict(run)}</td>" for run in runs)
    counts = "".join(f"<td>{_counts_line(run)}</td>" for run in runs)
    versions = "".join(f"<td>{escape(version_line(run.versions))}</td>" for run in runs)
    rows = []
    by_area: dict[str, list[str]] = {}
    for req in ids:
        by_area.setdefault(requirements[req].area, []).append(req)
    for area in sorted(by_area):
        rows.append(f'<tr class="area-row"><th colspan="{len(runs) + 2}">{escape(area)}</th></tr>')
        ordered = sorted(
            by_area[area],
            key=lambda r: (
                _LEVELS.index(requirements[r].level) if requirements[r].level in _LEVELS else 9,
                r,
            ),
        )
        for req in ordered:
            cells = "".join(
                _status_cell(
                    statuses[req][0] if req in statuses else None,
                    f"{req}: {', '.join(statuses[req][1])}" if req in statuses else "",
                    _bundle_link(run, statuses[req][1], link_base) if req in statuses else None,
                )
                for run, statuses in zip(runs, per_run, strict=True)
            )
            rows.append(
                f'<tr><td title="{escape(requirements[req].statement)}">{_requirement_link(req)}'
                f"</td><td>{escape(requirements[req].level)}</td>{cells}</tr>"
            )
    check_ids = list(dict.fromkeys(r.check_id for run in runs for r in run.results))
    by_check = [{r.check_id: r for r in run.results} for run in runs]
    check_rows = "".join(
        f"<tr><td><code>{escape(check)}</code></td>"
        + "".join(
            _status_cell(
                table[check].status if check in table else None,
                table[check].message.splitlines()[0]
                if check in table and table[check].message
                else "",
            )
            for table in by_check
        )
        + "</tr>"
        for check in check_ids
    )
    failures = "".join(
        f"<details><summary>{escape(run.label)}</summary>{_failures(run, requirements)}</details>"
        for run in runs
    )
    body = [
        f"<h1>harness-v1 conformance: {len(runs)} runs side by side</h1>",
        f'<table class="cmp"><tr><th></th>{heads}</tr><tr><th>verdict</th>{verdicts}</tr>'
        f"<tr><th>checks</th>{counts}</tr><tr><th>versions</th>{versions}</tr></table>",
        "<h2>Requirements</h2>",
        _legend(),
        f'<table class="cmp matrix" id="matrix"><tr><th>requirement</th><th>level</th>{heads}'
        f"</tr>{''.join(rows)}</table>",
        "<h2>Checks</h2>",
        f'<table class="cmp"><tr><th>check</th>{heads}</tr>{check_rows}</table>',
        "<h2>Failures</h2>",
        failures,
    ]
    return _page(f"harness-v1 conformance: {len(runs)} runs", "".join(body))


def render_html(runs: Sequence[ReportRun], *, link_base: Path | None = None) -> str:
    """One run's page, or several runs side by side.

    Args:
        runs: The runs.
        link_base: The folder the page is written to: side by side, a requirement's cell
            then links to the replay bundle of its failing check (relative to it).

    Raises:
        ValueError: no run given.
    """
    if not runs:
        raise ValueError("no conformance run to render")
    return _single(runs[0]) if len(runs) == 1 else _compare(runs, link_base)


def write_html(path: Path, reports: Sequence[Mapping[str, Any]]) -> None:
    """Render JSON report documents (``Report.to_json`` parsed) into ``path``."""
    runs = [
        run
        for index, data in enumerate(reports)
        for run in run_from_json(data, source=f"report {index}", base_dir=Path.cwd())
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_html(runs), encoding="utf-8")


@click.command("report")
@click.argument("reports", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write the self-contained HTML page.",
)
def report(reports: tuple[Path, ...], html_path: Path) -> None:
    """Render JSON REPORTS (from `check --json`) as HTML; several side by side."""
    runs: list[ReportRun] = []
    for path in reports:
        try:
            runs.extend(load_report(path))
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="REPORTS") from error
    html_path.parent.mkdir(parents=True, exist_ok=True)
    html_path.write_text(render_html(runs), encoding="utf-8")
    click.echo(f"Wrote {html_path} ({len(runs)} run{'s' if len(runs) != 1 else ''}).")
