"""Event checkpoints: how an agent pins the point a stopped turn is continued from.

When a stop condition ends a slice (7.5.2), the agent has already read one part past the
step's ``finish-step`` (the lookahead) and drops it, with whatever the adapter emits
until ``done()`` settles (STOP-008). For the runtime to replay that tail when the turn
is continued, the adapter's ``do_suspend_turn`` must return a cursor that points just
after the ``finish-step``, not after the last part it emitted. Upstream does this for
its sandbox channel: each event carries a hidden checkpoint the agent pins after a
``finish-step`` while stop conditions are in effect, and releases once the lookahead is
processed normally.

These two functions are the Python equivalent. An adapter that tracks a cursor attaches
a checkpoint to the ``finish-step`` parts it emits; the agent pins the checkpoint of the
``finish-step`` it just processed and releases the pin when it goes on. The checkpoint
is an attribute outside the model's fields: it is not serialized, compared or printed,
so a part with one is equal to the same part without.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["EventCheckpoint", "attach_event_checkpoint", "pin_event_checkpoint"]

#: Pins a checkpoint and returns the function that releases that pin (releasing a pin
#: that a later pin replaced does nothing).
EventCheckpoint = Callable[[], Callable[[], None]]

_ATTRIBUTE = "__harness_event_checkpoint__"


def attach_event_checkpoint(part: Any, pin: EventCheckpoint) -> None:
    """Attach ``pin`` to ``part`` (a stream part the adapter is about to emit).

    Raises:
        TypeError: ``part`` cannot carry attributes (it has no instance ``__dict__``).
    """
    if not hasattr(part, "__dict__"):
        raise TypeError(
            f"attach_event_checkpoint needs a stream part object, got {type(part).__name__}"
        )
    # object.__setattr__: past pydantic's field handling, so the pin is not a field.
    object.__setattr__(part, _ATTRIBUTE, pin)


def pin_event_checkpoint(part: object) -> Callable[[], None] | None:
    """Pin the checkpoint ``part`` carries; returns its release, or ``None`` without one."""
    pin: EventCheckpoint | None = getattr(part, "__dict__", {}).get(_ATTRIBUTE)
    return None if pin is None else pin()
