"""``harness-testkit sandbox``: build the Docker sandbox image, reap leaked resources.

Imported lazily by the main CLI, so a missing Docker engine never breaks other commands.
"""

from __future__ import annotations

import sys

import click

from harness_testkit.spec import SandboxError, SandboxUnavailableError

from ._docker import DEFAULT_SANDBOX_IMAGE, DockerSandboxProvider

__all__ = ["sandbox"]


@click.group()
def sandbox() -> None:
    """Manage the Docker sandbox: its image and the resources the kit leaves behind."""


@sandbox.command("build-image")
@click.option(
    "--tag",
    default=DEFAULT_SANDBOX_IMAGE,
    show_default=True,
    help="Tag of the image to build.",
)
@click.option(
    "--busybox",
    "busybox",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Static busybox binary to put in the image (default: /bin/busybox or /usr/bin/busybox).",
)
def build_image(tag: str, busybox: str | None) -> None:
    """Build the FROM-scratch busybox sandbox image from the host's static busybox."""
    provider = DockerSandboxProvider(image=tag, busybox=busybox)
    try:
        image_id = provider.build_image_blocking(tag, busybox)
    except SandboxUnavailableError as error:  # no engine: a set-up error (exit 2)
        _setup_exit(error)
    except SandboxError as error:
        raise click.ClickException(str(error)) from error
    finally:
        provider.close()
    click.echo(f"Built {tag} ({image_id}).")


@sandbox.command("prune")
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@click.option(
    "--owner",
    default=None,
    help="Only resources created by the provider instance with this owner id "
    "(the harness-testkit.owner label); default: all of the kit's resources.",
)
def prune(dry_run: bool, owner: str | None) -> None:
    """Remove every container and snapshot image labelled by harness-testkit."""
    provider = DockerSandboxProvider()
    try:
        removed = provider.prune(owner=owner, dry_run=dry_run)
    except SandboxUnavailableError as error:  # no engine: a set-up error (exit 2)
        _setup_exit(error)
    except SandboxError as error:
        raise click.ClickException(str(error)) from error
    finally:
        provider.close()
    verb = "Would remove" if dry_run else "Removed"
    for name in removed.containers:
        click.echo(f"{verb} container {name}")
    for reference in removed.images:
        click.echo(f"{verb} image {reference}")
    if not removed:
        click.echo("Nothing to remove: no harness-testkit containers or snapshot images.")


def _setup_exit(error: SandboxUnavailableError) -> None:
    """Say what the machine lacks in one sentence and exit 2, as every command does."""
    click.echo(f"Error: {error}", err=True)
    sys.exit(2)
