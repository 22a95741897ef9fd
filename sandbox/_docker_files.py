"""The Docker provider's file API: reads streamed from the engine, writes as the user.

- **Reads** run a small script in an exec as the session user: a directory, FIFO, device
  or socket is refused before ``cat`` opens it, and a file's bytes stream back over the
  exec's socket. (The engine's archive API cannot see tmpfs mounts such as the
  workspace, and would read as root.)
- **Writes** run ``cat`` in an exec as the session user with the content on its stdin,
  so the container's permissions, its read-only root filesystem and the workspace quota
  apply to the file API exactly as to commands.
- Engine errors become :class:`~harness_testkit.spec.SandboxError` messages that say what
  was refused and why, never the HTTP client's raw text.
"""

from __future__ import annotations

import posixpath
import select
import socket
import time
from contextlib import suppress
from typing import Any

from harness_testkit.spec import SandboxError, SandboxPathError

__all__ = ["engine_error", "read_file", "write_file"]

#: Exit codes of the write script (see :data:`_WRITE_SCRIPT`).
_NOT_REGULAR, _IS_DIRECTORY, _NO_PARENT, _MISSING = 90, 91, 92, 93
_KIND_TEST = (
    f'if [ -d "$f" ]; then exit {_IS_DIRECTORY}; fi; '
    f'if [ -e "$f" ]; then [ -f "$f" ] || exit {_NOT_REGULAR}; fi; '
)
#: Refuses directories and special files before ``cat`` opens anything; the size goes to
#: stderr first so that a stream cut short by the engine is told from a short file.
_READ_SCRIPT = (
    f'f="$1"; {_KIND_TEST}[ -e "$f" ] || exit {_MISSING}; '
    'wc -c < "$f" >&2 || exit 1; exec cat -- "$f"'
)
#: Bytes sent per ``send`` of a write's content.
_CHUNK = 64 * 1024
#: How often a read whose byte count does not match the file's size is tried again.
_READ_ATTEMPTS = 3
#: The parent is cut from the (absolute, normalized) path by parameter expansion, not
#: ``$(dirname ...)``: a command substitution drops trailing newlines, so a parent
#: directory whose name ends in one was never created.
_WRITE_SCRIPT = (
    'f="$1"; ' + _KIND_TEST + 'd="${f%/*}"; [ -n "$d" ] || d=/; '
    f'[ -d "$d" ] || mkdir -p -- "$d" || exit {_NO_PARENT}; '
    'exec cat > "$f"'
)


def engine_error(
    error: Any, *, action: str = "handle a request", shown: str | None = None
) -> SandboxError:
    """A named sandbox error for a docker-py ``APIError`` (never the raw HTTP text)."""
    status = getattr(error, "status_code", None)
    explanation = getattr(error, "explanation", None) or ""
    if isinstance(explanation, bytes):
        explanation = explanation.decode("utf-8", "replace")
    what = f" {shown!r}" if shown is not None else ""
    detail = str(explanation).strip() or "no explanation"
    if "file name too long" in detail.lower():
        return SandboxPathError(
            f"The Docker engine could not {action}{what}: a path component is too long "
            f"({detail}); use shorter names."
        )
    return SandboxError(f"The Docker engine could not {action}{what} (status {status}): {detail}.")


def _exec(
    api: Any,
    container: str,
    user: str,
    argv: list[str],
    *,
    stdin: bytes | None,
    timeout: float,
    shown: str,
    verb: str,
) -> tuple[int, bytes, bytes]:
    """Run ``argv`` as ``user``, feeding ``stdin``; return (exit code, stdout, stderr)."""
    from docker.utils.socket import frames_iter

    created = api.exec_create(
        container, argv, stdin=stdin is not None, stdout=True, stderr=True, user=user
    )
    connection = api.exec_start(created["Id"], socket=True)
    raw = getattr(connection, "_sock", connection)
    out: list[bytes] = []
    err: list[bytes] = []
    cut_short = False
    try:
        raw.settimeout(timeout)
        if stdin is not None:
            try:
                cut_short = not _feed(raw, stdin, timeout)
            except (BrokenPipeError, ConnectionResetError):
                cut_short = True  # the command stopped reading: its exit code says why
            with suppress(OSError):
                raw.shutdown(socket.SHUT_WR)
        with suppress(ConnectionResetError, BrokenPipeError):
            for stream_id, data in frames_iter(connection, tty=False):
                (err if stream_id == 2 else out).append(bytes(data))
    except TimeoutError as error:
        raise SandboxError(
            f"Cannot {verb} {shown!r}: the engine did not finish within {timeout:g} s."
        ) from error
    finally:
        with suppress(Exception):
            connection.close()
        with suppress(Exception):
            raw.close()
    code = _exit_code(api, created["Id"], timeout=timeout, shown=shown, verb=verb)
    if cut_short and not err:
        err.append(b"the command stopped reading its input (the workspace may be full)")
    return code, b"".join(out), b"".join(err)


