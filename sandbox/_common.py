"""Pure helpers shared by the sandbox providers (local and Docker).

Everything here is provider-neutral: the provider-utils line extraction, resource-name
sanitizing, environment merging, the ``run`` collector with its timeout/abort semantics,
a cross-process lock with a bounded wait, and a way to keep an abort watcher alive
without owning a task group.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import re
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any, Protocol

import anyio
from anyio.abc import ByteReceiveStream

from harness_testkit.spec import RunResult, SandboxAbortedError, SandboxTimeoutError

__all__ = [
    "DEFAULT_KILL_TIMEOUT",
    "DEFAULT_LOCK_TIMEOUT",
    "LoopLocalLocks",
    "aborted_error",
    "collect_process",
    "detect_line_ending",
    "extract_lines",
    "file_lock",
    "merge_env",
    "sanitize_name",
    "start_detached",
    "timeout_error",
]

#: How long to wait for a killed process to be gone before giving up on it (seconds).
DEFAULT_KILL_TIMEOUT = 10.0

#: How long to wait for another process that holds an identity lock (seconds). Baking a
#: snapshot may install packages, so this is generous, but never unbounded.
DEFAULT_LOCK_TIMEOUT = 600.0

#: After a command's main process exits, how long ``run`` keeps draining its output. A
#: background grandchild that inherited the pipes would otherwise keep ``run`` waiting.
_POST_EXIT_DRAIN_SECONDS = 2.0

#: Characters allowed in resource names: the intersection of what Docker accepts in
#: container names and image tags and what is safe as one directory name.
_UNSAFE_NAME_CHARACTERS = re.compile(r"[^A-Za-z0-9_.-]")


# -- text ------------------------------------------------------------------------------


def detect_line_ending(text: str) -> str:
    r"""Return the line ending of ``text``: ``\r\n`` over ``\n`` over ``\r``, else ``\n``.

    Args:
        text: Any text.

    Returns:
        The detected line ending (``"\n"`` when the text has none).
    """
    if "\r\n" in text:
        return "\r\n"
    if "\n" in text:
        return "\n"
    if "\r" in text:
        return "\r"
    return "\n"


def extract_lines(text: str, start_line: int | None = None, end_line: int | None = None) -> str:
    r"""Extract the 1-based inclusive line range ``start_line..end_line`` of ``text``.

    A port of provider-utils ``extractLines``: with no range the text is returned
    unchanged; otherwise the line ending is detected once (``\r\n`` > ``\n`` > ``\r``;
    mixed endings are not supported), the text is split on it, ``start_line`` is clamped
    to at least 1, ``end_line`` to the line count, and the slice is re-joined with the
    same ending. Slicing follows JavaScript ``Array.prototype.slice``, which Python
    slicing matches exactly (a negative ``end_line`` counts from the end, as upstream).

    Args:
        text: The whole file's text.
        start_line: First line to keep (1-based), or ``None`` for the first line.
        end_line: Last line to keep (inclusive), or ``None`` for the last line.

    Returns:
        The selected lines.
    """
    if start_line is None and end_line is None:
        return text
    ending = detect_line_ending(text)
    lines = text.split(ending)
    start = max(1, 1 if start_line is None else start_line) - 1
    end = len(lines) if end_line is None else min(len(lines), end_line)
    return ending.join(lines[start:end])


# -- names and environments ------------------------------------------------------------


def sanitize_name(value: str, *, max_length: int = 48) -> str:
    """Turn an arbitrary id into a deterministic, collision-resistant resource name.

    Ids that are already safe (``[A-Za-z0-9_.-]``, not starting with ``.`` or ``-``, at
    most ``max_length`` characters) are kept as they are, so names stay readable. Any
    other id is rewritten and suffixed with a hash of the original, so two different ids
    never share a name.

    Args:
        value: A session id or identity.
        max_length: Longest name kept verbatim (the hashed form is at most 11 longer).

    Returns:
        A name usable as one directory name and inside Docker container and tag names.
    """
    cleaned = _UNSAFE_NAME_CHARACTERS.sub("-", value).lstrip(".-")[:max_length]
    if cleaned == value and cleaned:
        return cleaned
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{cleaned or 'id'}-{digest}"


def merge_env(base: Mapping[str, str], overrides: Mapping[str, str] | None) -> dict[str, str]:
    """Merge ``overrides`` over ``base``; the overriding values win.

    Args:
        base: The sandbox's default environment.
        overrides: The caller's ``env``, or ``None``.

    Returns:
        A new dictionary.
    """
    merged = dict(base)
    if overrides:
        merged.update(overrides)
    return merged


# -- running commands ------------------------------------------------------------------


class _KillableProcess(Protocol):
    """What :func:`collect_process` needs from a spawned process."""

    @property
    def stdout(self) -> ByteReceiveStream: ...

    @property
    def stderr(self) -> ByteReceiveStream: ...

    async def wait_exit(self) -> int: ...

    async def kill(self) -> None: ...

    async def aclose(self) -> None: ...


def _describe(command: str) -> str:
    return command if len(command) <= 120 else command[:117] + "..."


def aborted_error(command: str) -> SandboxAbortedError:
    """Build the error raised when a command is aborted by its caller.

    Args:
        command: The aborted command.

    Returns:
        The error, naming the command.
    """
    return SandboxAbortedError(
        f"The sandbox command {_describe(command)!r} was aborted by its caller and killed "
        "(its abort event was set)."
    )


def timeout_error(command: str, timeout: float) -> SandboxTimeoutError:
    """Build the error raised when a command outlives its timeout.

    Args:
        command: The command that was killed.
        timeout: The timeout it exceeded, in seconds.

    Returns:
        The error, naming the command and the remedy.
    """
    return SandboxTimeoutError(
        f"The sandbox command {_describe(command)!r} did not finish within its timeout of "
        f"{timeout:g} s and was killed; pass a larger timeout= if it needs more time."
    )


async def _drain(stream: ByteReceiveStream, sink: list[bytes]) -> None:
    with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        while True:
            sink.append(await stream.receive())


async def collect_process(
    process: _KillableProcess,
    *,
    command: str,
    time_limit: float | None,
    abort: anyio.Event | None,
    kill_timeout: float = DEFAULT_KILL_TIMEOUT,
) -> RunResult:
    """Collect a process's output and exit code, enforcing ``timeout`` and ``abort``.

    The process is killed (with its children, as the provider's ``kill`` does) when the
    timeout passes, when ``abort`` is set, and when the caller is cancelled; its
    resources are always released.

    Args:
        process: A freshly started process.
        command: The command line, for error messages.
        time_limit: Seconds before the process is killed, or ``None`` for no limit.
        abort: An event that kills the process when set.
        kill_timeout: Bound on waiting for a killed process to disappear.

    Returns:
        The exit code and the decoded (UTF-8, replacing invalid bytes) output.

    Raises:
        SandboxTimeoutError: The timeout passed; the process was killed.
        SandboxAbortedError: ``abort`` was set; the process was killed.
    """
    stdout: list[bytes] = []
    stderr: list[bytes] = []
    exit_code: int | None = None
    aborted = False
    deadline = anyio.current_time() + time_limit if time_limit is not None else float("inf")
    work = anyio.CancelScope(deadline=deadline)

    async def watch_abort(event: anyio.Event) -> None:
        nonlocal aborted
        await event.wait()
        aborted = True
        work.cancel()

    try:
        async with anyio.create_task_group() as watchers:
            if abort is not None:
                watchers.start_soon(watch_abort, abort)
            with work:
                async with anyio.create_task_group() as readers:
                    readers.start_soon(_drain, process.stdout, stdout)
                    readers.start_soon(_drain, process.stderr, stderr)
                    exit_code = await process.wait_exit()
                    # A grandchild holding the pipes must not keep run() waiting forever.
                    readers.cancel_scope.deadline = min(
                        work.deadline, anyio.current_time() + _POST_EXIT_DRAIN_SECONDS
                    )
            watchers.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(kill_timeout):
            if exit_code is None:
                await process.kill()
            await process.aclose()
    if exit_code is None:
        if aborted:
            raise aborted_error(command)
        raise timeout_error(command, time_limit if time_limit is not None else 0.0)
    return RunResult(
        exit_code=exit_code,
        stdout=b"".join(stdout).decode("utf-8", "replace"),
        stderr=b"".join(stderr).decode("utf-8", "replace"),
    )


# -- event-loop plumbing ---------------------------------------------------------------


def _current_loop() -> object:
    """The running event loop (asyncio) or trio token: what anyio primitives belong to."""
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        import trio

        return trio.lowlevel.current_trio_token()


class LoopLocalLocks:
    """Named ``anyio.Lock`` objects, one set per running event loop.

    anyio locks belong to the event loop that created them, but a provider may outlive
    a loop (a session-scoped test fixture serves asyncio and trio tests alike).
    """

    def __init__(self) -> None:
        self._by_loop: weakref.WeakKeyDictionary[object, dict[str, anyio.Lock]] = (
            weakref.WeakKeyDictionary()
        )

    def get(self, name: str) -> anyio.Lock:
        """Return the lock called ``name`` for the running event loop.

        Args:
            name: Any key, for example an identity.

        Returns:
            The lock (created on first use).
        """
        locks = self._by_loop.setdefault(_current_loop(), {})
        lock = locks.get(name)
        if lock is None:
            lock = locks[name] = anyio.Lock()
        return lock


# -- background watchers ---------------------------------------------------------------

#: Strong references to detached asyncio tasks (the loop keeps only weak ones).
_DETACHED_TASKS: set[Any] = set()


def start_detached(function: Callable[[], Awaitable[None]]) -> None:
    """Run ``function()`` in the background without a task group, on asyncio or trio.

    Used for abort watchers of spawned processes: the abort must kill the process even
    when nobody is waiting on it. ``function`` must not raise; exceptions are swallowed
    so a watcher can never crash the event loop.

    Args:
        function: A coroutine function taking no arguments.
    """

    async def guarded() -> None:
        # A failing watcher must not take the caller's event loop down with it.
        with suppress(Exception):
            await function()

    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is None:
        # Not asyncio, so trio (the only other anyio backend): a system task outlives
        # the caller's nursery and is cancelled when the run ends.
        import trio

        trio.lowlevel.spawn_system_task(guarded)
    else:
        task = loop.create_task(guarded())
        _DETACHED_TASKS.add(task)
        task.add_done_callback(_DETACHED_TASKS.discard)


# -- cross-process lock ----------------------------------------------------------------


@asynccontextmanager
async def file_lock(path: Path, *, wait_limit: float, what: str) -> AsyncIterator[None]:
    """Hold an exclusive lock on ``path`` (created if needed), waiting at most ``wait_limit``.

    ``flock`` locks belong to the open file, so two holders in one process exclude each
    other too; the kernel drops the lock when its holder dies, so a crashed process never
    leaves a stale lock behind.

    Args:
        path: The lock file.
        wait_limit: Longest wait for another holder, in seconds.
        what: What the lock protects, for the timeout message.

    Yields:
        Nothing; the lock is held inside the ``async with`` block.

    Raises:
        SandboxTimeoutError: Another holder kept the lock longer than ``wait_limit``.
    """
    await anyio.to_thread.run_sync(lambda: path.parent.mkdir(parents=True, exist_ok=True))
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        await _acquire(fd, path=path, wait_limit=wait_limit, what=what)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


async def _acquire(fd: int, *, path: Path, wait_limit: float, what: str) -> None:
    delay = 0.01
    deadline = anyio.current_time() + wait_limit
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as error:
            if error.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
        if anyio.current_time() >= deadline:
            raise SandboxTimeoutError(
                f"Timed out after {wait_limit:g} s waiting for the lock {path} that guards "
                f"{what}; another process is still holding it. Wait for it to finish, or "
                "stop it."
            )
        # Polling keeps the wait cancellable on both backends without a blocked thread.
        await anyio.sleep(delay)
        delay = min(delay * 2, 0.2)
