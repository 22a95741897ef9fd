"""Event checkpoints across the host: a part's checkpoint stays in Node, the kit pins it by number.

An adapter that reads its runtime through upstream's sandbox channel gets a hidden event
checkpoint on each event, and its suspension cursor is the one the agent pinned (STOP-008).
The host keeps the checkpoint of each ``finish-step`` and says so in the part's ``emit``
(HOST-014); here the parsed part gets a checkpoint whose pin and release are
``checkpoint/pin`` and ``checkpoint/release`` notifications naming the turn and ``seq``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from harness_testkit.spec import attach_event_checkpoint, parse_stream_part

if TYPE_CHECKING:
    from ._host import HostProcess

__all__ = ["with_checkpoint"]


def with_checkpoint(part: Any, process: HostProcess, turn_id: str, seq: Any) -> Any:
    """``part`` as a stream part carrying the host's event checkpoint of it.

    Pinning sends ``checkpoint/pin`` at once: the host reads frames in order, so the pin
    is in place before a ``doSuspendTurn`` the agent sends after it. A part that does not
    parse goes on as it came, and the agent reports it.
    """
    try:
        parsed = parse_stream_part(part)
    except Exception:
        return part
    where = {"turn": turn_id, "seq": seq}

    def pin() -> Callable[[], None]:
        process.notify("checkpoint/pin", where)
        return lambda: process.notify("checkpoint/release", where)

    attach_event_checkpoint(parsed, pin)
    return parsed
