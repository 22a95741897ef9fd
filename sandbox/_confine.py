"""Race-free path resolution beneath a directory, for the local provider's file API.

Every path the local file API touches is resolved relative to an open file descriptor of
the session root, never by re-reading a path string, so swapping a directory for a
symlink while an operation runs cannot move it outside the root:

- **openat2** (Linux 5.6+) with ``RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS`` is the fast
  path for opening an existing file: the kernel refuses any resolution that leaves the
  root, also through ``..`` or a symlink, whatever happens concurrently.
- Otherwise (older kernels, other systems, creating parents, or a resolution openat2
  refused that may still be legitimate, such as an absolute symlink into the root) a
  component-by-component **walk** opens each directory with ``O_NOFOLLOW`` relative to
  the previous one's descriptor. Symlinks are read with ``readlinkat`` and spliced into
  the remaining path; ``..`` pops the walked stack and may never pop the root; absolute
  link targets must lie lexically inside the root.

On top of resolution, the file API refuses what it must not touch: non-regular files
(FIFOs, devices, sockets: opened with ``O_NONBLOCK`` and checked with ``fstat`` before any
read, so a FIFO never blocks) and, for reads, regular files with more than one hard link
(their other links may lie outside the root, and a hard link cannot be traced back).
Writes never write through an existing file: they write a temporary file beside it and
rename it over the name, so a hard link to a file outside the root is replaced, not
modified.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import posixpath
import stat
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

from harness_testkit.spec import SandboxError, SandboxPathError

__all__ = [
    "Root",
    "openat2_available",
]

_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08
_SYS_OPENAT2 = 437  # the same number on every Linux architecture (unified syscall table)
_MAX_SYMLINK_HOPS = 40
_O_PATH = getattr(os, "O_PATH", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_NOCTTY = getattr(os, "O_NOCTTY", 0)
_DIRECTORY_FLAGS = (_O_PATH or os.O_RDONLY) | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC


class _OpenHow(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


def _load_syscall() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function = libc.syscall
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_long
    return function


_SYSCALL = _load_syscall()
#: Whether openat2 works here (probed once on first use); tests may set it to ``False``.
_openat2_state: bool | None = None


def _openat2(dirfd: int, path: str, flags: int) -> int:
    how = _OpenHow(flags=flags, mode=0, resolve=_RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS)
    assert _SYSCALL is not None
    function = _SYSCALL
    result = function(  # type: ignore[operator]
        ctypes.c_long(_SYS_OPENAT2),
        ctypes.c_int(dirfd),
        ctypes.c_char_p(os.fsencode(path)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)
    return int(result)


def openat2_available() -> bool:
    """Whether the kernel offers ``openat2`` (probed once, then cached)."""
    global _openat2_state
    if _openat2_state is None:
        if _SYSCALL is None:
            _openat2_state = False
        else:
            try:
                os.close(_openat2(-100, ".", _DIRECTORY_FLAGS & ~_O_NOFOLLOW))  # AT_FDCWD
                _openat2_state = True
            except OSError:
                _openat2_state = False
    return _openat2_state


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


class _Escape(Exception):
    """A resolution left the root (internal; turned into SandboxPathError)."""


class Root:
    """A session root opened once; every file operation resolves beneath its descriptor.

    Args:
        path: The root directory (its physical path).
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    # -- the public operations (blocking; called from worker threads) -----------------

    def relative(self, shown: str) -> str:
        """``shown`` as a path relative to the root, refusing absolute paths outside it."""
        if "\0" in shown:
            raise SandboxPathError(
                f"The path {shown!r} contains a NUL character; pass a path without it."
            )
        if not posixpath.isabs(shown):
            lexical = posixpath.normpath(shown)
            if lexical == ".." or lexical.startswith("../"):
                # Refused whether or not the components exist: it names a place outside.
                raise self._outside(shown)
            return shown
        normalized = posixpath.normpath(shown)
        root = str(self.path)
        if normalized == root:
            return "."
        if normalized.startswith(root.rstrip("/") + "/"):
            return normalized[len(root.rstrip("/")) + 1 :]
        raise self._outside(shown)

    def read(self, shown: str) -> bytes | None:
        """Read a regular, singly-linked file beneath the root; ``None`` when missing."""
        try:
            fd = self._open_existing(shown, os.O_RDONLY | _O_NONBLOCK | _O_NOCTTY | _O_CLOEXEC)
        except FileNotFoundError:
            return None
        with _closing(fd):
            info = os.fstat(fd)
            self._require_regular(info, shown, "read")
            if info.st_nlink > 1:
                raise SandboxPathError(
                    f"Cannot read {shown!r}: it has {info.st_nlink} hard links, and the "
                    "file API refuses multiply-linked files because their other links may "
                    "lie outside the session root; copy the file (cp) to read it."
                )
            chunks: list[bytes] = []
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return b"".join(chunks)
                chunks.append(chunk)

    def write(self, shown: str, content: bytes) -> None:
        """Replace (or create) a file beneath the root, creating parent directories.

        The content goes to a temporary file in the same directory, renamed over the name:
        an existing file is replaced, never written through (hard links stay untouched).
        Its permission bits are kept.
        """
        parent, name = self._walk(shown, create=True)
        with _closing(parent):
            mode = 0o644
            with contextlib.suppress(FileNotFoundError):
                info = os.stat(name, dir_fd=parent, follow_symlinks=False)
                if not stat.S_ISREG(info.st_mode):
                    raise SandboxError(
                        f"Cannot write {shown!r}: it is {_kind(info.st_mode)}; pass the "
                        "path of a regular file."
                    )
                mode = stat.S_IMODE(info.st_mode)
            temporary = f".{name[:100]}.harness-testkit-{uuid.uuid4().hex[:12]}.tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
            fd = os.open(temporary, flags, 0o600, dir_fd=parent)
            try:
                with _closing(fd):
                    os.fchmod(fd, mode)
                    view = memoryview(content)
                    while view:
                        written = os.write(fd, view)
                        view = view[written:]
                os.rename(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temporary, dir_fd=parent)
                raise

    def make_directory(self, shown: str) -> None:
        """``mkdir -p`` beneath the root."""
        parent, name = self._walk(shown, create=True)
        with _closing(parent):
            if name == ".":
                return
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=parent)
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
            if not stat.S_ISDIR(info.st_mode):
                raise SandboxError(
                    f"Cannot create directory {shown!r}: it exists and is "
                    f"{_kind(info.st_mode)}; remove it or pick another path."
                )

    def directory(self, shown: str) -> str:
        """The physical path of an existing directory beneath the root (for a cwd)."""
        try:
            fd = self._open_existing(shown, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            raise SandboxError(
                f"The working directory {shown!r} does not exist or is not a directory; "
                "create it first (for example with run('mkdir -p ...'))."
            ) from None
        with _closing(fd):
            proc_link = f"/proc/self/fd/{fd}"
            if os.path.islink(proc_link):
                return os.readlink(proc_link)
            return os.path.realpath(self.path / self.relative(shown))

    # -- resolution ---------------------------------------------------------------------

    def _outside(self, shown: str) -> SandboxPathError:
        return SandboxPathError(
            f"The path {shown!r} resolves outside the session root {self.path}; use a "
            "path inside the root (relative paths resolve against it)."
        )

    @staticmethod
    def _require_regular(info: os.stat_result, shown: str, verb: str) -> None:
        if not stat.S_ISREG(info.st_mode):
            raise SandboxError(
                f"Cannot {verb} {shown!r}: it is {_kind(info.st_mode)}; the file API reads "
                "and writes regular files only."
            )

    def _open_existing(self, shown: str, flags: int) -> int:
        """Open an existing path beneath the root; FileNotFoundError when missing."""
        relative = self.relative(shown)
        if openat2_available():
            root_fd = os.open(self.path, _DIRECTORY_FLAGS & ~_O_NOFOLLOW)
            with _closing(root_fd):
                try:
                    return _openat2(root_fd, relative, flags)
                except OSError as error:
                    if error.errno in (errno.ENOENT, errno.ENOTDIR):
                        raise FileNotFoundError(error.errno, error.strerror, shown) from None
                    if error.errno not in (errno.EXDEV, errno.ELOOP, errno.EAGAIN):
                        raise
                    # Refused as a possible escape: the walk below decides (it accepts
                    # absolute symlinks that point into the root, and refuses the rest).
        parent, name = self._walk(shown, create=False)
        with _closing(parent):
            return os.open(name, flags | _O_NOFOLLOW, dir_fd=parent)

    def _walk(self, shown: str, *, create: bool) -> tuple[int, str]:
        """Resolve every component but the last; return (parent fd, final name).

        A final component that is a symlink is followed (spliced) too, so the returned
        name is never a symlink at the time of the walk; callers open it with
        ``O_NOFOLLOW``, so a symlink swapped in afterwards fails instead of escaping.
        """
        try:
            return self._walk_components(shown, create=create)
        except _Escape:
            raise self._outside(shown) from None
        except NotADirectoryError as error:
            if create:
                raise SandboxError(
                    f"Cannot use {shown!r}: a parent of it is a file, not a directory; "
                    "remove it or pick another path."
                ) from error
            raise FileNotFoundError(errno.ENOENT, "missing", shown) from error

    def _walk_components(self, shown: str, *, create: bool) -> tuple[int, str]:
        pending = [part for part in self.relative(shown).split("/") if part not in ("", ".")]
        stack = [os.open(self.path, _DIRECTORY_FLAGS & ~_O_NOFOLLOW)]
        hops = 0
        try:
            while True:
                if not pending:
                    # The path names the root itself (or a directory reached by "..").
                    return os.dup(stack[-1]), "."
                part = pending.pop(0)
                if part == "..":
                    if len(stack) == 1:
                        raise _Escape
                    os.close(stack.pop())
                    continue
                try:
                    info = os.stat(part, dir_fd=stack[-1], follow_symlinks=False)
                except FileNotFoundError:
                    if not pending:
                        return os.dup(stack[-1]), part
                    if not create:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o777, dir_fd=stack[-1])
                    pending.insert(0, part)
                    continue
                if stat.S_ISLNK(info.st_mode):
                    hops += 1
                    if hops > _MAX_SYMLINK_HOPS:
                        raise SandboxPathError(
                            f"The path {shown!r} has too many levels of symbolic links."
                        )
                    target = os.readlink(part, dir_fd=stack[-1])
                    if posixpath.isabs(target):
                        inside = self._inside_prefix(target)
                        while len(stack) > 1:
                            os.close(stack.pop())
                        target = inside
                    pending[:0] = [piece for piece in target.split("/") if piece not in ("", ".")]
                    continue
                if not pending:
                    return os.dup(stack[-1]), part
                try:
                    stack.append(os.open(part, _DIRECTORY_FLAGS, dir_fd=stack[-1]))
                except OSError as error:
                    if error.errno in (errno.ELOOP, errno.ENOTDIR):
                        if stat.S_ISDIR(info.st_mode):
                            # Swapped for a symlink since the stat: look again.
                            pending.insert(0, part)
                            hops += 1
                            if hops > _MAX_SYMLINK_HOPS:
                                raise SandboxPathError(
                                    f"The path {shown!r} keeps changing under the file API."
                                ) from error
                            continue
                        raise NotADirectoryError(errno.ENOTDIR, "not a directory", part) from None
                    raise
        finally:
            for fd in stack:
                os.close(fd)

    def _inside_prefix(self, target: str) -> str:
        normalized = posixpath.normpath(target)
        root = str(self.path).rstrip("/")
        if normalized == root:
            return "."
        if normalized.startswith(root + "/"):
            return normalized[len(root) + 1 :]
        raise _Escape


@contextlib.contextmanager
def _closing(fd: int) -> Iterator[int]:
    try:
        yield fd
    finally:
        os.close(fd)
