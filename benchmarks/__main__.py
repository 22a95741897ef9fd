"""``python -m benchmarks``: run the benchmarks, print the tables, write the JSON.

Options: ``--quick`` (a short run), ``--out PATH`` (default ``benchmarks/results.json``),
``--only NAME`` (repeatable or comma-separated; names: agent, scaling, continuations,
concurrency, sandbox, suite, official, simulate-memory, instructions, sharding), ``--official`` (the
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
    "simulate-memory": "benchmarks.simulate_memory",
    "instructions": "benchmarks.instructions",
    "sharding": "benchmarks.sharding",
}
#: Run only when asked for (``--official`` or ``--only NAME``): ``official`` needs
#: Node.js, ``simulate-memory`` runs 100,000 sessions (about 40 minutes),
#: ``instructions`` needs valgrind (a few minutes), ``sharding`` starts a Dask cluster.
ON_REQUEST = ("official", "simulate-memory", "instructions", "sharding")
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
        default=REPOSITORY / "benchmarks" / "results.json",
        help="where the JSON results go (default: benchmarks/results.json)",
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
    sections: Sequence[Section], quick: bool, scale: float, seconds: float
) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "scale": scale,
        "seconds": seconds,
        "machine": machine(),
        "benchmarks": {section.name: section.to_json() for section in sections},
        "targets": [
            target.to_json(section.name) for section in sections for target in section.targets
        ],
        "notes": [f"{section.name}: {note}" for section in sections for note in section.notes],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run the selected benchmarks; return the exit status (0; targets never fail a run)."""
    parser = _parser()
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
    document = _document(sections, arguments.quick, arguments.scale, seconds)
    out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    console.print(
        f"{len(sections)} benchmark(s) in {seconds:.0f} s; results in {out}", highlight=False
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
