"""A bridge adapter's bootstrap recipe, prepared once per machine for the local sandbox.

Bridge adapters (``@ai-sdk/harness-claude-code``) run their runtime inside the sandbox,
installed by their bootstrap recipe: files and commands under an absolute
``bootstrapDir`` (``/tmp/harness/claude-code``), which their ``doStart`` then runs from
by that absolute path. The local sandbox's file API reaches only the session root, and
its commands run on this machine, so the kit plays the part a snapshot provider plays
upstream (``prepareSandboxForHarness``): it applies the recipe once, into its cache, and
makes ``bootstrapDir`` a symbolic link to that folder. Nothing is fetched but from the
package registries: the recipe's ``pnpm`` is the registry's, pinned by a committed
lockfile, and ``node`` is the one the host runs on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from harness_testkit.spec import HostSetupError

from ._install import NodeRuntime, _locked, cache_dir, install_package

__all__ = ["PNPM_VERSION", "prepare_bootstrap"]

#: The pnpm bridge recipes install with (their lockfiles are pnpm 9 format).
PNPM_VERSION = "10.34.9"
#: The longest one recipe command may take (a cold install downloads the runtime).
COMMAND_TIMEOUT = 900.0
_MARKER = ".harness-testkit-prepared"


def _recipe_parts(recipe: Mapping[str, Any]) -> tuple[str, PurePosixPath, list[Any], list[Any]]:
    harness_id = recipe.get("harnessId")
    directory = recipe.get("bootstrapDir")
    files = recipe.get("files") or []
    commands = recipe.get("commands") or []
    if not isinstance(harness_id, str) or not isinstance(directory, str):
        raise HostSetupError(f"the adapter's bootstrap recipe is malformed: {recipe!r:.200}")
    bootstrap_dir = PurePosixPath(directory)
    if not bootstrap_dir.is_absolute() or ".." in bootstrap_dir.parts:
        raise HostSetupError(
            f"{harness_id}'s bootstrapDir {directory!r} is relative: the kit prepares only "
            "recipes under an absolute folder (a relative one is applied in each session)"
        )
    return harness_id, bootstrap_dir, list(files), list(commands)


def _link(bootstrap_dir: Path, folder: Path) -> None:
    """Point ``bootstrap_dir`` at ``folder`` (replacing only a link the kit made)."""
    if bootstrap_dir.is_symlink():
        if bootstrap_dir.resolve() == folder.resolve():
            return
    elif bootstrap_dir.exists():
        raise HostSetupError(
            f"{bootstrap_dir} exists and is not a link the kit made: the kit links it to its "
            f"prepared copy of the adapter's bootstrap ({folder}); move it away and retry"
        )
    bootstrap_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = bootstrap_dir.with_name(f".{bootstrap_dir.name}.{os.getpid()}.link")
    with contextlib.suppress(FileNotFoundError):
        staging.unlink()
    staging.symlink_to(folder, target_is_directory=True)
    os.replace(staging, bootstrap_dir)


def prepare_bootstrap(recipe: Mapping[str, Any], node: NodeRuntime) -> Path:
    """Apply ``recipe`` once into the kit's cache and link its ``bootstrapDir`` there.

    Returns:
        The prepared folder.

    Raises:
        HostSetupError: the recipe is malformed, its folder is taken, or a command failed
            (its last output lines are in the message).
    """
    harness_id, bootstrap_dir, files, commands = _recipe_parts(recipe)
    digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]
    folder = cache_dir() / "node" / "bootstrap" / f"{harness_id}-{digest}"
    link = Path(bootstrap_dir)
    with _locked(folder.with_name(folder.name + ".lock")):
        if (folder / _MARKER).is_file():
            with _locked(folder.parent / "links.lock"):
                _link(link, folder)
            return folder
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        with _locked(folder.parent / "links.lock"):
            _link(link, folder)
            for item in files:
                path = PurePosixPath(str(item.get("path", "")))
                if not path.is_absolute():
                    path = bootstrap_dir / path
                try:
                    relative = path.relative_to(bootstrap_dir)
                except ValueError:
                    raise HostSetupError(
                        f"{harness_id}'s bootstrap writes {path}, outside its bootstrapDir "
                        f"{bootstrap_dir}: the kit prepares only files inside it"
                    ) from None
                target = folder / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(str(item.get("content", "")), encoding="utf-8")
            env = {k: v for k, v in os.environ.items() if not k.startswith("npm_")}
            if commands:
                pnpm = install_package("pnpm", PNPM_VERSION).resolve_from / "node_modules"
                env["PATH"] = os.pathsep.join(
                    [
                        str(Path(node.executable).parent),
                        str(pnpm / ".bin"),
                        env.get("PATH", "/usr/bin:/bin"),
                    ]
                )
            for item in commands:
                command = str(item.get("command", ""))
                _run(command, cwd=link, env=env, harness_id=harness_id)
        (folder / _MARKER).write_text("ok\n", encoding="utf-8")
    return folder


def _run(command: str, *, cwd: Path, env: Mapping[str, str], harness_id: str) -> None:
    try:
        completed = subprocess.run(
            ["bash", "-c", command],
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise HostSetupError(
            f"{harness_id}'s bootstrap command did not finish within {COMMAND_TIMEOUT:g} s: "
            f"{command}"
        ) from None
    if completed.returncode != 0:
        tail = "\n".join((completed.stderr or completed.stdout).strip().splitlines()[-15:])
        raise HostSetupError(
            f"{harness_id}'s bootstrap command failed (exit {completed.returncode}): "
            f"{command}\n{tail}"
        )
