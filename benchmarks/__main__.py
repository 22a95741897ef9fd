"""``python -m benchmarks``: run the benchmarks, print the tables, write the results file.

The results go to ``benchmarks/RESULTS.md`` (the tables, targets and notes, with the
machine, its load and the commit) and ``benchmarks/RESULTS.json`` (every figure).

Options: ``--quick`` (a short run), ``--out PATH`` (the JSON file, default
``benchmarks/RESULTS.json``; the Markdown goes beside it, with the suffix ``.md``),
``--check`` (exit status 1 when a target is missed),
``--only NAME`` (repeatable or comma-separated; names: agent, scaling, continuations,
concurrency, sandbox, suite, official, fast-paths, simulate-memory, instructions,
sharding, jobs), ``--official`` (the
comparison with the official TypeScript agent; needs Node.js 20+; exit status 2 without
it; ``instructions`` likewise needs valgrind), ``--scale FACTOR``
(multiplies the scripted-adapter workload sizes of ``agent``, ``scaling`` and
``official``; for smoke runs).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ._measure import REPOSITORY, Section, machine

#: ``--only`` name -> module whose ``measure(quick)`` returns a :class:`Section`.
BENCHMARKS: dict[str, str] = {
    "agent": "benchmarks.agent",
    "scaling": "benchmarks.scaling",
    "continuations": "benchmarks.continuations",
    "concurrency": "benchmarks.concurrency",
    "sandbox": "benchmarks.sandbox",
    "suite": "benchmarks.suite",
    "official": "benchmarks.official",
    "fast-paths": "benchmarks.fast_paths",
    "simulate-memory": "benchmarks.simulate_memory",
    "instructions": "benchmarks.instructions",
    "sharding": "benchmarks.sharding",
    "jobs": "benchmarks.jobs",
}
#: Run only when asked for (``--official`` or ``--only NAME``): ``official`` needs
#: Node.js, ``fast-paths`` runs a worker process per fast path, ``simulate-memory`` runs
#: 100,000 sessions, ``instructions`` needs valgrind, ``sharding`` starts a Dask cluster,
#: ``jobs`` runs ``check --self`` eight times.
ON_REQUEST = ("official", "fast-paths", "simulate-memory", "instructions", "sharding", "jobs")
SCHEMA_VERSION = 1


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Benchmarks of harness-testkit: ratios measured side by side in one run.",
    )
    parser.add_argument("--quick", action="store_true", help="a short run (under 2 minutes)")
    parser.add_argument(
        "--out",
        type=Path,
        default=REPOSITORY / "benchmarks" / "RESULTS.json",
        help=(
            "where the JSON results go (default: benchmarks/RESULTS.json); the Markdown "
            "results go beside it with the suffix .md"
        ),
    )
    parser.add_argument(
        "--check", action="store_true", help="exit with status 1 when a target is missed"
    )
    parser.add_argument(
        "--official",
        action="store_true",
        help="compare with the official @ai-sdk/harness agent (needs Node.js 20+ and npm)",
    )
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        metavar="FACTOR",
        help="multiply the scripted workload sizes of agent, scaling, official (smoke runs)",
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="NAME",
        help=f"run only these benchmarks ({', '.join(BENCHMARKS)}); repeatable or comma-separated",
    )
    return parser


def _selected(
    only: Sequence[str] | None, official: bool, parser: argparse.ArgumentParser
) -> list[str]:
    if not only:
        if official:
            return ["official"]
        return [name for name in BENCHMARKS if name not in ON_REQUEST]
    names = [name.strip() for item in only for name in item.split(",") if name.strip()]
    unknown = [name for name in names if name not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r}; choose from {', '.join(BENCHMARKS)}")
    if official:
        names.append("official")
    return list(dict.fromkeys(names))


def _table(section: Section) -> Table:
    table = Table(title=section.title, title_justify="left")
    for column in section.columns:
        table.add_column(column.header, justify="left" if column.format == "{}" else "right")
    for row in section.rows:
        table.add_row(*(column.render(row) for column in section.columns))
    return table


def _targets_table(sections: Sequence[Section]) -> Table:
    table = Table(title="Targets", title_justify="left")
    for header in ("target", "measured", "limit", "status"):
        table.add_column(header, justify="left" if header == "target" else "right")
    for section in sections:
        for target in section.targets:
            measured = "-" if target.measured is None else f"{target.measured:.3g}{target.unit}"
            status = "[green]met[/green]" if target.met else "[red]missed[/red]"
            table.add_row(target.id, measured, target.bound, status)
    return table


def _document(
    sections: Sequence[Section],
    quick: bool,
    scale: float,
    seconds: float,
    argv: Sequence[str],
    load_before: list[float] | None,
) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(["python -m benchmarks", *argv]),
        "quick": quick,
        "scale": scale,
        "seconds": seconds,
        "machine": {**machine(), "load_average_before": load_before},
        "benchmarks": {section.name: section.to_json() for section in sections},
        "targets": [
            target.to_json(section.name) for section in sections for target in section.targets
        ],
        "notes": [f"{section.name}: {note}" for section in sections for note in section.notes],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the selected benchmarks; return the exit status: 0, or 1 with ``--check`` when
    a target is missed, or 2 when a benchmark's tool (Node.js, valgrind) is missing."""
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    arguments = parser.parse_args(argv)
    names = _selected(arguments.only, arguments.official, parser)
    if arguments.scale <= 0:
        parser.error("--scale must be a positive number")
    if "official" in names:
        from .official import node_problem

        problem = node_problem()
        if problem is not None:
            print(f"python -m benchmarks: cannot run the official comparison: {problem}")
            return 2
    if "instructions" in names:
        from .instructions import valgrind_problem

        problem = valgrind_problem()
        if problem is not None:
            print(f"python -m benchmarks: cannot count instructions: {problem}")
            return 2
    console = Console()
    if not console.is_terminal:
        console = Console(width=150)  # logs and pipes: keep the tables on one line
    sections: list[Section] = []
    load_before = _load_average()
    started = time.perf_counter()
    for name in names:
        console.print(f"[bold]{name}[/bold] ...", highlight=False)
        module = importlib.import_module(BENCHMARKS[name])
        options = {}
        if "scale" in inspect.signature(module.measure).parameters:
            options["scale"] = arguments.scale
        section: Section = module.measure(arguments.quick, **options)
        sections.append(section)
        console.print(_table(section))
        for note in section.notes:
            console.print(f"  note: {note}", highlight=False, soft_wrap=True)
    seconds = time.perf_counter() - started
    if any(section.targets for section in sections):
        console.print(_targets_table(sections))
    out: Path = arguments.out
    out.parent.mkdir(parents=True, exist_ok=True)
    document = _document(sections, arguments.quick, arguments.scale, seconds, argv, load_before)
    out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    markdown = out.with_suffix(".md")
    markdown.write_text(results_markdown(document, sections), encoding="utf-8")
    console.print(
        f"{len(sections)} benchmark(s) in {seconds:.0f} s; results in {markdown} and {out}",
        highlight=False,
    )
    missed = [target.id for section in sections for target in section.targets if not target.met]
    if arguments.check and missed:
        console.print(f"missed targets: {', '.join(missed)}", highlight=False)
        return 1
    return 0


