"""Whether a process has exited, for the sweeps that clean up after kit processes killed
outright (command cgroups, check work directories).

Re-exported by :mod:`harness_testkit.common`: the sandbox and the conformance runner
share it.
"""

from __future__ import annotations

import os

__all__ = ["pid_exited"]


def pid_exited(pid_text: str) -> bool:
    """Whether the process whose pid ``pid_text`` spells has exited: no process in this pid
    namespace has that pid. ``False`` for anything that is not a pid, for this process,
    and for a pid that is taken (even by an unrelated process that reused it: the safe
    mistake for a caller deciding whether to clean up after the process)."""
    if not pid_text.isdigit() or int(pid_text) == os.getpid():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except OSError:  # it exists but is not ours to signal
        return False
    return False
