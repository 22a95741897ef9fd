"""cgroup v2 containment of a local session's commands, where the host allows it.

When cgroup v2 is mounted and this process may create child cgroups beneath its own and
move processes into them (root, or a delegated subtree), every command of a local session
starts in a child cgroup of its own, named
``harness-testkit.<pid>.<session token>.<process token>``: a small ``sh`` prologue writes
its own pid to the child's ``cgroup.procs`` and then ``exec``\\ s the session's shell, so
every descendant is born inside it. Membership survives ``setsid`` and ``env -i``, so
writing ``1`` to the child's ``cgroup.kill`` takes the whole tree down; the empty child is
then removed.

:func:`probe` decides once per process whether this works, by doing it: it creates a
probe cgroup, moves a short-lived ``sh`` into it and removes it. Anything short of that
(no cgroup2 mount, a read-only hierarchy, a kernel without ``cgroup.kill``) makes the local
provider fall back to the process-group kill and environment-marker sweep of ``_tree``;
the reason is kept for the session's description. Once it works, the probe also removes
what kit processes killed outright left behind (:func:`sweep_orphans`).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from harness_testkit.common import pid_exited

__all__ = [
    "CGROUP_PREFIX",
    "CgroupSupport",
    "enter_command",
    "kill_cgroup",
    "kill_session_cgroups",
    "new_command_cgroup",
    "owned_cgroups",
    "probe",
    "sweep_orphans",
]

#: The name prefix of every cgroup the kit creates.
CGROUP_PREFIX = "harness-testkit"

#: Writes the prologue's pid into ``$0`` (a ``cgroup.procs``), then becomes the command.
_PROLOGUE = (
    'echo $$ > "$0" || { echo "harness-testkit: cannot enter the command cgroup $0" >&2; '
    'exit 125; }; exec "$@"'
)

_POLL_SECONDS = 0.01


@dataclass(frozen=True)
class CgroupSupport:
    """Whether commands get cgroups here, and why not when they do not.

    Attributes:
        base: The cgroup directory children are created in (this process's own cgroup),
            or ``None`` when cgroups are not used.
        reason: Why cgroups are not used (empty when they are).
    """

    base: Path | None
    reason: str = ""


_lock = threading.Lock()
_cached: CgroupSupport | None = None


def _own_cgroup() -> Path:
    """The cgroup v2 directory of this process.

    Raises:
        OSError: With a sentence saying what is missing.
    """
    relative: str | None = None
    with open("/proc/self/cgroup", encoding="utf-8") as file:
        for line in file:
            if line.startswith("0::"):
                relative = line[3:].strip()
    if relative is None:
        raise OSError("this process is in no cgroup v2 hierarchy (/proc/self/cgroup has no 0::)")
    mount: str | None = None
    with open("/proc/self/mountinfo", encoding="utf-8") as file:
        for line in file:
            before, _, after = line.partition(" - ")
            if after.split(" ", 1)[0] == "cgroup2":
                fields = before.split()
                root, point = fields[3], fields[4]
                if root == "/":
                    mount = point
                    break
    if mount is None:
        raise OSError("no cgroup2 filesystem is mounted (with its root) in /proc/self/mountinfo")
    return Path(mount) / relative.lstrip("/")


def _probe_uncached() -> CgroupSupport:
    try:
        base = _own_cgroup()
    except OSError as error:
        return CgroupSupport(None, str(error))
    probe_dir = base / f"{CGROUP_PREFIX}.probe.{os.getpid()}.{uuid.uuid4().hex[:8]}"
    try:
        probe_dir.mkdir()
    except OSError as error:
        return CgroupSupport(None, f"cannot create a child cgroup in {base}: {error.strerror}")
    try:
        if not (probe_dir / "cgroup.kill").exists():
            return CgroupSupport(None, "the kernel has no cgroup.kill (Linux >= 5.14 needed)")
        entered = subprocess.run(
            ["/bin/sh", "-c", _PROLOGUE, str(probe_dir / "cgroup.procs"), "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            check=False,
        )
        if entered.returncode != 0:
            return CgroupSupport(
                None, f"cannot move a process into {probe_dir}: {entered.stderr.decode().strip()}"
            )
    except (OSError, subprocess.TimeoutExpired) as error:
        return CgroupSupport(None, f"probing {probe_dir} failed: {error}")
    finally:
        _remove(probe_dir, time.monotonic() + 5)
    # Containment works: clear what kit processes killed outright left in this cgroup.
    sweep_orphans(base)
    return CgroupSupport(base)


def probe() -> CgroupSupport:
    """Whether this process can contain commands in child cgroups (decided once; blocking)."""
    global _cached
    with _lock:
        if _cached is None:
            _cached = _probe_uncached()
        return _cached


def new_command_cgroup(base: Path, session_token: str, process_token: str) -> Path:
    """Create the cgroup of one command (blocking)."""
    path = base / f"{CGROUP_PREFIX}.{os.getpid()}.{session_token}.{process_token}"
    path.mkdir()
    return path


def enter_command(cgroup: Path, argv: list[str]) -> list[str]:
    """``argv`` prefixed with the prologue that moves the command into ``cgroup``."""
    return ["/bin/sh", "-c", _PROLOGUE, str(cgroup / "cgroup.procs"), *argv]


def _populated(cgroup: Path) -> bool:
    try:
        events = (cgroup / "cgroup.events").read_text(encoding="ascii")
    except FileNotFoundError:
        return False
    return "populated 1" in events


def _remove(cgroup: Path, deadline: float) -> bool:
    while True:
        try:
            cgroup.rmdir()
            return True
        except FileNotFoundError:
            return True
        except OSError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(_POLL_SECONDS)


def kill_cgroup(cgroup: Path, wait_limit: float) -> bool:
    """SIGKILL every process in ``cgroup``, wait until it is empty, remove it (blocking).

    Args:
        cgroup: A command cgroup.
        wait_limit: Longest wait, in seconds, for the processes to be gone.

    Returns:
        Whether the cgroup is gone (``False``: something outlived ``wait_limit``).
    """
    deadline = time.monotonic() + wait_limit
    with suppress(FileNotFoundError):
        (cgroup / "cgroup.kill").write_text("1", encoding="ascii")
    while _populated(cgroup) and time.monotonic() < deadline:
        time.sleep(_POLL_SECONDS)
    return _remove(cgroup, deadline)


def owned_cgroups(base: Path, *, session_token: str = "*", pid: int | str = "*") -> list[Path]:
    """The command cgroups in ``base`` of a session and/or creating process."""
    return sorted(base.glob(f"{CGROUP_PREFIX}.{pid}.{session_token}.*"))


def _creator_gone(name: str) -> bool:
    """Whether the kit process that created the cgroup ``name`` has exited: its pid, read
    off the name, is no process in this pid namespace. ``False`` for a name the kit does
    not make (``harness-testkit.<pid>.<session>.<process>`` or
    ``harness-testkit.probe.<pid>.<token>``)."""
    fields = name.split(".")
    if len(fields) != 4 or fields[0] != CGROUP_PREFIX:
        return False
    return pid_exited(fields[2] if fields[1] == "probe" else fields[1])


def sweep_orphans(base: Path, wait_limit: float = 5.0) -> list[Path]:
    """Kill and remove the kit's cgroups in ``base`` whose creating process has exited.

    A kit process killed outright (``SIGKILL``, a test runner's hard timeout) can neither
    remove its command cgroups nor kill what still runs in them; the next kit process in
    the same cgroup does, when it probes. A creator counts as alive while any process has
    its pid, so a pid reused by an unrelated process keeps the cgroup (the safe mistake).
    Never raises: a cgroup that cannot be removed stays and is not reported.

    Args:
        base: The directory the kit's cgroups are created in.
        wait_limit: Longest wait, in seconds, for one cgroup's processes to be gone.

    Returns:
        The cgroups removed.
    """
    removed: list[Path] = []
    try:
        candidates = sorted(base.glob(f"{CGROUP_PREFIX}.*"))
    except OSError:
        return removed
    for cgroup in candidates:
        if not _creator_gone(cgroup.name):
            continue
        try:
            gone = kill_cgroup(cgroup, wait_limit)
        except OSError:
            continue
        if gone:
            removed.append(cgroup)
    return removed


def kill_session_cgroups(base: Path, session_token: str, wait_limit: float) -> bool:
    """Kill and remove every command cgroup of a session, from any process (blocking)."""
    return all(
        kill_cgroup(cgroup, wait_limit)
        for cgroup in owned_cgroups(base, session_token=session_token)
    )
