"""``harness-testkit spec``: the requirement catalogue and the JSON Schemas."""

from __future__ import annotations

import json
import os
import sys
import textwrap
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
    try:
        selected = catalogue.filter(
            area=area.upper() if area else None,
            level=level.upper() if level else None,
            subject=subject.lower() if subject else None,
        )
    except ValueError as error:  # an unknown area or subject: a usage error
        click.echo(f"Error: {error}", err=True)
        sys.exit(2)
    if as_json:
        click.echo(json.dumps([r.model_dump(mode="json") for r in selected], indent=2))
        return
    # NO_COLOR (and TERM=dumb): no escape code at all, not even bold (spec sits below
    # `common`, whose console helper the other commands use).
    plain = bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM") == "dumb"
    console = Console(color_system=None, no_color=True) if plain else Console()
    title = f"harness-v1 requirements ({len(selected)} of {len(catalogue.requirements)})"
    if console.width < _TABLE_MIN_WIDTH:
        # Narrow terminals (and pipes): one block per requirement, the statement wrapped
        # under it, instead of a table whose columns fold word by word.
        width = max(console.width, 40)
        click.echo(title)
        for item in selected:
            click.echo("")
            header = f"{item.id}  {item.level}  {item.subject}  {item.checkability}  {item.source}"
            click.echo(textwrap.fill(header, width=width, subsequent_indent="    "))
            statement = " ".join(item.statement.split())
            click.echo(
                textwrap.fill(statement, width=width, initial_indent="  ", subsequent_indent="  ")
            )
        return
    table = Table(title=title)
    for column in ("id", "level", "subject", "checkability"):
        table.add_column(column, no_wrap=True)
    table.add_column("source", overflow="fold", max_width=24)
    table.add_column("statement", overflow="fold", ratio=1)
    for item in selected:
        table.add_row(
            item.id,
            item.level,
            item.subject,
            item.checkability,
            item.source,
            " ".join(item.statement.split()),
        )
    console.print(table)


#: Below this terminal width the catalogue is listed as blocks, not as a table.
_TABLE_MIN_WIDTH = 110


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
