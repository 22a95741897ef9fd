"""Id and clock sources of the agent (injectable for deterministic transcripts)."""

from __future__ import annotations

import os
import random
import string
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeAlias

__all__ = ["Clock", "IdGenerator", "Timestamps", "system_clock"]

_ALPHABET = string.ascii_letters + string.digits
#: Random bytes below this map onto the alphabet without bias (4 * 62 = 248).
_UNBIASED = len(_ALPHABET) * (256 // len(_ALPHABET))
_ID_LENGTH = 16
#: ``bytes.translate`` table and deletions: byte ``b`` below :data:`_UNBIASED` becomes
#: ``_ALPHABET[b % 62]``, the others are dropped.
_BYTE_TO_CHAR = bytes(ord(_ALPHABET[b % len(_ALPHABET)]) for b in range(256))
_DROPPED = bytes(range(_UNBIASED, 256))

#: A timestamp source returns the current time as an aware ``datetime`` (for the parts'
#: timestamps). It is not a clock to wait on: that is ``harness_testkit.spec.Clock``.
Timestamps: TypeAlias = Callable[[], datetime]
#: The old name of :data:`Timestamps`.
Clock: TypeAlias = Timestamps


def system_clock() -> datetime:
    """The wall clock, in UTC."""
    return datetime.now(UTC)


#: The second the cached prefix below belongs to, and its ``YYYY-MM-DDTHH:MM:SS``.
_prefix: tuple[int, str] = (-1, "")


def system_timestamp() -> str:
    """``system_clock().isoformat()``: the wall clock in UTC as ISO 8601 text, formatted
    without a ``datetime`` (the date and time of day are formatted once per second).
    As ``isoformat``, the fraction is left out at a whole second."""
    global _prefix
    seconds, nanoseconds = divmod(time.time_ns(), 1_000_000_000)
    second, prefix = _prefix
    if seconds != second:
        prefix = datetime.fromtimestamp(seconds, UTC).isoformat()[:19]
        _prefix = (seconds, prefix)
    micros = nanoseconds // 1000
    if micros:
        return f"{prefix}.{micros:06d}+00:00"
    return prefix + "+00:00"


class IdGenerator:
    """Mints 16-character alphanumeric ids.

    Args:
        seed: When given, ids come from a seeded RNG (same seed, same ids); otherwise
            from the operating system's secure source.
    """

    def __init__(self, seed: int | None = None) -> None:
        self._rng: random.Random | None = None if seed is None else random.Random(seed)

    def __call__(self) -> str:
        """Return a new id."""
        if self._rng is None:
            return _secure_id()
        return "".join(self._rng.choice(_ALPHABET) for _ in range(_ID_LENGTH))


def _secure_id() -> str:
    """16 alphabet characters from the OS's secure source, uniformly chosen.

    One ``os.urandom`` read per id (``secrets.choice`` per character reads 16 times);
    bytes at or above :data:`_UNBIASED` are dropped so every character is equally likely.
    """
    chars = b""
    while len(chars) < _ID_LENGTH:
        chars += os.urandom(24).translate(_BYTE_TO_CHAR, _DROPPED)
    return chars[:_ID_LENGTH].decode("ascii")
