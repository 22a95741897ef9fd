"""``harness-testkit spec``: the requirement catalogue and the JSON Schemas."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ._requirements import load_requirements
from ._schemas import write_schemas

__all__ = ["spec"]


@click.group()
def spec() -> None:
    """Inspect the harness-v1 contract."""


@spec.command("requirements")
@click.option("--area", help="Only this area (e.g. FILTER).")
@click.option(
    "--level",
    type=click.Choice(["MUST", "SHOULD", "MAY"], case_sensitive=False),
    help="Only this level.",
)
@click.option(
    "--subject", help="Only requirements binding this subject (adapter, agent, sandbox, kit)."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def requirements(area: str | None, level: str | None, subject: str | None, as_json: bool) -> None:
    """List the numbered normative requirements."""
    catalogue = load_requirements()
    selected = catalogue.filter(
        area=area.upper() if area else None,
        level=level.upper() if level else None,
        subject=subject.lower() if subject else None,
    )
    if as_json:
        click.echo(json.dumps([r.model_dump(mode="json") for r in selected], indent=2))
        return
    table = Table(
        title=f"harness-v1 requirements ({len(selected)} of {len(catalogue.requirements)})"
    )
    for column in ("id", "level", "subject", "checkability", "source", "statement"):
        table.add_column(column, overflow="fold")
    for item in selected:
        table.add_row(
            item.id, item.level, item.subject, item.checkability, item.source, item.statement
        )
    Console().print(table)


@spec.command("schema")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Directory to write the JSON Schemas into.",
)
def schema(out_dir: Path) -> None:
    """Write JSON Schemas for stream parts, lifecycle states and tool specs."""
    for path in write_schemas(out_dir):
        click.echo(str(path))
