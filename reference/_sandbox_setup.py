"""Sandbox acquisition helpers of the agent: work dirs, bootstrap recipes, setup hooks."""

from __future__ import annotations

import posixpath
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from harness_testkit.spec import (
    Bootstrap,
    HarnessUsageError,
    SandboxSession,
    bootstrap_marker_path,
)

__all__ = [
    "SandboxConfig",
    "apply_bootstrap_recipe",
    "ensure_directory",
    "resolve_default_working_directory",
    "validate_sandbox_config",
]

OnSession = Callable[[SandboxSession, str], Awaitable[None]]
OnBootstrap = Callable[[SandboxSession, str], Awaitable[None]]


@dataclass(frozen=True)
class SandboxConfig:
    """Sandbox setup of a ``HarnessAgent``.

    Attributes:
        work_dir: Stable session work dir, relative to the sandbox's default working
            directory (default: ``<harnessId>-<sessionId>``).
        on_session: ``on_session(restricted_session, session_work_dir)``: runs for every
            session (fresh and resumed) after the work dir exists, before ``do_start``.
        on_bootstrap: ``on_bootstrap(restricted_session, bootstrap_work_dir)``: runs once
            per snapshot identity on fresh provider sessions. Requires ``bootstrap_hash``.
        bootstrap_hash: Identifies what ``on_bootstrap`` does (part of the snapshot identity).
    """

    work_dir: str | None = None
    on_session: OnSession | None = None
    on_bootstrap: OnBootstrap | None = None
    bootstrap_hash: str | None = None


def validate_sandbox_config(config: SandboxConfig | None) -> str | None:
    """Validate the config; return the normalized ``work_dir`` (or ``None``).

    Raises:
        HarnessUsageError: with the specification's messages.
    """
    if config is None:
        return None
    if (config.on_bootstrap is None) != (config.bootstrap_hash is None):
        raise HarnessUsageError(
            "HarnessAgent: `sandboxConfig.onBootstrap` and `sandboxConfig.bootstrapHash` "
            "must be provided together."
        )
    work_dir = config.work_dir
    if work_dir is None:
        return None
    prefix = "HarnessAgent: `sandboxConfig.workDir`"
    if work_dir == "":
        raise HarnessUsageError(f"{prefix} must not be empty.")
    if "\0" in work_dir:
        raise HarnessUsageError(f"{prefix} must not contain NUL.")
    if "\\" in work_dir:
        raise HarnessUsageError(f"{prefix} must use POSIX path separators.")
    if work_dir.startswith("/"):
        raise HarnessUsageError(f"{prefix} must be relative.")
    normalized = posixpath.normpath(work_dir)
    if normalized in (".", "..") or normalized.startswith("../"):
        raise HarnessUsageError(f"{prefix} must stay inside the sandbox default working directory.")
    return normalized


async def resolve_default_working_directory(session: SandboxSession) -> str:
    """The session's ``default_working_directory``, else the output of ``pwd``."""
    value = getattr(session, "default_working_directory", None)
    if isinstance(value, str) and value:
        return value
    result = await session.run("pwd", timeout=60)
    directory = result.stdout.strip()
    if result.exit_code != 0 or not directory.startswith("/"):
        raise RuntimeError(
            "Could not resolve the sandbox default working directory: `pwd` exited "
            f"{result.exit_code} with {directory!r}; give the session a "
            "`default_working_directory`."
        )
    return directory.rstrip("/") or "/"


async def ensure_directory(session: SandboxSession, directory: str) -> None:
    """``mkdir -p "$WORK_DIR"`` (spec 7.1.8); failures name the directory and exit code.

    A session offering ``make_directory`` (the local provider) creates it without
    starting a shell.
    """
    make_directory = getattr(session, "make_directory", None)
    if callable(make_directory):
        try:
            await make_directory(directory)
        except Exception as error:
            raise RuntimeError(
                f"Failed to create sandbox work directory {directory} (exit 1): {error}"
            ) from error
        return
    result = await session.run('mkdir -p "$WORK_DIR"', env={"WORK_DIR": directory}, timeout=60)
    if result.exit_code != 0:
        detail = result.stderr or result.stdout
        raise RuntimeError(
            f"Failed to create sandbox work directory {directory} (exit {result.exit_code}): {detail}"
        )


async def apply_bootstrap_recipe(
    session: SandboxSession, recipe: Bootstrap, default_working_directory: str
) -> None:
    """Apply a recipe idempotently (marker file keyed by the recipe identity)."""
    identity = recipe.identity()
    marker = bootstrap_marker_path(recipe.bootstrap_dir, identity, default_working_directory)
    if await session.read_text_file(marker) is not None:
        return
    directory = posixpath.normpath(posixpath.join(default_working_directory, recipe.bootstrap_dir))
    made = await session.run(
        'mkdir -p "$BOOTSTRAP_DIR"',
        env={"BOOTSTRAP_DIR": directory},
        working_directory=default_working_directory,
        timeout=120,
    )
    if made.exit_code != 0:
        raise RuntimeError(
            f"Failed to create bootstrap directory for harness '{recipe.harness_id}' "
            f"(exit {made.exit_code}): {directory}\n{made.stderr or made.stdout}"
        )
    for file in recipe.files:
        await session.write_text_file(
            posixpath.join(default_working_directory, file.path), file.content
        )
    for command in recipe.commands:
        ran = await session.run(command.command, working_directory=directory, timeout=600)
        if ran.exit_code != 0:
            raise RuntimeError(
                f"Bootstrap command failed for harness '{recipe.harness_id}' "
                f"(exit {ran.exit_code}): {command.command}\n{ran.stderr or ran.stdout}"
            )
    await session.write_text_file(marker, "")