def _load_average() -> list[float] | None:
    return list(os.getloadavg()) if hasattr(os, "getloadavg") else None


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(_cell(header) for header in headers) + " |"]
    lines.append("|" + "|".join(" --- " for _ in headers) + "|")
    lines.extend("| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows)
    return lines


def results_markdown(document: dict[str, Any], sections: Sequence[Section]) -> str:
    """The results file a person reads: where and when the numbers were taken, each
    section's table and notes, and the targets with their status."""
    host = document["machine"]
    load = host.get("load_average")
    before = host.get("load_average_before")
    cores = host.get("nproc")
    lines = [
        "# Benchmark results",
        "",
        f"Written by `{document['command']}` on {document['created']} "
        f"({document['seconds']:.0f} s"
        + (", --quick" if document["quick"] else "")
        + (f", workloads scaled by {document['scale']:g}" if document["scale"] != 1 else "")
        + "). Every figure is in the JSON file beside this one; docs/benchmarks.md says how "
        "to read them.",
        "",
        f"- commit: `{host.get('commit')}`",
        f"- machine: {host.get('platform')}, {cores} usable cores, "
        f"{host.get('memory_total_mib')} MiB, {host.get('implementation')} {host.get('python')}",
    ]
    model = next((line for line in host.get("lscpu_head", []) if "Model name" in line), None)
    if model is not None:
        lines.append(f"- CPU: {model.split(':', 1)[1].strip()}")
    if load is not None:
        lines.append(
            "- load average (1, 5, 15 min) before the run: "
            + ("-" if before is None else ", ".join(f"{value:.2f}" for value in before))
            + "; after it: "
            + ", ".join(f"{value:.2f}" for value in load)
            + (
                f" (the machine was loaded by other processes: above its {cores} cores; "
                "ratios are taken side by side in one run, so they hold better than the "
                "absolute times)"
                if cores and max([*load[:1], *(before or [])[:1]]) > cores
                else ""
            )
        )
    targets = [target for section in sections for target in section.targets]
    if targets:
        lines += ["", "## Targets", ""]
        lines += _markdown_table(
            ["target", "measured", "limit", "status"],
            [
                [
                    target.id,
                    "-" if target.measured is None else f"{target.measured:.3g}{target.unit}",
                    target.bound,
                    "met" if target.met else "**missed**",
                ]
                for target in targets
            ],
        )
    for section in sections:
        lines += ["", f"## {section.title}", ""]
        lines += _markdown_table(
            [column.header for column in section.columns],
            [[column.render(row) for column in section.columns] for row in section.rows],
        )
        if section.notes:
            lines.append("")
            lines += [f"- {note}" for note in section.notes]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
