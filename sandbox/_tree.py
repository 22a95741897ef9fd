"""Tracking the host processes a local session starts, ``setsid`` descendants included.

Every command of a local session starts in its own process group and carries an
environment marker ``HARNESS_TESTKIT_SANDBOX_TREE=<session token>/<process token>``,
which every descendant inherits, also one that calls ``setsid`` and leaves the group.
Killing a command kills its group and then sweeps ``/proc`` for processes carrying its
marker, round after round until none is left (a process forking during a round is caught
by the next). Destroying a session sweeps for the session's token.

Limits (commands are not confined by design): a descendant that both leaves the process
group and replaces its environment (``env -i``) escapes the sweep; without ``/proc`` (not
Linux) only the process group is killed.
"""

from __future__ import annotations

import os
import signal
from contextlib import suppress

__all__ = ["MARKER_VARIABLE", "marker", "sweep"]

#: The environment variable that marks a local session's processes.
MARKER_VARIABLE = "HARNESS_TESTKIT_SANDBOX_TREE"

_MAX_ROUNDS = 100


def marker(session_token: str, process_token: str) -> str:
    """The marker value of one command of one session."""
    return f"{session_token}/{process_token}"


def _matching(needle: bytes) -> list[int]:
    own = os.getpid()
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit() or int(entry) == own:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as file:
                environment = b"\0" + file.read()
        except OSError:
            continue  # gone, or not ours to read
        if needle in environment:
            found.append(int(entry))
    return found


def sweep(value_prefix: str) -> int:
    """SIGKILL every process whose marker starts with ``value_prefix`` (blocking).

    Args:
        value_prefix: A whole marker (one command) or ``"<session token>/"`` (a session).

    Returns:
        How many processes were signalled.
    """
    needle = f"\0{MARKER_VARIABLE}={value_prefix}".encode()
    killed = 0
    for _round in range(_MAX_ROUNDS):
        pids = _matching(needle)
        if not pids:
            break
        for pid in pids:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
    return killed
