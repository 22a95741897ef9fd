"""Which runtime runs: the SDK's version and the Claude Code CLI's, for reports.

The CLI's version is what ``claude --version`` prints, asked once per executable and
cached: a report names the CLI that actually ran (``cli_path`` or the SDK's bundled one),
not the version the SDK was built against.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from harness_testkit.spec import MissingExtraError

__all__ = ["SDK_DISTRIBUTION", "bundled_cli", "cli_version", "require_sdk", "sdk_version"]

#: The distribution of the Agent SDK (and of the CLI bundled in its wheel).
SDK_DISTRIBUTION = "claude-agent-sdk"
#: Longest wait for ``claude --version``.
VERSION_TIMEOUT = 60.0


def require_sdk() -> None:
    """Raise :class:`MissingExtraError` naming the ``claude-code`` extra without the SDK."""
    try:
        import claude_agent_sdk  # noqa: F401
    except ImportError as error:
        raise MissingExtraError(
            "The Claude Code adapter", "claude-code", missing="claude_agent_sdk"
        ) from error


def sdk_version() -> str | None:
    """The installed ``claude-agent-sdk`` version, or ``None`` when it is not installed."""
    try:
        return version(SDK_DISTRIBUTION)
    except PackageNotFoundError:
        return None


def bundled_cli() -> Path | None:
    """The CLI the SDK runs when given no ``cli_path``: its bundled one, else ``claude``
    on ``PATH`` (the SDK's own order); ``None`` when there is neither."""
    try:
        import claude_agent_sdk
    except ImportError:
        return None
    name = "claude.exe" if sys.platform == "win32" else "claude"
    # The wheel ships the CLI in the package's _bundled folder (as the SDK looks for it).
    bundled = Path(claude_agent_sdk.__file__).parent / "_bundled" / name
    if bundled.is_file():
        return bundled
    found = shutil.which("claude")
    return Path(found) if found else None


def cli_version(cli: str | os.PathLike[str] | None) -> str:
    """The version ``cli --version`` prints (``2.1.337``), or why there is none.

    Args:
        cli: The executable; ``None`` for the one the SDK would run.
    """
    path = Path(cli) if cli is not None else bundled_cli()
    if path is None:
        return "not found"
    return _asked_version(str(path))


@functools.lru_cache(maxsize=16)
def _asked_version(path: str) -> str:
    # Once per executable for the life of the process: each check makes a new adapter and
    # every report asks, and the answer cannot change under a running process.
    try:
        done = subprocess.run(
            [path, "--version"],
            capture_output=True,
            text=True,
            timeout=VERSION_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"},
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unknown ({type(error).__name__}: {error})"
    words = done.stdout.split()
    if done.returncode != 0 or not words:
        return f"unknown (`{path} --version` exited {done.returncode})"
    return words[0]
