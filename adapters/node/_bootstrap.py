"""A bridge adapter's bootstrap recipe, prepared once per machine for the local sandbox.

Bridge adapters run their runtime inside the sandbox, installed by their bootstrap
recipe: files and commands under a ``bootstrapDir``, which their ``doStart`` then runs
from. The local sandbox's file API reaches only the session root, and its commands run
on this machine, so the kit plays the part a snapshot provider plays upstream
(``prepareSandboxForHarness``): it applies the recipe once, into its cache, keyed by the
recipe's digest (which holds the lockfiles it installs from), and links the folder in:

- an absolute ``bootstrapDir`` (``@ai-sdk/harness-claude-code``:
  ``/tmp/harness/claude-code``) becomes a symbolic link to the prepared folder, once;
- a relative one (``@ai-sdk/harness-acp``: ``.harness-bootstrap/<harnessId>``, resolved
  against each session's default working directory) is a template: every local session
  root gets a link to the prepared folder (:func:`link_template`), so no session
  downloads anything.

Nothing is fetched but from the package registries: the recipe's ``pnpm`` is the
registry's, pinned by a committed lockfile, and ``node`` is the one the host runs on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from harness_testkit.spec import HostSetupError

from ._install import NodeRuntime, _locked, cache_dir, install_package

if TYPE_CHECKING:
    from ._target import NodeAdapterHost

__all__ = [
    "PNPM_VERSION",
    "PreparedBootstrap",
    "link_template",
    "prepare_bootstrap",
    "ready_sandbox",
]

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
    if ".." in bootstrap_dir.parts or bootstrap_dir.name in ("", "."):
        raise HostSetupError(
            f"{harness_id}'s bootstrapDir {directory!r} leaves its folder or names none: "
            "the kit prepares only recipes under a folder of their own"
        )
    return harness_id, bootstrap_dir, list(files), list(commands)


@dataclass(frozen=True)
class PreparedBootstrap:
    """A recipe applied in the kit's cache.

    Attributes:
        folder: The prepared folder.
        template: The recipe's relative ``bootstrapDir`` (each session root links it to
            ``folder``), or ``None`` for an absolute one (linked once, machine-wide).
    """

    folder: Path
    template: PurePosixPath | None


def link_template(prepared: PreparedBootstrap, root: Path) -> None:
    """Link a relative recipe's ``bootstrapDir`` inside the session root ``root``.

    Raises:
        HostSetupError: the folder is taken by something the kit did not link.
    """
    if prepared.template is None:
        return
    _link(root / prepared.template, prepared.folder)


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


async def ready_sandbox(
    sandbox: Any, host: NodeAdapterHost, endpoint_url: str | None, *, timeout: float
) -> None:
    """Make a session's sandbox ready before ``doStart``: write the wiring's
    ``home_files`` (for the session's endpoint at ``endpoint_url``) under its ``$HOME``,
    and link the host's prepared bootstrap into its root when the recipe is relative.

    Raises:
        HostSetupError: the sandbox names no ``$HOME``, or its root is not a folder of
            this machine (the prepared template cannot be linked there).
    """
    label, prepared = host.target.label, host.bootstrap
    wiring = host.wiring
    home_files = {}
    if wiring is not None and endpoint_url is not None:
        home_files = wiring.filled_home_files(endpoint_url)
    if home_files:
        result = await sandbox.run('printf "%s" "$HOME"', timeout=timeout)
        home = result.stdout.strip()
        if result.exit_code != 0 or not home.startswith("/"):
            raise HostSetupError(
                f"{label} needs its config under the sandbox's $HOME, and the sandbox "
                f"named none (exit {result.exit_code}: {home!r:.80})"
            )
        for relative, content in home_files.items():
            await sandbox.write_text_file(f"{home}/{relative}", content)
    if prepared is not None and prepared.template is not None:
        _link_into_root(sandbox, prepared, label)


def _link_into_root(sandbox: Any, prepared: PreparedBootstrap, label: str) -> None:
    # The session root must be a folder of this machine: a local sandbox session (or a
    # check's wrapper around one). A container's root is not, and is refused.
    root = getattr(sandbox, "default_working_directory", None)
    if not isinstance(root, str) or not Path(root).is_dir():
        raise HostSetupError(
            f"{label} installs its runtime into each sandbox ({prepared.template}); the kit "
            "links its prepared copy only into local sandbox sessions: run it with "
            "--sandbox local"
        )
    link_template(prepared, Path(root))


def prepare_bootstrap(recipe: Mapping[str, Any], node: NodeRuntime) -> PreparedBootstrap:
    """Apply ``recipe`` once into the kit's cache (an absolute ``bootstrapDir`` is linked
    there now; a relative one is linked into each session root by :func:`link_template`).

    Returns:
        The prepared folder, and the template to link when the recipe is relative.

    Raises:
        HostSetupError: the recipe is malformed, its folder is taken, or a command failed
            (its last output lines are in the message).
    """
    harness_id, bootstrap_dir, files, commands = _recipe_parts(recipe)
    digest = hashlib.sha256(json.dumps(recipe, sort_keys=True).encode()).hexdigest()[:16]
    folder = cache_dir() / "node" / "bootstrap" / f"{harness_id}-{digest}"
    template = None if bootstrap_dir.is_absolute() else bootstrap_dir
    prepared = PreparedBootstrap(folder=folder, template=template)
    # A relative recipe runs in the prepared folder itself: its commands use only paths
    # relative to their working directory, so the folder can be linked into any root.
    link = folder if template is not None else Path(bootstrap_dir)
    with _locked(folder.with_name(folder.name + ".lock")):
        if (folder / _MARKER).is_file():
            if template is None:
                with _locked(folder.parent / "links.lock"):
                    _link(link, folder)
            return prepared
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        with _locked(folder.parent / "links.lock"):
            if template is None:
                _link(link, folder)
            for item in files:
                path = PurePosixPath(str(item.get("path", "")))
                if template is None and not path.is_absolute():
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
    return prepared


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
