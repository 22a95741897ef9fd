"""``harness-testkit matrix``: one adapter, several versions, one side-by-side report.

Each version runs the same profile, seed and selection, one after the other (one adapter
host at a time). The matrix has a row per requirement and a column per version; a cell
says how the requirement fared: ``pass``, ``fail`` (a check failed or erred on it, or a
declared deviation no longer fails), ``declared`` (a strict xfail of the version's
profile) or ``skipped`` (its capability is not declared, a prerequisite failed, or its
check stopped at another requirement). A version that cannot be installed or started is
a column with its reason and no cells. The matrix is written as JSON, Markdown and the
HTML compare view, next to each version's own JSON report and replay bundles.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ._context import PROFILES
from ._html import load_report, render_html, requirement_statuses
from ._hypothesis import DEFAULT_EXAMPLE_DATABASE
from ._report import Report
from ._runner import Expectations, RunOptions, Selection, SelectionError, run_suite, select_checks

__all__ = ["MatrixColumn", "build_matrix", "matrix", "matrix_markdown", "parse_matrix_target"]

#: Cell statuses, in the order the Markdown legend lists them.
CELL_STATUSES = ("pass", "fail", "declared", "skipped")
#: A check status (or a requirement's derived one) as a matrix cell.
_CELL = {
    "pass": "pass",
    "fail": "fail",
    "error": "fail",
    "xpass": "fail",
    "xfail": "declared",
    "skip": "skipped",
    "blocked": "skipped",
    "unverified": "skipped",
}
_TARGET = re.compile(r"^npm:(?P<name>(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*)@(?P<versions>[^#\s]+)$")


def parse_matrix_target(text: str) -> tuple[str, list[str]]:
    """``npm:NAME@V1,V2,...`` -> (NAME, [V1, V2, ...]).

    Raises:
        ValueError: naming what is wrong and how to write it.
    """
    match = _TARGET.match(text.strip())
    versions = [v.strip() for v in match["versions"].split(",")] if match else []
    if match is None or not all(versions) or len(set(versions)) != len(versions):
        raise ValueError(
            f"{text!r} is not a version list: write npm:NAME@V1,V2,... with exact versions, "
            "each once, for example npm:@ai-sdk/harness-pi@1.0.76,1.0.123"
        )
    return match["name"], versions


@dataclass(frozen=True)
class MatrixColumn:
    """One version's run.

    Attributes:
        version: The adapter version.
        report: Its JSON report file (``None`` when it did not run).
        error: Why it did not run (a set-up error), else ``None``.
        seconds: How long installing and running it took.
    """

    version: str
    report: Path | None
    error: str | None
    seconds: float


def _cell(
    status: str,
    checks: Sequence[str],
    outcomes: Mapping[str, tuple[str, str | None]],
    base: Path,
) -> dict[str, Any]:
    cell: dict[str, Any] = {
        "status": _CELL.get(status, "fail"),
        "detail": status,
        "checks": list(checks),
    }
    # The bundle of the check that gave the cell its status (the worst one).
    for check in checks:
        check_status, bundle = outcomes.get(check, ("", None))
        if bundle and _CELL.get(check_status) == cell["status"]:
            cell["bundle"] = _relative(Path(bundle), base)
            break
    return cell


def _relative(path: Path, base: Path) -> str:
    try:
        return str(path.resolve().relative_to(base.resolve()))
    except ValueError:
        return str(path)


def build_matrix(
    package: str, profile: str, seed: int, columns: Sequence[MatrixColumn], out_dir: Path
) -> dict[str, Any]:
    """The matrix document: columns (versions) and rows (requirements) with their cells."""
    from harness_testkit.spec import load_requirements

    catalogue = load_requirements()
    per_version: dict[str, dict[str, dict[str, Any]]] = {}
    column_docs = []
    for column in columns:
        doc: dict[str, Any] = {"version": column.version, "seconds": round(column.seconds, 1)}
        if column.report is None:
            doc["error"] = column.error
            column_docs.append(doc)
            continue
        data = json.loads(column.report.read_text(encoding="utf-8"))
        (run,) = load_report(column.report)
        outcomes = {r.check_id: (r.status, r.bundle) for r in run.results}
        per_version[column.version] = {
            requirement: _cell(status, checks, outcomes, out_dir)
            for requirement, (status, checks) in requirement_statuses(run).items()
        }
        summary = data.get("summary", {})
        doc.update(
            report=_relative(column.report, out_dir),
            ok=summary.get("ok"),
            counts=summary.get("counts", {}),
            byTier=summary.get("byTier", {}),
            versions=data.get("versions", {}),
        )
        column_docs.append(doc)
    requirement_ids = sorted({req for cells in per_version.values() for req in cells})
    rows = []
    for requirement in requirement_ids:
        try:
            item = catalogue.get(requirement)
            level, area = str(item.level), item.area
        except KeyError:
            level, area = "?", "OTHER"
        cells = {
            version: cells[requirement]
            for version, cells in per_version.items()
            if requirement in cells
        }
        statuses = {cell["status"] for cell in cells.values()}
        rows.append(
            {
                "requirement": requirement,
                "area": area,
                "level": level,
                "cells": cells,
                "differs": len(statuses) > 1,
            }
        )
    return {
        "adapter": package,
        "profile": profile,
        "seed": seed,
        "columns": column_docs,
        "rows": rows,
        "differences": [row["requirement"] for row in rows if row["differs"]],
    }


def matrix_markdown(document: Mapping[str, Any]) -> str:
    """The matrix as a Markdown page (differences first, then every requirement)."""
    columns = document["columns"]
    versions = [column["version"] for column in columns]
    head = "| requirement | level | " + " | ".join(versions) + " |"
    rule = "|---|---|" + "---|" * len(versions)
    lines = [
        f"# `{document['adapter']}`: {len(versions)} versions side by side",
        "",
        f"Profile `{document['profile']}`, seed {document['seed']}. A cell is `pass`, `fail`, "
        "`declared` (a strict xfail of the version's profile) or `skipped`; it links to the "
        "replay bundle of the check that failed on it. Regenerate with:",
        "",
        "```bash",
        f"harness-testkit matrix npm:{document['adapter']}@{','.join(versions)} "
        f"--profile {document['profile']} --seed {document['seed']} --out DIR",
        "```",
        "",
        "| version | verdict | checks | took |",
        "|---|---|---|---|",
    ]
    for column in columns:
        if "error" in column:
            reason = " / ".join(line.strip() for line in str(column["error"]).splitlines())
            lines.append(f"| {column['version']} | did not run: {reason.replace('|', '/')} | | |")
            continue
        counts = ", ".join(f"{n} {s}" for s, n in sorted(column["counts"].items()))
        verdict = "no MUST failure" if column.get("ok") else "a MUST fails"
        lines.append(f"| {column['version']} | {verdict} | {counts} | {column['seconds']:g} s |")

    def row_line(row: Mapping[str, Any]) -> str:
        cells = []
        for version in versions:
            cell = row["cells"].get(version)
            if cell is None:
                cells.append("—")
            elif "bundle" in cell:
                cells.append(f"[{cell['status']}]({cell['bundle']})")
            else:
                cells.append(cell["status"])
        return f"| {row['requirement']} | {row['level']} | " + " | ".join(cells) + " |"

    differing = [row for row in document["rows"] if row["differs"]]
    lines += ["", "## Requirements that differ between versions", ""]
    lines += [head, rule, *map(row_line, differing)] if differing else ["None."]
    lines += ["", "## Every requirement", "", head, rule, *map(row_line, document["rows"])]
    return "\n".join(lines) + "\n"


@click.command("matrix")
@click.argument("target")
@click.option("--profile", type=click.Choice(sorted(PROFILES)), default="smoke", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--sandbox", type=click.Choice(["local", "docker"]), default="local", show_default=True
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for matrix.json, matrix.md, matrix.html, each version's report and bundles.",
)
@click.option("--check", "check_ids", multiple=True, help="Only these check ids.")
@click.option("--exclude", multiple=True, help="Leave out these check ids.")
@click.option("--check-timeout", type=click.FloatRange(min=1), default=900.0, show_default=True)
def matrix(
    target: str,
    profile: str,
    seed: int,
    sandbox: str,
    out_dir: Path,
    check_ids: tuple[str, ...],
    exclude: tuple[str, ...],
    check_timeout: float,
) -> None:
    """Run one profile against several versions of a Node adapter, side by side.

    TARGET is npm:NAME@V1,V2,... (exact versions). Each version runs with the kit's
    profile of the package (its declared deviations for that version). Exit 0 when every
    version ran with no MUST failure, 1 otherwise, 2 on a usage error.
    """
    from ._cli import (
        _close_node_hosts,
        _load_any_target,
        _probe_factory,
        _SetupError,
        _split,
        _usage_exit,
    )

    try:
        package, versions = parse_matrix_target(target)
        selection = Selection(checks=_split(check_ids), exclude=_split(exclude))
        select_checks(selection)
    except (ValueError, SelectionError) as error:
        _usage_exit(str(error))
    out_dir.mkdir(parents=True, exist_ok=True)
    columns: list[MatrixColumn] = []
    for version in versions:
        started = time.monotonic()
        spec = f"npm:{package}@{version}"
        click.echo(f"matrix: {spec}, profile {profile}, seed {seed}")
        try:
            loaded = _load_any_target(spec, None, None)
            # Installs the version and starts its host: a version that cannot be
            # installed is a column with the reason, and the matrix goes on.
            _probe_factory(loaded)
        except _SetupError as error:
            # npm's pointer to its own log names a file of this machine: left out.
            reason = "\n".join(
                line for line in str(error).splitlines() if "complete log of this run" not in line
            )
            columns.append(MatrixColumn(version, None, reason, time.monotonic() - started))
            click.echo(f"matrix: {spec} did not run: {error}", err=True)
            _close_node_hosts()
            continue
        options = RunOptions(
            profile=profile,
            seed=seed,
            sandbox=sandbox,  # type: ignore[arg-type]
            bundle_dir=out_dir / "bundles" / version,
            expectations=Expectations(),
            check_timeout=check_timeout,
            example_database=DEFAULT_EXAMPLE_DATABASE,
            bundle_declared=True,
        )
        try:
            report: Report = run_suite(loaded, options, selection=selection)
        finally:
            _close_node_hosts()
        path = out_dir / "reports" / f"{version}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(report.to_json(), encoding="utf-8")
        seconds = time.monotonic() - started
        columns.append(MatrixColumn(version, path, None, seconds))
        click.echo(
            f"matrix: {spec}: {'no MUST failure' if report.ok else 'a MUST fails'} "
            f"({'; '.join(report.tier_lines())}) in {seconds:.0f} s"
        )
    document = build_matrix(package, profile, seed, columns, out_dir)
    (out_dir / "matrix.json").write_text(
        json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    (out_dir / "matrix.md").write_text(matrix_markdown(document), encoding="utf-8")
    runs = [run for column in columns if column.report for run in load_report(column.report)]
    if runs:
        (out_dir / "matrix.html").write_text(render_html(runs, link_base=out_dir), encoding="utf-8")
    differing = document["differences"]
    click.echo(
        f"matrix: {len(columns)} versions, {len(document['rows'])} requirements, "
        f"{len(differing)} differ: {', '.join(differing) or 'none'}; wrote {out_dir}/matrix.*"
    )
    ok = all(
        column.report is not None and doc.get("ok")
        for column, doc in zip(columns, document["columns"], strict=True)
    )
    raise SystemExit(0 if ok else 1)
