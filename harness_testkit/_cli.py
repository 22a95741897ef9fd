"""The ``harness-testkit`` console script.

Subcommands live next to the code they drive and are imported lazily, so ``--help`` and
``--version`` stay fast and a missing optional engine (Docker) never breaks unrelated
commands. Every subcommand module imports without the optional extras (a bare
``pip install .``); a command that needs one raises
:class:`~harness_testkit.spec.MissingExtraError` when it runs, which :func:`main` prints
as its one sentence with exit status 2 (a set-up error), never as a traceback.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from harness_testkit import __version__

#: The exit status of a set-up error (the same as click's usage errors and ``check``'s).
EXIT_SETUP = 2

#: Subcommand name -> "module:attribute" of a click command or group.
_SUBCOMMANDS: dict[str, str] = {
    "spec": "harness_testkit.spec._cli:spec",
    "sandbox": "harness_testkit.sandbox._cli:sandbox",
    "check": "harness_testkit.conformance._cli:check",
    "replay": "harness_testkit.conformance._cli:replay",
    "matrix": "harness_testkit.conformance._matrix:matrix",
    "check-sandbox": "harness_testkit.conformance._sandbox._run:check_sandbox",
    "selftest": "harness_testkit.conformance._zoo._selftest:selftest",
    "simulate": "harness_testkit.simulate._cli:simulate",
    "schemas": "harness_testkit._schemas:schemas",
    "report": "harness_testkit.conformance._html:report",
    "new-adapter": "harness_testkit.conformance._skeleton:new_adapter",
    "model-endpoint": "harness_testkit.model_endpoint._cli:model_endpoint",
}


class _LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_SUBCOMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = _SUBCOMMANDS.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, _, attribute = target.partition(":")
        command: Any = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="harness-testkit")
@click.option(
    "--docs-url",
    metavar="URL",
    help="Base URL of the docs site that reports link requirement ids to (env "
    "HARNESS_TESTKIT_DOCS_URL; default: the site/ folder `mkdocs build` writes in the "
    "checkout).",
)
def cli(docs_url: str | None) -> None:
    """Conformance testkit and reference simulator for harness-v1 adapters."""
    if docs_url is not None:
        # The environment is the one place every renderer reads the base URL from
        # (harness_testkit.spec.docs_base_url), so the option exports it for this run.
        os.environ["HARNESS_TESTKIT_DOCS_URL"] = docs_url


def main() -> None:
    """Entry point of the console script."""
    try:
        cli.main(prog_name="harness-testkit")
    except Exception as error:
        # Imported here: the contract models are not loaded for `--help` and `--version`.
        from harness_testkit.spec import HostSetupError, MissingExtraError, SandboxUnavailableError

        # What the machine lacks (an extra, a Docker engine, Node or npm) is a set-up
        # error wherever a command meets it: one sentence and exit 2.
        if not isinstance(error, MissingExtraError | SandboxUnavailableError | HostSetupError):
            raise
        click.echo(f"Error: {error}", err=True)
        sys.exit(EXIT_SETUP)
