"""MkDocs hooks: the requirement pages, and the package layout the API reference reads.

One page per requirement area, rendered from ``spec/requirements.yaml``.

The pages are generated at build time (never committed), so they cannot drift from the
catalogue: ``requirements/index.md`` lists the areas, and ``requirements/<area>.md`` holds
each requirement under a heading whose anchor is its id (``FILTER-007``), the anchor
reports link to (:func:`harness_testkit.spec.requirement_url`). ``mkdocs.yml`` names this
file under ``hooks``; the nav's ``requirements/index.md`` entry becomes a section with
one page per area.

The API reference (mkdocstrings) finds packages by their folders, and the repository keeps
``harness_testkit.spec`` in ``spec/`` and so on (``package-dir`` in pyproject.toml), so
:func:`on_config` gives it a tree of symlinks in the installed layout (``build/``), as
``.ci/typecheck`` gives mypy.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import tomllib
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

from harness_testkit.spec import (
    RequirementCatalogue,
    load_requirements,
    requirement_page,
)

__all__ = [
    "FACADES",
    "installed_layout",
    "on_config",
    "on_files",
    "render_api",
    "render_fields",
    "render_pages",
]

#: The nav entry this hook expands into one page per area.
INDEX = "requirements/index.md"
ROOT = Path(__file__).resolve().parents[1]
#: Where :func:`on_config` lays the packages out (under build/, which git ignores).
API_TREE = "build/docs-api-tree"
#: The packages whose facades make the public API, in the order of the API page.
FACADES = (
    "harness_testkit.spec",
    "harness_testkit.reference",
    "harness_testkit.fake_harness",
    "harness_testkit.scripting",
    "harness_testkit.sandbox",
    "harness_testkit.simulate",
    "harness_testkit.conformance",
    "harness_testkit.model_endpoint",
)


def _source(area: str) -> str:
    """The Markdown source path of an area's page (``requirement_page`` with ``.md``)."""
    return requirement_page(area).removesuffix(".html") + ".md"


def render_pages(catalogue: RequirementCatalogue) -> dict[str, str]:
    """Markdown source path -> page text: the index and one page per area."""
    areas = catalogue.areas()
    by_area = {area: catalogue.filter(area=area) for area in areas}
    index = [
        "# Requirements",
        "",
        f"The numbered rules of {catalogue.specification_version} (catalogue version "
        f"{catalogue.catalogue_version}), one page per area, generated from "
        "`spec/requirements.yaml`. Every check and report line names the ids it verifies; "
        "a report links each id to its anchor here (`requirements/<area>.html#<id>`, see "
        "[Reports](../reports.md)).",
        "",
        "| area | requirements | MUST | SHOULD | MAY |",
        "|---|---:|---:|---:|---:|",
    ]
    pages: dict[str, str] = {}
    for area in areas:
        items = by_area[area]
        levels = [str(item.level) for item in items]
        page = _source(area).removeprefix("requirements/")
        index.append(
            f"| [{area}]({page}) | {len(items)} | {levels.count('MUST')} | "
            f"{levels.count('SHOULD')} | {levels.count('MAY')} |"
        )
        lines = [
            f"# {area} requirements",
            "",
            f"{len(items)} requirements of the area {area}, from `spec/requirements.yaml`. "
            "Each heading's anchor is the requirement id.",
            "",
        ]
        for item in items:
            lines += [
                f"## {item.id} {{#{item.id}}}",
                "",
                f"**{item.level}** · binds: {item.subject} · checked: {item.checkability} · "
                f"source: {item.source}",
                "",
                " ".join(item.statement.split()),
                "",
            ]
            if item.decision:
                lines += [f"**Decision.** {' '.join(item.decision.split())}", ""]
            if item.depends_on:
                links = ", ".join(
                    f"[{other}]({_source(other.split('-')[0]).removeprefix('requirements/')}"
                    f"#{other})"
                    for other in item.depends_on
                )
                lines += [f"Depends on: {links}.", ""]
        pages[_source(area)] = "\n".join(lines)
    pages[INDEX] = "\n".join(index) + "\n"
    return pages


