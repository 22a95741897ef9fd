"""``harness-testkit schemas``: the JSON Schemas of the files users write.

Capability declarations (``AdapterCapabilities.from_file``) and simulation scenarios.
The wheel ships both (``harness_testkit/conformance/schemas/capabilities.schema.json``,
``harness_testkit/simulate/examples/scenario.schema.json``); a test keeps them fresh.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

__all__ = ["render_user_schemas", "schemas"]


def _text(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def render_user_schemas() -> dict[str, str]:
    """File name -> text of every user-file schema."""
    from harness_testkit.conformance import AdapterCapabilities
    from harness_testkit.simulate import scenario_json_schema

    return {
        "capabilities.schema.json": _text(AdapterCapabilities.json_schema_document()),
        "scenario.schema.json": _text(scenario_json_schema()),
    }


@click.command("schemas")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Directory to write capabilities.schema.json and scenario.schema.json into.",
)
def schemas(out_dir: Path) -> None:
    """Write the JSON Schemas of capability files and scenario files."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in render_user_schemas().items():
        path = out_dir / name
        path.write_text(text, encoding="utf-8")
        click.echo(str(path))
