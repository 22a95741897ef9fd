"""``harness-testkit new-adapter NAME``: a small installable adapter package to start from.

It writes a project whose adapter offers the whole harness-v1 surface (built-ins run in
the sandbox, host tools, approvals, steering, and the kit's scripting extension over a
stand-in runtime that interprets scripts and echoes the prompt when given none) and
passes both tiers, with its capability file (and the schema it names), an empty
baseline, the pytest plugin wired in ``tests/``, and a CI job; the templates live in
``skeleton/``.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from importlib import resources
from pathlib import Path

import click

from harness_testkit import __version__

from ._capabilities import AdapterCapabilities, shipped_capabilities_schema

__all__ = ["new_adapter", "write_skeleton"]

_INSTALL_TIMEOUT = 600
_NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")

#: Template -> where it goes in the project (``{package}`` is filled in).
_FILES = {
    "pyproject.toml.tmpl": "pyproject.toml",
    "README.md.tmpl": "README.md",
    "capabilities.yaml.tmpl": "capabilities.yaml",
    "baseline.yaml.tmpl": "conformance-baseline.yaml",
    "init.py.tmpl": "src/{package}/__init__.py",
    "adapter.py.tmpl": "src/{package}/_adapter.py",
    "runtime.py.tmpl": "src/{package}/_runtime.py",
    "tools.py.tmpl": "src/{package}/_tools.py",
    "conftest.py.tmpl": "tests/conftest.py",
    "test_conformance.py.tmpl": "tests/test_conformance.py",
    "workflow.yml.tmpl": ".github/workflows/conformance.yml",
}


def _template(name: str) -> str:
    return (resources.files(__package__ or "") / "skeleton" / name).read_text(encoding="utf-8")


def write_skeleton(name: str, directory: Path) -> list[Path]:
    """Write the project for adapter ``name`` (kebab-case) into ``directory``.

    Returns:
        The files written.

    Raises:
        ValueError: ``name`` is not kebab-case, or ``directory`` exists and is not empty.
    """
    if not _NAME.fullmatch(name):
        raise ValueError(
            f"adapter name {name!r} must be kebab-case (lower-case letters, digits and "
            "dashes, starting with a letter), e.g. my-runtime"
        )
    if directory.exists() and any(directory.iterdir()):
        raise ValueError(f"{directory} exists and is not empty; choose another --dir")
    package = name.replace("-", "_")
    values = {
        "name": name,
        "package": package,
        "harness_id": name,
        "title": " ".join(part.capitalize() for part in name.split("-")),
        "kit_version": __version__.split("+")[0],
    }
    written = []
    for template, target in _FILES.items():
        text = _template(template)
        for key, value in values.items():
            text = text.replace("{{" + key + "}}", value)
        path = directory / target.format(package=package)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    schema = directory / "capabilities.schema.json"
    schema.write_text(shipped_capabilities_schema().read_text(encoding="utf-8"), encoding="utf-8")
    written.append(schema)
    # The declaration the project ships must load (a broken template fails here, not later).
    AdapterCapabilities.from_file(directory / "capabilities.yaml")
    return written


@click.command("new-adapter")
@click.argument("name")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where to write the project (default: ./NAME).",
)
@click.option("--install", is_flag=True, help="Then pip install it (editable) into this Python.")
def new_adapter(name: str, directory: Path | None, install: bool) -> None:
    """Write an installable adapter package NAME to start from.

    It passes both tiers as written (every MUST verified): install it (``--install``
    does, editable, into this Python), then check it.
    """
    target = directory if directory is not None else Path(name)
    try:
        written = write_skeleton(name, target)
    except ValueError as error:
        raise click.UsageError(str(error)) from error
    for path in written:
        click.echo(f"  {path}")
    package = name.replace("-", "_")
    if install:
        command = [sys.executable, "-m", "pip", "install", "--quiet", "-e", f"{target}[test]"]
        click.echo(f"\n$ {' '.join(command)}")
        try:
            completed = subprocess.run(command, timeout=_INSTALL_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise click.ClickException(
                f"pip install did not finish within {_INSTALL_TIMEOUT} s"
            ) from None
        if completed.returncode != 0:
            raise click.ClickException(f"pip install -e {target} failed (see above)")
    # The project's tests run on the Python it is installed into: its own pytest, through
    # that interpreter (a bare `pytest` may be another environment's, without the package).
    python = shlex.quote(sys.executable)
    steps = [] if install else [f"{python} -m pip install -e '{target}[test]'"]
    steps += [
        f"{python} -m harness_testkit check {package}:make_adapter --capabilities "
        f"{target / 'capabilities.yaml'} --baseline {target / 'conformance-baseline.yaml'} "
        "--html report.html",
        f"cd {shlex.quote(str(target))} && {python} -m pytest",
    ]
    click.echo("\nNext:\n" + "\n".join(f"  {step}" for step in steps))