def installed_layout(root: Path, into: Path) -> None:
    """Symlink the packages of ``root`` under ``into`` as they are installed.

    Args:
        root: The repository root (its pyproject.toml maps packages to folders).
        into: An empty directory; ``into/harness_testkit`` becomes the namespace.
    """
    with (root / "pyproject.toml").open("rb") as file:
        mapping: dict[str, str] = tomllib.load(file)["tool"]["setuptools"]["package-dir"]
    # Parents before children, so a child's folder lands inside its parent's copy.
    for package, folder in sorted(mapping.items(), key=lambda item: item[0].count(".")):
        target = into.joinpath(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for entry in sorted((root / folder).iterdir()):
            link = target / entry.name
            if not link.exists() and entry.name != "__pycache__":
                link.symlink_to(entry)


def render_api() -> str:
    """The API page: each facade's own names (``__all__``), documented from docstrings.

    A facade that re-exports another package's names (``reference`` keeps the sandbox and
    simulation names it once held) lists them by name only, so every name is documented
    once, where it is defined.
    """
    lines = [
        "# Python API reference",
        "",
        "Generated from the docstrings of each package's facade: the names in its `__all__`",
        "are the public API.",
        "",
    ]
    for package in FACADES:
        module = importlib.import_module(package)
        names: list[str] = list(module.__all__)
        own = [name for name in names if _defined_in(getattr(module, name), package)]
        borrowed = [name for name in names if name not in own]
        lines += [f"## {package}", ""]
        if borrowed:
            lines += [
                "Also importable from here, documented where they are defined: "
                + ", ".join(f"`{name}`" for name in borrowed)
                + ".",
                "",
            ]
        lines += [
            f"::: {package}",
            "    options:",
            "      show_root_heading: false",
            "      heading_level: 3",
            "      members:",
            *(f"        - {name}" for name in own),
            "",
        ]
    return "\n".join(lines)


def render_fields(title: str, intro: str, schema: dict[str, Any]) -> str:
    """A page with a table of every field of a JSON Schema's root and of each definition.

    Field descriptions come from the ``Attributes:`` sections of the models' Google
    docstrings (which pydantic puts in the schema), matched by the field's camelCase key.
    """
    lines = [f"# {title}", "", intro, ""]
    objects = [(str(schema.get("title", "root")), schema)]
    objects += sorted(schema.get("$defs", {}).items())
    for name, node in objects:
        summary, attributes = _docstring(str(node.get("description", "")))
        lines += [f"## {name} {{#{_anchor(name)}}}", ""]
        properties: dict[str, Any] = node.get("properties", {})
        if not properties:
            lines += [summary or f"Type: {_type(node)}.", ""]
            continue
        required = set(node.get("required", []))
        lines += [summary, ""] if summary else []
        lines += ["| field | type | default | what it is |", "|---|---|---|---|"]
        for key, field in properties.items():
            default = "required" if key in required else _code(field.get("default"))
            text = " ".join(attributes.get(key, str(field.get("description", ""))).split())
            lines.append(f"| `{key}` | {_type(field)} | {default} | {text} |")
        lines.append("")
    return "\n".join(lines)


def _anchor(name: str) -> str:
    return "def-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _code(value: object) -> str:
    if value is None:
        return "none"
    text = json.dumps(value)
    return f"`{text}`".replace("|", "\\|")


def _type(node: dict[str, Any]) -> str:
    """A JSON Schema node as a short Markdown type (definitions linked)."""
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        return f"[{name}](#{_anchor(name)})"
    if "const" in node:
        return _code(node["const"])
    if "enum" in node:
        return " \\| ".join(_code(value) for value in node["enum"])
    for key in ("anyOf", "oneOf"):
        if key in node:
            kinds = [_type(option) for option in node[key]]
            return " or ".join(dict.fromkeys(kinds))
    kind = node.get("type")
    if kind == "array":
        items = node.get("items")
        return f"list of {_type(items)}" if isinstance(items, dict) else "list"
    if kind == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"map of {_type(node['additionalProperties'])}"
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    return str(kind) if kind else "any JSON"


def _docstring(text: str) -> tuple[str, dict[str, str]]:
    """The summary of a Google docstring and its attributes by camelCase name."""
    summary, _, rest = text.partition("Attributes:")
    attributes: dict[str, str] = {}
    current = ""
    for line in rest.splitlines():
        match = re.match(r"^ {4}(\w+): ?(.*)$", line)
        if match:
            current = re.sub(r"_(\w)", lambda m: m.group(1).upper(), match.group(1))
            attributes[current] = match.group(2)
        elif current and line.startswith("        "):
            attributes[current] += " " + line.strip()
        elif line.strip():
            current = ""
    return _markdown(summary), {key: _markdown(value) for key, value in attributes.items()}


def _markdown(text: str) -> str:
    """Docstring markup as Markdown: ``code`` and Sphinx roles become code spans."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", " ".join(text.split()))
    return text.replace("``", "`").replace("|", "\\|")


def _defined_in(value: object, package: str) -> bool:
    module = getattr(value, "__module__", None)
    # Constants (tuples, strings) carry no module: the facade that exports them owns them.
    return not isinstance(module, str) or module == package or module.startswith(package + ".")


@event_priority(100)  # before mkdocstrings' own config event sets up its handler
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Lay out the packages for the API reference; expand the requirement nav."""
    # mkdocs.yml names this folder as the python handler's `paths`.
    tree = ROOT / API_TREE
    shutil.rmtree(tree, ignore_errors=True)
    installed_layout(ROOT, tree)
    areas = load_requirements().areas()
    section: list[Any] = [INDEX, *({area: _source(area)} for area in areas)]
    nav = config.nav or []
    config.nav = [_expand(entry, section) for entry in nav]
    return config


def _expand(entry: Any, section: list[Any]) -> Any:
    if isinstance(entry, dict):
        return {
            title: section if value == INDEX else _expand(value, section)
            for title, value in entry.items()
        }
    if isinstance(entry, list):
        return [_expand(item, section) for item in entry]
    return entry


def render_results(path: Path) -> str:
    """The committed benchmark results (``benchmarks/RESULTS.md``) as a page of the site:
    the docs quote no timing of their own, only this file."""
    text = path.read_text(encoding="utf-8")
    body = text.split("\n", 1)[1] if text.startswith("# ") else text
    # Its pointer to the benchmarks page is relative to benchmarks/, not to the site.
    body = body.replace("docs/benchmarks.md", "[benchmarks](benchmarks.md)")
    return (
        "# Benchmark results: the latest committed run\n\n"
        "Rendered from `benchmarks/RESULTS.md` when the site is built. Reproduce it with the "
        "command it names; [benchmarks](benchmarks.md) says how to read it.\n" + body
    )


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated requirement pages to the site's files."""
    from harness_testkit.simulate import scenario_json_schema

    pages = {
        **render_pages(load_requirements()),
        "api.md": render_api(),
        "scenario-fields.md": render_fields(
            "Every scenario field",
            "Generated from the scenario model's JSON Schema (`harness-testkit simulate "
            "--schema` prints it). Keys are camelCase; snake_case works too. How the parts "
            "fit together: [the scenario language](simulation.md).",
            scenario_json_schema(),
        ),
        "benchmark-results.md": render_results(ROOT / "benchmarks" / "RESULTS.md"),
    }
    for path, text in pages.items():
        files.append(File.generated(config, path, content=text))
    return files