def _feed(raw: socket.socket, data: bytes, timeout: float) -> bool:
    """Send ``data`` as the command's stdin; ``False`` when the command answered first.

    The write script prints nothing unless it fails, so output arriving before all input
    is sent means the command gave up (``No space left on device``): stop feeding it then,
    instead of blocking on a peer that no longer reads (the engine keeps the connection
    open for minutes).
    """
    view = memoryview(data)
    deadline = time.monotonic() + timeout
    while view:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        readable, writable, _ = select.select([raw], [raw], [], left)
        if readable:
            return False
        if writable:
            view = view[raw.send(view[:_CHUNK]) :]
    return True


def _exit_code(api: Any, exec_id: str, *, timeout: float, shown: str, verb: str) -> int:
    """The exec's exit code, once the engine has recorded it.

    The output stream can end (the process closed its pipes) a moment before the engine
    marks the exec as finished; until then ``ExitCode`` is ``None``.
    """
    deadline = time.monotonic() + timeout
    while True:
        details = api.exec_inspect(exec_id)
        code = details.get("ExitCode")
        if code is not None and not details.get("Running"):
            return int(code)
        if time.monotonic() >= deadline:
            raise SandboxError(
                f"Cannot {verb} {shown!r}: the engine did not report the command's exit "
                f"within {timeout:g} s."
            )
        time.sleep(0.005)


def _refusal(code: int, shown: str, verb: str) -> SandboxError | None:
    if code == _IS_DIRECTORY:
        return SandboxError(
            f"Cannot {verb} {shown!r}: it is a directory; pass the path of a file "
            "(refused before anything was transferred)."
        )
    if code == _NOT_REGULAR:
        return SandboxError(
            f"Cannot {verb} {shown!r}: it is not a regular file (a FIFO, device or "
            f"socket); the file API {verb}s regular files only."
        )
    return None


def read_file(
    api: Any, container: str, user: str, absolute: str, shown: str, *, timeout: float
) -> bytes | None:
    """Read one regular file as the session user (blocking); ``None`` when missing.

    The content streams from ``cat`` in an exec (the engine's archive API cannot see
    tmpfs mounts such as the workspace).
    """
    for _ in range(_READ_ATTEMPTS):
        code, out, err = _exec(
            api,
            container,
            user,
            ["/bin/sh", "-c", _READ_SCRIPT, "read", absolute],
            stdin=None,
            timeout=timeout,
            shown=shown,
            verb="read",
        )
        if code != 0:
            break
        size = err.decode("ascii", "replace").strip()
        if size.isdigit() and int(size) == len(out):
            return out
    else:
        raise SandboxError(
            f"Cannot read {shown!r}: the engine delivered {len(out)} bytes of a "
            f"{err.decode('ascii', 'replace').strip()}-byte file {_READ_ATTEMPTS} times "
            "(the file may be changing while it is read); try again."
        )
    if code == _MISSING:
        return None
    refusal = _refusal(code, shown, "read")
    if refusal is not None:
        raise refusal
    message = err.decode("utf-8", "replace").strip()
    if "not a directory" in message.lower():
        return None
    raise SandboxError(f"Cannot read {shown!r} as the session user: {message or f'exit {code}'}.")


def write_file(
    api: Any,
    container: str,
    user: str,
    absolute: str,
    content: bytes,
    shown: str,
    *,
    timeout: float,
) -> None:
    """Write one file as the session user through ``cat`` on an exec's stdin (blocking)."""
    if not posixpath.basename(absolute) or absolute == "/":
        raise SandboxError(f"Cannot write {shown!r}: it names a directory, not a file.")
    code, _, err = _exec(
        api,
        container,
        user,
        ["/bin/sh", "-c", _WRITE_SCRIPT, "write", absolute],
        stdin=content,
        timeout=timeout,
        shown=shown,
        verb="write",
    )
    if code == 0:
        return
    refusal = _refusal(code, shown, "write")
    if refusal is not None:
        raise refusal
    message = err.decode("utf-8", "replace").strip()
    if code == _NO_PARENT or "not a directory" in message.lower():
        raise SandboxError(
            f"Cannot write {shown!r}: its parent directory cannot be created (a parent is a "
            f"file, not a directory, or permission is denied: {message}); pick another path."
        )
    if "no space left" in message.lower() or "workspace may be full" in message:
        raise SandboxError(
            f"Cannot write {shown!r}: the workspace quota is exhausted ({message}); the "
            "workspace is a size-limited tmpfs (DockerSandboxProvider(workspace_size=...))."
        )
    if "read-only file system" in message.lower():
        raise SandboxError(
            f"Cannot write {shown!r}: it lies on the container's read-only root filesystem "
            f"({message}); write inside the workspace, /tmp or the home directory."
        )
    raise SandboxError(
        f"Cannot write {shown!r} ({absolute}) as the session user: {message or f'exit {code}'}."
    )
