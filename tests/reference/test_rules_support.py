"""Shared fakes of the ``test_rules_*`` modules (this module holds no tests).

* :class:`RecordingProvider` wraps the local provider and logs what the agent asks of
  it (create, resume, stop, destroy, commands, file access), optionally without
  ``resume_session``.
* :class:`MemorySandbox` is a bare in-memory sandbox session (no default working
  directory): ``pwd`` and every command's exit status are scripted.
* :class:`LoggingHarness` is the scripted adapter logging ``do_start`` into a shared log.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from harness_testkit.reference import LocalSandboxProvider
from harness_testkit.spec import (
    Bootstrap,
    BootstrapCommand,
    BootstrapFile,
    NetworkSandboxSession,
    PortEndpoint,
    RunResult,
    SandboxProcess,
    SandboxSession,
    StartOptions,
)
from tests.reference.scripted import ScriptedHarness, ScriptedSession

Log = list[tuple[Any, ...]]


class _Restricted:
    """The restricted view of a :class:`Tracked` session: files and processes only."""

    def __init__(self, inner: SandboxSession, log: Log, tag: str = "restricted") -> None:
        self._inner = inner
        self._log = log
        self._tag = tag

    @property
    def description(self) -> str:
        return self._inner.description

    async def read_text_file(self, path: str, **kwargs: Any) -> str | None:
        self._log.append((self._tag, "read", path))
        return await self._inner.read_text_file(path, **kwargs)

    async def read_binary_file(self, path: str) -> bytes | None:
        return await self._inner.read_binary_file(path)

    async def write_text_file(self, path: str, content: str, *, encoding: str = "utf-8") -> None:
        self._log.append((self._tag, "write", path))
        await self._inner.write_text_file(path, content, encoding=encoding)

    async def write_binary_file(self, path: str, content: bytes) -> None:
        await self._inner.write_binary_file(path, content)

    async def run(self, command: str, **kwargs: Any) -> RunResult:
        self._log.append((self._tag, "run", command, dict(kwargs.get("env") or {})))
        return await self._inner.run(command, **kwargs)

    async def spawn(self, command: str, **kwargs: Any) -> SandboxProcess:
        return await self._inner.spawn(command, **kwargs)


class Tracked(_Restricted):
    """A provider session whose lifecycle calls and commands are logged."""

    def __init__(self, inner: NetworkSandboxSession, log: Log, *, fail_stop: bool = False) -> None:
        super().__init__(inner, log, tag="full")
        self._full = inner
        self._fail_stop = fail_stop

    @property
    def id(self) -> str:
        return str(self._full.id)

    @property
    def default_working_directory(self) -> str:
        return str(self._full.default_working_directory)

    @property
    def ports(self) -> Sequence[int]:
        return list(self._full.ports)

    async def get_port_endpoint(self, port: int, protocol: Any = None) -> PortEndpoint:
        return await self._full.get_port_endpoint(port, protocol)

    async def stop(self) -> None:
        self._log.append(("stop", self.id))
        await self._full.stop()
        if self._fail_stop:
            raise RuntimeError("stop failed too")

    async def destroy(self) -> None:
        self._log.append(("destroy", self.id))
        await self._full.destroy()

    def restricted(self) -> SandboxSession:
        return _Restricted(self._full.restricted(), self._log)


class RecordingProvider:
    """A local provider that logs every call; ``resumable=False`` drops ``resume_session``."""

    provider_id = "recording"

    def __init__(
        self, root: Path, *, resumable: bool = True, fail_stop: bool = False, log: Log | None = None
    ) -> None:
        self.inner = LocalSandboxProvider(root)
        self.log: Log = log if log is not None else []
        self.fail_stop = fail_stop
        self.sessions: list[Tracked] = []
        if resumable:
            self.resume_session = self._resume_session

    async def create_session(
        self,
        *,
        session_id: str | None = None,
        identity: str | None = None,
        on_first_create: Callable[[SandboxSession], Any] | None = None,
    ) -> Tracked:
        self.log.append(("create", session_id, identity, on_first_create is not None))
        hook = None
        if on_first_create is not None:

            async def hook(session: SandboxSession) -> None:
                self.log.append(("first-create",))
                await on_first_create(_Restricted(session, self.log, tag="first-create"))

        inner = await self.inner.create_session(
            session_id=session_id, identity=identity, on_first_create=hook
        )
        tracked = Tracked(inner, self.log, fail_stop=self.fail_stop)
        self.sessions.append(tracked)
        return tracked

    async def _resume_session(self, session_id: str) -> Tracked:
        self.log.append(("resume", session_id))
        tracked = Tracked(
            await self.inner.resume_session(session_id), self.log, fail_stop=self.fail_stop
        )
        self.sessions.append(tracked)
        return tracked

    async def cleanup(self) -> None:
        """Destroy every session the provider handed out (test teardown)."""
        for session in self.sessions:
            try:
                await session._full.destroy()
            except Exception:  # already destroyed
                pass

    def calls(self, kind: str) -> list[tuple[Any, ...]]:
        return [entry for entry in self.log if entry[0] == kind]


class MemorySandbox:
    """A bare sandbox session kept in memory; commands succeed unless scripted.

    Args:
        cwd: What ``pwd`` prints (``None``: it fails).
        exits: ``{command_prefix: RunResult}`` answers for other commands.
        log: Shared call log.
    """

    def __init__(
        self,
        cwd: str | None = "/work",
        *,
        pwd: RunResult | None = None,
        exits: Mapping[str, RunResult] | None = None,
        log: Log | None = None,
    ) -> None:
        self.files: dict[str, str] = {}
        self.log: Log = log if log is not None else []
        self.cwd = cwd or "/work"
        self.pwd = pwd or RunResult(exit_code=0, stdout=f"{cwd}\n", stderr="")
        self.exits = dict(exits or {})

    @property
    def description(self) -> str:
        return "in-memory sandbox"

    def _path(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.cwd, path))

    async def read_text_file(self, path: str, **kwargs: Any) -> str | None:
        self.log.append(("read", self._path(path)))
        return self.files.get(self._path(path))

    async def read_binary_file(self, path: str) -> bytes | None:
        text = self.files.get(self._path(path))
        return None if text is None else text.encode()

    async def write_text_file(self, path: str, content: str, *, encoding: str = "utf-8") -> None:
        self.log.append(("write", self._path(path)))
        self.files[self._path(path)] = content

    async def write_binary_file(self, path: str, content: bytes) -> None:
        self.files[self._path(path)] = content.decode()

    async def run(
        self,
        command: str,
        *,
        working_directory: str | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
        abort: anyio.Event | None = None,
    ) -> RunResult:
        self.log.append(("run", command, dict(env or {}), working_directory))
        if command == "pwd":
            return self.pwd
        for prefix, result in self.exits.items():
            if command.startswith(prefix):
                return result
        return RunResult(exit_code=0, stdout="", stderr="")

    async def spawn(self, command: str, **kwargs: Any) -> SandboxProcess:
        raise NotImplementedError("the in-memory sandbox runs no processes")

    def entries(self, kind: str) -> list[tuple[Any, ...]]:
        return [entry for entry in self.log if entry[0] == kind]


class LoggingHarness(ScriptedHarness):
    """The scripted adapter, logging ``do_start`` (and what existed then) into ``log``."""

    def __init__(self, *args: Any, log: Log | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.log: Log = log if log is not None else []
        self.recipe: Bootstrap | None = None

    async def do_start(self, options: StartOptions) -> ScriptedSession:
        self.log.append(("do_start", options.session_work_dir))
        return await super().do_start(options)

    def with_recipe(self, recipe: Bootstrap) -> LoggingHarness:
        self.recipe = recipe

        async def get_bootstrap() -> Bootstrap:
            self.log.append(("get_bootstrap",))
            return recipe

        self.get_bootstrap = get_bootstrap
        return self


def recipe(harness_id: str = "mock", *commands: str) -> Bootstrap:
    """A small bootstrap recipe: one file, the given commands."""
    return Bootstrap(
        harness_id=harness_id,
        bootstrap_dir=".harness/mock",
        files=[BootstrapFile(path=".harness/mock/config.json", content="{}")],
        commands=[BootstrapCommand(command=c) for c in commands or ("true",)],
    )
