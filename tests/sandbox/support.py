"""Helpers shared by the sandbox tests (reference and conformance): Docker and leaks.

Docker tests skip with a reason when no engine answers, except under ``CI=true``, where
a missing engine is a failure. Every Docker provider used by the tests is checked for
leaked containers and snapshot images at the end of the run: leaks are removed and the
run fails loudly. :class:`LeakWatch` does the same for host processes, cgroups and local
session directories (see ``tests/conftest.py``).
"""

from __future__ import annotations

import os
import shutil
import signal
import time
import uuid
from contextlib import suppress
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_testkit.sandbox import _cgroup
from harness_testkit.sandbox._docker import DockerSandboxProvider
from harness_testkit.sandbox._local import LOCAL_DIR_VARIABLE
from harness_testkit.sandbox._tree import MARKER_VARIABLE
from harness_testkit.spec import SandboxUnavailableError

__all__ = ["RUN_VARIABLE", "LeakWatch", "docker_provider_or_skip", "finish_docker_provider"]

#: Set in the test process's environment: every command a local session starts from it
#: inherits it, so a leaked process is attributed to this run (not a concurrent one).
RUN_VARIABLE = "HARNESS_TESTKIT_TEST_RUN"

_GRACE_SECONDS = 5.0


def docker_provider_or_skip(**options: Any) -> DockerSandboxProvider:
    """A Docker provider with its image ready, or skip (fail under ``CI=true``)."""
    provider = DockerSandboxProvider(**options)
    try:
        # Builds the sandbox image on first use, under a lock file (xdist-safe).
        anyio.run(provider.ensure_image)
    except SandboxUnavailableError as error:
        provider.close()
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true requires the Docker sandbox to work: {error}")
        pytest.skip(f"Docker sandbox unavailable here: {error}")
    return provider


def finish_docker_provider(provider: DockerSandboxProvider) -> None:
    """Remove and report anything the provider's sessions left behind, then close it."""
    try:
        leaked = provider.prune(owner=provider.owner)
    finally:
        provider.close()
    if leaked:
        pytest.fail(
            "The Docker tests leaked resources (removed now): "
            f"containers {list(leaked.containers)}, images {list(leaked.images)}. A test "
            "or fixture is missing a destroy() in a finally block."
        )


class LeakWatch:
    """What one test process's sandboxes must not leave behind, checked at its end.

    - *Processes*: any process carrying a local session's tree marker and this run's
      :data:`RUN_VARIABLE` (commands started from ``os.environ``; those given another
      ``base_env`` are covered by their cgroup where cgroups are used).
    - *Cgroups*: command cgroups this process created (``harness-testkit.<pid>.*``).
    - *Directories*: session directories and half-built templates under the default local
      base directory, which :meth:`start` points at a fresh directory of this run.

    Leaks are killed or removed, then reported.
    """

    def __init__(self, local_dir: Path) -> None:
        self.local_dir = local_dir
        self.run_id = uuid.uuid4().hex
        self._saved: dict[str, str | None] = {}

    def start(self) -> None:
        """Set this run's marker and default local base directory in ``os.environ``."""
        for name, value in ((RUN_VARIABLE, self.run_id), (LOCAL_DIR_VARIABLE, str(self.local_dir))):
            self._saved[name] = os.environ.get(name)
            os.environ[name] = value

    def finish(self) -> list[str]:
        """Restore the environment; kill and remove leaks; describe each (empty: none)."""
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        problems = [f"process {pid} ({command})" for pid, command in self._leaked_processes()]
        problems += [f"cgroup {path}" for path in self._leaked_cgroups()]
        problems += [f"directory {path}" for path in self._leaked_directories()]
        return problems

    def _marked(self) -> dict[int, str]:
        tree = f"\0{MARKER_VARIABLE}=".encode()
        run = f"\0{RUN_VARIABLE}={self.run_id}\0".encode()
        found: dict[int, str] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as file:
                    environment = b"\0" + file.read() + b"\0"
                with open(f"/proc/{entry}/cmdline", "rb") as file:
                    command = file.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue  # gone, or not ours to read (a zombie has an empty environ)
            if tree in environment and run in environment:
                found[int(entry)] = command.strip()
        return found

    def _leaked_processes(self) -> list[tuple[int, str]]:
        deadline = time.monotonic() + _GRACE_SECONDS
        marked = self._marked()
        while marked and time.monotonic() < deadline:  # being killed right now: let it end
            time.sleep(0.1)
            marked = self._marked()
        for pid in marked:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        return sorted(marked.items())

    @staticmethod
    def _leaked_cgroups() -> list[Path]:
        base = _cgroup.probe().base
        if base is None:
            return []
        leaked = _cgroup.owned_cgroups(base, pid=os.getpid())
        for path in leaked:
            _cgroup.kill_cgroup(path, _GRACE_SECONDS)
        return leaked

    def _leaked_directories(self) -> list[Path]:
        sessions = self.local_dir / "sessions"
        leaked = sorted(sessions.iterdir()) if sessions.is_dir() else []
        templates = self.local_dir / "templates"
        if templates.is_dir():
            leaked += sorted(templates.glob(".building-*"))
        for path in leaked:
            shutil.rmtree(path, ignore_errors=True)
        return leaked
